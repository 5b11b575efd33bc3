//! `qjson.patch` (RFC 6902 JSON Patch), `qjson.merge_patch` (RFC 7396)
//! and the number operations `qjson.incr` / `qjson.mul`, applied as
//! overlay edits.
//!
//! # Algorithm
//!
//! Each op is applied where it points: the pointer is split by the core
//! (`crate::patch`), the parent of its last token is reached one child at a
//! time (object member or array element, through the same overlay reads as
//! `v[key]`), and the edit is the one item assignment, deletion or insert
//! would make (`view::object_set`, `array_insert`, ...). Nothing is decoded
//! or copied beyond the containers on the path, so a patch costs O(path
//! lengths + values added), and `dumps` splices the edits into the
//! original bytes.
//!
//! Values put into the document are the document's own ([`own`]): a view
//! with no edits becomes a fresh view of the same bytes (a text patch's
//! values, `copy` of an untouched container: written as their original
//! bytes), dicts and lists are copied, so no later op, and no later edit by
//! the caller, reaches the patch's objects or another place of the
//! document. `move` moves the value itself.
//!
//! # Reading the ops
//!
//! Each op is read when its turn comes (a malformed op fails in its turn,
//! after the ops before it were applied and then undone): from a dict, its
//! members by one C lookup each; from a patch given as JSON text, straight
//! from the text's index ([`TextPatch`]: strings borrowed, the value a
//! fresh view of the text, so no view of the patch is made). A text given
//! as `bytes` or `str` is parsed and read once and kept ([`TEXT_PATCHES`],
//! found by identity or equal bytes): a gateway applies the same
//! configured patch to every request. A pointer is split, unescaped and
//! its tokens made Python `str`s once: a text's with the text, a `str`'s
//! kept by the identity of the `str` ([`POINTERS`]), so the same
//! configured dicts cost no parsing from the second call on.
//!
//! # Atomicity
//!
//! Before a container is first changed by a patch, its overlay is saved
//! ([`Journal::touch`]: `view::snapshot` for views, a shallow copy for
//! plain dicts and lists). When an op fails, every saved container is put
//! back, newest first, so the target reads, writes and `dumps` exactly as
//! before, and the views the caller holds are the same objects in the
//! same state. Saving costs O(edits + cached views) of each changed
//! container, never O(document). The last op's change to a view is not
//! saved: a view's edit happens whole or not at all, and nothing fails
//! after it (a `move`, which removes and then adds, is still saved).
//!
//! # Equality (`test`)
//!
//! JSON equality: numbers by value (`1 == 1.0`, ints exact), `true` is not
//! `1`, object members in any order. Views, dicts and lists compare alike;
//! the target's views are read member by member (never unfolded, so a
//! `test` leaves how they are written as it was).

use super::convert::{self, new_str};
use super::doc::Parsed;
use super::dumps::dict_each;
use super::errors::{access_error, path_error};
use super::input::str_utf8;
use super::stack;
use super::view::{
    self, array_get, array_insert, array_len, array_remove, array_set, object_add_absent,
    object_delete, object_get, object_has, object_replace, object_set, pristine_twin, snapshot,
    Array, Object, Saved,
};
use crate::doc::{Cursor, Value};
use crate::error::JsonType;
use crate::patch::{array_index, is_proper_prefix, pointer, Op, PatchFault, Place};
use crate::path::{segments, Segment};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PySlice, PyString, PyTuple,
    PyType,
};
use smallvec::SmallVec;
use std::borrow::Cow;
use std::cell::UnsafeCell;
use std::sync::atomic::AtomicBool;
#[cfg(Py_GIL_DISABLED)]
use std::sync::atomic::Ordering::Acquire;
use std::sync::atomic::Ordering::{Relaxed, Release};
use std::sync::{Arc, Mutex};

/// How [`POINTERS`] and the op reading them share a pointer: with the GIL,
/// an `Rc` (a hit's clone and the op's drop are plain increments, not the
/// two atomic read-modify-writes of an `Arc`: about 1% of the 2 KB patch
/// row's time). Safe because every clone and drop of one happens while
/// attached to the interpreter (the cache and the ops of one
/// `qjson.patch` call, never kept past it nor sent elsewhere), so with the
/// GIL one thread at a time, and a thread that takes the GIL sees what
/// the one that released it wrote. Free-threaded builds keep the `Arc`.
#[cfg(not(Py_GIL_DISABLED))]
type Shared<T> = std::rc::Rc<T>;
#[cfg(Py_GIL_DISABLED)]
type Shared<T> = Arc<T>;

static PATCH_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Deepest value [`own`] and [`json_eq`] walk.
const MAX_DEPTH: usize = 1024;

/// `qjson.PatchError(msg, op_index)`.
#[cold]
fn patch_error(py: Python<'_>, msg: &str, op_index: Option<usize>) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let ty = PATCH_ERROR.import(py, "qjson._errors", "PatchError")?;
        Ok(PyErr::from_value(ty.call1((msg, op_index))?))
    };
    make().unwrap_or_else(|err| err)
}

/// Why an op failed: a patch error (message) or a Python error raised on
/// the way (re-raised as it is, after the undo).
enum Fail {
    Patch(String),
    Py(PyErr),
}

impl From<PyErr> for Fail {
    fn from(e: PyErr) -> Fail {
        Fail::Py(e)
    }
}

impl From<PatchFault> for Fail {
    fn from(e: PatchFault) -> Fail {
        Fail::Patch(e.to_string())
    }
}

type Step<T> = Result<T, Fail>;

#[cold]
#[inline(never)]
fn fail<T>(msg: impl Into<String>) -> Step<T> {
    Err(Fail::Patch(msg.into()))
}

/// `path "..." not found`, the commonest failure, formatted out of line.
#[cold]
#[inline(never)]
fn not_found<T>(p: &Pointer) -> Step<T> {
    fail(format!("path {:?} not found", p.text))
}

// ------------------------------------------------------------- containers

/// A value of the document, as the walk sees it.
enum Node<'py> {
    Obj(Bound<'py, Object>),
    Arr(Bound<'py, Array>),
    Dict(Bound<'py, PyDict>),
    List(Bound<'py, PyList>),
    Leaf,
}

fn node<'py>(v: &Bound<'py, PyAny>) -> Node<'py> {
    // Type tests first: a failed `cast` builds an error value.
    if v.is_exact_instance_of::<Object>() {
        v.cast_exact::<Object>()
            .map_or(Node::Leaf, |o| Node::Obj(o.clone()))
    } else if v.is_exact_instance_of::<Array>() {
        v.cast_exact::<Array>()
            .map_or(Node::Leaf, |a| Node::Arr(a.clone()))
    } else if v.is_instance_of::<PyDict>() {
        v.cast::<PyDict>()
            .map_or(Node::Leaf, |d| Node::Dict(d.clone()))
    } else if v.is_instance_of::<PyList>() {
        v.cast::<PyList>()
            .map_or(Node::Leaf, |l| Node::List(l.clone()))
    } else {
        Node::Leaf
    }
}

/// Whether `v` is an object: `node(v).is_object()` with the commonest
/// case, a dict, tested first.
#[inline]
fn is_object(v: &Bound<'_, PyAny>) -> bool {
    v.is_instance_of::<PyDict>() || v.is_exact_instance_of::<Object>()
}

/// `d[key]` without the `KeyError` (`None` when absent). For an exact
/// dict, one C lookup (the key is a str, whose hash is cached); a subclass
/// goes through pyo3's lookup.
fn dict_get<'py>(
    d: &Bound<'py, PyDict>,
    key: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if !d.is_exact_instance_of::<PyDict>() {
        return d.get_item(key);
    }
    let py = d.py();
    // SAFETY: `d` is a dict and `key` a str, both alive, and the
    // interpreter is attached. The result is a borrowed reference (or
    // NULL, with an exception set only on an error), made owned at once.
    unsafe {
        let p = pyo3::ffi::PyDict_GetItemWithError(d.as_ptr(), key.as_ptr());
        if p.is_null() {
            return match PyErr::take(py) {
                Some(e) => Err(e),
                None => Ok(None),
            };
        }
        Ok(Some(Bound::from_borrowed_ptr(py, p)))
    }
}

impl<'py> Node<'py> {
    fn len(&self) -> PyResult<usize> {
        match self {
            Node::Arr(a) => array_len(a),
            Node::List(l) => Ok(l.len()),
            _ => Ok(0),
        }
    }

