//! Wildcard reads (`find_all`) and compiled paths, table-driven, plus a
//! differential check against a reference walker over serde_json values on
//! generated documents and paths.

use proptest::prelude::*;
use qjson::path::Compiled;
use qjson::{AccessError, Doc, Index, Options};
use serde_json::Value as J;

fn build(input: &[u8], lazy: bool) -> Index {
    let opts = Options {
        lazy,
        ..Options::default()
    };
    Index::build(input, &opts)
        .unwrap_or_else(|e| panic!("{e} in {:?}", String::from_utf8_lossy(input)))
}

/// The raw texts `path` matches in `input`, by `find_all` and by
/// `find_all_compiled` (which must agree), from the root.
fn all_raw(input: &str, path: &str) -> Result<Vec<String>, AccessError> {
    let index = build(input.as_bytes(), false);
    let d = Doc::new(input.as_bytes(), &index);
    let texts = |cs: Vec<qjson::Cursor>| {
        cs.into_iter()
            .map(|c| String::from_utf8(d.raw(c).to_vec()).unwrap())
            .collect::<Vec<_>>()
    };
    let got = d.find_all(d.root(), path).map(texts);
    let compiled = Compiled::new(path).and_then(|p| d.find_all_compiled(d.root(), &p));
    assert_eq!(compiled.map(texts), got, "{path:?}: compiled differs");
    got
}

