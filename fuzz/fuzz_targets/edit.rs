//! The edit engine (`qjson::edit`): random documents, random edits, the
//! written output against a naive rebuild.
//!
//! A document is generated from a small grammar (objects with repeated and
//! escaped keys, arrays, scalars, random whitespace), parsed strict or
//! lazy, and edited through a host that mirrors the Python views: a lazy
//! object records patches until an edit needs it unfolded, a lazy array
//! unfolds on its first edit, child containers are opened as cached views
//! with their own edits. Beside the engine's state, each view keeps a
//! model of its children (original value, opened view, or new value).
//!
//! Properties:
//! - the output parses (serde_json) and equals the naive rebuild of the
//!   model (every original value as its raw bytes, new values encoded,
//!   compactly; an object edited only inside its children keeps its
//!   other repeated keys), as serde_json reads both;
//! - the output's containers hold the model's keys in the model's order,
//!   each untouched original value byte for byte as in the input, and each
//!   new value equal to what was set;
//! - the same container written through `Plan` (the flat list of pieces
//!   the C ABI carries out) gives the same bytes;
//! - nothing panics.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use qjson::edit::{
    unfold_array, write_clean, write_lazy_array, write_lazy_object, write_members, write_slots,
    EditError, Members, Out, Patches, Piece, Plan, Slot,
};
use qjson::{Cursor, Doc, Index, JsonType, Options};
use serde_json::Value as J;
use std::cell::RefCell;
use std::rc::Rc;

/// Keys as decoded, and an escaped spelling of each.
const KEYS: [(&str, &str); 6] = [
    ("a", "\\u0061"),
    ("b", "b"),
    ("model", "mod\\u0065l"),
    ("x/y", "x\\/y"),
    ("\u{e9}", "\\u00e9"),
    ("", ""),
];
const STRS: [&str; 4] = ["", "hi", "a\\\"b", "\\ud83d\\ude00"];
const WS: [&str; 4] = ["", " ", "\n  ", "\t"];

#[derive(Debug, Arbitrary)]
enum Gen {
    Null,
    Bool(bool),
    Int(i32),
    Float(i16),
    Str(u8),
    Obj(Vec<(u8, bool, Gen)>),
    Arr(Vec<Gen>),
}

#[derive(Debug, Arbitrary)]
enum Small {
    Null,
    Int(i64),
    Str(u8),
    Obj(u8, i8),
    Arr(Vec<i8>),
}

#[derive(Debug, Arbitrary)]
enum Op {
    Set(u8, Small),
    Delete(u8),
    Unfold,
    Open(u8),
    Up,
    Replace(u8, Small),
    Insert(u8, Small),
    Remove(u8),
    Push(Small),
}

#[derive(Debug, Arbitrary)]
struct Input {
    lazy: bool,
    ws: Vec<u8>,
    doc: Gen,
    ops: Vec<Op>,
}

struct Render<'a> {
    out: Vec<u8>,
    ws: &'a [u8],
    n: usize,
}

impl Render<'_> {
    fn ws(&mut self) {
        if !self.ws.is_empty() {
            let w = WS[self.ws[self.n % self.ws.len()] as usize % WS.len()];
            self.n += 1;
            self.out.extend_from_slice(w.as_bytes());
        }
    }

    fn gen(&mut self, g: &Gen, depth: usize) {
        self.ws();
        match g {
            _ if depth > 12 => self.out.extend_from_slice(b"null"),
            Gen::Null => self.out.extend_from_slice(b"null"),
            Gen::Bool(b) => self
                .out
                .extend_from_slice(if *b { b"true" } else { b"false" }),
            Gen::Int(i) => self.out.extend_from_slice(i.to_string().as_bytes()),
            Gen::Float(f) => self
                .out
                .extend_from_slice(format!("{}.5e{}", f, f % 5).as_bytes()),
            Gen::Str(s) => {
                let s = STRS[*s as usize % STRS.len()];
                self.out.extend_from_slice(format!("\"{s}\"").as_bytes());
            }
            Gen::Obj(members) => {
                self.out.push(b'{');
                for (i, (k, escaped, v)) in members.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.ws();
                    let (plain, esc) = KEYS[*k as usize % KEYS.len()];
                    let k = if *escaped { esc } else { plain };
                    self.out.extend_from_slice(format!("\"{k}\"").as_bytes());
                    self.ws();
                    self.out.push(b':');
                    self.gen(v, depth + 1);
                    self.ws();
                }
                if members.is_empty() {
                    self.ws();
                }
                self.out.push(b'}');
            }
            Gen::Arr(items) => {
                self.out.push(b'[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.gen(v, depth + 1);
                    self.ws();
                }
                if items.is_empty() {
                    self.ws();
                }
                self.out.push(b']');
            }
        }
    }
}

