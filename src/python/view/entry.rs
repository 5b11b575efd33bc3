//! Raw entry points of the views' reads: `Object[key]`, `Object.get(key[,
//! default])`, `Array[i]` and `iter(Array)` (how and why:
//! `super::super::slots`).
//!
//! Each runs the common case itself: an exact `str` key (or `int` index)
//! into a Lazy view without patches (iteration: a Lazy array), read from
//! the index, the child view taken from (or put into) the view cache as
//! the PyO3 methods do. Iteration builds the list of every element straight
//! into a Python list (as the method does through a `Vec`) and returns
//! the list's iterator. Every
//! other case (Edited or patched views, other key types, slices, a missing
//! key for `[]`, a value that does not decode) goes to the method PyO3
//! made, which handles it as before.

use super::super::doc::{parse_bytes, Cursor};
use super::super::share::Share;
use super::super::slots::{self, exact_str, owned, run, FastCall, Original};
use super::{alloc, iter, lazy_child, ArrState, Array, ObjState, Object};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

static OBJECT_SUBSCRIPT: Original<ffi::binaryfunc> = Original::new();
static OBJECT_GET: Original<FastCall> = Original::new();
static ARRAY_SUBSCRIPT: Original<ffi::binaryfunc> = Original::new();
static ARRAY_ITER: Original<ffi::getiterfunc> = Original::new();
static ARRAY_LEN: Original<ffi::lenfunc> = Original::new();

/// Install the raw entry points on `Object` and `Array`.
pub(crate) fn install(py: Python<'_>) -> PyResult<()> {
    let object = py.get_type::<Object>();
    slots::replace_subscript(&object, object_subscript, &OBJECT_SUBSCRIPT)?;
    slots::replace_method(&object, c"get", object_get, &OBJECT_GET)?;
    let array = py.get_type::<Array>();
    slots::replace_subscript(&array, array_subscript, &ARRAY_SUBSCRIPT)?;
    slots::replace_iter(&array, array_iter, &ARRAY_ITER)?;
    slots::replace_length(&array, array_len, &ARRAY_LEN)?;
    iter::install(py)?;
    // One sample of each class (and of `Doc`), over a tiny document, to
    // measure the layout on (see `super::alloc`).
    let bytes = PyBytes::new(py, b"{}");
    if let Some(doc) = parse_bytes(bytes.as_any()) {
        let root = doc.parsed.doc().root();
        let o = Bound::new(py, Object::new(Share::new(py, &doc.parsed), root))?;
        alloc::install(py, &o);
        let a = Bound::new(py, Array::new(Share::new(py, &doc.parsed), root))?;
        alloc::install(py, &a);
        let c = Bound::new(py, Cursor::new(Share::new(py, &doc.parsed), root))?;
        alloc::install(py, &c);
        let d = Bound::new(py, doc)?;
        alloc::install(py, &d);
    }
    Ok(())
}

/// What a fast read found.
enum Read {
    /// The value (a new reference).
    Found(*mut ffi::PyObject),
    /// The object has no such key.
    Missing,
}

/// Member `key` of the Object `slf`, when both are the common case; `None`
/// hands the call to the original.
///
/// # Safety
///
/// The thread is attached; `slf` is a live `Object` and `key` a live
/// object, both borrowed for the call.
#[inline(always)]
unsafe fn object_read(
    py: Python<'_>,
    slf: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
) -> Option<Read> {
    // SAFETY: `key` is live for the call (caller).
    let key = unsafe { exact_str(key) }?;
    // SAFETY: attached; `slf` is a live Object, borrowed for the call
    // (caller): CPython calls Object's slots and methods on Objects only
    // (the type is not subclassable).
    let mut me = unsafe { alloc::borrow_mut::<Object>(slf) }?;
    let me = &mut *me;
    let ObjState::Lazy { views, patches, .. } = &mut me.state else {
        return None;
    };
    if !patches.is_empty() {
        return None;
    }
    match me.parsed.doc().field(me.at, key.as_bytes()) {
        Some(c) => owned(lazy_child(py, &me.parsed, views, c)).map(Read::Found),
        None => Some(Read::Missing),
    }
}

/// `Object[key]`.
unsafe extern "C" fn object_subscript(
    slf: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls the slot attached, with `slf` an Object and
    // `key` live for the call.
    let fast = unsafe {
        run(|py| match object_read(py, slf, key)? {
            Read::Found(v) => Some(v),
            Read::Missing => None,
        })
    };
    match fast {
        Some(v) => v,
        // SAFETY: the slot PyO3 made, called as CPython called this one.
        None => unsafe { OBJECT_SUBSCRIPT.get()(slf, key) },
    }
}

