//! Making and freeing view, cursor and `Doc` objects without PyO3's
//! generic paths.
//!
//! # Why
//!
//! A read that returns a container makes a view, and the caller soon frees
//! it: in loops over small documents that is most of the work of a read.
//! Every `parse` makes a `Doc` the same way (a fixed cost of each small
//! document).
//! PyO3 makes an object by calling the base type's `tp_new` with an empty
//! argument tuple (which checks the arguments, then calls `tp_alloc`) and
//! frees it through a trampoline (thread-local attachment count, pool of
//! deferred drops, panic guard) and a generic `tp_dealloc` that looks its
//! slots up by name. About 800 instructions per view, around a lookup of
//! about 300. PyO3 0.28's `tp_dealloc` also never releases the reference
//! to the (heap) type that `tp_alloc` took: every freed view leaked one.
//!
//! # How
//!
//! A PyO3 class object is the object header, then the Rust value, then
//! PyO3's borrow flag (zero: not borrowed); the thread checker, dict and
//! weakref slots of these classes take no space. [`install`] measures
//! where the value sits on one sample object of each type, checks that the
//! type's size, flags and slots are what this layout needs (else it
//! changes nothing, and PyO3's paths stay in use), and puts [`dealloc`] in
//! the type's `tp_dealloc`. Then:
//!
//! - [`make`] takes a kept object, or allocates one with `PyObject_GC_New`
//!   (`PyObject_New` for cursors): the header set, a reference to its type taken, the rest
//!   not zeroed (`PyType_GenericAlloc` would clear it all, then track it).
//!   It moves the Rust value into place, zeroes the borrow flag ("not
//!   borrowed") and whatever lies between the header and the value, and
//!   only then tracks the object, so the collector never sees it
//!   half-made. No Python code runs in between (an allocation may run a
//!   collection, which does not see an untracked object).
//! - [`dealloc`] untracks the object (views and `Doc` are GC types,
//!   cursors not), releases cached child views by plain decrefs
//!   (`super::drop::drop_quick` for a lazy view with few of them, which
//!   also counts out its share of the document in a few instructions;
//!   `super::drop::shed`, out of line, otherwise), drops the Rust value in place, and keeps the
//!   memory for the next [`make`] of the class ([`FreeList`], up to
//!   [`FREE_MAX`] objects) or frees it with the type's `tp_free` and
//!   releases the type.
//!   When the value holds the last share of the document, the input's
//!   reference to the caller's object goes by a plain decref too
//!   (`Input::release_attached`). Dropping the value then releases Python
//!   objects only when it holds edits (or, rarely, a buffer export or a
//!   slice of a stream's input): then the drop runs inside
//!   `Python::attach`, so that PyO3 releases those references at once
//!   (see `super::super::slots`).
//!
//! The stable ABI hides the layouts this needs: `abi3` builds keep PyO3's
//! paths.

use super::super::doc::{Cursor, Doc, Parsed};
use super::super::share::{Hold, Share};
use super::{Array, Object, ViewCache};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::PyClass;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;

