//! The output buffer of `dumps`.
//!
//! Version-specific builds write straight into the `bytes` object that
//! `dumps` returns ([`BytesBuf`]): it is created with room for
//! [`INITIAL`] bytes (small enough for CPython's small-object allocator),
//! grown by doubling with `_PyBytes_Resize` (a `realloc`, in place when the
//! allocator can), and cut to the written length at the end, so the output
//! is never copied out of a staging buffer. The stable-ABI build has no
//! `_PyBytes_Resize` and writes into a `Vec<u8>`, copied into a new `bytes`
//! at the end.

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

    /// Initial capacity: with the `bytes` header (33 bytes on 64-bit) the
    /// object stays within CPython's 512-byte small-object limit.
    pub(crate) const INITIAL: usize = 512 - 64;

    /// A `bytes` object being written: `len` bytes written out of room for
    /// `cap` (its current size), starting at `ptr` (its `ob_sval`).
    pub(crate) struct BytesBuf {
        obj: *mut ffi::PyObject,
        ptr: *mut u8,
        len: usize,
        cap: usize,
    }

    impl BytesBuf {
        /// A new, empty buffer (a fresh `bytes` of [`INITIAL`] bytes).
        pub(crate) fn new(py: Python<'_>) -> PyResult<BytesBuf> {
            // SAFETY: with a NULL source, PyBytes_FromStringAndSize
            // allocates an uninitialized `bytes` (a new reference, or NULL
            // with an exception set); `INITIAL > 0`, so it is a fresh object
            // (never the shared empty one), owned only by us.
            unsafe {
                let obj = ffi::PyBytes_FromStringAndSize(std::ptr::null(), INITIAL as _);
                if obj.is_null() {
                    return Err(PyErr::fetch(py));
                }
                Ok(BytesBuf {
                    obj,
                    ptr: ffi::PyBytes_AS_STRING(obj) as *mut u8,
                    len: 0,
                    cap: INITIAL,
                })
            }
        }

        /// The `bytes` object holding exactly the bytes written.
        pub(crate) fn finish<'py>(mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
            if self.len == 0 {
                return Ok(PyBytes::new(py, b""));
            }
            let mut obj = std::mem::replace(&mut self.obj, std::ptr::null_mut());
            // SAFETY: `obj` is our `bytes` (reference count 1, never shared),
            // its first `len` bytes written. _PyBytes_Resize shrinks it in
            // place or moves it (then frees the old object), sets its size
            // and terminating NUL; on failure it frees it, sets `obj` to NULL
            // and raises. `self.obj` is NULL, so `drop` does nothing more.
            unsafe {
                if (self.len as ffi::Py_ssize_t) != ffi::Py_SIZE(obj)
                    && ffi::_PyBytes_Resize(&mut obj, self.len as ffi::Py_ssize_t) != 0
                {
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
