//! Raw entry points of `qjson.parse` and `qjson.decode` and of the
//! getters of `Doc` and `Cursor` (how and why: `super::super::slots`):
//! `get`, `get_str`, `get_int`, `get_float`, `get_bool`, `open`, `len`,
//! `get_all` and `get_many`, called with positional arguments.
//!
//! `parse(data)` and `decode(data)` with one positional argument run the
//! common case themselves: an exact `bytes` object below the size whose
//! scan releases the GIL, valid JSON ([`super::parse_bytes`]). That skips
//! PyO3's trampoline and its generic extraction of the keyword-only
//! arguments, a fixed cost of every small document. Other inputs, keywords
//! and invalid JSON go to the functions PyO3 made (invalid JSON is then
//! scanned again, to report the error: errors are the rare case).
//!
//! Each runs the common case itself: an exact `str` path (or a
//! `qjson.Path`) that names a value of the type asked for, which becomes a
//! Python object straight from the core's value. Every other case
//! (keywords, other argument types, a missing path without a default, a
//! type mismatch, an integer beyond i64, a value that does not decode)
//! goes to the method PyO3 made, which handles it (and reports it) as
//! before.

use super::super::batch;
use super::super::convert;
use super::super::path::PathArg;
use super::super::share::Share;
use super::super::slots::{self, owned, run, FastCall, Original};
use super::super::view::{self, Array, Object};
use super::{parse_bytes, Cursor, Doc, Parsed};
use crate::decode::Number;
use crate::doc::{Cursor as CoreCursor, Doc as CoreDoc, Quick, Value};
use crate::error::{AccessError, JsonType};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyModule, PyTuple};
use pyo3::PyClass;
use std::sync::Arc;

/// The functions PyO3 made for one class's getters.
struct Originals {
    get: Original<FastCall>,
    get_str: Original<FastCall>,
    get_int: Original<FastCall>,
    get_float: Original<FastCall>,
    get_bool: Original<FastCall>,
    open: Original<FastCall>,
    len: Original<FastCall>,
    get_all: Original<FastCall>,
    get_many: Original<FastCall>,
}

impl Originals {
    const fn new() -> Self {
        Originals {
            get: Original::new(),
            get_str: Original::new(),
            get_int: Original::new(),
            get_float: Original::new(),
            get_bool: Original::new(),
            open: Original::new(),
            len: Original::new(),
            get_all: Original::new(),
            get_many: Original::new(),
        }
    }
}

static PARSE: Original<FastCall> = Original::new();
static DECODE: Original<FastCall> = Original::new();
static DOC: Originals = Originals::new();
static CURSOR: Originals = Originals::new();

/// A class with getters: `Doc` (paths from the root) or `Cursor`.
trait Base: PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Sync {
    fn base(&self) -> (&Arc<Parsed>, CoreCursor);
    fn originals() -> &'static Originals;
}

impl Base for Doc {
    #[inline(always)]
    fn base(&self) -> (&Arc<Parsed>, CoreCursor) {
        (&self.parsed, self.root)
    }
    fn originals() -> &'static Originals {
        &DOC
    }
}

impl Base for Cursor {
    #[inline(always)]
    fn base(&self) -> (&Arc<Parsed>, CoreCursor) {
        (&self.parsed, self.at)
    }
    fn originals() -> &'static Originals {
        &CURSOR
    }
}

/// Install the raw `parse` and `decode` of module `m` and the raw getters
/// on `Doc` and `Cursor`.
pub(crate) fn install(m: &Bound<'_, PyModule>) -> PyResult<()> {
    slots::replace_function(m, c"parse", parse, &PARSE)?;
    slots::replace_function(m, c"decode", decode, &DECODE)?;
    install_on::<Doc>(m.py())?;
    install_on::<Cursor>(m.py())
}