/// A class made and freed here: the views, `Cursor` and `Doc`.
pub(crate) trait View: PyClass + Sized {
    /// Whether PyO3 keeps a borrow flag after the value (not for frozen
    /// classes).
    const FLAG: bool;
    /// A new object holding `self`, made by PyO3.
    fn pyo3_new(self, py: Python<'_>) -> PyResult<Py<PyAny>>;
    /// Where the Rust value sits in the Python object, in bytes; 0 while
    /// PyO3's paths are in use.
    fn offset() -> &'static AtomicUsize;
    /// Freed objects of the class kept for reuse.
    fn free_list() -> &'static FreeList;
    /// The value inside `sample`.
    fn value_of(sample: &Bound<'_, Self>) -> Option<*const Self>;
    /// Whether dropping the value releases no Python object.
    fn drops_nothing(&self) -> bool;
    /// Release the Python objects held for children by plain decrefs (see
    /// `super::drop::shed`); nothing for classes that hold none.
    ///
    /// # Safety
    ///
    /// The thread is attached and the value is being dropped.
    unsafe fn shed(&mut self) {}
    /// Drop the value in place when that is only dropping its share of the
    /// document (see `super::drop::drop_bare`); false, with nothing done,
    /// otherwise (and for classes without the shortcut).
    ///
    /// # Safety
    ///
    /// The thread is attached and the value is being dropped: when this
    /// returns true it must not be used or dropped again.
    unsafe fn drop_bare(&mut self) -> bool {
        false
    }
    /// Drop the value in place when that is only releasing the few views
    /// it cached and counting out its share of the document, one of
    /// several (a lazy view, see `super::drop::drop_quick`; a cursor): the
    /// common drop, kept to a few instructions in [`dealloc`]; false
    /// otherwise (and for classes without the shortcut), with the value
    /// left for the usual drop.
    ///
    /// # Safety
    ///
    /// The thread is attached and the value is being dropped: when this
    /// returns true it must not be used or dropped again.
    #[inline(always)]
    unsafe fn drop_quick(&mut self) -> bool {
        false
    }
    /// How the value holds its document.
    type Hold: Hold;
    /// The value's hold on its document.
    fn parsed_mut(&mut self) -> &mut Self::Hold;
    /// When the value holds the last share of its document, release the
    /// input's reference to the caller's object by a plain decref (see
    /// `Input::release_attached`), so that dropping the document needs no
    /// `Python::attach`.
    ///
    /// # Safety
    ///
    /// The thread is attached and the value is being dropped.
    unsafe fn release_input(&mut self) {
        if let Some(doc) = self.parsed_mut().sole() {
            // SAFETY: attached, and the document (this value held its only
            // share) is dropped with the value, next (the contract).
            unsafe { doc.input.release_attached() };
        }
    }
}

static OBJECT_AT: AtomicUsize = AtomicUsize::new(0);
static ARRAY_AT: AtomicUsize = AtomicUsize::new(0);
static CURSOR_AT: AtomicUsize = AtomicUsize::new(0);
static DOC_AT: AtomicUsize = AtomicUsize::new(0);

static OBJECT_FREE: FreeList = FreeList::new();
static ARRAY_FREE: FreeList = FreeList::new();
static CURSOR_FREE: FreeList = FreeList::new();
static DOC_FREE: FreeList = FreeList::new();

/// Objects kept by a [`FreeList`] at most (per class): enough for a loop
/// that keeps a view of each record and of one child of it alive until it
/// ends (100 records of twitter.json or github_issues: 200 views, which
/// with 64 kept went 136 a round through `_PyObject_GC_New` and `tp_free`,
/// and their allocations through the collector's young generation). At
/// most about 160 bytes each: 40 KiB a class.
const FREE_MAX: usize = 256;

/// Whether freed objects are kept for reuse in this build: not where
/// threads run Python in parallel (free-threaded builds), nor where
/// CPython keeps books on every reference or object (debug builds), which
/// a reused object would skip.
const REUSE: bool = cfg!(not(any(
    Py_GIL_DISABLED,
    PyPy,
    GraalPy,
    py_sys_config = "Py_REF_DEBUG",
    py_sys_config = "Py_TRACE_REFS"
)));

/// Freed objects of one class, kept for the next [`make`] (as CPython
/// keeps freed lists, tuples and floats): their memory, already laid out
/// for the class (the header and its `ob_type`, the collector's header for
/// GC types, untracked), and nothing of their old value.
/// Reusing one skips the allocator and, for GC types, the collector's
/// bookkeeping of a new object (about 200 instructions per view made and
/// freed). Used attached only, and with the GIL one thread at a time: the
/// loads and stores need no read-modify-write.
pub(crate) struct FreeList {
    len: AtomicUsize,
    objs: [AtomicPtr<ffi::PyObject>; FREE_MAX],
}

impl FreeList {
    pub(super) const fn new() -> Self {
        FreeList {
            len: AtomicUsize::new(0),
            objs: [const { AtomicPtr::new(std::ptr::null_mut()) }; FREE_MAX],
        }
    }

    /// A kept object, if any.
    #[inline(always)]
    pub(super) fn pop(&self) -> Option<*mut ffi::PyObject> {
        let n = self.len.load(Ordering::Relaxed);
        if !REUSE || n == 0 {
            return None;
        }
        self.len.store(n - 1, Ordering::Relaxed);
        Some(self.objs[n - 1].load(Ordering::Relaxed))
    }

    /// Keep `obj`, unless the list is full (false).
    #[inline(always)]
    pub(super) fn push(&self, obj: *mut ffi::PyObject) -> bool {
        let n = self.len.load(Ordering::Relaxed);
        if !REUSE || n == FREE_MAX {
            return false;
        }
        self.objs[n].store(obj, Ordering::Relaxed);
        self.len.store(n + 1, Ordering::Relaxed);
        true
    }
}

/// [`View`] for one class: `flag` whether PyO3 keeps a borrow flag (not for
/// frozen classes), how its value is found in a sample object, and when
/// dropping it releases no Python object.
macro_rules! view {
    ($t:ty, $at:ident, $free:ident, $hold:ty, flag: $flag:expr, |$s:ident| $value_of:expr, |$v:ident| $drops_nothing:expr $(, $shed:item)*) => {
        impl View for $t {
            const FLAG: bool = $flag;
            fn pyo3_new(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
                Ok(Py::new(py, self)?.into_any())
            }
            fn offset() -> &'static AtomicUsize {
                &$at
            }
            fn free_list() -> &'static FreeList {
                &$free
            }
            fn value_of($s: &Bound<'_, Self>) -> Option<*const Self> {
                $value_of
            }
            fn drops_nothing(&self) -> bool {
                let $v = self;
                $drops_nothing
            }
            type Hold = $hold;
            fn parsed_mut(&mut self) -> &mut $hold {
                &mut self.parsed
            }
            $($shed)*
        }
    };
}

