//! Holding a Python input without copying it.
//!
//! | input | how its bytes are held |
//! |---|---|
//! | `bytes` (and subclasses) | a reference to the object; its buffer is immutable |
//! | `str` | a reference to the object; its cached UTF-8 form (`PyUnicode_AsUTF8AndSize`), which lives as long as the str |
//! | a buffer over a `bytes` object (`memoryview(b)`, slices of it) | a buffer export (`PyObject_GetBuffer`), released on drop |
//! | any other buffer (`bytearray`, `memoryview`s of it, even read-only ones, mmap, numpy, ...) | copied once: the bytes could otherwise change under a validated index (a read-only flag does not stop the object behind the view) |
//!
//! `PyUnicode_AsUTF8AndSize` (stable ABI from 3.10) and the buffer protocol
//! (stable ABI from 3.11) are declared here by hand so that the abi3-py39
//! wheel can use them: both exist with this exact signature and struct layout
//! in every CPython 3 release.

use super::errors::decode_error_in;
use crate::error::{Error, ErrorKind};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};
use std::mem::ManuallyDrop;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `Py_buffer`, laid out as in CPython's `Include/pybuffer.h` (unchanged since 3.3).
#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: ffi::Py_ssize_t,
    itemsize: ffi::Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut ffi::Py_ssize_t,
    strides: *mut ffi::Py_ssize_t,
    suboffsets: *mut ffi::Py_ssize_t,
    internal: *mut c_void,
}

/// `PyBUF_SIMPLE`: a contiguous buffer of unsigned bytes.
const PYBUF_SIMPLE: c_int = 0;

