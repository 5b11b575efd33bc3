//! Writing views (`dumps`): the Python side of the core edit writer
//! (`crate::edit`, where the algorithm is described).
//!
//! [`write()`] writes a view, a `Doc` or any value to a [`Sink`] (`dumps`
//! implements it). A clean view (no edits in it or in any view cached
//! below it, see `mark_dirty`) is one copy of its original bytes; an
//! edited one goes to the core writer for its state (lazy with patches,
//! unfolded members, lazy array, unfolded slots) through [`Host`], which
//! writes new keys and values with the serializer and brings each edited
//! child view back here. A view of a document no view of which was ever
//! edited (`Input::ever_edited`: a flag every editing path sets first) is
//! one copy at once, whatever views are cached: the gateway's read and
//! forward (`d["messages"][0]["role"]`, then `dumps(d)`) walks nothing.
//! Before that, a tree of edited views whose edits
//! are all replaced plain scalars (`d["messages"][0]["content"] = x`) is
//! written as one splice of the input by [`write_flat`] (the same bytes
//! in one pass: see "flat splices" below).

use super::super::doc::{Doc, Parsed};
use super::super::errors::decode_error;
use super::super::input::str_utf8;
use super::{dirty_now, err, mark_dirty, new_era, ArrState, Array, ObjState, Object};
use crate::doc::repeats;
use crate::doc::Cursor;
use crate::edit::{self, EditError, Out};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
use smallvec::SmallVec;
use std::sync::Arc;

/// Where [`write()`] puts a view's bytes (implemented by `dumps`).
pub(crate) trait Sink<'py> {
    fn py(&self) -> Python<'py>;
    /// Copy `input[a..b]` of `parsed` (already validated).
    fn raw(&mut self, parsed: &Arc<Parsed>, a: usize, b: usize);
    fn byte(&mut self, b: u8);
    /// A JSON string literal for `key`.
    fn key(&mut self, key: &str);
    /// Any Python value, through the serializer.
    fn value(&mut self, v: &Bound<'py, PyAny>) -> PyResult<()>;
    /// Entering / leaving a container (cycle and depth checks).
    fn enter(&mut self, p: *mut ffi::PyObject) -> PyResult<()>;
    /// How many containers are open (the depth `enter` checks).
    fn depth(&self) -> usize;
    fn leave(&mut self);
}

/// Whether `obj` is written by [`write()`]: an `Object`, `Array` or `Doc`.
pub(crate) fn is_view(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_exact_instance_of::<Object>()
        || obj.is_exact_instance_of::<Array>()
        || obj.is_exact_instance_of::<Doc>()
}

/// The length of the input of the document whose root view (or `Doc`)
/// `obj` is, about the room a write of it needs, edits and all; `None`
/// for a view of a child (its output is much shorter than the input), any
/// other value, or a view borrowed mutably (which `write` reports).
#[cfg(not(feature = "abi3"))]
pub(crate) fn input_len(obj: &Bound<'_, PyAny>) -> Option<usize> {
    // (The root container is the first structural and the first
    // container: a child's cursor has neither.)
    let root = |at: Cursor| at.sidx == 0 && at.ord == 0;
    if let Ok(o) = obj.cast_exact::<Object>() {
        let me = o.try_borrow().ok()?;
        return root(me.at).then(|| me.parsed.input.bytes().len());
    }
    if let Ok(a) = obj.cast_exact::<Array>() {
        let me = a.try_borrow().ok()?;
        return root(me.at).then(|| me.parsed.input.bytes().len());
    }
    let d = obj.cast_exact::<Doc>().ok()?;
    Some(d.get().parsed.input.bytes().len())
}

/// Write `obj` (a view, a `Doc`, or any value) compactly: views as their
/// original bytes with edits spliced in, a `Doc` as its input.
pub(crate) fn write<'py, S: Sink<'py>>(sink: &mut S, obj: &Bound<'py, PyAny>) -> PyResult<()> {
    if let Ok(o) = obj.cast_exact::<Object>() {
        return write_object(sink, o);
    }
    if let Ok(a) = obj.cast_exact::<Array>() {
        return write_array(sink, a);
    }
    if let Ok(d) = obj.cast_exact::<Doc>() {
        let d = d.get();
        // Edits made through `Doc.root` are part of the document.
        if let Some(root) = d.root_view() {
            return write(sink, &root.bind(obj.py()).clone());
        }
        let doc = d.parsed.doc();
        return edit::write_clean(&doc, doc.root(), &mut Host::new(sink, &d.parsed));
    }
    let done = sink.value(obj);
    if !is_plain_scalar(obj) {
        // The serializer may have run Python code, which may have edited
        // views marked before (see `ERA`).
        new_era();
    }
    done
}