/// An `Object` or `Array`: mutable (a borrow flag), holds cached children.
macro_rules! mutable_view {
    ($t:ty, $at:ident, $free:ident) => {
        view!($t, $at, $free, Share, flag: true, |sample| {
            let mut v = sample.try_borrow_mut().ok()?;
            Some(&mut *v as *mut Self as *const Self)
        }, |v| v.unedited().is_some_and(ViewCache::is_empty)
            && v.parsed.drops_nothing(),
        unsafe fn shed(&mut self) {
            // SAFETY: the trait method's contract.
            unsafe { super::drop::shed(self) }
        },
        unsafe fn drop_bare(&mut self) -> bool {
            if !self.parsed.drops_nothing() {
                return false;
            }
            // SAFETY: the trait method's contract; the share releases no
            // Python object (checked above).
            unsafe { super::drop::drop_bare(self, |v| &mut v.parsed) }
        },
        #[inline(always)]
        unsafe fn drop_quick(&mut self) -> bool {
            // SAFETY: the trait method's contract.
            unsafe { super::drop::drop_quick(self) }
        });
    };
}

mutable_view!(Object, OBJECT_AT, OBJECT_FREE);
mutable_view!(Array, ARRAY_AT, ARRAY_FREE);
view!(Cursor, CURSOR_AT, CURSOR_FREE, Share, flag: false, |sample| Some(sample.get() as *const Self), |c| {
    c.parsed.drops_nothing()
},
#[inline(always)]
unsafe fn drop_quick(&mut self) -> bool {
    // SAFETY: the trait method's contract; a cursor owns nothing but its
    // share (the rest is plain data).
    unsafe { self.parsed.drop_if_others() }
});
view!(Doc, DOC_AT, DOC_FREE, Arc<Parsed>, flag: false, |sample| Some(sample.get() as *const Self), |d| {
    d.releases_nothing()
},
#[inline(always)]
unsafe fn drop_quick(&mut self) -> bool {
    // The common drop of a `Doc` that made no `root` view: release the
    // input (a plain decref, when this is the document's last share),
    // then the drop releases no Python object and needs no attach (as
    // in `drop_value`). A cached root or an input that is not released
    // so (a buffer) go to `drop_value`.
    if self.root_view().is_some() {
        return false;
    }
    // SAFETY: the trait method's contract: attached, and the value is
    // dropped next (here, or by `drop_value`).
    unsafe { self.release_input() };
    if !self.releases_nothing() {
        return false;
    }
    // A panic in the drop leaks what is left of the value (see
    // `drop_value`).
    // SAFETY: the trait method's contract: the value is dropped once,
    // here, and not used after (true is returned).
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe { std::ptr::drop_in_place(self) }));
    true
});

