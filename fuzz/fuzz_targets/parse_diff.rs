//! Differential fuzzing of parse (strict and lazy) against serde_json.
//!
//! - Strict mode accepts exactly what serde_json accepts (serde_json is built
//!   with `arbitrary_precision`, so `1e400` is accepted on both sides: qjson
//!   reads it as inf, like Python's json). Inputs qjson rejects only for
//!   depth (`DepthExceeded`, max_depth 1024) are not compared.
//! - On accepted input, every value is read through the index (type, len,
//!   value, typed getters, element / field lookups, raw, dotted path and
//!   JSON Pointer from the root) and must equal serde_json's. Duplicate keys:
//!   serde_json keeps the last, qjson's lookups the first, so values are
//!   compared with the member at the same position.
//! - Lazy mode accepts everything strict mode accepts and reads the same
//!   values; on any input, walking a lazily parsed document reads or errors,
//!   never panics.
//! - Big documents: libFuzzer's inputs are a few KB, far below the 4096
//!   structurals where the strict walk stops reserving its container table's
//!   upper bound and starts growing it (and the thread's spare tables change
//!   size). So each input is parsed once more tiled, `[` + copies of it
//!   joined by `,` + `]`, with enough copies for about 8 200 structurals:
//!   strict and serde_json accept or reject it alike, lazy accepts what
//!   strict accepts, and an accepted one has one element per copy, each
//!   copy's bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qjson::{AccessError, Cursor, Doc, ErrorKind, Index, JsonType, Number, Options, Value};
use serde_json::Value as J;

fn strict() -> Options {
    Options::default()
}

fn lazy() -> Options {
    Options {
        lazy: true,
        ..Options::default()
    }
}

/// serde_json with no recursion limit (qjson stops at 1024 levels anyway,
/// and libFuzzer's inputs are a few KB).
fn serde_parse(data: &[u8]) -> Result<J, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(data);
    de.disable_recursion_limit();
    let v = serde::Deserialize::deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// A dotted-path segment for `key`: bare when it is plain, else quoted.
fn dotted_key(parent: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if plain {
        if parent.is_empty() {
            key.to_owned()
        } else {
            format!("{parent}.{key}")
        }
    } else {
        format!("{parent}[{}]", serde_json::to_string(key).unwrap())
    }
}

