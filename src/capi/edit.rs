//! Edits for hosts that keep their own values (qjson.lua's proxies): the
//! overlay of one object or array of a document, and the plan that writes
//! it (`qjson_edit_*`).
//!
//! # Model
//!
//! The host keeps the values it sets; an edit state ([`Edit`], one per
//! edited container) keeps *what* changed, naming each host value by an id
//! (> 0) the host chose. The rules are those of the Python views
//! (`src/python/view.rs`, `src/python/view/patch.rs`), so that the same
//! edits give the same bytes from both hosts:
//!
//! - **objects** keep a patch list: a *replacement* or *deletion* of an
//!   original member (the first occurrence of its key), or an *added* key.
//!   The state of a key is its last patch; setting a key deleted from the
//!   original adds it anew, at the end (as a dict does); deleting an added
//!   key removes its patch.
//! - **arrays** stay lazy until the first change, which unfolds them into
//!   one slot per element: an original element (ordinal, cursor) or a host
//!   value. Inserts and removals move slots.
//!
//! # Writing
//!
//! [`qjson_edit_plan`] turns a state, plus the host's *dirty child views*
//! (cached child containers with edits of their own, given as cursors),
//! into segments: byte ranges (into the input, or into literal bytes the
//! state owns) and host values or child views for the host to write in
//! between. O(segments) FFI work for the host, however large the copied
//! ranges. As the Python writer:
//!
//! - a state with no changes and no dirty views is one copy of the value
//!   (the root: the whole input, surrounding whitespace included);
//! - a lazy array of a strict document is its own bytes with each dirty
//!   view's span replaced; a lazy object of a strict document whose keys
//!   are distinct and whose patches only replace or add is its own bytes
//!   with each replaced value and dirty view replaced and the added members
//!   written after the last original one (`,"key":` value);
//! - otherwise the container is written child by child: each run of
//!   untouched children with consecutive original ordinals is one copy
//!   from the first child's start (a member's key quote) to the last one's
//!   end, separators and whitespace included; a replaced member keeps its
//!   key and colon as written (strict documents); new members get their
//!   key written compactly (JSON escapes, `/` kept); children are joined
//!   by `,`.
//!
//! In a lazy document (`lazy = 1`) nothing was validated, so each original
//! value is validated before it is copied (as Python does).

use super::handle::{handle, Handle};
use super::read::{put, CCursor};
use super::status::{guard, Fail, Status};
use crate::doc::{Cursor, Doc};
use crate::encode::escape::write_str;
use crate::error::JsonType;
use crate::index::{Index, Options};
use std::ffi::{c_char, c_int};

/// A segment kind: bytes at `p`, `len` long.
const SEG_BYTES: u32 = 0;
/// A segment kind: the host value `id`.
const SEG_VALUE: u32 = 1;
/// A segment kind: the dirty child view given at position `id` (0-based).
const SEG_VIEW: u32 = 2;

/// One step of a plan (`qjson_seg`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Seg {
    pub p: *const c_char,
    pub len: usize,
    pub kind: u32,
    pub id: u32,
}

/// An object patch: `orig` is the original member's value it replaces or
/// deletes (`None`: an added key); `id` the host value (0: deleted).
#[derive(Clone)]
struct Patch {
    key: Box<[u8]>,
    orig: Option<Cursor>,
    id: u32,
}

/// A slot of an unfolded array.
#[derive(Clone, Copy)]
enum Slot {
    Orig(u32, Cursor),
    Host(u32),
}

/// The edit state of one container (`qjson_edit`).
#[derive(Clone)]
pub struct Edit {
    at: Cursor,
    object: bool,
    patches: Vec<Patch>,
    slots: Option<Vec<Slot>>,
    /// The last plan: segments (literal ones point into `lits` once done).
    segs: Vec<Seg>,
    lits: Vec<u8>,
}

/// A plan being built: input ranges, literal bytes (offsets into `lits`
/// until [`Plan::finish`]) and host values.
struct Plan<'d, 'e> {
    doc: Doc<'d>,
    lazy: bool,
    segs: &'e mut Vec<Seg>,
    lits: &'e mut Vec<u8>,
    /// For each segment, whether it is literal (its `p` is an offset).
    literal: Vec<bool>,
    /// Dirty child views: (value offset, position given by the host),
    /// sorted by offset.
    views: Vec<(u32, u32)>,
}