/// A new Python object holding `value` (inlined, so that the value is
/// built where it goes rather than moved there).
#[inline(always)]
pub(crate) fn make<T: View>(py: Python<'_>, value: T) -> PyResult<Py<PyAny>> {
    let at = T::offset().load(Ordering::Relaxed);
    if at == 0 {
        return make_pyo3(py, value);
    }
    let tp = T::type_object_raw(py);
    let header = std::mem::size_of::<ffi::PyObject>();
    let word = std::mem::size_of::<usize>();
    // SAFETY: the thread is attached. `install` checked that `tp` is a
    // fixed-size type of `tp_basicsize` bytes, freed by the `tp_free`
    // matching these allocators (`PyObject_GC_Del` for GC types), whose
    // objects hold the header, PyO3's bytes up to `at` (zero in a new
    // object), the value at `at` and, for classes with a borrow flag, the
    // flag right after the value (rounded to a word; zero: "not
    // borrowed"). `PyObject_GC_New` / `PyObject_New` set the header and
    // take the reference to the heap type that `dealloc` releases; an
    // object from the free list is one of these that `dealloc` untracked
    // and emptied (its value dropped), which nothing references (its count
    // reached zero), with the same `ob_type` (the class's type, which
    // PyO3 keeps alive for the process); it takes its type's reference
    // again here. The
    // object is tracked only once every byte PyO3 or the collector reads
    // is written, and no Python code runs before (so nothing else sees it).
    unsafe {
        let gc = (*tp).tp_flags & ffi::Py_TPFLAGS_HAVE_GC != 0;
        let obj: *mut ffi::PyObject = match T::free_list().pop() {
            // A kept object: its count is new (set as `_Py_NewReference`
            // sets it: the whole word, flags of 3.14 included), and it
            // takes a reference to its type again.
            Some(obj) => {
                std::ptr::addr_of_mut!((*obj).ob_refcnt)
                    .cast::<ffi::Py_ssize_t>()
                    .write(1);
                ffi::Py_INCREF(tp.cast());
                obj
            }
            None if gc => ffi::PyObject_GC_New(tp),
            None => ffi::PyObject_New(tp),
        };
        if obj.is_null() {
            return Err(no_object(py));
        }
        let base = obj.cast::<u8>();
        if at > header {
            std::ptr::write_bytes(base.add(header), 0, at - header);
        }
        std::ptr::write(base.add(at).cast::<T>(), value);
        if T::FLAG {
            let flag_at = at + std::mem::size_of::<T>().div_ceil(word) * word;
            std::ptr::write(base.add(flag_at).cast::<usize>(), 0);
        }
        if gc {
            ffi::PyObject_GC_Track(obj.cast());
        }
        Ok(Bound::from_owned_ptr(py, obj).unbind())
    }
}

/// [`make`] through PyO3 (its layout was not the one `install` checks
/// for): out of line, so the inlined `make` stays small.
#[cold]
#[inline(never)]
fn make_pyo3<T: View>(py: Python<'_>, value: T) -> PyResult<Py<PyAny>> {
    value.pyo3_new(py)
}

/// The error of a failed allocation in [`make`].
#[cold]
#[inline(never)]
fn no_object(py: Python<'_>) -> PyErr {
    PyErr::fetch(py)
}

