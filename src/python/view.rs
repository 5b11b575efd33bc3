//! Read-only lazy views: `Object` (a Mapping) and `Array` (a Sequence).
//!
//! A view is a cursor into a parsed document plus a share of it; reading a
//! child decodes only that child. `__init__.py` registers the classes with
//! `collections.abc`. Equality and `repr` materialize the view.

use super::convert;
use super::doc::Parsed;
use super::errors::access_error;
use super::input::str_utf8;
use crate::doc::Cursor;
use crate::error::AccessError;
use pyo3::exceptions::{PyIndexError, PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PySlice, PyString, PyTuple};
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

/// A JSON object, read lazily from the document.
#[pyclass(module = "qjson", frozen)]
pub struct Object {
    parsed: Arc<Parsed>,
    at: Cursor,
    /// Number of distinct keys, counted on first `len()`.
    distinct: OnceLock<usize>,
}

/// A JSON array, read lazily from the document.
#[pyclass(module = "qjson", frozen)]
pub struct Array {
    parsed: Arc<Parsed>,
    at: Cursor,
}

impl Object {
    pub(crate) fn new(parsed: Arc<Parsed>, at: Cursor) -> Object {
        Object {
            parsed,
            at,
            distinct: OnceLock::new(),
        }
    }

    fn err(&self, py: Python<'_>, e: AccessError) -> PyErr {
        access_error(py, e, &self.parsed.input, "")
    }

    fn lookup(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<Cursor>> {
        let Ok(key) = key.cast::<PyString>() else {
            return Ok(None);
        };
        let key = str_utf8(key)?;
        Ok(self.parsed.doc().field(self.at, key.as_bytes()))
    }

    /// (key, value cursor) of every distinct key, in document order of
    /// first occurrence; a repeated key keeps its first value, as path reads do.
    fn members<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyString>, Cursor)>> {
        let doc = self.parsed.doc();
        let items = doc.object_items(self.at).map_err(|e| self.err(py, e))?;
        let mut out = Vec::with_capacity(items.size_hint().0);
        let mut seen: HashSet<Cow<'_, str>> = HashSet::with_capacity(items.size_hint().0);
        for (raw, c) in items {
            let key = doc.key_str(raw).map_err(|e| self.err(py, e))?;
            let py_key = PyString::new(py, &key);
            if seen.insert(key) {
                out.push((py_key, c));
            }
        }
        Ok(out)
    }
}

#[pymethods]
impl Object {
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        match self.lookup(key)? {
            Some(c) => convert::value(py, &self.parsed, c),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    #[pyo3(signature = (key, default = None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match self.lookup(key)? {
            Some(c) => convert::value(py, &self.parsed, c),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.lookup(key)?.is_some())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        if let Some(&n) = self.distinct.get() {
            return Ok(n);
        }
        let n = self.members(py)?.len();
        Ok(*self.distinct.get_or_init(|| n))
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.keys(py)?.into_any().try_iter().map(Bound::into_any)
    }

    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let keys: Vec<_> = self.members(py)?.into_iter().map(|(k, _)| k).collect();
        PyList::new(py, keys)
    }

    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut out = Vec::new();
        for (_, c) in self.members(py)? {
            out.push(convert::value(py, &self.parsed, c)?);
        }
        PyList::new(py, out)
    }

    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut out = Vec::new();
        for (k, c) in self.members(py)? {
            let v = convert::value(py, &self.parsed, c)?;
            out.push(PyTuple::new(py, [k.into_any().unbind(), v])?);
        }
        PyList::new(py, out)
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let mine = convert::materialize(py, &self.parsed, self.at)?;
        mine.bind(py).eq(plain(py, other)?)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mine = convert::materialize(py, &self.parsed, self.at)?;
        Ok(format!("qjson.Object({})", mine.bind(py).repr()?))
    }

    /// The original bytes of this object.
    fn raw<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, self.parsed.doc().raw(self.at))
    }
}

impl Array {
    pub(crate) fn new(parsed: Arc<Parsed>, at: Cursor) -> Array {
        Array { parsed, at }
    }

    fn len(&self) -> usize {
        self.parsed.doc().len(self.at).unwrap_or(0)
    }

    fn item(&self, py: Python<'_>, i: isize) -> PyResult<Py<PyAny>> {
        match self.parsed.doc().element(self.at, i as i64) {
            Some(c) => convert::value(py, &self.parsed, c),
            None => Err(PyIndexError::new_err("array index out of range")),
        }
    }

    fn all<'py>(&self, py: Python<'py>) -> PyResult<Vec<Py<PyAny>>> {
        let doc = self.parsed.doc();
        let items = doc
            .array_items(self.at)
            .map_err(|e| access_error(py, e, &self.parsed.input, ""))?;
        items.map(|c| convert::value(py, &self.parsed, c)).collect()
    }
}

#[pymethods]
impl Array {
    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = index.cast::<PySlice>() {
            let all = PyList::new(py, self.all(py)?)?;
            return Ok(all.as_any().get_item(slice)?.unbind());
        }
        let i: isize = index.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "array indices must be integers or slices, not {}",
                index
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        self.item(py, i)
    }

    fn __len__(&self) -> usize {
        self.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, self.all(py)?)?
            .into_any()
            .try_iter()
            .map(Bound::into_any)
    }

    fn __contains__(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        for v in self.all(py)? {
            if v.bind(py).eq(value)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn index(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        for (i, v) in self.all(py)?.into_iter().enumerate() {
            if v.bind(py).eq(value)? {
                return Ok(i);
            }
        }
        Err(PyValueError::new_err("value is not in the array"))
    }

    fn count(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        let mut n = 0;
        for v in self.all(py)? {
            if v.bind(py).eq(value)? {
                n += 1;
            }
        }
        Ok(n)
    }

    fn __reversed__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut all = self.all(py)?;
        all.reverse();
        PyList::new(py, all)?
            .into_any()
            .try_iter()
            .map(Bound::into_any)
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let mine = convert::materialize(py, &self.parsed, self.at)?;
        mine.bind(py).eq(plain(py, other)?)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mine = convert::materialize(py, &self.parsed, self.at)?;
        Ok(format!("qjson.Array({})", mine.bind(py).repr()?))
    }

    /// The original bytes of this array.
    fn raw<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, self.parsed.doc().raw(self.at))
    }
}

/// `other` with qjson views materialized (for equality).
fn plain<'py>(py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(o) = other.cast::<Object>() {
        let o = o.get();
        return Ok(convert::materialize(py, &o.parsed, o.at)?.into_bound(py));
    }
    if let Ok(a) = other.cast::<Array>() {
        let a = a.get();
        return Ok(convert::materialize(py, &a.parsed, a.at)?.into_bound(py));
    }
    Ok(other.clone())
}

/// `qjson.materialize(view)`: plain dicts and lists (other values are returned as they are).
#[pyfunction]
pub(crate) fn materialize<'py>(
    py: Python<'py>,
    view: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    plain(py, view)
}
