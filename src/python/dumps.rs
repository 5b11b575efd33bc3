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
//! in registers ([`container::Pos`]) and keep [`container::ROOM`] bytes of
//! room ahead, so the common members are written with no call and no
//! capacity check of their own ([`scalar::fast_scalar`]): strings under 64
//! bytes whose UTF-8 form is at hand (compact ASCII data, or the UTF-8 copy
//! CPython caches on other strings) and that need no escape, ints below
//! 2**60 (read in place from the version's int layout), finite floats,
//! empty lists and dicts, `True`, `False`, `None`, and lists of 1 to 8 of
//! these (`[x, y]` pairs: no call, held reference or cycle check) as dict
//! values and as items of a list whose first item is a list (flat lists
//! leave that check out of their loop). Everything else goes through
//! [`Serializer::value`].
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
//! on a stack (the first [`container::CYCLE_CHECK_DEPTH`] inline, so a call
//! allocates nothing for it); past that depth each new container is looked
//! up in it, which finds every cycle (a cycle nests without end and repeats
//! an object), [`container::MAX_DEPTH`] bounds legitimate nesting, and the
//! walk stops before the thread's stack runs out (`stack`: a thread with a
//! small stack gets `JSONEncodeError`, not a crash).
//!
//! # Files
//!
//! This file holds the entry point ([`dumps`]: the options, the output
//! buffer, a view at the top). The serializer, one file per concern:
//!
//! - [`serializer`]: the serializer's state, held references, and the one
//!   dispatch on a value's type;
//! - [`container`]: what the container loops share (write position, room,
//!   member, closer, cycle and depth checks);
//! - one file per type family, as orjson does: [`string`], [`int`], [`float`],
//!   [`dict`], [`list`] (and tuple), plus [`scalar`], the scalars the
//!   container loops write inline;
//! - [`other`]: the cold fallback (views, subclasses, datetime, UUID, enum,
//!   dataclasses) and [`default`], the `default=` hook;
//! - [`error`]: `JSONEncodeError`; [`out`]: the output buffer.

mod container;
mod default;
mod dict;
mod error;
mod float;
mod int;
mod lines;
mod list;
mod other;
mod out;
mod scalar;
mod serializer;
mod string;

#[cfg(not(feature = "abi3"))]
use super::view;
pub(crate) use dict::dict_each;
use error::encode_error;
#[cfg(not(feature = "abi3"))]
use out::Out;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serializer::{Held, Serializer};
#[cfg(feature = "abi3")]
use std::sync::Mutex;

/// The output buffer kept between calls (only its capacity matters; the
/// stable-ABI build, which copies it into the result).
#[cfg(feature = "abi3")]
static OUT: Mutex<Vec<u8>> = Mutex::new(Vec::new());
/// Buffers larger than this are freed after the call rather than kept.
#[cfg(feature = "abi3")]
const OUT_KEEP_MAX: usize = 8 << 20;

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
    let mut direct = false;
    #[cfg(not(feature = "abi3"))]
    let out = if !plain && indent.is_none() && !sort_keys && view::is_view(obj) {
        // A view of a small document is written straight into the result,
        // with room for its input and some more (see `other::dumps_view`).
        match view::input_len(obj).filter(|&n| n <= other::DIRECT_MAX) {
            Some(n) => {
                direct = true;
                Out::sized(py, n + n / 8 + other::DIRECT_SLACK)?
            }
            None => Out::small(py)?,
        }
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
    let mut ser = Serializer::new(py, out, indent, sort_keys, default);
    #[cfg(feature = "abi3")]
    let direct = false;
    let r = if indent.is_some() {
        ser.value::<true>(obj.as_ptr()).map(|()| None)
    } else {
        // A view at the top: written into `ser.out` (a small document's),
        // or its segments copied once into the result.
        match if plain {
            Ok(other::Top::NotView)
        } else {
            other::dumps_view(&mut ser, obj, direct)
        } {
            Ok(other::Top::NotView) => ser.value::<false>(obj.as_ptr()).map(|()| None),
            Ok(other::Top::Written) => Ok(None),
            Ok(other::Top::Bytes(b)) => Ok(Some(b)),
            Err(e) => Err(e),
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

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dumps, m)?)?;
    m.add_function(wrap_pyfunction!(lines::dumps_many, m)?)?;
    #[cfg(not(feature = "abi3"))]
    int::init(m.py())?;
    Ok(())
}
