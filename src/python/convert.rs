//! Core values to Python objects.
//!
//! Scalars become `str`, `int` (exact at any size), `float`, `bool` or
//! `None`; containers become lazy views ([`super::view`]) that share the
//! parsed document. `materialize` builds plain dicts and lists instead.

use super::doc::Parsed;
use super::errors::access_error;
#[cfg(not(feature = "abi3"))]
use super::loads::objects::{
    census, new_str_census, new_str_counted, new_str_escaped, new_str_utf8, short_ascii,
};
use super::share::Share;
use super::view::{self, Array, Object};
use crate::decode::string::unescape_validated;
use crate::decode::Number;
use crate::doc::{ArrayItems, Cursor, Doc, ObjectItems, Quick, Value};
use crate::error::AccessError;
use crate::index::Index;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString};
use std::cell::Cell;
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

/// A `str` holding `s`. Version-specific builds write it themselves
/// ([`new_str_utf8`], shared with `loads`: a census of the characters and
/// their widest, then a copy or a decode into a `str` of the right width),
/// which skips CPython's UTF-8 decoder (`s` is a `&str`: valid already);
/// the stable ABI goes through `PyString::new`.
#[inline]
pub(crate) fn new_str<'py>(py: Python<'py>, s: &str) -> Bound<'py, PyString> {
    #[cfg(not(feature = "abi3"))]
    {
        // SAFETY: the interpreter is attached; `s` is valid UTF-8. A null
        // result (no memory) clears its error and falls through to
        // `PyString::new`, which reports a failure its own way.
        unsafe {
            let p = new_str_utf8(s.as_bytes());
            if !p.is_null() {
                return Bound::from_owned_ptr(py, p).cast_into_unchecked();
            }
            ffi::PyErr_Clear();
        }
    }
    PyString::new(py, s)
}

/// The `str` of the string at `c` when its document was strictly
/// validated (not lazy), made from its body in one or two passes; `None`
/// for any other value, a lazy document (its reads validate: the general
/// path), and when CPython has no memory (the general path then reports
/// it).
///
/// Strict validation checked the whole input's UTF-8, every escape and the
/// pairing of surrogate escapes, so nothing is checked again:
///
/// - A document without a backslash anywhere (`Index::has_escapes`) needs
///   no search for one: an all-ASCII input's body is copied into a new
///   ASCII `str` as it is; another goes to [`new_str_utf8`] (a short ASCII
///   body copied at once, any other counted: length and widest character,
///   then copied or decoded into a `str` of that width).
/// - Otherwise a short ASCII body without a backslash is copied at once
///   ([`short_ascii`]); any other gets the census, which also looks for a
///   backslash in the same words ([`census`]): a body without one goes on
///   as above; an ASCII one with one is unescaped into a per-thread buffer
///   and copied ([`escaped_ascii_str`]); any other is made by
///   [`new_str_escaped`] (the census of the unescaped text follows from the
///   raw one and the escapes, and the `str` is written once, with no
///   unescaped copy).
#[inline(always)]
pub(crate) fn validated_str<'py>(
    py: Python<'py>,
    doc: &Doc<'_>,
    c: Cursor,
) -> Option<Bound<'py, PyString>> {
    let index = doc.index();
    if index.is_lazy() || !doc.is_string(c) {
        return None;
    }
    let raw = doc.raw(c);
    let body = raw.get(1..raw.len().checked_sub(1)?)?;
    owned_str(py, body_str(body, index))
}

/// The `str` of the key body `raw_key` (from [`Doc::object_items`]) as
/// [`validated_str`] makes a string: `None` in a lazy document and when
/// CPython has no memory.
#[inline(always)]
fn validated_key<'py>(
    py: Python<'py>,
    doc: &Doc<'_>,
    raw_key: &[u8],
) -> Option<Bound<'py, PyString>> {
    let index = doc.index();
    if index.is_lazy() {
        return None;
    }
    owned_str(py, body_str(raw_key, index))
}

/// The `str` [`body_str`] made (`p`, a new reference), or `None` when it
/// is null: its error is dropped, and the caller's general path runs and
/// reports its own.
#[inline(always)]
fn owned_str(py: Python<'_>, p: *mut ffi::PyObject) -> Option<Bound<'_, PyString>> {
    if p.is_null() {
        // SAFETY: the interpreter is attached (`py`).
        unsafe { ffi::PyErr_Clear() };
        return None;
    }
    // SAFETY: `p` is a new reference to a `str`.
    Some(unsafe { Bound::from_owned_ptr(py, p).cast_into_unchecked() })
}

/// The `str` of `body`, a string body of the strictly validated document
/// `index` indexes (see [`validated_str`]): a new reference, or null with
/// an exception set. The attached interpreter is the caller's.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn body_str(body: &[u8], index: &Index) -> *mut ffi::PyObject {
    // (Below: the caller's interpreter is attached; the body of a strictly
    // validated document is valid UTF-8, every escape in it well formed.)
    if !index.has_escapes() {
        if !index.non_ascii {
            // SAFETY: as above; an all-ASCII input's body is ASCII, so its
            // census is its length and 0x7F.
            return unsafe { new_str_counted(body, body.len(), 0x7F) };
        }
        // SAFETY: as above.
        return unsafe { new_str_utf8(body) };
    }
    // SAFETY: as above.
    if let Some(p) = unsafe { short_ascii::<true>(body) } {
        return p;
    }
    escaped_doc_str(body)
}

