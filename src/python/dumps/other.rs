//! The cold path of `dumps`: every type but the exact built-ins.
//!
//! Checked in this order:
//!
//! 1. qjson's lazy views (`Object`, `Array`) and `Doc`: [`write_view`],
//!    the view passthrough;
//! 2. subclasses of `str`, `int`, `float`, `dict`, `list` and `tuple`
//!    (type flags, no import): written as their base type (an `IntEnum` or
//!    a `str`-mixin `Enum` member is one of these, and its value is the
//!    same), dispatched before this module by `Serializer::other` (views
//!    have none of these flags, so the order is the same);
//! 3. `datetime.datetime`, `datetime.date`, `datetime.time` (RFC 3339, as
//!    orjson writes them), `uuid.UUID` (`8-4-4-4-12` lowercase hex),
//!    `enum.Enum` members (their `value`), dataclass instances (an object
//!    of their fields, as orjson writes them: the instance `__dict__`
//!    without names starting with `_`; for an instance without `__dict__`,
//!    or a class that defines `__slots__` itself, the entries of
//!    `__dataclass_fields__` that are fields (`dataclasses.fields`: no
//!    `ClassVar`, no `InitVar`), again without names starting with `_`);
//! 4. the `default=` hook, or `JSONEncodeError`.

use super::super::doc::Parsed;
use super::super::input::str_utf8;
use super::super::view::{self, materialize};
use super::{encode_error, Held, Serializer};
use crate::encode::copy::copy_to;
use crate::encode::{write_str, Buf};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyType};
use smallvec::SmallVec;
use std::sync::Arc;

/// Types checked with `isinstance`, imported on first use.
struct Types {
    datetime: Py<PyType>,
    date: Py<PyType>,
    time: Py<PyType>,
    uuid: Py<PyType>,
    enum_: Py<PyType>,
    /// `dataclasses._FIELD`: the `_field_type` of a field that
    /// `dataclasses.fields` lists (`None` if this Python lacks it).
    field_marker: Option<Py<PyAny>>,
}

static TYPES: PyOnceLock<Types> = PyOnceLock::new();

fn types(py: Python<'_>) -> PyResult<&Types> {
    TYPES.get_or_try_init(py, || {
        let dt = py.import("datetime")?;
        let ty = |m: &Bound<'_, PyModule>, name: &str| -> PyResult<Py<PyType>> {
            Ok(m.getattr(name)?.cast_into::<PyType>()?.unbind())
        };
        Ok(Types {
            datetime: ty(&dt, "datetime")?,
            date: ty(&dt, "date")?,
            time: ty(&dt, "time")?,
            uuid: ty(&py.import("uuid")?, "UUID")?,
            enum_: ty(&py.import("enum")?, "Enum")?,
            field_marker: py
                .import("dataclasses")?
                .getattr("_FIELD")
                .ok()
                .map(Bound::unbind),
        })
    })
}

pub(super) fn write<'py, const PRETTY: bool>(
    ser: &mut Serializer<'py>,
    obj: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let py = ser.py;
    if view::is_view(obj) {
        return write_view::<PRETTY>(ser, obj);
    }
    // (Subclasses of the built-in types were written by the caller,
    // `Serializer::other`.)
    let t = types(py)?;
    if obj.is_instance(t.datetime.bind(py))? {
        return datetime(ser, obj);
    }
    if obj.is_instance(t.date.bind(py))? {
        ser.out.push(b'"');
        write_date(ser, obj)?;
        ser.out.push(b'"');
        return Ok(());
    }
    if obj.is_instance(t.time.bind(py))? {
        if !obj.getattr(intern!(py, "tzinfo"))?.is_none() {
            return Err(encode_error(py, "datetime.time must not have tzinfo set"));
        }
        ser.out.push(b'"');
        write_time(ser, obj)?;
        ser.out.push(b'"');
        return Ok(());
    }
    if obj.is_instance(t.uuid.bind(py))? {
        let v: u128 = obj.getattr(intern!(py, "int"))?.extract()?;
        let hex = format!("{v:032x}");
        let uuid = format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        );
        write_str(&mut ser.out, uuid.as_bytes());
        return Ok(());
    }
    if obj.is_instance(t.enum_.bind(py))? {
        let v = obj.getattr(intern!(py, "value"))?;
        return ser.value::<PRETTY>(v.as_ptr());
    }
    let ty = obj.get_type();
    if ty.hasattr(intern!(py, "__dataclass_fields__"))? {
        return dataclass::<PRETTY>(ser, obj, &ty);
    }
    ser.call_default::<PRETTY>(obj)
}

