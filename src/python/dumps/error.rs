//! `JSONEncodeError`, the one exception `dumps` raises for values it cannot
//! write (bad keys, cycles, depth, NaN, surrogates, unknown types): the
//! class is imported from `qjson._errors` once and cached.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static ENCODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `qjson.JSONEncodeError(msg)`.
#[cold]
#[inline(never)]
pub(crate) fn encode_error(py: Python<'_>, msg: &str) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let ty = ENCODE_ERROR.import(py, "qjson._errors", "JSONEncodeError")?;
        Ok(PyErr::from_value(ty.call1((msg,))?))
    };
    make().unwrap_or_else(|e| e)
}

/// `qjson.JSONEncodeError(msg)` whose `__cause__` is `cause`.
#[cold]
#[inline(never)]
pub(crate) fn encode_error_from(py: Python<'_>, msg: &str, cause: PyErr) -> PyErr {
    let err = encode_error(py, msg);
    err.set_cause(py, Some(cause));
    err
}
