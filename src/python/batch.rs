//! Batch reads: `get_all` (every value a wildcard path matches) and
//! `get_many` (one value per path), for `Doc` and `Cursor`.
//!
//! Both build their list here, in one call: the core resolves the paths
//! (one walk of the document for `get_all`), then each value becomes what
//! `get` returns (a scalar, or a lazy view for a container) and goes into a
//! list of the exact size. Nothing returns to Python per element.

use super::convert;
use super::doc::Parsed;
use super::errors::access_error;
use super::path::{Path, PathArg};
use crate::doc::Cursor;
use crate::error::AccessError;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use std::sync::Arc;

/// Every value `path` matches from `at`, in document order.
pub(crate) fn get_all(
    py: Python<'_>,
    parsed: &Arc<Parsed>,
    at: Cursor,
    path: &PathArg<'_>,
) -> PyResult<Py<PyList>> {
    let found = path
        .find_all(&parsed.doc(), at)
        .map_err(|e| access_error(py, e, &parsed.input, path))?;
    let values = found
        .into_iter()
        .map(|c| convert::value(py, parsed, c))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, values)?.unbind())
}

/// One value per path of `paths` (an iterable of str / Path), from `at`; a
/// path naming nothing gives `default`, or raises PathError without one.
pub(crate) fn get_many(
    py: Python<'_>,
    parsed: &Arc<Parsed>,
    at: Cursor,
    paths: &Bound<'_, PyAny>,
    default: Option<Py<PyAny>>,
) -> PyResult<Py<PyList>> {
    if paths.is_instance_of::<PyString>()
        || paths.is_instance_of::<PyBytes>()
        || paths.is_instance_of::<Path>()
    {
        return Err(PyTypeError::new_err(
            "get_many takes an iterable of paths, not one path (use get)",
        ));
    }
    let doc = parsed.doc();
    let mut values = Vec::with_capacity(paths.len().unwrap_or(0));
    for item in paths.try_iter()? {
        let item = item?;
        let path = &PathArg::new(&item)?;
        values.push(match path.find(&doc, at) {
            Ok(c) => convert::value(py, parsed, c)?,
            Err(AccessError::NotFound { .. }) if default.is_some() => default
                .as_ref()
                .map_or_else(|| py.None(), |d| d.clone_ref(py)),
            Err(e) => return Err(access_error(py, e, &parsed.input, path)),
        });
    }
    Ok(PyList::new(py, values)?.unbind())
}
