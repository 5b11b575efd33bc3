//! The scalars the container loops write without a call ([`fast_scalar`]):
//! `None`, `True`, `False` (by address), short strings ([`fast_str`]),
//! ints below 2**60 ([`small_int`]), finite floats and empty lists and
//! dicts, exact types only. Anything else returns 0 and takes the general
//! path ([`Serializer::value`](super::Serializer::value)).

#[cfg(not(feature = "abi3"))]
use super::int::small_int;
use super::string::fast_str;
use crate::encode::write_f64_raw;
#[cfg(not(feature = "abi3"))]
use crate::encode::write_i64_raw;
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
/// [`MEDIUM_STR_MAX_LEN`](crate::encode::MEDIUM_STR_MAX_LEN) bytes.
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
