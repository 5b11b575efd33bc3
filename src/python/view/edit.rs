//! Hooks into the overlay for whole-document edits (`qjson.patch`,
//! `merge_patch`, `incr`): reads and writes of one child by key or
//! position, the same operations item access performs, and snapshots of a
//! view's overlay so that a failed patch can be undone.
//!
//! A snapshot ([`Saved`]) is a copy of one view's edit state: its cached
//! child views, its patch list or its unfolded slots (the Python objects
//! they hold are shared, not copied); a view as made (lazy, no patches,
//! no cached views: the common case, a patch's first edit of a container)
//! is saved as just that, with nothing copied. Taking one costs O(edits +
//! cached views) of that view (O(children) once it is unfolded), never
//! O(document). Restoring puts the state back, so the view reads and
//! writes exactly as before: an untouched view is again one copy of its
//! original bytes. Child views the caller holds are the same objects in
//! the restored state; their own edits are undone by their own snapshots.

use super::super::share::Share;
use super::patch::KeyState;
use super::{lazy_child, mark_dirty, new_era, ArrState, Array, ObjState, Object, Slot, ViewCache};
use crate::python::input::{key_utf8, str_utf8};
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::sync::atomic::Ordering::Relaxed;

/// One view's overlay, as it was.
pub(crate) struct Saved(Kept);

/// What a snapshot keeps of a view's state.
///
/// The states are boxed: a snapshot of a view as made (the common case)
/// is then two words, cheap to move into a patch's journal and to drop.
enum Kept {
    Object(Py<Object>, Box<ObjState>),
    Array(Py<Array>, Box<ArrState>),
    /// A view as made (lazy, no patches, no cached child views): nothing
    /// to copy, restored as made.
    FreshObject(Py<Object>),
    FreshArray(Py<Array>),
}

impl ObjState {
    fn dup(&self, py: Python<'_>) -> ObjState {
        match self {
            ObjState::Lazy {
                views,
                distinct,
                patches,
            } => ObjState::Lazy {
                views: views.dup(py),
                distinct: *distinct,
                patches: patches.dup(py),
            },
            ObjState::Edited(m) => ObjState::Edited(m.dup_with(|v| v.clone_ref(py))),
        }
    }
}

impl ArrState {
    fn dup(&self, py: Python<'_>) -> ArrState {
        match self {
            ArrState::Lazy { views } => ArrState::Lazy {
                views: views.dup(py),
            },
            ArrState::Inserted(ins) => ArrState::Inserted(ins.dup(py)),
            ArrState::Edited(s) => ArrState::Edited(
                s.iter()
                    .map(|s| s.dup_with(&mut |v| v.clone_ref(py)))
                    .collect(),
            ),
        }
    }
}

/// A snapshot of `v`'s overlay; `None` when `v` is not a view.
pub(crate) fn snapshot(v: &Bound<'_, PyAny>) -> PyResult<Option<Saved>> {
    if let Ok(o) = v.cast_exact::<Object>() {
        let me = o.try_borrow()?;
        let kept = if me.unedited().is_some_and(ViewCache::is_empty) {
            Kept::FreshObject(o.clone().unbind())
        } else {
            object_state(o, &me)
        };
        return Ok(Some(Saved(kept)));
    }
    if let Ok(a) = v.cast_exact::<Array>() {
        let me = a.try_borrow()?;
        let kept = if me.unedited().is_some_and(ViewCache::is_empty) {
            Kept::FreshArray(a.clone().unbind())
        } else {
            array_state(a, &me)
        };
        return Ok(Some(Saved(kept)));
    }
    Ok(None)
}

/// [`snapshot`] of an object view with edits or cached views: its state
/// copied (out of line: a patch's first edit of a container usually
/// finds it as made).
#[inline(never)]
fn object_state(o: &Bound<'_, Object>, me: &Object) -> Kept {
    Kept::Object(o.clone().unbind(), Box::new(me.state.dup(o.py())))
}

/// [`snapshot`] of an array view with edits or cached views (see
/// [`object_state`]).
#[inline(never)]
fn array_state(a: &Bound<'_, Array>, me: &Array) -> Kept {
    Kept::Array(a.clone().unbind(), Box::new(me.state.dup(a.py())))
}

