//! The output buffer of `dumps`.
//!
//! Version-specific builds write straight into the `bytes` object that
//! `dumps` returns ([`BytesBuf`]), so the output is never copied out of a
//! staging buffer: it is created with room for about as many bytes as the
//! previous call wrote ([`HINT`]; at least [`INITIAL`], which is small
//! enough for CPython's small-object allocator), grown by doubling with
//! `_PyBytes_Resize` (a `realloc`), and cut to the written length at the
//! end only when more than a quarter of it (and over [`INITIAL`] bytes) is
//! unused.
//!
//! Why the hint and the lazy cut: large buffers are mmapped by glibc, and
//! it raises its mmap threshold to the size of the last mmapped chunk
//! freed. A buffer grown past the output and then cut hands back a smaller
//! chunk than the next call will need, so every call would mmap, and
//! page-fault, a fresh buffer (measured: ~50 faults and three syscalls per
//! 200 KB output). Sized from the previous call and left uncut, same-sized
//! outputs reuse heap memory with no growth and no copy. A quarter of the
//! buffer at most is unused in a result.
//!
//! The stable-ABI build has no `_PyBytes_Resize` and writes into a
//! reused `Vec<u8>`, copied into a new `bytes` at the end.

#[cfg(not(feature = "abi3"))]
pub(crate) use bytes_buf::BytesBuf as Out;
#[cfg(feature = "abi3")]
pub(crate) type Out = Vec<u8>;

#[cfg(not(feature = "abi3"))]
mod bytes_buf {
    use crate::encode::Buf;
    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::types::PyBytes;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Smallest initial capacity: with the `bytes` header (33 bytes on
    /// 64-bit) the object stays within CPython's 512-byte small-object
    /// limit.
    pub(crate) const INITIAL: usize = 512 - 64;

    /// The length of the previous result (a sizing hint, shared by all
    /// threads; a stale value only costs a growth or a cut).
    pub(crate) static HINT: AtomicUsize = AtomicUsize::new(0);

    /// A `bytes` object being written: `len` bytes written out of room for
    /// `cap` (its current size), starting at `ptr` (its `ob_sval`).
    pub(crate) struct BytesBuf {
        obj: *mut ffi::PyObject,
        ptr: *mut u8,
        len: usize,
        cap: usize,
    }

    impl BytesBuf {
        /// A new, empty buffer: a fresh `bytes` with room for the previous
        /// result and an eighth more, or [`INITIAL`] bytes.
        pub(crate) fn new(py: Python<'_>) -> PyResult<BytesBuf> {
            let hint = HINT.load(Ordering::Relaxed);
            let cap = INITIAL.max(hint.saturating_add(hint / 8).min(isize::MAX as usize / 4));
            // SAFETY: with a NULL source, PyBytes_FromStringAndSize
            // allocates an uninitialized `bytes` (a new reference, or NULL
            // with an exception set); `INITIAL > 0`, so it is a fresh object
            // (never the shared empty one), owned only by us.
            unsafe {
                let obj = ffi::PyBytes_FromStringAndSize(std::ptr::null(), cap as _);
                if obj.is_null() {
                    return Err(PyErr::fetch(py));
                }
                Ok(BytesBuf {
                    obj,
                    ptr: ffi::PyBytes_AS_STRING(obj) as *mut u8,
                    len: 0,
                    cap,
                })
            }
        }

        /// The `bytes` object holding exactly the bytes written.
        pub(crate) fn finish<'py>(mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
            HINT.store(self.len, Ordering::Relaxed);
            if self.len == 0 {
                return Ok(PyBytes::new(py, b""));
            }
            let mut obj = std::mem::replace(&mut self.obj, std::ptr::null_mut());
            // SAFETY: `obj` is our `bytes` (reference count 1, never shared),
            // its first `len <= cap` bytes written, and it has room for
            // `cap` bytes and a NUL. With at most a quarter unused (or at
            // most `INITIAL` bytes in all) it keeps its memory: its size is set to `len` and the NUL written (what
            // a cut does, but no `realloc`; its hash is still unset).
            // Otherwise _PyBytes_Resize shrinks it in place or moves it,
            // sets its size and NUL; on failure it frees it, sets `obj` to
            // NULL and raises. `self.obj` is NULL, so `drop` does nothing.
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

        /// The slow path of `reserve`: double (at least) the capacity.
        #[cold]
        #[inline(never)]
        fn grow_to(&mut self, additional: usize) {
            let need = self.len.checked_add(additional).expect("capacity overflow");
            let cap = need.max(self.cap.saturating_mul(2));
            assert!(cap <= isize::MAX as usize / 2, "capacity overflow");
            // SAFETY: `self.obj` is our unshared `bytes` (see `new`); on
            // success it may have moved, so `ptr` is re-read; the written
            // bytes are kept by the reallocation.
            unsafe {
                if ffi::_PyBytes_Resize(&mut self.obj, cap as ffi::Py_ssize_t) != 0 {
                    // The old object is freed and `obj` is NULL; like `Vec`,
                    // treat running out of memory as fatal.
                    std::alloc::handle_alloc_error(
                        std::alloc::Layout::from_size_align(cap, 1).expect("valid layout"),
                    );
                }
                self.ptr = ffi::PyBytes_AS_STRING(self.obj) as *mut u8;
            }
            self.cap = cap;
        }
    }

    impl Drop for BytesBuf {
        fn drop(&mut self) {
            if !self.obj.is_null() {
                // SAFETY: we own this reference; the buffer is only used
                // with the interpreter attached (inside `dumps`).
                unsafe { ffi::Py_DECREF(self.obj) }
            }
        }
    }

    impl Buf for BytesBuf {
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
