//! The fast path of `validate` (stage 1's token scan and the token walk,
//! `src/index/tokens.rs`) against the exact path: it may only answer
//! "valid" for documents the exact path accepts, and (below its nesting
//! limit) must answer "valid" for every one of them.

use proptest::collection::vec;
use proptest::prelude::*;
use qjson::index::{validate, validate_exact, validate_fast};
use qjson::scan::{
    active_backend, scan_tokens_line_with, scan_tokens_with, scan_with, Backend, Scan,
};
use qjson::Options;

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn strict(max_depth: usize) -> Options {
    Options {
        lazy: false,
        max_depth,
    }
}

/// Whether the active backend has a token scan (AVX-512 or AVX2, unless
/// `QJSON_BACKEND` caps it at scalar); without one the fast path always
/// says "not known" and only the implication is checked.
fn has_token_scan() -> bool {
    scan_tokens_with(active_backend(), b"[]", &mut Scan::default()).is_some()
}

/// The fast answer agrees with the exact one, at a few misalignments.
fn check(input: &[u8]) -> Result<(), TestCaseError> {
    for max_depth in [1024usize, 3] {
        let exact = validate_exact(input, &strict(max_depth));
        for shift in [0usize, 1, 33] {
            let mut buf = vec![b'x'; shift];
            buf.extend_from_slice(input);
            let fast = validate_fast(&buf[shift..], max_depth);
            let show = String::from_utf8_lossy(&input[..input.len().min(300)]).into_owned();
            if fast {
                prop_assert!(exact.is_ok(), "fast accepted {:?}: {:?}", show, exact);
            } else if has_token_scan() {
                // (Only nesting beyond the walk's inline stack may be left
                // to the exact path.)
                let shallow = validate_exact(input, &strict(max_depth.min(256)));
                prop_assert!(shallow.is_err(), "fast rejected valid {:?}", show);
            }
            prop_assert_eq!(&validate(&buf[shift..], &strict(max_depth)), &exact);
        }
    }
    Ok(())
}

fn assert_agree(input: &[u8]) {
    if let Err(e) = check(input) {
        panic!("{e}");
    }
}

/// The scalar oracle for the token scan: the scalar scan's offsets plus the
/// first byte of every scalar token (bytes outside strings that are not
/// whitespace, structural or `"`, whose previous byte is not one).
fn token_oracle(input: &[u8]) -> Result<Scan, qjson::Error> {
    let mut s = Scan::default();
    scan_with(Backend::Scalar, input, &mut s).unwrap()?;
    let mut starts = Vec::new();
    let (mut in_string, mut escaped, mut prev_scalar) = (false, false, false);
    for (i, &b) in input.iter().enumerate() {
        let mut scalar = false;
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else {
            scalar = !b" \t\n\r{}[]:,".contains(&b);
        }
        if scalar && !prev_scalar {
            starts.push(i as u32);
        }
        prev_scalar = scalar;
    }
    s.escapes_valid = s.escapes.iter().all(|&e| plain_escape(input, e as usize));
    s.utf8_valid = std::str::from_utf8(input).is_ok();
    let sentinel = s.structurals.pop().unwrap();
    s.structurals.extend(starts);
    s.structurals.sort_unstable();
    s.structurals.push(sentinel);
    Ok(s)
}

/// Whether the escape at `input[e]` is a valid one-letter escape or a
/// `\uXXXX` outside the surrogates (the token scan's `escapes_valid`).
fn plain_escape(input: &[u8], e: usize) -> bool {
    match input.get(e + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => true,
        Some(b'u') => input.get(e + 2..e + 6).is_some_and(|h| {
            let surrogate = h[0].eq_ignore_ascii_case(&b'd') && !matches!(h[1], b'0'..=b'7');
            h.iter().all(u8::is_ascii_hexdigit) && !surrogate
        }),
        _ => false,
    }
}

fn check_scan(input: &[u8]) -> Result<(), TestCaseError> {
    let expect = token_oracle(input);
    for shift in [0usize, 1, 17, 63] {
        let mut buf = vec![b'x'; shift];
        buf.extend_from_slice(input);
        for backend in Backend::available() {
            let mut got = Scan {
                structurals: vec![7; 70],
                escapes: vec![1],
                first_control: Some(3),
                non_ascii: true,
                escapes_valid: true,
                utf8_valid: true,
            };
            let Some(r) = scan_tokens_with(backend, &buf[shift..], &mut got) else {
                continue;
            };
            let got = r.map(|()| got);
            // (Only AVX-512 checks escapes and UTF-8 in stage 1.)
            let mut expect = expect.clone();
            if let Ok(s) = &mut expect {
                s.escapes_valid &= backend == Backend::Avx512;
                s.utf8_valid &= backend == Backend::Avx512;
            }
            prop_assert_eq!(&got, &expect, "backend {} shift {}", backend.name(), shift);
        }
    }
    Ok(())
}

