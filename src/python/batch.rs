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
use crate::doc::{Cursor, Doc};
use crate::error::{AccessError, JsonType};
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
    // Strings and short ints (most matches) straight from the input; the
    // rest through the general conversion.
    filled_list(
        py,
        found.len(),
        found.into_iter().map(|c| match matched(py, &doc, c) {
            Some(v) => Ok(v),
            None => convert::value(py, parsed, c),
        }),
    )
}

/// A match as a Python object when it is a string or a short int (most
/// matches), else `None` (the general conversion then runs, and reports
/// any error).
///
/// A string of a strict document without a backslash is made from its
/// bytes as they are (validated UTF-8 already): one pass tells whether it
/// has a backslash or a byte >= 0x80; an ASCII string is then one
/// allocation and a copy, another goes to CPython's UTF-8 decoder (which
/// checks the bytes again, so this is sound for any input) without the
/// core's unescaping pass before it.
#[inline(always)]
fn matched(py: Python<'_>, doc: &Doc<'_>, c: Cursor) -> Option<Py<PyAny>> {
    if doc.type_of(c) == JsonType::String && !doc.index().is_lazy() {
        let raw = doc.raw(c);
        if let Some(body) = raw.get(1..raw.len().saturating_sub(1)) {
            match plain_body(body) {
                #[cfg(not(feature = "abi3"))]
                Plain::Ascii => return ascii_str(py, body),
                Plain::Utf8 => return utf8_str(py, body),
                _ => {}
            }
        }
    }
    convert::quick(py, doc, c)
}

/// What a string body holds, as far as making a `str` of it goes.
enum Plain {
    /// ASCII without a backslash.
    Ascii,
    /// No backslash, some byte >= 0x80.
    Utf8,
    /// A backslash: it needs unescaping.
    Escaped,
}

/// [`Plain`] of `body`, eight bytes a step.
#[inline(always)]
fn plain_body(body: &[u8]) -> Plain {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = LO << 7;
    let mut high = 0;
    let mut backslash = 0;
    let mut look = |w: u64| {
        high |= w & HI;
        // A zero byte of `w ^ '\\'*LO` is a backslash of `w` (a borrow
        // only sets bits above a real zero byte, so "any" is exact).
        let x = w ^ (LO * u64::from(b'\\'));
        backslash |= x.wrapping_sub(LO) & !x & HI;
    };
    let word = |i: usize| u64::from_le_bytes(body[i..i + 8].try_into().expect("8 bytes"));
    let half = |i: usize| u32::from_le_bytes(body[i..i + 4].try_into().expect("4 bytes"));
    let n = body.len();
    match n {
        // Overlapping reads cover the tail (a byte seen twice changes no
        // answer): no byte loop past length 3, no copy.
        0..=3 => body.iter().for_each(|&b| look(u64::from(b))),
        4..=7 => look(u64::from(half(0)) | u64::from(half(n - 4)) << 32),
        _ => {
            let mut i = 0;
            while i + 8 < n {
                look(word(i));
                i += 8;
            }
            look(word(n - 8));
        }
    }
    if backslash != 0 {
        Plain::Escaped
    } else if high != 0 {
        Plain::Utf8
    } else {
        Plain::Ascii
    }
}

/// A `str` of ASCII bytes: one allocation and a copy. `None` when
/// CPython has no memory (the general path then reports it).
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn ascii_str(py: Python<'_>, body: &[u8]) -> Option<Py<PyAny>> {
    let n = pyo3::ffi::Py_ssize_t::try_from(body.len()).ok()?;
    // SAFETY: the thread is attached; `PyUnicode_New(n, 127)` makes a
    // compact ASCII string whose data holds `n` bytes (and the NUL after
    // them), filled here before anyone sees it; every byte of `body` is
    // ASCII (the caller checked). A NULL result's error is cleared.
    unsafe {
        let p = pyo3::ffi::PyUnicode_New(n, 127);
        if p.is_null() {
            pyo3::ffi::PyErr_Clear();
            return None;
        }
        let dst = pyo3::ffi::PyUnicode_DATA(p).cast::<u8>();
        std::ptr::copy_nonoverlapping(body.as_ptr(), dst, body.len());
        Some(Bound::from_owned_ptr(py, p).unbind())
    }
}

/// A `str` of UTF-8 bytes through CPython's decoder; `None` when it
/// fails (the general path then reports why).
#[inline(always)]
fn utf8_str(py: Python<'_>, body: &[u8]) -> Option<Py<PyAny>> {
    let n = pyo3::ffi::Py_ssize_t::try_from(body.len()).ok()?;
    // SAFETY: the thread is attached; `body` is `n` readable bytes for
    // the call. A NULL result's error is cleared.
    unsafe {
        let p = pyo3::ffi::PyUnicode_DecodeUTF8(body.as_ptr().cast(), n, std::ptr::null());
        if p.is_null() {
            pyo3::ffi::PyErr_Clear();
            return None;
        }
        Some(Bound::from_owned_ptr(py, p).unbind())
    }
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