/// `qjson.parse(data)`.
unsafe extern "C" fn parse(
    module: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    if kwnames.is_null() && nargs == 1 {
        let read = |py: Python<'_>| {
            // SAFETY: CPython calls the function with `nargs` (one) live
            // arguments at `args`, borrowed for the call.
            let data = unsafe { pyo3::Borrowed::from_ptr(py, *args) };
            // A failed allocation drops the document inside `make`: its
            // input's reference is then released by PyO3's pool later.
            owned(super::super::view::make(py, parse_bytes(&data)?))
        };
        // SAFETY: CPython calls the function attached.
        if let Some(v) = unsafe { run(read) } {
            return v;
        }
    }
    // SAFETY: the function PyO3 made, called as CPython called this one.
    unsafe { PARSE.get()(module, args, nargs, kwnames) }
}

/// `qjson.decode(data)`.
unsafe extern "C" fn decode(
    module: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    if kwnames.is_null() && nargs == 1 {
        let read = |py: Python<'_>| {
            // SAFETY: as in `parse`.
            let data = unsafe { pyo3::Borrowed::from_ptr(py, *args) };
            let Doc { parsed, root, .. } = parse_bytes(&data)?;
            // A container root (nearly every document) becomes its view
            // straight away, taking the document's share.
            match parsed.doc().type_of(root) {
                JsonType::Object => {
                    return owned(view::make(
                        py,
                        Object::new(Share::from_arc(py, parsed), root),
                    ))
                }
                JsonType::Array => {
                    return owned(view::make(
                        py,
                        Array::new(Share::from_arc(py, parsed), root),
                    ))
                }
                _ => {}
            }
            let v = convert::value(py, &parsed, root);
            // A scalar root leaves the document's last share here: its
            // input's reference must be released now, not by PyO3's pool.
            if Arc::strong_count(&parsed) == 1 {
                slots::release(parsed);
            }
            owned(v)
        };
        // SAFETY: CPython calls the function attached.
        if let Some(v) = unsafe { run(read) } {
            return v;
        }
    }
    // SAFETY: the function PyO3 made, called as CPython called this one.
    unsafe { DECODE.get()(module, args, nargs, kwnames) }
}

fn install_on<T: Base + pyo3::type_object::PyTypeInfo>(py: Python<'_>) -> PyResult<()> {
    let ty = py.get_type::<T>();
    let o = T::originals();
    slots::replace_method(&ty, c"get", get::<T>, &o.get)?;
    slots::replace_method(&ty, c"get_str", get_str::<T>, &o.get_str)?;
    slots::replace_method(&ty, c"get_int", get_int::<T>, &o.get_int)?;
    slots::replace_method(&ty, c"get_float", get_float::<T>, &o.get_float)?;
    slots::replace_method(&ty, c"get_bool", get_bool::<T>, &o.get_bool)?;
    slots::replace_method(&ty, c"open", open::<T>, &o.open)?;
    slots::replace_method(&ty, c"len", len::<T>, &o.len)?;
    slots::replace_method(&ty, c"get_all", get_all::<T>, &o.get_all)?;
    slots::replace_method(&ty, c"get_many", get_many::<T>, &o.get_many)?;
    Ok(())
}

/// Where a getter's path led in the common case: the value, or `Missing`
/// (`NotFound`: nothing there, or a branch of the wrong type).
struct Missing;

/// Where a getter's path leads from its base, in the common case: `each`
/// gets the document and the value (or `Missing`). A path of another
/// shape than [`CoreDoc::find_simple`] reads is resolved by the parser here; any
/// other error (a malformed path, a wildcard) is left to the original.
///
/// # Safety
///
/// The thread is attached; `slf` is a live `T` and `path` a live object,
/// both borrowed for the call.
#[inline(always)]
unsafe fn find<'py, T: Base>(
    py: Python<'py>,
    slf: *mut ffi::PyObject,
    path: *mut ffi::PyObject,
    each: impl FnOnce(
        &Arc<Parsed>,
        &CoreDoc<'_>,
        Result<CoreCursor, Missing>,
    ) -> Option<*mut ffi::PyObject>,
) -> Option<*mut ffi::PyObject> {
    // SAFETY: `path` is live for the call (caller).
    let path = unsafe { PathArg::fast(py, path) }?;
    // SAFETY: `slf` is a live `T`, borrowed for the call: CPython calls a
    // type's methods on its instances only (`Doc` and `Cursor` are not
    // subclassable).
    let slf = unsafe { pyo3::Borrowed::from_ptr(py, slf).cast_unchecked::<T>() };
    let (parsed, at) = slf.get().base();
    let doc = parsed.doc();
    let found = locate(&doc, at, &path)?;
    each(parsed, &doc, found)
}