#[test]
fn matches_in_document_order() {
    let doc = r#"{"messages": [{"role": "system", "content": "a"},
                               {"role": "user", "content": [1, 2]},
                               {"role": "user"},
                               "scalar",
                               {"content": null}],
                  "tools": [{"function": {"name": "f", "parameters": {}}},
                            {"function": {"name": "g", "x": [true, false]}},
                            {"function": 3}],
                  "dup": {"k": 1, "j": 2, "k": 3},
                  "*": "star", "empty": {"a": [], "o": {}},
                  "nested": [[1, 2], [], [3, [4]], {"0": 5}]}"#;
    let cases: &[(&str, &[&str])] = &[
        ("messages[*].content", &[r#""a""#, "[1, 2]", "null"]),
        (
            "messages[*].role",
            &[r#""system""#, r#""user""#, r#""user""#],
        ),
        ("messages[*].content[*]", &["1", "2"]),
        ("messages[*].content[-1]", &["2"]),
        ("messages[*].content[0]", &["1"]),
        (
            "tools[*].function.*",
            &[r#""f""#, "{}", r#""g""#, "[true, false]"],
        ),
        ("tools[*].function.x[*]", &["true", "false"]),
        ("tools[*].function.name", &[r#""f""#, r#""g""#]),
        // Duplicate keys: distinct keys, the first value of each.
        ("dup.*", &["1", "2"]),
        ("dup.k", &["1"]),
        // The literal key `*`.
        (r#"["*"]"#, &[r#""star""#]),
        ("empty.a[*]", &[]),
        ("empty.o.*", &[]),
        ("empty.*", &["[]", "{}"]),
        ("empty.*[*]", &[]),
        ("nested[*][*]", &["1", "2", "3", "[4]"]),
        ("nested[*][-1]", &["2", "[4]"]),
        ("nested[*][*][*]", &["4"]),
        // `[*]` is for arrays and `.*` for objects only.
        ("nested[*].*", &["5"]),
        ("dup[*]", &[]),
        ("messages.*", &[]),
        ("*.k", &["1"]),
        ("*[3]", &[r#""scalar""#, r#"{"0": 5}"#]),
        // No wildcard: the value or nothing.
        ("dup.j", &["2"]),
        ("missing", &[]),
        ("messages[9]", &[]),
        ("/tools/0/function/name", &[r#""f""#]),
        ("/nested/9", &[]),
        // Missing branches, wrong types.
        ("messages[*].missing", &[]),
        ("messages[*].content.x", &[]),
        ("messages[*][0]", &[]),
        ("missing[*]", &[]),
    ];
    for &(path, want) in cases {
        let got = all_raw(doc, path).unwrap_or_else(|e| panic!("{path:?}: {e:?}"));
        assert_eq!(got, want, "{path:?}");
    }
}

#[test]
fn wildcards_over_a_root_array_and_scalars() {
    let doc = r#"[{"user": {"login": "a"}}, {"user": null}, {"user": {"login": "b"}}, 7]"#;
    assert_eq!(
        all_raw(doc, "[*].user.login").unwrap(),
        [r#""a""#, r#""b""#]
    );
    assert_eq!(all_raw(doc, "[*]").unwrap().len(), 4);
    assert_eq!(all_raw(doc, "").unwrap(), [doc]);
    assert_eq!(all_raw(doc, "*").unwrap(), Vec::<String>::new());
    assert_eq!(all_raw("5", "[*]").unwrap(), Vec::<String>::new());
    assert_eq!(all_raw("[]", "[*]").unwrap(), Vec::<String>::new());
    assert_eq!(all_raw("{}", "*").unwrap(), Vec::<String>::new());
    assert_eq!(all_raw(r#"{"a":1,"b":2}"#, "*").unwrap(), ["1", "2"]);
}

#[test]
fn wide_containers_after_a_wildcard() {
    // Objects above the child-table threshold, read twice (a second call
    // would build tables through `find`), and long arrays from the end.
    let obj = |i: usize| {
        let mut s = String::from("{");
        for k in 0..40 {
            s += &format!(r#""k{k}": {},"#, i * 100 + k);
        }
        s + r#""last": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26]}"#
    };
    let doc = format!("[{}]", (0..30).map(obj).collect::<Vec<_>>().join(","));
    for _ in 0..3 {
        let got = all_raw(&doc, "[*].k39").unwrap();
        let want: Vec<String> = (0..30).map(|i| (i * 100 + 39).to_string()).collect();
        assert_eq!(got, want);
        assert_eq!(all_raw(&doc, "[*].last[-2]").unwrap(), vec!["25"; 30]);
        assert_eq!(all_raw(&doc, "[*].last[26]").unwrap(), vec!["26"; 30]);
        assert_eq!(all_raw(&doc, "[*].last[27]").unwrap().len(), 0);
        assert_eq!(all_raw(&doc, "[29].*").unwrap().len(), 41);
    }
}

#[test]
fn escaped_and_duplicate_keys_under_wildcards() {
    let doc = r#"[{"\u0061": 1, "a": 2, "b": 3}, {"b": 4, "a\u0062": 5, "ab": 6}]"#;
    assert_eq!(all_raw(doc, "[*].a").unwrap(), ["1"]);
    assert_eq!(all_raw(doc, "[*].*").unwrap(), ["1", "3", "4", "5"]);
    assert_eq!(all_raw(doc, "[*].ab").unwrap(), ["5"]);
    // Lazy documents decode keys when `.*` compares them; an undecodable one
    // is an error, as for every read of that object's keys.
    let bad = br#"{"o": {"a\x": 1}}"#;
    let index = build(bad, true);
    let d = Doc::new(bad, &index);
    assert!(matches!(
        d.find_all(d.root(), "o.*"),
        Err(AccessError::Decode(_))
    ));
    assert_eq!(d.find_all(d.root(), "*").unwrap().len(), 1);
}

/// The raw texts `path` matches in `input` (strict or lazy), by
/// `find_all`, from the root.
fn all_raw_lazy(input: &str, path: &str, lazy: bool) -> Vec<String> {
    let index = build(input.as_bytes(), lazy);
    let d = Doc::new(input.as_bytes(), &index);
    d.find_all(d.root(), path)
        .unwrap()
        .into_iter()
        .map(|c| String::from_utf8(d.raw(c).to_vec()).unwrap())
        .collect()
}

#[test]
fn medium_keys_under_wildcards() {
    // Keys of 8 to 15 plain bytes after a wildcard are tested by their two
    // words from the opening quote; the first occurrence wins, escaped
    // bodies that decode to the key match, near misses (a byte more or
    // less, one byte different in either word) do not.
    let doc = r#"[
        {"id": 1, "screen_name": "a", "screen_name": "dup"},
        {"screen\u005fname": "esc", "screen_name": "plain"},
        {"screen_names": 0, "screen_nam": 0, "Screen_name": 0, "screen_namE": 0,
         "screen\u005fnamex": 0, "screen_name": "b"},
        {"user": {"screen_name": "c"}},
        {"screen_name": {"screen_name": "inner"}},
        ["screen_name", "x"],
        "screen_name",
        null,
        {},
        {"screen_name\n": 1, "screen_name ": 2, "\u0073creen_name": "first-esc"},
        {"eightchr": 8, "fifteen_chars_k": 15, "sixteen_chars_ke": 16},
        {"k": [{"created_at": "deep"}], "created_at": "top"},
        {"screen_name": "last"}]"#;
    for lazy in [false, true] {
        let all = |p: &str| all_raw_lazy(doc, p, lazy);
        assert_eq!(
            all("[*].screen_name"),
            [
                r#""a""#,
                r#""esc""#,
                r#""b""#,
                r#"{"screen_name": "inner"}"#,
                r#""first-esc""#,
                r#""last""#
            ],
            "lazy {lazy}"
        );
        assert_eq!(all("[*].user.screen_name"), [r#""c""#]);
        assert_eq!(all("[*].screen_name.screen_name"), [r#""inner""#]);
        assert_eq!(all("[*].eightchr"), ["8"]);
        assert_eq!(all("[*].fifteen_chars_k"), ["15"]);
        assert_eq!(all("[*].sixteen_chars_ke"), ["16"]);
        assert_eq!(all("[*].created_at"), [r#""top""#]);
        assert_eq!(all("[*].screen_namex"), [r#"0"#]);
        assert_eq!(all("[*].Screen_name"), ["0"]);
        assert_eq!(all("[*].screen_namE"), ["0"]);
        assert_eq!(all("[*].screen_na_e"), Vec::<String>::new());
        assert_eq!(all("[*].screen_name_"), Vec::<String>::new());
    }
    // Non-ASCII keys of 8 to 15 bytes take the general test.
    let doc = r#"[{"clé_longue": 1, "cle_longue": 2}, {"cle_longue": 3, "clé_longue": 4}]"#;
    assert_eq!(all_raw(doc, "[*].clé_longue").unwrap(), ["1", "4"]);
    assert_eq!(all_raw(doc, "[*].cle_longue").unwrap(), ["2", "3"]);
    // An object that ends in the input's last bytes (the walk's checked
    // reads), and a key whose words run past the end of the input.
    for doc in [
        r#"[{"screen_name":1}]"#,
        r#"[{"a":0,"screen_name":7}]"#,
        r#"[{"screen_nam":0}]"#,
        r#"[{"screen_name_":0}]"#,
    ] {
        let want: &[&str] = match doc {
            r#"[{"screen_name":1}]"# => &["1"],
            r#"[{"a":0,"screen_name":7}]"# => &["7"],
            _ => &[],
        };
        for lazy in [false, true] {
            assert_eq!(all_raw_lazy(doc, "[*].screen_name", lazy), want, "{doc}");
        }
    }
    // Each answer agrees with the single read of the same element.
    let index = build(
        br#"[{"a":1,"screen_name":2},{"screen\u005fname":3},{"x":{}}]"#,
        false,
    );
    let input = br#"[{"a":1,"screen_name":2},{"screen\u005fname":3},{"x":{}}]"#;
    let d = Doc::new(input, &index);
    let got = d.find_all(d.root(), "[*].screen_name").unwrap();
    let one: Vec<_> = (0..3)
        .filter_map(|i| d.find(d.root(), &format!("[{i}].screen_name")).ok())
        .collect();
    assert_eq!(got, one);
}

#[test]
fn malformed_paths_and_single_reads() {
    let doc = r#"{"a": [1, 2], "*": 3}"#;
    for (path, at) in [
        ("a[*", 3),
        ("[**]", 2),
        ("a.*b", 3),
        ("**", 1),
        ("a..b", 2),
        ("missing.*x", 9),
    ] {
        match all_raw(doc, path) {
            Err(AccessError::PathSyntax { at: got, .. }) => assert_eq!(got, at, "{path:?}"),
            other => panic!("{path:?}: {other:?}"),
        }
    }
    let index = build(doc.as_bytes(), false);
    let d = Doc::new(doc.as_bytes(), &index);
    let r = d.root();
    // Reads of one value reject wildcards, even past a missing key.
    for (path, at) in [
        ("a[*]", 1),
        ("*", 0),
        ("missing[*]", 7),
        ("missing.x.*", 10),
    ] {
        assert!(
            matches!(d.find(r, path), Err(AccessError::PathSyntax { at: a, .. }) if a == at),
            "{path:?}: {:?}",
            d.find(r, path)
        );
        let c = Compiled::new(path).unwrap();
        assert!(
            matches!(d.find_compiled(r, &c), Err(AccessError::PathSyntax { .. })),
            "{path:?}"
        );
    }
    assert_eq!(d.get_i64(r, r#"["*"]"#).unwrap(), 3);
    let c = Compiled::new("a[-1]").unwrap();
    assert_eq!(
        d.raw(d.find_compiled(r, &c).unwrap()),
        d.raw(d.find(r, "a[-1]").unwrap())
    );
    let c = Compiled::new("a[5]").unwrap();
    assert_eq!(d.find_compiled(r, &c), Err(AccessError::NotFound { at: 1 }));
    assert_eq!(d.find_compiled(r, &c), d.find(r, "a[5]"));
}

#[test]
fn each_match_stops_when_asked() {
    let doc = br#"[1, 2, 3, 4]"#;
    let index = build(doc, false);
    let d = Doc::new(doc, &index);
    let c = Compiled::new("[*]").unwrap();
    let mut seen = 0;
    d.each_match(d.root(), c.segments(), |_| {
        seen += 1;
        seen < 2
    })
    .unwrap();
    assert_eq!(seen, 2);
}

#[test]
fn long_wildcard_paths_do_not_recurse() {
    let depth = 500;
    let doc = "[".repeat(depth) + &"]".repeat(depth);
    let path = "[*]".repeat(100_000);
    assert_eq!(all_raw(&doc, &path).unwrap().len(), 0);
    let path = "[*]".repeat(depth - 1);
    assert_eq!(all_raw(&doc, &path).unwrap(), ["[]"]);
}

// ---------------------------------------------------------------- differential

/// A path segment for the reference walker.
#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(i64),
    AnyIndex,
    AnyKey,
}

fn path_text(segs: &[Seg]) -> String {
    let mut s = String::new();
    for seg in segs {
        match seg {
            Seg::Key(k) => s += &format!("[{}]", serde_json::to_string(k).unwrap()),
            Seg::Index(i) => s += &format!("[{i}]"),
            Seg::AnyIndex => s += "[*]",
            Seg::AnyKey if s.is_empty() => s += "*",
            Seg::AnyKey => s += ".*",
        }
    }
    s
}

/// Every value `segs` matches in `v`, in order (serde_json's maps iterate
/// in key order, which is the order they serialize in).
fn reference<'v>(v: &'v J, segs: &[Seg], out: &mut Vec<&'v J>) {
    let Some((seg, rest)) = segs.split_first() else {
        out.push(v);
        return;
    };
    match (seg, v) {
        (Seg::Key(k), J::Object(m)) => {
            if let Some(c) = m.get(k) {
                reference(c, rest, out);
            }
        }
        (Seg::Index(i), J::Array(a)) => {
            let i = if *i < 0 { *i + a.len() as i64 } else { *i };
            if i >= 0 && (i as usize) < a.len() {
                reference(&a[i as usize], rest, out);
            }
        }
        (Seg::AnyIndex, J::Array(a)) => a.iter().for_each(|c| reference(c, rest, out)),
        (Seg::AnyKey, J::Object(m)) => m.values().for_each(|c| reference(c, rest, out)),
        _ => {}
    }
}

fn json_value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        any::<i32>().prop_map(J::from),
        "[a-c*\"é]{0,4}".prop_map(J::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(J::Array),
            prop::collection::btree_map("[a-c*]{0,2}", inner, 0..6)
                .prop_map(|m| J::Object(m.into_iter().collect())),
        ]
    })
}

fn seg() -> impl Strategy<Value = Seg> {
    prop_oneof![
        "[a-c*]{0,2}".prop_map(Seg::Key),
        (-3i64..4).prop_map(Seg::Index),
        Just(Seg::AnyIndex),
        Just(Seg::AnyKey),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]
    #[test]
    fn agrees_with_a_reference_walker(
        v in json_value(),
        paths in prop::collection::vec(prop::collection::vec(seg(), 0..5), 1..8),
        pretty in any::<bool>(),
    ) {
        let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { serde_json::to_string(&v).unwrap() };
        for segs in &paths {
            let path = path_text(segs);
            let mut want = Vec::new();
            reference(&v, segs, &mut want);
            let got = all_raw(&text, &path).unwrap();
            let got: Vec<J> = got.iter().map(|t| serde_json::from_str(t).unwrap()).collect();
            let want: Vec<J> = want.into_iter().cloned().collect();
            prop_assert_eq!(got, want, "{}", path);
        }
    }
}

// ---------------------------------------------------------------- C ABI

#[test]
fn c_abi_get_all_and_compiled_paths() {
    use qjson::capi::{self, CCursor, Handle};
    use std::ptr::{null, null_mut};
    let input = br#"{"m": [{"c": "a"}, {"x": 1}, {"c": [2]}], "*": 3}"#;
    let raw = |h: *const Handle, c: &CCursor| {
        let (mut a, mut b) = (0usize, 0usize);
        // SAFETY: a live handle, a cursor from it, writable out-params.
        let status = unsafe { capi::qjson_span(h, c, null(), 0, &mut a, &mut b) };
        assert_eq!(status, 0);
        String::from_utf8(input[a..b].to_vec()).unwrap()
    };
    // SAFETY: every pointer below is live or null as each call allows; the
    // input outlives the handle, freed at the end.
    unsafe {
        let mut h: *mut Handle = null_mut();
        assert_eq!(
            capi::qjson_parse(input.as_ptr().cast(), input.len(), null(), &mut h),
            0
        );
        let (mut out, mut n): (*const CCursor, usize) = (null(), 0);
        let path = "m[*].c";
        assert_eq!(
            capi::qjson_get_all(
                h,
                null(),
                path.as_ptr().cast(),
                path.len(),
                &mut out,
                &mut n
            ),
            0
        );
        let got: Vec<String> = std::slice::from_raw_parts(out, n)
            .iter()
            .map(|c| raw(h, c))
            .collect();
        assert_eq!(got, [r#""a""#, "[2]"]);
        assert_eq!(std::slice::from_raw_parts(out, n)[0].kind, 3);

        let mut p = null_mut();
        let text = r#"["*"]"#;
        assert_eq!(
            capi::qjson_path_new(text.as_ptr().cast(), text.len(), &mut p),
            0
        );
        let mut c = CCursor::default();
        assert_eq!(capi::qjson_path_find(h, null(), p, &mut c), 0);
        assert_eq!(raw(h, &c), "3");
        assert_eq!(capi::qjson_path_get_all(h, null(), p, &mut out, &mut n), 0);
        assert_eq!(n, 1);
        capi::qjson_path_free(p);

        let text = "m[*]";
        assert_eq!(
            capi::qjson_path_new(text.as_ptr().cast(), text.len(), &mut p),
            0
        );
        assert_eq!(
            capi::qjson_path_find(h, null(), p, &mut c),
            4,
            "a wildcard: ERR_PATH"
        );
        assert_eq!(capi::qjson_path_get_all(h, null(), p, &mut out, &mut n), 0);
        assert_eq!(n, 3);
        capi::qjson_path_free(p);
        capi::qjson_path_free(null_mut());

        let bad = "m[**]";
        assert_eq!(
            capi::qjson_path_new(bad.as_ptr().cast(), bad.len(), &mut p),
            4
        );
        assert_eq!(
            capi::qjson_get_all(h, null(), bad.as_ptr().cast(), bad.len(), &mut out, &mut n),
            4
        );
        assert_eq!(
            capi::qjson_get_all(h, null(), null(), 0, null_mut(), &mut n),
            6
        );
        assert_eq!(
            capi::qjson_path_get_all(h, null(), null(), &mut out, &mut n),
            6
        );
        assert_eq!(capi::qjson_path_find(null(), null(), null(), &mut c), 6);
        capi::qjson_free(h);
    }
}

#[test]
fn key_after_a_wildcard_skips_every_kind_of_element() {
    // `[*].k` steps over the elements that are not objects by the kind of
    // their first structural (a string two structurals, a scalar none, a
    // container past its closer): runs of each kind, strings that look
    // like containers or hold escaped quotes, empty strings and
    // containers, in every order before and after the objects.
    let kinds = [
        r#""s""#,
        r#""""#,
        r#""{[\"]}""#,
        "12",
        "-0.5e3",
        "true",
        "null",
        "[]",
        r#"["x", {"k": "no"}, 3]"#,
        "{}",
        r#"{"j": 1}"#,
        r#"{"k": ["deep", {"k": 0}]}"#,
    ];
    let mut elements = Vec::new();
    let mut n = 0;
    for a in 0..kinds.len() {
        for b in 0..kinds.len() {
            elements.push(kinds[a].to_string());
            elements.push(kinds[b].to_string());
            elements.push(kinds[b].to_string());
            elements.push(format!(r#"{{"k": {n}}}"#));
            n += 1;
        }
    }
    let doc = format!("[{}]", elements.join(","));
    let v: J = serde_json::from_str(&doc).unwrap();
    let want: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.get("k"))
        .map(|k| k.to_string())
        .collect();
    assert!(want.len() > kinds.len() * kinds.len());
    let got = all_raw(&doc, "[*].k").unwrap();
    let got: Vec<String> = got
        .iter()
        .map(|t| serde_json::from_str::<J>(t).unwrap().to_string())
        .collect();
    assert_eq!(got, want);
    for lazy in [false, true] {
        let index = build(doc.as_bytes(), lazy);
        let d = Doc::new(doc.as_bytes(), &index);
        assert_eq!(d.find_all(d.root(), "[*].k").unwrap().len(), want.len());
    }
}