/// A value whose serialization runs no Python code: an exact `str`,
/// `float`, `bool` or `None`, or an exact `int` within i64. (A larger int
/// is written through objects the serializer makes, and an allocation may
/// start the collector, whose finalizers run Python code.)
fn is_plain_scalar(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_none()
        || obj.is_exact_instance_of::<PyString>()
        || (obj.is_exact_instance_of::<PyInt>() && int_fits_i64(obj))
        || obj.is_exact_instance_of::<PyFloat>()
        || obj.is_exact_instance_of::<PyBool>()
}

/// Whether exact int `obj` fits in an i64 (the serializer's allocation-free
/// path).
fn int_fits_i64(obj: &Bound<'_, PyAny>) -> bool {
    let mut overflow = 0;
    // SAFETY: `obj` is an exact int (no `__index__` runs, nothing is
    // raised: an int out of range only sets `overflow`) and the
    // interpreter is attached (we hold a `Bound`).
    unsafe { ffi::PyLong_AsLongLongAndOverflow(obj.as_ptr(), &mut overflow) };
    overflow == 0
}

/// The core writer's [`Out`] over a [`Sink`], for the views of one
/// document.
struct Host<'s, 'p, S> {
    sink: &'s mut S,
    parsed: &'p Arc<Parsed>,
}

impl<'s, 'p, S> Host<'s, 'p, S> {
    fn new(sink: &'s mut S, parsed: &'p Arc<Parsed>) -> Self {
        Host { sink, parsed }
    }
}

impl<'py, S: Sink<'py>> Out for Host<'_, '_, S> {
    type Key = Py<PyString>;
    type Value = Py<PyAny>;
    type Error = PyErr;

    #[inline]
    fn copy(&mut self, a: usize, b: usize) {
        self.sink.raw(self.parsed, a, b);
    }

    #[inline]
    fn byte(&mut self, b: u8) {
        self.sink.byte(b);
    }

    fn key_text(&mut self, key: &str) {
        self.sink.key(key);
    }

    fn key(&mut self, key: &Py<PyString>) -> PyResult<()> {
        let py = self.sink.py();
        self.sink.key(str_utf8(key.bind(py))?);
        Ok(())
    }

    fn value(&mut self, v: &Py<PyAny>) -> PyResult<()> {
        let v = v.bind(self.sink.py());
        // The usual new value (a str, a number): straight to the
        // serializer, without asking whether it is a view first.
        if is_plain_scalar(v) {
            return self.sink.value(v);
        }
        write(self.sink, v)
    }

    fn child(&mut self, v: &Py<PyAny>) -> PyResult<()> {
        let py = self.sink.py();
        write_edited(self.sink, v.bind(py))
    }

    fn edited(&mut self, v: &Py<PyAny>) -> PyResult<Option<Cursor>> {
        dirty_view_cursor(v.bind(self.sink.py()))
    }

    #[cold]
    fn fail(&mut self, e: EditError) -> PyErr {
        let py = self.sink.py();
        match e {
            EditError::Access(e) => err(py, self.parsed, e),
            EditError::Invalid(e) => decode_error(py, e, &self.parsed.input),
        }
    }
}

/// The cursor of a cached child view (always an `Object` or `Array`) when
/// it holds edits; `None` when it is untouched.
fn dirty_view_cursor(v: &Bound<'_, PyAny>) -> PyResult<Option<Cursor>> {
    let py = v.py();
    if let Ok(o) = v.cast_exact::<Object>() {
        let o = o.try_borrow()?;
        return Ok(dirty_now(py, &*o).then_some(o.at));
    }
    if let Ok(a) = v.cast_exact::<Array>() {
        let a = a.try_borrow()?;
        return Ok(dirty_now(py, &*a).then_some(a.at));
    }
    Err(PyTypeError::new_err("qjson: a cached child is not a view"))
}