/// `Object.get(key, default=None)`, positional arguments.
unsafe extern "C" fn object_get(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    if kwnames.is_null() && (nargs == 1 || nargs == 2) {
        // SAFETY: CPython calls the method attached, with `slf` an Object
        // and `nargs` live arguments at `args`.
        let fast = unsafe {
            run(|py| match object_read(py, slf, *args)? {
                Read::Found(v) => Some(v),
                Read::Missing => {
                    let d = if nargs == 2 {
                        *args.add(1)
                    } else {
                        ffi::Py_None()
                    };
                    ffi::Py_INCREF(d);
                    Some(d)
                }
            })
        };
        if let Some(v) = fast {
            return v;
        }
    }
    // SAFETY: the method PyO3 made, called as CPython called this one.
    unsafe { OBJECT_GET.get()(slf, args, nargs, kwnames) }
}

/// Element `index` of the Array `slf` when both are the common case.
///
/// # Safety
///
/// As [`object_read`], for an Array.
#[inline(always)]
unsafe fn array_read(
    py: Python<'_>,
    slf: *mut ffi::PyObject,
    index: *mut ffi::PyObject,
) -> Option<*mut ffi::PyObject> {
    // SAFETY: `index` is live for the call (caller). An exact int converts
    // without raising; one beyond a C long reports `overflow` instead.
    let i = unsafe {
        if ffi::PyLong_CheckExact(index) == 0 {
            return None;
        }
        let mut overflow = 0;
        let i = ffi::PyLong_AsLongAndOverflow(index, &mut overflow);
        if overflow != 0 {
            return None;
        }
        i
    };
    // SAFETY: as in `object_read`: attached, a live Array (CPython calls
    // Array's slots on Arrays only), borrowed for the call.
    let mut me = unsafe { alloc::borrow_mut::<Array>(slf) }?;
    let me = &mut *me;
    let ArrState::Lazy { views } = &mut me.state else {
        return None;
    };
    let c = me.parsed.doc().element(me.at, i as i64)?;
    owned(lazy_child(py, &me.parsed, views, c))
}

/// `Array[index]`.
unsafe extern "C" fn array_subscript(
    slf: *mut ffi::PyObject,
    index: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls the slot attached, with `slf` an Array and
    // `index` live for the call.
    match unsafe { run(|py| array_read(py, slf, index)) } {
        Some(v) => v,
        // SAFETY: the slot PyO3 made, called as CPython called this one.
        None => unsafe { ARRAY_SUBSCRIPT.get()(slf, index) },
    }
}

/// A new iterator over the elements of the Array `slf`, when it is Lazy
/// (`super::iter`); `None` hands the call to the original.
///
/// # Safety
///
/// As [`array_read`].
#[inline(always)]
unsafe fn array_items(slf: *mut ffi::PyObject) -> Option<*mut ffi::PyObject> {
    // SAFETY: as in `array_read`.
    let me = unsafe { alloc::borrow_mut::<Array>(slf) }?;
    let ArrState::Lazy { .. } = &me.state else {
        return None;
    };
    let at = me.parsed.doc().array_items(me.at).ok()?.at();
    drop(me);
    // SAFETY: attached, `slf` a live Array (the caller's contract).
    unsafe { iter::new(slf, at) }
}

/// `iter(Array)`.
unsafe extern "C" fn array_iter(slf: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: CPython calls the slot attached, with `slf` a live Array.
    match unsafe { run(|_| array_items(slf)) } {
        Some(it) => it,
        // SAFETY: the slot PyO3 made, called as CPython called this one.
        None => unsafe { ARRAY_ITER.get()(slf) },
    }
}

/// `len(Array)`, of a Lazy array.
unsafe extern "C" fn array_len(slf: *mut ffi::PyObject) -> ffi::Py_ssize_t {
    // SAFETY: CPython calls the slot attached, with `slf` a live Array
    // (as in `array_read`).
    let n = unsafe { alloc::borrow_mut::<Array>(slf) }.and_then(|me| match &me.state {
        ArrState::Lazy { .. } => me.parsed.doc().len(me.at).ok(),
        _ => None,
    });
    match n {
        Some(n) => n as ffi::Py_ssize_t,
        // SAFETY: the slot PyO3 made, called as CPython called this one.
        None => unsafe { ARRAY_LEN.get()(slf) },
    }
}
