//! The iterator of a lazy `Array` (`iter(a)`, `for x in a`, `list(a)`):
//! one element per step, straight from the index.
//!
//! # Why
//!
//! Iterating a small array was the dearest read of a small document: the
//! elements were put in a new list, whose iterator was returned, so a loop
//! over two messages paid a list and a list iterator made and freed (about
//! 600 instructions, three times the two elements' own reads).
//!
//! # How
//!
//! An `ArrayIterator` holds a reference to its array and where the walk
//! over the array's elements stands ([`ItemsAt`]: the document's own
//! iterator, without its borrow). Each step borrows the array again and,
//! while it is still Lazy, reads the next element as a subscript does
//! (`lazy_child`: a container's view comes from, or goes into, the array's
//! cache). The elements are the array's original ones and the document
//! never changes, so this is the list the old `iter` made, one element at
//! a time.
//!
//! When the array was edited since (a loop that edits the array it
//! walks), the iterator follows a list's rule from that step on: it reads
//! the element now at its position (`i`, counted from the loop's start),
//! and ends when the position passes the array's length, so a loop sees
//! what it would see walking the list `json.loads` made. (The old `iter`
//! gave a snapshot taken at `iter` time; an element replaced after a
//! child view of it was edited lost that edit in a first version of this
//! iterator, which read the original bytes again.)
//!
//! The type is made with `PyType_FromSpec`, not PyO3: no method table, no
//! trampoline per step. It is a GC type (an edit may put the iterator into
//! its own array). `abi3` builds keep PyO3's `__iter__` (a list's
//! iterator).

use super::alloc::FreeList;
use super::{lazy_child, ArrState, Array};
use crate::doc::ItemsAt;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The iterator object.
#[repr(C)]
struct RawIter {
    ob_base: ffi::PyObject,
    /// The array (a strong reference, kept to the end: an exhausted
    /// iterator still finds nothing left); NULL once cleared by the
    /// collector.
    array: *mut ffi::PyObject,
    /// Where the walk over the original elements stands.
    at: ItemsAt,
    /// The ordinal of the next original element (while the walk follows
    /// `at`), or the position of the next element (once `by_position`).
    i: u32,
    /// Set at the first step that finds the array edited: from then on a
    /// step reads the element at position `i` of the array as it is now,
    /// as a list's iterator does.
    by_position: bool,
}

/// The `ArrayIterator` type, made once by [`install`].
static TYPE: AtomicPtr<ffi::PyTypeObject> = AtomicPtr::new(std::ptr::null_mut());

/// Freed iterators kept for the next [`new`] (as `super::alloc` keeps
/// views): untracked, their array released, their type's reference
/// released (taken again on reuse).
static FREE: FreeList = FreeList::new();

/// Make the iterator type. Called once, attached, at module init.
pub(super) fn install(py: Python<'_>) -> PyResult<()> {
    let mut slots = [
        ffi::PyType_Slot {
            slot: ffi::Py_tp_iter,
            pfunc: ffi::PyObject_SelfIter as *mut c_void,
        },
        ffi::PyType_Slot {
            slot: ffi::Py_tp_iternext,
            pfunc: iternext as *mut c_void,
        },
        ffi::PyType_Slot {
            slot: ffi::Py_tp_dealloc,
            pfunc: dealloc as *mut c_void,
        },
        ffi::PyType_Slot {
            slot: ffi::Py_tp_traverse,
            pfunc: traverse as *mut c_void,
        },
        ffi::PyType_Slot {
            slot: ffi::Py_tp_clear,
            pfunc: clear as *mut c_void,
        },
        ffi::PyType_Slot {
            slot: 0,
            pfunc: std::ptr::null_mut(),
        },
    ];
    let mut spec = ffi::PyType_Spec {
        name: c"qjson.ArrayIterator".as_ptr(),
        basicsize: std::mem::size_of::<RawIter>() as c_int,
        itemsize: 0,
        flags: (ffi::Py_TPFLAGS_DEFAULT | ffi::Py_TPFLAGS_HAVE_GC) as _,
        slots: slots.as_mut_ptr(),
    };
    // SAFETY: attached; the spec and its slots are valid for the call
    // (CPython copies what it keeps). The new type is kept (its one
    // reference) for the life of the process.
    let tp = unsafe { ffi::PyType_FromSpec(&mut spec) };
    if tp.is_null() {
        return Err(PyErr::fetch(py));
    }
    TYPE.store(tp.cast(), Ordering::Relaxed);
    Ok(())
}

/// A new iterator over `array` (a live Lazy `Array`, borrowed) from `at`;
/// `None` (no error set) when the type is missing or no memory is left.
///
/// # Safety
///
/// The thread is attached; `array` is a live `Array`.
pub(super) unsafe fn new(array: *mut ffi::PyObject, at: ItemsAt) -> Option<*mut ffi::PyObject> {
    let tp = TYPE.load(Ordering::Relaxed);
    if tp.is_null() {
        return None;
    }
    // SAFETY: attached; `tp` is the iterator type (a GC type of
    // `RawIter`'s size), whose new (or kept: untracked, unreferenced, of
    // this type) object's fields are all written before it is tracked;
    // the array's reference is taken here.
    unsafe {
        let it = match FREE.pop() {
            // A kept iterator: a new count (as `super::alloc::make` sets
            // it), and its type's reference again.
            Some(obj) => {
                std::ptr::addr_of_mut!((*obj).ob_refcnt)
                    .cast::<ffi::Py_ssize_t>()
                    .write(1);
                ffi::Py_INCREF(tp.cast());
                obj.cast::<RawIter>()
            }
            None => ffi::PyObject_GC_New::<RawIter>(tp),
        };
        if it.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        ffi::Py_INCREF(array);
        std::ptr::addr_of_mut!((*it).array).write(array);
        std::ptr::addr_of_mut!((*it).at).write(at);
        std::ptr::addr_of_mut!((*it).i).write(0);
        std::ptr::addr_of_mut!((*it).by_position).write(false);
        ffi::PyObject_GC_Track(it.cast());
        Some(it.cast())
    }
}

