//! The compact form of a parsed value: the text a host writes for it once
//! it is decoded into the host's own maps, lists, strings and numbers and
//! encoded again (what Python's `dumps` writes for `loads(text)`, and so
//! for a value Python's patch functions materialize). qjson.lua writes the
//! values it copies out of edited proxies in this form (`qjson_compact`),
//! so that a JSON Patch `copy` of an edited container, or a merge patch
//! that builds a new object, gives the same bytes from both edges.
//!
//! # Algorithm
//!
//! One walk over the index, depth first (the depth is bounded by the
//! parse's `max_depth`), writing into one buffer, no whitespace:
//!
//! - objects: their distinct members in order, each key once with its
//!   first value ([`Doc::distinct_items`]: as reads see a repeated key, and
//!   as a materialized view holds it);
//! - arrays: every element;
//! - strings (keys too): decoded, then escaped again by
//!   [`write_str`] (only `"`, `\` and control
//!   bytes; `\/` and `\u00e9` come out as `/` and `é`);
//! - integers: their value (`-0` is `0`), digits beyond `i64` as written;
//!   other numbers: the shortest text of their correctly rounded double
//!   ([`write_f64`]: `1.0E2` is `100.0`). A number that rounds to infinity
//!   (`1e400`) has no JSON form and is written as it stands in the input:
//!   Python holds it as `inf` and fails only when it writes it, so failing
//!   here would fail a patch that Python applies.
//! - `true`, `false`, `null` as they are.

use crate::doc::{Cursor, Doc, Value};
use crate::encode::{write_f64, write_i64, write_str, Buf};
use crate::error::AccessError;
use crate::Number;

/// Append the compact form of the value at `c` (see the module docs).
pub fn write_compact<B: Buf + ?Sized>(
    doc: &Doc<'_>,
    c: Cursor,
    out: &mut B,
) -> Result<(), AccessError> {
    match doc.value(c)? {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::String(s) => write_str(out, s.as_bytes()),
        Value::Number(Number::Int(i)) => write_i64(out, i),
        Value::Number(Number::BigInt(digits)) => out.extend_from_slice(digits.as_bytes()),
        Value::Number(Number::Float(f)) => {
            if f.is_finite() {
                write_f64(out, f)
            } else {
                out.extend_from_slice(doc.raw(c))
            }
        }
        Value::Array(a) => {
            out.extend_from_slice(b"[");
            for (i, x) in doc.array_items(a)?.enumerate() {
                if i > 0 {
                    out.extend_from_slice(b",");
                }
                write_compact(doc, x, out)?;
            }
            out.extend_from_slice(b"]");
        }
        Value::Object(o) => {
            out.extend_from_slice(b"{");
            for (i, m) in doc.distinct_items(o)?.enumerate() {
                let (_, raw_key, x) = m?;
                if i > 0 {
                    out.extend_from_slice(b",");
                }
                write_str(out, doc.key_str(raw_key)?.as_bytes());
                out.extend_from_slice(b":");
                write_compact(doc, x, out)?;
            }
            out.extend_from_slice(b"}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Document, Options};

    fn compact(text: &str) -> Result<String, AccessError> {
        let d = Document::parse(text.as_bytes(), &Options::default()).unwrap();
        let doc = d.doc();
        let mut out = Vec::new();
        write_compact(&doc, doc.root(), &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn values_as_decoded_and_encoded_again() {
        let cases: &[(&str, &str)] = &[
            (" null ", "null"),
            ("true", "true"),
            ("[ false ]", "[false]"),
            ("-0", "0"),
            ("-12", "-12"),
            ("1.0E2", "100.0"),
            ("-0.0", "-0.0"),
            ("1e16", "1e+16"),
            ("1E-400", "0.0"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
            ("-9223372036854775809", "-9223372036854775809"),
            (
                r#""a\/b\u00e9\u0001\n\u007f""#,
                "\"a/b\u{e9}\\u0001\\n\u{7f}\"",
            ),
            (
                r#"{ "a" : [ 1 , { } , [ ] ] , "b\u0041" : "" }"#,
                r#"{"a":[1,{},[]],"bA":""}"#,
            ),
            // A repeated key: once, at its first place, with its first value.
            (r#"{"a": 1, "b": 2, "a": 3}"#, r#"{"a":1,"b":2}"#),
            (r#"{"\u0061": 1, "a": 3}"#, r#"{"a":1}"#),
        ];
        for (text, want) in cases {
            assert_eq!(compact(text).unwrap(), *want, "{text}");
        }
    }

    #[test]
    fn out_of_range_numbers_stay_as_written() {
        assert_eq!(
            compact("[1, -1e400, 1E+999 ]").unwrap(),
            "[1,-1e400,1E+999]"
        );
    }
}
