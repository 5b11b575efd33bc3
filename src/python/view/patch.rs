//! Patches of a lazy Python object: the core's light overlay
//! (`crate::edit::Patches`, where the algorithm is described) with Python
//! `str` keys and values.
//!
//! Keys are compared by identity first, then by their UTF-8 text; a key is
//! stored only once its text was read (the callers read it before setting
//! or deleting), so writing a stored key cannot fail.

use super::super::input::str_utf8;
use crate::doc::{Cursor, Doc};
pub(super) use crate::edit::KeyState;
use crate::edit::{self, MemberTable};
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::sync::atomic::AtomicPtr;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

pub(super) type Patch = edit::Patch<Py<PyString>, Py<PyAny>>;

/// The core patch list over Python keys and values.
pub(super) type Core = edit::Patches<Py<PyString>, Py<PyAny>>;

/// Boxed, and only once a first patch is made: most views are never
/// patched, and a view's state is moved into place each time one is made,
/// so the empty list costs one word instead of the whole inline list.
///
/// The box of a list dropped empty (a patched view being freed: its
/// patches are drained first, see `drop`) is kept as the next first
/// patch's ([`SPARE`]): a forwarded request patches one or two objects and
/// frees them with the document, so a malloc and a free per patched
/// object (about 130 instructions) become two atomic swaps.
#[derive(Default)]
pub(super) struct Patches(Option<Box<Core>>);

/// One empty, unspilled list's box, for the next first patch (null: none).
/// An atomic pointer: a box is taken or given back whole, by one thread.
static SPARE: AtomicPtr<Core> = AtomicPtr::new(std::ptr::null_mut());

/// A box for a first patch: the spare one, or a new one.
fn new_core() -> Box<Core> {
    let p = SPARE.swap(std::ptr::null_mut(), Acquire);
    if p.is_null() {
        return Box::default();
    }
    // SAFETY: a non-null `SPARE` was made by `Box::into_raw` in `drop`
    // from a box nothing else owns, and the swap took it out: this is its
    // only owner now. It holds an empty, unspilled list.
    unsafe { Box::from_raw(p) }
}

impl Drop for Patches {
    fn drop(&mut self) {
        let Some(core) = self.0.take() else { return };
        // A list still holding patches (its keys and values are dropped
        // with it) or one on the heap goes as usual.
        if !core.is_bare() {
            return;
        }
        let mut core = core;
        // Its member table was its object's.
        core.table.clear();
        let p = Box::into_raw(core);
        if SPARE
            .compare_exchange(std::ptr::null_mut(), p, Release, Relaxed)
            .is_err()
        {
            // SAFETY: `p` came from `Box::into_raw` just above and was not
            // stored: still owned here, freed once.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// [`Patches::drain`]: the core list's drain, if there is a list (a
/// plain `Option` test per step, where `flat_map` costs a state machine).
struct Drain<I>(Option<I>);

impl<I: Iterator> Iterator for Drain<I> {
    type Item = I::Item;

    #[inline(always)]
    fn next(&mut self) -> Option<I::Item> {
        self.0.as_mut()?.next()
    }
}

/// The list of a view without patches, for [`Patches::core`].
static EMPTY: std::sync::OnceLock<Core> = std::sync::OnceLock::new();

fn same_key(py: Python<'_>, a: &Py<PyString>, b: &Bound<'_, PyString>) -> PyResult<bool> {
    if a.as_ptr() == b.as_ptr() {
        return Ok(true);
    }
    // Strs of different lengths (in code points) differ: most keys are
    // told apart without reading their text.
    let (la, lb) = (str_len(a.as_ptr()), str_len(b.as_ptr()));
    if la != lb && la >= 0 && lb >= 0 {
        return Ok(false);
    }
    Ok(str_utf8(a.bind(py))? == str_utf8(b)?)
}

/// The length in code points of `s`, a live str (the interpreter is
/// attached): read from its header where the layout is known, a call
/// otherwise.
#[inline(always)]
fn str_len(s: *mut pyo3::ffi::PyObject) -> pyo3::ffi::Py_ssize_t {
    #[cfg(not(any(feature = "abi3", PyPy, GraalPy)))]
    {
        // SAFETY: `s` is a live str: it starts with a `PyASCIIObject`
        // header, whose `length` holds the length once the str is ready
        // (always from 3.12 on; before, a str made by the legacy API may
        // not be, and then goes through the call, which readies it).
        unsafe {
            #[cfg(not(Py_3_12))]
            if pyo3::ffi::PyUnicode_IS_READY(s) == 0 {
                return pyo3::ffi::PyUnicode_GetLength(s);
            }
            pyo3::ffi::PyUnicode_GET_LENGTH(s)
        }
    }
    #[cfg(any(feature = "abi3", PyPy, GraalPy))]
    {
        // SAFETY: `s` is a live str and the interpreter is attached; the
        // call only reads its length (-1 with an error set when not a
        // str, which cannot happen here, and is then compared like a
        // length).
        unsafe { pyo3::ffi::PyUnicode_GetLength(s) }
    }
}

impl Patches {
    /// The core list, for the writer.
    pub(super) fn core(&self) -> &Core {
        match &self.0 {
            Some(core) => core,
            None => EMPTY.get_or_init(Core::default),
        }
    }

    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|core| core.is_empty())
    }

    /// Whether dropping the list frees nothing: no list was ever made.
    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    pub(super) fn is_bare(&self) -> bool {
        self.0.is_none()
    }

    /// The list, made on the first patch.
    fn made(&mut self) -> &mut Core {
        self.0.get_or_insert_with(new_core)
    }

    pub(super) fn state(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyString>,
    ) -> PyResult<KeyState<'_, Py<PyAny>>> {
        self.core().state(|k| same_key(py, k, key))
    }

