//! `qjson.dumps`: Python objects to compact (or indented) UTF-8 JSON bytes.
//!
//! # Algorithm
//!
//! One recursive serializer writes into one growing buffer: in
//! version-specific builds the `bytes` object returned itself (see [`out`]:
//! sized from the previous result, no final copy), in the `abi3` build a
//! reused `Vec<u8>` copied into a `bytes` at the end. Each value is
//! classified once, exact types first, then a cold fallback ([`other`]) for
//! qjson views, subclasses, datetime/date/time, UUID, enum members,
//! dataclasses and the `default=` hook. Indented output is a second
//! monomorphization (`PRETTY`), so the compact path carries no indentation
//! branches.
//!
//! The container loops (`dict`, `list`, `tuple`) keep the write position
//! in registers ([`Pos`]) and keep [`ROOM`] bytes of room ahead, so the
//! common members are written with no call and no capacity check of their
//! own ([`fast_scalar`]): strings under 64 bytes whose UTF-8 form is at hand
//! (compact ASCII data, or the UTF-8 copy CPython caches on other strings)
//! and that need no escape, ints below 2**60 (read in place from the
//! version's int layout), finite floats, empty lists and dicts, `True`,
//! `False`, `None`. Everything else goes through [`Serializer::value`].
//!
//! Strings are otherwise written from their UTF-8 form
//! (`PyUnicode_AsUTF8AndSize`, which caches it on the str); a lone surrogate
//! has none and raises `JSONEncodeError`, so invalid UTF-8 is never
//! written. Integers are written in place, four and two digits at a time
//! (beyond 64 bits: Python's own decimal text), floats by `zmij` straight
//! into the output (the text orjson writes); NaN and infinities raise.
//! Version-specific builds (not `abi3`) read strings (CPython <= 3.13, whose
//! headers still expose the string flags), ints, list and tuple items, dict
//! sizes and float values in place instead of through C API calls.
//!
//! Safety of the walk: every container, and every object that takes the
//! fallback, is held (a new reference) while it is written; its children are
//! borrowed from it. Exact scalars run no user code, so only the fallback (a
//! `default=` hook, an enum's `value`) can change a container mid-walk, and
//! it cannot free anything the walk still borrows. Open containers are kept
//! on a stack (the first [`CYCLE_CHECK_DEPTH`] inline, so a call allocates
//! nothing for it); past that depth each new container is looked up in it,
//! which finds every cycle (a cycle nests without end and repeats an
//! object), [`MAX_DEPTH`] bounds legitimate nesting, and the walk stops
//! before the thread's stack runs out (`stack`: a thread with a small
//! stack gets `JSONEncodeError`, not a crash).

mod other;
mod out;

#[cfg(not(feature = "abi3"))]
use super::view;
#[cfg(not(feature = "abi3"))]
use crate::encode::write_i64_raw;
use crate::encode::{
    write_f64, write_f64_raw, write_i64, write_str, write_u64, Buf, F64_MAX_LEN, I64_MAX_LEN,
    MEDIUM_STR_MAX_LEN,
};
#[cfg(not(any(feature = "abi3", Py_3_14)))]
use crate::encode::{write_medium_str_raw, MEDIUM_STR};
use out::Out;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyType};
use std::os::raw::c_char;
#[cfg(feature = "abi3")]
use std::sync::Mutex;

/// Containers may nest this deep; deeper raises `JSONEncodeError`.
const MAX_DEPTH: usize = 1024;
/// From this depth on, each new container is checked against the open ones.
const CYCLE_CHECK_DEPTH: usize = 32;
/// `default=` calls may nest this deep (a value `default` returned needing
/// `default` again is one level deeper); the next one raises. orjson's
/// limit: 255 calls in a chain, so a hook that returns a further object 254
/// times succeeds.
const MAX_DEFAULT_DEPTH: u32 = 255;

static ENCODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The output buffer kept between calls (only its capacity matters; the
/// stable-ABI build, which copies it into the result).
#[cfg(feature = "abi3")]
static OUT: Mutex<Vec<u8>> = Mutex::new(Vec::new());
/// Buffers larger than this are freed after the call rather than kept.
#[cfg(feature = "abi3")]
const OUT_KEEP_MAX: usize = 8 << 20;

extern "C" {
    // In the stable ABI from 3.10 and in every CPython 3 with this
    // signature; declared here so the abi3-py39 build can call it.
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const c_char;
}

/// `qjson.JSONEncodeError(msg)`.
#[cold]
#[inline(never)]
pub(crate) fn encode_error(py: Python<'_>, msg: &str) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let ty = ENCODE_ERROR.import(py, "qjson._errors", "JSONEncodeError")?;
        Ok(PyErr::from_value(ty.call1((msg,))?))
    };
    make().unwrap_or_else(|e| e)
}

/// `qjson.JSONEncodeError(msg)` whose `__cause__` is `cause`.
#[cold]
#[inline(never)]
pub(crate) fn encode_error_from(py: Python<'_>, msg: &str, cause: PyErr) -> PyErr {
    let err = encode_error(py, msg);
    err.set_cause(py, Some(cause));
    err
}

/// Serialize `obj` to JSON bytes.
#[pyfunction]
#[pyo3(signature = (obj, *, indent = None, sort_keys = false, default = None))]
pub(crate) fn dumps<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    indent: Option<isize>,
    sort_keys: bool,
    default: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    // Exact dicts and lists, the usual documents, are never views.
    // SAFETY: `obj` is alive; the type objects are statics.
    let plain = unsafe {
        let ty = ffi::Py_TYPE(obj.as_ptr());
        ty == std::ptr::addr_of_mut!(ffi::PyDict_Type)
            || ty == std::ptr::addr_of_mut!(ffi::PyList_Type)
    };
    // Version-specific builds write into the result itself; a view at the
    // top (compact) is assembled from segments, its buffer only holds the
    // encoded parts.
    #[cfg(not(feature = "abi3"))]
    let out = if !plain && indent.is_none() && !sort_keys && view::is_view(obj) {
        Out::small(py)?
    } else {
        // The size hint of documents of this shape: the top-level type
        // and length (read in place).
        // SAFETY: `obj` is alive; `plain` says it is an exact dict or list.
        let len = unsafe {
            let o = obj.as_ptr();
            if !plain {
                0
            } else if ffi::Py_TYPE(o) == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
                (*o.cast::<ffi::PyDictObject>()).ma_used as usize
            } else {
                ffi::PyList_GET_SIZE(o) as usize
            }
        };
        // SAFETY: `obj` is alive.
        let ty = unsafe { ffi::Py_TYPE(obj.as_ptr()) } as usize;
        Out::new(py, out::slot(ty, len))?
    };
    // The stable-ABI build reuses the buffer of earlier calls (its
    // capacity), unless another call is using it (re-entrant `default=`
    // hooks), and copies it into the result.
    #[cfg(feature = "abi3")]
    let mut cached = OUT.try_lock().ok();
    #[cfg(feature = "abi3")]
    let out = cached
        .as_deref_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    let mut ser = Serializer {
        py,
        out,
        indent: indent.unwrap_or(0).max(0) as usize,
        sort_keys,
        default: default.filter(|d| !d.is_none()),
        open_head: [std::ptr::null_mut(); CYCLE_CHECK_DEPTH],
        open_tail: Vec::new(),
        depth: 0,
        default_depth: 0,
    };
    let r = if indent.is_some() {
        ser.value::<true>(obj.as_ptr()).map(|()| None)
    } else {
        // A view at the top: its segments go straight into the result.
        match if plain {
            Ok(None)
        } else {
            other::dumps_view(&mut ser, obj)
        } {
            Ok(None) => ser.value::<false>(obj.as_ptr()).map(|()| None),
            done => done,
        }
    };
    #[cfg(not(feature = "abi3"))]
    return match r? {
        Some(b) => Ok(b),
        None => ser.out.finish(py),
    };
    #[cfg(feature = "abi3")]
    {
        let bytes = r.map(|b| b.unwrap_or_else(|| PyBytes::new(py, &ser.out)));
        if let Some(slot) = cached.as_deref_mut() {
            let mut out = ser.out;
            if out.capacity() <= OUT_KEEP_MAX {
                out.clear();
                *slot = out;
            }
        }
        bytes
    }
}

