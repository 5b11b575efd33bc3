//! Reads: cursors, lookups and typed getters.

use super::handle::{handle, Handle};
use super::status::{guard, Fail, Status};
use crate::doc::{Cursor, Doc};
use crate::error::{AccessError, JsonType};
use std::borrow::Cow;
use std::cell::RefCell;
use std::ffi::{c_char, c_int};

/// A value of a document (`qjson_cursor`): the core [`Cursor`] plus the
/// value's type (`QJSON_OBJECT` ... `QJSON_NULL`), filled in by the calls
/// that produce cursors. Plain data: copy it freely; it is valid as long as
/// its document.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CCursor {
    pub start: u32,
    pub sidx: u32,
    pub ord: u32,
    /// One of the `QJSON_OBJECT` ... `QJSON_NULL` codes.
    pub kind: u32,
}

/// The type codes of `include/qjson.h` (1-based, so a Lua table of names
/// indexes them directly).
pub(crate) fn type_code(t: JsonType) -> u32 {
    match t {
        JsonType::Object => 1,
        JsonType::Array => 2,
        JsonType::String => 3,
        JsonType::Number => 4,
        JsonType::Bool => 5,
        JsonType::Null => 6,
    }
}

impl CCursor {
    pub(crate) fn new(doc: &Doc<'_>, c: Cursor) -> CCursor {
        CCursor {
            start: c.start,
            sidx: c.sidx,
            ord: c.ord,
            kind: type_code(doc.type_of(c)),
        }
    }

    pub(crate) fn core(self) -> Cursor {
        Cursor {
            start: self.start,
            sidx: self.sidx,
            ord: self.ord,
        }
    }
}

thread_local! {
    /// Decoded strings (those with escapes) handed out by pointer; valid
    /// until the next call that decodes a string on this thread.
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

/// A pointer and length for `s`: into the input when it is borrowed,
/// otherwise into the per-thread scratch string.
pub(crate) fn hand_out(s: Cow<'_, str>) -> (*const c_char, usize) {
    match s {
        Cow::Borrowed(b) => (b.as_ptr().cast(), b.len()),
        Cow::Owned(o) => SCRATCH.with(|sc| {
            let mut sc = sc.borrow_mut();
            *sc = o;
            (sc.as_ptr().cast(), sc.len())
        }),
    }
}

/// Store `v` through an out-pointer from C.
///
/// # Safety
/// `p` is null or valid for a write of `T`.
#[inline]
pub(crate) unsafe fn put<T>(p: *mut T, v: T) -> Result<(), Fail> {
    if p.is_null() {
        return Err(Fail::Arg("null out pointer"));
    }
    // SAFETY: non-null, and valid for writes per this function's contract.
    unsafe { p.write(v) };
    Ok(())
}

/// The document, the base cursor (`at`, or the root when null) and the path.
///
/// # Safety
/// `h` is null or a live handle; `at` is null or a valid `qjson_cursor`;
/// `path` points to `path_len` readable bytes (or `path_len` is 0).
#[inline]
pub(crate) unsafe fn args<'h>(
    h: *const Handle,
    at: *const CCursor,
    path: *const c_char,
    path_len: usize,
) -> Result<(Doc<'h>, Cursor, &'h str), Fail> {
    // SAFETY: forwarded from this function's contract.
    let doc = unsafe { handle(h) }?.doc();
    // SAFETY: `at` is null or valid, per the contract.
    let base = match unsafe { at.as_ref() } {
        Some(c) => c.core(),
        None => doc.root(),
    };
    // SAFETY: forwarded from this function's contract.
    let path = unsafe { path_str(path, path_len) }?;
    Ok((doc, base, path))
}

/// The path text at `path` (`path_len` bytes), checked for UTF-8.
///
/// # Safety
/// `path` points to `path_len` readable bytes (or `path_len` is 0), kept
/// for the duration of the call, which `'p` does not outlive in any export.
#[inline]
pub(crate) unsafe fn path_str<'p>(path: *const c_char, path_len: usize) -> Result<&'p str, Fail> {
    let path: &[u8] = if path_len == 0 {
        b""
    } else if path.is_null() {
        return Err(Fail::Arg("null path"));
    } else {
        // SAFETY: `path` points to `path_len` readable bytes, per the
        // contract; the caller keeps them for the duration of the call,
        // which `'p` does not outlive in any export.
        unsafe { std::slice::from_raw_parts(path.cast::<u8>(), path_len) }
    };
    Ok(
        std::str::from_utf8(path).map_err(|e| AccessError::PathSyntax {
            at: e.valid_up_to(),
            reason: "the path is not UTF-8",
        })?,
    )
}

