//! Many documents (`qjson_many_*`): the C side of `parse_many` and of a
//! chunked reader. The splitting is the core's ([`crate::many`]): one
//! stage-1 pass per window, then each document's own stage 2; each document
//! comes out as an ordinary `qjson_doc` over a slice of the borrowed input.
//!
//! A stream made by `qjson_many_new` borrows the whole input. One made by
//! `qjson_many_stream` is given the input one window at a time
//! (`qjson_many_window`: the bytes left over from the last window, then the
//! next chunk, as the caller assembles them): `qjson_many_next` says
//! `QJSON_END` when the window holds no further whole document,
//! `qjson_many_consumed` how many of its bytes were used, and the caller
//! passes the rest with the next chunk (or with `at_end` set, when no more
//! input comes). Each window is borrowed as `qjson_many_new`'s input is.

use super::handle::{Handle, Options};
use super::status::{guard, Fail, Status};
use crate::many::{Piece, Splitter, WINDOW};
use std::collections::VecDeque;
use std::ffi::{c_char, c_int};

/// A stream of documents (`qjson_many`) over a borrowed input.
pub struct Many {
    input: *const u8,
    len: usize,
    splitter: Splitter,
    pos: usize,
    pending: VecDeque<Piece>,
    /// Whether the input (window) ends the stream.
    at_end: bool,
}

impl Many {
    fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `qjson_many_new` stored a pointer to `len` readable bytes
        // that its contract keeps alive and unchanged until every document
        // taken from this stream and the stream itself are freed.
        unsafe { std::slice::from_raw_parts(self.input, self.len) }
    }
}

/// Start splitting `len` bytes at `input` into documents (borrowed, not
/// copied: keep them alive and unchanged until the stream and every
/// document taken from it are freed).
///
/// # Safety
/// `input` points to `len` readable bytes (or `len` is 0), `opts` is null
/// or valid, and `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn qjson_many_new(
    input: *const c_char,
    len: usize,
    opts: *const Options,
    out: *mut *mut Many,
) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(Fail::Arg("null out pointer"));
        }
        if len != 0 && input.is_null() {
            return Err(Fail::Arg("null input"));
        }
        // SAFETY: the caller passes null or a valid `qjson_options`.
        let options = super::handle::options(unsafe { opts.as_ref() }.copied());
        let m = Box::new(Many {
            input: input.cast(),
            len,
            splitter: Splitter::new(options, true, WINDOW),
            pos: 0,
            pending: VecDeque::new(),
            at_end: true,
        });
        // SAFETY: `out` is non-null and, per the contract, writable.
        unsafe { *out = Box::into_raw(m) };
        Ok(Status::Ok)
    })
}

/// The next document: `QJSON_OK` with a new document in `*out` (free it
/// with `qjson_free`; it borrows the stream's input), `QJSON_END` after the
/// last one, or `QJSON_ERR_JSON` for a document that is not valid JSON
/// (`qjson_last_error`: the message and the byte offset in the whole
/// input); the next call goes on with the document after it. `*index`
/// (when not null) receives the document's ordinal, failed ones included,
/// and `*start` (when not null) the offset of its first byte in the input
/// (the document's offsets count from there).
///
/// # Safety
/// `m` is a live pointer from `qjson_many_new`; `out` is writable; `index`
/// and `start` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_many_next(
    m: *mut Many,
    out: *mut *mut Handle,
    index: *mut u64,
    start: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: per the contract, `m` is null or live and not shared.
        let m = unsafe { m.as_mut() }.ok_or(Fail::Arg("null stream"))?;
        if out.is_null() {
            return Err(Fail::Arg("null out pointer"));
        }
        let piece = loop {
            if let Some(p) = m.pending.pop_front() {
                break p;
            }
            let len = m.bytes().len();
            if m.pos >= len {
                return Ok(Status::End);
            }
            let mut got = Vec::new();
            // SAFETY: as in `Many::bytes` (`len` is nonzero here); the slice
            // does not borrow `m`.
            let bytes: &[u8] = unsafe { std::slice::from_raw_parts(m.input, m.len) };
            let q = m.splitter.split(bytes, m.pos, m.at_end, &mut got);
            let progress = q > m.pos || !got.is_empty();
            m.pos = q;
            m.pending.extend(got);
            if !progress {
                // The rest of the window is the beginning of a document.
                return Ok(Status::End);
            }
        };
        if !index.is_null() {
            // SAFETY: non-null and, per the contract, writable.
            unsafe { *index = piece.ordinal };
        }
        if !start.is_null() {
            // SAFETY: non-null and, per the contract, writable.
            unsafe { *start = piece.start };
        }
        let (idx, _) = piece.result.map_err(Fail::Json)?;
        let bytes = &m.bytes()[piece.start..piece.end];
        // SAFETY: the stream's input outlives every document taken from it
        // (`qjson_many_new`'s contract: the caller keeps it alive until the
        // last of them is freed).
        let h = Box::new(unsafe { Handle::borrowing(bytes, idx) });
        // SAFETY: `out` is non-null and, per the contract, writable.
        unsafe { *out = Box::into_raw(h) };
        Ok(Status::Ok)
    })
}