/// How a qjson `Object` / `Array` view (or a `Doc`) is written.
///
/// Compact output (no `indent`, no `sort_keys`): passthrough. An untouched
/// view is a copy of its original bytes (the root view, and a `Doc`: the
/// whole input, whitespace included); an edited one is written as the
/// original byte ranges of its untouched children with the changed parts
/// spliced in (see `view`). Inside another value the bytes go straight into
/// `ser.out`; at the top level ([`dumps_view`]) they are gathered as
/// segments and copied once into the result.
///
/// With `indent` or `sort_keys` the view is materialized (edits applied; a
/// repeated key keeps its first value, as view reads do) and re-encoded
/// like any dict or list.
#[inline(never)]
fn write_view<'py, const PRETTY: bool>(
    ser: &mut Serializer<'py>,
    view: &Bound<'py, PyAny>,
) -> PyResult<()> {
    if PRETTY || ser.sort_keys {
        let plain = materialize(ser.py, view)?;
        return ser.value::<PRETTY>(plain.as_ptr());
    }
    let mut sink = ViewSink {
        ser,
        segs: None,
        mark: 0,
    };
    view::write(&mut sink, view)
}

/// A piece of the output of [`dumps_view`].
enum Seg {
    /// Bytes of the input of document `docs[i]`.
    Input(u32, usize, usize),
    /// Bytes of `ser.out` (encoded parts).
    Out(usize, usize),
}

/// The segments of one output, and the documents their input bytes come
/// from (each held once, however many segments it has: no reference count
/// traffic per segment). Most edited requests need a handful of segments
/// of one document, kept on the stack.
#[derive(Default)]
struct Segs {
    list: SmallVec<[Seg; 16]>,
    docs: SmallVec<[Arc<Parsed>; 1]>,
}

impl Segs {
    #[inline]
    fn input(&self, i: u32) -> &[u8] {
        self.docs[i as usize].input.bytes()
    }

    #[inline]
    fn bytes<'a>(&'a self, s: &Seg, out: &'a [u8]) -> &'a [u8] {
        match *s {
            Seg::Input(i, a, b) => &self.input(i)[a..b],
            Seg::Out(a, b) => &out[a..b],
        }
    }
}

/// Input ranges up to this many bytes are copied into `ser.out` rather
/// than kept as segments.
const SMALL_RAW: usize = 32;

/// [`view::Sink`] over the serializer: into `ser.out`, or as segments.
struct ViewSink<'s, 'py> {
    ser: &'s mut Serializer<'py>,
    segs: Option<Segs>,
    /// Start of the part of `ser.out` not yet in a segment.
    mark: usize,
}

impl ViewSink<'_, '_> {
    fn flush_out(&mut self) {
        let end = self.ser.out.len();
        if let Some(segs) = &mut self.segs {
            if end > self.mark {
                segs.list.push(Seg::Out(self.mark, end));
                self.mark = end;
            }
        }
    }
}

