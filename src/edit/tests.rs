//! The edit engine against hand-written expectations: each writer's
//! shape (splice, member by member), key and whitespace handling, lazy
//! documents, patches' dict semantics, and the plan form.

use super::*;
use crate::doc::{Cursor, Doc};
use crate::error::ErrorKind;
use crate::index::{Index, Options};

/// A host value: JSON text to write, or a cached child view (its cursor,
/// and its edited output when it holds edits).
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Json(&'static str),
    View(Cursor, Option<&'static str>),
}

struct Host<'a> {
    input: &'a [u8],
    out: Vec<u8>,
}

impl Out for Host<'_> {
    type Key = String;
    type Value = Val;
    type Error = EditError;
    fn copy(&mut self, a: usize, b: usize) {
        self.out.extend_from_slice(&self.input[a..b]);
    }
    fn byte(&mut self, b: u8) {
        self.out.push(b);
    }
    fn key_text(&mut self, key: &str) {
        self.out.extend_from_slice(format!("{key:?}").as_bytes());
    }
    fn key(&mut self, key: &String) -> Result<(), EditError> {
        self.key_text(key);
        Ok(())
    }
    fn value(&mut self, v: &Val) -> Result<(), EditError> {
        match v {
            Val::Json(s) => self.out.extend_from_slice(s.as_bytes()),
            Val::View(..) => panic!("views are children, not values"),
        }
        Ok(())
    }
    fn child(&mut self, v: &Val) -> Result<(), EditError> {
        match v {
            Val::View(_, Some(s)) => self.out.extend_from_slice(s.as_bytes()),
            _ => panic!("only edited views are written as children"),
        }
        Ok(())
    }
    fn edited(&mut self, v: &Val) -> Result<Option<Cursor>, EditError> {
        Ok(match v {
            Val::View(c, Some(_)) => Some(*c),
            _ => None,
        })
    }
    fn fail(&mut self, e: EditError) -> EditError {
        e
    }
}

fn index(input: &[u8], lazy: bool) -> Index {
    let opts = Options {
        lazy,
        ..Options::default()
    };
    Index::build(input, &opts).unwrap()
}

fn host(input: &[u8]) -> Host<'_> {
    Host {
        input,
        out: Vec::new(),
    }
}

fn text(h: Host<'_>) -> String {
    String::from_utf8(h.out).unwrap()
}

type P = Patches<String, Val>;

fn set(p: &mut P, doc: &Doc<'_>, at: Cursor, k: &str, v: Val) {
    let r: Result<(), ()> = p.set(
        || k.to_string(),
        |x| Ok(x == k),
        v,
        |t| t.field(doc, at, k.as_bytes()),
    );
    r.unwrap();
}

fn delete(p: &mut P, doc: &Doc<'_>, at: Cursor, k: &str) -> bool {
    let r: Result<bool, ()> = p.delete(
        || k.to_string(),
        |x| Ok(x == k),
        |t| t.field(doc, at, k.as_bytes()),
    );
    r.unwrap()
}

const REQ: &[u8] = b" {\n  \"model\" : \"a\",\n  \"stream\": true,\n  \"n\": [1, 2]\n}\n";

#[test]
fn clean_root_keeps_surrounding_whitespace() {
    let ix = index(REQ, false);
    let doc = Doc::new(REQ, &ix);
    let mut h = host(REQ);
    write_clean(&doc, doc.root(), &mut h).unwrap();
    assert_eq!(h.out, REQ);
    let n = doc.field(doc.root(), b"n").unwrap();
    let mut h = host(REQ);
    write_clean(&doc, n, &mut h).unwrap();
    assert_eq!(text(h), "[1, 2]");
}

#[test]
fn patched_object_is_spliced() {
    let ix = index(REQ, false);
    let doc = Doc::new(REQ, &ix);
    let root = doc.root();
    let mut p = P::default();
    set(&mut p, &doc, root, "model", Val::Json("\"b\""));
    set(&mut p, &doc, root, "user", Val::Json("1"));
    let mut h = host(REQ);
    write_lazy_object(&doc, root, &p, [], &mut h).unwrap();
    assert_eq!(
        text(h),
        "{\n  \"model\" : \"b\",\n  \"stream\": true,\n  \"n\": [1, 2],\"user\":1\n}"
    );
}

#[test]
fn added_member_of_an_empty_object_has_no_comma() {
    let input = b"{ }";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let mut p = P::default();
    set(&mut p, &doc, doc.root(), "a", Val::Json("1"));
    let mut h = host(input);
    write_lazy_object(&doc, doc.root(), &p, [], &mut h).unwrap();
    assert_eq!(text(h), "{\"a\":1 }");
}

