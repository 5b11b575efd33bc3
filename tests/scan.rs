//! Stage 1: every backend this CPU can run must produce exactly the scalar
//! oracle's `Scan`, or exactly its error (kind and offset), for every input.

use proptest::collection::vec;
use proptest::prelude::*;
use qjson::scan::{self, scan_with, Backend, Scan};
use qjson::{Error, ErrorKind};

/// Cases per property: `default`, or `PROPTEST_CASES` when set (for soaks).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The oracle's answer.
fn oracle(input: &[u8]) -> Result<Scan, Error> {
    let mut s = Scan::default();
    scan_with(Backend::Scalar, input, &mut s)
        .expect("scalar is always available")
        .map(|()| s)
}

/// A scan result from a reused, dirty `Scan` (to check that it is cleared).
fn run(backend: Backend, input: &[u8]) -> Result<Scan, Error> {
    let mut s = Scan {
        structurals: vec![7; 100],
        escapes: vec![9; 3],
        first_control: Some(1),
        non_ascii: true,
        escapes_valid: true,
        utf8_valid: true,
    };
    scan_with(backend, input, &mut s)
        .expect("backend listed as available")
        .map(|()| s)
}

/// Checks every available backend against the oracle, on the input as given
/// and at a few misalignments (the SIMD backends read aligned and unaligned
/// blocks differently).
fn check(input: &[u8]) -> Result<(), TestCaseError> {
    let expect = oracle(input);
    for shift in [0usize, 1, 17, 63] {
        let mut buf = vec![b'x'; shift];
        buf.extend_from_slice(input);
        let shifted = &buf[shift..];
        for backend in Backend::available() {
            let got = run(backend, shifted);
            prop_assert_eq!(
                &got,
                &expect,
                "backend {} (shift {}) on {:?}",
                backend.name(),
                shift,
                String::from_utf8_lossy(&input[..input.len().min(300)])
            );
        }
    }
    let mut active = Scan::default();
    let got = scan::scan(input, &mut active).map(|()| active);
    prop_assert_eq!(&got, &expect, "active backend");
    Ok(())
}

fn assert_same(input: &[u8]) {
    if let Err(e) = check(input) {
        panic!("{e}");
    }
}

/// Pieces of JSON-ish text: every byte class the scanner distinguishes.
fn jsonish_piece() -> impl Strategy<Value = &'static [u8]> {
    prop::sample::select(vec![
        &b"\""[..],
        b"\\",
        b"{",
        b"}",
        b"[",
        b"]",
        b":",
        b",",
        b" ",
        b"a",
        "é".as_bytes(),
        b"\x01",
        b"\xff",
        b"\x0c",
        b"\x1a",
        b"\x1f",
        b"\x7f",
        b"\n",
        b"1",
        b"A",
    ])
}

fn jsonish(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(jsonish_piece(), 0..max).prop_map(|v| v.concat())
}

/// Runs of one byte, long enough to cross 64-byte blocks at any offset.
fn runs() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop::sample::select(vec![b'\\', b'"', b'a', b' ', b'{', b'\x02', 0xC3, b':']);
    vec((byte, 0usize..200), 0..8).prop_map(|runs| {
        runs.into_iter()
            .flat_map(|(b, n)| std::iter::repeat_n(b, n))
            .collect()
    })
}

/// A string of quiet content with a few special bytes at chosen places:
/// exercises the long-string skip loop and its exits.
fn long_string(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u8>> {
    let special = prop::sample::select(vec![
        &b"\\\""[..],
        b"\\\\",
        b"\\",
        b"\"",
        b"\x01",
        b"\x1f",
        "é".as_bytes(),
        b"\xf0",
        b"\"}{\"",
    ]);
    (
        0usize..64,
        len,
        vec((any::<prop::sample::Index>(), special), 0..6),
        any::<bool>(),
    )
        .prop_map(|(lead, len, specials, close)| {
            let mut v = b"{\"k\": [".to_vec();
            v.extend(std::iter::repeat_n(b' ', lead));
            v.push(b'"');
            let start = v.len();
            v.extend((0..len).map(|i| {
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i * 7 % 64]
            }));
            for (at, s) in specials {
                let p = start + at.index(len + 1);
                v.splice(p..p, s.iter().copied());
            }
            if close {
                v.extend_from_slice(b"\"]}");
            }
            v
        })
}