    /// Member `key` of an object (`None`: absent, or not an object).
    fn member(&self, key: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.member_of(key, false)
    }

    /// [`Self::member`] of an object about to be edited (a merge
    /// patch's target): a view finds it through its member table, made
    /// now if need be (`view::object_get`), which its edits use next.
    fn member_to_edit(&self, key: &Bound<'py, PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.member_of(key, true)
    }

    fn member_of(
        &self,
        key: &Bound<'py, PyString>,
        edit: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = key.py();
        match self {
            Node::Obj(o) => Ok(object_get(o, key, edit)?.map(|v| v.into_bound(py))),
            Node::Dict(d) => dict_get(d, key),
            _ => Ok(None),
        }
    }

    fn element(&self, i: usize) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Node::Arr(a) => Ok(array_get(a, i)?.into_bound(a.py())),
            Node::List(l) => l.get_item(i),
            _ => unreachable!("elements are read from arrays"),
        }
    }

    fn has(&self, key: &Bound<'py, PyString>) -> PyResult<bool> {
        match self {
            Node::Obj(o) => object_has(o, key),
            Node::Dict(d) => d.contains(key),
            _ => Ok(false),
        }
    }

    fn set(&self, key: &Bound<'py, PyString>, v: Bound<'py, PyAny>) -> PyResult<()> {
        match self {
            Node::Obj(o) => object_set(o, key, v.unbind()),
            Node::Dict(d) => d.set_item(key, v),
            _ => unreachable!("members are set in objects"),
        }
    }

    /// Set `key`, found absent by [`Self::member`]: a view adds it without
    /// looking it up in the document again (`view::object_add_absent`).
    fn add_absent(&self, key: &Bound<'py, PyString>, v: Bound<'py, PyAny>) -> PyResult<()> {
        match self {
            Node::Obj(o) => object_add_absent(o, key, v.unbind()),
            _ => self.set(key, v),
        }
    }

    /// Set `key` when present; false when absent.
    fn replace_member(&self, key: &Bound<'py, PyString>, v: Bound<'py, PyAny>) -> PyResult<bool> {
        match self {
            Node::Obj(o) => object_replace(o, key, v.unbind()),
            Node::Dict(d) => {
                if !d.contains(key)? {
                    return Ok(false);
                }
                d.set_item(key, v)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn delete(&self, key: &Bound<'py, PyString>) -> PyResult<bool> {
        match self {
            Node::Obj(o) => object_delete(o, key),
            Node::Dict(d) => {
                if !d.contains(key)? {
                    return Ok(false);
                }
                d.del_item(key)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn insert(&self, i: usize, v: Bound<'py, PyAny>) -> PyResult<()> {
        match self {
            Node::Arr(a) => array_insert(a, i, v.unbind()),
            Node::List(l) => l.insert(i, v),
            _ => unreachable!("elements are inserted in arrays"),
        }
    }

    fn replace(&self, i: usize, v: Bound<'py, PyAny>) -> PyResult<()> {
        match self {
            Node::Arr(a) => array_set(a, i, v.unbind()),
            Node::List(l) => l.set_item(i, v),
            _ => unreachable!("elements are replaced in arrays"),
        }
    }

    fn remove(&self, i: usize) -> PyResult<()> {
        match self {
            Node::Arr(a) => array_remove(a, i),
            Node::List(l) => l.del_item(i),
            _ => unreachable!("elements are removed from arrays"),
        }
    }

    fn is_object(&self) -> bool {
        matches!(self, Node::Obj(_) | Node::Dict(_))
    }

    fn is_array(&self) -> bool {
        matches!(self, Node::Arr(_) | Node::List(_))
    }
}

// ---------------------------------------------------------------- journal

/// The containers a patch changed, as they were before.
struct Journal<'py> {
    py: Python<'py>,
    views: SmallVec<[Saved; 2]>,
    /// Plain dicts and lists: (the container, a shallow copy).
    plain: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    seen: SmallVec<[*mut pyo3::ffi::PyObject; 4]>,
    /// Whether views are saved. Off for the last change of a patch: a
    /// view's edit (one overlay write, see `view::edit`) either happens
    /// whole or fails before changing anything, and nothing can fail after
    /// the last change, so there is nothing to undo. Plain dicts and lists
    /// are always saved (a subclass may run code that fails half way).
    save_views: bool,
}

impl<'py> Journal<'py> {
    fn new(py: Python<'py>) -> Self {
        Journal {
            py,
            views: SmallVec::new(),
            plain: Vec::new(),
            seen: SmallVec::new(),
            save_views: true,
        }
    }

    /// Save `n` before its first change. (Small and inlined: most calls
    /// find `n` saved already, or a view not to save; the saving itself
    /// is out of line.)
    #[inline]
    fn touch(&mut self, n: &Node<'py>) -> PyResult<()> {
        let any = match n {
            Node::Obj(o) if self.save_views => o.as_any(),
            Node::Arr(a) if self.save_views => a.as_any(),
            Node::Dict(d) => d.as_any(),
            Node::List(l) => l.as_any(),
            Node::Obj(_) | Node::Arr(_) | Node::Leaf => return Ok(()),
        };
        if self.seen.contains(&any.as_ptr()) {
            return Ok(());
        }
        self.save(n, any)
    }

    /// Save `n` (`any`: the same object), not saved yet.
    #[inline(never)]
    fn save(&mut self, n: &Node<'py>, any: &Bound<'py, PyAny>) -> PyResult<()> {
        self.seen.push(any.as_ptr());
        match n {
            Node::Dict(_) | Node::List(_) => self.save_plain(n),
            _ => {
                if let Some(saved) = snapshot(any)? {
                    self.views.push(saved);
                }
                Ok(())
            }
        }
    }

    /// [`Self::save`] of a plain dict or list: a shallow copy (its own
    /// function, so a patch of views does not run through its code).
    #[inline(never)]
    fn save_plain(&mut self, n: &Node<'py>) -> PyResult<()> {
        match n {
            Node::Dict(d) => self
                .plain
                .push((d.clone().into_any(), d.copy()?.into_any())),
            Node::List(l) => {
                let copy = PyList::new(self.py, l.iter())?;
                self.plain.push((l.clone().into_any(), copy.into_any()));
            }
            _ => {}
        }
        Ok(())
    }

    /// Put every saved container back, newest first.
    fn undo(self) -> PyResult<()> {
        let py = self.py;
        for s in self.views.into_iter().rev() {
            s.restore(py)?;
        }
        for (c, copy) in self.plain.into_iter().rev() {
            if let Ok(d) = c.cast::<PyDict>() {
                d.clear();
                d.update(copy.cast::<PyDict>()?.as_mapping())?;
            } else {
                c.set_item(PySlice::full(py), copy)?;
            }
        }
        Ok(())
    }
}

// ------------------------------------------------------------------ values

/// `v` as a value of the document, sharing nothing with where it came
/// from: an untouched view becomes a fresh view of the same bytes, an
/// edited one is materialized, dicts, lists and tuples are copied.
fn own<'py>(v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    own_at(v, 0, "qjson.patch")
}

/// [`own`] for `who` (the function named in a too-deep error).
fn own_at<'py>(
    v: &Bound<'py, PyAny>,
    depth: usize,
    who: &'static str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = v.py();
    // Scalars first (what most ops add): immutable, shared as they are.
    if is_scalar(v) {
        return Ok(v.clone());
    }
    if depth > MAX_DEPTH || (depth > 32 && stack::low()) {
        return Err(too_deep(who));
    }
    if v.is_exact_instance_of::<Object>() || v.is_exact_instance_of::<Array>() {
        return match pristine_twin(v)? {
            Some(t) => Ok(t.into_bound(py)),
            None => view::materialize(py, v),
        };
    }
    // A dict of scalars (`{"role": "system", "content": "..."}`) is one
    // C-level copy.
    if let Ok(d) = v.cast_exact::<PyDict>() {
        if values_all_scalar(d) {
            return Ok(d.copy()?.into_any());
        }
    }
    own_container(v, depth, who)
}

/// [`own_at`] of a dict (not all scalars, or a subclass), list, tuple or
/// other value: copied member by member (out of line: the small-dict and
/// scalar cases stay short).
#[inline(never)]
fn own_container<'py>(
    v: &Bound<'py, PyAny>,
    depth: usize,
    who: &'static str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = v.py();
    if let Ok(d) = v.cast::<PyDict>() {
        let out = PyDict::new(py);
        for (k, x) in d.iter() {
            out.set_item(k, own_at(&x, depth + 1, who)?)?;
        }
        return Ok(out.into_any());
    }
    if v.cast::<PyList>().is_ok() || v.cast::<PyTuple>().is_ok() {
        let out = PyList::empty(py);
        for x in v.try_iter()? {
            out.append(own_at(&x?, depth + 1, who)?)?;
        }
        return Ok(out.into_any());
    }
    Ok(v.clone())
}

#[cold]
#[inline(never)]
fn too_deep(who: &'static str) -> PyErr {
    PyValueError::new_err(format!("{who}: value nested too deeply"))
}

/// Whether every value of exact dict `d` is a scalar ([`is_scalar`]).
fn values_all_scalar(d: &Bound<'_, PyDict>) -> bool {
    every_member(d, |_, v| is_scalar(&v))
}

/// Whether `test` holds for every member of exact dict `d`, read as
/// borrowed entries (no reference taken). `test` must run no Python code.
#[inline(always)]
fn every_member(
    d: &Bound<'_, PyDict>,
    mut test: impl FnMut(pyo3::Borrowed<'_, '_, PyAny>, pyo3::Borrowed<'_, '_, PyAny>) -> bool,
) -> bool {
    let py = d.py();
    // SAFETY: `d` is an exact dict and the interpreter is attached;
    // `dict_each` gives borrowed references valid while the dict is not
    // changed, and `test` runs no Python code (its callers' type tests).
    unsafe {
        dict_each(d.as_ptr(), |k, v| {
            test(
                pyo3::Borrowed::from_ptr(py, k),
                pyo3::Borrowed::from_ptr(py, v),
            )
        })
    }
}

/// An immutable JSON scalar of an exact built-in type (a subclass may
/// carry state of its own, and goes the general way).
fn is_scalar(v: &Bound<'_, PyAny>) -> bool {
    v.is_exact_instance_of::<PyString>()
        || v.is_exact_instance_of::<PyInt>()
        || v.is_exact_instance_of::<PyFloat>()
        || v.is_none()
        || v.is_exact_instance_of::<PyBool>()
}

fn is_number(v: &Bound<'_, PyAny>) -> bool {
    !v.is_instance_of::<PyBool>() && (v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>())
}

/// JSON equality of two values (see the module docs). `b`'s members are
/// listed and looked up in `a`, so `a` (the target's value) is only read,
/// never unfolded.
fn json_eq(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
    if depth > MAX_DEPTH || (depth > 32 && stack::low()) {
        return Err(too_deep("qjson.patch"));
    }
    if a.is_none() || b.is_none() {
        return Ok(a.is_none() && b.is_none());
    }
    if a.is_instance_of::<PyBool>() || b.is_instance_of::<PyBool>() {
        return Ok(a.is_instance_of::<PyBool>() && b.is_instance_of::<PyBool>() && a.eq(b)?);
    }
    if is_number(a) || is_number(b) {
        return Ok(is_number(a) && is_number(b) && a.eq(b)?);
    }
    if let (Ok(x), Ok(y)) = (a.cast::<PyString>(), b.cast::<PyString>()) {
        return Ok(x.to_cow()? == y.to_cow()?);
    }
    let (x, y) = (node(a), node(b));
    if x.is_object() && y.is_object() {
        if a.len()? != b.len()? {
            return Ok(false);
        }
        for (k, w) in Part::Py(b.clone()).items(b.py())? {
            let Part::Py(w) = w else {
                unreachable!("members of a Python value are Python values")
            };
            match x.member(&k)? {
                Some(v) if json_eq(&v, &w, depth + 1)? => {}
                _ => return Ok(false),
            }
        }
        return Ok(true);
    }
    let seq = |v: &Bound<'_, PyAny>, n: &Node| n.is_array() || v.cast::<PyTuple>().is_ok();
    if seq(a, &x) && seq(b, &y) {
        if a.len()? != b.len()? {
            return Ok(false);
        }
        for (v, w) in a.try_iter()?.zip(b.try_iter()?) {
            if !json_eq(&v?, &w?, depth + 1)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    Ok(false)
}

// ------------------------------------------------------------------- paths

/// One token of a pointer: its unescaped bytes, and the same text as a
/// Python `str`, made once (the key an object is read or edited with),
/// and the array index it names when it is one (digits without a leading
/// zero; `array_index` gives the same, but is then only a bounds check).
struct Token {
    raw: Box<[u8]>,
    key: Py<PyString>,
    index: Option<usize>,
}

impl AsRef<[u8]> for Token {
    fn as_ref(&self) -> &[u8] {
        &self.raw
    }
}

/// A JSON Pointer, split and unescaped once (see [`POINTERS`]).
struct Pointer {
    text: Box<str>,
    tokens: Box<[Token]>,
}

fn parse_pointer(py: Python<'_>, text: &str) -> Result<Pointer, PatchFault> {
    let tokens = pointer(text)?
        .iter()
        .map(|t| Token {
            raw: (**t).into(),
            key: key(py, t).unbind(),
            index: array_index(t, usize::MAX - 1, Place::Existing).ok(),
        })
        .collect();
    Ok(Pointer {
        text: text.into(),
        tokens,
    })
}

/// How many pointers [`POINTERS`] keeps.
const POINTER_SLOTS: usize = 16;

/// The pointers read last, by the identity of the `str` they were given as
/// (held here, so the identity cannot be reused), oldest replaced first.
/// Patches given as dicts are usually the same objects on every call (a
/// gateway's configured patch, or literals in the caller's code), and a
/// `str` cannot change: a hit gives exactly what parsing it again would,
/// without the split, the unescaping and the key strs.
///
/// Used only while attached to the interpreter, so with the GIL one thread
/// at a time: a flag, read and set with plain loads and stores (an atomic
/// exchange in free-threaded builds), guards it instead of a mutex (whose
/// lock, unlock and poison checks cost more than a hit's search). A caller
/// that finds the flag set (another thread whose drop released the GIL
/// while it held the cache: never here, where nothing held runs Python
/// code) does without the cache.
struct PointerCache {
    busy: AtomicBool,
    slots: UnsafeCell<Slots>,
}

struct Slots {
    list: Vec<(Py<PyString>, Shared<Pointer>)>,
    next: usize,
}

// SAFETY: `slots` is read and written only through `PointerCache::with`,
// by the one caller that set `busy` (see the type's docs), attached to
// the interpreter: with the GIL, the `Rc`s it holds are cloned and dropped
// by one thread at a time (see [`Shared`]).
unsafe impl Sync for PointerCache {}

impl PointerCache {
    /// `f` on the slots, unless another caller has them (`None`). `f` must
    /// run no Python code (nor drop Python objects, which may).
    #[inline]
    fn with<R>(&self, _py: Python<'_>, f: impl FnOnce(&mut Slots) -> R) -> Option<R> {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            if self.busy.load(Relaxed) {
                return None;
            }
            self.busy.store(true, Relaxed);
        }
        #[cfg(Py_GIL_DISABLED)]
        self.busy
            .compare_exchange(false, true, Acquire, Relaxed)
            .ok()?;
        // SAFETY: `busy` was clear and is now set by this caller, so no
        // other reference to the slots exists until it is cleared below.
        let r = f(unsafe { &mut *self.slots.get() });
        self.busy.store(false, Release);
        Some(r)
    }
}

static POINTERS: PointerCache = PointerCache {
    busy: AtomicBool::new(false),
    slots: UnsafeCell::new(Slots {
        list: Vec::new(),
        next: 0,
    }),
};

/// The pointer `s` holds, from [`POINTERS`] when it is there.
fn pointer_of(s: &Bound<'_, PyString>) -> Step<Shared<Pointer>> {
    let py = s.py();
    // A subclass of str is parsed each time (it might not hash or compare
    // like its text).
    let exact = s.is_exact_instance_of::<PyString>();
    if exact {
        let hit = POINTERS.with(py, |c| {
            c.list
                .iter()
                .find(|(k, _)| k.as_ptr() == s.as_ptr())
                .map(|(_, p)| p.clone())
        });
        if let Some(Some(p)) = hit {
            return Ok(p);
        }
    }
    pointer_parsed(s, exact)
}

/// [`pointer_of`] for a pointer not in [`POINTERS`]: parsed, and kept
/// when `exact` (out of line: a configured patch's pointers are found).
#[inline(never)]
fn pointer_parsed(s: &Bound<'_, PyString>, exact: bool) -> Step<Shared<Pointer>> {
    let py = s.py();
    let p = Shared::new(parse_pointer(py, op_text(s, "pointer")?)?);
    if exact {
        let entry = (s.clone().unbind(), p.clone());
        let old = POINTERS.with(py, |c| {
            if c.list.len() < POINTER_SLOTS {
                c.list.push(entry);
                None
            } else {
                let at = c.next;
                c.next = (at + 1) % POINTER_SLOTS;
                Some(std::mem::replace(&mut c.list[at], entry))
            }
        });
        // The replaced entry (Python objects) is dropped out of the cache
        // (and an entry the cache could not take with it).
        drop(old);
    }
    Ok(p)
}

fn key<'py>(py: Python<'py>, token: &[u8]) -> Bound<'py, PyString> {
    // Tokens come from a str, unescaped ASCII for ASCII: valid UTF-8.
    new_str(py, std::str::from_utf8(token).unwrap_or_default())
}

