//! `str` values and keys: the inline writer of the container loops
//! ([`fast_str`]) and the general one ([`Serializer::str`]).
//!
//! A string is written from its UTF-8 form. Version-specific builds for
//! CPython 3.9 to 3.13 read a compact ASCII string's data, or the UTF-8
//! copy CPython caches on other strings, in place; the rest (and every
//! string of `abi3` and 3.14+ builds) goes through
//! `PyUnicode_AsUTF8AndSize`, which caches that copy on the str. A lone
//! surrogate has no UTF-8 form and raises `JSONEncodeError`, so invalid
//! UTF-8 is never written.

use super::error::encode_error_from;
use super::Serializer;
use crate::encode::write_str;
#[cfg(not(any(feature = "abi3", Py_3_14)))]
use crate::encode::{write_medium_str_raw, MEDIUM_STR};
use pyo3::ffi;
use pyo3::prelude::*;
use std::os::raw::c_char;

extern "C" {
    // In the stable ABI from 3.10 and in every CPython 3 with this
    // signature; declared here so the abi3-py39 build can call it.
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const c_char;
}

/// Write an exact `str` at `dst` when its UTF-8 form is at hand (compact
/// ASCII data, or the UTF-8 copy CPython caches on other strings), it is
/// under [`MEDIUM_STR`] bytes and needs no
/// escape (most keys and values); return its length, or 0 when it needs the
/// general path.
///
/// The string layout is read only for CPython 3.9 to 3.13: from 3.14 on,
/// CPython's headers (and so PyO3) no longer expose the bit field that says
/// "compact ASCII", so 3.14+ builds, like `abi3` ones, always take the
/// general path ([`Serializer::utf8`]: `PyUnicode_AsUTF8AndSize`).
///
/// # Safety
/// `obj` must be alive and `dst` writable for
/// [`MEDIUM_STR_MAX_LEN`](crate::encode::MEDIUM_STR_MAX_LEN) bytes.
#[inline(always)]
pub(super) unsafe fn fast_str(dst: *mut u8, obj: *mut ffi::PyObject) -> usize {
    #[cfg(not(any(feature = "abi3", Py_3_14)))]
    // SAFETY: per the contract; the full API's layout accessors are valid
    // for a str: a compact ASCII string's data is its UTF-8 form, and every
    // other str starts with a `PyCompactUnicodeObject` whose `utf8` is NULL
    // or its cached UTF-8 form (`utf8_length` bytes), owned by the str.
    unsafe {
        if ffi::Py_TYPE(obj) != std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
            return 0;
        }
        let (p, n) = if ffi::PyUnicode_IS_COMPACT_ASCII(obj) != 0 {
            (
                ffi::PyUnicode_DATA(obj).cast::<u8>().cast_const(),
                ffi::PyUnicode_GET_LENGTH(obj) as usize,
            )
        } else {
            let c = obj.cast::<ffi::PyCompactUnicodeObject>();
            let u = (*c).utf8;
            if u.is_null() {
                return 0;
            }
            (u.cast::<u8>().cast_const(), (*c).utf8_length as usize)
        };
        if n < MEDIUM_STR {
            return write_medium_str_raw(dst, std::slice::from_raw_parts(p, n));
        }
    }
    #[cfg(any(feature = "abi3", Py_3_14))]
    let _ = (dst, obj);
    0
}

impl<'py> Serializer<'py> {
    /// A `str` (or subclass).
    #[inline(always)]
    pub(super) fn str(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is a live str (the caller's contract), used only
        // within this call.
        let s = unsafe { self.utf8(obj)? };
        write_str(&mut self.out, s);
        Ok(())
    }

    /// The UTF-8 form of a `str` (or subclass); borrowed from the object.
    ///
    /// # Safety
    ///
    /// `obj` is a live `str`, and the caller keeps it alive for as long as
    /// it uses the returned slice (`'a` is the caller's to choose).
    #[inline(always)]
    pub(super) unsafe fn utf8<'a>(&self, obj: *mut ffi::PyObject) -> PyResult<&'a [u8]> {
        // Version-specific builds read a compact ASCII string's data in place
        // (up to 3.13: see `fast_str`).
        #[cfg(not(any(feature = "abi3", Py_3_14)))]
        // SAFETY: `obj` is a live str; the full API's layout accessors are
        // valid for it, and a compact ASCII string's data is its UTF-8 form.
        unsafe {
            if ffi::PyUnicode_IS_COMPACT_ASCII(obj) != 0 {
                let p = ffi::PyUnicode_DATA(obj).cast::<u8>();
                let n = ffi::PyUnicode_GET_LENGTH(obj) as usize;
                return Ok(std::slice::from_raw_parts(p, n));
            }
        }
        let mut size: ffi::Py_ssize_t = 0;
        // SAFETY: `obj` is a str and the interpreter is attached; the buffer
        // belongs to the str, which the caller keeps alive while it writes.
        let p = unsafe { PyUnicode_AsUTF8AndSize(obj, &mut size) };
        if p.is_null() {
            return Err(self.surrogate_error());
        }
        // SAFETY: CPython returned `size` readable bytes at `p`.
        Ok(unsafe { std::slice::from_raw_parts(p.cast(), size as usize) })
    }

    #[cold]
    #[inline(never)]
    fn surrogate_error(&self) -> PyErr {
        let cause = PyErr::fetch(self.py);
        encode_error_from(
            self.py,
            "str is not valid UTF-8: surrogates not allowed",
            cause,
        )
    }
}
