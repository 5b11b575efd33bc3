//! The raw entry point of `Object[key] = value` (how and why:
//! `super::super::slots`).
//!
//! It runs the common edit of a forwarded request itself: an exact `str`
//! key set on a lazy object, where the key has no patch yet (a new patch:
//! `crate::edit::Patches`, the same one `__setitem__` records). Every other
//! case goes to the slot PyO3 made, unchanged: `del`, an unfolded object,
//! a key patched before (its old value would be dropped, which a raw entry
//! point must not do: see the rules in `slots`), other key types.
//!
//! PyO3's slot costs about 230 instructions more per assignment than the
//! patch itself (its trampoline, the argument extraction, the check of its
//! pool of deferred drops): a third of the set.

use super::super::slots::{self, exact_str, Original};
use super::patch::KeyState;
use super::{ObjState, Object};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

static OBJECT_ASSIGN: Original<ffi::objobjargproc> = Original::new();

/// Install the raw `mp_ass_subscript` on `Object`.
pub(crate) fn install(py: Python<'_>) -> PyResult<()> {
    let object = py.get_type::<Object>();
    slots::replace_ass_subscript(&object, object_assign, &OBJECT_ASSIGN)
}

/// Set member `key` of the Object `slf` to `value` when this is the common
/// case; false (nothing changed) hands the call to the original.
///
/// # Safety
///
/// The thread is attached; `slf` is a live `Object`, `key` and `value`
/// live objects, all borrowed for the call.
#[inline(always)]
unsafe fn object_set(
    py: Python<'_>,
    slf: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
    value: *mut ffi::PyObject,
) -> bool {
    // SAFETY: `key` is live for the call (caller).
    let Some(text) = (unsafe { exact_str(key) }) else {
        return false;
    };
    // SAFETY: `key` is an exact str (checked), live for the call.
    let key = unsafe { pyo3::Borrowed::from_ptr(py, key).cast_unchecked::<PyString>() };
    // SAFETY: `slf` is a live Object, borrowed for the call (caller);
    // CPython calls Object's slots on Objects only (not subclassable).
    let slf = unsafe { pyo3::Borrowed::from_ptr(py, slf).cast_unchecked::<Object>() };
    let Ok(mut me) = slf.try_borrow_mut() else {
        return false;
    };
    let me = &mut *me;
    me.parsed.input.mark_edited();
    let (doc, at) = (me.parsed.doc(), me.at);
    let ObjState::Lazy { patches, .. } = &mut me.state else {
        return false;
    };
    match patches.state(py, &key) {
        Ok(KeyState::Untouched) => {}
        Ok(_) => return false,
        Err(e) => {
            slots::release(e);
            return false;
        }
    }
    // SAFETY: `value` is live for the call (caller); the patch keeps the
    // new reference taken here.
    let value = unsafe { pyo3::Borrowed::from_ptr(py, value) }
        .to_owned()
        .unbind();
    // The key has no patch (checked above): a new one, pushed without
    // comparing the keys again, drops nothing.
    patches.set_untouched(&key, value, |t| t.field(&doc, at, text.as_bytes()));
    true
}

/// `Object[key] = value` and `del Object[key]` (`value` null).
unsafe extern "C" fn object_assign(
    slf: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
    value: *mut ffi::PyObject,
) -> c_int {
    if !value.is_null() {
        // SAFETY: CPython calls the slot attached, with `slf` an Object and
        // `key` and `value` live for the call. A panic changes nothing a
        // caller can see before it (it could only come before the patch
        // is pushed), so the original then runs as usual.
        let done = catch_unwind(AssertUnwindSafe(|| unsafe {
            object_set(Python::assume_attached(), slf, key, value)
        }))
        .unwrap_or(false);
        if done {
            return 0;
        }
    }
    // SAFETY: the slot PyO3 made, called as CPython called this one.
    unsafe { OBJECT_ASSIGN.get()(slf, key, value) }
}