/// The array index `token` names in `parent` (an array), by RFC 6902's rules
/// for `place`; a bad index fails the op with the pointer's text.
fn index_in(parent: &Node<'_>, token: &Token, place: Place, p: &Pointer) -> Step<usize> {
    let len = parent.len()?;
    if let Some(i) = token.index {
        let limit = match place {
            Place::Existing => len,
            Place::Insert => len + 1,
        };
        if i < limit {
            return Ok(i);
        }
    }
    bad_index(token, len, place, p)
}

/// [`index_in`] for a token that is not an index, or out of range: the
/// core says why (out of line: the rare case).
#[cold]
#[inline(never)]
fn bad_index(token: &Token, len: usize, place: Place, p: &Pointer) -> Step<usize> {
    array_index(&token.raw, len, place).map_err(|e| Fail::Patch(format!("path {:?}: {e}", p.text)))
}

/// The child `token` names in `parent`, which must exist.
fn child<'py>(
    py: Python<'py>,
    parent: &Node<'py>,
    token: &Token,
    p: &Pointer,
) -> Step<Bound<'py, PyAny>> {
    match parent {
        Node::Obj(_) | Node::Dict(_) => match parent.member(token.key.bind(py))? {
            Some(v) => Ok(v),
            None => not_found(p),
        },
        Node::Arr(_) | Node::List(_) => {
            let i = index_in(parent, token, Place::Existing, p)?;
            Ok(parent.element(i)?)
        }
        Node::Leaf => fail(format!(
            "path {:?} not found (a scalar has no members)",
            p.text
        )),
    }
}

