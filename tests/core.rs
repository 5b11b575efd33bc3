//! Core reads and validation, table-driven, plus a differential check
//! against serde_json on generated documents.

use proptest::prelude::*;
use qjson::{AccessError, Doc, Document, ErrorKind, Index, JsonType, Number, Options, Value};
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

fn build(input: &[u8]) -> Index {
    Index::build(input, &strict())
        .unwrap_or_else(|e| panic!("{e} in {:?}", String::from_utf8_lossy(input)))
}

#[test]
fn reads_by_every_path_form() {
    let input = br#" {"model": "gpt-4o", "temperature": 0.7, "n": 3, "big": 123456789012345678901234,
        "stream": false, "none": null, "a.b": {"c[d]": [10, 20, 30]}, "q\"k": 1, "\u0061x": "esc",
        "messages": [{"role": "system", "content": "be brief"},
                     {"role": "user", "content": [{"type": "text", "text": "hi \u00e9\ud83d\ude00"}]}],
        "~/": {"x": [true]}, "": 5} "#;
    let index = build(input);
    let d = Doc::new(input, &index);
    let r = d.root();
    assert_eq!(d.get_str(r, "model").unwrap(), "gpt-4o");
    assert_eq!(d.get_f64(r, "temperature").unwrap(), 0.7);
    assert_eq!(d.get_i64(r, "n").unwrap(), 3);
    assert_eq!(
        d.get_number(r, "big").unwrap(),
        Number::BigInt("123456789012345678901234")
    );
    assert!(!d.get_bool(r, "stream").unwrap());
    assert_eq!(d.get(r, "none").unwrap(), Value::Null);
    assert_eq!(d.get_i64(r, r#"["a.b"]["c[d]"][1]"#).unwrap(), 20);
    assert_eq!(d.get_i64(r, r#"["a.b"]["c[d]"][-1]"#).unwrap(), 30);
    assert_eq!(d.get_i64(r, "/a.b/c[d]/2").unwrap(), 30);
    assert_eq!(d.get_i64(r, r#"["q\"k"]"#).unwrap(), 1);
    assert_eq!(d.get_str(r, "ax").unwrap(), "esc");
    assert_eq!(
        d.get_str(r, "messages[1].content[0].text").unwrap(),
        "hi é😀"
    );
    assert_eq!(d.get_str(r, "/messages/1/role").unwrap(), "user");
    assert!(d.get_bool(r, "/~0~1/x/0").unwrap());
    assert_eq!(d.get_i64(r, "/").unwrap(), 5);
    assert_eq!(d.len(r).unwrap(), 12);
    assert_eq!(d.len(d.find(r, "messages").unwrap()).unwrap(), 2);
    assert_eq!(
        d.raw(d.find(r, "messages[0]").unwrap()),
        br#"{"role": "system", "content": "be brief"}"#
    );
    assert_eq!(d.raw(d.find(r, "temperature").unwrap()), b"0.7");
    assert_eq!(d.raw(d.find(r, "model").unwrap()), b"\"gpt-4o\"");
    assert_eq!(d.raw(r), &input[1..input.len() - 1]);
    let m = d.find(r, "messages[1]").unwrap();
    assert_eq!(d.get_str(m, "content[0].type").unwrap(), "text");
    assert_eq!(d.type_of(d.find(r, "a.b").unwrap_or(r)), JsonType::Object);
    for (path, t) in [
        ("model", JsonType::String),
        ("n", JsonType::Number),
        ("stream", JsonType::Bool),
        ("none", JsonType::Null),
        ("messages", JsonType::Array),
        ("messages[0]", JsonType::Object),
    ] {
        assert_eq!(d.type_of(d.find(r, path).unwrap()), t, "{path}");
    }
    // Missing paths and type mismatches.
    for path in [
        "missing",
        "messages[2]",
        "messages[-3]",
        "model.x",
        "messages.role",
        "n[0]",
        "/messages/x",
        "/messages/-",
        "/messages/01",
    ] {
        assert!(
            matches!(d.find(r, path), Err(AccessError::NotFound { .. })),
            "{path}"
        );
    }
    assert!(matches!(
        d.get_i64(r, "model"),
        Err(AccessError::Type { .. })
    ));
    assert!(matches!(
        d.get_i64(r, "temperature"),
        Err(AccessError::Type { .. })
    ));
    assert!(matches!(d.get_str(r, "n"), Err(AccessError::Type { .. })));
    assert!(matches!(
        d.get_bool(r, "none"),
        Err(AccessError::Type { .. })
    ));
    assert!(matches!(
        d.find(r, "a..b"),
        Err(AccessError::PathSyntax { .. })
    ));
}

#[test]
fn first_duplicate_wins_small_and_wide() {
    let input = br#"{"a": 1, "b": 2, "a": 3}"#;
    let index = build(input);
    let d = Doc::new(input, &index);
    assert_eq!(d.get_i64(d.root(), "b").unwrap(), 2);
    assert_eq!(d.get_i64(d.root(), "a").unwrap(), 1);
    // A wide object goes through the child table.
    let mut s = String::from("{");
    for i in 0..1000 {
        s.push_str(&format!("\"k{}\": {},", i % 700, i));
    }
    s.push_str("\"\\u006b5\": -1}");
    let document = Document::new(s.as_bytes(), build(s.as_bytes()));
    let d = document.doc();
    for i in 0..700 {
        assert_eq!(d.get_i64(d.root(), &format!("k{i}")).unwrap(), i);
    }
    assert!(d.find(d.root(), "k700").is_err());
}

#[test]
fn keys_unique_small_wide_escaped_and_lazy() {
    let wide_unique: String = format!(
        "{{{}}}",
        (0..40)
            .map(|i| format!("\"k{i}\": {i}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let wide_dup = wide_unique.replace("\"k39\"", "\"k3\"");
    let table: &[(&str, bool)] = &[
        ("{}", true),
        (r#"{"a": 1}"#, true),
        (r#"{"a": 1, "b": 2, "c": {"a": 3}}"#, true),
        (r#"{"a": 1, "b": 2, "a": 3}"#, false),
        // Equal only once unescaped.
        (r#"{"a": 1, "\u0061": 2}"#, false),
        (r#"{"\u0061": 1, "b": 2}"#, true),
        (r#"{"a\"": 1, "a\u0022": 2}"#, false),
        (&wide_unique, true),
        (&wide_dup, false),
    ];
    for (text, want) in table {
        for opts in [strict(), lazy()] {
            let index = Index::build(text.as_bytes(), &opts).unwrap();
            let d = Doc::new(text.as_bytes(), &index);
            assert_eq!(d.keys_unique(d.root()).unwrap(), *want, "{text}");
        }
    }
    let index = build(b"[1]");
    let d = Doc::new(b"[1]", &index);
    assert!(d.keys_unique(d.root()).is_err());
}

/// Two-member objects (a chat message) compare their two keys directly.
#[test]
fn keys_unique_of_two_members() {
    let table: &[(&str, bool)] = &[
        (r#"{"role": "user", "content": "hi"}"#, true),
        (r#"{"a": 1, "a": 2}"#, false),
        (r#"{"ab": {"x": [1]}, "ab": []}"#, false),
        (r#"{"ab": {"x": [1]}, "abc": []}"#, true),
        (r#"{"a": 1, "\u0061": 2}"#, false),
        (r#"{"a\"": 1, "a\u0022": 2}"#, false),
        (
            r#"{"a_long_key_0123456789x": 1, "a_long_key_0123456789y": 2}"#,
            true,
        ),
        (
            r#"{"a_long_key_0123456789x": 1, "a_long_key_0123456789x": 2}"#,
            false,
        ),
    ];
    for (text, want) in table {
        for opts in [strict(), lazy()] {
            let index = Index::build(text.as_bytes(), &opts).unwrap();
            let d = Doc::new(text.as_bytes(), &index);
            assert_eq!(d.keys_unique(d.root()).unwrap(), *want, "{text}");
        }
    }
}

/// Small objects (up to 16 members) filter fingerprints through a 256-bit
/// set: every earlier key must still be found when the last one repeats
/// it, among keys of every length up to 20 (so filter bits collide).
#[test]
fn keys_unique_finds_a_repeat_of_any_earlier_key() {
    let keys: Vec<String> = (0..15)
        .map(|i| "k".repeat(i + 1) + &i.to_string())
        .collect();
    let text = |last: &str| {
        let mut members: Vec<String> = keys.iter().map(|k| format!("\"{k}\": 0")).collect();
        members.push(format!("\"{last}\": [1, {{\"a\": 2}}]"));
        format!("{{{}}}", members.join(", "))
    };
    for opts in [strict(), lazy()] {
        let t = text("fresh");
        let index = Index::build(t.as_bytes(), &opts).unwrap();
        let d = Doc::new(t.as_bytes(), &index);
        assert!(d.keys_unique(d.root()).unwrap(), "{t}");
        for k in &keys {
            let t = text(k);
            let index = Index::build(t.as_bytes(), &opts).unwrap();
            let d = Doc::new(t.as_bytes(), &index);
            assert!(!d.keys_unique(d.root()).unwrap(), "{t}");
        }
    }
}

/// Small objects compare keys by a fingerprint that holds the whole key up
/// to 16 bytes: pairs of keys of every length up to 40 that differ in one
/// byte at each position (or only in length, or only once unescaped) must
/// still be told apart, and equal ones found.
#[test]
fn keys_unique_tells_apart_keys_differing_anywhere() {
    fn key(n: usize) -> Vec<u8> {
        (0..n).map(|i| b'a' + (i % 26) as u8).collect()
    }
    let obj = |a: &[u8], b: &[u8]| {
        let mut t = b"{\"x\": 0, \"".to_vec();
        t.extend_from_slice(a);
        t.extend_from_slice(b"\": 1, \"");
        t.extend_from_slice(b);
        t.extend_from_slice(b"\": 2}");
        t
    };
    let check = |text: &[u8], want: bool| {
        for opts in [strict(), lazy()] {
            let index = Index::build(text, &opts).unwrap();
            let d = Doc::new(text, &index);
            assert_eq!(
                d.keys_unique(d.root()).unwrap(),
                want,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    };
    for n in 0..=40 {
        let a = key(n);
        check(&obj(&a, &a), false);
        check(&obj(&a, &key(n + 1)), true);
        for i in 0..n {
            let mut b = a.clone();
            b[i] = b'Z';
            check(&obj(&a, &b), true);
            // The same key with byte `i` escaped: equal once unescaped.
            let mut esc = a[..i].to_vec();
            esc.extend_from_slice(format!("\\u{:04x}", a[i]).as_bytes());
            esc.extend_from_slice(&a[i + 1..]);
            check(&obj(&a, &esc), false);
            // A backslash escape that changes the key.
            let mut other = a[..i].to_vec();
            other.extend_from_slice(b"\\n");
            other.extend_from_slice(&a[i + 1..]);
            check(&obj(&a, &other), true);
        }
    }
}

#[test]
fn long_arrays_read_in_order_and_backwards() {
    let n = 5000;
    let s = format!(
        "[{}]",
        (0..n)
            .map(|i| format!("{{\"v\": {i}, \"s\": [\"{i}\"]}}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let document = Document::new(s.as_bytes(), build(s.as_bytes()));
    let d = document.doc();
    for i in (0..n).chain((0..n).rev()) {
        assert_eq!(d.get_i64(d.root(), &format!("[{i}].v")).unwrap(), i as i64);
    }
    let items: Vec<_> = d.array_items(d.root()).unwrap().collect();
    assert_eq!(items.len(), n);
    assert_eq!(d.get_str(items[42], "s[0]").unwrap(), "42");
}

#[test]
fn top_level_scalars_and_empties() {
    for (input, want) in [
        (&b" 12 "[..], Value::Number(Number::Int(12))),
        (b"\"x\"", Value::String("x".into())),
        (b"true", Value::Bool(true)),
        (b"null\n", Value::Null),
        (b"-0", Value::Number(Number::Int(0))),
        (b"1.5e3", Value::Number(Number::Float(1500.0))),
    ] {
        let index = build(input);
        let d = Doc::new(input, &index);
        assert_eq!(d.value(d.root()).unwrap(), want);
    }
    for input in [&b"[]"[..], b"{}", b" [ ] ", b"{ }", b"[[],{}]"] {
        let index = build(input);
        let d = Doc::new(input, &index);
        assert_eq!(d.raw(d.root()), input.trim_ascii());
    }
    let input = b"[[],{},[[]]]";
    let index = build(input);
    let d = Doc::new(input, &index);
    assert_eq!(d.len(d.root()).unwrap(), 3);
    assert_eq!(d.len(d.find(d.root(), "[2]").unwrap()).unwrap(), 1);
    assert_eq!(d.raw(d.find(d.root(), "[2][0]").unwrap()), b"[]");
}

#[test]
fn rejects_with_kind_and_offset() {
    use ErrorKind::*;
    let cases: &[(&[u8], ErrorKind, usize)] = &[
        (b"", Empty, 0),
        (b"   ", Empty, 3),
        (b"[", UnexpectedEnd, 1),
        (b"[1,", UnexpectedEnd, 3),
        (b"[1,]", ExpectedValue, 3),
        (b"[,1]", ExpectedValue, 1),
        (b"[1 2]", ExpectedArrayCommaOrEnd, 3),
        (b"{\"a\" 1}", ExpectedColon, 5),
        (b"{\"a\":1 \"b\":2}", ExpectedObjectCommaOrEnd, 7),
        (b"{1:2}", ExpectedKey, 1),
        (b"{\"a\":1,}", ExpectedKey, 7),
        (b"[1]x", TrailingContent, 3),
        (b"[1] [2]", TrailingContent, 4),
        (b"1 2", TrailingContent, 2),
        (b"[01]", InvalidNumber, 2),
        (b"[tru]", InvalidLiteral, 1),
        (b"[\"a\\x\"]", InvalidEscape, 3),
        (b"[\"\\ud800\"]", LoneSurrogate, 2),
        (b"[\"a\x01\"]", ControlCharacter, 3),
        (b"[\"\xff\"]", InvalidUtf8, 2),
        (b"[\"abc", UnterminatedString, 1),
        (b"[\\]", ExpectedValue, 1),
        // The first error wins over a later unterminated string or stray
        // backslash (stage 1 finds those first), at json's offsets.
        (b"{\"d: \"qwe\"}", ExpectedColon, 6),
        (b"[x]   \"", InvalidLiteral, 1),
        (b"[\"\\x\"] \\", InvalidEscape, 2),
        (b"[1 \\", ExpectedArrayCommaOrEnd, 3),
        (b"1 \\", TrailingContent, 2),
        (b"[1] \"a", TrailingContent, 4),
        (b"\"a\nb", ControlCharacter, 2),
        (b"\"\\u0000", InvalidUnicodeEscape, 2),
        (b"\"ab\\", UnterminatedString, 0),
        // json's offsets for numbers, literals and \u escapes.
        (b"[1.]", InvalidNumber, 2),
        (b"[-]", InvalidNumber, 1),
        (b"[truex]", ExpectedArrayCommaOrEnd, 5),
        (b"[\"\\u00A\"]", InvalidUnicodeEscape, 3),
        (b"[\x00]\x00", Utf16Input, 0),
        (b"\xff\xfe\x00\x00[\x00\x00\x00]\x00\x00\x00", Utf32Input, 0),
        (b"[\"a\" x]", ExpectedArrayCommaOrEnd, 5),
        (b"]", ExpectedValue, 0),
        (b"[}", ExpectedValue, 1),
        (b"{]", ExpectedKey, 1),
        (b"\xef\xbb\xbf[]", InvalidLiteral, 0),
    ];
    for &(input, kind, offset) in cases {
        let e = Index::build(input, &strict()).expect_err(&String::from_utf8_lossy(input));
        assert_eq!(qjson::index::validate(input, &strict()), Err(e));
        assert_eq!(
            (e.kind, e.offset),
            (kind, offset),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// `index::validate` (no container table) answers exactly as a strict or
/// lazy `Index::build`: every JSONTestSuite file, every jsonexamples file,
/// and each with its last byte cut off.
#[test]
fn validate_agrees_with_build() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    let mut files = Vec::new();
    for dir in [
        "JSONTestSuite/test_parsing",
        "jsonexamples",
        "jsonexamples/small",
    ] {
        let Ok(entries) = std::fs::read_dir(data.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "json") {
                files.push(e.path());
            }
        }
    }
    for path in files {
        let input = std::fs::read(&path).unwrap();
        for input in [&input[..], &input[..input.len().saturating_sub(1)]] {
            for opts in [
                strict(),
                lazy(),
                Options {
                    max_depth: 3,
                    ..strict()
                },
            ] {
                assert_eq!(
                    qjson::index::validate(input, &opts),
                    Index::build(input, &opts).map(drop),
                    "{}",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn depth_limit_is_an_error_not_a_crash() {
    let deep = "[".repeat(100_000);
    let e = Index::build(deep.as_bytes(), &strict()).unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::DepthExceeded, 1024));
    assert_eq!(qjson::index::validate(deep.as_bytes(), &strict()), Err(e));
    let ok = format!("{}{}", "[".repeat(1024), "]".repeat(1024));
    build(ok.as_bytes());
    let e = Index::build(
        ok.as_bytes(),
        &Options {
            max_depth: 10,
            ..strict()
        },
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::DepthExceeded);
}

#[test]
fn lazy_mode_defers_value_errors() {
    let input = b"[1, 01, \"a\\x\", tru, \"\xff\"]";
    assert!(Index::build(input, &strict()).is_err());
    let index = Index::build(input, &lazy()).unwrap();
    let d = Doc::new(input, &index);
    let r = d.root();
    assert_eq!(d.get_i64(r, "[0]").unwrap(), 1);
    for (path, kind) in [
        ("[1]", ErrorKind::InvalidNumber),
        ("[2]", ErrorKind::InvalidEscape),
        ("[3]", ErrorKind::InvalidLiteral),
        ("[4]", ErrorKind::InvalidUtf8),
    ] {
        match d.get(r, path) {
            Err(AccessError::Decode(e)) => assert_eq!(e.kind, kind, "{path}"),
            other => panic!("{path}: {other:?}"),
        }
    }
    // Structure errors are still caught.
    assert!(Index::build(b"[1, 2", &lazy()).is_err());
    assert!(Index::build(b"[1,,2]", &lazy()).is_err());
    assert!(Index::build(b"{\"a\" 1}", &lazy()).is_err());
}

/// Every value of `v` read through the doc at `c` equals serde_json's.
fn check_same(d: &Doc<'_>, c: qjson::Cursor, v: &J) {
    match (d.value(c).unwrap(), v) {
        (Value::Null, J::Null) => {}
        (Value::Bool(a), J::Bool(b)) => assert_eq!(a, *b),
        (Value::String(a), J::String(b)) => assert_eq!(&*a, b),
        (Value::Number(Number::Int(a)), J::Number(b)) => assert_eq!(Some(a), b.as_i64()),
        (Value::Number(Number::BigInt(a)), J::Number(b)) => assert_eq!(a, b.to_string()),
        (Value::Number(Number::Float(a)), J::Number(b)) => assert_eq!(Some(a), b.as_f64()),
        (Value::Array(a), J::Array(b)) => {
            assert_eq!(d.len(a).unwrap(), b.len());
            for (i, (ca, vb)) in d.array_items(a).unwrap().zip(b).enumerate() {
                assert_eq!(d.element(a, i as i64), Some(ca));
                check_same(d, ca, vb);
            }
        }
        (Value::Object(a), J::Object(b)) => {
            assert_eq!(d.len(a).unwrap(), b.len());
            for ((k, ca), (kb, vb)) in d.object_items(a).unwrap().zip(b) {
                assert_eq!(d.key_str(k).unwrap(), kb.as_str());
                assert_eq!(d.field(a, kb.as_bytes()), Some(ca));
                check_same(d, ca, vb);
            }
        }
        (a, b) => panic!("{a:?} vs {b}"),
    }
}

fn json_value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        any::<i64>().prop_map(J::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(J::from),
        ".{0,12}".prop_map(J::String),
        "[a-z\"\\\\/\u{0}-\u{1f}é😀]{0,80}".prop_map(J::String),
    ];
    leaf.prop_recursive(5, 64, 10, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..40).prop_map(J::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..40)
                .prop_map(|m| J::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn agrees_with_serde_json(v in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { serde_json::to_string(&v).unwrap() };
        let index = build(text.as_bytes());
        let d = Doc::new(text.as_bytes(), &index);
        check_same(&d, d.root(), &v);
        prop_assert_eq!(d.raw(d.root()), text.as_bytes());
    }

    #[test]
    fn strict_accepts_exactly_what_serde_json_accepts(bytes in prop::collection::vec(prop_oneof![
        Just(b'['), Just(b']'), Just(b'{'), Just(b'}'), Just(b','), Just(b':'), Just(b'"'),
        Just(b'\\'), Just(b'1'), Just(b'-'), Just(b'.'), Just(b'e'), Just(b' '), Just(b'a'),
        Just(b'u'), Just(b'0'), Just(b't'), Just(b'n'), Just(0xc3), Just(0xa9), Just(0x01)], 0..24)) {
        let ours = Index::build(&bytes, &strict()).is_ok();
        let theirs = match serde_json::from_slice::<J>(&bytes) {
            // serde_json rejects numbers beyond f64 (`1e1000`); qjson
            // accepts them as infinities, like Python's json.
            Err(e) if e.to_string().contains("number out of range") => true,
            r => r.is_ok(),
        };
        prop_assert_eq!(ours, theirs, "{:?}", String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn path_syntax_errors_win_over_missing_keys() {
    let input = br#"{"a": {"b": [1, 2]}}"#;
    let index = build(input);
    let d = Doc::new(input, &index);
    let r = d.root();
    for path in [
        "a..b",
        "missing..b",
        "missing[01]",
        "missing.x[",
        "/x/~2",
        "a.b[0]x",
    ] {
        assert!(
            matches!(d.find(r, path), Err(AccessError::PathSyntax { .. })),
            "{path}"
        );
    }
    assert_eq!(d.find(r, "a.x.y"), Err(AccessError::NotFound { at: 2 }));
    assert_eq!(d.find(r, "a.b[2]"), Err(AccessError::NotFound { at: 3 }));
    assert_eq!(d.find(r, "/a/b/5"), Err(AccessError::NotFound { at: 5 }));
    assert_eq!(d.get_i64(r, "a.b[-1]").unwrap(), 2);
    assert_eq!(d.get_i64(r, "[\"a\"][\"b\"][0]").unwrap(), 1);
}

#[test]
fn wide_objects_miss_fast_and_find_escaped_keys() {
    let mut s = String::from("{");
    for i in 0..100 {
        s.push_str(&format!("\"k\\u00e9{i}\": {i}, "));
    }
    s.push_str("\"last\": 0}");
    for opts in [strict(), lazy()] {
        let document = Document::parse(s.as_bytes(), &opts).unwrap();
        let d = document.doc();
        for i in 0..100 {
            assert_eq!(d.get_i64(d.root(), &format!("ké{i}")).unwrap(), i);
        }
        assert!(matches!(
            d.find(d.root(), "k\\u00e91"),
            Err(AccessError::NotFound { .. })
        ));
        assert!(matches!(
            d.find(d.root(), "nope"),
            Err(AccessError::NotFound { .. })
        ));
    }
    // Lazy: an undecodable key is skipped by the key table but the others
    // are still found.
    let mut s = String::from("{\"bad\\x\": 1, ");
    for i in 0..100 {
        s.push_str(&format!("\"k{i}\": {i}, "));
    }
    s.push_str("\"last\": 0}");
    let document = Document::parse(s.as_bytes(), &lazy()).unwrap();
    let d = document.doc();
    assert_eq!(d.get_i64(d.root(), "k42").unwrap(), 42);
    assert!(d.find(d.root(), "bad\\x").is_err());
}

#[test]
fn numbers_like_python_json() {
    let input = b"[1e400, -1e400, 1e-400, -0.0, -0, 9223372036854775807, -9223372036854775808, 9223372036854775808]";
    let index = build(input);
    let d = Doc::new(input, &index);
    let r = d.root();
    assert_eq!(d.get_f64(r, "[0]").unwrap(), f64::INFINITY);
    assert_eq!(d.get_f64(r, "[1]").unwrap(), f64::NEG_INFINITY);
    assert_eq!(d.get_f64(r, "[2]").unwrap(), 0.0);
    assert!(d.get_f64(r, "[3]").unwrap().is_sign_negative());
    assert_eq!(d.get_number(r, "[4]").unwrap(), Number::Int(0));
    assert_eq!(d.get_i64(r, "[5]").unwrap(), i64::MAX);
    assert_eq!(d.get_i64(r, "[6]").unwrap(), i64::MIN);
    assert_eq!(
        d.get_number(r, "[7]").unwrap(),
        Number::BigInt("9223372036854775808")
    );
}

#[test]
fn lazy_typed_getters_check_the_type_first() {
    let input = b"[01, tru, \"\\x\", nul]";
    let index = Index::build(input, &lazy()).unwrap();
    let d = Doc::new(input, &index);
    let r = d.root();
    assert!(matches!(
        d.get_bool(r, "[0]"),
        Err(AccessError::Type { .. })
    ));
    assert!(matches!(
        d.get_bool(r, "[2]"),
        Err(AccessError::Type { .. })
    ));
    assert!(matches!(
        d.get_bool(r, "[3]"),
        Err(AccessError::Type { .. })
    ));
    assert!(matches!(d.get_i64(r, "[1]"), Err(AccessError::Type { .. })));
    match d.get_bool(r, "[1]") {
        Err(AccessError::Decode(e)) => {
            assert_eq!((e.kind, e.offset), (ErrorKind::InvalidLiteral, 5))
        }
        other => panic!("{other:?}"),
    }
    match d.get_i64(r, "[0]") {
        Err(AccessError::Decode(e)) => {
            assert_eq!((e.kind, e.offset), (ErrorKind::InvalidNumber, 2))
        }
        other => panic!("{other:?}"),
    }
    match d.get_str(r, "[2]") {
        Err(AccessError::Decode(e)) => {
            assert_eq!((e.kind, e.offset), (ErrorKind::InvalidEscape, 11))
        }
        other => panic!("{other:?}"),
    }
}

/// `Index::has_escapes` says whether any string holds a backslash escape
/// (and `Index::has_non_ascii` whether the input holds a byte >= 0x80),
/// the same from the token walk (strict), the exact walk (lazy) and on
/// every backend this CPU runs, at escapes before, inside and after a
/// 64-byte block. The backend is chosen once per process, so the test runs
/// itself again in a child process per other backend (`QJSON_BACKEND`).
#[test]
fn has_escapes_flag() {
    let pad = "x".repeat(70);
    let cases: Vec<(String, bool)> = vec![
        (r#"{"a": "b", "c": [1, 2, {"d": null}]}"#.into(), false),
        (r#"{"a": "b\nc"}"#.into(), true),
        (r#"{"a\"": 1}"#.into(), true),
        (r#"["\u00e9"]"#.into(), true),
        (r#"["\\"]"#.into(), true),
        (format!(r#"["{pad}", "{pad}"]"#), false),
        (format!(r#"["{pad}", "{pad}\/"]"#), true),
        (format!(r#"["{pad}\t{pad}"]"#), true),
        ("\"\u{e9}\"".into(), false),
        (format!("[\"{pad}\", \"{pad}\u{e9}\"]"), false),
        ("12".into(), false),
    ];
    use qjson::scan::{active_backend, Backend};
    const CHILD: &str = "QJSON_TEST_HAS_ESCAPES_BACKEND";
    let backend = active_backend();
    if let Ok(want) = std::env::var(CHILD) {
        assert_eq!(backend.name(), want, "QJSON_BACKEND was not followed");
    }
    for (text, want) in &cases {
        for opts in [strict(), lazy()] {
            let index = Index::build(text.as_bytes(), &opts).unwrap();
            let tag = format!("{text} lazy={} on {}", opts.lazy, backend.name());
            assert_eq!(index.has_escapes(), *want, "{tag}");
            assert_eq!(index.has_non_ascii(), !text.is_ascii(), "{tag}");
            let document = Document::parse(text.as_bytes(), &opts).unwrap();
            assert_eq!(document.doc().index().has_escapes(), *want, "{tag}");
        }
    }
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let others = Backend::available().into_iter().filter(|&b| b != backend);
    for other in others {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "has_escapes_flag", "--test-threads=1"])
            .env("QJSON_BACKEND", other.name())
            .env(CHILD, other.name())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "on {}: {stdout}{}",
            other.name(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A strict index read over other bytes than it was built from (a logic
/// error, never memory-unsafe): a string body that is not valid UTF-8 is
/// an error, not a `str` holding it (the decoder checks UTF-8 even in a
/// strict document).
#[test]
fn strict_index_over_other_bytes_never_yields_invalid_utf8() {
    let built = b"[\"\xc3\xa9\xc3\xa9\"]";
    let index = Index::build(built, &Options::default()).unwrap();
    let other = b"[\"\xff\xfe\x80\xc3\"]";
    let doc = Doc::new(other, &index);
    let c = doc.find(doc.root(), "[0]").unwrap();
    match doc.value(c) {
        Ok(Value::String(s)) => {
            panic!("a str from invalid UTF-8: {:?}", s.as_bytes())
        }
        Ok(v) => panic!("unexpected value {v:?}"),
        Err(_) => {}
    }
}
