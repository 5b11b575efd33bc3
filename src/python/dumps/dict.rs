//! `dict` values: members in insertion order, or in key order with
//! `sort_keys`. Keys must be `str` (or a subclass); anything else raises.
//!
//! CPython 3.11 to 3.13 builds (with the GIL) read a combined table's
//! entries in place ([`dict_next`]) instead of calling `PyDict_Next`.

use super::error::encode_error;
use super::string::fast_str;
use super::{Held, Serializer};
use crate::encode::write_str;
#[cfg(not(feature = "abi3"))]
use crate::encode::Buf;
use pyo3::ffi;
use pyo3::prelude::*;

/// The keys object of a combined-table dict, as laid out by CPython 3.11
/// to 3.13 (`Include/internal/pycore_dict.h`, the same in all three for
/// builds with the GIL): after the fixed fields come the hash index
/// (`1 << dk_log2_index_bytes` bytes), then the entries, `{key, value}`
/// for str-keyed tables (`dk_kind != 0`) and `{hash, key, value}` for the
/// general kind. A deleted entry has a NULL value.
#[cfg(all(not(feature = "abi3"), Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
#[repr(C)]
#[allow(dead_code)] // the fields before `dk_nentries` are there for the layout
struct DictKeys {
    dk_refcnt: ffi::Py_ssize_t,
    dk_log2_size: u8,
    dk_log2_index_bytes: u8,
    dk_kind: u8,
    dk_version: u32,
    dk_usable: ffi::Py_ssize_t,
    dk_nentries: ffi::Py_ssize_t,
    dk_indices: [u8; 0],
}

/// A combined-table dict's entries: (the first entry, the number of
/// entries in use or deleted, the entry's width in pointers, the key's
/// place in an entry; the value follows the key). `None` for a split table.
///
/// # Safety
/// `obj` must be a live dict (or subclass) and the interpreter attached;
/// the answer holds while the dict is not changed.
#[cfg(all(not(feature = "abi3"), Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
#[inline(always)]
unsafe fn combined_entries(
    obj: *mut ffi::PyObject,
) -> Option<(*mut *mut ffi::PyObject, usize, usize, usize)> {
    // SAFETY: `obj` is a dict, whose `ma_values` is NULL for a combined
    // table; then `ma_keys` is a live keys object with the `DictKeys`
    // layout for these versions (see there) whose first `dk_nentries`
    // entries, past the index, are initialized.
    unsafe {
        let d = obj.cast::<ffi::PyDictObject>();
        if !(*d).ma_values.is_null() {
            return None;
        }
        let k = (*d).ma_keys.cast::<DictKeys>();
        let n = (*k).dk_nentries.max(0) as usize;
        let entries = std::ptr::addr_of_mut!((*k).dk_indices)
            .cast::<u8>()
            .add(1usize << (*k).dk_log2_index_bytes)
            .cast::<*mut ffi::PyObject>();
        // `{key, value}` entries, or `{hash, key, value}`.
        let (width, key_at) = if (*k).dk_kind != 0 { (2, 0) } else { (3, 1) };
        Some((entries, n, width, key_at))
    }
}