/// The container holding the value `p` points to, and the last token.
fn parent_of<'py, 'p>(root: &Bound<'py, PyAny>, p: &'p Pointer) -> Step<(Node<'py>, &'p Token)> {
    let py = root.py();
    let (last, path) = p.tokens.split_last().expect("a pointer with tokens");
    let mut at = node(root);
    for t in path {
        let c = child(py, &at, t, p)?;
        at = node(&c);
    }
    Ok((at, last))
}

/// The value `p` points to.
fn value_at<'py>(root: &Bound<'py, PyAny>, p: &Pointer) -> Step<Bound<'py, PyAny>> {
    if p.tokens.is_empty() {
        return Ok(root.clone());
    }
    let (parent, last) = parent_of(root, p)?;
    child(root.py(), &parent, last, p)
}

// --------------------------------------------------------------------- ops

/// What an op does to the root: keeps it, or replaces it.
struct Doc<'py> {
    root: Bound<'py, PyAny>,
    journal: Journal<'py>,
}

impl<'py> Doc<'py> {
    fn add(&mut self, p: &Pointer, v: Bound<'py, PyAny>) -> Step<()> {
        if p.tokens.is_empty() {
            self.root = v;
            return Ok(());
        }
        let py = self.root.py();
        let (parent, last) = parent_of(&self.root, p)?;
        if parent.is_object() {
            self.journal.touch(&parent)?;
            parent.set(last.key.bind(py), v)?;
        } else if parent.is_array() {
            let i = index_in(&parent, last, Place::Insert, p)?;
            self.journal.touch(&parent)?;
            parent.insert(i, v)?;
        } else {
            return fail(format!("path {:?}: the parent is not a container", p.text));
        }
        Ok(())
    }

    fn remove(&mut self, p: &Pointer) -> Step<()> {
        if p.tokens.is_empty() {
            return fail("cannot remove the whole document");
        }
        let py = self.root.py();
        let (parent, last) = parent_of(&self.root, p)?;
        if parent.is_object() {
            self.journal.touch(&parent)?;
            if !parent.delete(last.key.bind(py))? {
                return not_found(p);
            }
        } else if parent.is_array() {
            let i = index_in(&parent, last, Place::Existing, p)?;
            self.journal.touch(&parent)?;
            parent.remove(i)?;
        } else {
            return not_found(p);
        }
        Ok(())
    }

    fn replace(&mut self, p: &Pointer, v: Bound<'py, PyAny>) -> Step<()> {
        if p.tokens.is_empty() {
            self.root = v;
            return Ok(());
        }
        let py = self.root.py();
        let (parent, last) = parent_of(&self.root, p)?;
        if parent.is_object() {
            self.journal.touch(&parent)?;
            if !parent.replace_member(last.key.bind(py), v)? {
                return not_found(p);
            }
        } else if parent.is_array() {
            let i = index_in(&parent, last, Place::Existing, p)?;
            self.journal.touch(&parent)?;
            parent.replace(i, v)?;
        } else {
            return not_found(p);
        }
        Ok(())
    }

    /// Apply one op; `last`: no op follows it (see [`Journal::save_views`]).
    /// Inlined into its callers, so the op is used where it was read (see
    /// [`read_apply`]).
    #[inline(always)]
    fn apply(&mut self, op: OpIn<'py, '_>, last: bool) -> Step<()> {
        // A move removes, then adds: the add may still fail.
        self.journal.save_views = !last || op.kind == Op::Move;
        let path = &*op.path;
        let own_value = || -> PyResult<Bound<'py, PyAny>> {
            let v = op.value.as_ref().expect("read with the op");
            if op.owned {
                Ok(v.clone())
            } else {
                own(v)
            }
        };
        match op.kind {
            Op::Add => self.add(path, own_value()?),
            Op::Replace => self.replace(path, own_value()?),
            Op::Remove => self.remove(path),
            Op::Test => self.test(path, op.value.as_ref().expect("read with the op")),
            Op::Move | Op::Copy => {
                let from = &**op.from.as_ref().expect("read with the op");
                self.move_or_copy(op.kind, from, path)
            }
        }
    }

    /// `test`: the value at `path` equals `value` (out of line, as
    /// [`Self::move_or_copy`]: a patch's usual ops are add, remove and
    /// replace).
    #[inline(never)]
    fn test(&mut self, path: &Pointer, value: &Bound<'py, PyAny>) -> Step<()> {
        let here = value_at(&self.root, path)?;
        if json_eq(&here, value, 0)? {
            Ok(())
        } else {
            fail(format!("test failed: the value at {:?} differs", path.text))
        }
    }

    /// `move` or `copy` (`kind`) of the value at `from` to `path`.
    #[inline(never)]
    fn move_or_copy(&mut self, kind: Op, from: &Pointer, path: &Pointer) -> Step<()> {
        let v = value_at(&self.root, from)?;
        if kind == Op::Copy {
            return self.add(path, own(&v)?);
        }
        if from
            .tokens
            .iter()
            .map(|t| &t.raw)
            .eq(path.tokens.iter().map(|t| &t.raw))
        {
            return Ok(());
        }
        if is_proper_prefix(&from.tokens, &path.tokens) {
            return fail(format!(
                "cannot move {:?} into its own child {:?}",
                from.text, path.text
            ));
        }
        self.remove(from)?;
        self.add(path, v)
    }
}

// -------------------------------------------------------------- reading ops

/// An op's pointer: from [`POINTERS`] (shared with it, so an entry the
/// cache replaces while the op runs, e.g. by a nested `qjson.patch` from a
/// callback, lives on until the op is done), or borrowed from the
/// [`TextPatch`] the caller holds for the whole patch.
enum PtrRef<'a> {
    Cached(Shared<Pointer>),
    Text(&'a Pointer),
}

