//! `int` values: ints below 2**60 read in place from the version's int
//! layout ([`small_int`], also used inline by the container loops), other
//! 64-bit values through `PyLong_AsLongLongAndOverflow`, and larger ones as
//! Python's own decimal text. Digits are written four and two at a time.

use super::Serializer;
#[cfg(not(feature = "abi3"))]
use crate::encode::Buf;
use crate::encode::{write_i64, write_u64};
use pyo3::ffi;
use pyo3::prelude::*;

/// Whether CPython stores ints in 30-bit digits (`sys.int_info`), checked
/// once at import; [`small_int`] reads digits only then.
#[cfg(not(feature = "abi3"))]
static DIGIT30: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The value of an int of at most two 30-bit digits (|v| < 2**60), read
/// in place from the object (version-specific layouts), or `None` for
/// larger ints (and when digits are not 30 bits wide).
///
/// # Safety
/// `obj` must be a live `int` (or subclass: same layout).
#[cfg(not(feature = "abi3"))]
#[inline(always)]
pub(super) unsafe fn small_int(obj: *mut ffi::PyObject) -> Option<i64> {
    use std::ptr::addr_of;
    use std::sync::atomic::Ordering;
    /// CPython >= 3.12: `PyObject_HEAD; uintptr_t lv_tag; digit ob_digit[]`,
    /// `lv_tag` = digit count << 3 | sign (0 positive, 1 zero, 2 negative).
    #[cfg(Py_3_12)]
    #[repr(C)]
    struct Long {
        head: ffi::PyObject,
        tag: usize,
        digit: [u32; 2],
    }
    // A CPython this crate's PyO3 does not know yet may lay ints out
    // differently: re-check `Long` below before allowing it.
    #[cfg(Py_3_15)]
    compile_error!("qjson reads CPython int internals (dumps/int.rs, small_int): check the layout for this version");
    /// CPython < 3.12: `PyObject_VAR_HEAD; digit ob_digit[]`, `ob_size` =
    /// digit count with the sign of the value.
    #[cfg(not(Py_3_12))]
    #[repr(C)]
    struct Long {
        head: ffi::PyVarObject,
        digit: [u32; 2],
    }
    let l = obj.cast::<Long>();
    // SAFETY: per the contract `l` points to an int object with this layout
    // (selected for the interpreter this build is for); the fields are read
    // through raw places (no reference to the whole, possibly shorter,
    // struct), the first digit only when there is one and the second only
    // when there are two (an int's digit array is allocated to its count).
    unsafe {
        #[cfg(Py_3_12)]
        let (n, negative) = {
            let tag = *addr_of!((*l).tag);
            (tag >> 3, tag & 3 == 2)
        };
        #[cfg(not(Py_3_12))]
        let (n, negative) = {
            let size = *addr_of!((*l).head.ob_size);
            (size.unsigned_abs(), size < 0)
        };
        if n > 2 || !DIGIT30.load(Ordering::Relaxed) {
            return None;
        }
        let mut v = 0u64;
        if n >= 1 {
            v = *addr_of!((*l).digit[0]) as u64;
        }
        if n == 2 {
            v |= (*addr_of!((*l).digit[1]) as u64) << 30;
        }
        let v = v as i64;
        Some(if negative { -v } else { v })
    }
}

/// Read `sys.int_info` once (at import): [`small_int`] reads digits in
/// place only when they are 30-bit digits in 32-bit words.
#[cfg(not(feature = "abi3"))]
pub(super) fn init(py: Python<'_>) -> PyResult<()> {
    let bits: u32 = py
        .import("sys")?
        .getattr("int_info")?
        .getattr("bits_per_digit")?
        .extract()?;
    let digit = std::mem::size_of::<u32>() as u32;
    let sizeof_digit: u32 = py
        .import("sys")?
        .getattr("int_info")?
        .getattr("sizeof_digit")?
        .extract()?;
    DIGIT30.store(
        bits == 30 && sizeof_digit == digit,
        std::sync::atomic::Ordering::Relaxed,
    );
    Ok(())
}

impl<'py> Serializer<'py> {
    /// An `int` (or subclass; `bool` never gets here).
    #[inline]
    pub(super) fn int(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is an int (exact or subclass: same layout).
        #[cfg(not(feature = "abi3"))]
        if let Some(v) = unsafe { small_int(obj) } {
            write_i64(&mut self.out, v);
            return Ok(());
        }
        self.int_api(obj)
    }

    /// An `int` through the C API (any size).
    #[cfg_attr(not(feature = "abi3"), cold, inline(never))]
    fn int_api(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        let mut overflow = 0;
        // SAFETY: `obj` is an int and the interpreter is attached.
        let v = unsafe { ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow) };
        if overflow == 0 {
            if v == -1 && PyErr::occurred(self.py) {
                return Err(PyErr::fetch(self.py));
            }
            write_i64(&mut self.out, v);
            return Ok(());
        }
        self.big_int(obj, overflow > 0)
    }

    #[cold]
    #[inline(never)]
    fn big_int(&mut self, obj: *mut ffi::PyObject, positive: bool) -> PyResult<()> {
        if positive {
            // SAFETY: `obj` is an int and the interpreter is attached.
            let u = unsafe { ffi::PyLong_AsUnsignedLongLong(obj) };
            if u != u64::MAX || !PyErr::occurred(self.py) {
                write_u64(&mut self.out, u);
                return Ok(());
            }
            drop(PyErr::take(self.py));
        }
        // SAFETY: `obj` is alive; `PyNumber_Long` gives a plain int (also for
        // subclasses with their own `__str__`), `PyObject_Str` its text.
        let text = unsafe {
            let plain = Bound::from_owned_ptr_or_err(self.py, ffi::PyNumber_Long(obj))?;
            Bound::from_owned_ptr_or_err(self.py, ffi::PyObject_Str(plain.as_ptr()))?
        };
        // SAFETY: `text` is a str we own, alive past the copy.
        let s = unsafe { self.utf8(text.as_ptr())? };
        self.out.extend_from_slice(s);
        Ok(())
    }
}
