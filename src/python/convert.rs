//! Core values to Python objects.
//!
//! Scalars become `str`, `int` (exact at any size), `float`, `bool` or
//! `None`; containers become lazy views ([`super::view`]) that share the
//! parsed document. `materialize` builds plain dicts and lists instead.

use super::doc::Parsed;
use super::errors::access_error;
use super::view::{self, Array, Object};
use crate::decode::Number;
use crate::doc::{ArrayItems, Cursor, Doc, ObjectItems, Quick, Value};
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

/// A `str` holding `s`. Version-specific builds make an ASCII string (the
/// common case: keys, ids, names) with one allocation and a memcpy, which
/// skips CPython's UTF-8 decoder; other strings, and the stable ABI, go
/// through `PyString::new`.
#[inline]
pub(crate) fn new_str<'py>(py: Python<'py>, s: &str) -> Bound<'py, PyString> {
    #[cfg(not(feature = "abi3"))]
    if s.is_ascii() {
        // SAFETY: the interpreter is attached; `PyUnicode_New(n, 127)`
        // makes a compact ASCII string whose data holds `n` bytes (plus the
        // NUL it already wrote), which we fill before anyone sees it. A null
        // result (no memory) clears its error and falls through to
        // `PyString::new`, which reports a failure its own way.
        unsafe {
            let p = ffi::PyUnicode_New(s.len() as ffi::Py_ssize_t, 127);
            if !p.is_null() {
                let dst = ffi::PyUnicode_DATA(p).cast::<u8>();
                std::ptr::copy_nonoverlapping(s.as_ptr(), dst, s.len());
                return Bound::from_owned_ptr(py, p).cast_into_unchecked();
            }
            ffi::PyErr_Clear();
        }
    }
    PyString::new(py, s)
}

/// The Python value at `c` when it is one of the scalars [`Doc::quick`]
/// reads (strings, short ints) or a plain decimal ([`Doc::quick_decimal`]):
/// made straight from the input, without the
/// [`Value`] and the dispatch of [`value`]. `None` for
/// every other value (and when CPython has no memory: the general path
/// then reports it).
#[inline(always)]
pub(crate) fn quick(py: Python<'_>, doc: &Doc<'_>, c: Cursor) -> Option<Py<PyAny>> {
    let p = match doc.quick(c) {
        // SAFETY: the interpreter is attached (`py`).
        Some(Quick::Int(v)) => unsafe { ffi::PyLong_FromLongLong(v) },
        Some(Quick::Str(s)) => return Some(new_str(py, &s).into_any().unbind()),
        // A plain decimal (`"temperature": 0.7`).
        None => match doc.quick_decimal(c)? {
            // SAFETY: the interpreter is attached (`py`).
            Number::Int(v) => unsafe { ffi::PyLong_FromLongLong(v) },
            // SAFETY: as above.
            Number::Float(f) => unsafe { ffi::PyFloat_FromDouble(f) },
            Number::BigInt(_) => return None,
        },
    };
    if p.is_null() {
        // SAFETY: attached; the error `PyLong_FromLongLong` (or
        // `PyFloat_FromDouble`) set is dropped
        // (the general path runs again and reports its own).
        unsafe { ffi::PyErr_Clear() };
        return None;
    }
    // SAFETY: `p` is a new reference to an int or a float.
    Some(unsafe { Bound::from_owned_ptr(py, p) }.unbind())
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
        Value::String(s) => new_str(py, &s).into_any().unbind(),
        Value::Object(c) => view::make(py, Object::new(parsed.clone(), c))?,
        Value::Array(c) => view::make(py, Array::new(parsed.clone(), c))?,
    })
}

/// Plain Python objects for the value at `c`. For duplicate keys the first
/// occurrence wins, as in path reads.
///
/// The walk keeps its own stack of open containers rather than recursing, so
/// the nesting depth a document may have is bounded by `max_depth` alone,
/// never by the thread's stack size.
pub(crate) fn materialize(py: Python<'_>, parsed: &Parsed, c: Cursor) -> PyResult<Py<PyAny>> {
    let doc = parsed.doc();
    let err = |e: AccessError| access_error(py, e, &parsed.input, "");

    /// The children still to read of an open container.
    enum Items<'a> {
        Object(ObjectItems<'a>),
        Array(ArrayItems<'a>),
    }

    /// An open container: the dict or list being filled, its children left,
    /// and the key it goes under in its parent (`None` in an array or at the
    /// top).
    struct Open<'a, 'py> {
        out: Bound<'py, PyAny>,
        items: Items<'a>,
        key: Option<Bound<'py, PyString>>,
    }

    /// A value read: a scalar as a Python object, or a container opened
    /// (its empty dict or list and its children).
    enum Read<'a, 'py> {
        Scalar(Bound<'py, PyAny>),
        Container(Bound<'py, PyAny>, Items<'a>),
    }

    let open = |c: Cursor| -> PyResult<Read<'_, '_>> {
        Ok(match doc.value(c).map_err(err)? {
            Value::Object(c) => Read::Container(
                PyDict::new(py).into_any(),
                Items::Object(doc.object_items(c).map_err(err)?),
            ),
            Value::Array(c) => Read::Container(
                PyList::empty(py).into_any(),
                Items::Array(doc.array_items(c).map_err(err)?),
            ),
            Value::Null => Read::Scalar(py.None().into_bound(py)),
            Value::Bool(b) => Read::Scalar(b.into_pyobject(py)?.to_owned().into_any()),
            Value::Number(n) => Read::Scalar(number(py, n)?.into_bound(py)),
            Value::String(s) => Read::Scalar(PyString::new(py, &s).into_any()),
        })
    };
    // Put a finished value into the container on top of the stack.
    let put = |top: &Open<'_, '_>, key: Option<Bound<'_, PyString>>, v: Bound<'_, PyAny>| match key
    {
        Some(key) => top.out.cast::<PyDict>()?.set_item(key, v),
        None => top.out.cast::<PyList>()?.append(v),
    };

    let mut stack = match open(c)? {
        Read::Scalar(scalar) => return Ok(scalar.unbind()),
        Read::Container(out, items) => vec![Open {
            out,
            items,
            key: None,
        }],
    };
    while let Some(top) = stack.last_mut() {
        // The next child of the innermost open container and the key it goes
        // under (objects; a repeated key is skipped), or `None` when done.
        let next = match &mut top.items {
            Items::Object(items) => loop {
                let Some((raw_key, child)) = items.next() else {
                    break None;
                };
                let key = PyString::new(py, &doc.key_str(raw_key).map_err(err)?);
                if !top.out.cast::<PyDict>()?.contains(&key)? {
                    break Some((child, Some(key)));
                }
            },
            Items::Array(items) => items.next().map(|child| (child, None)),
        };
        match next {
            Some((child, key)) => match open(child)? {
                Read::Scalar(scalar) => put(top, key, scalar)?,
                Read::Container(out, items) => stack.push(Open { out, items, key }),
            },
            None => {
                let done = stack
                    .pop()
                    .expect("the loop runs while the stack is not empty");
                match stack.last() {
                    None => return Ok(done.out.unbind()),
                    Some(parent) => put(parent, done.key, done.out)?,
                }
            }
        }
    }
    unreachable!("the walk returns when it closes the outermost container")
}