/// Write a cached child view marked dirty (its check is not repeated).
fn write_edited<'py, S: Sink<'py>>(sink: &mut S, v: &Bound<'py, PyAny>) -> PyResult<()> {
    if let Ok(o) = v.cast_exact::<Object>() {
        return write_object_edits(sink, o, &*o.try_borrow()?);
    }
    if let Ok(a) = v.cast_exact::<Array>() {
        return write_array_edits(sink, a, &*a.try_borrow()?);
    }
    write(sink, v)
}

fn write_object<'py, S: Sink<'py>>(sink: &mut S, o: &Bound<'py, Object>) -> PyResult<()> {
    let me = o.try_borrow()?;
    if let Some(done) = write_flat(sink, &me.parsed, me.at, Flat::Object(&me.state)) {
        return done;
    }
    if !mark_dirty(sink.py(), &*me) {
        let doc = me.parsed.doc();
        return edit::write_clean(&doc, me.at, &mut Host::new(sink, &me.parsed));
    }
    write_object_edits(sink, o, &me)
}

fn write_object_edits<'py, S: Sink<'py>>(
    sink: &mut S,
    o: &Bound<'py, Object>,
    me: &Object,
) -> PyResult<()> {
    sink.enter(o.as_ptr())?;
    let doc = me.parsed.doc();
    let mut host = Host::new(&mut *sink, &me.parsed);
    match &me.state {
        ObjState::Lazy { views, patches, .. } => {
            edit::write_lazy_object(&doc, me.at, patches.core(), views.values(), &mut host)?
        }
        ObjState::Edited(m) => edit::write_members(&doc, me.at, m, &mut host)?,
    }
    sink.leave();
    Ok(())
}

fn write_array<'py, S: Sink<'py>>(sink: &mut S, a: &Bound<'py, Array>) -> PyResult<()> {
    let me = a.try_borrow()?;
    if let Some(done) = write_flat(sink, &me.parsed, me.at, Flat::Array(&me.state)) {
        return done;
    }
    if !mark_dirty(sink.py(), &*me) {
        let doc = me.parsed.doc();
        return edit::write_clean(&doc, me.at, &mut Host::new(sink, &me.parsed));
    }
    write_array_edits(sink, a, &me)
}

fn write_array_edits<'py, S: Sink<'py>>(
    sink: &mut S,
    a: &Bound<'py, Array>,
    me: &Array,
) -> PyResult<()> {
    sink.enter(a.as_ptr())?;
    let doc = me.parsed.doc();
    let mut host = Host::new(&mut *sink, &me.parsed);
    match &me.state {
        ArrState::Lazy { views } => edit::write_lazy_array(&doc, me.at, views.values(), &mut host)?,
        ArrState::Inserted(ins) => {
            edit::write_lazy_array_inserts(&doc, me.at, ins.views.values(), &ins.new, &mut host)?
        }
        ArrState::Edited(s) => edit::write_slots(&doc, me.at, s, &mut host)?,
    }
    sink.leave();
    Ok(())
}

// ------------------------------------------------------------ flat splices

/// Edited views whose edits are all replaced members in lazy containers
/// (`messages[0].content = x`, `model = y`): written as one splice of the
/// input with each new value at its place, not level by level.
///
/// The level-by-level writer gives such a tree of views, for each edited
/// container, a copy of its bytes up to its first edited part and after
/// its last, with the edited child's own write in between: every range it
/// copies meets the next end to start, and the output is the input with
/// each replaced value's span swapped for the new value. This path finds
/// those spans first, by one walk over the cached views, and writes the
/// result as that splice: a copy between each two new values. The same
/// walk is the dirty check: a view is edited when it has patches or an
/// edited child (as [`mark_dirty`] finds), so a tree the walk finds
/// unedited is written as one copy ([`edit::write_clean`], as after
/// `mark_dirty`'s "clean"), and `mark_dirty` runs only when the walk
/// gives up. Each container must be
/// one the level-by-level writer splices this way, checked by the same
/// tests: a lazy object whose patches are all replacements in document
/// order in a table of distinct keys, with no edited child
/// (`splice_replaced`), or with no patch and edited children whose keys
/// do not repeat (`splice_object`'s `edited_keys_once`); a lazy array
/// with edited children; a strict document. Any other view met (an
/// unfolded container, an added or deleted member, a lazy document, a
/// cached child that is not a view or is borrowed, a cached view deeper
/// than [`FLAT_DEPTH`] below the root) sends the whole write to
/// `mark_dirty` and the level-by-level writer, with nothing written yet.
///
/// The new values must be plain scalars ([`is_plain_scalar`]: an exact
/// `str`, `float`, `bool` or `None`, an exact `int` within i64), whose
/// serialization runs no Python code: the spans and values found are
/// written after the views were released, which gives the level-by-level
/// writer's bytes only while nothing can change them. The values are held
/// (a reference each) until written, so even a finalizer that ran anyway
/// could not free one under the writer. Nesting is bounded by
/// [`FLAT_DEPTH`]: then the level-by-level writer's depth and cycle
/// checks (the serializer's `enter`) could not have failed either.
///
/// The root's own shape is checked first ([`flat_root`]: it must have no
/// patch of its own; no span, no list), so a write the flat path does not
/// take (a JSON Patch or merge patch, which edit the root; `model = y`,
/// already one splice) costs one test.
const FLAT_DEPTH: u32 = 8;