/// Pieces of near-JSON: valid and broken tokens of every kind.
fn piece() -> impl Strategy<Value = &'static [u8]> {
    prop::sample::select(vec![
        &b"{"[..],
        b"}",
        b"[",
        b"]",
        b":",
        b",",
        b",",
        b"\"k\"",
        b"\"k\":",
        b"\"\\n\"",
        b"\"\\u00e9\\ud83d\\ude00\"",
        b"\"\\x\"",
        b"\"\\/\\b\\f\\\\\"",
        b"\"\\uD7fF\\u12aB\"",
        b"\"\\udc00\"",
        b"\"\\uDBFF\\uDFFF\"",
        b"\"\\u12G4\"",
        b"\"\\u0\"",
        b"\\u",
        b"0041",
        b"d8",
        b"\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\",
        "\"é\"".as_bytes(),
        "\"€😀ß\"".as_bytes(),
        // Broken UTF-8: truncated, overlong, surrogate, above U+10FFFF, a
        // stray continuation.
        b"\"\xe2\x82\"",
        b"\xe2\x82",
        b"\xf0\x9f\x98",
        b"\"\xc0\xaf\"",
        b"\"\xed\xa0\x80\"",
        b"\"\xf4\x90\x80\x80\"",
        b"\x80",
        // Long strings (skipped whole blocks) of multibyte text, valid and
        // with one bad byte far inside.
        "\"ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀\"".as_bytes(),
        b"\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe9aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
        b"\"",
        b"\\",
        b"0",
        b"1",
        b"-12.5e+3",
        b"1.5",
        b"01",
        b"1.",
        b"-",
        b"1e",
        b".5",
        b"true",
        b"false",
        b"null",
        b"tru",
        b"nulll",
        b"True",
        b" ",
        b"\n",
        b"\t ",
        b"\x01",
        b"\xff",
        b"x",
    ])
}

/// JSON documents with numbers of every shape, compact or pretty.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        (0u32..1000).prop_map(|v| Value::from(v as f64 / 1000.0)),
        "\\PC{0,20}".prop_map(Value::String),
        "[\"\\\\\\x01-\\x1f]{0,3}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map("\\PC{0,6}", inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn document() -> impl Strategy<Value = Vec<u8>> {
    (json_value(), any::<bool>()).prop_map(|(v, pretty)| {
        if pretty {
            serde_json::to_vec_pretty(&v).unwrap()
        } else {
            serde_json::to_vec(&v).unwrap()
        }
    })
}

/// One edit of a document: replace, insert or delete a byte.
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop::sample::select(b"{}[]:,\" \n\\0123456789-+.eEtfnulx\x01\xc3\xff".to_vec());
    (document(), any::<prop::sample::Index>(), byte, 0u8..3).prop_map(|(mut d, at, b, op)| {
        let i = at.index(d.len() + 1);
        match op {
            0 if i < d.len() => d[i] = b,
            2 if i < d.len() => {
                d.remove(i);
            }
            _ => d.insert(i, b),
        }
        d
    })
}