/// Room the container loops keep ahead of the write position: a
/// separator, a key under `MEDIUM_STR` bytes and its `": "`, and the longest fast scalar.
const ROOM: usize = 160;
const _: () = assert!(2 + MEDIUM_STR_MAX_LEN + 2 + MEDIUM_STR_MAX_LEN <= ROOM);
const _: () = assert!(I64_MAX_LEN <= MEDIUM_STR_MAX_LEN && F64_MAX_LEN <= MEDIUM_STR_MAX_LEN);

/// The write position of the output, copied into locals so that the
/// container loops keep it in registers: a length field in memory would be
/// stored and loaded again for each piece written, a store-forwarding round
/// trip on the critical path of every value. It is stored back
/// ([`Pos::store`]) before anything else writes to the output, and read
/// again ([`Pos::of`]) after.
#[derive(Clone, Copy)]
struct Pos {
    ptr: *mut u8,
    len: usize,
    cap: usize,
}

impl Pos {
    #[inline(always)]
    fn of(out: &mut Out) -> Pos {
        let len = out.len();
        Pos {
            ptr: out.as_mut_ptr(),
            len,
            cap: len + out.spare(),
        }
    }

    /// Set the output's length to this position.
    #[inline(always)]
    fn store(self, out: &mut Out) {
        // SAFETY: `self` was read from `out` (same buffer, no growth since)
        // and every byte up to `len` was written through it.
        unsafe { out.set_len(self.len) }
    }

    #[inline(always)]
    fn room(&self) -> usize {
        self.cap - self.len
    }

    /// Where the next byte goes.
    #[inline(always)]
    fn at(&self) -> *mut u8 {
        self.ptr.wrapping_add(self.len)
    }

    /// Append one byte.
    ///
    /// # Safety
    /// There must be room for it.
    #[inline(always)]
    unsafe fn put(&mut self, b: u8) {
        debug_assert!(self.room() >= 1);
        // SAFETY: per the contract.
        unsafe { *self.ptr.add(self.len) = b };
        self.len += 1;
    }
}

/// Write an exact `str` at `dst` when its UTF-8 form is at hand (compact
/// ASCII data, or the UTF-8 copy CPython caches on other strings), it is
/// under [`MEDIUM_STR`] bytes and needs no escape (most keys and values);
/// return its length, or 0 when it needs the general path.
///
/// The string layout is read only for CPython 3.9 to 3.13: from 3.14 on,
/// CPython's headers (and so PyO3) no longer expose the bit field that says
/// "compact ASCII", so 3.14+ builds, like `abi3` ones, always take the
/// general path ([`Serializer::utf8`]: `PyUnicode_AsUTF8AndSize`).
///
/// # Safety
/// `obj` must be alive and `dst` writable for [`MEDIUM_STR_MAX_LEN`] bytes.
#[inline(always)]
unsafe fn fast_str(dst: *mut u8, obj: *mut ffi::PyObject) -> usize {
    #[cfg(not(any(feature = "abi3", Py_3_14)))]
    // SAFETY: per the contract; the full API's layout accessors are valid
    // for a str: a compact ASCII string's data is its UTF-8 form, and every
    // other str starts with a `PyCompactUnicodeObject` whose `utf8` is NULL
    // or its cached UTF-8 form (`utf8_length` bytes), owned by the str.
    unsafe {
        if ffi::Py_TYPE(obj) != std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
            return 0;
        }
        let (p, n) = if ffi::PyUnicode_IS_COMPACT_ASCII(obj) != 0 {
            (
                ffi::PyUnicode_DATA(obj).cast::<u8>().cast_const(),
                ffi::PyUnicode_GET_LENGTH(obj) as usize,
            )
        } else {
            let c = obj.cast::<ffi::PyCompactUnicodeObject>();
            let u = (*c).utf8;
            if u.is_null() {
                return 0;
            }
            (u.cast::<u8>().cast_const(), (*c).utf8_length as usize)
        };
        if n < MEDIUM_STR {
            return write_medium_str_raw(dst, std::slice::from_raw_parts(p, n));
        }
    }
    #[cfg(any(feature = "abi3", Py_3_14))]
    let _ = (dst, obj);
    0
}

