//! The output buffer of `dumps`.
//!
//! Version-specific builds write straight into the `bytes` object that
//! `dumps` returns (`BytesBuf`), so in the common case the output is
//! never copied: the object is created with room for about as many bytes
//! as the previous call for a document of the same shape (top-level type
//! and length) wrote (`HINT` plus an eighth; at least
//! `INITIAL`, small enough for CPython's small-object allocator), and at
//! the end its size is set to the length written, with no reallocation
//! when at most a quarter of it is unused (else `_PyBytes_Resize` cuts it).
//!
//! When the output outgrows that guess, the bytes written so far move to a
//! scratch `Vec<u8>` kept between calls (its capacity is what matters), the
//! rest is written there, and the result is copied into a new `bytes` of
//! exactly the right size: the cost of a miss is one copy of the guess and
//! one of the result, and never a chain of reallocations.
//!
//! Why not simply grow the `bytes` by doubling: large buffers are mmapped
//! by glibc, which raises its mmap threshold to the size of the last mmapped
//! chunk freed; a buffer grown past the output and then cut hands back a
//! smaller chunk than the next call needs, so every call would mmap, and
//! page-fault, a fresh buffer (measured: ~50 faults and three syscalls per
//! 200 KB result), and outputs of varying sizes would pay a reallocation
//! chain each time.
//!
//! The stable-ABI build has no `_PyBytes_Resize` and always writes into a
//! reused `Vec<u8>`, copied into a new `bytes` at the end.

#[cfg(not(feature = "abi3"))]
pub(crate) use bytes_buf::{slot, BytesBuf as Out};

/// Outputs from this size on ask for transparent huge pages.
#[cfg(not(feature = "abi3"))]
const HUGE_MIN: usize = 8 << 20;

/// Ask Linux to back the 2 MiB-aligned interior of a large output buffer
/// `[p, p + len)`, not yet written, with transparent huge pages (where
/// they are enabled "always" or "madvise"): a large result's memory is
/// fresh pages whenever the allocator gave it back to the system in
/// between, each a page fault on its first write, about 2.6 us apiece on
/// this machine: 5,087 faults, 13 ms, for the 21 MB of `dumps_many` of the
/// 20 MB batch file, against which ten 2 MiB faults. (A hint: nothing
/// changes where it is not honoured.)
#[cfg(not(feature = "abi3"))]
#[allow(unused_variables)]
fn huge_pages(p: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    if len >= HUGE_MIN {
        const HUGE: usize = 2 << 20;
        const MADV_HUGEPAGE: std::ffi::c_int = 14;
        extern "C" {
            fn madvise(
                addr: *mut std::ffi::c_void,
                len: usize,
                advice: std::ffi::c_int,
            ) -> std::ffi::c_int;
        }
        let start = (p as usize).next_multiple_of(HUGE);
        let end = (p as usize + len) & !(HUGE - 1);
        if end > start {
            // SAFETY: `[start, end)` lies within the caller's live
            // allocation `[p, p + len)` and is page-aligned; MADV_HUGEPAGE
            // only changes how the kernel backs those pages (their
            // contents are kept), and failure (e.g. no THP support) just
            // returns an error, ignored.
            unsafe {
                madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE);
            }
        }
    }
}
#[cfg(feature = "abi3")]
pub(crate) type Out = Vec<u8>;

#[cfg(not(feature = "abi3"))]
mod bytes_buf {
    use crate::encode::Buf;
    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::types::PyBytes;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    /// Smallest initial capacity: with the `bytes` header (33 bytes on
    /// 64-bit) the object stays within CPython's 512-byte small-object
    /// limit.
    pub(crate) const INITIAL: usize = 512 - 64;

    /// The length of the previous result for each shape of document (a
    /// sizing hint, shared by all threads; a stale value only costs a copy
    /// or a cut). The shape is the top-level type and length ([`slot`]):
    /// a program that writes documents of a few kinds in turn (a large
    /// one, then small ones) gets each kind's own size back, where one
    /// shared hint would make every large result outgrow the guess of the
    /// small one before it (a copy of the whole output) and every small
    /// one allocate the large size.
    /// One more entry, [`VIEW_SLOT`], takes the lengths of view outputs
    /// ([`BytesBuf::small`], [`BytesBuf::sized`]), which size themselves:
    /// it is written and never read, so a view's result never sizes the
    /// next plain `dumps` of a shape that maps to a real slot.
    pub(crate) static HINT: [AtomicUsize; SLOTS + 1] = [const { AtomicUsize::new(0) }; SLOTS + 1];
    /// Hint slots: a small direct-mapped table; shapes that collide share one.
    pub(crate) const SLOTS: usize = 64;
    /// The write-only hint entry of view outputs (see [`HINT`]).
    const VIEW_SLOT: usize = SLOTS;

