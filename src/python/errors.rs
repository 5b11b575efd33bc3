//! Turning core errors (kind + byte offset) into Python exceptions.
//!
//! The exception classes live in `qjson/_errors.py` (so `JSONDecodeError`
//! can subclass `json.JSONDecodeError`) and are imported on first use.

use super::input::{Input, Origin};
use crate::error::{AccessError, Error};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static PATH_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// 1-based line and column of byte `pos`, counted in bytes as
/// `json.JSONDecodeError` counts characters.
fn line_col(input: &[u8], pos: usize) -> (usize, usize) {
    let head = &input[..pos.min(input.len())];
    let lineno = memchr::memchr_iter(b'\n', head).count() + 1;
    let colno = match memchr::memrchr(b'\n', head) {
        Some(nl) => pos - nl,
        None => pos + 1,
    };
    (lineno, colno)
}

/// `qjson.JSONDecodeError` for a syntax or validation error in `input`.
#[cold]
#[inline(never)]
pub(crate) fn decode_error(py: Python<'_>, e: Error, input: &Input) -> PyErr {
    match input.origin() {
        Some((origin, buf)) => stream_error(py, e, input, origin, buf),
        None => decode_error_in(py, e, input.bytes(), input.object().bind(py)),
    }
}

/// [`decode_error`] in a document of a stream: the position counts in the
/// whole stream, and `doc_index` names the document.
#[cold]
#[inline(never)]
fn stream_error(py: Python<'_>, e: Error, input: &Input, origin: Origin, buf: &[u8]) -> PyErr {
    let pos = origin.at as usize + e.offset;
    let (lineno, colno) = match line_col(buf, origin.in_buf + e.offset) {
        (l, c) if origin.line == 0 => (l, c),
        (1, c) => (origin.line as usize, origin.col as usize + c - 1),
        (l, c) => (origin.line as usize + l - 1, c),
    };
    let make = || -> PyResult<PyErr> {
        let ty = DECODE_ERROR.import(py, "qjson._errors", "JSONDecodeError")?;
        let exc = ty.call1((e.kind.message(), input.object(), pos, lineno, colno))?;
        exc.setattr("doc_index", origin.doc_index)?;
        Ok(PyErr::from_value(exc))
    };
    make().unwrap_or_else(|err| err)
}

/// `qjson.JSONDecodeError` for an error at `e.offset` of `bytes`, the UTF-8
/// form of `doc` (the object the caller passed).
#[cold]
#[inline(never)]
pub(crate) fn decode_error_in(
    py: Python<'_>,
    e: Error,
    bytes: &[u8],
    doc: &Bound<'_, PyAny>,
) -> PyErr {
    let (lineno, colno) = line_col(bytes, e.offset);
    let make = || -> PyResult<PyErr> {
        let ty = DECODE_ERROR.import(py, "qjson._errors", "JSONDecodeError")?;
        let exc = ty.call1((e.kind.message(), doc, e.offset, lineno, colno))?;
        Ok(PyErr::from_value(exc))
    };
    make().unwrap_or_else(|err| err)
}

/// The exception for a failed read of `path`.
#[cold]
#[inline(never)]
pub(crate) fn access_error(py: Python<'_>, e: AccessError, input: &Input, path: &str) -> PyErr {
    match e {
        AccessError::Decode(e) => decode_error(py, e, input),
        AccessError::NotFound { at } => path_error(py, path, at),
        AccessError::PathSyntax { at, reason } => path_syntax_error(path, at, reason),
        AccessError::Type { expected, found } => PyTypeError::new_err(format!(
            "expected {expected} at path {path:?}, found {}",
            found.name()
        )),
    }
}

/// The `ValueError` for a malformed `path`.
#[cold]
#[inline(never)]
pub(crate) fn path_syntax_error(path: &str, at: usize, reason: &str) -> PyErr {
    PyValueError::new_err(format!("invalid path {path:?}: {reason} at offset {at}"))
}

#[cold]
#[inline(never)]
pub(crate) fn path_error(py: Python<'_>, path: &str, at: usize) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let ty = PATH_ERROR.import(py, "qjson._errors", "PathError")?;
        let msg = format!("path {path:?} not found (at path offset {at})");
        Ok(PyErr::from_value(ty.call1((msg, path, at))?))
    };
    make().unwrap_or_else(|err| err)
}

#[cfg(test)]
mod tests {
    use super::line_col;

    #[test]
    fn line_col_counts_like_json() {
        assert_eq!(line_col(b"abc", 0), (1, 1));
        assert_eq!(line_col(b"abc", 2), (1, 3));
        assert_eq!(line_col(b"a\nbc", 2), (2, 1));
        assert_eq!(line_col(b"a\nbc", 3), (2, 2));
        assert_eq!(line_col(b"a\n", 5), (2, 4));
    }
}