impl Saved {
    /// Put the overlay back as it was when the snapshot was taken.
    pub(crate) fn restore(self, py: Python<'_>) -> PyResult<()> {
        // The states replaced here are dropped after the borrow ends (their
        // views may run code when freed).
        let old = match self.0 {
            Kept::FreshObject(o) => {
                return Saved(Kept::Object(o, Box::new(fresh_object()))).restore(py)
            }
            Kept::FreshArray(a) => {
                let state = ArrState::Lazy {
                    views: ViewCache::default(),
                };
                return Saved(Kept::Array(a, Box::new(state))).restore(py);
            }
            Kept::Object(o, state) => {
                let mut me = o.bind(py).try_borrow_mut()?;
                me.parsed.input.mark_edited();
                me.dirty_mark.store(0, Relaxed);
                Replaced::Object(std::mem::replace(&mut me.state, *state))
            }
            Kept::Array(a, state) => {
                let mut me = a.bind(py).try_borrow_mut()?;
                me.parsed.input.mark_edited();
                me.dirty_mark.store(0, Relaxed);
                Replaced::Array(std::mem::replace(&mut me.state, *state))
            }
        };
        drop(old);
        new_era();
        Ok(())
    }
}

/// The state of an object view as made.
fn fresh_object() -> ObjState {
    ObjState::Lazy {
        views: ViewCache::default(),
        distinct: None,
        patches: Default::default(),
    }
}