/// Write `obj` at `dst` when it is one of the scalars written without a
/// call: a `str` as in [`fast_str`], an `int` below 2**60, a finite `float`,
/// an empty `list` or `dict`, `True`, `False`, `None` (exact types only). Return the length written,
/// or 0 when `obj` needs the general path ([`Serializer::value`]).
///
/// # Safety
/// `obj` must be alive, the interpreter attached and `dst` writable for
/// [`MEDIUM_STR_MAX_LEN`] bytes.
#[inline(always)]
unsafe fn fast_scalar(dst: *mut u8, obj: *mut ffi::PyObject) -> usize {
    use std::ptr::{addr_of_mut, write_unaligned};
    // SAFETY: per the contract; each writer stays within
    // `MEDIUM_STR_MAX_LEN` bytes (asserted above).
    unsafe {
        // The singletons by address first: no load from the object, so no
        // wait for its cache line (a list of them is written twice as
        // fast; the cost elsewhere is three compares).
        if obj == ffi::Py_None() {
            write_unaligned(dst.cast::<[u8; 4]>(), *b"null");
            return 4;
        }
        if obj == ffi::Py_True() {
            write_unaligned(dst.cast::<[u8; 4]>(), *b"true");
            return 4;
        }
        if obj == ffi::Py_False() {
            write_unaligned(dst.cast::<[u8; 5]>(), *b"false");
            return 5;
        }
        let ty = ffi::Py_TYPE(obj);
        if ty == addr_of_mut!(ffi::PyUnicode_Type) {
            return fast_str(dst, obj);
        }
        if ty == addr_of_mut!(ffi::PyLong_Type) {
            #[cfg(not(feature = "abi3"))]
            if let Some(v) = small_int(obj) {
                return write_i64_raw(dst, v);
            }
            return 0;
        }
        if ty == addr_of_mut!(ffi::PyFloat_Type) {
            #[cfg(not(feature = "abi3"))]
            let v = ffi::PyFloat_AS_DOUBLE(obj);
            #[cfg(feature = "abi3")]
            let v = ffi::PyFloat_AsDouble(obj);
            if v.is_finite() {
                return write_f64_raw(dst, v);
            }
            return 0;
        }
        // Empty containers (their size read in place).
        #[cfg(not(feature = "abi3"))]
        {
            if ty == addr_of_mut!(ffi::PyList_Type) && ffi::PyList_GET_SIZE(obj) == 0 {
                write_unaligned(dst.cast::<[u8; 2]>(), *b"[]");
                return 2;
            }
            if ty == addr_of_mut!(ffi::PyDict_Type)
                && (*obj.cast::<ffi::PyDictObject>()).ma_used == 0
            {
                write_unaligned(dst.cast::<[u8; 2]>(), *b"{}");
                return 2;
            }
        }
    }
    0
}

