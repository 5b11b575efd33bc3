//! The serializer: its state ([`Serializer`]), the held references of the
//! walk ([`Held`]), and the one dispatch on a value's type
//! ([`Serializer::value`]: exact types first, then subclasses and the cold
//! fallback of [`super::other`]).
//!
//! Safety of the walk: every container, and every object that takes the
//! fallback, is held (a new reference) while it is written; its children
//! are borrowed from it. Exact scalars run no user code, so only the
//! fallback (a `default=` hook, an enum's `value`) can change a container
//! mid-walk, and it cannot free anything the walk still borrows.

use super::container::CYCLE_CHECK_DEPTH;
use super::other;
use super::out::Out;
#[cfg(not(feature = "abi3"))]
use crate::encode::Buf;
use pyo3::ffi;
use pyo3::prelude::*;

/// A held reference, released on drop (also on `?` early returns).
pub(super) struct Held(pub(super) *mut ffi::PyObject);

impl Held {
    /// # Safety
    /// `p` must be a live object and the interpreter attached.
    #[inline(always)]
    pub(super) unsafe fn new(p: *mut ffi::PyObject) -> Held {
        // SAFETY: per the contract.
        unsafe { ffi::Py_INCREF(p) };
        Held(p)
    }
}

impl Drop for Held {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: `Held::new` took this reference; the serializer only runs
        // with the interpreter attached.
        unsafe { ffi::Py_DECREF(self.0) }
    }
}

pub(crate) struct Serializer<'py> {
    pub(super) py: Python<'py>,
    pub(super) out: Out,
    /// Spaces per level (indented output only).
    pub(super) indent: usize,
    pub(super) sort_keys: bool,
    pub(super) default: Option<Bound<'py, PyAny>>,
    /// The containers being written, outermost first: the first
    /// [`CYCLE_CHECK_DEPTH`] inline (no allocation per call), the rest in
    /// `open_tail`; `depth` of them in all.
    pub(super) open_head: [*mut ffi::PyObject; CYCLE_CHECK_DEPTH],
    pub(super) open_tail: Vec<*mut ffi::PyObject>,
    pub(super) depth: usize,
    /// How many `default=` results are being written, nested.
    pub(super) default_depth: u32,
}

impl<'py> Serializer<'py> {
    /// A serializer writing into `out` with `dumps`' options (`indent`:
    /// `None` or a negative count writes compact output; a `None`
    /// `default` is no hook).
    pub(crate) fn new(
        py: Python<'py>,
        out: Out,
        indent: Option<isize>,
        sort_keys: bool,
        default: Option<Bound<'py, PyAny>>,
    ) -> Serializer<'py> {
        Serializer {
            py,
            out,
            indent: indent.unwrap_or(0).max(0) as usize,
            sort_keys,
            default: default.filter(|d| !d.is_none()),
            open_head: [std::ptr::null_mut(); CYCLE_CHECK_DEPTH],
            open_tail: Vec::new(),
            depth: 0,
            default_depth: 0,
        }
    }

    /// Write one value. `obj` is a borrowed reference the caller keeps alive.
    ///
    /// The general path: the container loops first try [`fast_scalar`](super::scalar::fast_scalar)
    /// with the write position in registers and call this for the rest.
    #[inline(never)]
    pub(super) fn value<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is a live object (caller's contract) and the
        // interpreter is attached (`self.py`); the type objects are statics.
        unsafe {
            let ty = ffi::Py_TYPE(obj);
            if ty == std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
                self.str(obj)
            } else if ty == std::ptr::addr_of_mut!(ffi::PyLong_Type) {
                self.int(obj)
            } else if ty == std::ptr::addr_of_mut!(ffi::PyFloat_Type) {
                self.float(obj)
            } else if ty == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
                self.dict::<PRETTY>(obj)
            } else if ty == std::ptr::addr_of_mut!(ffi::PyList_Type) {
                self.list::<PRETTY>(obj)
            } else if obj == ffi::Py_True() {
                self.out.extend_from_slice(b"true");
                Ok(())
            } else if obj == ffi::Py_False() {
                self.out.extend_from_slice(b"false");
                Ok(())
            } else if obj == ffi::Py_None() {
                self.out.extend_from_slice(b"null");
                Ok(())
            } else if ty == std::ptr::addr_of_mut!(ffi::PyTuple_Type) {
                self.tuple::<PRETTY>(obj)
            } else {
                self.other::<PRETTY>(obj)
            }
        }
    }

    /// Everything but the exact built-in types: subclasses of `str`, `int`,
    /// `dict`, `list`, `tuple` and `float` here (written as their base type;
    /// an `IntEnum` or `str`-mixin `Enum` member is one of these, with the
    /// same value), the rest in [`other`].
    ///
    /// The subclasses are dispatched here, not in `other::write`, so that a
    /// nesting of them costs this small frame per level rather than that
    /// large one: 1000 levels of a `dict` subclass then fit in a 512 KiB
    /// thread stack (macOS's default for threads) as plain dicts do. (No
    /// qjson view has these type flags: views cannot be subclassed.)
    #[cold]
    #[inline(never)]
    fn other<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is alive (caller's contract) and the interpreter is
        // attached. The writers called below hold containers themselves
        // before anything can run user code, and run none for scalars.
        unsafe {
            let flags = ffi::PyType_GetFlags(ffi::Py_TYPE(obj));
            if flags & ffi::Py_TPFLAGS_UNICODE_SUBCLASS != 0 {
                return self.str(obj);
            }
            if flags & ffi::Py_TPFLAGS_LONG_SUBCLASS != 0 {
                return self.int(obj);
            }
            if flags & ffi::Py_TPFLAGS_DICT_SUBCLASS != 0 {
                return self.dict::<PRETTY>(obj);
            }
            if flags & ffi::Py_TPFLAGS_LIST_SUBCLASS != 0 {
                return self.list::<PRETTY>(obj);
            }
            if flags & ffi::Py_TPFLAGS_TUPLE_SUBCLASS != 0 {
                return self.tuple::<PRETTY>(obj);
            }
            if ffi::PyFloat_Check(obj) != 0 {
                return self.float(obj);
            }
        }
        self.other_slow::<PRETTY>(obj)
    }

    /// [`Self::other`] for the types [`other`] handles.
    #[cold]
    #[inline(never)]
    fn other_slow<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is alive (caller's contract); held while written.
        let held = unsafe { Held::new(obj) };
        // SAFETY: as above.
        let obj = unsafe { Bound::from_borrowed_ptr(self.py, held.0) };
        other::write::<PRETTY>(self, &obj)
    }
}