    /// The hint slot of a document whose top level is `ty` (the type
    /// object's address) with `len` members or items.
    #[inline]
    pub(crate) fn slot(ty: usize, len: usize) -> usize {
        let h = (len as u64 ^ ((ty as u64) << 16)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 58) as usize % SLOTS
    }

    /// The scratch buffer kept between calls (only its capacity matters).
    static SCRATCH: Mutex<Vec<u8>> = Mutex::new(Vec::new());
    /// Scratch buffers larger than this are freed after the call.
    const SCRATCH_KEEP_MAX: usize = 8 << 20;

    /// The output being written: `len` bytes written out of room for `cap`
    /// at `ptr`, which is the `ob_sval` of `obj` (a fresh `bytes`, ours
    /// alone) or, once the output outgrew it (`obj` NULL), the buffer of
    /// `scratch`.
    pub(crate) struct BytesBuf {
        obj: *mut ffi::PyObject,
        scratch: Vec<u8>,
        ptr: *mut u8,
        len: usize,
        cap: usize,
        /// Where the result's length goes ([`HINT`]).
        slot: usize,
    }

    impl BytesBuf {
        /// A new, empty buffer: a fresh `bytes` with room for the previous
        /// result and an eighth more, or [`INITIAL`] bytes.
        pub(crate) fn new(py: Python<'_>, slot: usize) -> PyResult<BytesBuf> {
            let hint = HINT[slot].load(Ordering::Relaxed);
            Self::with_capacity(
                py,
                INITIAL.max(hint.saturating_add(hint / 8).min(isize::MAX as usize / 4)),
                slot,
            )
        }

        /// A buffer for the encoded parts of an edited view (the result is
        /// assembled elsewhere, see `dumps_view`): [`INITIAL`] bytes, not the
        /// size of the previous result, which may be that of a large
        /// document.
        pub(crate) fn small(py: Python<'_>) -> PyResult<BytesBuf> {
            Self::with_capacity(py, INITIAL, VIEW_SLOT)
        }

        /// A buffer with room for `cap` bytes (an edited view of a small
        /// document written straight into the result, see `dumps_view`),
        /// its length going to [`VIEW_SLOT`] as [`Self::small`]'s.
        pub(crate) fn sized(py: Python<'_>, cap: usize) -> PyResult<BytesBuf> {
            Self::with_capacity(py, cap.max(INITIAL), VIEW_SLOT)
        }

        fn with_capacity(py: Python<'_>, mut cap: usize, slot: usize) -> PyResult<BytesBuf> {
            // SAFETY: with a NULL source, PyBytes_FromStringAndSize
            // allocates an uninitialized `bytes` (a new reference, or NULL
            // with an exception set); callers pass `cap >= INITIAL > 0`, so it is a fresh
            // object (never the shared empty one), owned only by us.
            unsafe {
                let mut obj = ffi::PyBytes_FromStringAndSize(std::ptr::null(), cap as _);
                if obj.is_null() && cap > INITIAL {
                    // The guess from a large earlier result did not fit in
                    // memory: this call may need far less, so start small
                    // (and forget the guess, or every later call would fail
                    // the same way: the hint is only updated on success).
                    drop(PyErr::take(py));
                    HINT[slot].store(0, Ordering::Relaxed);
                    cap = INITIAL;
                    obj = ffi::PyBytes_FromStringAndSize(std::ptr::null(), cap as _);
                }
                if obj.is_null() {
                    return Err(PyErr::fetch(py));
                }
                let ptr = ffi::PyBytes_AS_STRING(obj) as *mut u8;
                super::huge_pages(ptr, cap);
                Ok(BytesBuf {
                    obj,
                    scratch: Vec::new(),
                    ptr,
                    len: 0,
                    cap,
                    slot,
                })
            }
        }