impl std::ops::Deref for PtrRef<'_> {
    type Target = Pointer;
    #[inline]
    fn deref(&self) -> &Pointer {
        match self {
            PtrRef::Cached(p) => p,
            PtrRef::Text(p) => p,
        }
    }
}

/// One op, read and checked for its members, not yet applied.
struct OpIn<'py, 'a> {
    kind: Op,
    path: PtrRef<'a>,
    /// `move` / `copy` only.
    from: Option<PtrRef<'a>>,
    /// `add` / `replace` / `test` only.
    value: Option<Bound<'py, PyAny>>,
    /// Whether `value` is already the document's own (read from a JSON
    /// text patch: a fresh view or scalar, shared with nothing).
    owned: bool,
}

#[cold]
#[inline(never)]
fn missing<T>(name: &str) -> Step<T> {
    fail(format!("the op has no {name:?}"))
}

#[cold]
#[inline(never)]
fn not_text<T>(name: &str) -> Step<T> {
    fail(format!("the op's {name} must be a string"))
}

#[cold]
#[inline(never)]
fn unknown<T>(name: &str) -> Step<T> {
    fail(format!("unknown op {name:?}"))
}

/// The text of an op's string member (`what` names it in the message): a
/// patch error, not Python's UnicodeEncodeError, when it holds a lone
/// surrogate (no JSON text can carry it).
fn op_text<'a>(s: &'a Bound<'_, PyString>, what: &str) -> Step<&'a str> {
    str_utf8(s).or_else(|_| not_utf8(what))
}

#[cold]
#[inline(never)]
fn not_utf8<T>(what: &str) -> Step<T> {
    fail(format!(
        "the {what} is not valid UTF-8 (it holds a lone surrogate)"
    ))
}

#[cold]
#[inline(never)]
fn no_value<T>(kind: &str) -> Step<T> {
    fail(format!("a {kind:?} op needs a \"value\""))
}

/// The members `op`, `path`, `value` and `from` of an op given as an
/// exact dict, in one walk over its entries (an op has two to four
/// members: one walk costs less than four lookups). The walk reads the
/// dict's entries as borrowed references (`dict_each`: `PyDict_Next`'s
/// walk read in place) and takes a reference only to the members it
/// keeps. Keys are matched by identity
/// with the interned names first (literal keys are interned), then by
/// text; for a repeated name (possible only with a str subclass key) the
/// last entry wins, as the dict's own order gives it.
fn op_members<'py>(
    d: &Bound<'py, PyDict>,
    names: &Names,
) -> PyResult<[Option<Bound<'py, PyAny>>; 4]> {
    let py = d.py();
    let mut out: [Option<*mut pyo3::ffi::PyObject>; 4] = [None; 4];
    // SAFETY: `d` is an exact dict and the interpreter is attached.
    // `dict_each` gives borrowed references valid while the dict is not
    // changed; the walk runs no Python code that could change it (a type
    // test; the text of a str key is read from the str itself, `str_utf8`;
    // a key it holds a reference to while reading it is one the dict
    // holds too, so releasing it frees nothing), and the kept values
    // become owned references after it, while the dict still holds them.
    unsafe {
        dict_each(d.as_ptr(), |k, v| {
            let slot = match names.members.iter().position(|n| n.as_ptr() == k) {
                Some(i) => i,
                None => {
                    let key = Bound::from_borrowed_ptr(py, k);
                    let Ok(key) = key.cast::<PyString>() else {
                        return true;
                    };
                    match str_utf8(key) {
                        Ok("op") => 0,
                        Ok("path") => 1,
                        Ok("value") => 2,
                        Ok("from") => 3,
                        // Other members are ignored, as in RFC 6902; one
                        // whose name holds a lone surrogate too.
                        Ok(_) | Err(_) => return true,
                    }
                }
            };
            out[slot] = Some(v);
            true
        });
        Ok(out.map(|v| v.map(|v| Bound::from_borrowed_ptr(py, v))))
    }
}

/// The interned names an op dict is read with: its member names and the
/// six op names (string literals in Python code are interned, so a
/// configured patch's keys and names are found by identity, without
/// reading their text). Fetched once per `qjson.patch` call: one
/// once-cell read instead of one per name and op.
struct Names {
    /// `op`, `path`, `value`, `from`, in the order [`op_members`] returns.
    members: [Py<PyString>; 4],
    ops: [(Py<PyString>, Op); 6],
}

static NAMES: PyOnceLock<Names> = PyOnceLock::new();

fn names(py: Python<'_>) -> &Names {
    NAMES.get_or_init(py, || {
        let s = |t: &str| PyString::intern(py, t).unbind();
        Names {
            members: [s("op"), s("path"), s("value"), s("from")],
            ops: [
                (s("replace"), Op::Replace),
                (s("add"), Op::Add),
                (s("remove"), Op::Remove),
                (s("test"), Op::Test),
                (s("move"), Op::Move),
                (s("copy"), Op::Copy),
            ],
        }
    })
}

impl Names {
    /// The op `name` is when it is one of the interned op names; `None`:
    /// read its text.
    fn op(&self, name: &Bound<'_, PyString>) -> Option<Op> {
        let p = name.as_ptr();
        self.ops
            .iter()
            .find_map(|(n, op)| (n.as_ptr() == p).then_some(*op))
    }
}

/// Op `op` of a patch given as Python objects (a dict or an `Object`).
/// (Inlined into [`read_apply`], its one caller.)
#[inline(always)]
fn read_op<'py>(op: &Bound<'py, PyAny>, interned: &Names) -> Step<OpIn<'py, 'static>> {
    let members = match op.cast_exact::<PyDict>() {
        Ok(d) => op_members(d, interned)?,
        Err(_) => view_op_members(op)?,
    };
    let [op_name, path, value, from] = members;
    let text = |v: Option<Bound<'py, PyAny>>, name: &str| -> Step<Bound<'py, PyString>> {
        match v {
            Some(v) => match v.cast_into::<PyString>() {
                Ok(s) => Ok(s),
                Err(_) => not_text(name),
            },
            None => missing(name),
        }
    };
    let name = text(op_name, "op")?;
    let kind = match interned.op(&name) {
        Some(kind) => kind,
        None => {
            let name = op_text(&name, "op name")?;
            match Op::parse(name) {
                Some(kind) => kind,
                None => return unknown(name),
            }
        }
    };
    let path = text(path, "path")?;
    let value = if kind.needs_value() {
        match value {
            Some(v) => Some(v),
            None => return no_value(op_text(&name, "op name")?),
        }
    } else {
        None
    };
    let from = if kind.needs_from() {
        Some(text(from, "from")?)
    } else {
        None
    };
    // The pointers last: a malformed op reports its missing members first.
    let path = PtrRef::Cached(pointer_of(&path)?);
    let from = match from {
        Some(f) => Some(PtrRef::Cached(pointer_of(&f)?)),
        None => None,
    };
    Ok(OpIn {
        kind,
        path,
        from,
        value,
        owned: false,
    })
}

/// Op `op` of a patch given as Python objects, read ([`read_op`]) and
/// applied ([`Doc::apply`]; `last`: no op follows it), both inlined here.
/// The op read is used where it was made: returned from a call of its own
/// and handed to another, the op (about 64 bytes with its `Result`) was
/// written field by field and then copied and read back 16 bytes at a
/// time, and each such read of bytes just written by narrower stores
/// waits for them (no store-to-load forwarding): about 4% of the 2 KB
/// patch row's time (perf, PGO build).
#[inline(never)]
fn read_apply<'py>(
    doc: &mut Doc<'py>,
    op: &Bound<'py, PyAny>,
    interned: &Names,
    last: bool,
) -> Step<()> {
    let op = read_op(op, interned)?;
    doc.apply(op, last)
}