/// Whether CPython stores ints in 30-bit digits (`sys.int_info`), checked
/// once at import; [`small_int`] reads digits only then.
#[cfg(not(feature = "abi3"))]
static DIGIT30: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The value of an int of at most two 30-bit digits (|v| < 2**60), read
/// in place from the object (version-specific layouts), or `None` for
/// larger ints (and when digits are not 30 bits wide).
///
/// # Safety
/// `obj` must be a live `int` (or subclass: same layout).
#[cfg(not(feature = "abi3"))]
#[inline(always)]
unsafe fn small_int(obj: *mut ffi::PyObject) -> Option<i64> {
    use std::ptr::addr_of;
    use std::sync::atomic::Ordering;
    /// CPython >= 3.12: `PyObject_HEAD; uintptr_t lv_tag; digit ob_digit[]`,
    /// `lv_tag` = digit count << 3 | sign (0 positive, 1 zero, 2 negative).
    #[cfg(Py_3_12)]
    #[repr(C)]
    struct Long {
        head: ffi::PyObject,
        tag: usize,
        digit: [u32; 2],
    }
    // A CPython this crate's PyO3 does not know yet may lay ints out
    // differently: re-check `Long` below before allowing it.
    #[cfg(Py_3_15)]
    compile_error!("qjson reads CPython int internals (dumps.rs, small_int): check the layout for this version");
    /// CPython < 3.12: `PyObject_VAR_HEAD; digit ob_digit[]`, `ob_size` =
    /// digit count with the sign of the value.
    #[cfg(not(Py_3_12))]
    #[repr(C)]
    struct Long {
        head: ffi::PyVarObject,
        digit: [u32; 2],
    }
    let l = obj.cast::<Long>();
    // SAFETY: per the contract `l` points to an int object with this layout
    // (selected for the interpreter this build is for); the fields are read
    // through raw places (no reference to the whole, possibly shorter,
    // struct), the first digit only when there is one and the second only
    // when there are two (an int's digit array is allocated to its count).
    unsafe {
        #[cfg(Py_3_12)]
        let (n, negative) = {
            let tag = *addr_of!((*l).tag);
            (tag >> 3, tag & 3 == 2)
        };
        #[cfg(not(Py_3_12))]
        let (n, negative) = {
            let size = *addr_of!((*l).head.ob_size);
            (size.unsigned_abs(), size < 0)
        };
        if n > 2 || !DIGIT30.load(Ordering::Relaxed) {
            return None;
        }
        let mut v = 0u64;
        if n >= 1 {
            v = *addr_of!((*l).digit[0]) as u64;
        }
        if n == 2 {
            v |= (*addr_of!((*l).digit[1]) as u64) << 30;
        }
        let v = v as i64;
        Some(if negative { -v } else { v })
    }
}

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
unsafe fn dict_next(
    obj: *mut ffi::PyObject,
    pos: &mut ffi::Py_ssize_t,
    key: &mut *mut ffi::PyObject,
    val: &mut *mut ffi::PyObject,
) -> bool {
    #[cfg(all(not(feature = "abi3"), Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
    // SAFETY: `obj` is a dict, whose `ma_values` is NULL for a combined
    // table; then `ma_keys` is a live keys object with the `DictKeys`
    // layout for these versions (see there) whose first `dk_nentries`
    // entries, past the index, are initialized; `i` stays in
    // `[*pos, dk_nentries)` when it is read (`*pos >= 0`: it starts at 0
    // and only grows). Keys and values are borrowed from the dict.
    unsafe {
        let d = obj.cast::<ffi::PyDictObject>();
        if (*d).ma_values.is_null() {
            let k = (*d).ma_keys.cast::<DictKeys>();
            let n = (*k).dk_nentries;
            let entries = std::ptr::addr_of_mut!((*k).dk_indices)
                .cast::<u8>()
                .add(1usize << (*k).dk_log2_index_bytes)
                .cast::<*mut ffi::PyObject>();
            let mut i = *pos;
            if (*k).dk_kind != 0 {
                // `{key, value}` entries.
                while i < n {
                    let e = entries.add(2 * i as usize);
                    i += 1;
                    let v = *e.add(1);
                    if !v.is_null() {
                        *pos = i;
                        *key = *e;
                        *val = v;
                        return true;
                    }
                }
            } else {
                // `{hash, key, value}` entries.
                while i < n {
                    let e = entries.add(3 * i as usize);
                    i += 1;
                    let v = *e.add(2);
                    if !v.is_null() {
                        *pos = i;
                        *key = *e.add(1);
                        *val = v;
                        return true;
                    }
                }
            }
            *pos = i;
            return false;
        }
    }
    // SAFETY: per the contract; borrowed references, memory-safe if the
    // dict changes between calls.
    unsafe { ffi::PyDict_Next(obj, pos, key, val) != 0 }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dumps, m)?)?;
    #[cfg(not(feature = "abi3"))]
    {
        let py = m.py();
        let bits: u32 = py
            .import("sys")?
            .getattr("int_info")?
            .getattr("bits_per_digit")?
            .extract()?;
        let digit = std::mem::size_of::<u32>() as u32;
        let sizeof_digit: u32 = py
            .import("sys")?
            .getattr("int_info")?
            .getattr("sizeof_digit")?
            .extract()?;
        DIGIT30.store(
            bits == 30 && sizeof_digit == digit,
            std::sync::atomic::Ordering::Relaxed,
        );
    }
    Ok(())
}