/// The edits of a flat splice: a replaced value's span and its new value
/// (a reference of the writer's own: see [`FLAT_DEPTH`]). A `Bound`, not
/// a `Py`: its drop is the decrement itself, where a `Py`'s first asks
/// the thread whether it is attached (a thread-local lookup per value).
type FlatEdits<'py> = SmallVec<[(u32, u32, Bound<'py, PyAny>); 4]>;

/// The serializer's depth under which a flat splice is written: the
/// level-by-level writer's `enter` checks (cycles from the serializer's
/// `CYCLE_CHECK_DEPTH`, 32, on; the depth limit, 1024) cannot fail there.
const FLAT_ROOM: usize = 32;

/// Whether a lazy object's patches are all replacements of original
/// members in document order (`splice_replaced`'s shape; true for none).
#[inline]
fn replacements_in_order(patches: &edit::Patches<Py<PyString>, Py<PyAny>>) -> bool {
    let mut last = None;
    for p in patches.iter() {
        match (p.orig, &p.value) {
            (Some(c), Some(_)) if last.is_none_or(|l| l < c.start) => last = Some(c.start),
            _ => return false,
        }
    }
    true
}

/// The cheap test of a root view for [`write_flat`]: a lazy array, or a
/// lazy object without patches of its own (a patched root with no edited
/// child is already one splice, `splice_replaced`, cheaper than a walk;
/// one with an edited child the flat path does not take: a merge patch
/// that replaces a member and edits a nested object, say); `None` when
/// the flat path does not take it. Only a root that passes can belong to
/// a document never edited (patches, an unfolded or an inserted-into
/// state are made only by editing paths, which mark the document first:
/// `Input::mark_edited`), so [`write_flat`] asks `Input::ever_edited`
/// after this test: a document never edited is one copy, with no walk.
#[inline]
fn flat_root(state: Flat<'_>) -> Option<()> {
    match state {
        Flat::Object(ObjState::Lazy { patches, .. }) if patches.core().is_empty() => Some(()),
        Flat::Array(ArrState::Lazy { .. }) => Some(()),
        _ => None,
    }
}