#[test]
fn deletion_is_spliced_with_its_separator() {
    let input = b"{\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4}";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let root = doc.root();
    let mut p = P::default();
    assert!(delete(&mut p, &doc, root, "b"));
    assert!(!delete(&mut p, &doc, root, "b"));
    assert!(!delete(&mut p, &doc, root, "zz"));
    set(&mut p, &doc, root, "d", Val::Json("5"));
    let mut h = host(input);
    write_lazy_object(&doc, root, &p, [], &mut h).unwrap();
    // "b" goes with the comma after it; the rest keeps its layout.
    assert_eq!(text(h), "{\"a\": 1, \"c\": 3, \"d\": 5}");
    assert_eq!(p.len_delta(), -1);
}

/// Writes `input`'s root with the keys `del` deleted and `add` added.
fn spliced(input: &[u8], del: &[&str], add: &[(&str, &'static str)]) -> String {
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let root = doc.root();
    let mut p = P::default();
    for k in del {
        assert!(delete(&mut p, &doc, root, k));
    }
    for (k, v) in add {
        set(&mut p, &doc, root, k, Val::Json(v));
    }
    let mut h = host(input);
    write_lazy_object(&doc, root, &p, [], &mut h).unwrap();
    text(h)
}

#[test]
fn deleted_members_take_one_separator() {
    let flat = b"{\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4}";
    // First, middle, last: the comma after it, or before the last one.
    assert_eq!(spliced(flat, &["a"], &[]), "{\"b\": 2, \"c\": 3, \"d\": 4}");
    assert_eq!(spliced(flat, &["c"], &[]), "{\"a\": 1, \"b\": 2, \"d\": 4}");
    assert_eq!(spliced(flat, &["d"], &[]), "{\"a\": 1, \"b\": 2, \"c\": 3}");
    // Runs of deleted members, at the start, inside, at the end.
    assert_eq!(spliced(flat, &["b", "a"], &[]), "{\"c\": 3, \"d\": 4}");
    assert_eq!(spliced(flat, &["c", "b"], &[]), "{\"a\": 1, \"d\": 4}");
    assert_eq!(spliced(flat, &["d", "c"], &[]), "{\"a\": 1, \"b\": 2}");
    assert_eq!(spliced(flat, &["a", "c"], &[]), "{\"b\": 2, \"d\": 4}");
    assert_eq!(spliced(flat, &["b", "d"], &[]), "{\"a\": 1, \"c\": 3}");
    // All of them; then added members need no comma before the first.
    assert_eq!(spliced(flat, &["a", "b", "c", "d"], &[]), "{}");
    assert_eq!(
        spliced(flat, &["a", "b", "c", "d"], &[("x", "1"), ("y", "2")]),
        "{\"x\":1,\"y\":2}"
    );
    // A deleted last member: added ones follow the one kept before it.
    assert_eq!(
        spliced(flat, &["d"], &[("x", "1")]),
        "{\"a\": 1, \"b\": 2, \"c\": 3,\"x\":1}"
    );
    // Indented text keeps its lines; whitespace inside `{ }` stays.
    let pretty = b"{\n  \"a\": 1,\n  \"b\": [2],\n  \"c\": 3\n}";
    assert_eq!(
        spliced(pretty, &["a"], &[]),
        "{\n  \"b\": [2],\n  \"c\": 3\n}"
    );
    assert_eq!(
        spliced(pretty, &["c"], &[]),
        "{\n  \"a\": 1,\n  \"b\": [2]\n}"
    );
    assert_eq!(spliced(pretty, &["a", "b", "c"], &[]), "{\n  \n}");
    assert_eq!(spliced(b"{ \"a\" : 1 }", &["a"], &[]), "{  }");
}

#[test]
fn deleted_member_drops_its_edited_child() {
    let input = b"{\"a\": {\"x\": 1}, \"b\": [2], \"c\": 3}";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let root = doc.root();
    let a = doc.field(root, b"a").unwrap();
    let b = doc.field(root, b"b").unwrap();
    let mut p = P::default();
    assert!(delete(&mut p, &doc, root, "a"));
    let children = [Val::View(a, Some("{}")), Val::View(b, Some("[]"))];
    let mut h = host(input);
    write_lazy_object(&doc, root, &p, &children, &mut h).unwrap();
    assert_eq!(text(h), "{\"b\": [], \"c\": 3}");
}

#[test]
fn patches_read_like_a_dict() {
    let input = b"{\"a\": 1, \"b\": 2}";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let root = doc.root();
    let mut p = P::default();
    let state = |p: &P, k: &str| -> String {
        let r: Result<_, ()> = p.state(|x| Ok(x == k));
        match r.unwrap() {
            KeyState::Set(v) => format!("{v:?}"),
            KeyState::Deleted => "deleted".into(),
            KeyState::Untouched => "untouched".into(),
        }
    };
    assert_eq!(state(&p, "a"), "untouched");
    delete(&mut p, &doc, root, "a");
    assert_eq!(state(&p, "a"), "deleted");
    // Set again after a delete: added at the end, as a dict does.
    set(&mut p, &doc, root, "a", Val::Json("9"));
    assert_eq!(state(&p, "a"), "Json(\"9\")");
    let mut h = host(input);
    write_lazy_object(&doc, root, &p, [], &mut h).unwrap();
    assert_eq!(text(h), "{\"b\": 2,\"a\":9}");
    // Deleting an added key removes its patch.
    set(&mut p, &doc, root, "x", Val::Json("0"));
    assert!(delete(&mut p, &doc, root, "x"));
    assert_eq!(p.added().count(), 1);
}

#[test]
fn repeated_keys_keep_the_first_occurrence() {
    let input = b"{\"a\": 1, \"a\": 2, \"b\": 3}";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let mut p = P::default();
    set(&mut p, &doc, doc.root(), "b", Val::Json("4"));
    let mut h = host(input);
    write_lazy_object(&doc, doc.root(), &p, [], &mut h).unwrap();
    assert_eq!(text(h), "{\"a\": 1,\"b\": 4}");
}

#[test]
fn edited_children_are_spliced_in_place() {
    let input = b"[{\"x\": 1}, 2, {\"y\": [3]}, 4]";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let first = doc.element(doc.root(), 0).unwrap();
    let third = doc.element(doc.root(), 2).unwrap();
    let children = [Val::View(third, Some("{\"y\":[]}")), Val::View(first, None)];
    let mut h = host(input);
    write_lazy_array(&doc, doc.root(), &children, &mut h).unwrap();
    assert_eq!(text(h), "[{\"x\": 1}, 2, {\"y\":[]}, 4]");
}

#[test]
fn object_with_only_edited_children_keeps_its_other_keys() {
    // No patch of its own: copied as written around the edited child,
    // a repeated key that did not change included.
    let input = b"{\"a\": 1, \"o\": {\"x\": 1}, \"a\": 2, \"p\": [3]}";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let root = doc.root();
    let o = doc.field(root, b"o").unwrap();
    let p = doc.field(root, b"p").unwrap();
    let written = |children: &[Val]| {
        let mut h = host(input);
        write_lazy_object(&doc, root, &P::default(), children, &mut h).unwrap();
        text(h)
    };
    assert_eq!(
        written(&[Val::View(o, Some("{\"x\":5}")), Val::View(p, None)]),
        "{\"a\": 1, \"o\": {\"x\":5}, \"a\": 2, \"p\": [3]}"
    );
    assert_eq!(
        written(&[Val::View(p, Some("[]")), Val::View(o, Some("{}"))]),
        "{\"a\": 1, \"o\": {}, \"a\": 2, \"p\": []}"
    );
    // The edited child's key repeats after it (escaped or not): each key
    // once, so a reader that keeps the last value sees the edit too.
    for repeat in ["\"o\"", "\"\\u006f\""] {
        let input = format!("{{\"o\": {{\"x\": 1}}, \"b\": 2, {repeat}: 3, \"b\": 4}}");
        let ix = index(input.as_bytes(), false);
        let doc = Doc::new(input.as_bytes(), &ix);
        let o = doc.field(doc.root(), b"o").unwrap();
        let mut h = host(input.as_bytes());
        let children = [Val::View(o, Some("{\"x\":5}"))];
        write_lazy_object(&doc, doc.root(), &P::default(), &children, &mut h).unwrap();
        assert_eq!(text(h), "{\"o\": {\"x\":5},\"b\": 2}", "{input}");
    }
    // Escaped keys after it that are other keys, repeated or not: as written.
    let input = b"{\"o\": {\"x\": 1}, \"\\u0062\": 2, \"b\": 3}";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let o = doc.field(doc.root(), b"o").unwrap();
    let mut h = host(input);
    let children = [Val::View(o, Some("{}"))];
    write_lazy_object(&doc, doc.root(), &P::default(), &children, &mut h).unwrap();
    assert_eq!(text(h), "{\"o\": {}, \"\\u0062\": 2, \"b\": 3}");
}

#[test]
fn unfolded_members_keep_keys_as_written() {
    let input = b"{\"x\\/y\" :1, \"b\": [2], \"c\":3, \"d\": 4}";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let root = doc.root();
    let b = doc.field(root, b"b").unwrap();
    let mut m: Members<Val> =
        Members::unfold_with(&doc, root, |c| (c == b).then_some(Val::View(c, Some("[]")))).unwrap();
    assert_eq!(m.iter().next().unwrap().key.as_ref(), "x/y");
    m.remove("c");
    m.set("e", Val::Json("true"));
    let mut h = host(input);
    write_members(&doc, root, &m, &mut h).unwrap();
    assert_eq!(text(h), "{\"x\\/y\" :1,\"b\": [],\"d\": 4,\"e\":true}");
}

#[test]
fn unfolded_array_merges_consecutive_runs() {
    let input = b"[ 1 , 2 , 3 , 4 ]";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let mut s: Vec<Slot<Val>> = unfold_array(&doc, doc.root(), |_| None).unwrap();
    s.remove(2);
    s.insert(0, Slot::New(Val::Json("0")));
    s.push(Slot::New(Val::Json("5")));
    let mut h = host(input);
    write_slots(&doc, doc.root(), &s, &mut h).unwrap();
    assert_eq!(text(h), "[0,1 , 2,4,5]");
}

#[test]
fn unfolded_array_with_inserts_is_spliced() {
    let input = b"[\n  1,\n  {\"a\": 2}\n]";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let obj = doc.element(doc.root(), 1).unwrap();
    let mut s: Vec<Slot<Val>> =
        unfold_array(&doc, doc.root(), |c| Some(Val::View(c, None))).unwrap();
    s.insert(0, Slot::New(Val::Json("0")));
    s.insert(2, Slot::New(Val::Json("\"x\"")));
    s.push(Slot::New(Val::Json("3")));
    s.push(Slot::New(Val::Json("4")));
    // The object element holds edits: its span is replaced in place.
    if let Slot::Orig { view, .. } = &mut s[3] {
        *view = Some(Val::View(obj, Some("{\"a\":9}")));
    }
    let mut h = host(input);
    write_slots(&doc, doc.root(), &s, &mut h).unwrap();
    assert_eq!(text(h), "[\n  0,1,\n  \"x\",{\"a\":9},3,4\n]");
    // The same through a plan: one copy between the inserts.
    let mut plan: Plan<String, Val, _> = Plan::new(|v: &Val| match v {
        Val::View(c, Some(_)) => Some(*c),
        _ => None,
    });
    write_slots(&doc, doc.root(), &s, &mut plan).unwrap();
    assert_eq!(plan.pieces()[0], Piece::Copy(0, 4));
    // An empty array gets its new elements right after `[`, its inner
    // whitespace kept before `]` (as an empty object's).
    let input = b"[ ]";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let s = vec![Slot::New(Val::Json("1")), Slot::New(Val::Json("2"))];
    let mut h = host(input);
    write_slots(&doc, doc.root(), &s, &mut h).unwrap();
    assert_eq!(text(h), "[1,2 ]");
    // Nothing inserted: the bytes as written.
    let mut h = host(input);
    write_slots(&doc, doc.root(), &[], &mut h).unwrap();
    assert_eq!(text(h), "[ ]");
}

#[test]
fn lazy_documents_validate_what_they_copy() {
    let input = b"{\"a\": [1, 2], \"b\": tru, \"c\": 3}";
    let ix = index(input, true);
    let doc = Doc::new(input, &ix);
    let root = doc.root();
    let mut p = P::default();
    set(&mut p, &doc, root, "c", Val::Json("4"));
    let mut h = host(input);
    match write_lazy_object(&doc, root, &p, [], &mut h) {
        Err(EditError::Invalid(e)) => {
            assert_eq!(e.kind, ErrorKind::InvalidLiteral);
            assert_eq!(e.offset, 19);
        }
        other => panic!("expected an invalid range, got {other:?}"),
    }
    // Without the bad member, a lazy document writes member by member,
    // keys of patched members written anew.
    let mut p = P::default();
    delete(&mut p, &doc, root, "b");
    set(&mut p, &doc, root, "c", Val::Json("4"));
    let mut h = host(input);
    write_lazy_object(&doc, root, &p, [], &mut h).unwrap();
    assert_eq!(text(h), "{\"a\": [1, 2],\"c\":4}");
    let mut h = host(input);
    assert!(write_clean(&doc, root, &mut h).is_err());
}

#[test]
fn plan_merges_adjacent_pieces() {
    let input = b"{\"a\": 1, \"b\": 2, \"c\": [3]}";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let root = doc.root();
    let c = doc.field(root, b"c").unwrap();
    let mut m: Members<u32> = Members::unfold_with(&doc, root, |x| (x == c).then_some(7)).unwrap();
    m.set("z", 1);
    let mut plan: Plan<String, u32, _> = Plan::new(|&v: &u32| (v == 7).then_some(c));
    write_members(&doc, root, &m, &mut plan).unwrap();
    // `"a": 1, "b": 2` is one run; `"c": ` the key of the edited child.
    let b = input.iter().position(|&x| x == b'[').unwrap();
    assert_eq!(
        plan.pieces(),
        &[
            Piece::Bytes(0, 1),
            Piece::Copy(1, 15),
            Piece::Bytes(1, 2),
            Piece::Copy(17, b),
            Piece::Child(7),
            Piece::Bytes(2, 3),
            Piece::KeyText(0, 1),
            Piece::Bytes(3, 4),
            Piece::Value(1),
            Piece::Bytes(4, 5),
        ]
    );
    assert_eq!(plan.bytes(), b"{,,:}");
    assert_eq!(plan.text(), "z");
}

#[test]
fn splice_tells_repeated_keys_apart() {
    // Escaped keys that are equal once unescaped: a repeat, member by member.
    assert_eq!(
        spliced(b"{\"a\": 1, \"\\u0061\": 2, \"b\": 3}", &["b"], &[]),
        "{\"a\": 1}"
    );
    // Escaped keys that differ: spliced.
    assert_eq!(
        spliced(b"{\"\\u0061\": 1, \"b\": 2, \"c\": 3}", &["b"], &[]),
        "{\"\\u0061\": 1, \"c\": 3}"
    );
    // Large objects: deletions cut out; a repeated key anywhere, member by member.
    let members: Vec<String> = (0..20).map(|i| format!("\"k{i}\": {i}")).collect();
    let big = format!("{{{}}}", members.join(", "));
    let want: Vec<&String> = members
        .iter()
        .filter(|m| !m.starts_with("\"k3\"") && !m.starts_with("\"k19\""))
        .collect();
    let want = format!(
        "{{{}}}",
        want.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert_eq!(spliced(big.as_bytes(), &["k3", "k19"], &[]), want);
    let dup = big.replace("\"k18\"", "\"k2\"");
    let out = spliced(dup.as_bytes(), &["k3"], &[]);
    assert!(
        out.starts_with("{\"k0\": 0, \"k1\": 1, \"k2\": 2,\"k4\": 4"),
        "{out}"
    );
    assert!(!out.contains("18"), "{out}");
    // A repeat as the last member.
    let dup = big.replace("\"k19\"", "\"k0\"");
    let out = spliced(dup.as_bytes(), &["k3"], &[]);
    assert!(out.ends_with("\"k18\": 18}"), "{out}");
    // Nothing deleted (only the key check walks): spliced without a
    // repeat, member by member with one, escaped or not.
    let out = spliced(big.as_bytes(), &[], &[("z", "true")]);
    assert_eq!(out, format!("{},\"z\":true}}", &big[..big.len() - 1]));
    for repeat in ["\"k0\"", "\"k\\u0030\""] {
        let dup = big.replace("\"k12\"", repeat);
        let out = spliced(dup.as_bytes(), &[], &[("z", "true")]);
        assert!(!out.contains("12"), "{out}");
        assert!(out.ends_with("\"k19\": 19,\"z\":true}"), "{out}");
    }
}

/// The slots [`write_slots`] gets for a lazy array's state: its original
/// elements (the edited one, if any, as an edited view) with `inserts`
/// (ordinal, value) put before the ordinal's element.
fn slots_with(doc: &Doc<'_>, edited: Option<(u32, Val)>, inserts: &[(u32, Val)]) -> Vec<Slot<Val>> {
    let items: Vec<Cursor> = doc.array_items(doc.root()).unwrap().collect();
    let mut s = Vec::new();
    let mut k = 0;
    for (i, &c) in items.iter().enumerate() {
        while k < inserts.len() && inserts[k].0 as usize <= i {
            s.push(Slot::New(inserts[k].1.clone()));
            k += 1;
        }
        let view = edited
            .clone()
            .filter(|(j, _)| *j as usize == i)
            .map(|(_, v)| v);
        s.push(Slot::Orig {
            at: c,
            i: i as u32,
            view,
        });
    }
    s.extend(inserts[k..].iter().map(|(_, v)| Slot::New(v.clone())));
    s
}

#[test]
fn lazy_array_inserts_write_what_the_unfolded_array_writes() {
    let inputs: [&[u8]; 6] = [
        b"[ ]",
        b"[]",
        b"[ 1 ]",
        b"[\n  1,\n  {\"a\": 2} ,\n  [3]\n]",
        b"[1,2,3,4,5]",
        b" [ {\"m\": [1]} , 5 ] ",
    ];
    let a = Val::Json("\"a\"");
    let b = Val::Json("{}");
    for input in inputs {
        for lazy in [false, true] {
            let ix = index(input, lazy);
            let doc = Doc::new(input, &ix);
            let n = doc.len(doc.root()).unwrap() as u32;
            // Every placement of two inserts (ordinals 0..=n, in order),
            // with and without an edited child (the first container).
            let container = doc
                .array_items(doc.root())
                .unwrap()
                .enumerate()
                .find(|(_, c)| doc.span(*c).1 - c.start as usize > 1 && doc.raw(*c)[0] != b'"');
            for x in 0..=n {
                for y in x..=n {
                    let inserts = [(x, a.clone()), (y, b.clone())];
                    let mut edits = vec![None];
                    if let Some((i, c)) = container {
                        edits.push(Some((i as u32, Val::View(c, Some("[\"e\"]")))));
                    }
                    for edited in edits {
                        let slots = slots_with(&doc, edited.clone(), &inserts);
                        let mut want = host(input);
                        write_slots(&doc, doc.root(), &slots, &mut want).unwrap();
                        let children: Vec<Val> = edited.iter().map(|(_, v)| v.clone()).collect();
                        let mut got = host(input);
                        write_lazy_array_inserts(&doc, doc.root(), &children, &inserts, &mut got)
                            .unwrap();
                        let (got, want) = (text(got), text(want));
                        assert_eq!(got, want, "{:?} {x} {y} {edited:?}", input);
                        serde_json::from_str::<serde_json::Value>(&got).unwrap();
                    }
                }
            }
        }
    }
}

/// The crate's test generator, a value below `n` per call.
fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut next = crate::test_rng(seed);
    move |n| next() % n
}

/// Deleted members cut out of small and large objects against a model of
/// the rule (the module docs of `writer`): a deleted run before a kept
/// member goes with the separator after it, one that ends the object with
/// the separator before it. Members of every kind of value (containers
/// before, inside and after the cuts), whitespace around keys, colons and
/// commas, and now and then an escaped key (the general walk) or an
/// escape elsewhere in the document.
#[test]
fn deletions_follow_the_separator_rule() {
    let mut next = rng(0x2545_F491_4F6C_DD1D);
    let values = [
        "1",
        "\"s\"",
        "{\"x\": [1, {}]}",
        "[]",
        "null",
        "-2.5",
        "[{\"a\":{}}]",
        "\"e\\n\"",
    ];
    let spaces = ["", " ", "\n  ", "\t"];
    for round in 0..3000 {
        let n = 1 + next(if round % 4 == 0 { 24 } else { 9 }) as usize;
        let escaped_key = next(6) == 0;
        let keys: Vec<String> = (0..n)
            .map(|i| {
                if escaped_key && i == n / 2 {
                    format!("k\\u00{:02x}", 0x41 + i) // "kA", "kB", ...: no clash with "k<digits>"
                } else {
                    format!("k{i}")
                }
            })
            .collect();
        let members: Vec<String> = keys
            .iter()
            .map(|k| {
                let sp = spaces[next(4) as usize];
                let sp2 = spaces[next(4) as usize];
                format!(
                    "\"{k}\"{sp}:{sp2}{}",
                    values[next(values.len() as u64) as usize]
                )
            })
            .collect();
        let seps: Vec<String> = (0..n)
            .map(|_| format!("{},{}", spaces[next(4) as usize], spaces[next(4) as usize]))
            .collect();
        let (lead, trail) = (spaces[next(4) as usize], spaces[next(4) as usize]);
        let mut text = format!("{{{lead}");
        for (i, m) in members.iter().enumerate() {
            if i > 0 {
                text.push_str(&seps[i]);
            }
            text.push_str(m);
        }
        text.push_str(trail);
        text.push('}');
        let gone: Vec<bool> = (0..n).map(|_| next(3) == 0).collect();
        // The model: a kept member after an earlier kept one `p` follows
        // the separator after `p`; the first kept one follows `lead`.
        let mut want = format!("{{{lead}");
        let mut prev: Option<usize> = None;
        for i in (0..n).filter(|&i| !gone[i]) {
            if let Some(p) = prev {
                want.push_str(&seps[p + 1]);
            }
            want.push_str(&members[i]);
            prev = Some(i);
        }
        want.push_str(trail);
        want.push('}');
        let del: Vec<String> = (0..n)
            .filter(|&i| gone[i])
            .map(|i| {
                let k = &keys[i];
                match k.strip_prefix("k\\u00") {
                    Some(hex) => format!("k{}", u8::from_str_radix(hex, 16).unwrap() as char),
                    None => k.clone(),
                }
            })
            .collect();
        let del: Vec<&str> = del.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            spliced(text.as_bytes(), &del, &[]),
            want,
            "{text} without {del:?}"
        );
    }
}

/// The member table answers every lookup as `Doc::field` does (keys
/// found and missed, short and long, equal in their first eight bytes,
/// prefixes of each other; escaped and repeated keys, where it has no
/// table; lazy documents), and is built exactly for small strict objects
/// with distinct plain keys.
#[test]
fn member_table_agrees_with_field() {
    let mut next = rng(0x9E37_79B9_7F4A_7C15);
    let pool = [
        "a",
        "ab",
        "b",
        "model",
        "stream",
        "n",
        "",
        "abcdefg",
        "abcdefgh",
        "abcdefghi",
        "abcdefgh_1",
        "abcdefgh_2",
        "temperature",
        "messages",
        "x\\u0079",
        "xy",
        "é",
        "key with spaces",
        "a\\\"b",
    ];
    let mut built = [0usize; 2];
    for round in 0..3000 {
        let n = next(20) as usize;
        let keys: Vec<&str> = (0..n)
            .map(|_| pool[next(pool.len() as u64) as usize])
            .collect();
        let members: Vec<String> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| match i % 4 {
                0 => format!("\"{k}\":{i}"),
                1 => format!("\"{k}\" : \"s{i}\""),
                2 => format!("\"{k}\":{{\"in\":[{i}]}}"),
                _ => format!("\"{k}\": [{i}, {{}}]"),
            })
            .collect();
        let text = format!("{{{}}}", members.join(", "));
        let lazy = round % 5 == 0;
        let ix = index(text.as_bytes(), lazy);
        let doc = Doc::new(text.as_bytes(), &ix);
        let at = doc.root();
        let mut table = MemberTable::default();
        for probe in pool
            .iter()
            .chain(["abcdefgh_3", "mode", "models", "q"].iter())
        {
            // The key a lookup is given: unescaped.
            let key = probe.replace("\\u0079", "y").replace("\\\"", "\"");
            let want = doc.field(at, key.as_bytes());
            assert_eq!(
                table.field(&doc, at, key.as_bytes()),
                want,
                "{text} {key:?}"
            );
        }
        let plain = keys.iter().all(|k| !k.contains('\\'));
        let distinct = keys.iter().collect::<std::collections::HashSet<_>>().len() == n;
        let want_built = !lazy && plain && distinct && n <= crate::doc::repeats::SMALL;
        assert_eq!(table.distinct(), want_built, "{text}");
        if let Some(m) = table.members() {
            assert_eq!(m.len(), n);
        }
        built[usize::from(want_built)] += 1;
    }
    assert!(built[0] > 500 && built[1] > 500, "{built:?}");
}

