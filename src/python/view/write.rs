//! Writing views (`dumps`): the Python side of the core edit writer
//! (`crate::edit`, where the algorithm is described).
//!
//! [`write()`] writes a view, a `Doc` or any value to a [`Sink`] (`dumps`
//! implements it). A clean view (no edits in it or in any view cached
//! below it, see `mark_dirty`) is one copy of its original bytes; an
//! edited one goes to the core writer for its state (lazy with patches,
//! unfolded members, lazy array, unfolded slots) through [`Host`], which
//! writes new keys and values with the serializer and brings each edited
//! child view back here.

use super::super::doc::{Doc, Parsed};
use super::super::errors::decode_error;
use super::super::input::str_utf8;
use super::{dirty_now, err, mark_dirty, new_era, ArrState, Array, ObjState, Object};
use crate::doc::Cursor;
use crate::edit::{self, EditError, Out};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
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
/// `int`, `float`, `bool` or `None`.
fn is_plain_scalar(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_none()
        || obj.is_exact_instance_of::<PyString>()
        || obj.is_exact_instance_of::<PyInt>()
        || obj.is_exact_instance_of::<PyFloat>()
        || obj.is_exact_instance_of::<PyBool>()
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