impl<'py> view::Sink<'py> for ViewSink<'_, 'py> {
    fn py(&self) -> Python<'py> {
        self.ser.py
    }

    fn raw(&mut self, parsed: &Arc<Parsed>, a: usize, b: usize) {
        // A short range (a key as written, a small value) is cheaper to
        // copy now than to keep as a segment of its own.
        if self.segs.is_none() || b - a <= SMALL_RAW {
            self.ser.out.extend_from_slice(&parsed.input.bytes()[a..b]);
            return;
        }
        self.flush_out();
        let segs = self.segs.as_mut().expect("checked above");
        let doc = match segs.docs.iter().position(|p| Arc::ptr_eq(p, parsed)) {
            Some(i) => i as u32,
            None => {
                segs.docs.push(parsed.clone());
                (segs.docs.len() - 1) as u32
            }
        };
        if let Some(Seg::Input(i, _, end)) = segs.list.last_mut() {
            if *i == doc && *end == a {
                *end = b;
                return;
            }
        }
        segs.list.push(Seg::Input(doc, a, b));
    }

    fn byte(&mut self, b: u8) {
        self.ser.out.push(b);
    }

    fn key(&mut self, key: &str) {
        write_str(&mut self.ser.out, key.as_bytes());
    }

    fn value(&mut self, v: &Bound<'py, PyAny>) -> PyResult<()> {
        self.ser.value::<false>(v.as_ptr())
    }

    fn enter(&mut self, p: *mut ffi::PyObject) -> PyResult<()> {
        self.ser.enter(p)
    }

    fn leave(&mut self) {
        self.ser.leave();
    }

    fn depth(&self) -> usize {
        self.ser.depth
    }
}

/// Views of documents of up to this many bytes are written by `dumps`
/// straight into its result, sized for the document's input and an eighth
/// more plus [`DIRECT_SLACK`] (one buffer, each byte copied once, none of
/// the segments' bookkeeping); larger ones as segments, so that the
/// result of an edit of a large document is allocated once at its exact
/// size.
#[cfg(not(feature = "abi3"))]
pub(super) const DIRECT_MAX: usize = 64 << 10;
/// See [`DIRECT_MAX`].
#[cfg(not(feature = "abi3"))]
pub(super) const DIRECT_SLACK: usize = 256;

/// What [`dumps_view`] did.
pub(super) enum Top<'py> {
    /// `obj` is not a view or a `Doc`: nothing written.
    NotView,
    /// The view is written into `ser.out`, which is the result.
    Written,
    /// The result, assembled from the view's segments.
    Bytes(Bound<'py, PyBytes>),
}

/// `dumps(view)` with compact output: when `direct`, written into
/// `ser.out` (sized by `dumps`, see [`DIRECT_MAX`]); else the view's
/// segments copied once into a new `bytes`.
pub(super) fn dumps_view<'py>(
    ser: &mut Serializer<'py>,
    obj: &Bound<'py, PyAny>,
    direct: bool,
) -> PyResult<Top<'py>> {
    if ser.sort_keys || !view::is_view(obj) {
        return Ok(Top::NotView);
    }
    let py = ser.py;
    let mut sink = ViewSink {
        ser,
        segs: if direct { None } else { Some(Segs::default()) },
        mark: 0,
    };
    view::write(&mut sink, obj)?;
    if direct {
        return Ok(Top::Written);
    }
    sink.flush_out();
    let segs = sink.segs.take().unwrap_or_default();
    let out = &sink.ser.out;
    if let [Seg::Input(i, a, b)] = segs.list.as_slice() {
        return Ok(Top::Bytes(PyBytes::new(py, &segs.input(*i)[*a..*b])));
    }
    let slice = |s| segs.bytes(s, out);
    let total: usize = segs.list.iter().map(|s| slice(s).len()).sum();
    // SAFETY: with a NULL source, PyBytes_FromStringAndSize allocates an
    // uninitialized bytes object of `total` bytes (NULL and an exception on
    // failure). Its buffer (PyBytes_AsString) is written in full below
    // before the object is handed to Python: the segments add up to `total`.
    unsafe {
        let obj = ffi::PyBytes_FromStringAndSize(std::ptr::null(), total as ffi::Py_ssize_t);
        let bytes = Bound::from_owned_ptr_or_err(py, obj)?;
        let mut dst = ffi::PyBytes_AsString(bytes.as_ptr()).cast::<u8>();
        for s in &segs.list {
            let src = slice(s);
            // (A long input range is rarely aligned with its place in
            // the output as its start is in the input: `copy_to`'s
            // aligned stores do not mind.)
            copy_to(dst, src);
            dst = dst.add(src.len());
        }
        Ok(Top::Bytes(bytes.cast_into_unchecked::<PyBytes>()))
    }
}