/// A held reference, released on drop (also on `?` early returns).
struct Held(*mut ffi::PyObject);

impl Held {
    /// # Safety
    /// `p` must be a live object and the interpreter attached.
    #[inline(always)]
    unsafe fn new(p: *mut ffi::PyObject) -> Held {
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
    py: Python<'py>,
    out: Out,
    /// Spaces per level (indented output only).
    indent: usize,
    sort_keys: bool,
    default: Option<Bound<'py, PyAny>>,
    /// The containers being written, outermost first: the first
    /// [`CYCLE_CHECK_DEPTH`] inline (no allocation per call), the rest in
    /// `open_tail`; `depth` of them in all.
    open_head: [*mut ffi::PyObject; CYCLE_CHECK_DEPTH],
    open_tail: Vec<*mut ffi::PyObject>,
    depth: usize,
    /// How many `default=` results are being written, nested.
    default_depth: u32,
}

impl<'py> Serializer<'py> {
    /// Write one value. `obj` is a borrowed reference the caller keeps alive.
    ///
    /// The general path: the container loops first try [`fast_scalar`]
    /// with the write position in registers and call this for the rest.
    #[inline(never)]
    fn value<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
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

    /// A `str` (or subclass).
    #[inline(always)]
    fn str(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is a live str (the caller's contract), used only
        // within this call.
        let s = unsafe { self.utf8(obj)? };
        write_str(&mut self.out, s);
        Ok(())
    }

    /// The UTF-8 form of a `str` (or subclass); borrowed from the object.
    ///
    /// # Safety
    ///
    /// `obj` is a live `str`, and the caller keeps it alive for as long as
    /// it uses the returned slice (`'a` is the caller's to choose).
    #[inline(always)]
    unsafe fn utf8<'a>(&self, obj: *mut ffi::PyObject) -> PyResult<&'a [u8]> {
        // Version-specific builds read a compact ASCII string's data in place
        // (up to 3.13: see `fast_str`).
        #[cfg(not(any(feature = "abi3", Py_3_14)))]
        // SAFETY: `obj` is a live str; the full API's layout accessors are
        // valid for it, and a compact ASCII string's data is its UTF-8 form.
        unsafe {
            if ffi::PyUnicode_IS_COMPACT_ASCII(obj) != 0 {
                let p = ffi::PyUnicode_DATA(obj).cast::<u8>();
                let n = ffi::PyUnicode_GET_LENGTH(obj) as usize;
                return Ok(std::slice::from_raw_parts(p, n));
            }
        }
        let mut size: ffi::Py_ssize_t = 0;
        // SAFETY: `obj` is a str and the interpreter is attached; the buffer
        // belongs to the str, which the caller keeps alive while it writes.
        let p = unsafe { PyUnicode_AsUTF8AndSize(obj, &mut size) };
        if p.is_null() {
            return Err(self.surrogate_error());
        }
        // SAFETY: CPython returned `size` readable bytes at `p`.
        Ok(unsafe { std::slice::from_raw_parts(p.cast(), size as usize) })
    }

    #[cold]
    #[inline(never)]
    fn surrogate_error(&self) -> PyErr {
        let cause = PyErr::fetch(self.py);
        encode_error_from(
            self.py,
            "str is not valid UTF-8: surrogates not allowed",
            cause,
        )
    }

    /// An `int` (or subclass; `bool` never gets here).
    #[inline]
    fn int(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is an int (exact or subclass: same layout).
        #[cfg(not(feature = "abi3"))]
        if let Some(v) = unsafe { small_int(obj) } {
            write_i64(&mut self.out, v);
            return Ok(());
        }
        self.int_api(obj)
    }

    /// An `int` through the C API (any size).
    #[cfg_attr(not(feature = "abi3"), cold, inline(never))]
    fn int_api(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        let mut overflow = 0;
        // SAFETY: `obj` is an int and the interpreter is attached.
        let v = unsafe { ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow) };
        if overflow == 0 {
            if v == -1 && PyErr::occurred(self.py) {
                return Err(PyErr::fetch(self.py));
            }
            write_i64(&mut self.out, v);
            return Ok(());
        }
        self.big_int(obj, overflow > 0)
    }