/// Start a stream whose input comes one window at a time
/// (`qjson_many_window`); `window` is the most bytes one stage-1 pass
/// covers (0: the default).
///
/// # Safety
/// `opts` is null or valid, and `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn qjson_many_stream(
    opts: *const Options,
    window: usize,
    out: *mut *mut Many,
) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(Fail::Arg("null out pointer"));
        }
        // SAFETY: the caller passes null or a valid `qjson_options`.
        let options = super::handle::options(unsafe { opts.as_ref() }.copied());
        let window = if window == 0 { WINDOW } else { window };
        let m = Box::new(Many {
            input: std::ptr::null(),
            len: 0,
            splitter: Splitter::new(options, true, window),
            pos: 0,
            pending: VecDeque::new(),
            at_end: false,
        });
        // SAFETY: `out` is non-null and, per the contract, writable.
        unsafe { *out = Box::into_raw(m) };
        Ok(Status::Ok)
    })
}

/// Give a stream its next window: the bytes of the last window from
/// `qjson_many_consumed` on, followed by more input (borrowed: keep them
/// alive and unchanged until the documents taken from this window are
/// freed). `at_end` nonzero: nothing follows. Offsets reported for the
/// documents of this window (`*start`, error offsets) count from its
/// first byte. A window given before `qjson_many_next` said `QJSON_END`
/// is an argument error.
///
/// # Safety
/// `m` is a live pointer from `qjson_many_stream`; `input` points to `len`
/// readable bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn qjson_many_window(
    m: *mut Many,
    input: *const c_char,
    len: usize,
    at_end: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: per the contract, `m` is null or live and not shared.
        let m = unsafe { m.as_mut() }.ok_or(Fail::Arg("null stream"))?;
        if len != 0 && input.is_null() {
            return Err(Fail::Arg("null input"));
        }
        if !m.pending.is_empty() || m.at_end {
            return Err(Fail::Arg("the stream's window is not used up"));
        }
        m.input = input.cast();
        m.len = len;
        m.pos = 0;
        m.at_end = at_end != 0;
        Ok(Status::Ok)
    })
}

/// How many bytes of the current window the documents taken so far used
/// (the next window begins with the rest).
///
/// # Safety
/// `m` is null or a live pointer from `qjson_many_stream` or
/// `qjson_many_new`.
#[no_mangle]
pub unsafe extern "C" fn qjson_many_consumed(m: *const Many) -> usize {
    // SAFETY: per the contract, `m` is null or live.
    match unsafe { m.as_ref() } {
        Some(m) => m.pending.front().map_or(m.pos, |p| p.start),
        None => 0,
    }
}

/// Destroy a stream (null is ignored). Documents taken from it stay valid.
///
/// # Safety
/// `m` is null or a pointer from `qjson_many_new`, freed only once.
#[no_mangle]
pub unsafe extern "C" fn qjson_many_free(m: *mut Many) {
    if !m.is_null() {
        // SAFETY: per the contract, `m` came from `Box::into_raw` in
        // `qjson_many_new` and is freed once.
        let _ = std::panic::catch_unwind(|| drop(unsafe { Box::from_raw(m) }));
    }
}
