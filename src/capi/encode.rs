//! The Lua encoder's string writer: lua-cjson-compatible string literals
//! written straight into the caller's buffer (qjson.lua reserves room in its
//! `string.buffer`, calls one of these, and commits the length returned).
//!
//! Neither function can fail or panic (no allocation, no bounds-checked
//! indexing); a panic would abort the process, as in any `extern "C"` fn.

use crate::encode::cjson::{write_escaped, MAX_ESCAPE};
use std::ffi::c_char;

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