        /// The `bytes` object holding exactly the bytes written.
        pub(crate) fn finish<'py>(mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
            HINT[self.slot].store(self.len, Ordering::Relaxed);
            if self.obj.is_null() {
                // SAFETY: in scratch mode `ptr` is the scratch buffer, its
                // first `len` bytes written.
                let written = unsafe { std::slice::from_raw_parts(self.ptr, self.len) };
                return Ok(PyBytes::new(py, written));
            }
            if self.len == 0 {
                return Ok(PyBytes::new(py, b""));
            }
            let mut obj = std::mem::replace(&mut self.obj, std::ptr::null_mut());
            // SAFETY: `obj` is our `bytes` (reference count 1, never shared),
            // its first `len <= cap` bytes written, and it has room for
            // `cap` bytes and a NUL. With at most a quarter unused (or at
            // most `INITIAL` bytes in all) it keeps its memory: its size is
            // set to `len` and the NUL written (what a cut does, but no
            // `realloc`; its hash is still unset). Otherwise _PyBytes_Resize
            // shrinks it in place or moves it, sets its size and NUL; on
            // failure it frees it, sets `obj` to NULL and raises. `self.obj`
            // is NULL now, so `drop` only returns the scratch buffer.
            unsafe {
                if self.cap - self.len <= self.cap / 4 || self.cap <= INITIAL {
                    *self.ptr.add(self.len) = 0;
                    (*obj.cast::<ffi::PyVarObject>()).ob_size = self.len as ffi::Py_ssize_t;
                } else if ffi::_PyBytes_Resize(&mut obj, self.len as ffi::Py_ssize_t) != 0 {
                    return Err(PyErr::fetch(py));
                }
                Ok(Bound::from_owned_ptr(py, obj).cast_into_unchecked::<PyBytes>())
            }
        }

        /// The slow path of `reserve`: move to (or grow) the scratch buffer.
        #[cold]
        #[inline(never)]
        fn grow_to(&mut self, additional: usize) {
            let need = self.len.checked_add(additional).expect("capacity overflow");
            if self.obj.is_null() {
                // SAFETY: the first `len` bytes of the scratch buffer are
                // written; `reserve` keeps them.
                unsafe { self.scratch.set_len(self.len) };
                self.scratch.reserve(additional);
            } else {
                // Reuse the scratch buffer of earlier calls, unless another
                // call holds it (a re-entrant `default=` hook).
                let mut v = SCRATCH
                    .try_lock()
                    .ok()
                    .map(|mut g| std::mem::take(&mut *g))
                    .unwrap_or_default();
                v.clear();
                v.reserve(need.max(self.cap.saturating_mul(2)));
                // SAFETY: the first `len` bytes at `ptr` (the `bytes`) are
                // written; `v` has room for them. The `bytes` is ours alone
                // and no longer needed once they are copied.
                unsafe {
                    v.extend_from_slice(std::slice::from_raw_parts(self.ptr, self.len));
                    ffi::Py_DECREF(std::mem::replace(&mut self.obj, std::ptr::null_mut()));
                }
                self.scratch = v;
            }
            self.ptr = self.scratch.as_mut_ptr();
            self.cap = self.scratch.capacity();
        }
    }

    impl Drop for BytesBuf {
        fn drop(&mut self) {
            if !self.obj.is_null() {
                // SAFETY: we own this reference; the buffer is only used
                // with the interpreter attached (inside `dumps`).
                unsafe { ffi::Py_DECREF(self.obj) }
            }
            let mut v = std::mem::take(&mut self.scratch);
            if v.capacity() != 0 && v.capacity() <= SCRATCH_KEEP_MAX {
                if let Ok(mut slot) = SCRATCH.try_lock() {
                    v.clear();
                    if slot.capacity() < v.capacity() {
                        *slot = v;
                    }
                }
            }
        }
    }

    // SAFETY: `ptr` is the `bytes` object's buffer of `cap` bytes or the
    // scratch Vec's buffer of `cap` (its capacity), the first `len` written
    // (`set_len`'s contract); `grow_to` moves to a buffer with room for
    // `len + additional` and updates `ptr` and `cap`.
    unsafe impl Buf for BytesBuf {
        #[inline(always)]
        fn len(&self) -> usize {
            self.len
        }
        #[inline(always)]
        fn spare(&self) -> usize {
            self.cap - self.len
        }
        #[inline]
        fn grow(&mut self, additional: usize) {
            self.grow_to(additional);
        }
        #[inline(always)]
        fn as_mut_ptr(&mut self) -> *mut u8 {
            self.ptr
        }
        #[inline(always)]
        unsafe fn set_len(&mut self, len: usize) {
            debug_assert!(len <= self.cap);
            self.len = len;
        }
    }

    impl std::ops::Deref for BytesBuf {
        type Target = [u8];
        #[inline]
        fn deref(&self) -> &[u8] {
            // SAFETY: the first `len` bytes at `ptr` are written and live
            // while `self` is borrowed.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }
}
