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
    let doc = parsed.doc();
    let found = path
        .find_all(&doc, at)
        .map_err(|e| access_error(py, e, &parsed.input, path))?;
    // Strings and short ints (most matches) straight from the input
    // (`convert::quick`, which makes a strict document's strings without
    // checking them again); the rest through the general conversion.
    filled_list(
        py,
        found.len(),
        found
            .into_iter()
            .map(|c| match convert::quick(py, &doc, c) {
                Some(v) => Ok(v),
                None => convert::value(py, parsed, c),
            }),
    )
}

/// A list of the `n` values `items` gives, made at its final size and
/// filled in place (no intermediate vector of objects).
fn filled_list(
    py: Python<'_>,
    n: usize,
    items: impl Iterator<Item = PyResult<Py<PyAny>>>,
) -> PyResult<Py<PyList>> {
    let len = isize::try_from(n).map_err(|_| pyo3::exceptions::PyMemoryError::new_err(()))?;
    // SAFETY: the thread is attached. `PyList_New(n)` makes a list of `n`
    // NULL slots (NULL result: its error is fetched), owned by `list` from
    // here on, so it is released on every return. Each slot is written
    // once with a new reference (`PyList_SET_ITEM` / `PyList_SetItem` steal it) before the
    // list is returned; a list dropped with NULL slots left (an error
    // part-way) is valid: its dealloc skips them.
    unsafe {
        let list = Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(len))?;
        let mut i = 0;
        for v in items {
            if i == len {
                break;
            }
            #[cfg(not(feature = "abi3"))]
            pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), i, v?.into_ptr());
            // The stable ABI has only the checked call (which cannot fail
            // here: `i` is in range).
            #[cfg(feature = "abi3")]
            pyo3::ffi::PyList_SetItem(list.as_ptr(), i, v?.into_ptr());
            i += 1;
        }
        if i != len {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "qjson: fewer values than matches",
            ));
        }
        Ok(list.cast_into_unchecked::<PyList>().unbind())
    }
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