/// `tp_dealloc` of a view class (see the module docs).
///
/// Laid out for the instruction cache: the common drop (a lazy view
/// releasing its few cached views and counting out one of several shares,
/// or a cursor; [`View::drop_quick`]) and
/// the reuse of the memory stay here, a few dense lines; everything else
/// (cached children, edits, the last share, the panic guard) is in
/// [`drop_value`] and the freeing in [`free_object`], out of line.
///
/// # Safety
///
/// CPython calls it attached, once, for an object of type `T` whose count
/// reached zero; `install` set it only after checking the layout.
unsafe extern "C" fn dealloc<T: View>(obj: *mut ffi::PyObject) {
    let at = T::offset().load(Ordering::Relaxed);
    // SAFETY: (see the function's contract) the object is ours alone; its
    // value sits at `at` and is dropped exactly once (by `drop_quick` or
    // `drop_value`), before the memory is kept or freed; the object held a
    // reference to its heap type (taken by `PyType_GenericAlloc`),
    // released last.
    unsafe {
        let tp = ffi::Py_TYPE(obj);
        if (*tp).tp_flags & ffi::Py_TPFLAGS_HAVE_GC != 0 {
            ffi::PyObject_GC_UnTrack(obj.cast());
        }
        let value = obj.cast::<u8>().add(at).cast::<T>();
        if !(*value).drop_quick() {
            drop_value(value);
        }
        // Kept for reuse, or freed; either way its reference to the type
        // goes (a kept object's `ob_type` stays: the class's type lives
        // as long as the process, held by PyO3). Not kept while the
        // interpreter finalizes: the list may then never be used again.
        if ffi::Py_IsInitialized() == 0 || !T::free_list().push(obj) {
            free_object(tp, obj);
        }
        ffi::Py_DECREF(tp.cast());
    }
}

/// The drop of a view's value that [`View::drop_quick`] leaves: cached
/// child views by plain decrefs, the last share of the document, edits;
/// a panic in a drop leaks what is left of the value, as PyO3's
/// trampoline would (it must not unwind into CPython).
///
/// # Safety
///
/// As [`dealloc`]'s: attached; `value` is the value of an object being
/// freed, dropped here exactly once.
#[inline(never)]
unsafe fn drop_value<T: View>(value: *mut T) {
    // SAFETY: the function's contract.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
        // While the interpreter finalizes, PyO3 cannot attach: the
        // references go to its pool of deferred drops (and the
        // process ends).
        // Cached child views go by plain decrefs first: what is left
        // (edits, the last share of the document) is rare.
        if !(*value).drops_nothing() {
            (*value).shed();
            (*value).release_input();
        }
        // An untouched lazy view.
        if (*value).drop_bare() {
            return;
        }
        if (*value).drops_nothing() || ffi::Py_IsInitialized() == 0 {
            std::ptr::drop_in_place(value);
        } else {
            Python::attach(|_| std::ptr::drop_in_place(value));
        }
    }));
}

/// Free the memory of a view object that its class's [`FreeList`] does
/// not keep, with the type's `tp_free` (out of line: rare once a loop
/// runs).
///
/// # Safety
///
/// Attached; `obj` is an object of type `tp` whose value was dropped, not
/// used again.
#[inline(never)]
unsafe fn free_object(tp: *mut ffi::PyTypeObject, obj: *mut ffi::PyObject) {
    // SAFETY: the function's contract; `tp_free` matches the allocator
    // (checked by `install`).
    unsafe {
        if let Some(free) = (*tp).tp_free {
            free(obj.cast());
        }
    }
}

