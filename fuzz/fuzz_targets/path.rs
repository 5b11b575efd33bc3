//! Path resolution: arbitrary paths over arbitrary documents.
//!
//! Properties (besides "never panics"):
//! - whether a path is malformed does not depend on the document:
//!   `find` returns `PathSyntax` exactly when `segments` yields an error or
//!   a wildcard, `find_all` exactly when `segments` yields an error;
//! - a compiled path reads what its text reads (`find_compiled`,
//!   `find_all_compiled`), and `find_all` of a path without wildcards is
//!   `find`'s value or nothing;
//! - resolving a path in two steps (a prefix, then the rest relative to the
//!   cursor it reached) gives the same value as resolving it at once;
//! - paths built from the document's own keys and indices, picked by the
//!   fuzzer, reach the same cursor in dotted form and as a JSON Pointer;
//! - whatever a path reaches can be read (type, raw, value) without panic.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use qjson::path::{segments, Compiled};
use qjson::{AccessError, Cursor, Doc, Index, JsonType, Options};

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    lazy: bool,
    doc: &'a [u8],
    paths: Vec<&'a str>,
    /// Choices of children for paths built from the document.
    picks: Vec<u16>,
}

const EMPTY_OBJECT: &[u8] = b"{}";

fn read(d: &Doc<'_>, c: Cursor) {
    let _ = d.type_of(c);
    let (a, b) = d.span(c);
    assert!(a <= b && b <= d.input().len());
    let _ = d.raw(c);
    let _ = d.value(c);
    let _ = d.len(c);
}

/// Split `path` before its segment at offset `off` into (prefix, rest), so
/// that resolving the prefix and then the rest from there is equivalent.
fn split(path: &str, off: usize) -> Option<(&str, &str)> {
    let b = path.as_bytes();
    if off == 0 || off > b.len() {
        return None;
    }
    if b[0] == b'/' {
        // Pointer: the token at `off` follows a `/`.
        return (b[off - 1] == b'/').then(|| (&path[..off - 1], &path[off - 1..]));
    }
    if b.get(off) == Some(&b'[') {
        return Some((&path[..off], &path[off..]));
    }
    // A bare key may begin with `/` inside a dotted path (`a./b`), but a
    // relative path beginning with `/` would be a JSON Pointer.
    if b[off - 1] == b'.' && b.get(off) != Some(&b'/') {
        return Some((&path[..off - 1], &path[off..]));
    }
    None
}

fn check_path(d: &Doc<'_>, at: Cursor, path: &str) {
    check_all(d, at, path);
    let syntax_error = segments(path).find_map(|s| match s {
        Err(e) => Some(e),
        Ok((_, seg)) if seg.is_wildcard() => Some(qjson::path::wildcard_error(0)),
        Ok(_) => None,
    });
    let got = d.find(at, path);
    if let Ok(c) = Compiled::new(path) {
        assert_eq!(
            d.find_compiled(at, &c).is_ok(),
            got.is_ok(),
            "{path:?}: compiled"
        );
        if let (Ok(a), Ok(b)) = (d.find_compiled(at, &c), &got) {
            assert_eq!(a, *b, "{path:?}: compiled");
        }
    }
    match (&got, &syntax_error) {
        (Err(AccessError::PathSyntax { at: o, .. }), Some(_)) => {
            assert!(*o <= path.len());
        }
        (_, Some(e)) => panic!("{path:?}: {e:?} from segments, {got:?} from find"),
        (Err(AccessError::PathSyntax { .. }), None) => {
            panic!("{path:?}: find says malformed, segments does not")
        }
        (Err(AccessError::NotFound { at: o }), None) => assert!(*o <= path.len()),
        (Err(AccessError::Decode(e)), None) => assert!(e.offset <= d.input().len()),
        (Err(AccessError::Type { .. }), None) => panic!("find returned a Type error"),
        (Ok(c), None) => {
            read(d, *c);
            // Two steps give the same cursor.
            let segs: Vec<usize> = segments(path).map(|s| s.unwrap().0).collect();
            for off in segs {
                if let Some((prefix, rest)) = split(path, off) {
                    let mid = d.find(at, prefix).unwrap_or_else(|e| {
                        panic!("{path:?} resolves but its prefix {prefix:?} does not: {e:?}")
                    });
                    assert_eq!(
                        d.find(mid, rest),
                        Ok(*c),
                        "{path:?} = {prefix:?} + {rest:?}"
                    );
                }
            }
        }
    }
}

