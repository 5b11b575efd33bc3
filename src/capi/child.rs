//! A child and its value in one call (`qjson_field_value`,
//! `qjson_index_value`): what a host's lazy proxy needs on each read.
//!
//! A proxy read is a lookup (`qjson_field` / `qjson_index`) and, for a
//! scalar, a second call to convert it (`qjson_get_str`, `qjson_get_f64`,
//! `qjson_get_bool`), which resolves the cursor again. Here the lookup and
//! the conversion share one call and one out-structure ([`CValue`]): the
//! child's cursor (a container is read no further: the host wraps it), a
//! string's unescaped bytes (into the input when the JSON string has no
//! escapes, otherwise into the per-thread buffer of [`hand_out`]), a number
//! as a double, a boolean as 0 or 1. The errors are those of the two calls
//! it replaces.

use super::read::{args, element_of, field_of, hand_out, put, type_code, CCursor};
use super::status::{guard, Fail, Status};
use crate::decode::Number;
use crate::doc::{Cursor, Doc, Value};
use crate::error::JsonType;
use std::ffi::{c_char, c_int};

/// A child and its value (`qjson_value`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CValue {
    /// The child; its type in `at.kind`.
    pub at: CCursor,
    /// A string: its unescaped UTF-8 bytes (not NUL-terminated).
    pub str: *const c_char,
    /// A string's length in bytes; an object's or array's number of
    /// children.
    pub len: usize,
    /// A number as a double (as `qjson_get_f64`); a boolean as 0 or 1.
    pub num: f64,
}

/// The value of child `c`, as the getters read it. The scalar is decoded
/// straight from the cursor (`Doc::value`), not through the getters, which
/// would resolve the empty path and check the type again.
fn value(d: &Doc<'_>, c: Cursor) -> Result<CValue, Fail> {
    let t = d.type_of(c);
    let mut v = CValue {
        at: CCursor {
            start: c.start,
            sidx: c.sidx,
            ord: c.ord,
            kind: type_code(t),
        },
        str: std::ptr::null(),
        len: 0,
        num: 0.0,
    };
    match t {
        JsonType::String | JsonType::Number | JsonType::Bool => match d.value(c)? {
            Value::String(s) => (v.str, v.len) = hand_out(s),
            Value::Number(Number::Int(i)) => v.num = i as f64,
            Value::Number(Number::BigInt(t)) => v.num = t.parse::<f64>().unwrap_or(f64::NAN),
            Value::Number(Number::Float(f)) => v.num = f,
            Value::Bool(b) => v.num = f64::from(u8::from(b)),
            Value::Null | Value::Object(_) | Value::Array(_) => {}
        },
        JsonType::Object | JsonType::Array => v.len = d.len(c)?,
        JsonType::Null => {}
    }
    Ok(v)
}

/// Member `key` of the object at `at` (the root when null), as
/// `qjson_field`, and its value into `*out` (see the module docs).
///
/// # Safety
/// Live `doc`, `at` null or valid, `key` readable for `key_len` bytes, `out`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_field_value(
    doc: *const super::Handle,
    at: *const CCursor,
    key: *const c_char,
    key_len: usize,
    out: *mut CValue,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract (no path).
        let (d, at, _) = unsafe { args(doc, at, std::ptr::null(), 0) }?;
        // SAFETY: forwarded from this function's contract.
        let c = unsafe { field_of(&d, at, key, key_len) }?;
        let v = value(&d, c)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, v) }?;
        Ok(Status::Ok)
    })
}

/// Element `i` (0-based; negative counts from the end) of the array at `at`
/// (the root when null), as `qjson_index`, and its value into `*out` (see
/// the module docs).
///
/// # Safety
/// Live `doc`, `at` null or valid, `out` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_index_value(
    doc: *const super::Handle,
    at: *const CCursor,
    i: i64,
    out: *mut CValue,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from this function's contract (no path).
        let (d, at, _) = unsafe { args(doc, at, std::ptr::null(), 0) }?;
        let c = element_of(&d, at, i)?;
        let v = value(&d, c)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, v) }?;
        Ok(Status::Ok)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::{qjson_free, qjson_parse, Handle};

    fn parse(s: &'static [u8]) -> *mut Handle {
        let mut h = std::ptr::null_mut();
        // SAFETY: a static input, a valid out pointer.
        let status = unsafe { qjson_parse(s.as_ptr().cast(), s.len(), std::ptr::null(), &mut h) };
        assert_eq!(status, 0);
        h
    }

    fn text(v: &CValue) -> &str {
        // SAFETY: a string value points to `len` bytes of UTF-8, valid
        // until the next call on this thread.
        std::str::from_utf8(unsafe { std::slice::from_raw_parts(v.str.cast::<u8>(), v.len) })
            .unwrap()
    }

    #[test]
    fn members_and_elements_with_their_values() {
        let h = parse(
            br#"{"s": "a\nb", "n": 2.5, "i": 7, "t": true, "z": null, "o": {}, "a": [1, "x"]}"#,
        );
        let mut v = CValue {
            at: CCursor::default(),
            str: std::ptr::null(),
            len: 0,
            num: 0.0,
        };
        let field = |k: &str, v: &mut CValue| {
            // SAFETY: live handle, a key of k.len() bytes, a writable out.
            unsafe { qjson_field_value(h, std::ptr::null(), k.as_ptr().cast(), k.len(), v) }
        };
        assert_eq!(field("s", &mut v), 0);
        assert_eq!((v.at.kind, text(&v)), (3, "a\nb"));
        assert_eq!(field("n", &mut v), 0);
        assert_eq!((v.at.kind, v.num), (4, 2.5));
        assert_eq!(field("i", &mut v), 0);
        assert_eq!((v.at.kind, v.num), (4, 7.0));
        assert_eq!(field("t", &mut v), 0);
        assert_eq!((v.at.kind, v.num), (5, 1.0));
        assert_eq!(field("z", &mut v), 0);
        assert_eq!(v.at.kind, 6);
        assert_eq!(field("o", &mut v), 0);
        assert_eq!((v.at.kind, v.len), (1, 0));
        assert_eq!(field("nope", &mut v), 2);
        assert_eq!(field("a", &mut v), 0);
        assert_eq!((v.at.kind, v.len), (2, 2));
        let arr = v.at;
        // SAFETY: live handle, valid cursors, a writable out.
        unsafe {
            assert_eq!(qjson_index_value(h, &arr, 1, &mut v), 0);
            assert_eq!((v.at.kind, text(&v)), (3, "x"));
            assert_eq!(qjson_index_value(h, &arr, -2, &mut v), 0);
            assert_eq!((v.at.kind, v.num), (4, 1.0));
            assert_eq!(qjson_index_value(h, &arr, 2, &mut v), 2);
            // Wrong container types and null pointers are refused.
            assert_eq!(qjson_index_value(h, std::ptr::null(), 0, &mut v), 3);
            assert_eq!(qjson_field_value(h, &arr, c"k".as_ptr(), 1, &mut v), 3);
            assert_eq!(
                qjson_field_value(h, std::ptr::null(), c"s".as_ptr(), 1, std::ptr::null_mut()),
                6
            );
            qjson_free(h);
        }
    }
}