/// `PyDict_Next` without the call: CPython 3.11 to 3.13 builds (with the
/// GIL) read a combined table's entries in place, with `PyDict_Next`'s own
/// algorithm (the next entry at or after `*pos` whose value is not NULL,
/// `*pos` left just past it; the table and its entry count re-read on
/// every step, so a dict changed by user code meanwhile is handled as
/// `PyDict_Next` handles it). Split tables (instance `__dict__`s), other
/// versions and `abi3` call `PyDict_Next`.
///
/// # Safety
/// `obj` must be a live dict (or subclass) and the interpreter attached;
/// `*pos` must be 0 or a value left by an earlier call for this dict.
#[inline(always)]
pub(crate) unsafe fn dict_next(
    obj: *mut ffi::PyObject,
    pos: &mut ffi::Py_ssize_t,
    key: &mut *mut ffi::PyObject,
    val: &mut *mut ffi::PyObject,
) -> bool {
    #[cfg(all(not(feature = "abi3"), Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
    // SAFETY: `combined_entries`' contract (a live dict, attached), read
    // again on every call; `i` stays in `[*pos, n)` when an entry is read
    // (`*pos >= 0`: it starts at 0 and only grows). Keys and values are
    // borrowed from the dict.
    unsafe {
        if let Some((entries, n, width, key_at)) = combined_entries(obj) {
            let mut i = (*pos).max(0) as usize;
            // One loop per entry width, each with its constants.
            if width == 2 {
                while i < n {
                    let e = entries.add(2 * i);
                    i += 1;
                    let v = *e.add(1);
                    if !v.is_null() {
                        *pos = i as ffi::Py_ssize_t;
                        *key = *e;
                        *val = v;
                        return true;
                    }
                }
            } else {
                debug_assert_eq!(key_at, 1);
                while i < n {
                    let e = entries.add(3 * i);
                    i += 1;
                    let v = *e.add(2);
                    if !v.is_null() {
                        *pos = i as ffi::Py_ssize_t;
                        *key = *e.add(1);
                        *val = v;
                        return true;
                    }
                }
            }
            *pos = i as ffi::Py_ssize_t;
            return false;
        }
    }
    // SAFETY: per the contract; borrowed references, memory-safe if the
    // dict changes between calls.
    unsafe { ffi::PyDict_Next(obj, pos, key, val) != 0 }
}