/// Wildcard reads: never a panic, syntax errors as `segments` says, the
/// compiled form agrees, and every match can be read.
fn check_all(d: &Doc<'_>, at: Cursor, path: &str) {
    let syntax_error = segments(path).find_map(Result::err);
    let got = d.find_all(at, path);
    match (&got, &syntax_error) {
        (Err(AccessError::PathSyntax { .. }), Some(_)) => return,
        (_, Some(e)) => panic!("{path:?}: {e:?} from segments, {got:?} from find_all"),
        (Err(AccessError::PathSyntax { .. }), None) => panic!("{path:?}: find_all says malformed"),
        _ => {}
    }
    let c = Compiled::new(path).expect("well-formed");
    assert_eq!(d.find_all_compiled(at, &c), got, "{path:?}: compiled");
    let Ok(found) = got else { return };
    for &m in &found {
        read(d, m);
    }
    if c.wildcard().is_none() {
        match d.find(at, path) {
            Ok(one) => assert_eq!(found, [one], "{path:?}"),
            Err(_) => assert!(found.is_empty(), "{path:?}"),
        }
    }
}

/// Walk down from the root choosing children with `picks`; at each step
/// the dotted path and the pointer must reach the chosen child.
fn derived_paths(d: &Doc<'_>, picks: &[u16]) {
    let root = d.root();
    let mut cur = root;
    let mut dotted = String::new();
    let mut pointer = String::new();
    for &p in picks.iter().take(64) {
        let n = match d.len(cur) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let i = p as usize % n;
        match d.type_of(cur) {
            JsonType::Array => {
                let Some(c) = d.element(cur, i as i64) else {
                    panic!("element {i} of {n} missing")
                };
                dotted = format!("{dotted}[{i}]");
                pointer = format!("{pointer}/{i}");
                cur = c;
            }
            JsonType::Object => {
                let Some((raw, c)) = d.object_items(cur).unwrap().nth(i) else {
                    panic!("member {i} of {n} missing")
                };
                let Ok(key) = d.key_str(raw) else { return };
                // The first member with this key is what a path reaches.
                let first = d.field(cur, key.as_bytes()).expect("own key not found");
                if first != c {
                    return;
                }
                let quoted = qjson_quote(&key);
                dotted = format!("{dotted}[{quoted}]");
                pointer = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                cur = c;
            }
            _ => return,
        }
        assert_eq!(d.find(root, &dotted), Ok(cur), "dotted {dotted:?}");
        assert_eq!(d.find(root, &pointer), Ok(cur), "pointer {pointer:?}");
    }
}

/// A JSON string literal for `s` (the quoted-key form of a path).
fn qjson_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fuzz_target!(|input: Input<'_>| {
    let opts = Options {
        lazy: input.lazy,
        ..Options::default()
    };
    let index = Index::build(input.doc, &opts).ok();
    let fallback = Index::build(EMPTY_OBJECT, &Options::default()).unwrap();
    let d = match &index {
        Some(i) => Doc::new(input.doc, i),
        None => Doc::new(EMPTY_OBJECT, &fallback),
    };
    let root = d.root();
    for path in &input.paths {
        check_path(&d, root, path);
        // From an inner cursor too (the first child, if any).
        if let Ok(mut w) = d.walk(root) {
            if let Some((_, c)) = d.walk_next(&mut w) {
                check_path(&d, c, path);
            }
        }
    }
    derived_paths(&d, &input.picks);
});