/// The first-line scan agrees with the token scan of the first line: it
/// stops at the first newline (never inside a string: a newline there is
/// a control byte, an error), with exactly the line's tokens and escapes
/// (`non_ascii` may also count the bytes after the newline in its block);
/// it fails where the line's own scan does; and without a newline it is
/// the whole input's scan. The input is checked at several alignments in
/// memory (the slice starts `shift` bytes into its allocation, which moves
/// the tail's page-crossing case); the newline's place in a 64-byte block
/// comes from the generated lengths of the line's parts.
fn check_line(input: &[u8]) -> Result<(), TestCaseError> {
    for shift in [0usize, 1, 17, 62, 63] {
        let mut buf = vec![b'x'; shift];
        buf.extend_from_slice(input);
        let buf = &buf[shift..];
        let first_nl = buf.iter().position(|&b| b == b'\n');
        for backend in Backend::available() {
            let mut got = Scan::default();
            let Some(r) = scan_tokens_line_with(backend, buf, &mut got) else {
                continue;
            };
            let name = backend.name();
            let scan_of = |bytes: &[u8]| {
                let mut s = Scan::default();
                scan_tokens_with(backend, bytes, &mut s).map(|r| r.map(|()| s))
            };
            match r {
                Ok(Some(p)) => {
                    prop_assert_eq!(first_nl, Some(p), "backend {} shift {}", name, shift);
                    let want = scan_of(&buf[..p]).expect("a token scan");
                    let want = want.expect("the line scans");
                    prop_assert!(want.first_control.is_none());
                    prop_assert_eq!(&got.structurals, &want.structurals, "{} {}", name, shift);
                    prop_assert_eq!(&got.escapes, &want.escapes);
                    prop_assert_eq!(got.escapes_valid, want.escapes_valid);
                    // (The line's UTF-8 only: the next line's bytes in its
                    // last block do not count.)
                    prop_assert_eq!(got.utf8_valid, want.utf8_valid, "{} {}", name, shift);
                    prop_assert_eq!(got.first_control, None);
                    prop_assert!(got.non_ascii || !want.non_ascii);
                }
                Ok(None) => {
                    prop_assert_eq!(first_nl, None, "backend {} shift {}", name, shift);
                    let want = scan_of(buf).expect("a token scan").expect("it scans");
                    prop_assert_eq!(&got, &want, "backend {} shift {}", name, shift);
                }
                Err(_) => {
                    let line = &buf[..first_nl.unwrap_or(buf.len())];
                    let alone = scan_of(line).expect("a token scan");
                    prop_assert!(
                        alone.map_or(true, |s| s.first_control.is_some()),
                        "backend {} shift {}: the line alone scans",
                        name,
                        shift
                    );
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(1000)))]

    #[test]
    fn first_lines(
        a in vec(piece(), 0..40).prop_map(|v| v.concat()),
        b in vec(piece(), 0..20).prop_map(|v| v.concat()),
        pad in 0usize..70,
        crlf in any::<bool>(),
    ) {
        let mut input = a;
        input.extend(std::iter::repeat_n(b' ', pad));
        if crlf {
            input.push(b'\r');
        }
        input.push(b'\n');
        input.extend_from_slice(&b);
        check_line(&input)?;
        check_line(&b)?;
    }

    #[test]
    fn first_lines_of_documents(a in document(), b in document(), pad in 0usize..70) {
        let mut input = a;
        input.extend(std::iter::repeat_n(b' ', pad));
        input.push(b'\n');
        input.extend_from_slice(&b);
        check_line(&input)?;
    }

    #[test]
    fn token_soup(input in vec(piece(), 0..60).prop_map(|v| v.concat())) {
        check(&input)?;
        check_scan(&input)?;
    }

    #[test]
    fn documents(input in document()) {
        prop_assert!(validate_exact(&input, &strict(1024)).is_ok());
        check(&input)?;
        check_scan(&input)?;
    }

    #[test]
    fn mutated_documents(input in mutated()) {
        check(&input)?;
        check_scan(&input)?;
    }

    #[test]
    fn random_bytes(input in vec(any::<u8>(), 0..300)) {
        check(&input)?;
        check_scan(&input)?;
    }
}

#[test]
fn tables() {
    let valid: &[&[u8]] = &[
        b"0",
        b" -0.5e-7 ",
        b"\"a\"",
        b"[]",
        b"{}",
        b"[1,2,3]",
        b"{\"a\":1,\"b\":[true,false,null],\"c\":{}}",
        b"[ 1 , \"x\" , [ ] , { } ]",
        b"{\"a\" : \"b\" , \"c\" :\n-1}",
        b"[\"a\",{\"b\":\"c\"},\"d\"]",
        b"[0,1e5,1E+5,1.0e-5,-0]",
        b"[\"\\u0000\\uD7FF\\uE000\\uFFFF\\uabcd\\uD83D\\uDE00\\udbff\\udfff\"]",
    ];
    for v in valid {
        assert!(validate_exact(v, &strict(1024)).is_ok());
        assert_agree(v);
    }
    let invalid: &[&[u8]] = &[
        b"",
        b"  ",
        b"[",
        b"]",
        b"[1,]",
        b"[,1]",
        b"{\"a\"}",
        b"{\"a\":}",
        b"{\"a\":1,}",
        b"{,}",
        b"{1:2}",
        b"{\"a\" \"b\":1}",
        b"[1 2]",
        b"[\"a\" \"b\"]",
        b"[1\"a\"]",
        b"[\"a\"1]",
        b"\"a\"\"b\"",
        b"1 2",
        b"[1}",
        b"{\"a\":1]",
        b"[01]",
        b"[1.]",
        b"[-]",
        b"[.5]",
        b"[1e]",
        b"[truex]",
        b"[tru]",
        b"[nul]",
        b"[true false]",
        b"[1:2]",
        b"{\"a\"::1}",
        b"[\x01]",
        b"[\"\x01\"]",
        b"[\"\\x\"]",
        b"[\"\\ud800\"]",
        b"[\"\xff\"]",
        b"\xef\xbb\xbf[]",
        b"[]]",
        b"[][]",
        b"{}}",
        b"[\"a\\\"]",
        b"[\"\\u12G4\"]",
        b"[\"\\u00\"]",
        b"[\"\\uD800\"]",
        b"[\"\\uDC00\"]",
        b"[\"\\uDFFF\\u0041\"]",
        b"[\"\\uD83D\\u0041\"]",
        b"[\"\\u0041\\uDE00\"]",
    ];
    for v in invalid {
        assert!(validate_exact(v, &strict(1024)).is_err(), "{v:?}");
        assert_agree(v);
    }
}

#[test]
fn nesting_around_the_limits() {
    for depth in [1usize, 2, 3, 4, 255, 256, 257, 300, 1024, 1025] {
        for (open, inner, close) in [
            ("[", "1", "]"),
            ("{\"k\":", "1", "}"),
            ("[", "", "]"),
            ("{\"k\":", "{}", "}"),
            ("[", "[]", "]"),
        ] {
            let doc = format!("{}{inner}{}", open.repeat(depth), close.repeat(depth));
            // (An empty innermost container counts as one more level.)
            let depth = depth + (inner.len() == 2) as usize;
            for max_depth in [depth - 1, depth, 1024] {
                let exact = validate_exact(doc.as_bytes(), &strict(max_depth));
                assert_eq!(exact.is_ok(), depth <= max_depth);
                let fast = validate_fast(doc.as_bytes(), max_depth);
                assert!(!fast || exact.is_ok());
                if has_token_scan() && depth <= 256 {
                    assert_eq!(fast, exact.is_ok(), "depth {depth} max {max_depth}");
                }
                assert_eq!(validate(doc.as_bytes(), &strict(max_depth)), exact);
            }
        }
    }
}

/// Scalars cut by 64-byte block borders, with every kind of neighbour.
#[test]
fn scalars_across_block_borders() {
    for lead in 0..70 {
        for tok in [
            &b"-12.5e+3"[..],
            b"true",
            b"null",
            b"1234567890123",
            b"1x",
            b"0.5",
        ] {
            for sep in [&b","[..], b" ,", b"\n,", b"]"] {
                let mut doc = b"[".to_vec();
                doc.extend(std::iter::repeat_n(b' ', lead));
                doc.extend_from_slice(tok);
                doc.extend_from_slice(sep);
                if sep != b"]" {
                    doc.extend_from_slice(tok);
                    doc.push(b']');
                }
                assert_agree(&doc);
                if let Err(e) = check_scan(&doc) {
                    panic!("{e}");
                }
            }
        }
    }
}

/// Every file of the JSONTestSuite and of jsonexamples (when present), and
/// single-byte edits of the small jsonexamples files at every offset.
#[test]
fn corpora() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    let mut files = Vec::new();
    for dir in [
        "JSONTestSuite/test_parsing",
        "jsonexamples",
        "jsonexamples/small",
    ] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            if e.path().extension().is_some_and(|x| x == "json") {
                files.push(e.path());
            }
        }
    }
    for f in &files {
        assert_agree(&std::fs::read(f).unwrap());
    }
    for name in [
        "demo.json",
        "smalldemo.json",
        "adversarial.json",
        "flatadversarial.json",
    ] {
        let Ok(doc) = std::fs::read(root.join("jsonexamples/small").join(name)) else {
            continue;
        };
        for i in 0..doc.len() {
            for b in *b"{}[]:,\" x0-.e\\\x01" {
                let mut d = doc.clone();
                d[i] = b;
                assert_agree(&d);
                d.remove(i);
                assert_agree(&d);
            }
        }
    }
}