impl<'d> Plan<'d, '_> {
    fn raw(&mut self, a: usize, b: usize) {
        if a >= b {
            return;
        }
        let p = self.doc.input()[a..].as_ptr().cast::<c_char>();
        if let (Some(last), Some(false)) = (self.segs.last_mut(), self.literal.last()) {
            // SAFETY: `last.p` points into the input, `last.len` bytes long.
            if last.kind == SEG_BYTES && unsafe { last.p.add(last.len) } == p {
                last.len += b - a;
                return;
            }
        }
        self.segs.push(Seg {
            p,
            len: b - a,
            kind: SEG_BYTES,
            id: 0,
        });
        self.literal.push(false);
    }

    /// Literal bytes written by `f` into `lits`.
    fn lit(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        let a = self.lits.len();
        f(self.lits);
        let n = self.lits.len() - a;
        if let (Some(last), Some(true)) = (self.segs.last_mut(), self.literal.last()) {
            if last.kind == SEG_BYTES && last.p as usize + last.len == a {
                last.len += n;
                return;
            }
        }
        self.segs.push(Seg {
            p: a as *const c_char,
            len: n,
            kind: SEG_BYTES,
            id: 0,
        });
        self.literal.push(true);
    }

    fn byte(&mut self, c: u8) {
        self.lit(|l| l.push(c));
    }

    fn key(&mut self, k: &[u8]) {
        self.lit(|l| {
            write_str(l, k);
            l.push(b':');
        });
    }

    fn host(&mut self, kind: u32, id: u32) {
        self.segs.push(Seg {
            p: std::ptr::null(),
            len: 0,
            kind,
            id,
        });
        self.literal.push(false);
    }

    fn view(&self, c: Cursor) -> Option<u32> {
        self.views
            .binary_search_by_key(&c.start, |&(s, _)| s)
            .ok()
            .map(|i| self.views[i].1)
    }

    /// Validate `input[a..b]` in a lazy document.
    fn check(&self, a: usize, b: usize) -> Result<(), Fail> {
        if !self.lazy {
            return Ok(());
        }
        let opts = Options {
            lazy: false,
            max_depth: usize::MAX,
        };
        match Index::build(&self.doc.input()[a..b], &opts) {
            Ok(_) => Ok(()),
            Err(mut e) => {
                e.offset += a;
                Err(Fail::Json(e))
            }
        }
    }

    /// Literal segments get their pointers.
    fn finish(self) {
        let base = self.lits.as_ptr();
        for (s, &lit) in self.segs.iter_mut().zip(&self.literal) {
            if lit {
                // SAFETY: a literal segment's `p` holds its offset into
                // `lits`, and offset + len <= lits.len().
                s.p = unsafe { base.add(s.p as usize) }.cast();
            }
        }
    }
}

/// The children of a container written one by one, untouched neighbours
/// coalesced (Python's `Runs`).
struct Runs {
    /// The pending run: its first byte, its last child, that one's ordinal.
    run: Option<(usize, Cursor, u32)>,
    first: bool,
}

impl Runs {
    fn new() -> Runs {
        Runs {
            run: None,
            first: true,
        }
    }

    fn flush(&mut self, p: &mut Plan<'_, '_>) {
        if let Some((a, last, _)) = self.run.take() {
            let (_, b) = p.doc.span(last);
            p.raw(a, b);
        }
    }

    fn comma(&mut self, p: &mut Plan<'_, '_>) {
        if !self.first {
            p.byte(b',');
        }
        self.first = false;
    }

    /// Original child `i` whose bytes start at `a` (a member: its key's
    /// quote) and whose value is `at`.
    fn orig(&mut self, p: &mut Plan<'_, '_>, i: u32, a: usize, at: Cursor) -> Result<(), Fail> {
        if let Some(v) = p.view(at) {
            self.flush(p);
            self.comma(p);
            p.raw(a, at.start as usize);
            p.host(SEG_VIEW, v);
            return Ok(());
        }
        if p.lazy {
            let (s, b) = p.doc.span(at);
            p.check(s, b)?;
        }
        match self.run {
            Some((s, _, last)) if last + 1 == i => self.run = Some((s, at, i)),
            _ => {
                self.flush(p);
                self.comma(p);
                self.run = Some((a, at, i));
            }
        }
        Ok(())
    }

