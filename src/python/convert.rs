//! Core values to Python objects.
//!
//! Scalars become `str`, `int` (exact at any size), `float`, `bool` or
//! `None`; containers become lazy views ([`super::view`]) that share the
//! parsed document. `materialize` builds plain dicts and lists instead.

use super::doc::Parsed;
use super::errors::access_error;
use super::view::{Array, Object};
use crate::decode::Number;
use crate::doc::{Cursor, Value};
use crate::error::AccessError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString};
use std::sync::Arc;

/// An integer beyond i64, from its exact decimal text.
#[cold]
pub(crate) fn big_int(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    let mut z = Vec::with_capacity(text.len() + 1);
    z.extend_from_slice(text.as_bytes());
    z.push(0);
    // SAFETY: `z` is NUL-terminated and outlives the call; the interpreter is
    // attached. A NULL result has set a Python exception, which we fetch.
    unsafe {
        let p = ffi::PyLong_FromString(z.as_ptr().cast(), std::ptr::null_mut(), 10);
        Bound::from_owned_ptr_or_err(py, p).map(Bound::unbind)
    }
}

pub(crate) fn number(py: Python<'_>, n: Number<'_>) -> PyResult<Py<PyAny>> {
    Ok(match n {
        Number::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        Number::BigInt(t) => big_int(py, t)?,
        Number::Float(f) => PyFloat::new(py, f).into_any().unbind(),
    })
}

/// The Python value at `c`; containers become views over `parsed`.
pub(crate) fn value(py: Python<'_>, parsed: &Arc<Parsed>, c: Cursor) -> Result<Py<PyAny>, PyErr> {
    let doc = parsed.doc();
    let v = doc
        .value(c)
        .map_err(|e| access_error(py, e, &parsed.input, ""))?;
    scalar_or_view(py, parsed, v)
}

pub(crate) fn scalar_or_view(
    py: Python<'_>,
    parsed: &Arc<Parsed>,
    v: Value<'_>,
) -> PyResult<Py<PyAny>> {
    Ok(match v {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => number(py, n)?,
        Value::String(s) => PyString::new(py, &s).into_any().unbind(),
        Value::Object(c) => Py::new(py, Object::new(parsed.clone(), c))?.into_any(),
        Value::Array(c) => Py::new(py, Array::new(parsed.clone(), c))?.into_any(),
    })
}

/// Plain Python objects for the value at `c`. For duplicate keys the first
/// occurrence wins, as in path reads.
pub(crate) fn materialize(py: Python<'_>, parsed: &Parsed, c: Cursor) -> PyResult<Py<PyAny>> {
    let doc = parsed.doc();
    let err = |e: AccessError| access_error(py, e, &parsed.input, "");
    Ok(match doc.value(c).map_err(err)? {
        Value::Object(c) => {
            let dict = PyDict::new(py);
            for (raw_key, child) in doc.object_items(c).map_err(err)? {
                let key = doc.key_str(raw_key).map_err(err)?;
                let key = PyString::new(py, &key);
                if !dict.contains(&key)? {
                    dict.set_item(key, materialize(py, parsed, child)?)?;
                }
            }
            dict.into_any().unbind()
        }
        Value::Array(c) => {
            let list = PyList::empty(py);
            for child in doc.array_items(c).map_err(err)? {
                list.append(materialize(py, parsed, child)?)?;
            }
            list.into_any().unbind()
        }
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => number(py, n)?,
        Value::String(s) => PyString::new(py, &s).into_any().unbind(),
    })
}