    /// Set `key` to `value`; `orig` finds the original member's value
    /// (asked only when the key has no patch yet), given the object's
    /// member table (`MemberTable::field`: the lookup through it).
    pub(super) fn set(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyString>,
        value: Py<PyAny>,
        orig: impl FnOnce(&mut MemberTable) -> Option<Cursor>,
    ) -> PyResult<()> {
        self.made().set(
            || key.clone().unbind(),
            |k| same_key(py, k, key),
            value,
            orig,
        )
    }

    /// Set `key`, which has no patch ([`Self::state`] said `Untouched`),
    /// to `value` (`edit::Patches::set_untouched`). `orig` as in
    /// [`Self::set`].
    pub(super) fn set_untouched(
        &mut self,
        key: &Bound<'_, PyString>,
        value: Py<PyAny>,
        orig: impl FnOnce(&mut MemberTable) -> Option<Cursor>,
    ) {
        self.made().set_untouched(key.clone().unbind(), value, orig);
    }

    /// Delete `key`; false when it is absent. `orig` as in [`Self::set`].
    pub(super) fn delete(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyString>,
        orig: impl FnOnce(&mut MemberTable) -> Option<Cursor>,
    ) -> PyResult<bool> {
        self.made()
            .delete(|| key.clone().unbind(), |k| same_key(py, k, key), orig)
    }

    /// The original member `key` (unescaped bytes) of object `at` of
    /// `doc`, this list's object, through its member table (made, with the
    /// list, on the first lookup: the object is being edited).
    pub(super) fn original(&mut self, doc: &Doc<'_>, at: Cursor, key: &[u8]) -> Option<Cursor> {
        self.made().table.field(doc, at, key)
    }

    /// [`Self::original`] through the member table when the object has
    /// one already, else by [`Doc::field`] (a read of an object that may
    /// never be edited builds nothing).
    pub(super) fn original_if_built(
        &mut self,
        doc: &Doc<'_>,
        at: Cursor,
        key: &[u8],
    ) -> Option<Cursor> {
        match &mut self.0 {
            Some(core) if core.table.distinct() => core.table.field(doc, at, key),
            _ => doc.field(at, key),
        }
    }

    /// Members added minus members deleted.
    pub(super) fn len_delta(&self) -> isize {
        self.core().len_delta()
    }

    /// The patches in the order they must be applied to unfolded members.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = Patch> + '_ {
        Drain(self.0.as_deref_mut().map(Core::drain))
    }

    /// A copy sharing the values (for a snapshot of the overlay).
    pub(super) fn dup(&self, py: Python<'_>) -> Patches {
        Patches(
            self.0
                .as_ref()
                .map(|core| Box::new(core.dup_with(|k| k.clone_ref(py), |v| v.clone_ref(py)))),
        )
    }
}