    /// A new value for an original member whose key (from its quote at `a`
    /// to its value at `b`) is copied as written.
    fn replaced(&mut self, p: &mut Plan<'_, '_>, a: usize, b: usize, id: u32) {
        self.flush(p);
        self.comma(p);
        p.raw(a, b);
        p.host(SEG_VALUE, id);
    }

    /// A new value (with its key in objects).
    fn fresh(&mut self, p: &mut Plan<'_, '_>, key: Option<&[u8]>, id: u32) {
        self.flush(p);
        self.comma(p);
        if let Some(k) = key {
            p.key(k);
        }
        p.host(SEG_VALUE, id);
    }
}

impl Edit {
    fn new(doc: &Doc<'_>, at: Cursor) -> Result<Edit, Fail> {
        let object = match doc.type_of(at) {
            JsonType::Object => true,
            JsonType::Array => false,
            _ => return Err(Fail::Arg("not an object or array")),
        };
        Ok(Edit {
            at,
            object,
            patches: Vec::new(),
            slots: None,
            segs: Vec::new(),
            lits: Vec::new(),
        })
    }

    fn changed(&self) -> bool {
        if self.object {
            !self.patches.is_empty()
        } else {
            self.slots.is_some()
        }
    }

    fn last(&self, key: &[u8]) -> Option<usize> {
        self.patches.iter().rposition(|p| &*p.key == key)
    }

    fn set(&mut self, doc: &Doc<'_>, key: &[u8], id: u32) {
        let orig = match self.last(key) {
            Some(i) if self.patches[i].id != 0 => {
                self.patches[i].id = id;
                return;
            }
            Some(_) => None,
            None => doc.field(self.at, key),
        };
        self.patches.push(Patch {
            key: key.into(),
            orig,
            id,
        });
    }

    fn delete(&mut self, doc: &Doc<'_>, key: &[u8]) -> bool {
        match self.last(key) {
            Some(i) => match (self.patches[i].orig, self.patches[i].id) {
                (_, 0) => false,
                (Some(_), _) => {
                    self.patches[i].id = 0;
                    true
                }
                (None, _) => {
                    self.patches.remove(i);
                    true
                }
            },
            None => match doc.field(self.at, key) {
                Some(c) => {
                    self.patches.push(Patch {
                        key: key.into(),
                        orig: Some(c),
                        id: 0,
                    });
                    true
                }
                None => false,
            },
        }
    }

    fn for_original(&self, c: Cursor) -> Option<&Patch> {
        self.patches
            .iter()
            .find(|p| p.orig.is_some_and(|o| o.start == c.start))
    }

    fn slots(&mut self, doc: &Doc<'_>) -> Result<&mut Vec<Slot>, Fail> {
        if self.slots.is_none() {
            let items = doc.array_items(self.at)?;
            let slots = items
                .enumerate()
                .map(|(i, c)| Slot::Orig(i as u32, c))
                .collect();
            self.slots = Some(slots);
        }
        Ok(self.slots.as_mut().expect("unfolded above"))
    }

    fn len(&self, doc: &Doc<'_>) -> Result<usize, Fail> {
        if self.object {
            return Err(Fail::Arg("not an array"));
        }
        Ok(match &self.slots {
            Some(s) => s.len(),
            None => doc.len(self.at)?,
        })
    }

    fn plan(&mut self, doc: Doc<'_>, views: Vec<(u32, u32)>) -> Result<(), Fail> {
        let mut segs = std::mem::take(&mut self.segs);
        let mut lits = std::mem::take(&mut self.lits);
        segs.clear();
        lits.clear();
        let mut p = Plan {
            doc,
            lazy: doc.index().is_lazy(),
            segs: &mut segs,
            lits: &mut lits,
            literal: Vec::new(),
            views,
        };
        let r = if !self.changed() && p.views.is_empty() {
            let (a, b) = if self.at == doc.root() {
                (0, doc.input().len())
            } else {
                doc.span(self.at)
            };
            p.check(a, b).map(|()| p.raw(a, b))
        } else if self.object {
            self.plan_object(&mut p)
        } else {
            self.plan_array(&mut p)
        };
        if r.is_ok() {
            p.finish();
        }
        self.segs = segs;
        self.lits = lits;
        r
    }