/// `next(it)`.
unsafe extern "C" fn iternext(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    let it = obj.cast::<RawIter>();
    // SAFETY: CPython calls the slot attached, with `obj` a live iterator
    // of this type; `array` changes only in `dealloc` and `clear`, when
    // no step runs.
    let array = unsafe { (*it).array };
    if array.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: attached; `it` is live and holds `array` (a live Array)
    // for the call; a panic is reported as an error, never unwound into
    // CPython.
    catch_unwind(AssertUnwindSafe(|| unsafe {
        step(Python::assume_attached(), it, array)
    }))
    .unwrap_or_else(|_| {
        // SAFETY: attached.
        unsafe {
            ffi::PyErr_SetString(
                ffi::PyExc_RuntimeError,
                c"qjson: array iteration failed".as_ptr(),
            )
        };
        std::ptr::null_mut()
    })
}

/// One step of `it` over `array` (see the module docs): the next element
/// (a new reference), or null (at the end without an error set, else
/// with one).
///
/// The iterator's position is read and written only while the array is
/// borrowed: steps of one iterator never overlap, even from two threads
/// (in free-threaded builds, one of them finds the array in use).
///
/// # Safety
///
/// The thread is attached; `array` is the live Array the live `it` holds.
unsafe fn step(py: Python<'_>, it: *mut RawIter, array: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: attached; a live Array (the caller's contract).
    let Some(mut me) = (unsafe { super::alloc::borrow_mut::<Array>(array) }) else {
        // SAFETY: attached.
        unsafe {
            ffi::PyErr_SetString(
                ffi::PyExc_RuntimeError,
                c"qjson: the array is in use".as_ptr(),
            )
        };
        return std::ptr::null_mut();
    };
    // SAFETY: `it` is live (the caller's contract) and, with its array
    // borrowed, no other step uses its position fields. Only those fields
    // are borrowed, never the whole object: the collector may read its
    // header and `array` while an element is made below.
    let (at, next, by_position) = unsafe {
        (
            &mut *std::ptr::addr_of_mut!((*it).at),
            &mut *std::ptr::addr_of_mut!((*it).i),
            &mut *std::ptr::addr_of_mut!((*it).by_position),
        )
    };
    let me = &mut *me;
    let lazy = matches!(me.state, ArrState::Lazy { .. });
    if !lazy || *by_position {
        // Edited since the loop began: the element now at position `i`
        // (a list's iterator's rule), the end once `i` passes the length.
        *by_position = true;
        let i = *next as usize;
        if i >= me.length() {
            return std::ptr::null_mut();
        }
        *next += 1;
        return match me.item(py, i) {
            Ok(v) => v.into_ptr(),
            Err(e) => {
                e.restore(py);
                std::ptr::null_mut()
            }
        };
    }
    let doc = me.parsed.doc();
    let Some(c) = doc.next_item(at) else {
        return std::ptr::null_mut();
    };
    *next += 1;
    let parsed = &me.parsed;
    let v = match &mut me.state {
        ArrState::Lazy { views } => lazy_child(py, parsed, views, c),
        _ => unreachable!("lazy (checked above)"),
    };
    match v {
        Ok(v) => v.into_ptr(),
        Err(e) => {
            e.restore(py);
            std::ptr::null_mut()
        }
    }
}

/// `tp_dealloc`.
unsafe extern "C" fn dealloc(obj: *mut ffi::PyObject) {
    // SAFETY: CPython calls it attached, once, for an iterator whose count
    // reached zero; it was made by `PyObject_GC_New` (tracked, holding a
    // reference to its heap type, released last). A kept one is untracked
    // and holds nothing; nothing references it until `new` takes it.
    unsafe {
        let tp = ffi::Py_TYPE(obj);
        ffi::PyObject_GC_UnTrack(obj.cast());
        let it = obj.cast::<RawIter>();
        let array = (*it).array;
        if !array.is_null() {
            (*it).array = std::ptr::null_mut();
            ffi::Py_DECREF(array);
        }
        // Kept for reuse (not while the interpreter finalizes), or freed.
        if ffi::Py_IsInitialized() == 0 || !FREE.push(obj) {
            ffi::PyObject_GC_Del(obj.cast());
        }
        ffi::Py_DECREF(tp.cast());
    }
}

/// `tp_traverse`: the array.
unsafe extern "C" fn traverse(
    obj: *mut ffi::PyObject,
    visit: ffi::visitproc,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: called by the collector, attached, on a live iterator.
    unsafe {
        let array = (*obj.cast::<RawIter>()).array;
        if array.is_null() {
            0
        } else {
            visit(array, arg)
        }
    }
}

/// `tp_clear`: let the array go.
unsafe extern "C" fn clear(obj: *mut ffi::PyObject) -> c_int {
    // SAFETY: called by the collector, attached, on a live iterator; the
    // field is emptied before the reference goes.
    unsafe {
        let it = obj.cast::<RawIter>();
        let array = (*it).array;
        if !array.is_null() {
            (*it).array = std::ptr::null_mut();
            ffi::Py_DECREF(array);
        }
    }
    0
}