enum Replaced {
    Object(#[allow(dead_code)] ObjState),
    Array(#[allow(dead_code)] ArrState),
}

/// A new view of the same original value as `v` when `v` holds no edits
/// (at any depth): it shares nothing with `v`, so editing one leaves the
/// other as it is. `None` for an edited view or a non-view.
pub(crate) fn pristine_twin(v: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
    let py = v.py();
    if let Ok(o) = v.cast_exact::<Object>() {
        let me = o.try_borrow()?;
        if mark_dirty(py, &*me) {
            return Ok(None);
        }
        let twin = Object::new(Share::new(py, &me.parsed), me.at);
        return Ok(Some(Py::new(py, twin)?.into_any()));
    }
    if let Ok(a) = v.cast_exact::<Array>() {
        let me = a.try_borrow()?;
        if mark_dirty(py, &*me) {
            return Ok(None);
        }
        let twin = Array::new(Share::new(py, &me.parsed), me.at);
        return Ok(Some(Py::new(py, twin)?.into_any()));
    }
    Ok(None)
}

// ------------------------------------------------------------ one child

/// The value of member `key` (`None` when absent), as `o[key]` reads it.
/// A lazy object is searched through its member table when it has one
/// (it was edited: see `crate::edit::MemberTable`), or, with `edit` (the
/// caller is about to edit `o`: a merge patch's member), through one
/// built now; else by a walk, as a read.
pub(crate) fn object_get(
    o: &Bound<'_, Object>,
    key: &Bound<'_, PyString>,
    edit: bool,
) -> PyResult<Option<Py<PyAny>>> {
    let py = o.py();
    let mut guard = o.try_borrow_mut()?;
    let me = &mut *guard;
    let ObjState::Lazy { views, patches, .. } = &mut me.state else {
        return me.lookup(py, key.as_any());
    };
    // A key without a UTF-8 form is in no document, nor in a patch.
    let Some(text) = key_utf8(key)? else {
        return Ok(None);
    };
    match patches.state(py, key)? {
        KeyState::Set(v) => return Ok(Some(v.clone_ref(py))),
        KeyState::Deleted => return Ok(None),
        KeyState::Untouched => {}
    }
    let doc = me.parsed.doc();
    let found = if edit {
        patches.original(&doc, me.at, text.as_bytes())
    } else {
        patches.original_if_built(&doc, me.at, text.as_bytes())
    };
    match found {
        Some(c) => lazy_child(py, &me.parsed, views, c).map(Some),
        None => Ok(None),
    }
}

/// Whether member `key` exists.
pub(crate) fn object_has(o: &Bound<'_, Object>, key: &Bound<'_, PyString>) -> PyResult<bool> {
    o.try_borrow()?.has(o.py(), key.as_any())
}

/// Set member `key` (added at the end when new), as `o[key] = value`.
pub(crate) fn object_set(
    o: &Bound<'_, Object>,
    key: &Bound<'_, PyString>,
    value: Py<PyAny>,
) -> PyResult<()> {
    o.try_borrow_mut()?.set(o.py(), key.as_any(), value)
}

/// Set member `key`, which a read of `o` found absent: added at the end,
/// as `o[key] = value` would add it, without looking the key up in the
/// document again (a miss walks every member). Right even if Python code
/// ran since the read: a key absent from the document stays absent (its
/// bytes never change), and a patch made since is found in the patch list
/// first (`Patches::set` asks for the original member only without one).
pub(crate) fn object_add_absent(
    o: &Bound<'_, Object>,
    key: &Bound<'_, PyString>,
    value: Py<PyAny>,
) -> PyResult<()> {
    let py = o.py();
    let mut guard = o.try_borrow_mut()?;
    let me = &mut *guard;
    me.parsed.input.mark_edited();
    if let ObjState::Lazy { patches, .. } = &mut me.state {
        // A stored key must have a UTF-8 form (see `patch`); a read of a
        // key without one finds nothing, so it may come here.
        str_utf8(key)?;
        // Absent from the document, or deleted by a patch (then added
        // anew, `orig` not asked).
        return patches.set(py, key, value, |_| None);
    }
    me.set(py, key.as_any(), value)
}

/// Set member `key` only when it exists (RFC 6902 `replace`); false when
/// absent. One key lookup, where `has` then `set` would make two.
pub(crate) fn object_replace(
    o: &Bound<'_, Object>,
    key: &Bound<'_, PyString>,
    value: Py<PyAny>,
) -> PyResult<bool> {
    let py = o.py();
    let mut guard = o.try_borrow_mut()?;
    let me = &mut *guard;
    me.parsed.input.mark_edited();
    if let ObjState::Lazy { patches, .. } = &mut me.state {
        let untouched = match patches.state(py, key)? {
            KeyState::Set(_) => false,
            KeyState::Deleted => return Ok(false),
            KeyState::Untouched => true,
        };
        if !untouched {
            // Its patch takes the new value.
            patches.set(py, key, value, |_| None)?;
            return Ok(true);
        }
        let doc = me.parsed.doc();
        let Some(c) = patches.original(&doc, me.at, str_utf8(key)?.as_bytes()) else {
            return Ok(false);
        };
        patches.set_untouched(key, value, |_| Some(c));
        return Ok(true);
    }
    if !me.has(py, key.as_any())? {
        return Ok(false);
    }
    me.set(py, key.as_any(), value)?;
    Ok(true)
}

/// Delete member `key`; false when absent.
pub(crate) fn object_delete(o: &Bound<'_, Object>, key: &Bound<'_, PyString>) -> PyResult<bool> {
    o.try_borrow_mut()?.delete(o.py(), key.as_any())
}

/// The number of elements.
pub(crate) fn array_len(a: &Bound<'_, Array>) -> PyResult<usize> {
    Ok(a.try_borrow()?.length())
}

/// Element `i` (`i < len`).
pub(crate) fn array_get(a: &Bound<'_, Array>, i: usize) -> PyResult<Py<PyAny>> {
    a.try_borrow_mut()?.item(a.py(), i)
}

/// Insert `value` before element `i` (`i <= len`).
pub(crate) fn array_insert(a: &Bound<'_, Array>, i: usize, value: Py<PyAny>) -> PyResult<()> {
    a.try_borrow_mut()?.insert_at(a.py(), i, value)
}

/// Replace element `i` (`i < len`).
pub(crate) fn array_set(a: &Bound<'_, Array>, i: usize, value: Py<PyAny>) -> PyResult<()> {
    a.try_borrow_mut()?.slots(a.py())?[i] = Slot::New(value);
    Ok(())
}

/// Remove element `i` (`i < len`).
pub(crate) fn array_remove(a: &Bound<'_, Array>, i: usize) -> PyResult<()> {
    let removed = a.try_borrow_mut()?.slots(a.py())?.remove(i);
    drop(removed);
    Ok(())
}