fn small(s: &Small) -> J {
    match s {
        Small::Null => J::Null,
        Small::Int(i) => J::from(*i),
        Small::Str(i) => J::from(["", "new", "x/y", "\u{e9}\"\n"][*i as usize % 4]),
        Small::Obj(k, v) => {
            let mut m = serde_json::Map::new();
            m.insert(KEYS[*k as usize % KEYS.len()].0.to_string(), J::from(*v));
            J::Object(m)
        }
        Small::Arr(v) => J::Array(v.iter().map(|&x| J::from(x)).collect()),
    }
}

/// A host value: a new value, or a cached view of an original child.
#[derive(Clone)]
enum Hv {
    New(J),
    View(Rc<RefCell<Node>>),
}

/// What the model says a child is.
enum Item {
    /// The original value, untouched and not opened.
    Orig(Cursor),
    /// An original container opened as a view.
    View(Rc<RefCell<Node>>),
    New(J),
}

// A model of one container's edit state (a lazy object's patch list held
// inline): a few hundred bytes per view do not matter in a fuzz target.
#[allow(clippy::large_enum_variant)]
enum State {
    LazyObj {
        patches: Patches<String, Hv>,
        views: Vec<(usize, Hv)>,
    },
    Members(Members<Hv>),
    LazyArr {
        views: Vec<(usize, Hv)>,
    },
    Slots(Vec<Slot<Hv>>),
}

/// A view: the engine's state for one container, and the model of its
/// children (object members keyed, in order).
struct Node {
    at: Cursor,
    state: State,
    model: Vec<(Option<String>, Item)>,
}

fn cached(views: &[(usize, Hv)], c: Cursor) -> Option<Hv> {
    views
        .iter()
        .find(|(o, _)| *o == c.offset())
        .map(|(_, v)| v.clone())
}

impl Node {
    fn new(doc: &Doc<'_>, at: Cursor) -> Node {
        match doc.type_of(at) {
            JsonType::Object => {
                let mut model = Vec::new();
                for m in doc.distinct_items(at).expect("an object") {
                    let (_, raw, c) = m.expect("a generated document reads");
                    let k = doc.key_str(raw).expect("keys decode").into_owned();
                    model.push((Some(k), Item::Orig(c)));
                }
                Node {
                    at,
                    state: State::LazyObj {
                        patches: Patches::default(),
                        views: Vec::new(),
                    },
                    model,
                }
            }
            _ => Node {
                at,
                state: State::LazyArr { views: Vec::new() },
                model: doc
                    .array_items(at)
                    .expect("an array")
                    .map(|c| (None, Item::Orig(c)))
                    .collect(),
            },
        }
    }

    fn dirty(&self) -> bool {
        let any = |v: &Hv| matches!(v, Hv::View(n) if n.borrow().dirty());
        match &self.state {
            State::LazyObj { patches, views } => {
                !patches.is_empty() || views.iter().any(|(_, v)| any(v))
            }
            State::LazyArr { views } => views.iter().any(|(_, v)| any(v)),
            State::Members(_) | State::Slots(_) => true,
        }
    }

    fn unfold(&mut self, doc: &Doc<'_>) {
        match &mut self.state {
            State::LazyObj { patches, views } => {
                let mut m =
                    Members::unfold_with(doc, self.at, |c| cached(views, c)).expect("unfolds");
                for p in patches.drain() {
                    match p.value {
                        None => {
                            m.remove(&p.key);
                        }
                        Some(v) => m.set(&p.key, v),
                    }
                }
                self.state = State::Members(m);
            }
            State::LazyArr { views } => {
                let s = unfold_array(doc, self.at, |c| cached(views, c)).expect("unfolds");
                self.state = State::Slots(s);
            }
            _ => {}
        }
    }

    fn pos(&self, key: &str) -> Option<usize> {
        self.model
            .iter()
            .position(|(k, _)| k.as_deref() == Some(key))
    }

    fn set(&mut self, doc: &Doc<'_>, key: &str, v: J) {
        let at = self.at;
        match &mut self.state {
            State::LazyObj { patches, .. } => {
                let r: Result<(), ()> = patches.set(
                    || key.to_string(),
                    |k| Ok(k == key),
                    Hv::New(v.clone()),
                    |t| t.field(doc, at, key.as_bytes()),
                );
                r.unwrap();
            }
            State::Members(m) => m.set(key, Hv::New(v.clone())),
            _ => return,
        }
        match self.pos(key) {
            Some(i) => self.model[i].1 = Item::New(v),
            None => self.model.push((Some(key.to_string()), Item::New(v))),
        }
    }