/// Every byte value between scalar bytes, in every position of a block:
/// each backend's delimiter classification against the oracle's.
#[test]
fn every_byte_as_a_delimiter() {
    for b in 0..=255u8 {
        for lead in [0usize, 30, 31, 62, 63] {
            let mut doc = vec![b' '; lead];
            doc.extend_from_slice(b"[1");
            doc.push(b);
            doc.extend_from_slice(b"1,x");
            doc.push(b);
            doc.extend_from_slice(b"x]");
            if let Err(e) = check_scan(&doc) {
                panic!("byte {b:#04x}: {e}");
            }
            assert_agree(&doc);
        }
    }
}

/// The last, incomplete block ends exactly at the input's end, whatever
/// follows it in memory (the AVX-512 backend loads it masked): every
/// literal, whole or cut (`tru`, `nul`, `fals`), or followed by garbage,
/// at every offset mod 64, as a slice of a longer buffer whose next bytes
/// would change the answer if they were read.
#[test]
fn literals_at_the_end_of_input_at_every_offset() {
    let tails: [&[u8]; 10] = [
        b"true",
        b"null",
        b"false",
        b"tru",
        b"nul",
        b"fals",
        b"truex",
        b"nullnull",
        b"false1",
        b"t",
    ];
    for lead in 0..130 {
        for tail in tails {
            for close in [&b""[..], b"]"] {
                let mut doc = b"[".to_vec();
                doc.extend(std::iter::repeat_n(b' ', lead));
                doc.extend_from_slice(b"1,");
                doc.extend_from_slice(tail);
                doc.extend_from_slice(close);
                let len = doc.len();
                // What follows in memory: a quote, a backslash, a closer.
                let mut buf = doc.clone();
                buf.extend_from_slice(b"\"\\]}e ");
                let input = &buf[..len];
                let exact = validate_exact(&doc, &strict(1024));
                assert_eq!(
                    validate(input, &strict(1024)),
                    exact,
                    "{:?}",
                    String::from_utf8_lossy(&doc)
                );
                let fast = validate_fast(input, 1024);
                assert!(!fast || exact.is_ok());
                if has_token_scan() {
                    assert_eq!(fast, exact.is_ok(), "{:?}", String::from_utf8_lossy(&doc));
                }
                if let Err(e) = check_scan(&doc) {
                    panic!("{e}");
                }
                // Also at the top level, alone after the lead.
                let mut top = vec![b' '; lead];
                top.extend_from_slice(tail);
                assert_agree(&top);
            }
        }
    }
}

