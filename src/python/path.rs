//! `qjson.Path` (a compiled path) and the path argument every getter takes.
//!
//! A `Path` wraps the core's [`Compiled`]: the text parsed once into owned
//! segments. It is frozen (immutable), so one object may be shared by every
//! thread and document; equal texts make equal, equally hashed paths.
//!
//! Getters take a [`PathArg`]: a `str` (parsed on each call, borrowing its
//! UTF-8 form) or a `Path` (its segments, no parse).

use super::errors::path_syntax_error;
use super::input::str_utf8;
use crate::doc::{Cursor, Doc};
use crate::error::AccessError;
use crate::path::Compiled;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

/// A compiled path: `qjson.Path("messages[*].content")`.
#[pyclass(module = "qjson", name = "Path", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub struct Path {
    pub(crate) compiled: Compiled,
}

#[pymethods]
impl Path {
    /// Parse `text` once (ValueError when it is malformed).
    #[new]
    fn new(text: &Bound<'_, PyString>) -> PyResult<Self> {
        let text = str_utf8(text)?;
        match Compiled::new(text) {
            Ok(compiled) => Ok(Path { compiled }),
            Err(AccessError::PathSyntax { at, reason }) => Err(path_syntax_error(text, at, reason)),
            Err(e) => unreachable!("parsing a path gives only syntax errors: {e:?}"),
        }
    }

    fn __str__(&self) -> &str {
        self.compiled.text()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let text = PyString::new(py, self.compiled.text());
        Ok(format!("qjson.Path({})", text.repr()?))
    }

    /// Pickling and copying: `Path(text)` again.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let text = PyString::new(py, slf.get().compiled.text());
        (slf.get_type(), (text,)).into_pyobject(py)
    }
}

/// The path argument of a getter: a `str` or a `Path`. It dereferences to
/// the path's text, for error messages.
pub(crate) enum PathArg<'a> {
    Text(&'a str),
    Compiled(&'a Compiled),
}

impl<'a> PathArg<'a> {
    /// `obj` as a path: a `str` (or subclass) or a `qjson.Path`; TypeError
    /// for anything else.
    #[inline]
    pub(crate) fn new(obj: &'a Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(PathArg::Text(str_utf8(s)?));
        }
        if let Ok(p) = obj.cast::<Path>() {
            return Ok(PathArg::Compiled(&p.get().compiled));
        }
        Err(not_a_path(obj))
    }

    /// `obj` as a path when it is an exact `str` or a `qjson.Path`, read
    /// without raising (`None` for anything else; see `super::slots`).
    ///
    /// # Safety
    ///
    /// The thread is attached and `obj` is a live object that outlives `'a`.
    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    pub(crate) unsafe fn fast(py: Python<'_>, obj: *mut pyo3::ffi::PyObject) -> Option<Self> {
        // SAFETY: `obj` is live for `'a` (caller).
        if let Some(t) = unsafe { super::slots::exact_str(obj) } {
            return Some(PathArg::Text(t));
        }
        // SAFETY: as above.
        let b = unsafe { pyo3::Borrowed::from_ptr(py, obj) };
        let p = b.cast::<Path>().ok()?;
        let compiled: *const Compiled = &p.get().compiled;
        // SAFETY: a `Path` is frozen: its `compiled` stays in place, unchanged,
        // as long as the object lives, which is `'a` (caller).
        Some(PathArg::Compiled(unsafe { &*compiled }))
    }

    /// The one value the path names from `at`.
    #[inline]
    pub(crate) fn find(&self, doc: &Doc<'_>, at: Cursor) -> Result<Cursor, AccessError> {
        match self {
            PathArg::Text(t) => doc.find(at, t),
            PathArg::Compiled(c) => doc.find_compiled(at, c),
        }
    }

    /// Every value the path matches from `at`, in document order.
    pub(crate) fn find_all(&self, doc: &Doc<'_>, at: Cursor) -> Result<Vec<Cursor>, AccessError> {
        match self {
            PathArg::Text(t) => doc.find_all(at, t),
            PathArg::Compiled(c) => doc.find_all_compiled(at, c),
        }
    }
}

impl std::ops::Deref for PathArg<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            PathArg::Text(t) => t,
            PathArg::Compiled(c) => c.text(),
        }
    }
}

#[cold]
fn not_a_path(obj: &Bound<'_, PyAny>) -> PyErr {
    let name = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string());
    PyTypeError::new_err(format!("a path must be a str or a qjson.Path, not {name}"))
}
