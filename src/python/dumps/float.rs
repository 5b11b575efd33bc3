//! `float` values: finite floats are written by `zmij` straight into the
//! output (the text orjson writes); NaN and the infinities raise
//! `JSONEncodeError`. Version-specific builds read the value in place.

use super::error::encode_error;
use super::Serializer;
use crate::encode::write_f64;
use pyo3::ffi;
use pyo3::prelude::*;

impl<'py> Serializer<'py> {
    /// A `float` (or subclass).
    #[inline]
    pub(super) fn float(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is a float and the interpreter is attached; the
        // full API reads its value field in place.
        #[cfg(not(feature = "abi3"))]
        let v = unsafe { ffi::PyFloat_AS_DOUBLE(obj) };
        // SAFETY: as above.
        #[cfg(feature = "abi3")]
        let v = unsafe { ffi::PyFloat_AsDouble(obj) };
        if !v.is_finite() {
            return Err(self.float_error(v));
        }
        write_f64(&mut self.out, v);
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn float_error(&self, v: f64) -> PyErr {
        if v.is_nan() && PyErr::occurred(self.py) {
            return PyErr::fetch(self.py);
        }
        encode_error(
            self.py,
            &format!("Out of range float values are not JSON compliant: {v}"),
        )
    }
}