extern "C" {
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const c_char;
    fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut RawBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

impl RawBuffer {
    fn empty() -> Box<RawBuffer> {
        Box::new(RawBuffer {
            buf: std::ptr::null_mut(),
            obj: std::ptr::null_mut(),
            len: 0,
            itemsize: 0,
            readonly: 0,
            ndim: 0,
            format: std::ptr::null_mut(),
            shape: std::ptr::null_mut(),
            strides: std::ptr::null_mut(),
            suboffsets: std::ptr::null_mut(),
            internal: std::ptr::null_mut(),
        })
    }
}

/// Whether the memory behind an export belongs to a `bytes` object, directly
/// or through a chain of memoryviews: only then is it immutable for as long
/// as the export lives. A read-only flag alone promises nothing of the sort:
/// `memoryview(bytearray).toreadonly()` still changes through the bytearray,
/// a read-only mmap through the file, a read-only numpy view through its
/// writable base, and third-party exporters through whatever they like.
fn bytes_behind(obj: &Bound<'_, PyAny>) -> bool {
    let py = obj.py();
    let mut root = obj.clone();
    while root.is_instance_of::<PyMemoryView>() {
        match root.getattr(pyo3::intern!(py, "obj")) {
            Ok(o) if !o.is(&root) && !o.is_none() => root = o,
            Ok(_) => return false,
            Err(_) => {
                let _ = PyErr::take(py);
                return false;
            }
        }
    }
    root.is_instance_of::<PyBytes>()
}

enum Owner {
    /// The memory belongs to `Input::object` (a `bytes` or a `str`).
    Object,
    /// A buffer export, released on drop.
    Buffer(Box<RawBuffer>),
    /// A private copy of a writable buffer.
    Copy(#[allow(dead_code)] Box<[u8]>),
    /// A slice of another input (`parse_many`), kept alive with it.
    Parent(std::sync::Arc<Input>, Origin),
    /// A slice of a buffer read from a file (`open_many`).
    Shared(std::sync::Arc<Vec<u8>>, Origin),
}

/// Where a document of a stream (`parse_many`, `open_many`) begins, so that
/// errors found when it is read (lazy documents) count in the whole stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin {
    /// Ordinal of the document in the stream.
    pub(crate) doc_index: u64,
    /// Stream offset of its first byte.
    pub(crate) at: u64,
    /// Offset of its first byte in the buffer it is a slice of (the parent
    /// input, or the chunk buffer).
    pub(crate) in_buf: usize,
    /// Line and column (1-based) of the buffer's first byte in the stream
    /// (a chunk buffer); `line` 0 when the buffer begins the stream.
    pub(crate) line: u64,
    pub(crate) col: u64,
}

/// The bytes of a Python input, kept alive and unchanged for as long as this lives.
pub(crate) struct Input {
    ptr: *const u8,
    len: usize,
    _owner: Owner,
    /// The object the caller passed (for `JSONDecodeError.doc`); its
    /// reference is released on drop unless [`Input::release_attached`]
    /// released it already.
    object: ManuallyDrop<Py<PyAny>>,
    /// Whether `object`'s reference was released (by
    /// [`Input::release_attached`]).
    released: bool,
    /// How many views and cursors hold a [`super::share::Share`] of the
    /// document (GIL builds; together they hold one count of its `Arc`).
    pub(crate) shares: AtomicUsize,
    /// Whether any view of the document was ever edited (see
    /// [`Input::mark_edited`]).
    edited: AtomicBool,
}

// SAFETY: the memory behind `ptr` is owned by `owner` and never mutated while
// it is held: bytes are immutable, a str's UTF-8 cache is never rewritten,
// read-only exports are read-only, and writable buffers were copied. Python
// references may be sent between threads (PyO3's `Py` is Send + Sync); the
// buffer export is only released with the interpreter attached (see Drop).
unsafe impl Send for Input {}
// SAFETY: as above; shared access only reads immutable memory.
unsafe impl Sync for Input {}

impl Input {
    /// Record that a view of the document is about to change its overlay.
    ///
    /// Every path that edits a view (item assignment and deletion, the
    /// list and dict methods, `patch`, `merge_patch`, `incr`, a failed
    /// patch's undo, unfolding a container) calls this before it changes
    /// anything, so a document that never called it has every view as
    /// made: lazy, without patches, and `dumps` of any view of it is one
    /// copy of its bytes, with no walk over the cached views
    /// (`view::write`). Setting it is never wrong (a document marked is
    /// only written by the walk); a missed path would write an edited view
    /// as its original bytes. A relaxed flag: views are edited and written
    /// attached, one thread at a time in GIL builds; in free-threaded
    /// builds a write racing an edit of the same document has no order in
    /// either case.
    #[inline(always)]
    pub(crate) fn mark_edited(&self) {
        self.edited.store(true, Ordering::Relaxed);
    }

    /// Whether [`Input::mark_edited`] was ever called.
    #[inline(always)]
    pub(crate) fn ever_edited(&self) -> bool {
        self.edited.load(Ordering::Relaxed)
    }

    pub(crate) fn new(obj: &Bound<'_, PyAny>) -> PyResult<Input> {
        if let Ok(b) = obj.cast::<PyBytes>() {
            let bytes = b.as_bytes();
            return Ok(Input {
                ptr: bytes.as_ptr(),
                len: bytes.len(),
                _owner: Owner::Object,
                object: ManuallyDrop::new(obj.clone().unbind()),
                released: false,
                shares: AtomicUsize::new(0),
                edited: AtomicBool::new(false),
            });
        }
        Input::new_other(obj)
    }

    /// [`Self::new`] of anything but `bytes` (out of line: `bytes` is the
    /// common input, and its path stays short).
    #[inline(never)]
    fn new_other(obj: &Bound<'_, PyAny>) -> PyResult<Input> {
        let object = ManuallyDrop::new(obj.clone().unbind());
        if obj.is_instance_of::<PyString>() {
            let mut size: ffi::Py_ssize_t = 0;
            // SAFETY: `obj` is a str (checked above) and the interpreter is
            // attached. The returned pointer is owned by the str and valid
            // while it lives; we keep a reference in `owner`.
            let p = unsafe { PyUnicode_AsUTF8AndSize(obj.as_ptr(), &mut size) };
            if p.is_null() {
                // A str holding lone surrogates has no UTF-8 form.
                let _ = PyErr::take(obj.py());
                return Err(surrogate_error(obj));
            }
            return Ok(Input {
                ptr: p.cast(),
                len: size as usize,
                _owner: Owner::Object,
                object,
                released: false,
                shares: AtomicUsize::new(0),
                edited: AtomicBool::new(false),
            });
        }
        if let Ok(ba) = obj.cast::<PyByteArray>() {
            let copy: Box<[u8]> = ba.to_vec().into_boxed_slice();
            return Ok(Input::copied(copy, object));
        }
        Input::from_buffer(obj, object)
    }

    fn copied(copy: Box<[u8]>, object: ManuallyDrop<Py<PyAny>>) -> Input {
        Input {
            ptr: copy.as_ptr(),
            len: copy.len(),
            _owner: Owner::Copy(copy),
            object,
            released: false,
            shares: AtomicUsize::new(0),
            edited: AtomicBool::new(false),
        }
    }

    fn from_buffer(obj: &Bound<'_, PyAny>, object: ManuallyDrop<Py<PyAny>>) -> PyResult<Input> {
        let mut view = RawBuffer::empty();
        // SAFETY: `view` points to a properly laid out, writable Py_buffer and
        // the interpreter is attached. On success the exporter filled it in
        // and we own one export, released exactly once (Drop or below).
        let rc = unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut *view, PYBUF_SIMPLE) };
        if rc != 0 {
            // Not a buffer (or not a contiguous one): say what is accepted.
            let _ = PyErr::take(obj.py());
            return Err(PyTypeError::new_err(format!(
                "expected bytes, bytearray, memoryview or str, got {}",
                obj.get_type().name()?
            )));
        }
        let (ptr, len) = (view.buf as *const u8, view.len as usize);
        if view.readonly != 0 && bytes_behind(obj) {
            return Ok(Input {
                ptr,
                len,
                _owner: Owner::Buffer(view),
                object,
                released: false,
                shares: AtomicUsize::new(0),
                edited: AtomicBool::new(false),
            });
        }
        // SAFETY: the export is live, so `ptr` addresses `len` readable bytes.
        let copy: Box<[u8]> = unsafe { std::slice::from_raw_parts(ptr, len) }.into();
        // SAFETY: releases the export obtained above, exactly once.
        unsafe { PyBuffer_Release(&mut *view) };
        Ok(Input::copied(copy, object))
    }

    /// The bytes `a..b` of `parent`, without a copy; errors name the
    /// parent's object.
    pub(crate) fn slice_of(
        py: Python<'_>,
        parent: &std::sync::Arc<Input>,
        a: usize,
        b: usize,
        origin: Origin,
    ) -> Input {
        let bytes = &parent.bytes()[a..b];
        Input {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
            object: ManuallyDrop::new(parent.object.clone_ref(py)),
            _owner: Owner::Parent(parent.clone(), origin),
            released: false,
            shares: AtomicUsize::new(0),
            edited: AtomicBool::new(false),
        }
    }

    /// The bytes `a..b` of a shared buffer, without a copy; errors name `object`.
    pub(crate) fn slice_of_shared(
        buf: &std::sync::Arc<Vec<u8>>,
        a: usize,
        b: usize,
        object: Py<PyAny>,
        origin: Origin,
    ) -> Input {
        let bytes = &buf[a..b];
        Input {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
            object: ManuallyDrop::new(object),
            _owner: Owner::Shared(buf.clone(), origin),
            released: false,
            shares: AtomicUsize::new(0),
            edited: AtomicBool::new(false),
        }
    }

    /// For a document of a stream: where it begins, and the buffer it is a
    /// slice of.
    pub(crate) fn origin(&self) -> Option<(Origin, &[u8])> {
        match &self._owner {
            Owner::Parent(parent, o) => Some((*o, parent.bytes())),
            Owner::Shared(buf, o) => Some((*o, &buf[..])),
            _ => None,
        }
    }

    /// The input bytes.
    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` addresses `len` bytes kept alive and unchanged by
        // `_owner` and `object` for as long as `self` lives (see the Send impl).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The object the caller passed.
    pub(crate) fn object(&self) -> &Py<PyAny> {
        &self.object
    }

    /// Release the reference to the caller's object now, by a plain
    /// decref, when it is the only Python reference this input holds (its
    /// bytes are the object's, a private copy or a shared file buffer;
    /// not a buffer export or a slice of another input): then dropping
    /// the input afterwards needs no attached interpreter. False (nothing
    /// done) otherwise.
    ///
    /// This is for a `tp_dealloc` that drops the last share of a document:
    /// CPython calls it attached, but PyO3 does not know that (its own
    /// count of attachments is zero there) and would otherwise defer the
    /// release of a `Py` to its pool, unless the drop ran inside
    /// `Python::attach` (thread-local reads, a check of the pool).
    ///
    /// # Safety
    ///
    /// The thread is attached (holds the GIL), and the input is dropped
    /// next, nothing read from it in between.
    #[cfg(not(feature = "abi3"))]
    pub(crate) unsafe fn release_attached(&mut self) -> bool {
        if self.released || matches!(self._owner, Owner::Buffer(_) | Owner::Parent(..)) {
            return self.released;
        }
        self.released = true;
        // SAFETY: the reference is owned by `object` and, with `released`
        // set, never used or dropped again (the caller drops the input
        // next); the thread is attached (caller).
        unsafe { ffi::Py_DECREF(self.object.as_ptr()) };
        true
    }

    /// Whether dropping the input releases no Python object: it holds
    /// none but `object`, released by [`Self::release_attached`].
    #[cfg(not(feature = "abi3"))]
    pub(crate) fn released(&self) -> bool {
        self.released
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        if !self.released {
            // SAFETY: dropped once, here, and never used after.
            unsafe { ManuallyDrop::drop(&mut self.object) };
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        if let Owner::Buffer(view) = self {
            Python::attach(|_| {
                // SAFETY: the export was obtained by PyObject_GetBuffer and is
                // released exactly once, with the interpreter attached.
                unsafe { PyBuffer_Release(&mut **view) };
            });
        }
    }
}

/// Cold path: `JSONDecodeError` for a str that holds a lone surrogate (as
/// orjson raises; `json.loads` would accept it), at the first surrogate's
/// offset in the str's UTF-8 form with surrogates written as three bytes
/// (`"surrogatepass"`), where the UTF-8 lead byte `0xED` is followed by
/// `0xA0..=0xBF` (code points U+D800..U+DFFF) and nowhere else.
#[cold]
#[inline(never)]
fn surrogate_error(s: &Bound<'_, PyAny>) -> PyErr {
    let py = s.py();
    let make = || -> PyResult<PyErr> {
        let wtf8 = s.call_method1(pyo3::intern!(py, "encode"), ("utf-8", "surrogatepass"))?;
        let bytes = wtf8.cast::<PyBytes>()?.as_bytes();
        let at = bytes
            .windows(2)
            .position(|w| w[0] == 0xED && w[1] >= 0xA0)
            .unwrap_or(0);
        let e = Error::new(ErrorKind::SurrogateInStr, at);
        Ok(decode_error_in(py, e, bytes, s))
    };
    make().unwrap_or_else(|err| err)
}

/// The UTF-8 form of a str, borrowed from the str's own cache (no copy).
/// A compact ASCII str (most keys) is its own UTF-8: read in place, without
/// the call.
#[inline]
pub(crate) fn str_utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    // SAFETY: `s` is a live str, borrowed for `'a`.
    match unsafe { compact_ascii(s.as_ptr()) } {
        Some(text) => Ok(text),
        None => str_utf8_cached(s),
    }
}