/// JSON documents (as serde_json writes them, compact or pretty).
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "\\PC{0,40}".prop_map(Value::String),
        ".{0,10}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map("\\PC{0,8}", inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn random_bytes(input in vec(any::<u8>(), 0..600)) {
        check(&input)?;
    }

    #[test]
    fn jsonish_text(input in jsonish(400)) {
        check(&input)?;
    }

    #[test]
    fn jsonish_text_without_stray_backslashes(input in jsonish(400)) {
        // Mostly-valid shapes: drop backslashes outside strings so that the
        // scan runs to the end more often.
        let mut in_string = false;
        let mut escaped = false;
        let mut out = Vec::new();
        for &b in &input {
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
            } else if b == b'\\' {
                continue;
            } else if b == b'"' {
                in_string = true;
            }
            out.push(b);
        }
        if in_string {
            out.push(b'"');
        }
        check(&out)?;
    }

    #[test]
    fn runs_across_blocks(prefix in 0usize..130, body in runs()) {
        let mut input = vec![b' '; prefix];
        input.extend_from_slice(&body);
        check(&input)?;
        // The same inside a string.
        let mut quoted = vec![b' '; prefix];
        quoted.push(b'"');
        quoted.extend_from_slice(&body);
        quoted.push(b'"');
        check(&quoted)?;
    }

    #[test]
    fn block_edge_lengths(
        len in prop::sample::select(vec![0usize, 1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257, 319, 320, 321, 511, 512, 513]),
        fill in jsonish(600),
    ) {
        let mut input: Vec<u8> = fill.into_iter().chain(std::iter::repeat(b'a')).take(len).collect();
        input.truncate(len);
        check(&input)?;
    }

    #[test]
    fn utf8_strings(s in "\\PC{0,300}") {
        let doc = serde_json::to_vec(&serde_json::json!({ "text": s, "list": [s, 1] })).unwrap();
        check(&doc)?;
        check(s.as_bytes())?;
    }

    #[test]
    fn json_documents(v in json_value(), pretty in any::<bool>()) {
        let doc = if pretty {
            serde_json::to_vec_pretty(&v).unwrap()
        } else {
            serde_json::to_vec(&v).unwrap()
        };
        check(&doc)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(64)))]

    #[test]
    fn long_strings(input in long_string(0..3000)) {
        check(&input)?;
    }

    #[test]
    fn very_long_strings(input in long_string(100_000..140_000)) {
        check(&input)?;
    }
}

// ---- deterministic cases ---------------------------------------------------

fn err(input: &[u8]) -> Error {
    let e = oracle(input).expect_err("expected an error");
    assert_same(input);
    e
}

#[test]
fn empty_and_whitespace() {
    assert_same(b"");
    assert_eq!(oracle(b"").unwrap().structurals, vec![0]);
    for n in 0..300 {
        assert_same(&vec![b' '; n]);
    }
}

#[test]
fn every_length_and_quote_position() {
    // A string opening and closing at every pair of offsets near block edges.
    for len in [62usize, 63, 64, 65, 66, 127, 128, 129, 130, 200, 300] {
        for open in 0..len {
            let mut v = vec![b'a'; len];
            v[open] = b'"';
            assert_same(&v); // unterminated (or plain) text
            for close in (open + 1..len).step_by(7) {
                let mut w = v.clone();
                w[close] = b'"';
                assert_same(&w);
                if close > open + 1 {
                    w[close - 1] = b'\\';
                    assert_same(&w);
                }
            }
        }
    }
}

#[test]
fn backslash_runs_at_every_offset() {
    for run in 0..140 {
        for start in [0usize, 1, 30, 62, 63, 64, 65, 127, 128, 200] {
            let mut v = vec![b' '; start];
            v.push(b'"');
            v.extend(std::iter::repeat_n(b'\\', run));
            v.extend_from_slice(b"\"}\"x\"");
            assert_same(&v);
        }
    }
}

#[test]
fn stray_backslash() {
    assert_eq!(
        err(b"\\"),
        Error {
            kind: ErrorKind::StrayBackslash,
            offset: 0
        }
    );
    assert_eq!(err(b"{\"a\":1}\\").offset, 7);
    assert_eq!(err(b"\"abc\"\\\"").offset, 5);
    assert_eq!(err(b"  \\\\ \"x\"").offset, 2);
    // A stray backslash wins over a string left open after it.
    let e = err(b"[1, \\ \"abc");
    assert_eq!((e.kind, e.offset), (ErrorKind::StrayBackslash, 4));
    // Far into the input, after a long string.
    let mut v = b"[\"".to_vec();
    v.extend(std::iter::repeat_n(b'Q', 10_000));
    v.extend_from_slice(b"\", \\]");
    assert_eq!(
        err(&v),
        Error {
            kind: ErrorKind::StrayBackslash,
            offset: 10_005
        }
    );
}