/// Where `path` leads from `at` in the common case (see [`find`]): simple
/// paths straight from their bytes, the others through the parser or their
/// compiled segments; `None` for errors other than `NotFound`.
#[inline(always)]
fn locate(
    doc: &CoreDoc<'_>,
    at: CoreCursor,
    path: &PathArg<'_>,
) -> Option<Result<CoreCursor, Missing>> {
    match *path {
        PathArg::Text(t) => match doc.find_simple(at, t.as_bytes()) {
            Some(found) => Some(found.map_err(|_| Missing)),
            None => missing(doc.find_parsed(at, t)),
        },
        PathArg::Compiled(c) => missing(doc.find_compiled(at, c)),
    }
}

/// A general read's answer for [`locate`]: `None` for errors other than
/// `NotFound`.
#[inline]
fn missing(r: Result<CoreCursor, AccessError>) -> Option<Result<CoreCursor, Missing>> {
    match r {
        Ok(c) => Some(Ok(c)),
        Err(AccessError::NotFound { .. }) => Some(Err(Missing)),
        Err(_) => None,
    }
}

/// The scaffolding of every raw vectorcall method here:
/// `$name::<T>(slf, args, nargs, kwnames)` runs `$read` (with `$py`
/// attached) when the call has no keywords and `$when` holds, and returns
/// its value when it gives one; otherwise, and for every case `$read`
/// declines (`None`: another argument type, an error to report), it calls
/// `$fallback(slf, args, nargs, kwnames)`: the method PyO3 made, which
/// reports errors, or a general path of the same signature.
macro_rules! fast_or_original {
    ($(#[$attr:meta])* $name:ident, |$py:ident, $slf:ident, $args:ident, $nargs:ident|
     when $when:expr => $read:expr, else $fallback:expr) => {
        $(#[$attr])*
        unsafe extern "C" fn $name<T: Base>(
            $slf: *mut ffi::PyObject,
            $args: *const *mut ffi::PyObject,
            $nargs: ffi::Py_ssize_t,
            kwnames: *mut ffi::PyObject,
        ) -> *mut ffi::PyObject {
            if kwnames.is_null() && $when {
                let read = |$py: Python<'_>| -> Option<*mut ffi::PyObject> { $read };
                // SAFETY: CPython calls the method attached.
                if let Some(v) = unsafe { run(read) } {
                    return v;
                }
            }
            // SAFETY: the fallback has this method's signature and
            // contract, called as CPython called this one.
            unsafe { $fallback($slf, $args, $nargs, kwnames) }
        }
    };
}

/// One generated raw getter ([`fast_or_original`]): runs
/// `$body(py, parsed, doc, found, args, nargs)` when the call has one or
/// (with `$max == 2`) two positional arguments, else the original.
/// (`$name = $orig`: a function named `$name` whose original is
/// `$orig`'s, with the attributes given.)
macro_rules! getter {
    ($name:ident, $max:literal, |$py:ident, $parsed:ident, $doc:ident, $found:ident, $args:ident, $nargs:ident| $body:expr) => {
        getter!($name = $name, $max, |$py, $parsed, $doc, $found, $args, $nargs| $body);
    };
    ($(#[$attr:meta])* $name:ident = $orig:ident, $max:literal, |$py:ident, $parsed:ident, $doc:ident, $found:ident, $args:ident, $nargs:ident| $body:expr) => {
        fast_or_original!(
            $(#[$attr])* $name,
            |$py, slf, $args, $nargs| when (1..=$max).contains(&$nargs) => {
                let each = |$parsed: &Arc<Parsed>,
                            $doc: &CoreDoc<'_>,
                            $found: Result<CoreCursor, Missing>| $body;
                // SAFETY: CPython calls the method with `slf` a `T` and
                // `nargs` (at least one) live arguments at `args`.
                let path = unsafe { *$args };
                // SAFETY: as above; the thread is attached (`run`).
                unsafe { find::<T>($py, slf, path, each) }
            },
            else T::originals().$orig.get()
        );
    };
}

getter!(get, 2, |py, parsed, doc, found, args, nargs| match found {
    Ok(c) => match doc.type_of(c) {
        JsonType::Object => owned(view::new_view(py, parsed, c, true)),
        JsonType::Array => owned(view::new_view(py, parsed, c, false)),
        _ => match convert::quick(py, doc, c) {
            Some(v) => Some(v.into_ptr()),
            None => owned(convert::value(py, parsed, c)),
        },
    },
    Err(Missing) if nargs == 2 => {
        // SAFETY: the second argument is live for the call; the new
        // reference is the result.
        unsafe {
            let d = *args.add(1);
            ffi::Py_INCREF(d);
            Some(d)
        }
    }
    Err(Missing) => None,
});

getter!(get_str, 1, |py, _parsed, doc, found, _args, _nargs| {
    let c = found.ok()?;
    if let Some(s) = convert::validated_str(py, doc, c) {
        return Some(s.into_ptr());
    }
    other_str(py, doc, c)
});

/// `get_str` of a string [`convert::validated_str`] does not make (in a
/// lazy document), or of another value (`None`): out of line, so that the
/// common getter stays small.
#[inline(never)]
fn other_str(py: Python<'_>, doc: &CoreDoc<'_>, c: CoreCursor) -> Option<*mut ffi::PyObject> {
    if let Some(Quick::Str(s)) = doc.quick(c) {
        return Some(convert::new_str(py, &s).into_ptr());
    }
    match doc.value(c) {
        Ok(Value::String(s)) => Some(convert::new_str(py, &s).into_ptr()),
        _ => None,
    }
}

/// The read of a getter in a loop, `cur.get_int("id")` again and again:
/// `path` an exact compact-ASCII str naming one short key whose member the
/// document's memo holds ([`CoreDoc::memo_key`]), `each` given the
/// document and the value. `None` for every other call (then the getter's
/// general path runs). Inlined ahead of that path, which is out of line:
/// the hit keeps its few words in registers, with no frame for the
/// general path's state.
///
/// # Safety
///
/// As [`find`].
#[inline(always)]
unsafe fn memo_read<T: Base>(
    py: Python<'_>,
    slf: *mut ffi::PyObject,
    path: *mut ffi::PyObject,
    each: impl FnOnce(&CoreDoc<'_>, CoreCursor) -> Option<*mut ffi::PyObject>,
) -> Option<*mut ffi::PyObject> {
    // SAFETY: `path` is live for the call (caller).
    if unsafe { ffi::PyUnicode_CheckExact(path) } == 0 {
        return None;
    }
    // SAFETY: a live exact str, borrowed for the call.
    let key = unsafe { crate::python::input::compact_ascii(path) }?;
    // SAFETY: as in `find`.
    let slf = unsafe { pyo3::Borrowed::from_ptr(py, slf).cast_unchecked::<T>() };
    let (parsed, at) = slf.get().base();
    let doc = parsed.doc();
    let c = doc.memo_key(at, key.as_bytes())?;
    each(&doc, c)
}

fast_or_original!(
    /// `get_int`: [`memo_read`] of an integer [`CoreDoc::span_int`] reads,
    /// else the general getter ([`get_int_general`]).
    get_int, |py, slf, args, nargs| when nargs == 1 => {
        // SAFETY: CPython calls the method with `slf` a `T` and one live
        // argument at `args`; attached (`run`).
        unsafe {
            memo_read::<T>(py, slf, *args, |doc, c| {
                let v = doc.span_int(c)?;
                // SAFETY: attached; a NULL result has set MemoryError.
                Some(ffi::PyLong_FromLongLong(v))
            })
        }
    }, else get_int_general::<T>
);

getter!(
    #[inline(never)]
    get_int_general = get_int,
    1,
    |py, _parsed, doc, found, _args, _nargs| {
        let _ = py;
        let c = found.ok()?;
        let v = match doc.span_int(c) {
            Some(v) => v,
            None => other_int(doc, c)?,
        };
        // SAFETY: the thread is attached; a NULL result has set MemoryError,
        // which the caller sees.
        Some(unsafe { ffi::PyLong_FromLongLong(v) })
    }
);

/// `get_int` of an integer [`CoreDoc::span_int`] does not read (more than
/// 16 digits, whitespace after it), or of another value (`None`): out of
/// line, so that the common getter stays small.
#[inline(never)]
fn other_int(doc: &CoreDoc<'_>, c: CoreCursor) -> Option<i64> {
    match doc.number_at(c) {
        Ok(Number::Int(v)) => Some(v),
        _ => None,
    }
}

getter!(get_float, 1, |py, _parsed, doc, found, _args, _nargs| {
    let _ = py;
    let c = found.ok()?;
    // A plain decimal (`0.7`, `12`) in one read of its bytes; the rest
    // through the general number path.
    let v = match doc.quick_decimal(c) {
        Some(Number::Float(v)) => v,
        Some(Number::Int(v)) => v as f64,
        _ => match doc.number_at(c) {
            Ok(Number::Int(v)) => v as f64,
            Ok(Number::Float(v)) => v,
            _ => return None,
        },
    };
    // SAFETY: the thread is attached; a NULL result has set MemoryError.
    Some(unsafe { ffi::PyFloat_FromDouble(v) })
});

getter!(get_bool, 1, |py, _parsed, doc, found, _args, _nargs| {
    let _ = py;
    match doc.value(found.ok()?) {
        // SAFETY: the thread is attached; the new reference is the result.
        Ok(Value::Bool(b)) => Some(unsafe {
            let v = if b { ffi::Py_True() } else { ffi::Py_False() };
            ffi::Py_INCREF(v);
            v
        }),
        _ => None,
    }
});

getter!(open, 1, |py, parsed, _doc, found, _args, _nargs| {
    let at = found.ok()?;
    owned(super::super::view::make(
        py,
        Cursor::new(Share::new(py, parsed), at),
    ))
});

fast_or_original!(
    /// `len([path])`, positional arguments: the number of children of the
    /// container at `path` (or at the base without one).
    len, |py, slf, args, nargs| when nargs <= 1 => {
        // SAFETY: as in `find`: `slf` is a live `T`, borrowed for the
        // call.
        let slf = unsafe { pyo3::Borrowed::from_ptr(py, slf).cast_unchecked::<T>() };
        let (parsed, at) = slf.get().base();
        let doc = parsed.doc();
        let c = if nargs == 0 {
            at
        } else {
            // SAFETY: CPython calls the method with `nargs` (one) live
            // arguments at `args`, borrowed for the call; attached.
            let path = unsafe { PathArg::fast(py, *args) }?;
            locate(&doc, at, &path)?.ok()?
        };
        let n = doc.len(c).ok()?;
        // SAFETY: attached. A NULL result (no memory) has set an
        // error, cleared here (the original then reports its own).
        unsafe {
            let v = ffi::PyLong_FromSize_t(n);
            if v.is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            Some(v)
        }
    }, else T::originals().len.get()
);

fast_or_original!(
    /// `get_all(path)`, one positional argument (a str or a `Path`): the list
    /// [`batch::get_all`] makes. An error (a malformed path, an undecodable
    /// key) goes to the original, which reports it.
    get_all, |py, slf, args, nargs| when nargs == 1 => {
        // SAFETY: CPython calls the method with `nargs` (one) live
        // arguments at `args`, borrowed for the call; attached.
        let path = unsafe { PathArg::fast(py, *args) }?;
        // SAFETY: as in `find`: `slf` is a live `T`, borrowed for the
        // call.
        let slf = unsafe { pyo3::Borrowed::from_ptr(py, slf).cast_unchecked::<T>() };
        let (parsed, at) = slf.get().base();
        owned(batch::get_all(py, parsed, at, &path))
    }, else T::originals().get_all.get()
);

fast_or_original!(
    /// `get_many(paths[, default])`, positional arguments, `paths` an exact
    /// list or tuple of exact `str`s and `Path`s: one value per path, as `get`
    /// gives it, in a list made at its final size. Every other case (another
    /// iterable, which the original consumes once; a path that names nothing
    /// without a default; a malformed path; a value that does not decode) goes
    /// to the original, which reports it: a list or tuple read part-way is
    /// read again from the start, unchanged.
    get_many, |py, slf, args, nargs| when (1..=2).contains(&nargs) => {
        // SAFETY: CPython calls the method with `nargs` live arguments
        // at `args`, borrowed for the call; attached.
        let paths = unsafe { pyo3::Borrowed::from_ptr(py, *args) };
        // SAFETY: as above; the second argument exists when `nargs` is 2.
        let default =
            (nargs == 2).then(|| unsafe { pyo3::Borrowed::from_ptr(py, *args.add(1)) });
        // SAFETY: as in `find`: `slf` is a live `T`, borrowed for the
        // call.
        let slf = unsafe { pyo3::Borrowed::from_ptr(py, slf).cast_unchecked::<T>() };
        let (parsed, at) = slf.get().base();
        let doc = parsed.doc();
        // Each item is taken as a new reference (`Bound`), so that the
        // path it lends stays alive while it is read even if the
        // collector (run by an allocation below) changes the list.
        let one = |item: Bound<'_, PyAny>| -> Option<*mut ffi::PyObject> {
            // SAFETY: `item` is alive (owned) for the closure's call,
            // which the borrowed path does not outlive.
            let path = unsafe { PathArg::fast(py, item.as_ptr()) }?;
            match locate(&doc, at, &path)? {
                Ok(c) => value_of(py, parsed, &doc, c),
                Err(Missing) => default.map(|d| d.to_owned().into_ptr()),
            }
        };
        if let Ok(list) = paths.cast::<PyList>() {
            if list.is_exact_instance_of::<PyList>() {
                // (In range, `get_item` cannot fail: no error to drop.)
                return filled(py, list.len(), |i| {
                    if i >= list.len() {
                        return None;
                    }
                    one(list.get_item(i).ok()?)
                });
            }
        }
        let tuple = paths.cast::<PyTuple>().ok()?;
        if !tuple.is_exact_instance_of::<PyTuple>() {
            return None;
        }
        filled(py, tuple.len(), |i| one(tuple.get_item(i).ok()?))
    }, else T::originals().get_many.get()
);

/// What `get` returns for the value at `c`: a view for a container, a
/// scalar otherwise; `None` (nothing dropped but through `owned`) when it
/// cannot be made.
#[inline]
fn value_of(
    py: Python<'_>,
    parsed: &Arc<Parsed>,
    doc: &CoreDoc<'_>,
    c: CoreCursor,
) -> Option<*mut ffi::PyObject> {
    match doc.type_of(c) {
        JsonType::Object => owned(view::new_view(py, parsed, c, true)),
        JsonType::Array => owned(view::new_view(py, parsed, c, false)),
        _ => match convert::quick(py, doc, c) {
            Some(v) => Some(v.into_ptr()),
            None => owned(convert::value(py, parsed, c)),
        },
    }
}

/// A list of `n` items, item `i` the new reference `item(i)` gives; `None`
/// (the list released) when one of them is `None`, or when the list
/// cannot be made. Items are read up to the list's size as it stands at
/// each step (a list the collector shortens ends the read: `None`).
fn filled(
    py: Python<'_>,
    n: usize,
    mut item: impl FnMut(usize) -> Option<*mut ffi::PyObject>,
) -> Option<*mut ffi::PyObject> {
    let len = isize::try_from(n).ok()?;
    // SAFETY: attached. A NULL list (no memory) has set an error, cleared
    // here (the original then reports its own). The list owns its slots
    // from here on (`Bound`, released at once on every return but the
    // last); each slot is written once with a new reference before it is
    // returned, and a list released with NULL slots left is valid.
    unsafe {
        let raw = ffi::PyList_New(len);
        if raw.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let list = Bound::from_owned_ptr(py, raw);
        for i in 0..n {
            let v = item(i)?;
            ffi::PyList_SET_ITEM(list.as_ptr(), i as isize, v);
        }
        Some(list.into_ptr())
    }
}