/// Review s14: a 7-byte key against a longer member whose 8th byte xor its
/// length is 7, and a long key holding a quote against a 7-byte member.
#[test]
fn member_table_fingerprint_collisions() {
    let long = format!("headers {}", "x".repeat(31)); // 39 bytes, ' ' ^ 39 == 7
    let text = format!("{{\"{long}\":1,\"b\":2}}");
    let ix = index(text.as_bytes(), false);
    let doc = Doc::new(text.as_bytes(), &ix);
    let mut table = MemberTable::default();
    assert_eq!(
        table.field(&doc, doc.root(), b"headers"),
        doc.field(doc.root(), b"headers"),
        "{text}"
    );
    let text = format!("{{\"abcdefg\":1,\"{}\":2}}", "x".repeat(25));
    let key = format!("abcdefg\":1,\"{}", "x".repeat(25));
    let ix = index(text.as_bytes(), false);
    let doc = Doc::new(text.as_bytes(), &ix);
    let mut table = MemberTable::default();
    assert_eq!(
        table.field(&doc, doc.root(), key.as_bytes()),
        doc.field(doc.root(), key.as_bytes()),
        "{text}"
    );
}

/// A splice whose edits come in any order: members replaced, deleted and
/// edited children (cached views) of one object, the patches made in a
/// shuffled order and the children listed shuffled, from a few edits
/// (sorted in place) to more than the writer's short sort takes (the
/// standard sort), against the object written from a model.
#[test]
fn splice_edits_in_any_order() {
    let mut next = rng(0xD1B5_4A32_D192_ED03);
    const NEW: [&str; 4] = ["\"r\"", "true", "[0]", "{}"];
    for round in 0..2000 {
        let n = 1 + next(if round % 3 == 0 { 30 } else { 8 }) as usize;
        // Member i: "k<i>": a number, or an array (an edited child when
        // neither replaced nor deleted).
        let orig: Vec<String> = (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    format!("{i}")
                } else {
                    format!("[{i}]")
                }
            })
            .collect();
        let input = format!(
            "{{{}}}",
            (0..n)
                .map(|i| format!("\"k{i}\": {}", orig[i]))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let input: &'static [u8] = Box::leak(input.into_bytes().into_boxed_slice());
        let ix = index(input, false);
        let doc = Doc::new(input, &ix);
        let root = doc.root();
        // 0: untouched, 1: replaced, 2: deleted, 3: an edited child.
        let what: Vec<u64> = (0..n)
            .map(|i| {
                let w = next(4);
                if w == 3 && i % 2 == 0 {
                    0
                } else {
                    w
                }
            })
            .collect();
        let new: Vec<&'static str> = (0..n).map(|_| NEW[next(4) as usize]).collect();
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, next(i as u64 + 1) as usize);
        }
        let mut p = P::default();
        let mut children = Vec::new();
        for &i in &order {
            let k = format!("k{i}");
            match what[i] {
                1 => set(&mut p, &doc, root, &k, Val::Json(new[i])),
                2 => assert!(delete(&mut p, &doc, root, &k)),
                3 => children.push(Val::View(
                    doc.field(root, k.as_bytes()).unwrap(),
                    Some("[\"edited\"]"),
                )),
                _ => {}
            }
        }
        let want = format!(
            "{{{}}}",
            (0..n)
                .filter(|&i| what[i] != 2)
                .map(|i| {
                    let v = match what[i] {
                        1 => new[i].to_string(),
                        3 => "[\"edited\"]".to_string(),
                        _ => orig[i].clone(),
                    };
                    format!("\"k{i}\": {v}")
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        let mut h = host(input);
        write_lazy_object(&doc, root, &p, children.iter(), &mut h).unwrap();
        assert_eq!(text(h), want, "order {order:?} of {what:?}");
    }
}

/// Writes `input`'s root with each `(key, value)` of `set` set in turn;
/// checks that the one-pass splice of replacements wrote it exactly when
/// `one_pass`.
fn replaced(input: &[u8], sets: &[(&str, &'static str)], one_pass: bool) -> String {
    let before = super::writer::SPLICED_REPLACED.with(std::cell::Cell::get);
    let out = replaced_by_any(input, sets);
    let after = super::writer::SPLICED_REPLACED.with(std::cell::Cell::get);
    assert_eq!(after - before, usize::from(one_pass), "{sets:?}");
    out
}

/// Writes `input`'s root with each `(key, value)` of `set` set in turn.
fn replaced_by_any(input: &[u8], sets: &[(&str, &'static str)]) -> String {
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let root = doc.root();
    let mut p = P::default();
    for (k, v) in sets {
        set(&mut p, &doc, root, k, Val::Json(v));
    }
    let mut h = host(input);
    write_lazy_object(&doc, root, &p, [], &mut h).unwrap();
    text(h)
}

#[test]
fn replaced_members_are_spliced_in_any_order() {
    let obj = b" {\"a\": 1, \"b\" :\"x\",\n \"c\": [3], \"d\": {\"e\": 4}, \"f\": null }";
    // In document order, out of it, a member set twice (its patch keeps
    // its place): the last value, everything else as written (the
    // whitespace around the root is not the object's).
    assert_eq!(
        replaced(obj, &[("a", "10"), ("c", "30")], true),
        "{\"a\": 10, \"b\" :\"x\",\n \"c\": 30, \"d\": {\"e\": 4}, \"f\": null }"
    );
    // A key set again after a later one: its patch keeps its place, so
    // the patches stay in document order (one pass).
    assert_eq!(
        replaced(obj, &[("a", "10"), ("c", "30"), ("a", "11")], true),
        "{\"a\": 11, \"b\" :\"x\",\n \"c\": 30, \"d\": {\"e\": 4}, \"f\": null }"
    );
    assert_eq!(
        replaced(
            obj,
            &[("f", "0"), ("b", "\"y\""), ("a", "2"), ("b", "true")],
            false
        ),
        "{\"a\": 2, \"b\" :true,\n \"c\": [3], \"d\": {\"e\": 4}, \"f\": 0 }"
    );
    assert_eq!(
        replaced(
            obj,
            &[("d", "[]"), ("c", "{}"), ("b", "1"), ("a", "0")],
            false
        ),
        "{\"a\": 0, \"b\" :1,\n \"c\": {}, \"d\": [], \"f\": null }"
    );
    // Every member, in document order and out of it (the one-pass splice,
    // the general one), and a replacement beside an added member (the
    // general one): the same layout.
    for (sets, one_pass) in [
        (
            [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"), ("f", "5")],
            true,
        ),
        (
            [("f", "5"), ("d", "4"), ("c", "3"), ("b", "2"), ("a", "1")],
            false,
        ),
    ] {
        assert_eq!(
            replaced(obj, &sets, one_pass),
            "{\"a\": 1, \"b\" :2,\n \"c\": 3, \"d\": 4, \"f\": 5 }"
        );
    }
    assert_eq!(
        replaced(obj, &[("c", "3"), ("g", "7"), ("a", "1")], false),
        "{\"a\": 1, \"b\" :\"x\",\n \"c\": 3, \"d\": {\"e\": 4}, \"f\": null,\"g\":7 }"
    );
}

#[test]
fn replaced_member_beside_an_edited_child() {
    let input = b"{\"a\": 1, \"d\": {\"e\": 4}, \"f\": 2}";
    let ix = index(input, false);
    let doc = Doc::new(input, &ix);
    let root = doc.root();
    let mut p = P::default();
    set(&mut p, &doc, root, "f", Val::Json("3"));
    set(&mut p, &doc, root, "a", Val::Json("0"));
    let d = doc.field(root, b"d").unwrap();
    let children = [Val::View(d, Some("{\"e\":5}"))];
    let mut h = host(input);
    write_lazy_object(&doc, root, &p, &children, &mut h).unwrap();
    assert_eq!(text(h), "{\"a\": 0, \"d\": {\"e\":5}, \"f\": 3}");
}