#[test]
fn unterminated_string() {
    let e = err(b"\"abc");
    assert_eq!((e.kind, e.offset), (ErrorKind::UnterminatedString, 0));
    assert_eq!(err(b"[1, \"abc").offset, 4);
    assert_eq!(err(b"[\"a\", \"b\\\"]").offset, 6);
    // A backslash as the very last byte, inside a string.
    assert_eq!(err(b"{\"k\": \"ab\\").offset, 6);
    // The open quote of a long string, found after skipping.
    let mut v = b"{\"a\": 1, \"b\": \"".to_vec();
    v.extend(std::iter::repeat_n(b'z', 100_000));
    assert_eq!(
        err(&v),
        Error {
            kind: ErrorKind::UnterminatedString,
            offset: 14
        }
    );
}

#[test]
fn side_outputs() {
    let s = oracle(b"{\"a\\n\": \"\\\\\\\"\x01\", \"\xc3\xa9\": [1,2]}").unwrap();
    assert_same(b"{\"a\\n\": \"\\\\\\\"\x01\", \"\xc3\xa9\": [1,2]}");
    assert_eq!(s.escapes, vec![3, 9, 11]);
    assert_eq!(s.first_control, Some(13));
    assert!(s.non_ascii);
    // An escaped control byte counts, a control byte outside strings does not.
    let s = oracle(b"\x01[\"\\\x02\"]").unwrap();
    assert_same(b"\x01[\"\\\x02\"]");
    assert_eq!(s.first_control, Some(4));
    assert_eq!(s.structurals, vec![1, 2, 6, 7]);
}

#[test]
fn non_ascii_and_controls_late_in_long_strings() {
    // The skip loop must notice the first byte >= 0x80 and control byte
    // wherever they sit, and keep skipping afterwards.
    for at in [0usize, 1, 63, 64, 255, 256, 257, 1000, 4095, 4096, 9999] {
        for special in [&b"\xc3\xa9"[..], b"\x05", b"\\n", b"\\", b"\"", b"\xff"] {
            let mut v = b"[\"".to_vec();
            v.extend(std::iter::repeat_n(b'b', 10_000));
            v.splice(2 + at..2 + at, special.iter().copied());
            v.extend_from_slice(b"\", \"x\"]");
            assert_same(&v);
        }
    }
}

#[test]
fn every_byte_value_inside_long_strings() {
    // The skip loop classifies each byte as quiet or not with a few vector
    // instructions: every byte value, at the start, middle and end of a
    // skipped 256-byte step, of the 512-byte step after it and of a single
    // block, in a string that is still ASCII (a byte >= 0x80 also stops the
    // skip) and in one after a non-ASCII byte (then only `"`, `\` and
    // control bytes do).
    for lead in [&b""[..], "\u{e9}".as_bytes()] {
        for at in [
            0usize, 31, 32, 100, 255, 256, 300, 319, 511, 512, 700, 767, 1000,
        ] {
            for b in 0..=255u8 {
                let mut v = b"[\"".to_vec();
                v.extend_from_slice(lead);
                v.extend(std::iter::repeat_n(b'q', 1400 - v.len()));
                v[128 + at] = b;
                v.extend_from_slice(b"\", 1]");
                assert_same(&v);
            }
        }
    }
}

#[test]
fn chat_shaped_payload() {
    let mut v = br#"{"model":"gpt-4o","temperature":0.2,"messages":[{"role":"user","content":[{"type":"text","text":"What is in this image?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,"#.to_vec();
    v.extend(
        (0..300_000).map(|i| {
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i * 13 % 64]
        }),
    );
    v.extend_from_slice(br#""}}]}]}"#);
    assert_same(&v);
    let s = oracle(&v).unwrap();
    assert!(s.structurals.len() < 64);
}

#[test]
fn reuse_keeps_results_identical() {
    let docs: [&[u8]; 3] = [b"[1, 2, {\"a\": \"\\u00e9\"}]", b"", b"\"x\""];
    for backend in Backend::available() {
        let mut s = Scan::default();
        for d in docs.iter().chain(docs.iter()) {
            scan_with(backend, d, &mut s).unwrap().unwrap();
            assert_eq!(s, oracle(d).unwrap(), "{}", backend.name());
        }
    }
}

#[test]
fn backends() {
    let available = Backend::available();
    assert_eq!(available.last(), Some(&Backend::Scalar));
    assert!(available.contains(&scan::active_backend()));
    for b in [
        Backend::Scalar,
        Backend::Avx2,
        Backend::Avx512,
        Backend::Neon,
    ] {
        let mut s = Scan::default();
        assert_eq!(
            scan_with(b, b"[]", &mut s).is_some(),
            available.contains(&b)
        );
    }
    eprintln!("available: {:?}", available);
}