    #[cold]
    #[inline(never)]
    fn big_int(&mut self, obj: *mut ffi::PyObject, positive: bool) -> PyResult<()> {
        if positive {
            // SAFETY: `obj` is an int and the interpreter is attached.
            let u = unsafe { ffi::PyLong_AsUnsignedLongLong(obj) };
            if u != u64::MAX || !PyErr::occurred(self.py) {
                write_u64(&mut self.out, u);
                return Ok(());
            }
            drop(PyErr::take(self.py));
        }
        // SAFETY: `obj` is alive; `PyNumber_Long` gives a plain int (also for
        // subclasses with their own `__str__`), `PyObject_Str` its text.
        let text = unsafe {
            let plain = Bound::from_owned_ptr_or_err(self.py, ffi::PyNumber_Long(obj))?;
            Bound::from_owned_ptr_or_err(self.py, ffi::PyObject_Str(plain.as_ptr()))?
        };
        // SAFETY: `text` is a str we own, alive past the copy.
        let s = unsafe { self.utf8(text.as_ptr())? };
        self.out.extend_from_slice(s);
        Ok(())
    }

    /// A `float` (or subclass).
    #[inline]
    fn float(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is a float and the interpreter is attached; the
        // full API reads its value field in place.
        #[cfg(not(feature = "abi3"))]
        let v = unsafe { ffi::PyFloat_AS_DOUBLE(obj) };
        // SAFETY: as above.
        #[cfg(feature = "abi3")]
        let v = unsafe { ffi::PyFloat_AsDouble(obj) };
        if !v.is_finite() {
            return Err(self.float_error(v));
        }
        write_f64(&mut self.out, v);
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn float_error(&self, v: f64) -> PyErr {
        if v.is_nan() && PyErr::occurred(self.py) {
            return PyErr::fetch(self.py);
        }
        encode_error(
            self.py,
            &format!("Out of range float values are not JSON compliant: {v}"),
        )
    }

    /// Enter a container: cycle and depth checks.
    #[inline(always)]
    fn enter(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        if self.depth >= CYCLE_CHECK_DEPTH {
            return self.enter_deep(obj);
        }
        self.open_head[self.depth] = obj;
        self.depth += 1;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn enter_deep(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        if self.open_head.contains(&obj) || self.open_tail.contains(&obj) {
            return Err(encode_error(self.py, "Circular reference detected"));
        }
        if self.depth >= MAX_DEPTH {
            return Err(encode_error(self.py, "Maximum nesting depth exceeded"));
        }
        if super::stack::low() {
            return Err(encode_error(self.py, super::stack::TOO_DEEP));
        }
        self.open_tail.push(obj);
        self.depth += 1;
        Ok(())
    }

    /// Leave the innermost open container.
    #[inline(always)]
    fn leave(&mut self) {
        if self.depth > CYCLE_CHECK_DEPTH {
            self.open_tail.pop();
        }
        self.depth -= 1;
    }

    /// A newline and the indentation of the current depth.
    #[inline(always)]
    fn newline(&mut self, depth: usize) {
        self.out.push(b'\n');
        self.out.fill(b' ', depth * self.indent);
    }

    /// A `dict` (or subclass).
    #[inline(never)]
    fn dict<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
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
            // SAFETY (writes through `pos`): `pos` has `ROOM` bytes of
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
                pos = self.member::<PRETTY>(pos, val)?;
            }
        }
        self.close::<PRETTY>(pos, depth, b'}');
        Ok(())
    }

