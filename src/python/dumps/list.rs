//! `list` and `tuple` values (and subclasses), one loop for both
//! ([`Serializer::sequence`]). Version-specific builds read the item array
//! in place; a list's size is re-read for each item, as user code (a
//! `default=` hook) may have shrunk it meanwhile.

use super::{Held, Serializer};
#[cfg(not(feature = "abi3"))]
use crate::encode::Buf;
use pyo3::ffi;
use pyo3::prelude::*;

impl<'py> Serializer<'py> {
    /// A `list` (or subclass).
    #[inline(never)]
    pub(super) fn list<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is a list (or subclass: same layout) and the
        // interpreter is attached.
        #[cfg(not(feature = "abi3"))]
        let n = unsafe { ffi::PyList_GET_SIZE(obj) };
        // SAFETY: as above.
        #[cfg(feature = "abi3")]
        let n = unsafe { ffi::PyList_Size(obj) };
        // Version-specific builds read the item array in place; the size is
        // re-read for each item, as user code (a `default=` hook) may have
        // shrunk the list meanwhile.
        #[cfg(not(feature = "abi3"))]
        // SAFETY: `obj` is a list (held by `sequence` while this runs) and
        // `i` is below its current size.
        return self.sequence::<PRETTY>(obj, n, |o, i| unsafe {
            if i < ffi::PyList_GET_SIZE(o) {
                ffi::PyList_GET_ITEM(o, i)
            } else {
                std::ptr::null_mut()
            }
        });
        // SAFETY: as above; PyList_GetItem returns a borrowed reference, or
        // NULL (IndexError) when the list shrank meanwhile.
        #[cfg(feature = "abi3")]
        self.sequence::<PRETTY>(obj, n, |o, i| unsafe { ffi::PyList_GetItem(o, i) })
    }

    /// A `tuple` (or subclass).
    #[inline(never)]
    pub(super) fn tuple<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is a tuple (or subclass: same layout) and the
        // interpreter is attached.
        #[cfg(not(feature = "abi3"))]
        let n = unsafe { ffi::PyTuple_GET_SIZE(obj) };
        // SAFETY: as above.
        #[cfg(feature = "abi3")]
        let n = unsafe { ffi::PyTuple_Size(obj) };
        // SAFETY: as above (tuples never shrink, and `i < n`).
        #[cfg(not(feature = "abi3"))]
        return self.sequence::<PRETTY>(obj, n, |o, i| unsafe { ffi::PyTuple_GET_ITEM(o, i) });
        // SAFETY: as above (tuples never shrink).
        #[cfg(feature = "abi3")]
        self.sequence::<PRETTY>(obj, n, |o, i| unsafe { ffi::PyTuple_GetItem(o, i) })
    }

    #[inline(always)]
    fn sequence<const PRETTY: bool>(
        &mut self,
        obj: *mut ffi::PyObject,
        n: ffi::Py_ssize_t,
        get: impl Fn(*mut ffi::PyObject, ffi::Py_ssize_t) -> *mut ffi::PyObject,
    ) -> PyResult<()> {
        if n <= 0 {
            self.out.extend_from_slice(b"[]");
            return Ok(());
        }
        // SAFETY: `obj` is alive (caller's contract).
        let _held = unsafe { Held::new(obj) };
        self.enter(obj)?;
        // Lists of lists (`[[x, y], ...]`) write their short items inline
        // (`member`'s `SHORT`); other sequences keep the plain loop. The
        // first item decides; `n > 0`, so it exists.
        #[cfg(not(feature = "abi3"))]
        let nested_lists = !PRETTY && {
            let first = get(obj, 0);
            // SAFETY: `get` returns a live borrowed item, or null.
            !first.is_null()
                && unsafe { ffi::Py_TYPE(first) } == std::ptr::addr_of_mut!(ffi::PyList_Type)
        };
        #[cfg(feature = "abi3")]
        let nested_lists = false;
        if nested_lists {
            self.items::<PRETTY, true>(obj, n, get)
        } else {
            self.items::<PRETTY, false>(obj, n, get)
        }
    }

    /// The items of a non-empty sequence `obj` the caller holds and has
    /// entered; `SHORT` as in [`Self::member`].
    #[inline(always)]
    fn items<const PRETTY: bool, const SHORT: bool>(
        &mut self,
        obj: *mut ffi::PyObject,
        n: ffi::Py_ssize_t,
        get: impl Fn(*mut ffi::PyObject, ffi::Py_ssize_t) -> *mut ffi::PyObject,
    ) -> PyResult<()> {
        let depth = self.depth;
        let mut pos = self.pos_with_room();
        // SAFETY: `pos` has room.
        unsafe { pos.put(b'[') };
        for i in 0..n {
            let item = get(obj, i);
            if item.is_null() {
                // The list shrank while an item ran user code: stop there.
                self.shrunk();
                break;
            }
            // SAFETY: (writes through `pos`) as in `dict`, `ROOM` bytes of
            // room before each fast write group.
            unsafe {
                if i > 0 {
                    pos.put(b',');
                }
                if PRETTY {
                    pos.store(&mut self.out);
                    self.newline(depth);
                    pos = self.pos_with_room();
                }
                // Borrowed from the container we hold (see `dict`).
                pos = self.member::<PRETTY, SHORT>(pos, item)?;
            }
        }
        self.close::<PRETTY>(pos, depth, b']');
        Ok(())
    }

    /// A list shrank under the walk: clear the IndexError, if any.
    #[cold]
    #[inline(never)]
    fn shrunk(&self) {
        drop(PyErr::take(self.py));
    }
}