    fn delete(&mut self, doc: &Doc<'_>, key: &str) {
        let at = self.at;
        let done = match &mut self.state {
            State::LazyObj { patches, .. } => {
                let r: Result<bool, ()> = patches.delete(
                    || key.to_string(),
                    |k| Ok(k == key),
                    |t| t.field(doc, at, key.as_bytes()),
                );
                r.unwrap()
            }
            State::Members(m) => m.remove(key).is_some(),
            _ => return,
        };
        let pos = self.pos(key);
        assert_eq!(done, pos.is_some(), "delete of {key:?}");
        if let Some(i) = pos {
            self.model.remove(i);
        }
    }

    /// Open child `pick` (a container, original or opened): its view.
    fn open(&mut self, doc: &Doc<'_>, pick: u8) -> Option<Rc<RefCell<Node>>> {
        let containers: Vec<usize> = (0..self.model.len())
            .filter(|&i| match &self.model[i].1 {
                Item::Orig(c) => matches!(doc.type_of(*c), JsonType::Object | JsonType::Array),
                Item::View(_) => true,
                Item::New(_) => false,
            })
            .collect();
        if containers.is_empty() {
            return None;
        }
        let i = containers[pick as usize % containers.len()];
        let c = match &self.model[i].1 {
            Item::View(n) => return Some(n.clone()),
            Item::Orig(c) => *c,
            Item::New(_) => unreachable!(),
        };
        let n = Rc::new(RefCell::new(Node::new(doc, c)));
        let hv = Hv::View(n.clone());
        match &mut self.state {
            State::LazyObj { views, .. } | State::LazyArr { views } => views.push((c.offset(), hv)),
            State::Members(m) => {
                let key = self.model[i].0.as_deref().expect("a member");
                let pos = m.find(key).expect("present");
                match &mut m.at_mut(pos).slot {
                    Slot::Orig { view, .. } => *view = Some(hv),
                    Slot::New(_) => unreachable!("the model says original"),
                }
            }
            State::Slots(s) => match &mut s[i] {
                Slot::Orig { view, .. } => *view = Some(hv),
                Slot::New(_) => unreachable!("the model says original"),
            },
        }
        self.model[i].1 = Item::View(n.clone());
        Some(n)
    }

    fn array_op(&mut self, doc: &Doc<'_>, op: &Op) {
        if !matches!(self.state, State::LazyArr { .. } | State::Slots(_)) {
            return;
        }
        self.unfold(doc);
        let State::Slots(s) = &mut self.state else {
            unreachable!("unfolded")
        };
        let n = s.len();
        match op {
            Op::Replace(i, v) if n > 0 => {
                let (i, v) = (*i as usize % n, small(v));
                s[i] = Slot::New(Hv::New(v.clone()));
                self.model[i].1 = Item::New(v);
            }
            Op::Insert(i, v) => {
                let (i, v) = (*i as usize % (n + 1), small(v));
                s.insert(i, Slot::New(Hv::New(v.clone())));
                self.model.insert(i, (None, Item::New(v)));
            }
            Op::Remove(i) if n > 0 => {
                let i = *i as usize % n;
                s.remove(i);
                self.model.remove(i);
            }
            Op::Push(v) => {
                let v = small(v);
                s.push(Slot::New(Hv::New(v.clone())));
                self.model.push((None, Item::New(v)));
            }
            _ => {}
        }
    }
}

/// The engine's host: output into a buffer, children written recursively.
struct Host<'d> {
    doc: Doc<'d>,
    out: Vec<u8>,
}

fn edited_cursor(v: &Hv) -> Option<Cursor> {
    match v {
        Hv::View(n) => {
            let n = n.borrow();
            n.dirty().then_some(n.at)
        }
        Hv::New(_) => None,
    }
}

fn json_key(k: &str) -> Vec<u8> {
    serde_json::to_vec(k).expect("a str encodes")
}