/// The members `op`, `path`, `value` and `from` of an op that is not an
/// exact dict (an `Object`, a dict subclass), one lookup each (out of
/// line: ops are usually dicts).
#[inline(never)]
fn view_op_members<'py>(op: &Bound<'py, PyAny>) -> Step<[Option<Bound<'py, PyAny>>; 4]> {
    let py = op.py();
    let op = node(op);
    if !op.is_object() {
        return fail("an op must be an object");
    }
    let mut m: [Option<Bound<'py, PyAny>>; 4] = Default::default();
    for (slot, name) in m.iter_mut().zip(["op", "path", "value", "from"]) {
        *slot = op.member(&PyString::new(py, name))?;
    }
    Ok(m)
}

// ------------------------------------------------------- patches as text

/// One op of a patch given as JSON text, read from the text's index: the
/// strings unescaped, the value where it is in the text.
struct TextOp {
    kind: Op,
    path: Pointer,
    from: Option<Pointer>,
    value: Option<Cursor>,
}

impl TextOp {
    /// The op, ready to apply: its value a fresh view of the text (or a
    /// scalar), shared with nothing, so nothing of the cache is reachable
    /// from the document.
    fn op_in<'py, 'a>(&'a self, py: Python<'py>, parsed: &Arc<Parsed>) -> Step<OpIn<'py, 'a>> {
        let value = match self.value {
            Some(c) => Some(convert::value(py, parsed, c)?.into_bound(py)),
            None => None,
        };
        Ok(OpIn {
            kind: self.kind,
            path: PtrRef::Text(&self.path),
            from: self.from.as_ref().map(PtrRef::Text),
            value,
            owned: true,
        })
    }
}

/// A patch given as JSON text, parsed and read: the ops of a JSON array
/// (each one read, or why it is malformed, reported when its turn comes),
/// or `None` when the text is not an array.
struct TextPatch {
    parsed: Arc<Parsed>,
    ops: Option<Vec<Result<TextOp, String>>>,
}

/// Texts up to this size are kept in [`TEXT_PATCHES`].
const TEXT_PATCH_MAX: usize = 16 * 1024;
/// How many texts [`TEXT_PATCHES`] keeps.
const TEXT_PATCH_SLOTS: usize = 8;

/// The patch texts read last (`bytes` and `str` only: they cannot change),
/// newest last. A gateway applies the same configured patch to every
/// request; the parse and the reading of its ops (most of the cost of a
/// small patch) are then done once. A text is found by identity or by
/// equal bytes, so a hit gives exactly what reading it again would.
static TEXT_PATCHES: Mutex<Vec<Arc<TextPatch>>> = Mutex::new(Vec::new());

/// The bytes of `ops` when it is `bytes` or `str` (immutable) and small
/// enough to keep.
fn cacheable_text<'a>(ops: &'a Bound<'_, PyAny>) -> Option<&'a [u8]> {
    let b = if let Ok(b) = ops.cast_exact::<PyBytes>() {
        b.as_bytes()
    } else if let Ok(s) = ops.cast_exact::<PyString>() {
        // A str with lone surrogates is not kept (reading it raises).
        str_utf8(s).ok()?.as_bytes()
    } else {
        return None;
    };
    (b.len() <= TEXT_PATCH_MAX).then_some(b)
}

/// `ops` (JSON text) parsed and read, from [`TEXT_PATCHES`] when it is there.
fn text_patch(py: Python<'_>, ops: &Bound<'_, PyAny>) -> PyResult<Arc<TextPatch>> {
    let key = cacheable_text(ops);
    if let Some(bytes) = key {
        let cache = TEXT_PATCHES.lock().unwrap_or_else(|e| e.into_inner());
        let hit = cache.iter().rev().find(|t| {
            t.parsed.input.object().as_ptr() == ops.as_ptr() || t.parsed.input.bytes() == bytes
        });
        if let Some(t) = hit {
            return Ok(t.clone());
        }
    }
    let parsed = super::doc::parse(py, ops, false, 1024)?.parsed;
    let doc = parsed.doc();
    let root = doc.root();
    let ops_read = match doc.array_items(root) {
        Ok(items) => Some(
            items
                .map(|c| read_text_op(py, &parsed, c))
                .collect::<PyResult<Vec<_>>>()?,
        ),
        Err(_) => None,
    };
    let t = Arc::new(TextPatch {
        parsed: parsed.clone(),
        ops: ops_read,
    });
    if key.is_some() {
        let mut cache = TEXT_PATCHES.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= TEXT_PATCH_SLOTS {
            // Dropped after the lock is released (it holds a Python object).
            let oldest = cache.remove(0);
            drop(cache);
            drop(oldest);
            TEXT_PATCHES
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(t.clone());
        } else {
            cache.push(t.clone());
        }
    }
    Ok(t)
}

/// Op `c` of a patch given as JSON text, read from its index (no view of
/// the patch is made); `Err(message)` when it is malformed.
fn read_text_op(
    py: Python<'_>,
    parsed: &Arc<Parsed>,
    c: Cursor,
) -> PyResult<Result<TextOp, String>> {
    let doc = parsed.doc();
    /// A failed read: a malformed op (kept, raised in its turn) or an
    /// error of Python's (raised now).
    fn bad<T>(m: Step<()>) -> PyResult<Result<T, String>> {
        match m {
            Err(Fail::Patch(msg)) => Ok(Err(msg)),
            Err(Fail::Py(e)) => Err(e),
            Ok(()) => unreachable!("called with a failure"),
        }
    }
    if doc.type_of(c) != JsonType::Object {
        return bad(fail("an op must be an object"));
    }
    // The first occurrence of each member, in one walk.
    let (mut op, mut path, mut value, mut from) = (None, None, None, None);
    let items = doc
        .object_items(c)
        .map_err(|e| access_error(py, e, &parsed.input, ""))?;
    for (raw, v) in items {
        // Keys are compared unescaped (`"o\u0070"` is `op`).
        let k: Cow<[u8]> = if raw.contains(&b'\\') {
            match doc.key_str(raw) {
                Ok(k) => Cow::Owned(k.into_owned().into_bytes()),
                Err(e) => return Err(access_error(py, e, &parsed.input, "")),
            }
        } else {
            Cow::Borrowed(raw)
        };
        let slot = match &*k {
            b"op" => &mut op,
            b"path" => &mut path,
            b"value" => &mut value,
            b"from" => &mut from,
            _ => continue,
        };
        slot.get_or_insert(v);
    }
    let text = |at: Option<Cursor>, name: &str| -> PyResult<Result<Box<str>, String>> {
        let Some(at) = at else {
            return bad(missing(name));
        };
        match doc
            .value(at)
            .map_err(|e| access_error(py, e, &parsed.input, ""))?
        {
            Value::String(s) => Ok(Ok(s.into())),
            _ => bad(not_text(name)),
        }
    };
    let name = match text(op, "op")? {
        Ok(n) => n,
        Err(m) => return Ok(Err(m)),
    };
    let Some(kind) = Op::parse(&name) else {
        return bad(unknown(&name));
    };
    let path = match text(path, "path")? {
        Ok(p) => p,
        Err(m) => return Ok(Err(m)),
    };
    if kind.needs_value() && value.is_none() {
        return bad(no_value(&name));
    }
    let from = if kind.needs_from() {
        match text(from, "from")? {
            Ok(f) => Some(f),
            Err(m) => return Ok(Err(m)),
        }
    } else {
        None
    };
    // The pointers last, as for ops given as dicts ([`read_op`]).
    let split = |t: &str| parse_pointer(py, t);
    let path = match split(&path) {
        Ok(p) => p,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let from = match from.as_deref().map(split).transpose() {
        Ok(f) => f,
        Err(e) => return Ok(Err(e.to_string())),
    };
    Ok(Ok(TextOp {
        kind,
        path,
        from,
        value: value.filter(|_| kind.needs_value()),
    }))
}

fn is_text(v: &Bound<'_, PyAny>) -> bool {
    v.is_instance_of::<PyBytes>()
        || v.is_instance_of::<PyString>()
        || v.is_instance_of::<PyByteArray>()
        || v.is_instance_of::<pyo3::types::PyMemoryView>()
}

/// The error for `ops` of a type `qjson.patch` does not take.
#[cold]
#[inline(never)]
fn not_ops(ops: &Bound<'_, PyAny>) -> PyErr {
    match ops.get_type().name() {
        Ok(name) => PyTypeError::new_err(format!(
            "qjson.patch: ops must be a list of dicts or JSON text, not {name}"
        )),
        Err(e) => e,
    }
}

/// Op `i` failed with `f`: undo the ops before it (`journal`) and give
/// the error to raise (out of line: the rare case).
#[cold]
#[inline(never)]
fn failed(journal: &mut Journal<'_>, i: usize, f: Fail) -> PyErr {
    let py = journal.py;
    if let Err(e) = std::mem::replace(journal, Journal::new(py)).undo() {
        return e;
    }
    match f {
        Fail::Patch(msg) => patch_error(py, &format!("op {i}: {msg}"), Some(i)),
        Fail::Py(e) => e,
    }
}

/// `qjson.patch(target, ops) -> target`: RFC 6902, atomic.
#[pyfunction]
pub(crate) fn patch<'py>(
    target: &Bound<'py, PyAny>,
    ops: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = target.py();
    let mut doc = Doc {
        root: target.clone(),
        journal: Journal::new(py),
    };
    // Op `i` of `n`: read, then applied; on a failure, undo and raise.
    if is_text(ops) {
        let text = text_patch(py, ops)?;
        let Some(text_ops) = &text.ops else {
            return Err(patch_error(py, "a JSON Patch is an array of ops", None));
        };
        let n = text_ops.len();
        for (i, op) in text_ops.iter().enumerate() {
            let done = match op {
                Ok(op) => op
                    .op_in(py, &text.parsed)
                    .and_then(|op| doc.apply(op, i + 1 == n)),
                Err(msg) => fail(msg.as_str()),
            };
            if let Err(f) = done {
                return Err(failed(&mut doc.journal, i, f));
            }
        }
    } else if ops.is_instance_of::<PyList>() || ops.is_instance_of::<PyTuple>() {
        let interned = names(py);
        // The ops as they are now (the caller's list is not read again),
        // gathered in place: a list made by `collect` and returned was
        // copied 16 bytes at a time right after its 8-byte writes, which
        // waits on store forwarding (see `read_apply`).
        let mut list: SmallVec<[Bound<'py, PyAny>; 8]> = SmallVec::new();
        match ops.cast::<PyList>() {
            Ok(l) => list.extend(l.iter()),
            Err(_) => list.extend(ops.cast::<PyTuple>()?.iter()),
        }
        let ops = &list;
        for (i, op) in ops.iter().enumerate() {
            if let Err(f) = read_apply(&mut doc, op, interned, i + 1 == ops.len()) {
                return Err(failed(&mut doc.journal, i, f));
            }
        }
    } else if let Ok(a) = ops.cast_exact::<Array>() {
        let interned = names(py);
        let ops = (0..array_len(a)?)
            .map(|i| Ok(array_get(a, i)?.into_bound(py)))
            .collect::<PyResult<Vec<_>>>()?;
        for (i, op) in ops.iter().enumerate() {
            if let Err(f) = read_apply(&mut doc, op, interned, i + 1 == ops.len()) {
                return Err(failed(&mut doc.journal, i, f));
            }
        }
    } else {
        return Err(not_ops(ops));
    }
    Ok(doc.root)
}

// -------------------------------------------------------------- merge patch

/// A value of a merge patch: a Python value (dict, `Object`, ...), or a
/// value of a patch given as JSON text, read from the text's index (no
/// view of the patch is made; what is added becomes a fresh view of the
/// text, shared with nothing).
#[derive(Clone)]
enum Part<'a, 'py> {
    Py(Bound<'py, PyAny>),
    Text(&'a Arc<Parsed>, Cursor),
}

/// The members of a merge patch's object: a small patch's without a heap
/// allocation.
type Members<'a, 'py> = SmallVec<[(Bound<'py, PyString>, Part<'a, 'py>); 4]>;

impl<'a, 'py> Part<'a, 'py> {
    fn is_null(&self) -> bool {
        match self {
            Part::Py(v) => v.is_none(),
            Part::Text(p, c) => p.doc().type_of(*c) == JsonType::Null,
        }
    }

    fn is_object(&self) -> bool {
        match self {
            Part::Py(v) => is_object(v),
            Part::Text(p, c) => p.doc().type_of(*c) == JsonType::Object,
        }
    }

    /// The members of an object (for a repeated key in a text, the first).
    fn items(&self, py: Python<'py>) -> PyResult<Members<'a, 'py>> {
        let key_error = || PyTypeError::new_err("qjson.merge_patch: object keys must be str");
        let mut out = Members::new();
        match self {
            // An exact dict is walked in place; anything else (an `Object`,
            // a dict subclass) through its own `items()`.
            Part::Py(v) => {
                if let Ok(d) = v.cast_exact::<PyDict>() {
                    dict_members(d, |k, x| out.push((k, Part::Py(x))))?;
                    return Ok(out);
                }
                for item in v.call_method0("items")?.try_iter()? {
                    let (k, x): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
                    out.push((
                        k.cast_into::<PyString>().map_err(|_| key_error())?,
                        Part::Py(x),
                    ));
                }
            }
            Part::Text(p, c) => {
                let doc = p.doc();
                let err = |e| access_error(py, e, &p.input, "");
                for m in doc.distinct_items(*c).map_err(err)? {
                    let (_, raw, at) = m.map_err(err)?;
                    let k = doc.key_str(raw).map_err(err)?;
                    out.push((new_str(py, &k), Part::Text(p, at)));
                }
            }
        }
        Ok(out)
    }

    /// The value as the document's own (see [`own`]).
    fn fresh(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            // A merge value: a too-deep error names qjson.merge_patch,
            // as the Lua edge's does.
            Part::Py(v) => own_at(v, 0, "qjson.merge_patch"),
            Part::Text(p, c) => Ok(convert::value(py, p, *c)?.into_bound(py)),
        }
    }
}

/// Whether an object patch holds a null member at any depth of its
/// objects (arrays are values, nulls inside them are kept).
fn has_null_member(py: Python<'_>, v: &Part<'_, '_>, depth: usize) -> PyResult<bool> {
    if depth > MAX_DEPTH || (depth > 32 && stack::low()) {
        return Err(PyValueError::new_err(
            "qjson.merge_patch: patch nested too deeply",
        ));
    }
    for (_, x) in v.items(py)? {
        if x.is_null() || (x.is_object() && has_null_member(py, &x, depth + 1)?) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// MergePatch({}, patch): the patch object with its null members dropped.
fn merged_new<'py>(
    py: Python<'py>,
    patch: &Part<'_, 'py>,
    depth: usize,
) -> PyResult<Bound<'py, PyAny>> {
    if let Part::Py(v) = patch {
        // The common added value, a dict of non-null scalars under str
        // keys (`{"tenant": "acme"}`): one walk, one C-level copy.
        if let Ok(d) = v.cast_exact::<PyDict>() {
            if plain_members(d) {
                return Ok(d.copy()?.into_any());
            }
        }
    }
    if !patch.is_object() || !has_null_member(py, patch, depth)? {
        return patch.fresh(py);
    }
    let out = PyDict::new(py);
    for (k, x) in patch.items(py)? {
        if !x.is_null() {
            out.set_item(k, merged_new(py, &x, depth + 1)?)?;
        }
    }
    Ok(out.into_any())
}

/// Whether every key of exact dict `d` is an exact `str` and every value
/// a scalar ([`is_scalar`]) other than `None`: then MergePatch({}, d) is
/// a copy of `d`.
fn plain_members(d: &Bound<'_, PyDict>) -> bool {
    every_member(d, |k, v| {
        k.is_exact_instance_of::<PyString>() && !v.is_none() && is_scalar(&v)
    })
}

/// Apply object `patch` to object `target` in place.
fn merge_into<'py>(
    journal: &mut Journal<'py>,
    target: &Node<'py>,
    patch: &Part<'_, 'py>,
    depth: usize,
) -> PyResult<()> {
    let py = journal.py;
    if depth > MAX_DEPTH || (depth > 32 && stack::low()) {
        return Err(PyValueError::new_err(
            "qjson.merge_patch: patch nested too deeply",
        ));
    }
    if let Part::Py(v) = patch {
        if let Ok(d) = v.cast_exact::<PyDict>() {
            // An exact dict's members as two lists of pointers, made here
            // (not returned from a call): a list of (key, `Part`) pairs,
            // each written field by field and then copied and read 16
            // bytes at a time, waited on store forwarding for every member
            // (about 4% of the 2 KB merge row's time, perf, PGO build).
            let mut keys: SmallVec<[Bound<'py, PyString>; 4]> = SmallVec::new();
            let mut vals: SmallVec<[Bound<'py, PyAny>; 4]> = SmallVec::new();
            dict_members(d, |k, x| {
                keys.push(k);
                vals.push(x);
            })?;
            for (k, x) in keys.iter().zip(vals) {
                merge_member(journal, target, k, &Part::Py(x), depth)?;
            }
            return Ok(());
        }
    }
    for (k, x) in patch.items(py)? {
        merge_member(journal, target, &k, &x, depth)?;
    }
    Ok(())
}

/// The members of exact dict `d`, in order, each given to `push` (new
/// references); a `TypeError` when a key is not a `str`. The dict is walked
/// in place ([`Part::items`] and [`merge_into`]).
fn dict_members<'py>(
    d: &Bound<'py, PyDict>,
    mut push: impl FnMut(Bound<'py, PyString>, Bound<'py, PyAny>),
) -> PyResult<()> {
    let py = d.py();
    let mut keys_str = true;
    // SAFETY: `d` is an exact dict and the interpreter is attached.
    // `dict_each` gives borrowed references valid while the dict is not
    // changed; the walk runs no Python code and drops no object (a type
    // test on the raw key, pushes of new references), so the dict's entry
    // table is read once for the whole walk.
    unsafe {
        dict_each(d.as_ptr(), |k, x| {
            if pyo3::ffi::PyUnicode_Check(k) == 0 {
                keys_str = false;
                return false;
            }
            push(
                Bound::from_borrowed_ptr(py, k).cast_into_unchecked::<PyString>(),
                Bound::from_borrowed_ptr(py, x),
            );
            true
        });
    }
    if !keys_str {
        return Err(PyTypeError::new_err(
            "qjson.merge_patch: object keys must be str",
        ));
    }
    Ok(())
}

/// Member `k` of a merge patch, value `x`, applied to object `target`
/// ([`merge_into`]'s loop body, inlined in both its loops).
#[inline(always)]
fn merge_member<'py>(
    journal: &mut Journal<'py>,
    target: &Node<'py>,
    k: &Bound<'py, PyString>,
    x: &Part<'_, 'py>,
    depth: usize,
) -> PyResult<()> {
    let py = journal.py;
    if x.is_null() {
        // One lookup (the delete's): a container already saved is not
        // saved again, and saving one whose key is absent costs less
        // than asking first.
        journal.touch(target)?;
        target.delete(k)?;
        return Ok(());
    }
    // An object value merges into the member it names, when that is an
    // object too; the lookup that finds it absent also spares the set
    // its own (a view's miss walks every member).
    let mut absent = false;
    if x.is_object() {
        match target.member_to_edit(k)? {
            Some(cur) => {
                let cur = node(&cur);
                if cur.is_object() {
                    return merge_into(journal, &cur, x, depth + 1);
                }
            }
            None => absent = true,
        }
    }
    let v = merged_new(py, x, depth + 1)?;
    journal.touch(target)?;
    if absent {
        target.add_absent(k, v)
    } else {
        target.set(k, v)
    }
}

/// `qjson.merge_patch(target, patch) -> target`: RFC 7396.
#[pyfunction]
pub(crate) fn merge_patch<'py>(
    target: &Bound<'py, PyAny>,
    patch: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = target.py();
    // A text is parsed once and kept, as for `patch` ([`text_patch`]).
    let text = if is_text(patch) {
        Some(text_patch(py, patch)?)
    } else {
        None
    };
    let patch = match &text {
        Some(t) => Part::Text(&t.parsed, t.parsed.doc().root()),
        None => Part::Py(patch.clone()),
    };
    if !patch.is_object() {
        return patch.fresh(py);
    }
    let t = node(target);
    if !t.is_object() {
        return merged_new(py, &patch, 0);
    }
    let mut journal = Journal::new(py);
    if let Err(e) = merge_into(&mut journal, &t, &patch, 0) {
        journal.undo()?;
        return Err(e);
    }
    Ok(target.clone())
}

// ------------------------------------------------------------ number ops

#[derive(Clone, Copy)]
enum Arith {
    Add,
    Mul,
}

/// The number at `path` becomes `value + by` (or `value * by`), set where it
/// is (one overlay edit); returns the new value.
fn number_op<'py>(
    target: &Bound<'py, PyAny>,
    path: &str,
    by: &Bound<'py, PyAny>,
    how: Arith,
) -> PyResult<Bound<'py, PyAny>> {
    let py = target.py();
    if !is_number(by) {
        return Err(PyTypeError::new_err(format!(
            "qjson: the operand must be an int or a float, not {}",
            by.get_type().name()?
        )));
    }
    let segs: Vec<(usize, Segment)> = segments(path)
        .collect::<Result<_, _>>()
        .map_err(|e| PyValueError::new_err(format!("invalid path {path:?}: {e}")))?;
    let Some(((last_at, last), head)) = segs.split_last() else {
        return Err(PyValueError::new_err(
            "qjson: incr / mul need the path of a number inside the document",
        ));
    };
    let missing = |at: usize| path_error(py, path, at);
    // Where a segment leads in a container: a key or a position.
    enum Slot<'py> {
        Key(Bound<'py, PyString>),
        Pos(usize),
    }
    let locate = |n: &Node<'py>, at: usize, s: &Segment| -> PyResult<Slot<'py>> {
        let as_key = |b: &[u8]| key(py, b);
        match (s, n.is_object(), n.is_array()) {
            (Segment::Key(k) | Segment::Token(k), true, _) => {
                let k = as_key(k);
                if n.has(&k)? {
                    Ok(Slot::Key(k))
                } else {
                    Err(missing(at))
                }
            }
            (Segment::Index(i), _, true) => {
                let len = n.len()? as i64;
                let j = if *i < 0 { i + len } else { *i };
                if j < 0 || j >= len {
                    return Err(missing(at));
                }
                Ok(Slot::Pos(j as usize))
            }
            (Segment::Token(t), _, true) => array_index(t, n.len()?, Place::Existing)
                .map(Slot::Pos)
                .map_err(|_| missing(at)),
            _ => Err(missing(at)),
        }
    };
    let get = |n: &Node<'py>, p: &Slot<'py>| -> PyResult<Bound<'py, PyAny>> {
        match p {
            Slot::Key(k) => Ok(n.member(k)?.expect("checked present")),
            Slot::Pos(i) => n.element(*i),
        }
    };
    let mut at = node(target);
    for (off, s) in head {
        let p = locate(&at, *off, s)?;
        at = node(&get(&at, &p)?);
    }
    let p = locate(&at, *last_at, last)?;
    let old = get(&at, &p)?;
    if !is_number(&old) {
        return Err(PyTypeError::new_err(format!(
            "qjson: the value at {path:?} is not a number (it is {})",
            old.get_type().name()?
        )));
    }
    let new = match how {
        Arith::Add => old.add(by)?,
        Arith::Mul => old.mul(by)?,
    };
    match &p {
        Slot::Key(k) => at.set(k, new.clone())?,
        Slot::Pos(i) => at.replace(*i, new.clone())?,
    }
    Ok(new)
}