fn pointer_key(parent: &str, key: &str) -> String {
    format!("{parent}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// A number compared with serde_json's (`text`: with arbitrary_precision,
/// serde_json keeps the number as text, normalised a little: `0e7` becomes
/// `0e+7`). The value must be the same; the kind (int / big int / float)
/// follows the original bytes.
fn check_number(d: &Doc<'_>, c: Cursor, n: Number<'_>, text: &str) {
    let raw = std::str::from_utf8(d.raw(c)).expect("a number is ASCII");
    let theirs = text
        .parse::<f64>()
        .expect("serde_json number text parses as f64");
    let mut want = raw.parse::<f64>().expect("a JSON number parses as f64");
    assert_eq!(
        want.to_bits(),
        theirs.to_bits(),
        "{raw} vs serde_json {text}"
    );
    let integer = !raw.contains(['.', 'e', 'E']);
    match n {
        Number::Int(i) => {
            assert!(integer, "{raw} read as an integer");
            assert_eq!(raw.parse::<i64>().ok(), Some(i), "{raw}");
            assert_eq!(d.get_i64(c, "").unwrap(), i);
            // `-0` is the integer 0 (README), so its float is +0.0.
            want = i as f64;
        }
        Number::BigInt(s) => {
            assert!(integer, "{raw} read as an integer");
            assert!(
                raw.parse::<i64>().is_err(),
                "{raw} fits i64 but read as BigInt"
            );
            assert_eq!(s, raw);
            assert!(d.get_i64(c, "").is_err());
        }
        Number::Float(f) => {
            assert!(!integer, "{raw} read as a float");
            assert_eq!(f.to_bits(), want.to_bits(), "{raw}: {f} vs {want}");
        }
    }
    let got = d.get_f64(c, "").unwrap();
    assert_eq!(
        got.to_bits(),
        want.to_bits(),
        "{raw}: get_f64 {got} vs {want}"
    );
}

/// Paths are checked only while the pointer to a value is at most this
/// long: each check walks from the root, so checking every value of a
/// document nested `n` deep costs O(n^2) (1000 nested brackets timed out
/// under ASan); values deeper than this are still read and compared.
const PATH_CHECK_MAX: usize = 256;

/// Every value under `c` equals `v`; `dotted` / `pointer` are paths to `c`
/// from the root (None once a duplicate key makes a path ambiguous, or
/// once it is longer than [`PATH_CHECK_MAX`]).
fn check_same(d: &Doc<'_>, c: Cursor, v: &J, paths: Option<(&str, &str)>) {
    let root = d.root();
    let paths = paths.filter(|(_, pointer)| pointer.len() <= PATH_CHECK_MAX);
    if let Some((dotted, pointer)) = paths {
        assert_eq!(d.find(root, dotted), Ok(c), "dotted {dotted:?}");
        assert_eq!(d.find(root, pointer), Ok(c), "pointer {pointer:?}");
    }
    let value = d.value(c).unwrap();
    match (value, v) {
        (Value::Null, J::Null) => {
            assert_eq!(d.type_of(c), JsonType::Null);
            assert_eq!(d.raw(c), b"null");
        }
        (Value::Bool(a), J::Bool(b)) => {
            assert_eq!(a, *b);
            assert_eq!(d.get_bool(c, "").unwrap(), *b);
        }
        (Value::String(a), J::String(b)) => {
            assert_eq!(&*a, b);
            assert_eq!(&*d.get_str(c, "").unwrap(), b);
            let raw = d.raw(c);
            assert!(raw.len() >= 2 && raw[0] == b'"' && raw[raw.len() - 1] == b'"');
        }
        (Value::Number(n), J::Number(b)) => check_number(d, c, n, &b.to_string()),
        (Value::Array(a), J::Array(b)) => {
            assert_eq!(d.type_of(a), JsonType::Array);
            assert_eq!(d.len(a).unwrap(), b.len());
            let items: Vec<Cursor> = d.array_items(a).unwrap().collect();
            assert_eq!(items.len(), b.len());
            // Lookups twice: the second one may go through a child table.
            for _ in 0..2 {
                for (i, &ci) in items.iter().enumerate() {
                    assert_eq!(d.element(a, i as i64), Some(ci));
                    assert_eq!(d.element(a, i as i64 - b.len() as i64), Some(ci));
                }
            }
            assert_eq!(d.element(a, b.len() as i64), None);
            assert_eq!(d.element(a, -(b.len() as i64) - 1), None);
            for (i, (ci, vi)) in items.iter().zip(b).enumerate() {
                let sub = paths.map(|(dp, pp)| (format!("{dp}[{i}]"), format!("{pp}/{i}")));
                check_same(
                    d,
                    *ci,
                    vi,
                    sub.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
                );
            }
        }
        (Value::Object(a), J::Object(b)) => {
            assert_eq!(d.type_of(a), JsonType::Object);
            let members: Vec<(String, Cursor)> = d
                .object_items(a)
                .unwrap()
                .map(|(k, ci)| (d.key_str(k).unwrap().into_owned(), ci))
                .collect();
            assert_eq!(d.len(a).unwrap(), members.len());
            let distinct: std::collections::BTreeSet<&str> =
                members.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(distinct.len(), b.len(), "distinct keys");
            let dup = distinct.len() != members.len();
            for _ in 0..2 {
                for (k, ci) in &members {
                    let first = members.iter().find(|(k2, _)| k2 == k).unwrap().1;
                    assert_eq!(d.field(a, k.as_bytes()), Some(first), "field {k:?}");
                    let _ = ci;
                }
            }
            for (i, (k, ci)) in members.iter().enumerate() {
                let last = members.iter().rposition(|(k2, _)| k2 == k).unwrap();
                let first = members.iter().position(|(k2, _)| k2 == k).unwrap();
                if i != last {
                    // serde_json kept another occurrence; still read it all.
                    read_all(d, *ci, 0);
                    continue;
                }
                let vi = b.get(k).expect("key present in serde_json's map");
                let sub = (paths.is_some() && !dup && first == last).then(|| {
                    let (dp, pp) = paths.unwrap();
                    (dotted_key(dp, k), pointer_key(pp, k))
                });
                check_same(
                    d,
                    *ci,
                    vi,
                    sub.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
                );
            }
        }
        (a, b) => panic!("{a:?} vs {b}"),
    }
}

/// Read every value under `c` (lazy documents: errors allowed, no panic).
fn read_all(d: &Doc<'_>, c: Cursor, depth: usize) {
    let _ = d.raw(c);
    let _ = d.type_of(c);
    let _ = d.get_f64(c, "");
    let _ = d.get_i64(c, "");
    let _ = d.get_bool(c, "");
    let _ = d.get_str(c, "");
    match d.value(c) {
        Ok(Value::Array(a)) => {
            let n = d.len(a).unwrap();
            let items: Vec<Cursor> = d.array_items(a).unwrap().collect();
            assert_eq!(items.len(), n);
            for (i, ci) in items.iter().enumerate() {
                assert_eq!(d.element(a, i as i64), Some(*ci));
                if depth < 2000 {
                    read_all(d, *ci, depth + 1);
                }
            }
        }
        Ok(Value::Object(a)) => {
            let n = d.len(a).unwrap();
            let members: Vec<(&[u8], Cursor)> = d.object_items(a).unwrap().collect();
            assert_eq!(members.len(), n);
            for (k, ci) in members {
                if let Ok(key) = d.key_str(k) {
                    assert!(
                        d.field(a, key.as_bytes()).is_some(),
                        "key {key:?} not found"
                    );
                }
                if depth < 2000 {
                    read_all(d, ci, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Tiled inputs past this size are not built (the copies of a long string).
const TILED_MAX: usize = 256 * 1024;

/// `[` + `data` + (`,` + `data`) ... + `]`: enough copies for about 8 200
/// structurals (a rough count: each of `[]{}:,` is one, a string two
/// quotes), or `None` when that would pass [`TILED_MAX`] bytes.
fn tiled(data: &[u8]) -> Option<(Vec<u8>, usize)> {
    let per_copy = 1 + data.iter().filter(|b| b"[]{}:,\"".contains(b)).count();
    let copies = (8200 / per_copy).max(2);
    let len = copies * (data.len() + 1) + 1;
    if len > TILED_MAX {
        return None;
    }
    let mut out = Vec::with_capacity(len);
    out.push(b'[');
    for i in 0..copies {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(data);
    }
    out.push(b']');
    Some((out, copies))
}

/// The tiled input (see the module doc): the container table's growth and
/// the thread's spare tables, on valid and invalid input alike.
fn check_tiled(data: &[u8]) {
    let Some((big, copies)) = tiled(data) else {
        return;
    };
    let ours = Index::build(&big, &strict());
    let lazy_index = Index::build(&big, &lazy());
    if matches!(&ours, Err(e) if e.kind == ErrorKind::DepthExceeded) {
        return;
    }
    let theirs = serde_parse(&big);
    match (&ours, &theirs) {
        (Ok(_), Ok(_)) | (Err(_), Err(_)) => {}
        (Ok(_), Err(e)) => panic!("tiled: qjson accepts, serde_json rejects: {e}"),
        (Err(e), Ok(_)) => panic!("tiled: qjson rejects ({e}), serde_json accepts"),
    }
    if let Err(e) = &ours {
        assert!(e.offset <= big.len(), "tiled: error offset past the end");
    }
    if let (Ok(index), Ok(J::Array(items))) = (&ours, &theirs) {
        let d = Doc::new(&big, index);
        let r = d.root();
        assert_eq!(d.len(r).unwrap(), items.len());
        // Whole copies: each element's bytes are one copy, trimmed (a copy
        // that is itself a comma-separated list, `1,2`, tiles into more
        // elements; then only the count is checked).
        if items.len() == copies {
            let s = data.iter().position(|b| !b" \t\r\n".contains(b)).unwrap();
            let e = data.iter().rposition(|b| !b" \t\r\n".contains(b)).unwrap();
            let trimmed = &data[s..=e];
            for (i, c) in d.array_items(r).unwrap().enumerate() {
                assert_eq!(d.raw(c), trimmed, "tiled element {i}");
            }
            let last = d.element(r, -1).expect("the last copy");
            check_same(&d, last, &items[copies - 1], None);
        }
        let li = lazy_index
            .as_ref()
            .expect("tiled: lazy rejects what strict accepts");
        let ld = Doc::new(&big, li);
        assert_eq!(ld.len(ld.root()).unwrap(), items.len());
    }
}

fuzz_target!(|data: &[u8]| {
    let ours = Index::build(data, &strict());
    // serde_json without a recursion limit overflows the stack on deeply
    // nested input (the seed corpus holds 100 000 nested arrays, and stage 1
    // errors such as a stray backslash at the end are reported before the
    // depth limit is met), so inputs that could nest past qjson's limit are
    // only checked for not panicking.
    let openers = data.iter().filter(|&&b| b == b'[' || b == b'{').count();
    if openers > 1000 || matches!(&ours, Err(e) if e.kind == ErrorKind::DepthExceeded) {
        let _ = Index::build(data, &lazy());
        return;
    }
    check_tiled(data);
    let theirs = serde_parse(data);
    let lazy_index = Index::build(data, &lazy());
    match (&ours, &theirs) {
        (Err(e), _) if e.kind == ErrorKind::DepthExceeded => {}
        (Ok(_), Ok(_)) | (Err(_), Err(_)) => {}
        (Ok(_), Err(e)) => panic!("qjson accepts, serde_json rejects: {e}"),
        (Err(e), Ok(_)) => panic!("qjson rejects ({e}), serde_json accepts"),
    }
    if let Err(e) = &ours {
        assert!(
            e.offset <= data.len(),
            "error offset {} past the end",
            e.offset
        );
        assert!(e.to_string().contains(&format!("at byte {}", e.offset)));
    }
    if let (Ok(index), Ok(v)) = (&ours, &theirs) {
        let d = Doc::new(data, index);
        let r = d.root();
        let trimmed = {
            let s = data.iter().position(|b| !b" \t\r\n".contains(b)).unwrap();
            let e = data.iter().rposition(|b| !b" \t\r\n".contains(b)).unwrap();
            &data[s..=e]
        };
        assert_eq!(d.raw(r), trimmed);
        check_same(&d, r, v, Some(("", "")));
        // Lazy accepts whatever strict accepts, and reads the same.
        let li = lazy_index
            .as_ref()
            .expect("lazy rejects what strict accepts");
        let ld = Doc::new(data, li);
        check_same(&ld, ld.root(), v, Some(("", "")));
    }
    if let Ok(li) = &lazy_index {
        let ld = Doc::new(data, li);
        read_all(&ld, ld.root(), 0);
        if let Err(AccessError::Decode(e)) = ld.get(ld.root(), "") {
            assert!(e.offset <= data.len());
        }
    }
});