/// Resolve `path` from `at` (the root when null) into `*out`.
///
/// # Safety
/// See `include/qjson.h`: live `doc`, `at` null or valid, `path` readable
/// for `path_len` bytes, `out` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_find(
    doc: *const Handle,
    at: *const CCursor,
    path: *const c_char,
    path_len: usize,
    out: *mut CCursor,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let (d, at, p) = unsafe { args(doc, at, path, path_len) }?;
        let c = d.find(at, p)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, CCursor::new(&d, c)) }?;
        Ok(Status::Ok)
    })
}

/// Member `key` (`key_len` bytes, unescaped, compared exactly; no path
/// syntax) of the object at `at` (the root when null) into `*out`: the first
/// one when the key repeats. `QJSON_ERR_NOT_FOUND` when absent,
/// `QJSON_ERR_TYPE` when `at` is not an object.
///
/// # Safety
/// Live `doc`, `at` null or valid, `key` readable for `key_len` bytes, `out`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_field(
    doc: *const Handle,
    at: *const CCursor,
    key: *const c_char,
    key_len: usize,
    out: *mut CCursor,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract (no path).
        let (d, at, _) = unsafe { args(doc, at, std::ptr::null(), 0) }?;
        // SAFETY: forwarded from this function's contract.
        let c = unsafe { field_of(&d, at, key, key_len) }?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, CCursor::new(&d, c)) }?;
        Ok(Status::Ok)
    })
}

/// Element `i` (0-based; negative counts from the end) of the array at `at`
/// (the root when null) into `*out`. `QJSON_ERR_NOT_FOUND` when out of
/// range, `QJSON_ERR_TYPE` when `at` is not an array. Reading every element
/// in order is O(1) each (large arrays get a child table on first use).
///
/// # Safety
/// Live `doc`, `at` null or valid, `out` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_index(
    doc: *const Handle,
    at: *const CCursor,
    i: i64,
    out: *mut CCursor,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract (no path).
        let (d, at, _) = unsafe { args(doc, at, std::ptr::null(), 0) }?;
        let c = element_of(&d, at, i)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, CCursor::new(&d, c)) }?;
        Ok(Status::Ok)
    })
}

/// The `len` bytes of a key at `key` (null only when `len` is 0).
///
/// # Safety
/// `key` readable for `len` bytes when `len > 0`.
pub(crate) unsafe fn key_bytes<'a>(key: *const c_char, len: usize) -> Result<&'a [u8], Fail> {
    if len == 0 {
        return Ok(&[]);
    }
    if key.is_null() {
        return Err(Fail::Arg("null key"));
    }
    // SAFETY: `key` points to `len` readable bytes, per the contract.
    Ok(unsafe { std::slice::from_raw_parts(key.cast::<u8>(), len) })
}

/// Member `key` (`key_len` bytes; null only when empty) of the object at
/// `at`: `qjson_field`'s lookup, shared with `qjson_field_value`.
///
/// # Safety
/// `key` readable for `key_len` bytes when `key_len > 0`.
pub(crate) unsafe fn field_of(
    d: &Doc<'_>,
    at: Cursor,
    key: *const c_char,
    key_len: usize,
) -> Result<Cursor, Fail> {
    // SAFETY: forwarded from this function's contract.
    let key = unsafe { key_bytes(key, key_len) }?;
    match d.type_of(at) {
        JsonType::Object => {}
        found => {
            return Err(AccessError::Type {
                expected: "object",
                found,
            }
            .into())
        }
    }
    Ok(d.field(at, key).ok_or(AccessError::NotFound { at: 0 })?)
}