    /// Write one member value at `pos` (scalars inline, others through
    /// `nested`) and return the position after it, with [`ROOM`] to spare.
    ///
    /// # Safety
    /// `val` must be alive (borrowed from a container the caller holds) and
    /// `pos` must have [`ROOM`] bytes of room.
    #[inline(always)]
    unsafe fn member<const PRETTY: bool>(
        &mut self,
        mut pos: Pos,
        val: *mut ffi::PyObject,
    ) -> PyResult<Pos> {
        // SAFETY: the caller's contract; ROOM covers a fast scalar.
        let k = unsafe { fast_scalar(pos.at(), val) };
        if k != 0 {
            pos.len += k;
        } else {
            pos.store(&mut self.out);
            self.nested::<PRETTY>(val)?;
            pos = Pos::of(&mut self.out);
        }
        if pos.room() < ROOM {
            pos = self.grow_pos(pos);
        }
        Ok(pos)
    }

    /// Close a container opened at `depth` (`}` or `]`) and leave it.
    #[inline(always)]
    fn close<const PRETTY: bool>(&mut self, mut pos: Pos, depth: usize, closer: u8) {
        if PRETTY {
            pos.store(&mut self.out);
            self.newline(depth - 1);
            pos = self.pos_with_room();
        }
        // SAFETY: `pos` has room (`member` and `pos_with_room` leave ROOM).
        unsafe { pos.put(closer) };
        pos.store(&mut self.out);
        self.leave();
    }

    /// A value the container loops' fast path did not take: exact dicts,
    /// lists and strs go straight to their writers, the rest to
    /// [`Self::value`].
    #[inline(always)]
    fn nested<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is alive (caller's contract); the type objects are
        // statics.
        let ty = unsafe { ffi::Py_TYPE(obj) };
        if ty == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
            self.dict::<PRETTY>(obj)
        } else if ty == std::ptr::addr_of_mut!(ffi::PyList_Type) {
            self.list::<PRETTY>(obj)
        } else if ty == std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
            self.str(obj)
        } else {
            self.value::<PRETTY>(obj)
        }
    }

    /// The write position of `self.out`, with at least [`ROOM`] bytes of
    /// room.
    #[inline(always)]
    fn pos_with_room(&mut self) -> Pos {
        let pos = Pos::of(&mut self.out);
        if pos.room() < ROOM {
            return self.grow_pos(pos);
        }
        pos
    }

    /// Store `pos`, make [`ROOM`] bytes of room and return the new position.
    #[cold]
    #[inline(never)]
    fn grow_pos(&mut self, pos: Pos) -> Pos {
        pos.store(&mut self.out);
        self.out.reserve(ROOM);
        Pos::of(&mut self.out)
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

    /// A `list` (or subclass).
    #[inline(never)]
    fn list<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
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
    fn tuple<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
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
            // SAFETY (writes through `pos`): as in `dict`, `ROOM` bytes of
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
                pos = self.member::<PRETTY>(pos, item)?;
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

    /// The `default=` hook for an object no rule covers.
    fn call_default<const PRETTY: bool>(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<()> {
        let name = || {
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into())
        };
        let Some(default) = self.default.clone() else {
            return Err(encode_error(
                self.py,
                &format!("Type is not JSON serializable: {}", name()),
            ));
        };
        if self.default_depth >= MAX_DEFAULT_DEPTH {
            return Err(encode_error(
                self.py,
                "default serializer exceeds recursion limit",
            ));
        }
        let v = default.call1((obj,)).map_err(|cause| {
            encode_error_from(
                self.py,
                &format!("Type is not JSON serializable: {}", name()),
                cause,
            )
        })?;
        self.default_depth += 1;
        let r = self.value::<PRETTY>(v.as_ptr());
        self.default_depth -= 1;
        r
    }
}