/// A dataclass instance as an object of its fields.
fn dataclass<'py, const PRETTY: bool>(
    ser: &mut Serializer<'py>,
    obj: &Bound<'py, PyAny>,
    ty: &Bound<'py, PyType>,
) -> PyResult<()> {
    let py = ser.py;
    let mut members: Vec<(Bound<'py, PyString>, Bound<'py, PyAny>)> = Vec::new();
    let public = |k: &Bound<'py, PyString>| -> PyResult<bool> {
        Ok(!str_utf8(k).map(|s| s.starts_with('_')).unwrap_or(false))
    };
    // orjson's choice: the instance `__dict__` unless the class itself
    // (not a base) defines `__slots__`.
    let own_slots = ty
        .getattr(intern!(py, "__dict__"))?
        .contains(intern!(py, "__slots__"))?;
    let dict = if own_slots {
        None
    } else {
        obj.getattr(intern!(py, "__dict__"))
            .ok()
            .and_then(|d| d.cast_into::<PyDict>().ok())
    };
    let marker = types(py)?.field_marker.as_ref().map(|m| m.bind(py));
    match dict {
        Some(d) => {
            for (k, v) in d.iter() {
                let k = k
                    .cast_into::<PyString>()
                    .map_err(|_| encode_error(py, "Dict key must be str"))?;
                if public(&k)? {
                    members.push((k, v));
                }
            }
        }
        None => {
            let fields = ty
                .getattr(intern!(py, "__dataclass_fields__"))?
                .cast_into::<PyDict>()?;
            for (k, field) in fields.iter() {
                let k = k
                    .cast_into::<PyString>()
                    .map_err(|_| encode_error(py, "Dict key must be str"))?;
                // `ClassVar` and `InitVar` pseudo-fields are not fields.
                let is_field = match marker {
                    Some(m) => field.getattr(intern!(py, "_field_type"))?.is(m),
                    None => true,
                };
                if is_field && public(&k)? {
                    let v = obj.getattr(&k)?;
                    members.push((k, v));
                }
            }
        }
    }
    if members.is_empty() {
        ser.out.extend_from_slice(b"{}");
        return Ok(());
    }
    // SAFETY: `obj` is alive; held while its members are written.
    let _held = unsafe { Held::new(obj.as_ptr()) };
    ser.enter(obj.as_ptr())?;
    let depth = ser.depth;
    let mut keyed = Vec::with_capacity(members.len());
    for (k, v) in &members {
        // SAFETY: `k` is a str held by `members`, which outlives `keyed`.
        keyed.push((unsafe { ser.utf8(k.as_ptr())? }, v));
    }
    if ser.sort_keys {
        keyed.sort_by(|a, b| a.0.cmp(b.0));
    }
    ser.out.push(b'{');
    for (i, (k, v)) in keyed.into_iter().enumerate() {
        if i > 0 {
            ser.out.push(b',');
        }
        if PRETTY {
            ser.newline(depth);
        }
        write_str(&mut ser.out, k);
        ser.out.push(b':');
        if PRETTY {
            ser.out.push(b' ');
        }
        ser.value::<PRETTY>(v.as_ptr())?;
    }
    if PRETTY {
        ser.newline(depth - 1);
    }
    ser.out.push(b'}');
    ser.leave();
    Ok(())
}