impl Out for Host<'_> {
    type Key = String;
    type Value = Hv;
    type Error = EditError;
    fn copy(&mut self, a: usize, b: usize) {
        self.out.extend_from_slice(&self.doc.input()[a..b]);
    }
    fn byte(&mut self, b: u8) {
        self.out.push(b);
    }
    fn key_text(&mut self, key: &str) {
        self.out.extend_from_slice(&json_key(key));
    }
    fn key(&mut self, key: &String) -> Result<(), EditError> {
        self.key_text(key);
        Ok(())
    }
    fn value(&mut self, v: &Hv) -> Result<(), EditError> {
        match v {
            Hv::New(j) => serde_json::to_writer(&mut self.out, j).expect("encodes"),
            Hv::View(_) => panic!("a view is never a new value here"),
        }
        Ok(())
    }
    fn child(&mut self, v: &Hv) -> Result<(), EditError> {
        match v {
            Hv::View(n) => {
                let doc = self.doc;
                write_node(&doc, &n.borrow(), self)
            }
            Hv::New(_) => panic!("only views are children"),
        }
    }
    fn edited(&mut self, v: &Hv) -> Result<Option<Cursor>, EditError> {
        Ok(edited_cursor(v))
    }
    fn fail(&mut self, e: EditError) -> EditError {
        e
    }
}

fn write_node<O: Out<Key = String, Value = Hv>>(
    doc: &Doc<'_>,
    n: &Node,
    out: &mut O,
) -> Result<(), O::Error> {
    match &n.state {
        State::LazyObj { patches, views } => {
            write_lazy_object(doc, n.at, patches, views.iter().map(|(_, v)| v), out)
        }
        State::Members(m) => write_members(doc, n.at, m, out),
        State::LazyArr { views } => write_lazy_array(doc, n.at, views.iter().map(|(_, v)| v), out),
        State::Slots(s) => write_slots(doc, n.at, s, out),
    }
}

/// The same container written through a `Plan`, its pieces carried out.
fn run_plan(doc: &Doc<'_>, n: &Node, out: &mut Vec<u8>) -> Result<(), EditError> {
    let mut plan: Plan<String, Hv, _> = Plan::new(edited_cursor);
    write_node(doc, n, &mut plan)?;
    for p in plan.pieces() {
        match p {
            Piece::Copy(a, b) => out.extend_from_slice(&doc.input()[*a..*b]),
            Piece::Bytes(a, b) => out.extend_from_slice(&plan.bytes()[*a..*b]),
            Piece::KeyText(a, b) => out.extend_from_slice(&json_key(&plan.text()[*a..*b])),
            Piece::Key(k) => out.extend_from_slice(&json_key(k)),
            Piece::Value(Hv::New(j)) => serde_json::to_writer(&mut *out, j).expect("encodes"),
            Piece::Child(Hv::View(c)) => run_plan(doc, &c.borrow(), out)?,
            _ => panic!("a view as a value, or a new value as a child"),
        }
    }
    Ok(())
}

/// The naive rebuild: compact, original values as their raw bytes; a
/// container with edits holds each key once (the first occurrence),
/// except an object edited only inside its children ([`as_written`]).
fn naive(doc: &Doc<'_>, n: &Node, out: &mut Vec<u8>) {
    // A view without edits is its original bytes (repeated keys and all).
    if !n.dirty() {
        out.extend_from_slice(doc.raw(n.at));
        return;
    }
    if as_written(doc, n, out) {
        return;
    }
    let obj = doc.type_of(n.at) == JsonType::Object;
    out.push(if obj { b'{' } else { b'[' });
    for (i, (k, item)) in n.model.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if let Some(k) = k {
            out.extend_from_slice(&json_key(k));
            out.push(b':');
        }
        match item {
            Item::Orig(c) => out.extend_from_slice(doc.raw(*c)),
            Item::View(c) => naive(doc, &c.borrow(), out),
            Item::New(j) => serde_json::to_writer(&mut *out, j).expect("encodes"),
        }
    }
    out.push(if obj { b'}' } else { b']' });
}

/// An object of a strict document with no patch of its own, edited only
/// inside child views whose keys do not repeat: the writer keeps its other
/// members as written, a repeated key included, so the rebuild lists every
/// member in order (the first occurrence of an edited child's key as its
/// rebuild); false, with nothing written, for any other container.
fn as_written(doc: &Doc<'_>, n: &Node, out: &mut Vec<u8>) -> bool {
    match &n.state {
        State::LazyObj { patches, .. } if patches.is_empty() && !doc.index().is_lazy() => {}
        _ => return false,
    }
    let items: Vec<(String, Cursor)> = doc
        .object_items(n.at)
        .expect("an object")
        .map(|(raw, c)| (doc.key_str(raw).expect("keys decode").into_owned(), c))
        .collect();
    let repeats = |k: &str| items.iter().filter(|(x, _)| x == k).count() > 1;
    let edited_repeat = n.model.iter().any(|(k, item)| {
        matches!(item, Item::View(v) if v.borrow().dirty()) && k.as_deref().is_some_and(&repeats)
    });
    if edited_repeat {
        return false;
    }
    out.push(b'{');
    for (i, (k, c)) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&json_key(k));
        out.push(b':');
        let first = !items[..i].iter().any(|(x, _)| x == k);
        let item = n.model.iter().find(|(x, _)| x.as_deref() == Some(k));
        match item {
            Some((_, Item::View(v))) if first => naive(doc, &v.borrow(), out),
            _ => out.extend_from_slice(doc.raw(*c)),
        }
    }
    out.push(b'}');
    true
}

