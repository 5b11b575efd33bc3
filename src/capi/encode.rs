//! The Lua encoder's string writer: lua-cjson-compatible string literals
//! written straight into the caller's buffer (qjson.lua reserves room in its
//! `string.buffer`, calls one of these, and commits the length returned).
//!
//! Neither of these can fail or panic (no allocation, no bounds-checked
//! indexing); a panic would abort the process, as in any `extern "C"` fn.
//!
//! And the compact form of a JSON text (`qjson_compact`, `crate::compact`):
//! what qjson.lua writes for a value it copies out of an edited proxy, so
//! that it gives the bytes Python's materialized value gives.

use super::read::put;
use super::status::{guard, Fail, Status};
use crate::compact::write_compact;
use crate::document::Document;
use crate::encode::cjson::{write_escaped, MAX_ESCAPE};
use crate::index::Options;
use std::cell::RefCell;
use std::ffi::{c_char, c_int};

/// The input as a slice (empty for `len == 0`, whatever the pointer).
///
/// # Safety
/// `s` points to `len` readable bytes, or `len` is 0.
#[inline(always)]
unsafe fn input<'a>(s: *const c_char, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts(s.cast::<u8>(), len) }
    }
}

/// Write `len` bytes at `s` as a lua-cjson string literal, quotes included,
/// at `out`; return the number of bytes written.
///
/// # Safety
/// `s` points to `len` readable bytes (or `len` is 0); `out` is writable for
/// `6 * len + 2` bytes and does not overlap `s`.
#[no_mangle]
pub unsafe extern "C" fn qjson_cjson_string(
    s: *const c_char,
    len: usize,
    out: *mut c_char,
) -> usize {
    let out = out.cast::<u8>();
    // SAFETY: per the contract: room for the quotes and `MAX_ESCAPE * len`
    // bytes between them.
    unsafe {
        *out = b'"';
        let n = write_escaped(out.add(1), input(s, len));
        *out.add(1 + n) = b'"';
        n + 2
    }
}

/// Write `len` bytes at `s` escaped as lua-cjson does, without quotes (for
/// a long string written in pieces), at `out`; return the number of bytes
/// written.
///
/// # Safety
/// `s` points to `len` readable bytes (or `len` is 0); `out` is writable for
/// `6 * len` bytes and does not overlap `s`.
#[no_mangle]
pub unsafe extern "C" fn qjson_cjson_escape(
    s: *const c_char,
    len: usize,
    out: *mut c_char,
) -> usize {
    const _: () = assert!(MAX_ESCAPE == 6);
    // SAFETY: per the contract.
    unsafe { write_escaped(out.cast::<u8>(), input(s, len)) }
}

thread_local! {
    /// The last `qjson_compact` output of this thread.
    static COMPACT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Parse the JSON text of `len` bytes at `input` (strictly, default
/// options) and write its compact form (`crate::compact`: what a host
/// writes for the value once decoded and encoded again); `*out` and
/// `*out_len` receive the text, valid until the next `qjson_compact` call
/// on this thread. Invalid JSON fails as `qjson_parse` does; a number out
/// of the double range is written as it stands (`1e400`).
///
/// # Safety
/// `input` points to `len` readable bytes (or `len` is 0); `out` and
/// `out_len` are writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_compact(
    input: *const c_char,
    len: usize,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> c_int {
    guard(|| {
        if input.is_null() && len != 0 {
            return Err(Fail::Arg("null input"));
        }
        // SAFETY: per the contract.
        let text = unsafe { self::input(input, len) };
        let d = Document::parse(text, &Options::default())?;
        let doc = d.doc();
        COMPACT.with(|buf| {
            let mut buf = buf.borrow_mut();
            buf.clear();
            write_compact(&doc, doc.root(), &mut *buf).map_err(Fail::Access)?;
            // SAFETY: `out` and `out_len` are writable per the contract
            // (`put` checks null); the bytes stay in the thread's buffer
            // until its next call.
            unsafe {
                put(out, buf.as_ptr().cast::<c_char>())?;
                put(out_len, buf.len())?;
            }
            Ok(Status::Ok)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compact(text: &[u8]) -> Result<Vec<u8>, c_int> {
        let (mut p, mut n) = (std::ptr::null(), 0usize);
        // SAFETY: `text` is readable for its length; the out-pointers are
        // locals; the output is copied before the next call.
        unsafe {
            match qjson_compact(text.as_ptr().cast(), text.len(), &mut p, &mut n) {
                0 => Ok(std::slice::from_raw_parts(p.cast::<u8>(), n).to_vec()),
                rc => Err(rc),
            }
        }
    }

    #[test]
    fn compact_texts() {
        assert_eq!(
            compact(br#" { "a" : [ 1.0E2 , "\/" ] , "a" : 2 } "#).unwrap(),
            br#"{"a":[100.0,"/"]}"#
        );
        assert_eq!(compact(b"-0").unwrap(), b"0");
        // A number out of the double range stays as written.
        assert_eq!(compact(b"[ 1e999 ]").unwrap(), b"[1e999]");
        // Invalid JSON, a null pointer.
        assert_eq!(compact(b"[1,]"), Err(5));
        // SAFETY: a null input of length 1 is refused before any read.
        let rc = unsafe { qjson_compact(std::ptr::null(), 1, &mut std::ptr::null(), &mut 0usize) };
        assert_eq!(rc, 6);
    }
}