/// The `by` of `incr`: 1 when not given. An explicit `None` is not a
/// number and raises `TypeError`, as `value + None` would (ReJSON's
/// NUMINCRBY has no default at all; redis-py requires the number).
pub(crate) enum By<'py> {
    One,
    Given(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for By<'py> {
    type Error = PyErr;
    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(By::Given(obj.to_owned()))
    }
}

/// `qjson.incr(target, path, by=1)`: ReJSON NUMINCRBY.
#[pyfunction]
#[pyo3(signature = (target, path, by = By::One), text_signature = "(target, path, by=1)")]
pub(crate) fn incr<'py>(
    target: &Bound<'py, PyAny>,
    path: &str,
    by: By<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let by = match by {
        By::One => 1i64.into_pyobject(target.py())?.into_any(),
        By::Given(v) => v,
    };
    number_op(target, path, &by, Arith::Add)
}

/// `qjson.mul(target, path, by)`: ReJSON NUMMULTBY.
#[pyfunction]
pub(crate) fn mul<'py>(
    target: &Bound<'py, PyAny>,
    path: &str,
    by: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    number_op(target, path, by, Arith::Mul)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(patch, m)?)?;
    m.add_function(wrap_pyfunction!(merge_patch, m)?)?;
    m.add_function(wrap_pyfunction!(incr, m)?)?;
    m.add_function(wrap_pyfunction!(mul, m)?)?;
    Ok(())
}