fn serde_parse(data: &[u8]) -> J {
    let mut de = serde_json::Deserializer::from_slice(data);
    de.disable_recursion_limit();
    let v = serde::Deserialize::deserialize(&mut de).expect("the output is JSON");
    de.end().expect("nothing after the value");
    v
}

/// The output's container at `at` against the model: keys in order,
/// untouched values byte for byte, new values equal.
fn compare(doc: &Doc<'_>, n: &Node, od: &Doc<'_>, at: Cursor) {
    let children: Vec<(Option<String>, Cursor)> = if doc.type_of(n.at) == JsonType::Object {
        od.distinct_items(at)
            .expect("an object in the output")
            .map(|m| {
                let (_, raw, c) = m.expect("reads");
                (Some(od.key_str(raw).expect("decodes").into_owned()), c)
            })
            .collect()
    } else {
        od.array_items(at)
            .expect("an array in the output")
            .map(|c| (None, c))
            .collect()
    };
    let keys: Vec<_> = children.iter().map(|(k, _)| k.clone()).collect();
    let want: Vec<_> = n.model.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(keys, want, "keys in order");
    for ((_, c), (_, item)) in children.iter().zip(&n.model) {
        match item {
            Item::Orig(o) => assert_eq!(od.raw(*c), doc.raw(*o), "untouched bytes"),
            Item::View(v) => compare(doc, &v.borrow(), od, *c),
            Item::New(j) => assert_eq!(&serde_parse(od.raw(*c)), j, "new value"),
        }
    }
}

fn run(input: &Input) {
    let mut r = Render {
        out: Vec::new(),
        ws: &input.ws,
        n: 0,
    };
    r.gen(&input.doc, 0);
    r.ws();
    let bytes = r.out;
    let opts = Options {
        lazy: input.lazy,
        ..Options::default()
    };
    let index = Index::build(&bytes, &opts).expect("a generated document parses");
    let doc = Doc::new(&bytes, &index);
    let root = doc.root();
    if !matches!(doc.type_of(root), JsonType::Object | JsonType::Array) {
        return;
    }
    let top = Rc::new(RefCell::new(Node::new(&doc, root)));
    let mut path = vec![top.clone()];
    for op in input.ops.iter().take(64) {
        let cur = path.last().expect("the root stays").clone();
        let mut n = cur.borrow_mut();
        match op {
            Op::Set(k, v) => n.set(&doc, KEYS[*k as usize % KEYS.len()].0, small(v)),
            Op::Delete(k) => n.delete(&doc, KEYS[*k as usize % KEYS.len()].0),
            Op::Unfold => n.unfold(&doc),
            Op::Open(p) => {
                if let Some(c) = n.open(&doc, *p) {
                    drop(n);
                    path.push(c);
                }
            }
            Op::Up => {
                drop(n);
                if path.len() > 1 {
                    path.pop();
                }
            }
            op => n.array_op(&doc, op),
        }
    }
    drop(path);

    let top = top.borrow();
    let mut host = Host {
        doc,
        out: Vec::new(),
    };
    if top.dirty() {
        write_node(&doc, &top, &mut host).expect("writes");
    } else {
        write_clean(&doc, root, &mut host).expect("writes");
        assert_eq!(host.out, bytes, "a clean document is its input");
    }
    let out = host.out;

    let mut want = Vec::new();
    naive(&doc, &top, &mut want);
    assert_eq!(serde_parse(&out), serde_parse(&want), "the naive rebuild");

    let oi = Index::build(&out, &Options::default()).expect("the output is strict JSON");
    let od = Doc::new(&out, &oi);
    compare(&doc, &top, &od, od.root());

    if top.dirty() {
        let mut planned = Vec::new();
        run_plan(&doc, &top, &mut planned).expect("plans");
        assert_eq!(planned, out, "the plan writes what the writer writes");
    }
}

fuzz_target!(|input: Input| run(&input));
