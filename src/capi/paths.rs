//! Compiled paths and wildcard reads: `qjson_path_new` / `qjson_path_free`,
//! `qjson_path_find`, `qjson_get_all` / `qjson_path_get_all`.
//!
//! A `qjson_path` is the core's [`Compiled`] on the heap: immutable, so one
//! may be shared by threads and documents. The matches of a wildcard read are
//! cursors in a per-thread buffer (like decoded strings), valid until the
//! next `get_all` call on the same thread, so a caller reads many values
//! through one call and no allocation of its own.

use super::handle::Handle;
use super::read::{args, path_str, put, CCursor};
use super::status::{guard, Fail, Status};
use crate::doc::{Cursor, Doc};
use crate::path::Compiled;
use std::cell::RefCell;
use std::ffi::{c_char, c_int};

thread_local! {
    /// The cursors of the last `get_all` on this thread.
    static MATCHES: RefCell<Vec<CCursor>> = const { RefCell::new(Vec::new()) };
}

/// The compiled path behind a pointer from C.
///
/// # Safety
/// `p` is null or a live pointer from `qjson_path_new`.
unsafe fn compiled<'p>(p: *const Compiled) -> Result<&'p Compiled, Fail> {
    // SAFETY: per this function's contract (`as_ref` handles null).
    unsafe { p.as_ref() }.ok_or(Fail::Arg("null path"))
}

/// Parse `len` bytes at `text` into a compiled path in `*out`
/// (`QJSON_ERR_PATH` when malformed). Free it with `qjson_path_free`.
///
/// # Safety
/// `text` points to `len` readable bytes (or `len` is 0); `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_path_new(
    text: *const c_char,
    len: usize,
    out: *mut *mut Compiled,
) -> c_int {
    guard(|| {
        // SAFETY: `text` is readable for `len` bytes, per the contract.
        let path = unsafe { path_str(text, len) }?;
        let p = Box::new(Compiled::new(path)?);
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, Box::into_raw(p)) }?;
        Ok(Status::Ok)
    })
}

/// Destroy a compiled path (null is ignored).
///
/// # Safety
/// `path` is null or a pointer from `qjson_path_new`, freed only once.
#[no_mangle]
pub unsafe extern "C" fn qjson_path_free(path: *mut Compiled) {
    if !path.is_null() {
        // SAFETY: per the contract, `path` came from `Box::into_raw` in
        // `qjson_path_new` and is freed once.
        let _ = std::panic::catch_unwind(|| drop(unsafe { Box::from_raw(path) }));
    }
}

/// Resolve a compiled path from `at` (the root when null) into `*out`, as
/// `qjson_find` does (`QJSON_ERR_PATH` for a path with a wildcard).
///
/// # Safety
/// Live `doc` and `path`, `at` null or valid, `out` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_path_find(
    doc: *const Handle,
    at: *const CCursor,
    path: *const Compiled,
    out: *mut CCursor,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let ((d, at, _), p) = unsafe { (args(doc, at, std::ptr::null(), 0)?, compiled(path)?) };
        let c = d.find_compiled(at, p)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, CCursor::new(&d, c)) }?;
        Ok(Status::Ok)
    })
}

/// Hand out `found` through the per-thread buffer.
///
/// # Safety
/// `out` and `n` are null or writable.
unsafe fn hand_out_all(
    d: &Doc<'_>,
    found: Vec<Cursor>,
    out: *mut *const CCursor,
    n: *mut usize,
) -> Result<Status, Fail> {
    if out.is_null() || n.is_null() {
        return Err(Fail::Arg("null out pointer"));
    }
    // A new buffer each call (the previous one is freed), so a thread does
    // not keep the memory of its largest result.
    let (ptr, len) = MATCHES.with(|m| {
        let mut m = m.borrow_mut();
        *m = found.into_iter().map(|c| CCursor::new(d, c)).collect();
        (m.as_ptr(), m.len())
    });
    // SAFETY: both are non-null and, per the contract, writable.
    unsafe {
        out.write(ptr);
        n.write(len);
    }
    Ok(Status::Ok)
}

/// Every value `path` (`path_len` bytes, wildcards allowed) matches from
/// `at` (the root when null), in document order: `*n` cursors at `*out`,
/// in a per-thread buffer valid until the next get_all call on this thread.
/// Branches that do not match are skipped (`*n` may be 0).
///
/// # Safety
/// Live `doc`, `at` null or valid, `path` readable for `path_len` bytes,
/// `out` and `n` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_get_all(
    doc: *const Handle,
    at: *const CCursor,
    path: *const c_char,
    path_len: usize,
    out: *mut *const CCursor,
    n: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let (d, at, p) = unsafe { args(doc, at, path, path_len) }?;
        let found = d.find_all(at, p)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { hand_out_all(&d, found, out, n) }
    })
}

/// `qjson_get_all` for a compiled path.
///
/// # Safety
/// Live `doc` and `path`, `at` null or valid, `out` and `n` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_path_get_all(
    doc: *const Handle,
    at: *const CCursor,
    path: *const Compiled,
    out: *mut *const CCursor,
    n: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let ((d, at, _), p) = unsafe { (args(doc, at, std::ptr::null(), 0)?, compiled(path)?) };
        let found = d.find_all_compiled(at, p)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { hand_out_all(&d, found, out, n) }
    })
}