/// Every kind of escape at every offset around the first two block
/// boundaries, in short and long strings: stage 1 checks escapes across
/// blocks, and its long-string skip must not step over an escape's hex
/// digits.
#[test]
fn escapes_across_blocks() {
    let escapes: &[&[u8]] = &[
        b"\\n",
        b"\\/",
        b"\\\\",
        b"\\\"",
        b"\\u0041",
        b"\\uD7FF",
        b"\\ud800",
        b"\\uDBFF\\uDC00",
        b"\\uDC00",
        b"\\u12G4",
        b"\\u004",
        b"\\x",
        b"\\u00e9\\u00E9",
        b"\\\\u",
        b"\\u\\u",
    ];
    for esc in escapes {
        for pre in 0..140 {
            for post in [0usize, 3, 70, 200] {
                let mut doc = b"[\"".to_vec();
                doc.extend(std::iter::repeat_n(b'a', pre));
                doc.extend_from_slice(esc);
                doc.extend(std::iter::repeat_n(b'b', post));
                doc.extend_from_slice(b"\"]");
                assert_agree(&doc);
                check_scan(&doc).unwrap();
            }
        }
    }
}

/// An invalid document that opens more containers than the bound of a
/// valid one, after a valid one that left the thread's spare container
/// table larger than that bound: an error, never a panic (found by the
/// `path` fuzz target: the table's growth subtracted past zero).
#[test]
fn spare_container_table_and_unclosed_containers() {
    let opts = strict(10_000);
    for n in 1..40 {
        let valid = format!("{}{}", "[".repeat(n), "]".repeat(n));
        for m in 1..90 {
            assert!(qjson::index::Index::build(valid.as_bytes(), &opts).is_ok());
            let bad = format!("{}\"a\" 1", "[".repeat(m));
            assert!(qjson::index::Index::build(bad.as_bytes(), &opts).is_err());
        }
    }
    let crash = b"\x06[[[[[[[\x91a\"ppp\xc8$[\x91a9\xbb";
    assert!(qjson::index::Index::build(crash, &opts).is_err());
}