    fn plan_object(&self, p: &mut Plan<'_, '_>) -> Result<(), Fail> {
        let doc = p.doc;
        let at = self.at;
        if !p.lazy && self.patches.iter().all(|x| x.id != 0) && doc.keys_unique(at)? {
            return self.splice_object(p);
        }
        let base = doc.input().as_ptr() as usize;
        p.byte(b'{');
        let mut runs = Runs::new();
        for m in doc.distinct_items(at)? {
            let (i, raw, c) = m?;
            let key_at = raw.as_ptr() as usize - base - 1;
            match self.for_original(c) {
                Some(x) if x.id != 0 => {
                    if p.lazy {
                        runs.fresh(p, Some(&x.key), x.id);
                    } else {
                        runs.replaced(p, key_at, c.start as usize, x.id);
                    }
                }
                Some(_) => {}
                None => runs.orig(p, i, key_at, c)?,
            }
        }
        for x in &self.patches {
            if x.orig.is_none() && x.id != 0 {
                runs.fresh(p, Some(&x.key), x.id);
            }
        }
        runs.flush(p);
        p.byte(b'}');
        Ok(())
    }

    /// Python's `splice_object`: the object's bytes with the edits spliced.
    fn splice_object(&self, p: &mut Plan<'_, '_>) -> Result<(), Fail> {
        let doc = p.doc;
        let at = self.at;
        // (value replaced, segment kind, id)
        let mut edits: Vec<(Cursor, u32, u32)> = Vec::new();
        for x in &self.patches {
            if let Some(c) = x.orig {
                edits.push((c, SEG_VALUE, x.id));
            }
        }
        for m in doc.object_items(at)? {
            let c = m.1;
            if let Some(v) = p.view(c) {
                if self.for_original(c).is_none() {
                    edits.push((c, SEG_VIEW, v));
                }
            }
        }
        edits.sort_unstable_by_key(|&(c, ..)| c.start);
        let (mut pos, end) = doc.span(at);
        for (c, kind, id) in edits {
            p.raw(pos, c.start as usize);
            p.host(kind, id);
            pos = doc.span(c).1;
        }
        let mut added = self.patches.iter().filter(|x| x.orig.is_none()).peekable();
        if added.peek().is_some() {
            let tail = doc.children_end(at)?;
            p.raw(pos, tail);
            pos = tail;
            let mut first = doc.len(at)? == 0;
            for x in added {
                if !first {
                    p.byte(b',');
                }
                first = false;
                p.key(&x.key);
                p.host(SEG_VALUE, x.id);
            }
        }
        p.raw(pos, end);
        Ok(())
    }

    fn plan_array(&self, p: &mut Plan<'_, '_>) -> Result<(), Fail> {
        let doc = p.doc;
        let at = self.at;
        match &self.slots {
            None if !p.lazy => {
                // Python's `splice_views`.
                let mut dirty: Vec<(Cursor, u32)> = Vec::new();
                for c in doc.array_items(at)? {
                    if let Some(v) = p.view(c) {
                        dirty.push((c, v));
                    }
                }
                let (mut pos, end) = doc.span(at);
                for (c, v) in dirty {
                    p.raw(pos, c.start as usize);
                    p.host(SEG_VIEW, v);
                    pos = doc.span(c).1;
                }
                p.raw(pos, end);
            }
            None => {
                p.byte(b'[');
                let mut runs = Runs::new();
                for (i, c) in doc.array_items(at)?.enumerate() {
                    runs.orig(p, i as u32, c.start as usize, c)?;
                }
                runs.flush(p);
                p.byte(b']');
            }
            Some(slots) => {
                p.byte(b'[');
                let mut runs = Runs::new();
                for s in slots {
                    match *s {
                        Slot::Orig(i, c) => runs.orig(p, i, c.start as usize, c)?,
                        Slot::Host(id) => runs.fresh(p, None, id),
                    }
                }
                runs.flush(p);
                p.byte(b']');
            }
        }
        Ok(())
    }
}

// ------------------------------------------------------------------ exports

/// The edit state behind a pointer from C.
///
/// # Safety
/// `e` is null or a live pointer from `qjson_edit_new` / `qjson_edit_clone`.
unsafe fn state<'e>(e: *mut Edit) -> Result<&'e mut Edit, Fail> {
    // SAFETY: per the contract, a non-null `e` is live and not aliased
    // during the call.
    unsafe { e.as_mut() }.ok_or(Fail::Arg("null edit state"))
}