/// Element `i` (negative from the end) of the array at `at`:
/// `qjson_index`'s lookup, shared with `qjson_index_value`.
pub(crate) fn element_of(d: &Doc<'_>, at: Cursor, i: i64) -> Result<Cursor, Fail> {
    match d.type_of(at) {
        JsonType::Array => {}
        found => {
            return Err(AccessError::Type {
                expected: "array",
                found,
            }
            .into())
        }
    }
    Ok(d.element(at, i).ok_or(AccessError::NotFound { at: 0 })?)
}

/// Generates the path-taking getters: resolve `path` from `at`, compute a
/// value with `$body` (given the core doc, base cursor and path), store it.
macro_rules! getter {
    ($(#[$doc:meta])* $name:ident, ($($out:ident: $ty:ty => $val:ident),+), |$d:ident, $at:ident, $p:ident| $body:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// Live `doc`, `at` null or valid, `path` readable for `path_len`
        /// bytes, out-pointers writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            doc: *const Handle,
            at: *const CCursor,
            path: *const c_char,
            path_len: usize,
            $($out: *mut $ty),+
        ) -> c_int {
            guard(|| {
                // SAFETY: forwarded from this function's contract.
                let ($d, $at, $p) = unsafe { args(doc, at, path, path_len) }?;
                #[allow(unused_parens)]
                let ($($val),+) = $body;
                // SAFETY: forwarded from this function's contract.
                $(unsafe { put($out, $val) }?;)+
                Ok(Status::Ok)
            })
        }
    };
}

getter!(
    /// The string at `path`: `*out` / `*out_len` get its unescaped UTF-8
    /// bytes (not NUL-terminated), pointing into the input when the JSON
    /// string has no escapes, otherwise into a per-thread buffer valid until
    /// the next call on this thread. `QJSON_ERR_TYPE` for another type.
    qjson_get_str, (out: *const c_char => ptr, out_len: usize => len),
    |d, at, p| hand_out(d.get_str(at, p)?)
);

getter!(
    /// The integer at `path`, exactly; `QJSON_ERR_TYPE` for a non-number, a
    /// number with a fraction or exponent, or one outside the int64 range.
    qjson_get_i64, (out: i64 => v),
    |d, at, p| d.get_i64(at, p)?
);

getter!(
    /// Any number at `path` as a double (correctly rounded);
    /// `QJSON_ERR_TYPE` for another type.
    qjson_get_f64, (out: f64 => v),
    |d, at, p| d.get_f64(at, p)?
);

getter!(
    /// The boolean at `path` as 0 or 1; `QJSON_ERR_TYPE` for another type.
    qjson_get_bool, (out: c_int => v),
    |d, at, p| d.get_bool(at, p)? as c_int
);

/// `QJSON_OK` when the value at `path` is `null`; `QJSON_ERR_TYPE` for
/// another type, and for a malformed scalar of a lazy document (`nulll`)
/// `QJSON_ERR_JSON` with the error and offset a strict parse reports, as
/// the other getters give for theirs (null has no value to hand out, so a
/// reader would otherwise take the type code's word for it).
///
/// # Safety
/// Live `doc`, `at` null or valid, `path` readable for `path_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn qjson_get_null(
    doc: *const Handle,
    at: *const CCursor,
    path: *const c_char,
    path_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        let (d, at, p) = unsafe { args(doc, at, path, path_len) }?;
        let c = d.find(at, p)?;
        match d.type_of(c) {
            JsonType::Null => {
                d.value(c)?;
                Ok(Status::Ok)
            }
            found => Err(AccessError::Type {
                expected: "null",
                found,
            }
            .into()),
        }
    })
}

getter!(
    /// The type code (`QJSON_OBJECT` ... `QJSON_NULL`) of the value at `path`.
    qjson_typeof, (out: c_int => v),
    |d, at, p| type_code(d.type_of(d.find(at, p)?)) as c_int
);

getter!(
    /// The number of members or elements of the object or array at `path`;
    /// `QJSON_ERR_TYPE` for a scalar.
    qjson_len, (out: usize => v),
    |d, at, p| d.len(d.find(at, p)?)?
);

getter!(
    /// The byte range `[*start, *end)` of the value at `path` in the input,
    /// without surrounding whitespace: its original text.
    qjson_span, (start: usize => a, end: usize => b),
    |d, at, p| d.span(d.find(at, p)?)
);
