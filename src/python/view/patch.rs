//! Patches: the light overlay of a lazy object whose keys are unique.
//!
//! The common edits of a forwarded request (set `model`, add a field,
//! replace one message's `content`, delete `stream`) touch one or two keys
//! of an object with a handful of members. Unfolding the whole object into
//! slots for that (see `Members`) decodes every key; a patch list records
//! only what changed, and the object stays lazy for everything else:
//!
//! - a *replacement* (`orig: Some(cursor)`, `value: Some(v)`) stands in for
//!   the original member whose value is at `cursor`, in its position;
//! - a *deletion* (`orig: Some(cursor)`, `value: None`) drops that member;
//! - an *addition* (`orig: None`, `value: Some(v)`) follows the original
//!   members, in the order the keys were added.
//!
//! The current state of a key is its last patch, or the original member
//! when it has none. Setting a key deleted from the original adds it anew
//! (at the end, as a dict does); deleting an added key removes its patch.
//! So the list holds at most one replacement or deletion per original
//! member and at most one live patch per key, and it reads back exactly
//! like the dict the same operations would give.
//!
//! A key that repeats in the original reads as its first occurrence, so
//! "the original member" of a patch is that first one; writing drops the
//! later occurrences of every key (`Doc::distinct_items`), so the output
//! holds each key once and reads back like the view. Any operation other
//! than get / set / delete / contains / len / dumps unfolds the object,
//! applying the patches in order ([`Patches::drain`]).

use super::super::input::str_utf8;
use crate::doc::Cursor;
use pyo3::prelude::*;
use pyo3::types::PyString;
use smallvec::SmallVec;

pub(super) struct Patch {
    pub(super) key: Py<PyString>,
    /// The original member's value this patch replaces or deletes; `None`
    /// for an added key.
    pub(super) orig: Option<Cursor>,
    /// The new value; `None`: the original member is deleted.
    pub(super) value: Option<Py<PyAny>>,
}

/// What the patches say about one key.
pub(super) enum KeyState<'a> {
    Set(&'a Py<PyAny>),
    Deleted,
    /// No patch: the original member (if any) holds.
    Untouched,
}

/// Patches kept without a heap allocation (set `model` and `temperature`).
const INLINE: usize = 2;

#[derive(Default)]
pub(super) struct Patches(SmallVec<[Patch; INLINE]>);

fn same_key(py: Python<'_>, a: &Py<PyString>, b: &Bound<'_, PyString>) -> PyResult<bool> {
    if a.as_ptr() == b.as_ptr() {
        return Ok(true);
    }
    Ok(str_utf8(a.bind(py))? == str_utf8(b)?)
}

impl Patches {
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Position of the last patch of `key`.
    fn last(&self, py: Python<'_>, key: &Bound<'_, PyString>) -> PyResult<Option<usize>> {
        for (i, p) in self.0.iter().enumerate().rev() {
            if same_key(py, &p.key, key)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    pub(super) fn state(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyString>,
    ) -> PyResult<KeyState<'_>> {
        Ok(match self.last(py, key)? {
            Some(i) => match &self.0[i].value {
                Some(v) => KeyState::Set(v),
                None => KeyState::Deleted,
            },
            None => KeyState::Untouched,
        })
    }

    /// Set `key` to `value`; `orig` finds the original member's value
    /// (asked only when the key has no patch yet).
    pub(super) fn set(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyString>,
        value: Py<PyAny>,
        orig: impl FnOnce() -> Option<Cursor>,
    ) -> PyResult<()> {
        let orig = match self.last(py, key)? {
            Some(i) if self.0[i].value.is_some() => {
                self.0[i].value = Some(value);
                return Ok(());
            }
            // Deleted from the original: added anew, at the end.
            Some(_) => None,
            None => orig(),
        };
        self.0.push(Patch {
            key: key.clone().unbind(),
            orig,
            value: Some(value),
        });
        Ok(())
    }

    /// Delete `key`; false when it is absent. `orig` as in [`Self::set`].
    pub(super) fn delete(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyString>,
        orig: impl FnOnce() -> Option<Cursor>,
    ) -> PyResult<bool> {
        match self.last(py, key)? {
            Some(i) => match (self.0[i].orig, &self.0[i].value) {
                (_, None) => Ok(false),
                (Some(_), Some(_)) => {
                    self.0[i].value = None;
                    Ok(true)
                }
                (None, Some(_)) => {
                    self.0.remove(i);
                    Ok(true)
                }
            },
            None => match orig() {
                Some(at) => {
                    self.0.push(Patch {
                        key: key.clone().unbind(),
                        orig: Some(at),
                        value: None,
                    });
                    Ok(true)
                }
                None => Ok(false),
            },
        }
    }

    /// The replacement or deletion of the original member at `offset`.
    pub(super) fn for_original(&self, offset: u32) -> Option<&Patch> {
        self.0
            .iter()
            .find(|p| p.orig.is_some_and(|c| c.start == offset))
    }

    /// Added keys and their values, in order.
    pub(super) fn added(&self) -> impl Iterator<Item = (&Py<PyString>, &Py<PyAny>)> {
        self.0
            .iter()
            .filter(|p| p.orig.is_none())
            .filter_map(|p| p.value.as_ref().map(|v| (&p.key, v)))
    }

    /// Members added minus members deleted.
    pub(super) fn len_delta(&self) -> isize {
        self.0
            .iter()
            .map(|p| match (p.orig, &p.value) {
                (None, Some(_)) => 1,
                (Some(_), None) => -1,
                _ => 0,
            })
            .sum()
    }

    /// The patches in the order they must be applied to unfolded members.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = Patch> + '_ {
        self.0.drain(..)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Patch> {
        self.0.iter()
    }

    /// A copy sharing the values (for a snapshot of the overlay).
    pub(super) fn dup(&self, py: Python<'_>) -> Patches {
        Patches(
            self.0
                .iter()
                .map(|p| Patch {
                    key: p.key.clone_ref(py),
                    orig: p.orig,
                    value: p.value.as_ref().map(|v| v.clone_ref(py)),
                })
                .collect(),
        )
    }
}