/// A view's state, for [`write_flat`].
#[derive(Clone, Copy)]
enum Flat<'a> {
    Object(&'a ObjState),
    Array(&'a ArrState),
}

/// Write the view at `at` of `parsed`, in state `state`, as a flat splice
/// (see [`FLAT_DEPTH`]) when its edits are all of that kind, or as one
/// copy when the walk finds none; `None`, with nothing written, when not.
#[inline]
fn write_flat<'py, S: Sink<'py>>(
    sink: &mut S,
    parsed: &Arc<Parsed>,
    at: Cursor,
    state: Flat<'_>,
) -> Option<PyResult<()>> {
    flat_root(state)?;
    if !parsed.input.ever_edited() {
        // No view of the document was ever edited (`Input::ever_edited`):
        // every view is as made, whatever views are cached below.
        let doc = parsed.doc();
        return Some(edit::write_clean(&doc, at, &mut Host::new(sink, parsed)));
    }
    write_flat_walked(sink, parsed, at, state)
}

/// [`write_flat`] past the root's test: the walk, then the splice.
#[inline(never)]
fn write_flat_walked<'py, S: Sink<'py>>(
    sink: &mut S,
    parsed: &Arc<Parsed>,
    at: Cursor,
    state: Flat<'_>,
) -> Option<PyResult<()>> {
    let doc = parsed.doc();
    if doc.index().is_lazy() || sink.depth() + FLAT_DEPTH as usize >= FLAT_ROOM {
        return None;
    }
    let py = sink.py();
    let mut edits = FlatEdits::new();
    // (`flat_root` took only a lazy root without patches.)
    let (views, keys) = match state {
        Flat::Object(ObjState::Lazy { views, patches, .. }) => {
            (views, (!patches.core().table.distinct()).then_some(at))
        }
        Flat::Array(ArrState::Lazy { views }) => (views, None),
        _ => return None,
    };
    let edited = flat_views(py, &doc, views, keys, 1, true, &mut edits)?;
    if !edited {
        // Nothing edited below: one copy (what `mark_dirty` then
        // `write_clean` give).
        return Some(edit::write_clean(&doc, at, &mut Host::new(sink, parsed)));
    }
    if edits.len() > 1 {
        edits.sort_unstable_by_key(|&(a, ..)| a);
    }
    let (mut pos, end) = doc.container_span(at);
    for (a, b, v) in &edits {
        sink.raw(parsed, pos, *a as usize);
        if let Err(e) = sink.value(v) {
            return Some(Err(e));
        }
        pos = *b as usize;
    }
    sink.raw(parsed, pos, end);
    Some(Ok(()))
}

/// [`write_flat`]'s walk over the views `views` cached by a lazy
/// container at `depth` below the root (one cast and borrow apiece, each
/// child's own cached views walked by recursion): whether one of them is
/// edited, its replaced values put into `edits`; `None` when one is not
/// a view, is borrowed, lies deeper than [`FLAT_DEPTH`] (the dirty walk
/// of `mark_dirty` takes those trees), is not a lazy container, holds
/// patches other than replacements of distinct keys in document order by
/// plain scalars (`splice_replaced`'s shape), or is edited where that is
/// not allowed: `edit` false (below a patched object), or, with `keys`
/// (the container is an object whose keys are not known distinct), an
/// edited child whose key repeats after it.
fn flat_views<'py>(
    py: Python<'py>,
    doc: &crate::doc::Doc<'_>,
    views: &super::cache::ViewCache,
    keys: Option<Cursor>,
    depth: u32,
    edit: bool,
    edits: &mut FlatEdits<'py>,
) -> Option<bool> {
    let mut edited = false;
    for v in views.values() {
        if depth >= FLAT_DEPTH {
            return None;
        }
        let v = v.bind(py);
        let (at, e) = if let Ok(o) = v.cast_exact::<Object>() {
            let o = o.try_borrow().ok()?;
            let ObjState::Lazy { views, patches, .. } = &o.state else {
                return None;
            };
            let patches = patches.core();
            let e = if patches.is_empty() {
                // Edited children, each key its only occurrence (known
                // when the member table is built).
                let keys = (!patches.table.distinct()).then_some(o.at);
                !views.is_empty() && flat_views(py, doc, views, keys, depth + 1, true, edits)?
            } else {
                flat_replaced(py, doc, patches, edits)?;
                // No edited child (`edit` false: one gives `None`).
                if !views.is_empty() {
                    flat_views(py, doc, views, None, depth + 1, false, edits)?;
                }
                true
            };
            (o.at, e)
        } else {
            let a = v.cast_exact::<Array>().ok()?.try_borrow().ok()?;
            let ArrState::Lazy { views } = &a.state else {
                return None;
            };
            let e = !views.is_empty() && flat_views(py, doc, views, None, depth + 1, true, edits)?;
            (a.at, e)
        };
        if e {
            if !edit || keys.is_some_and(|k| repeats::repeated_later(doc, k, at) != Some(false)) {
                return None;
            }
            edited = true;
        }
    }
    Some(edited)
}

/// A patched lazy object's replacements into `edits` when its patches
/// have `splice_replaced`'s shape (replacements in document order, keys
/// distinct) and its new values are plain scalars; `None` otherwise.
fn flat_replaced<'py>(
    py: Python<'py>,
    doc: &crate::doc::Doc<'_>,
    patches: &edit::Patches<Py<PyString>, Py<PyAny>>,
    edits: &mut FlatEdits<'py>,
) -> Option<()> {
    if !patches.table.distinct() || !replacements_in_order(patches) {
        return None;
    }
    for p in patches.iter() {
        if let (Some(c), Some(v)) = (p.orig, &p.value) {
            let v = v.bind(py);
            if !is_plain_scalar(v) {
                return None;
            }
            edits.push((c.start, doc.span(c).1 as u32, v.clone()));
        }
    }
    Some(())
}
