//! Freelists for the objects a read makes and drops by the thousand:
//! `Doc`, `Cursor` and the `Object` / `Array` views.
//!
//! # Why
//!
//! A request makes a `Doc`, a cursor per element or a view per container
//! it reads, and drops them a moment later. Each one is a GC-tracked
//! object: CPython's allocator (`_PyObject_GC_Malloc`, the GC's
//! generation count) on the way in and `PyObject_GC_Del` on the way out,
//! about as much as the rest of making the object. CPython keeps
//! freelists of its own small objects (floats, tuples, lists) for the same
//! reason.
//!
//! # How
//!
//! Each class's `tp_alloc` and `tp_free` slots are replaced ([`install`]).
//! `tp_free`, which PyO3's `tp_dealloc` calls last (after it untracked the
//! object and dropped its Rust value), keeps the memory in the class's
//! list while there is room ([`CAPACITY`]), else frees it as before.
//! `tp_alloc` takes memory from the list when it can and then does what
//! `PyType_GenericAlloc` does to fresh memory: zero it, initialise the
//! header (type, reference count) and start GC tracking (of the GC
//! classes: `Cursor` holds no Python object and is not one). A GC-untracked
//! object's `PyGC_Head` is left cleared by the untrack (these classes have
//! no finalizer, so no "finalized" bit is ever set), which is the state
//! tracking needs. A variable-size request or another type (none exists:
//! the classes cannot be subclassed) goes to the slot replaced.
//!
//! The lists are plain arrays guarded by the GIL: the module declares
//! `gil_used`, and builds without a GIL (free-threaded CPython) keep the
//! allocator as it was. The stable ABI hides the slots: `abi3` builds
//! keep it too.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::type_object::PyTypeInfo;
use std::cell::UnsafeCell;
use std::os::raw::c_void;

/// Objects kept per class: enough for the views or cursors one request
/// holds at a time; at most a few KiB each.
const CAPACITY: usize = 32;

/// The free objects of one class.
pub(crate) struct FreeList {
    slots: UnsafeCell<[*mut ffi::PyObject; CAPACITY]>,
    len: UnsafeCell<usize>,
    /// The class (set by [`install`]).
    ty: UnsafeCell<*mut ffi::PyTypeObject>,
    /// The slots replaced (set by [`install`]).
    orig_alloc: UnsafeCell<Option<ffi::allocfunc>>,
    orig_free: UnsafeCell<Option<ffi::freefunc>>,
}

// SAFETY: every access happens with the GIL held (see the module docs);
// the GIL serialises them.
unsafe impl Sync for FreeList {}

impl FreeList {
    pub(crate) const fn new() -> Self {
        FreeList {
            slots: UnsafeCell::new([std::ptr::null_mut(); CAPACITY]),
            len: UnsafeCell::new(0),
            ty: UnsafeCell::new(std::ptr::null_mut()),
            orig_alloc: UnsafeCell::new(None),
            orig_free: UnsafeCell::new(None),
        }
    }
}

/// A class whose instances are recycled through `LIST`.
pub(crate) trait Recycled: PyTypeInfo {
    fn list() -> &'static FreeList;
}

/// Replace the `tp_alloc` and `tp_free` slots of `T`'s type with the
/// freelist's.
pub(crate) fn install<T: Recycled>(py: Python<'_>) -> PyResult<()> {
    #[cfg(not(Py_GIL_DISABLED))]
    {
        let tp = T::type_object_raw(py);
        // SAFETY: the GIL is held (`py`); `tp` is `T`'s heap type, whose
        // slots are writable for its lifetime. The list is only read by
        // the new slots, which run with the GIL held too.
        unsafe {
            if (*tp).tp_itemsize != 0 || (*tp).tp_alloc.is_none() || (*tp).tp_free.is_none() {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "qjson: freelists need fixed-size types",
                ));
            }
            let list = T::list();
            if *list.ty.get() == tp {
                return Ok(()); // installed (another module object)
            }
            *list.ty.get() = tp;
            *list.orig_alloc.get() = (*tp).tp_alloc;
            *list.orig_free.get() = (*tp).tp_free;
            (*tp).tp_alloc = Some(alloc::<T>);
            (*tp).tp_free = Some(free::<T>);
            ffi::PyType_Modified(tp);
        }
    }
    #[cfg(Py_GIL_DISABLED)]
    let _ = py;
    Ok(())
}

/// `tp_alloc`: a recycled object when there is one, as
/// `PyType_GenericAlloc` leaves a new one.
unsafe extern "C" fn alloc<T: Recycled>(
    tp: *mut ffi::PyTypeObject,
    nitems: ffi::Py_ssize_t,
) -> *mut ffi::PyObject {
    let list = T::list();
    // SAFETY: CPython calls `tp_alloc` with the GIL held, which guards the
    // list. A listed object is memory of `tp`'s basic size, allocated by
    // `PyType_GenericAlloc` (with its GC header before it for a GC type),
    // dropped (and untracked) by `tp_dealloc`, and owned by nobody but the
    // list; after zeroing, `PyObject_Init` gives it the type (and the type
    // reference the object owns) and a reference count of one, and
    // tracking a GC object makes it one as `PyType_GenericAlloc` returns it.
    unsafe {
        let len = *list.len.get();
        if nitems == 0 && len > 0 && tp == *list.ty.get() {
            let obj = (*list.slots.get())[len - 1];
            *list.len.get() = len - 1;
            std::ptr::write_bytes(obj.cast::<u8>(), 0, (*tp).tp_basicsize as usize);
            ffi::PyObject_Init(obj, tp);
            if ffi::PyType_IS_GC(tp) != 0 {
                ffi::PyObject_GC_Track(obj.cast());
            }
            return obj;
        }
        match *list.orig_alloc.get() {
            Some(f) => f(tp, nitems),
            None => ffi::PyType_GenericAlloc(tp, nitems),
        }
    }
}

/// `tp_free`: keep the memory while the list has room.
unsafe extern "C" fn free<T: Recycled>(obj: *mut c_void) {
    let list = T::list();
    // SAFETY: CPython (through PyO3's `tp_dealloc`) calls `tp_free` with
    // the GIL held, once per object, after the object was untracked and its
    // value dropped: nothing refers to the memory any more. Objects the
    // list has no room for go to the slot replaced.
    unsafe {
        let obj = obj.cast::<ffi::PyObject>();
        let len = *list.len.get();
        if len < CAPACITY && ffi::Py_TYPE(obj) == *list.ty.get() {
            (*list.slots.get())[len] = obj;
            *list.len.get() = len + 1;
            return;
        }
        match *list.orig_free.get() {
            Some(f) => f(obj.cast()),
            None => ffi::PyObject_Free(obj.cast()),
        }
    }
}
