//! Patches of a lazy Python object: the core's light overlay
//! (`crate::edit::Patches`, where the algorithm is described) with Python
//! `str` keys and values.
//!
//! Keys are compared by identity first, then by their UTF-8 text; a key is
//! stored only once its text was read (the callers read it before setting
//! or deleting), so writing a stored key cannot fail.

use super::super::input::str_utf8;
use crate::doc::Cursor;
use crate::edit;
pub(super) use crate::edit::KeyState;
use pyo3::prelude::*;
use pyo3::types::PyString;

pub(super) type Patch = edit::Patch<Py<PyString>, Py<PyAny>>;

/// The core patch list over Python keys and values.
pub(super) type Core = edit::Patches<Py<PyString>, Py<PyAny>>;

#[derive(Default)]
pub(super) struct Patches(Core);

fn same_key(py: Python<'_>, a: &Py<PyString>, b: &Bound<'_, PyString>) -> PyResult<bool> {
    if a.as_ptr() == b.as_ptr() {
        return Ok(true);
    }
    // Strs of different lengths (in code points) differ: most keys are
    // told apart without reading their text.
    // SAFETY: both are live str objects and the interpreter is attached;
    // the call only reads their length (-1 with an error set when not a
    // str, which cannot happen here, and is then compared like a length).
    let (la, lb) = unsafe {
        (
            pyo3::ffi::PyUnicode_GetLength(a.as_ptr()),
            pyo3::ffi::PyUnicode_GetLength(b.as_ptr()),
        )
    };
    if la != lb && la >= 0 && lb >= 0 {
        return Ok(false);
    }
    Ok(str_utf8(a.bind(py))? == str_utf8(b)?)
}

impl Patches {
    /// The core list, for the writer.
    pub(super) fn core(&self) -> &Core {
        &self.0
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn state(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyString>,
    ) -> PyResult<KeyState<'_, Py<PyAny>>> {
        self.0.state(|k| same_key(py, k, key))
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
        self.0.set(
            || key.clone().unbind(),
            |k| same_key(py, k, key),
            value,
            orig,
        )
    }

    /// Delete `key`; false when it is absent. `orig` as in [`Self::set`].
    pub(super) fn delete(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyString>,
        orig: impl FnOnce() -> Option<Cursor>,
    ) -> PyResult<bool> {
        self.0
            .delete(|| key.clone().unbind(), |k| same_key(py, k, key), orig)
    }

    /// Members added minus members deleted.
    pub(super) fn len_delta(&self) -> isize {
        self.0.len_delta()
    }

    /// The patches in the order they must be applied to unfolded members.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = Patch> + '_ {
        self.0.drain()
    }

    /// A copy sharing the values (for a snapshot of the overlay).
    pub(super) fn dup(&self, py: Python<'_>) -> Patches {
        Patches(self.0.dup_with(|k| k.clone_ref(py), |v| v.clone_ref(py)))
    }
}
