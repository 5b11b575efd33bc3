//! The scalars the container loops write without a call ([`fast_scalar`]):
//! `None`, `True`, `False` (by address), short strings ([`fast_str`]),
//! ints below 2**60 ([`small_int`]), finite floats and empty lists and
//! dicts, exact types only. Anything else returns 0 and takes the general
//! path ([`Serializer::value`](super::Serializer::value)).
//!
//! Short lists of such scalars (`[x, y]` coordinates, `[0, 10]` index
//! pairs: most of the lists of canada.json, marine_ik.json, citm_catalog.json)
//! are written inline too ([`fast_list`]): no call into the list writer, no
//! held reference, no cycle check (scalars hold nothing), so the cost of a
//! pair is that of its two items and the brackets. Only dict values and
//! lists of lists try it (`Serializer::member`'s `SHORT`): in a flat list
//! of numbers the extra check costs about 5 instructions an item.

#[cfg(not(feature = "abi3"))]
use super::int::small_int;
use super::string::fast_str;
use crate::encode::write_f64_raw;
#[cfg(not(feature = "abi3"))]
use crate::encode::write_i64_raw;
#[cfg(not(feature = "abi3"))]
use crate::encode::MEDIUM_STR_MAX_LEN;
use pyo3::ffi;

/// Write `obj` at `dst` when it is one of the scalars written without a
/// call: a `str` as in [`fast_str`], an `int`
/// below 2**60, a finite `float`, an empty `list` or `dict`, `True`,
/// `False`, `None` (exact types only). Return the length written, or 0 when
/// `obj` needs the general path
/// ([`Serializer::value`](super::Serializer::value)).
///
/// # Safety
/// `obj` must be alive, the interpreter attached and `dst` writable for
/// [`MEDIUM_STR_MAX_LEN`] bytes.
#[inline(always)]
pub(super) unsafe fn fast_scalar(dst: *mut u8, obj: *mut ffi::PyObject) -> usize {
    use std::ptr::{addr_of_mut, write_unaligned};
    // SAFETY: per the contract; each writer stays within
    // `MEDIUM_STR_MAX_LEN` bytes (asserted above).
    unsafe {
        // The singletons by address first: no load from the object, so no
        // wait for its cache line (a list of them is written twice as
        // fast; the cost elsewhere is three compares).
        if obj == ffi::Py_None() {
            write_unaligned(dst.cast::<[u8; 4]>(), *b"null");
            return 4;
        }
        if obj == ffi::Py_True() {
            write_unaligned(dst.cast::<[u8; 4]>(), *b"true");
            return 4;
        }
        if obj == ffi::Py_False() {
            write_unaligned(dst.cast::<[u8; 5]>(), *b"false");
            return 5;
        }
        let ty = ffi::Py_TYPE(obj);
        if ty == addr_of_mut!(ffi::PyUnicode_Type) {
            return fast_str(dst, obj);
        }
        if ty == addr_of_mut!(ffi::PyLong_Type) {
            #[cfg(not(feature = "abi3"))]
            if let Some(v) = small_int(obj) {
                return write_i64_raw(dst, v);
            }
            return 0;
        }
        if ty == addr_of_mut!(ffi::PyFloat_Type) {
            #[cfg(not(feature = "abi3"))]
            let v = ffi::PyFloat_AS_DOUBLE(obj);
            #[cfg(feature = "abi3")]
            let v = ffi::PyFloat_AsDouble(obj);
            if v.is_finite() {
                return write_f64_raw(dst, v);
            }
            return 0;
        }
        // Empty containers (their size read in place).
        #[cfg(not(feature = "abi3"))]
        {
            if ty == addr_of_mut!(ffi::PyList_Type) && ffi::PyList_GET_SIZE(obj) == 0 {
                write_unaligned(dst.cast::<[u8; 2]>(), *b"[]");
                return 2;
            }
            if ty == addr_of_mut!(ffi::PyDict_Type)
                && (*obj.cast::<ffi::PyDictObject>()).ma_used == 0
            {
                write_unaligned(dst.cast::<[u8; 2]>(), *b"{}");
                return 2;
            }
        }
    }
    0
}

/// Lists of at most this many items may be written by [`fast_list`].
#[cfg(not(feature = "abi3"))]
pub(super) const FAST_LIST_MAX: usize = 8;

/// Room [`fast_list`] may write for a list of `n` items: the brackets and,
/// per item, a comma and the longest fast scalar.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
pub(super) const fn fast_list_room(n: usize) -> usize {
    2 + n * (1 + MEDIUM_STR_MAX_LEN)
}

/// Write the exact `list` `obj` at `dst` when it has 1 to
/// [`FAST_LIST_MAX`] items, each written by [`fast_scalar`], and `room`
/// bytes are enough for [`fast_list_room`]; return the length written, or
/// 0 when the list needs the general path (the bytes at `dst` are then
/// garbage, not text). Scalars run no user code and hold no reference, so
/// the list needs neither to be held nor to be checked for cycles while it
/// is written (a list holding a list takes the general path).
///
/// # Safety
/// `obj` must be alive, the interpreter attached and `dst` writable for
/// `room` bytes.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
pub(super) unsafe fn fast_list(dst: *mut u8, room: usize, obj: *mut ffi::PyObject) -> usize {
    // SAFETY: per the contract: `obj` is a live object; a list's size is
    // read in place (the full API's layout).
    unsafe {
        if ffi::Py_TYPE(obj) != std::ptr::addr_of_mut!(ffi::PyList_Type) {
            return 0;
        }
        let n = ffi::PyList_GET_SIZE(obj) as usize;
        if n == 0 || n > FAST_LIST_MAX || room < fast_list_room(n) {
            return 0;
        }
        fast_list_items(dst, obj, n)
    }
}

/// [`fast_list`] past its checks: the `n` items of list `obj`.
///
/// # Safety
/// `obj` must be a live exact list of `n >= 1` items, the interpreter
/// attached and `dst` writable for [`fast_list_room`]`(n)` bytes.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
unsafe fn fast_list_items(dst: *mut u8, obj: *mut ffi::PyObject, n: usize) -> usize {
    // SAFETY: per the contract; items are read in place (`i < n`, the
    // list's size: nothing below runs Python code, so it does not change
    // meanwhile). Each write stays within `fast_list_room(n)` bytes: a
    // bracket, then per item a comma and at most `MEDIUM_STR_MAX_LEN`
    // bytes (`fast_scalar`'s contract), then the closing bracket.
    unsafe {
        *dst = b'[';
        let mut len = 1;
        for i in 0..n {
            if i > 0 {
                *dst.add(len) = b',';
                len += 1;
            }
            let k = fast_scalar(
                dst.add(len),
                ffi::PyList_GET_ITEM(obj, i as ffi::Py_ssize_t),
            );
            if k == 0 {
                return 0;
            }
            len += k;
        }
        *dst.add(len) = b']';
        len + 1
    }
}