/// Measure the layout of `T` on `sample` (a fresh, unborrowed object of
/// type `T`) and, when it is the one this module needs, install
/// [`dealloc`] and switch [`make`] over. Changes nothing otherwise.
pub(crate) fn install<T: View>(py: Python<'_>, sample: &Bound<'_, T>) {
    let tp = T::type_object_raw(py);
    let obj = sample.as_ptr() as usize;
    let Some(value) = T::value_of(sample) else {
        return;
    };
    let at = (value as usize).wrapping_sub(obj);
    let word = std::mem::size_of::<usize>();
    let round = |n: usize, a: usize| n.div_ceil(a) * a;
    let align = std::mem::align_of::<T>().max(word);
    let flag_at = at + round(std::mem::size_of::<T>(), word);
    let size = round(flag_at + if T::FLAG { word } else { 0 }, align);
    let generic_alloc: ffi::allocfunc = ffi::PyType_GenericAlloc;
    let gc_del: ffi::freefunc = ffi::PyObject_GC_Del;
    let del: ffi::freefunc = ffi::PyObject_Free;
    // SAFETY: the thread is attached; `tp` is the live type object of `T`
    // and `sample` a live object of it, `flag_at + word <= size` bytes
    // long when the size check holds (checked before the read).
    let fits = unsafe {
        let t = &*tp;
        let flags = t.tp_flags;
        let gc = flags & ffi::Py_TPFLAGS_HAVE_GC != 0;
        let free = t.tp_free.map(|f| f as usize);
        at >= std::mem::size_of::<ffi::PyObject>()
            && t.tp_basicsize as usize == size
            && t.tp_itemsize == 0
            && t.tp_dictoffset == 0
            && t.tp_weaklistoffset == 0
            // (A kept object's GC header keeps its FINALIZED bit: no
            // finalizer may be skipped on reuse.)
            && t.tp_finalize.is_none()
            && flags & ffi::Py_TPFLAGS_HEAPTYPE != 0
            && flags & ffi::Py_TPFLAGS_BASETYPE == 0
            && t.tp_alloc.map(|f| f as usize) == Some(generic_alloc as usize)
            && free == Some(if gc { gc_del } else { del } as usize)
            && ffi::Py_TYPE(sample.as_ptr()) == tp
            && (!T::FLAG || *((obj + flag_at) as *const usize) == 0)
    };
    if !fits {
        return;
    }
    T::offset().store(at, Ordering::Relaxed);
    // SAFETY: the type is live and a heap type; objects made before this
    // point were made by PyO3 with the same layout and allocator (checked
    // above), so the new `tp_dealloc` frees them correctly too.
    unsafe {
        (*tp).tp_dealloc = Some(dealloc::<T>);
        ffi::PyType_Modified(tp);
    }
}

/// A mutable borrow of the value of an `Object` or `Array`, taken by
/// writing PyO3's borrow flag directly (see [`borrow_mut`]); the flag is
/// cleared on drop.
pub(crate) struct RawMut<'a, T> {
    value: &'a mut T,
    flag: &'a AtomicUsize,
}

/// PyO3's flag value for "mutably borrowed".
const BORROWED_MUT: usize = usize::MAX;

/// The value of the view object `obj`, mutably borrowed as PyO3's
/// `try_borrow_mut` would (`None` when it is borrowed already, or while
/// PyO3's paths are in use), with plain loads and stores instead of
/// PyO3's atomic compare-exchange: every access to a borrow flag happens
/// attached, and with the GIL that means one thread at a time (the GIL's
/// hand-overs order them). Free-threaded builds keep the compare-exchange.
///
/// # Safety
///
/// The thread is attached; `obj` is a live object of type `T`, which
/// outlives the borrow.
#[inline(always)]
pub(crate) unsafe fn borrow_mut<'a, T: View>(obj: *mut ffi::PyObject) -> Option<RawMut<'a, T>> {
    let at = T::offset().load(Ordering::Relaxed);
    if at == 0 || !T::FLAG {
        return None;
    }
    let word = std::mem::size_of::<usize>();
    let flag_at = at + std::mem::size_of::<T>().div_ceil(word) * word;
    let base = obj.cast::<u8>();
    // SAFETY: `install` checked the layout: PyO3's borrow flag of the live
    // `T` at `obj` (an `AtomicUsize`, word aligned) follows the value.
    let flag = unsafe { &*base.add(flag_at).cast::<AtomicUsize>() };
    #[cfg(not(Py_GIL_DISABLED))]
    {
        if flag.load(Ordering::Relaxed) != 0 {
            return None;
        }
        flag.store(BORROWED_MUT, Ordering::Relaxed);
    }
    #[cfg(Py_GIL_DISABLED)]
    flag.compare_exchange(0, BORROWED_MUT, Ordering::AcqRel, Ordering::Relaxed)
        .ok()?;
    // SAFETY: the value sits at `at` (checked by `install`), and the flag
    // now says no one else may borrow it until `RawMut` is dropped.
    let value = unsafe { &mut *base.add(at).cast::<T>() };
    Some(RawMut { value, flag })
}

impl<T> std::ops::Deref for RawMut<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T> std::ops::DerefMut for RawMut<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value
    }
}

impl<T> Drop for RawMut<'_, T> {
    fn drop(&mut self) {
        #[cfg(not(Py_GIL_DISABLED))]
        self.flag.store(0, Ordering::Relaxed);
        #[cfg(Py_GIL_DISABLED)]
        self.flag.store(0, Ordering::Release);
    }
}