/// `len` bytes at `s` (a key).
///
/// # Safety
/// `s` points to `len` readable bytes (or `len` is 0).
unsafe fn bytes<'a>(s: *const c_char, len: usize) -> Result<&'a [u8], Fail> {
    if len == 0 {
        return Ok(&[]);
    }
    if s.is_null() {
        return Err(Fail::Arg("null key"));
    }
    // SAFETY: per the contract, `s` points to `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(s.cast::<u8>(), len) })
}

fn host_id(id: u32) -> Result<u32, Fail> {
    if id == 0 {
        return Err(Fail::Arg("host value ids start at 1"));
    }
    Ok(id)
}

/// A new, empty edit state for the object or array at `at` of `doc`.
///
/// # Safety
/// `doc` is a live handle, `at` a valid cursor of it, `out` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_new(
    doc: *const Handle,
    at: *const CCursor,
    out: *mut *mut Edit,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let d = unsafe { handle(doc) }?.doc();
        // SAFETY: `at` is null or valid, per the contract.
        let at = unsafe { at.as_ref() }
            .ok_or(Fail::Arg("null cursor"))?
            .core();
        let e = Box::new(Edit::new(&d, at)?);
        // SAFETY: `out` is writable per the contract (`put` checks null).
        unsafe { put(out, Box::into_raw(e)) }?;
        Ok(Status::Ok)
    })
}

/// A copy of an edit state (to put back if a patch fails).
///
/// # Safety
/// `e` is a live edit state, `out` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_clone(e: *mut Edit, out: *mut *mut Edit) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let e = unsafe { state(e) }?;
        let mut c = Box::new(e.clone());
        c.segs = Vec::new();
        c.lits = Vec::new();
        // SAFETY: `out` is writable per the contract (`put` checks null).
        unsafe { put(out, Box::into_raw(c)) }?;
        Ok(Status::Ok)
    })
}

/// Destroy an edit state (null is ignored).
///
/// # Safety
/// `e` is null or a live edit state, freed once.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_free(e: *mut Edit) {
    if !e.is_null() {
        // SAFETY: per the contract, `e` came from `Box::into_raw` and is
        // freed once.
        let _ = std::panic::catch_unwind(|| drop(unsafe { Box::from_raw(e) }));
    }
}

/// 1 when the state holds changes of its own (patches, or an unfolded
/// array), 0 when not (or for null).
///
/// # Safety
/// `e` is null or a live edit state.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_changed(e: *const Edit) -> c_int {
    // SAFETY: per the contract, `e` is null or live.
    match unsafe { e.as_ref() } {
        Some(e) => c_int::from(e.changed()),
        None => 0,
    }
}

/// Arrays: number of elements now.
///
/// # Safety
/// `doc` is the live handle `e` was made for; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_len(
    doc: *const Handle,
    e: *mut Edit,
    out: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let (d, e) = (unsafe { handle(doc) }?.doc(), unsafe { state(e) }?);
        let n = e.len(&d)?;
        // SAFETY: `out` is writable per the contract.
        unsafe { put(out, n) }?;
        Ok(Status::Ok)
    })
}

/// Objects: set `key` to host value `id` (> 0).
///
/// # Safety
/// `doc` is the live handle `e` was made for; `key` points to `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_set(
    doc: *const Handle,
    e: *mut Edit,
    key: *const c_char,
    len: usize,
    id: u32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let (d, e) = (unsafe { handle(doc) }?.doc(), unsafe { state(e) }?);
        if !e.object {
            return Err(Fail::Arg("not an object"));
        }
        // SAFETY: forwarded from the contract.
        let key = unsafe { bytes(key, len) }?;
        e.set(&d, key, host_id(id)?);
        Ok(Status::Ok)
    })
}

/// Objects: delete `key`; `QJSON_NOT_FOUND` when it is absent.
///
/// # Safety
/// `doc` is the live handle `e` was made for; `key` points to `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_delete(
    doc: *const Handle,
    e: *mut Edit,
    key: *const c_char,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let (d, e) = (unsafe { handle(doc) }?.doc(), unsafe { state(e) }?);
        if !e.object {
            return Err(Fail::Arg("not an object"));
        }
        // SAFETY: forwarded from the contract.
        let key = unsafe { bytes(key, len) }?;
        Ok(if e.delete(&d, key) {
            Status::Ok
        } else {
            Status::NotFound
        })
    })
}