/// An integer attribute of a date/time object.
fn field(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> PyResult<u32> {
    obj.getattr(name)?.extract()
}

/// `n` as exactly `width` decimal digits.
fn digits<B: Buf + ?Sized>(out: &mut B, n: u32, width: usize) {
    let mut buf = [b'0'; 10];
    let mut v = n;
    for i in (0..width).rev() {
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    out.extend_from_slice(&buf[..width]);
}

/// `YYYY-MM-DD`.
fn write_date(ser: &mut Serializer<'_>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = obj.py();
    let y = field(obj, intern!(py, "year"))?;
    let m = field(obj, intern!(py, "month"))?;
    let d = field(obj, intern!(py, "day"))?;
    digits(&mut ser.out, y, 4);
    ser.out.push(b'-');
    digits(&mut ser.out, m, 2);
    ser.out.push(b'-');
    digits(&mut ser.out, d, 2);
    Ok(())
}

/// `HH:MM:SS` and `.ffffff` when the microseconds are not zero.
fn write_time(ser: &mut Serializer<'_>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = obj.py();
    let h = field(obj, intern!(py, "hour"))?;
    let m = field(obj, intern!(py, "minute"))?;
    let s = field(obj, intern!(py, "second"))?;
    let us = field(obj, intern!(py, "microsecond"))?;
    digits(&mut ser.out, h, 2);
    ser.out.push(b':');
    digits(&mut ser.out, m, 2);
    ser.out.push(b':');
    digits(&mut ser.out, s, 2);
    if us != 0 {
        ser.out.push(b'.');
        digits(&mut ser.out, us, 6);
    }
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SS[.ffffff][+HH:MM]`: the offset only for aware
/// datetimes, byte for byte as orjson writes it.
fn datetime(ser: &mut Serializer<'_>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
    ser.out.push(b'"');
    write_date(ser, obj)?;
    ser.out.push(b'T');
    write_time(ser, obj)?;
    if let Some(off) = utc_offset(obj)? {
        // (An aware datetime whose tzinfo answers `None` is written with
        // `+00:00`, as orjson writes it.)
        let (days, secs) = if off.is_none() {
            (0, 0)
        } else {
            let py = obj.py();
            let days: i64 = off.getattr(intern!(py, "days"))?.extract()?;
            let secs: u32 = off.getattr(intern!(py, "seconds"))?.extract()?;
            (days, secs)
        };
        write_offset(ser, days, secs);
    }
    ser.out.push(b'"');
    Ok(())
}

/// The UTC offset of an aware datetime as orjson finds it: a pytz zone (a
/// tzinfo with `normalize` and no `convert`) gives the offset of
/// `tz.normalize(dt)`, so a zone attached with `tzinfo=` writes the offset in
/// force at that time rather than the zone's first (LMT) entry; every other
/// tzinfo gives `dt.utcoffset()` (which may be `None`). `None` for a naive
/// datetime.
fn utc_offset<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = obj.py();
    let tz = obj.getattr(intern!(py, "tzinfo"))?;
    if tz.is_none() {
        return Ok(None);
    }
    if tz.hasattr(intern!(py, "normalize"))? && !tz.hasattr(intern!(py, "convert"))? {
        return tz
            .call_method1(intern!(py, "normalize"), (obj,))?
            .call_method0(intern!(py, "utcoffset"))
            .map(Some);
    }
    obj.call_method0(intern!(py, "utcoffset")).map(Some)
}

/// `+HH:MM` / `-HH:MM` for a `timedelta(days, seconds)` offset (microseconds
/// ignored), as orjson writes it: `+00:00` for zero; a negative offset
/// (`days == -1`) is written as `-` and the magnitude `86400 - seconds`;
/// leftover seconds of 30 or more round the minutes up (RFC 3339 asks for
/// the closest representable offset: `+00:19:32` is `+00:20`), without a
/// carry into the hours (orjson writes `00:59:30` as `+00:60`).
fn write_offset(ser: &mut Serializer<'_>, days: i64, seconds: u32) {
    if seconds == 0 {
        ser.out.extend_from_slice(b"+00:00");
        return;
    }
    let magnitude = if days == -1 {
        ser.out.push(b'-');
        86_400 - seconds
    } else {
        ser.out.push(b'+');
        seconds
    };
    let hours = magnitude / 3600;
    let mut minutes = magnitude / 60 % 60;
    if magnitude % 60 >= 30 {
        minutes += 1;
    }
    digits(&mut ser.out, hours, 2);
    ser.out.push(b':');
    digits(&mut ser.out, minutes, 2);
}
