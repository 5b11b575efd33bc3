//! Iteration over the children of an object or array, resumable from plain
//! data (`qjson_iter`), so a caller keeps it between calls without
//! allocating.

use super::handle::{handle, Handle};
use super::read::{args, hand_out, put, CCursor};
use super::status::{guard, Fail, Status};
use crate::doc::ChildWalk;
use std::ffi::{c_char, c_int};
use std::mem::{align_of, size_of};

/// `qjson_iter`: an opaque, fixed-size walk state (`uint32_t opaque[6]` in
/// the header).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Iter {
    walk: ChildWalk,
}

// The header promises 24 bytes with 4-byte alignment.
const _: () = assert!(size_of::<Iter>() == 24 && align_of::<Iter>() == 4);

/// Start a walk over the children of the object or array at `path` (from
/// `at`, the root when null). `QJSON_ERR_TYPE` for a scalar.
///
/// # Safety
/// Live `doc`, `at` null or valid, `path` readable for `path_len` bytes,
/// `it` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_iter_init(
    doc: *const Handle,
    at: *const CCursor,
    path: *const c_char,
    path_len: usize,
    it: *mut Iter,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let (d, at, p) = unsafe { args(doc, at, path, path_len) }?;
        let walk = d.walk(d.find(at, p)?)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(it, Iter { walk }) }?;
        Ok(Status::Ok)
    })
}

/// The next child of a walk: `QJSON_OK` with the value in `*value` and, for
/// objects, the unescaped key in `*key` / `*key_len` (same lifetime rules as
/// `qjson_get_str`; NULL and 0 for arrays), or `QJSON_END` when done.
/// `key` and `key_len` may be null when the caller does not want the key.
///
/// # Safety
/// Live `doc`; `it` from `qjson_iter_init` on the same document; `key`,
/// `key_len` null or writable; `value` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_iter_next(
    doc: *const Handle,
    it: *mut Iter,
    key: *mut *const c_char,
    key_len: *mut usize,
    value: *mut CCursor,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let d = unsafe { handle(doc) }?.doc();
        // SAFETY: `it` is null or valid for reads and writes, per the contract.
        let it = unsafe { it.as_mut() }.ok_or(Fail::Arg("null iterator"))?;
        let Some((raw_key, v)) = d.walk_next(&mut it.walk) else {
            return Ok(Status::End);
        };
        let (kp, kl) = match raw_key {
            Some(raw) if !key.is_null() || !key_len.is_null() => hand_out(d.key_str(raw)?),
            _ => (std::ptr::null(), 0),
        };
        if !key.is_null() {
            // SAFETY: non-null and writable, per the contract.
            unsafe { put(key, kp) }?;
        }
        if !key_len.is_null() {
            // SAFETY: non-null and writable, per the contract.
            unsafe { put(key_len, kl) }?;
        }
        // SAFETY: forwarded from this function's contract.
        unsafe { put(value, CCursor::new(&d, v)) }?;
        Ok(Status::Ok)
    })
}