/// The array state and slot position `i` (0-based; `i == len` allowed
/// when `insert`).
fn slot_at<'e>(
    d: &Doc<'_>,
    e: &'e mut Edit,
    i: usize,
    insert: bool,
) -> Result<&'e mut Vec<Slot>, Fail> {
    if e.object {
        return Err(Fail::Arg("not an array"));
    }
    let slots = e.slots(d)?;
    if i > slots.len() || (i == slots.len() && !insert) {
        return Err(Fail::Arg("array position out of range"));
    }
    Ok(slots)
}

/// Arrays: what slot `i` (0-based) holds: `*out` >= 0 is the ordinal of an
/// original element, < 0 the host value `-*out`. Reads a lazy array
/// without unfolding it.
///
/// # Safety
/// `doc` is the live handle `e` was made for; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_slot(
    doc: *const Handle,
    e: *mut Edit,
    i: usize,
    out: *mut i64,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let (d, e) = (unsafe { handle(doc) }?.doc(), unsafe { state(e) }?);
        if e.object {
            return Err(Fail::Arg("not an array"));
        }
        let v = match &e.slots {
            Some(s) => match s.get(i) {
                Some(Slot::Orig(o, _)) => i64::from(*o),
                Some(Slot::Host(id)) => -i64::from(*id),
                None => return Ok(Status::NotFound),
            },
            None if i < d.len(e.at)? => i as i64,
            None => return Ok(Status::NotFound),
        };
        // SAFETY: `out` is writable per the contract.
        unsafe { put(out, v) }?;
        Ok(Status::Ok)
    })
}

/// Arrays: slot `i` (0-based) becomes host value `id`.
///
/// # Safety
/// `doc` is the live handle `e` was made for.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_put(
    doc: *const Handle,
    e: *mut Edit,
    i: usize,
    id: u32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let (d, e) = (unsafe { handle(doc) }?.doc(), unsafe { state(e) }?);
        let id = host_id(id)?;
        slot_at(&d, e, i, false)?[i] = Slot::Host(id);
        Ok(Status::Ok)
    })
}

/// Arrays: insert host value `id` before slot `i` (`i == len` appends).
///
/// # Safety
/// `doc` is the live handle `e` was made for.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_insert(
    doc: *const Handle,
    e: *mut Edit,
    i: usize,
    id: u32,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let (d, e) = (unsafe { handle(doc) }?.doc(), unsafe { state(e) }?);
        let id = host_id(id)?;
        slot_at(&d, e, i, true)?.insert(i, Slot::Host(id));
        Ok(Status::Ok)
    })
}

/// Arrays: remove slot `i` (0-based).
///
/// # Safety
/// `doc` is the live handle `e` was made for.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_remove(doc: *const Handle, e: *mut Edit, i: usize) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let (d, e) = (unsafe { handle(doc) }?.doc(), unsafe { state(e) }?);
        slot_at(&d, e, i, false)?.remove(i);
        Ok(Status::Ok)
    })
}

/// Plan the writing of the container (see the module docs): `views` are
/// the cursors of its dirty child views (`nviews` of them; a `SEG_VIEW`
/// segment's id is a position in this list). The segments (`*segs`,
/// `*nsegs`) stay valid until the next plan or the free of `e`; the
/// byte segments point into the input or into `e`.
///
/// # Safety
/// `doc` is the live handle `e` was made for; `views` points to `nviews`
/// cursors (or `nviews` is 0); `segs` and `nsegs` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_plan(
    doc: *const Handle,
    e: *mut Edit,
    views: *const CCursor,
    nviews: usize,
    segs: *mut *const Seg,
    nsegs: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let (d, e) = (unsafe { handle(doc) }?.doc(), unsafe { state(e) }?);
        let given: &[CCursor] = if nviews == 0 {
            &[]
        } else if views.is_null() {
            return Err(Fail::Arg("null views"));
        } else {
            // SAFETY: per the contract, `views` points to `nviews` cursors.
            unsafe { std::slice::from_raw_parts(views, nviews) }
        };
        let mut v: Vec<(u32, u32)> = given
            .iter()
            .enumerate()
            .map(|(i, c)| (c.start, i as u32))
            .collect();
        v.sort_unstable();
        e.plan(d, v)?;
        // SAFETY: writable per the contract.
        unsafe { put(segs, e.segs.as_ptr()) }?;
        // SAFETY: writable per the contract.
        unsafe { put(nsegs, e.segs.len()) }?;
        Ok(Status::Ok)
    })
}