/// `f(key, value)` for each member of dict `obj` in order (borrowed
/// references), while it returns true; false when `f` stopped the walk.
/// For walks whose `f` runs no Python code, so the dict cannot change
/// meanwhile: a combined table's entry array and count ([`dict_next`]'s
/// layout) are read once, not on every step.
///
/// # Safety
/// `obj` must be a live dict (or subclass) and the interpreter attached;
/// `f` must run no Python code (nor drop a Python object).
#[inline(always)]
pub(crate) unsafe fn dict_each(
    obj: *mut ffi::PyObject,
    mut f: impl FnMut(*mut ffi::PyObject, *mut ffi::PyObject) -> bool,
) -> bool {
    #[cfg(all(not(feature = "abi3"), Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
    // SAFETY: `combined_entries`' contract; `f` runs no Python code (the
    // contract), so the table and its count stay as read here for the
    // whole walk. Keys and values are borrowed.
    unsafe {
        if let Some((entries, n, width, key_at)) = combined_entries(obj) {
            for i in 0..n {
                let e = entries.add(width * i);
                let v = *e.add(key_at + 1);
                if !v.is_null() && !f(*e.add(key_at), v) {
                    return false;
                }
            }
            return true;
        }
    }
    let (mut pos, mut key, mut val) = (0, std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: per the contract.
    while unsafe { dict_next(obj, &mut pos, &mut key, &mut val) } {
        if !f(key, val) {
            return false;
        }
    }
    true
}

impl<'py> Serializer<'py> {
    /// A `dict` (or subclass).
    #[inline(never)]
    pub(super) fn dict<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is a dict (or subclass: same layout) and the
        // interpreter is attached.
        #[cfg(not(feature = "abi3"))]
        let n = unsafe { (*obj.cast::<ffi::PyDictObject>()).ma_used };
        // SAFETY: as above.
        #[cfg(feature = "abi3")]
        let n = unsafe { ffi::PyDict_Size(obj) };
        if n == 0 {
            self.out.extend_from_slice(b"{}");
            return Ok(());
        }
        if self.sort_keys {
            return self.sorted_dict::<PRETTY>(obj);
        }
        // SAFETY: `obj` is alive (caller's contract).
        let _held = unsafe { Held::new(obj) };
        self.enter(obj)?;
        let depth = self.depth;
        let mut i: ffi::Py_ssize_t = 0;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut val: *mut ffi::PyObject = std::ptr::null_mut();
        let mut first = true;
        let mut pos = self.pos_with_room();
        // SAFETY: `pos` has room.
        unsafe { pos.put(b'{') };
        // SAFETY: `obj` is a dict and `i` only comes from `dict_next`; it
        // returns borrowed references and stays memory-safe if the dict
        // changes between calls.
        while unsafe { dict_next(obj, &mut i, &mut key, &mut val) } {
            // SAFETY: (writes through `pos`) `pos` has `ROOM` bytes of
            // room before each fast write group (checked here and after
            // every slow path), more than a separator, a fast key, `: `
            // and a fast scalar need.
            unsafe {
                if !first {
                    pos.put(b',');
                }
                first = false;
                if PRETTY {
                    pos.store(&mut self.out);
                    self.newline(depth);
                    pos = self.pos_with_room();
                }
                let k = fast_str(pos.at(), key);
                if k != 0 {
                    pos.len += k;
                } else {
                    pos.store(&mut self.out);
                    self.key(key)?;
                    pos = self.pos_with_room();
                }
                pos.put(b':');
                if PRETTY {
                    pos.put(b' ');
                }
                // `val` is borrowed from the dict, which we hold; containers
                // and the fallback hold themselves before running user code.
                pos = self.member::<PRETTY, true>(pos, val)?;
            }
        }
        self.close::<PRETTY>(pos, depth, b'}');
        Ok(())
    }

    /// A dict key: `str` (or subclass); anything else raises.
    #[inline(always)]
    fn key(&mut self, key: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `key` is alive (the dict holds it).
        let is_str = unsafe {
            ffi::Py_TYPE(key) == std::ptr::addr_of_mut!(ffi::PyUnicode_Type)
                || ffi::PyUnicode_Check(key) != 0
        };
        if !is_str {
            return Err(self.key_error());
        }
        self.str(key)
    }

    #[cold]
    #[inline(never)]
    fn key_error(&self) -> PyErr {
        encode_error(self.py, "Dict key must be str")
    }

    /// A dict with its members in key order (by code point, as `sorted`).
    #[inline(never)]
    fn sorted_dict<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is alive (caller's contract).
        let _held = unsafe { Held::new(obj) };
        self.enter(obj)?;
        let depth = self.depth;
        let mut members: Vec<(Held, Held)> = Vec::new();
        let mut pos: ffi::Py_ssize_t = 0;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut val: *mut ffi::PyObject = std::ptr::null_mut();
        // SAFETY: as in `dict`; the members are held while they are used.
        while unsafe { ffi::PyDict_Next(obj, &mut pos, &mut key, &mut val) } != 0 {
            // SAFETY: `key` and `val` are alive (the dict holds them).
            members.push(unsafe { (Held::new(key), Held::new(val)) });
        }
        let mut keyed: Vec<(&[u8], *mut ffi::PyObject, *mut ffi::PyObject)> =
            Vec::with_capacity(members.len());
        for (k, v) in &members {
            // SAFETY: `k.0` is alive (held).
            if unsafe { ffi::PyUnicode_Check(k.0) } == 0 {
                return Err(self.key_error());
            }
            // SAFETY: `k` is a str (checked above), held by `members`,
            // which outlives `keyed`.
            keyed.push((unsafe { self.utf8(k.0)? }, k.0, v.0));
        }
        // UTF-8 byte order is code point order.
        keyed.sort_by(|a, b| a.0.cmp(b.0));
        self.out.push(b'{');
        for (i, &(k, _, v)) in keyed.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            if PRETTY {
                self.newline(depth);
            }
            write_str(&mut self.out, k);
            self.out.push(b':');
            if PRETTY {
                self.out.push(b' ');
            }
            self.value::<PRETTY>(v)?;
        }
        if PRETTY {
            self.newline(depth - 1);
        }
        self.out.push(b'}');
        self.leave();
        Ok(())
    }
}