/// The text of str `obj` when it is in the compact ASCII form (most keys
/// and short values): its `len` characters, one byte each (ASCII, hence
/// UTF-8), follow the header, read in place. `None` for any other form
/// (and always where the layout is not public: abi3, 3.14+, PyPy).
///
/// # Safety
///
/// `obj` is a live str (a `PyASCIIObject`, exact or a subclass), alive
/// for `'a`.
#[inline]
pub(crate) unsafe fn compact_ascii<'a>(obj: *mut ffi::PyObject) -> Option<&'a str> {
    #[cfg(not(any(feature = "abi3", Py_3_14, PyPy, GraalPy)))]
    // SAFETY: `obj` is a live str (the caller's contract); in the compact
    // ASCII form its bytes follow the header for the object's lifetime.
    unsafe {
        if ffi::PyUnicode_IS_COMPACT_ASCII(obj) != 0 {
            let len = ffi::PyUnicode_GET_LENGTH(obj) as usize;
            let data = ffi::PyUnicode_DATA(obj).cast::<u8>();
            return Some(std::str::from_utf8_unchecked(std::slice::from_raw_parts(
                data, len,
            )));
        }
    }
    #[cfg(any(feature = "abi3", Py_3_14, PyPy, GraalPy))]
    let _ = obj;
    None
}

/// [`str_utf8`] through CPython's UTF-8 cache.
#[inline(never)]
fn str_utf8_cached<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `s` is a str and the interpreter is attached. The UTF-8 cache
    // the pointer addresses is owned by the str and lives as long as the
    // borrow of `s`.
    let p = unsafe { PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size) };
    if p.is_null() {
        return Err(PyErr::fetch(s.py()));
    }
    // SAFETY: CPython guarantees the cache holds `size` bytes of valid UTF-8.
    Ok(unsafe {
        std::str::from_utf8_unchecked(std::slice::from_raw_parts(p.cast(), size as usize))
    })
}

/// [`str_utf8`] for a key being looked up: `None` (the error cleared) when
/// the str has no UTF-8 form (it holds a lone surrogate). No document holds
/// such a key (a lone `\uD800` escape is an error) and no edit can add one,
/// so a lookup treats it as absent, as a dict does a key it lacks.
pub(crate) fn key_utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Option<&'a str>> {
    match str_utf8(s) {
        Ok(k) => Ok(Some(k)),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyUnicodeEncodeError>(s.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

impl AsRef<[u8]> for Input {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}