/// [`body_str`] of a body of a document with escapes that is not short
/// ASCII without a backslash: the [`census`] (which also finds a
/// backslash), then the copy or the unescaping. Out of line: the short
/// bodies' path stays small.
#[cfg(not(feature = "abi3"))]
#[inline(never)]
fn escaped_doc_str(body: &[u8]) -> *mut ffi::PyObject {
    // (Below: the caller's interpreter is attached; the body of a strictly
    // validated document is valid UTF-8, every escape in it well formed.)
    match census::<true>(body) {
        // SAFETY: as above; the census is the body's.
        (chars, maxchar, false) => unsafe { new_str_counted(body, chars, maxchar) },
        // An ASCII body: unescaped into the thread's buffer (one SWAR
        // pass), whose text is ASCII unless a `\u` escape made it wider.
        (_, 0x7F, true) => escaped_ascii_str(body),
        // SAFETY: as above; the census is the body's bytes'.
        (chars, maxchar, true) => unsafe { new_str_escaped(body, chars, maxchar) },
    }
}

/// The `str` of a validated ASCII string body holding a backslash:
/// unescaped into the thread's [`SCRATCH`] buffer ([`unescape_validated`]),
/// then copied into an ASCII `str` when the text is ASCII (one check, no
/// census), else made by [`new_str_census`]. Out of line: the plain bodies'
/// path stays small. (Measured cheaper than [`new_str_escaped`] for these:
/// URLs with `\/`, HTML with `\"`, text with `\n`.)
#[cfg(not(feature = "abi3"))]
#[inline(never)]
fn escaped_ascii_str(body: &[u8]) -> *mut ffi::PyObject {
    SCRATCH.with(|cell| {
        let mut buf = cell.take();
        let text = unescape_validated(body, &mut buf);
        // SAFETY: the caller's interpreter is attached; a validated body
        // unescapes to valid UTF-8.
        let p = unsafe {
            if text.is_ascii() {
                new_str_counted(text, text.len(), 0x7F)
            } else {
                new_str_census(text)
            }
        };
        cell.set(buf);
        p
    })
}

/// [`body_str`] in the stable ABI: a body without a backslash goes to
/// CPython's decoder as it is, another after its unescaping.
#[cfg(feature = "abi3")]
#[inline(always)]
fn body_str(body: &[u8], index: &Index) -> *mut ffi::PyObject {
    let decode = |t: &[u8]| {
        // SAFETY: the caller's interpreter is attached; `t` is a live
        // slice of its length.
        unsafe {
            ffi::PyUnicode_DecodeUTF8(
                t.as_ptr().cast(),
                t.len() as ffi::Py_ssize_t,
                std::ptr::null(),
            )
        }
    };
    if !index.has_escapes() || !body.contains(&b'\\') {
        return decode(body);
    }
    SCRATCH.with(|cell| {
        let mut buf = cell.take();
        let p = decode(unescape_validated(body, &mut buf));
        cell.set(buf);
        p
    })
}

thread_local! {
    /// The buffer string bodies with escapes are unescaped into, kept by
    /// each thread for its next one.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The Python value at `c` when it is a string of a strictly validated
/// document ([`validated_str`]), another string [`Doc::quick`] reads, or
/// a number [`Doc::quick_number`] reads (ints of up to 19 digits, plain
/// decimals):
/// made straight from the input, without the
/// [`Value`] and the dispatch of [`value`]. `None` for
/// every other value (and when CPython has no memory: the general path
/// then reports it).
///
/// The value's first byte is classified once, here: a number goes
/// straight to the number readers and a container or literal answers
/// `None` at once (the readers below, inlined, see the byte already
/// known and test nothing again).
#[inline(always)]
pub(crate) fn quick(py: Python<'_>, doc: &Doc<'_>, c: Cursor) -> Option<Py<PyAny>> {
    let p = match *doc.input().get(c.start as usize)? {
        b'"' => {
            if let Some(s) = validated_str(py, doc, c) {
                return Some(s.into_any().unbind());
            }
            return quick_str(py, doc, c);
        }
        b'-' | b'0'..=b'9' => match doc.quick_number(c) {
            // SAFETY: the interpreter is attached (`py`).
            Some(Number::Int(v)) => unsafe { ffi::PyLong_FromLongLong(v) },
            // A plain decimal (`"temperature": 0.7`).
            // SAFETY: as above.
            Some(Number::Float(f)) => unsafe { ffi::PyFloat_FromDouble(f) },
            Some(Number::BigInt(_)) | None => return None,
        },
        _ => return None,
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

/// [`quick`] of a string [`validated_str`] leaves (a lazy document's):
/// [`Doc::quick`]'s decoded text. Out of line: the strict documents'
/// path stays small.
#[inline(never)]
fn quick_str(py: Python<'_>, doc: &Doc<'_>, c: Cursor) -> Option<Py<PyAny>> {
    match doc.quick(c)? {
        Quick::Str(s) => Some(new_str(py, &s).into_any().unbind()),
        Quick::Int(_) => None,
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
    if let Some(s) = validated_str(py, &doc, c) {
        return Ok(s.into_any().unbind());
    }
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
        Value::Object(c) => view::make(py, Object::new(Share::new(py, parsed), c))?,
        Value::Array(c) => view::make(py, Array::new(Share::new(py, parsed), c))?,
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
        if let Some(s) = validated_str(py, &doc, c) {
            return Ok(Read::Scalar(s.into_any()));
        }
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
                let key = match validated_key(py, &doc, raw_key) {
                    Some(key) => key,
                    None => new_str(py, &doc.key_str(raw_key).map_err(err)?),
                };
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
