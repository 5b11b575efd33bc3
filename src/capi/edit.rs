//! The edit engine (`src/edit/`) for hosts that keep their own values
//! (qjson.lua's proxies): one edit state per edited object or array, and
//! its output as a flat plan (`qjson_edit_*`).
//!
//! # Model
//!
//! The host keeps the values it sets; an edit state ([`Edit`]) keeps what
//! changed, in the engine's types, naming each host value by an id (> 0)
//! the host chose:
//!
//! - **objects** keep the engine's [`Patches`] (keys are the host's bytes):
//!   a replacement or deletion of an original member, or an added key; the
//!   state of a key is its last patch. Setting a key deleted from the
//!   original adds it anew at the end (as a dict does); deleting an added
//!   key removes its patch. Lua never needs the unfolded form (`Members`).
//!   The edits look the original members up through the patches'
//!   [`MemberTable`](crate::edit::MemberTable), as Python's do: the first
//!   lookup walks the keys once (checking on the way that they are
//!   distinct), and the writer then splices without its own walk
//!   (`Doc::keys_unique`: ~490 instructions of a 2 KB request's set).
//! - **arrays** stay lazy until the first change, which unfolds them into
//!   the engine's [`Slot`]s: an original element or a host value. Inserts
//!   and removals move slots.
//!
//! A state can keep one copy of its edits (`qjson_edit_save`) and go back
//! to it (`qjson_edit_restore`): a host makes a sequence of edits atomic
//! (a JSON Patch whose last op fails) with a save per container it
//! changes, and nothing to free when the sequence succeeds.
//!
//! # Writing
//!
//! [`qjson_edit_plan`] runs the engine's writer for the container's shape
//! (`write_clean`, `write_lazy_object`, `write_lazy_array`, `write_slots`)
//! into a [`Plan`] of segments: byte ranges (into the input, or into the
//! punctuation and keys the plan owns) and host values or dirty child
//! views for the host to write in between. The dirty child views (cached
//! child containers with edits of their own) are given by the host as
//! cursors for each plan: the engine asks [`Out::edited`] about them and
//! places each where it belongs. The host's work per container is one
//! call plus a loop over O(edits) segments, however large the copied
//! ranges: the bytes are those Python's views write for the same edits
//! (the engine decides splicing, runs of untouched members, keys and
//! whitespace as written), except the host values, which the host encodes.

use super::handle::{handle, Handle};
use super::read::{key_bytes, put, CCursor};
use super::status::{guard, Fail, Status};
use crate::doc::{Cursor, Doc};
use crate::edit::{
    unfold_array, write_clean, write_lazy_array, write_lazy_object, write_slots, EditError, Out,
    Patches, Slot,
};
use crate::encode::escape::write_str;
use crate::encode::Buf;
use crate::error::JsonType;
use smallvec::SmallVec;
use std::convert::Infallible;
use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicPtr, Ordering};

/// A segment kind: bytes at `p`, `len` long.
const SEG_BYTES: u32 = 0;
/// A segment kind: the host value `id`.
const SEG_VALUE: u32 = 1;
/// A segment kind: the dirty child view given at position `id` (0-based).
const SEG_VIEW: u32 = 2;
/// While planning only: bytes of the plan's own (`p` holds an offset into
/// `lits`); [`Plan::finish`] turns them into `SEG_BYTES`.
const SEG_LIT: u32 = 3;

/// One step of a plan (`qjson_seg`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Seg {
    pub p: *const c_char,
    pub len: usize,
    pub kind: u32,
    pub id: u32,
}

/// A host value, as the engine carries it: a value the host set (its id),
/// or a dirty child view the host passed to the plan (its position in the
/// list, and its cursor).
#[derive(Debug, Clone, Copy)]
enum Host {
    Value(u32),
    View(u32, Cursor),
}

/// The edit state of one container (`qjson_edit`): the engine's patches
/// (objects) or slots (arrays, once unfolded), the last plan, and a saved
/// copy of the edits (`qjson_edit_save` / `qjson_edit_restore`).
pub struct Edit {
    at: Cursor,
    object: bool,
    patches: Patches<Key, Host>,
    slots: Option<Vec<Slot<Host>>>,
    saved: Option<Box<Saved>>,
    /// The last plan: segments (literal ones point into `lits` once done).
    /// Inline in the (boxed, so unmoving) state: a typical plan (a few
    /// edits) needs no heap allocation, and the pointers into `lits` stay
    /// valid until the next plan.
    segs: Segs,
    lits: Lits,
    /// The next state in the list of the document that owns this one
    /// (`qjson_edit_new_owned`, see [`Owned`]); null otherwise.
    owned_next: *mut Edit,
}

/// A key as the state keeps it: inline up to 24 bytes (a heap `Box<[u8]>`
/// per key set cost a malloc and a free per edit).
type Key = SmallVec<[u8; 24]>;

/// A plan's segments: a set of one key (input, literal, value, literal,
/// input) takes five; patches of a few keys fit the inline room.
type Segs = SmallVec<[Seg; 8]>;

/// A plan's literal bytes (punctuation, keys written by the plan).
type Lits = SmallVec<[u8; 64]>;

// SAFETY: a SmallVec's pointer (inline or on the heap) covers its capacity
// (`len + spare`), its first `len` bytes initialized; `reserve(n)` leaves
// `capacity - len >= n` (or aborts).
unsafe impl Buf for Lits {
    #[inline(always)]
    fn len(&self) -> usize {
        SmallVec::len(self)
    }
    #[inline(always)]
    fn spare(&self) -> usize {
        self.capacity() - SmallVec::len(self)
    }
    #[inline]
    fn grow(&mut self, additional: usize) {
        SmallVec::reserve(self, additional);
    }
    #[inline(always)]
    fn as_mut_ptr(&mut self) -> *mut u8 {
        SmallVec::as_mut_ptr(self)
    }
    #[inline(always)]
    unsafe fn set_len(&mut self, len: usize) {
        // SAFETY: per the trait's contract.
        unsafe { SmallVec::set_len(self, len) }
    }
}

/// What `qjson_edit_save` keeps: the edits as they were.
struct Saved {
    patches: Patches<Key, Host>,
    slots: Option<Vec<Slot<Host>>>,
}

/// The engine's output for one container as segments: input ranges,
/// literal bytes (`SEG_LIT`, offsets into `lits` until [`Plan::finish`])
/// and host values.
struct Plan<'d, 'e> {
    doc: Doc<'d>,
    segs: &'e mut Segs,
    lits: &'e mut Lits,
}

impl Plan<'_, '_> {
    /// Literal bytes written by `f` into `lits`.
    fn lit(&mut self, f: impl FnOnce(&mut Lits)) {
        let a = self.lits.len();
        f(self.lits);
        let n = self.lits.len() - a;
        if let Some(last) = self.segs.last_mut() {
            if last.kind == SEG_LIT && last.p as usize + last.len == a {
                last.len += n;
                return;
            }
        }
        self.segs.push(Seg {
            p: a as *const c_char,
            len: n,
            kind: SEG_LIT,
            id: 0,
        });
    }

    fn host(&mut self, kind: u32, id: u32) {
        self.segs.push(Seg {
            p: std::ptr::null(),
            len: 0,
            kind,
            id,
        });
    }

    /// Literal segments get their pointers (and become plain bytes).
    fn finish(self) {
        let base = self.lits.as_ptr();
        for s in self.segs.iter_mut() {
            if s.kind == SEG_LIT {
                // SAFETY: a literal segment's `p` holds its offset into
                // `lits`, and offset + len <= lits.len().
                s.p = unsafe { base.add(s.p as usize) }.cast();
                s.kind = SEG_BYTES;
            }
        }
    }
}

impl Out for Plan<'_, '_> {
    type Key = Key;
    type Value = Host;
    type Error = Fail;

    fn copy(&mut self, a: usize, b: usize) {
        if a >= b {
            return;
        }
        let p = self.doc.input()[a..].as_ptr().cast::<c_char>();
        if let Some(last) = self.segs.last_mut() {
            // Consecutive input ranges become one segment. The pointer is
            // only compared, never read through.
            if last.kind == SEG_BYTES && last.p.wrapping_add(last.len) == p {
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
    }

    fn byte(&mut self, b: u8) {
        self.lit(|l| l.push(b));
    }

    fn key_text(&mut self, key: &str) {
        self.lit(|l| write_str(l, key.as_bytes()));
    }

    fn key(&mut self, key: &Key) -> Result<(), Fail> {
        self.lit(|l| write_str(l, key));
        Ok(())
    }

    fn value(&mut self, v: &Host) -> Result<(), Fail> {
        match *v {
            Host::Value(id) => self.host(SEG_VALUE, id),
            Host::View(i, _) => self.host(SEG_VIEW, i),
        }
        Ok(())
    }

    fn child(&mut self, v: &Host) -> Result<(), Fail> {
        self.value(v)
    }

    fn edited(&mut self, v: &Host) -> Result<Option<Cursor>, Fail> {
        // Only the views the host passed (the dirty ones) are children.
        Ok(match *v {
            Host::View(_, c) => Some(c),
            Host::Value(_) => None,
        })
    }

    fn fail(&mut self, e: EditError) -> Fail {
        match e {
            EditError::Access(e) => Fail::Access(e),
            EditError::Invalid(e) => Fail::Json(e),
        }
    }
}

fn same(key: &[u8]) -> impl FnMut(&Key) -> Result<bool, Infallible> + '_ {
    move |k| Ok(&**k == key)
}

impl Edit {
    fn new(doc: &Doc<'_>, at: Cursor) -> Result<Edit, Fail> {
        Ok(Edit::empty(
            at,
            Edit::is_object(doc, at)?,
            std::ptr::null_mut(),
        ))
    }

    /// Whether `at` is an object (else an array; an error for a scalar).
    fn is_object(doc: &Doc<'_>, at: Cursor) -> Result<bool, Fail> {
        match doc.type_of(at) {
            JsonType::Object => Ok(true),
            JsonType::Array => Ok(false),
            _ => Err(Fail::Arg("not an object or array")),
        }
    }

    /// A state without edits.
    #[inline(always)]
    fn empty(at: Cursor, object: bool, owned_next: *mut Edit) -> Edit {
        Edit {
            at,
            object,
            patches: Patches::default(),
            slots: None,
            saved: None,
            segs: Segs::new(),
            lits: Lits::new(),
            owned_next,
        }
    }

    /// A copy of the edits (host values are ids: copied as they are).
    fn saved(&self) -> Saved {
        Saved {
            patches: self.patches.dup_with(|k| k.clone(), |v| *v),
            slots: self
                .slots
                .as_ref()
                .map(|s| s.iter().map(|x| x.dup_with(&mut |v| *v)).collect()),
        }
    }

    fn changed(&self) -> bool {
        if self.object {
            !self.patches.is_empty()
        } else {
            self.slots.is_some()
        }
    }

    /// Set `key`; whether its patch is an added member (not a replacement).
    fn set(&mut self, doc: &Doc<'_>, key: &[u8], id: u32) -> bool {
        let at = self.at;
        let Ok(()) = self.patches.set(
            || Key::from_slice(key),
            same(key),
            Host::Value(id),
            |t| t.field(doc, at, key),
        );
        self.patches
            .iter()
            .filter(|p| &*p.key == key)
            .last()
            .is_some_and(|p| p.orig.is_none())
    }

    fn delete(&mut self, doc: &Doc<'_>, key: &[u8]) -> bool {
        let at = self.at;
        let Ok(found) = self.patches.delete(
            || Key::from_slice(key),
            same(key),
            |t| t.field(doc, at, key),
        );
        found
    }

    fn slots(&mut self, doc: &Doc<'_>) -> Result<&mut Vec<Slot<Host>>, Fail> {
        if self.slots.is_none() {
            self.slots = Some(unfold_array(doc, self.at, |_| None)?);
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

    /// Plan the container's output; `views`: the dirty child views.
    fn plan(&mut self, doc: Doc<'_>, views: &[Host]) -> Result<(), Fail> {
        let changed = self.changed();
        // The plan is built in place (`finish` points literal segments
        // into `lits`, which must not move afterwards).
        let Edit {
            at,
            object,
            patches,
            slots,
            segs,
            lits,
            ..
        } = self;
        let at = *at;
        segs.clear();
        lits.clear();
        let mut p = Plan { doc, segs, lits };
        let r = if !changed && views.is_empty() {
            write_clean(&doc, at, &mut p)
        } else if *object {
            write_lazy_object(&doc, at, patches, views, &mut p)
        } else if let Some(slots) = slots {
            // The views are the host's for this plan only.
            let mut by_start: SmallVec<[(u32, Host); 8]> = views
                .iter()
                .filter_map(|v| match *v {
                    Host::View(_, c) => Some((c.start, *v)),
                    Host::Value(_) => None,
                })
                .collect();
            by_start.sort_unstable_by_key(|&(s, _)| s);
            for s in slots.iter_mut() {
                if let Slot::Orig { at, view, .. } = s {
                    *view = by_start
                        .binary_search_by_key(&at.start, |&(s, _)| s)
                        .ok()
                        .map(|i| by_start[i].1);
                }
            }
            write_slots(&doc, at, slots, &mut p)
        } else {
            write_lazy_array(&doc, at, views, &mut p)
        };
        if r.is_ok() {
            p.finish();
        }
        r
    }
}

// ------------------------------------------------------------------ exports

/// The edit state behind a pointer from C.
///
/// # Safety
/// `e` is null or a live pointer from `qjson_edit_new` / `qjson_edit_new_owned`.
unsafe fn state<'e>(e: *mut Edit) -> Result<&'e mut Edit, Fail> {
    // SAFETY: per the contract, a non-null `e` is live and not aliased
    // during the call.
    unsafe { e.as_mut() }.ok_or(Fail::Arg("null edit state"))
}

/// The document, edit state and key of an object edit (`qjson_edit_set`,
/// `qjson_edit_delete`); `Fail::Arg` when the state is an array's.
///
/// # Safety
/// As those calls: `doc` live, `e` its live edit state, `key` readable for
/// `len` bytes.
unsafe fn object_key<'h, 'e, 'k>(
    doc: *const Handle,
    e: *mut Edit,
    key: *const c_char,
    len: usize,
) -> Result<(Doc<'h>, &'e mut Edit, &'k [u8]), Fail> {
    // SAFETY: forwarded from the contract.
    let (d, e) = (unsafe { handle(doc) }?.doc(), unsafe { state(e) }?);
    if !e.object {
        return Err(Fail::Arg("not an object"));
    }
    // SAFETY: forwarded from the contract.
    Ok((d, e, unsafe { key_bytes(key, len) }?))
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

/// The edit states a document owns (`qjson_edit_new_owned`): freed when
/// the document is. A list threaded through the states themselves
/// (`Edit::owned_next`), its head pushed with one compare-and-swap: a
/// document may be used from several threads, so the push is atomic, but
/// a mutex (a locked compare-and-swap and a locked exchange around a
/// push) cost about 16 ns of the 22 ns of a 2 KB request's
/// `qjson_edit_new_owned` (perf, native): each locked instruction waits
/// for the state's 800 bytes just written to leave the store buffer. So
/// the state is published first and written after (see `keep`).
#[derive(Debug, Default)]
pub struct Owned(AtomicPtr<Edit>);

impl Owned {
    /// Keep a new state for the container at `at` (an object or not): a
    /// heap slot for it is pushed on the list, then the state is made
    /// there (after the compare-and-swap, which so waits for no more than
    /// the slot's allocation). Pushes from other threads read only the
    /// head, never a state; the list is walked only by `Drop` (`&mut
    /// self`, after every push returned), so the state is written by the
    /// time anyone reads it.
    fn keep(&self, at: Cursor, object: bool) -> *mut Edit {
        let slot = Box::into_raw(Box::<Edit>::new_uninit()).cast::<Edit>();
        let mut head = self.0.load(Ordering::Relaxed);
        loop {
            match self
                .0
                .compare_exchange_weak(head, slot, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => head = now,
            }
        }
        // (Nothing between the swap and this write may panic: `Drop` would
        // then free a listed slot that was never written.)
        // SAFETY: `slot` is a fresh allocation for one `Edit` that no one
        // else reads (see above); `write` fills it without dropping the
        // uninitialized bytes.
        unsafe { slot.write(Edit::empty(at, object, head)) };
        slot
    }

    /// How many states the list holds.
    #[cfg(test)]
    fn len(&mut self) -> usize {
        let mut n = 0;
        let mut e = *self.0.get_mut();
        while !e.is_null() {
            n += 1;
            // SAFETY: every state on the list is live until `drop`.
            e = unsafe { (*e).owned_next };
        }
        n
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        let mut e = *self.0.get_mut();
        while !e.is_null() {
            // SAFETY: each state on the list came from `keep` (a `Box`
            // slot, written before any `drop` can run), is owned by this
            // list only (the host never frees it) and is dropped once, here.
            let b = unsafe { Box::from_raw(e) };
            e = b.owned_next;
            drop(b);
        }
    }
}

/// As [`qjson_edit_new`], but the state belongs to `doc`: it is freed by
/// `qjson_free(doc)` and must not be given to `qjson_edit_free`. A host
/// that frees documents from a garbage collector's finaliser then needs no
/// finaliser per edit state.
///
/// # Safety
/// `doc` is a live handle, `at` a valid cursor of it, `out` writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_new_owned(
    doc: *const Handle,
    at: *const CCursor,
    out: *mut *mut Edit,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let h = unsafe { handle(doc) }?;
        // SAFETY: `at` is null or valid, per the contract.
        let at = unsafe { at.as_ref() }
            .ok_or(Fail::Arg("null cursor"))?
            .core();
        let object = Edit::is_object(&h.doc(), at)?;
        let e = h.input.edits.keep(at, object);
        // SAFETY: `out` is writable per the contract (`put` checks null).
        unsafe { put(out, e) }?;
        Ok(Status::Ok)
    })
}

/// Save a copy of the edits inside the state (replacing any copy saved
/// before), to put back with [`qjson_edit_restore`]: what a host needs to
/// make a sequence of edits atomic, without a state of its own to free.
/// The copy stays until the next save or restore, or the state's free; a
/// sequence that succeeds leaves it there (the next save reuses its box).
///
/// # Safety
/// `e` is a live edit state.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_save(e: *mut Edit) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let e = unsafe { state(e) }?;
        let copy = e.saved();
        // The box of the last save is reused (a host saves each container
        // it changes at every patch).
        match &mut e.saved {
            Some(b) => **b = copy,
            None => e.saved = Some(Box::new(copy)),
        }
        Ok(Status::Ok)
    })
}

/// Put back the edits saved by the last [`qjson_edit_save`] (and forget
/// them); `QJSON_NOT_FOUND` when none is saved. The last plan is kept.
///
/// # Safety
/// `e` is a live edit state.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_restore(e: *mut Edit) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let e = unsafe { state(e) }?;
        match e.saved.take().map(|b| *b) {
            Some(Saved { patches, slots }) => {
                e.patches = patches;
                e.slots = slots;
                Ok(Status::Ok)
            }
            None => Ok(Status::NotFound),
        }
    })
}

/// Drop every edit of the state and any saved copy: the state is as
/// [`qjson_edit_new`] made it. A host that undoes the first edits of a
/// container keeps the state (a document-owned one is only freed with the
/// document) and reuses it, rather than making a new one per attempt.
///
/// # Safety
/// `e` is a live edit state.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_reset(e: *mut Edit) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let e = unsafe { state(e) }?;
        e.patches = Patches::default();
        e.slots = None;
        e.saved = None;
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

/// Objects: set `key` to host value `id` (> 0). `*added` (when not null)
/// receives 1 when the key's patch adds a member (the key is not in the
/// original, or was deleted from it), 0 when it replaces one.
///
/// # Safety
/// `doc` is the live handle `e` was made for; `key` points to `len` bytes;
/// `added` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn qjson_edit_set(
    doc: *const Handle,
    e: *mut Edit,
    key: *const c_char,
    len: usize,
    id: u32,
    added: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let (d, e, key) = unsafe { object_key(doc, e, key, len) }?;
        let a = e.set(&d, key, host_id(id)?);
        if !added.is_null() {
            // SAFETY: non-null, and writable per the contract.
            unsafe { put(added, c_int::from(a)) }?;
        }
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
        let (d, e, key) = unsafe { object_key(doc, e, key, len) }?;
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
) -> Result<&'e mut Vec<Slot<Host>>, Fail> {
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
                Some(Slot::Orig { i, .. }) => i64::from(*i),
                Some(Slot::New(Host::Value(id))) => -i64::from(*id),
                Some(Slot::New(Host::View(..))) => {
                    return Err(Fail::Panic("a view in a new slot".into()))
                }
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
        slot_at(&d, e, i, false)?[i] = Slot::New(Host::Value(id));
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
        slot_at(&d, e, i, true)?.insert(i, Slot::New(Host::Value(id)));
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
        let views: SmallVec<[Host; 8]> = given
            .iter()
            .enumerate()
            .map(|(i, c)| Host::View(i as u32, c.core()))
            .collect();
        e.plan(d, &views)?;
        // SAFETY: writable per the contract.
        unsafe { put(segs, e.segs.as_ptr()) }?;
        // SAFETY: writable per the contract.
        unsafe { put(nsegs, e.segs.len()) }?;
        Ok(Status::Ok)
    })
}

/// For a host's light edit (qjson.lua: one member of an unedited root object
/// replaced by a scalar, written by splicing its text over the member's
/// value): `spans[0..2]`, the object's byte range, and `spans[2..4]`, the
/// range of member `key`'s value, when the object is one whose keys a
/// member table covers and they are distinct (see [`MemberTable`]: its
/// writer then splices a replaced value in place, so the host's splice
/// gives the same bytes). `QJSON_NOT_FOUND` when the key is absent, or the
/// object is not such an object (a repeated or escaped key, more members,
/// a lazy document): the host then makes a full edit state. No state is
/// made and nothing is kept: the table is built on the stack.
///
/// [`MemberTable`]: crate::edit::MemberTable
///
/// # Safety
/// `doc` is a live handle, `at` a valid cursor of it, `key` points to `len`
/// bytes, `spans` is writable for 4 values.
#[no_mangle]
pub unsafe extern "C" fn qjson_member_span(
    doc: *const Handle,
    at: *const CCursor,
    key: *const c_char,
    len: usize,
    spans: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the contract.
        let d = unsafe { handle(doc) }?.doc();
        // SAFETY: `at` is null or valid, per the contract.
        let at = unsafe { at.as_ref() }
            .ok_or(Fail::Arg("null cursor"))?
            .core();
        if !Edit::is_object(&d, at)? {
            return Err(Fail::Arg("not an object"));
        }
        // SAFETY: forwarded from the contract.
        let key = unsafe { key_bytes(key, len) }?;
        if spans.is_null() {
            return Err(Fail::Arg("null spans"));
        }
        let mut table = crate::edit::MemberTable::default();
        let Some(v) = table.field(&d, at, key).filter(|_| table.distinct()) else {
            return Ok(Status::NotFound);
        };
        let ((cs, ce), (a, z)) = (d.span(at), d.span(v));
        // SAFETY: non-null, and writable for 4 values per the contract.
        unsafe { std::ptr::copy_nonoverlapping([cs, ce, a, z].as_ptr(), spans, 4) };
        Ok(Status::Ok)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::{qjson_find, qjson_free, qjson_index, qjson_parse};

    /// The output of `e`'s plan, host values written as `vals[id - 1]` and
    /// views as `views[id]`.
    fn run(
        h: *const Handle,
        e: *mut Edit,
        views: &[CCursor],
        texts: &[&str],
        view_texts: &[&str],
    ) -> String {
        let mut segs: *const Seg = std::ptr::null();
        let mut n = 0usize;
        // SAFETY: live handle and state; `views` is a valid slice.
        let rc = unsafe { qjson_edit_plan(h, e, views.as_ptr(), views.len(), &mut segs, &mut n) };
        assert_eq!(rc, 0);
        // SAFETY: the plan's segments, valid until the next plan.
        let segs = unsafe { std::slice::from_raw_parts(segs, n) };
        let mut out = Vec::new();
        for s in segs {
            match s.kind {
                // SAFETY: a bytes segment points to `len` readable bytes.
                SEG_BYTES => out.extend_from_slice(unsafe {
                    std::slice::from_raw_parts(s.p.cast::<u8>(), s.len)
                }),
                SEG_VALUE => out.extend_from_slice(texts[s.id as usize - 1].as_bytes()),
                _ => out.extend_from_slice(view_texts[s.id as usize].as_bytes()),
            }
        }
        String::from_utf8(out).unwrap()
    }

    fn parse(s: &'static [u8]) -> *mut Handle {
        let mut h = std::ptr::null_mut();
        // SAFETY: a static input, a valid out pointer.
        let status = unsafe { qjson_parse(s.as_ptr().cast(), s.len(), std::ptr::null(), &mut h) };
        assert_eq!(status, 0);
        h
    }

    fn new_edit(h: *const Handle, path: &str) -> (*mut Edit, CCursor) {
        let mut c = CCursor::default();
        let mut e = std::ptr::null_mut();
        // SAFETY: live handle, valid pointers.
        unsafe {
            assert_eq!(
                qjson_find(
                    h,
                    std::ptr::null(),
                    path.as_ptr().cast(),
                    path.len(),
                    &mut c
                ),
                0
            );
            assert_eq!(qjson_edit_new(h, &c, &mut e), 0);
        }
        (e, c)
    }

    #[test]
    fn object_patches_like_python() {
        let h = parse(br#" {"a": 1,  "b": [2], "c": 3} "#);
        let (e, _) = new_edit(h, "");
        let mut added = -1;
        // SAFETY: live handle and state, static keys.
        unsafe {
            assert_eq!(
                qjson_edit_set(h, e, b"a".as_ptr().cast(), 1, 1, &mut added),
                0
            );
            assert_eq!(added, 0);
            assert_eq!(
                run(h, e, &[], &["X"], &[]),
                r#"{"a": X,  "b": [2], "c": 3}"#
            );
            assert_eq!(qjson_edit_delete(h, e, b"c".as_ptr().cast(), 1), 0);
            assert_eq!(qjson_edit_delete(h, e, b"c".as_ptr().cast(), 1), 2);
            assert_eq!(
                qjson_edit_set(h, e, b"d/".as_ptr().cast(), 2, 2, &mut added),
                0
            );
            assert_eq!(added, 1);
            assert_eq!(
                run(h, e, &[], &["X", "Y"], &[]),
                r#"{"a": X,  "b": [2],"d/":Y}"#
            );
            // A key deleted from the original is added anew when set.
            assert_eq!(
                qjson_edit_set(h, e, b"c".as_ptr().cast(), 1, 3, &mut added),
                0
            );
            assert_eq!(added, 1);
            assert_eq!(
                run(h, e, &[], &["X", "Y", "Z"], &[]),
                r#"{"a": X,  "b": [2],"d/":Y,"c":Z}"#
            );
            qjson_edit_free(e);
            qjson_free(h);
        }
    }

    #[test]
    fn plans_past_the_inline_room() {
        // Keys longer than a state keeps inline, more added keys than the
        // inline segments and literal bytes hold, and more owned states
        // than the document keeps inline: the plan moves to the heap and
        // its literal segments still point at their bytes.
        let h = parse(br#"{"a": 1, "b": {"c": 2}}"#);
        let (e, _) = new_edit(h, "");
        let keys: Vec<String> = (0..12)
            .map(|i| format!("a key longer than twenty-four bytes {i}"))
            .collect();
        let texts: Vec<String> = (0..12).map(|i| i.to_string()).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut added = -1;
        // SAFETY: live handle and state, keys borrowed for the call.
        unsafe {
            for (i, k) in keys.iter().enumerate() {
                assert_eq!(
                    qjson_edit_set(h, e, k.as_ptr().cast(), k.len(), i as u32 + 1, &mut added),
                    0
                );
                assert_eq!(added, 1);
            }
            // A long key set again replaces its own patch.
            let k = &keys[3];
            assert_eq!(
                qjson_edit_set(h, e, k.as_ptr().cast(), k.len(), 4, &mut added),
                0
            );
            assert_eq!(added, 1);
            let mut want = String::from(r#"{"a": 1, "b": {"c": 2}"#);
            for (k, t) in keys.iter().zip(&texts) {
                want.push_str(&format!(r#","{k}":{t}"#));
            }
            want.push('}');
            assert_eq!(run(h, e, &[], &texts, &[]), want);
            // The same plan again (the buffers are reused).
            assert_eq!(run(h, e, &[], &texts, &[]), want);
            qjson_edit_free(e);
            let mut root = CCursor::default();
            assert_eq!(
                qjson_find(h, std::ptr::null(), c"".as_ptr(), 0, &mut root),
                0
            );
            for _ in 0..6 {
                let mut o = std::ptr::null_mut();
                assert_eq!(qjson_edit_new_owned(h, &root, &mut o), 0);
            }
            assert_eq!((*h).input.edits.len(), 6);
            qjson_free(h);
        }
    }

    #[test]
    fn save_and_restore() {
        let h = parse(br#"{"a": 1, "b": [1, 2]}"#);
        let (e, _) = new_edit(h, "");
        let (eb, _) = new_edit(h, "b");
        let mut added = -1;
        // SAFETY: live handle and states, static keys.
        unsafe {
            // Nothing saved yet.
            assert_eq!(qjson_edit_restore(e), 2);
            assert_eq!(qjson_edit_save(e), 0);
            assert_eq!(qjson_edit_save(eb), 0);
            assert_eq!(
                qjson_edit_set(h, e, b"c".as_ptr().cast(), 1, 1, &mut added),
                0
            );
            assert_eq!(qjson_edit_delete(h, e, b"a".as_ptr().cast(), 1), 0);
            assert_eq!(qjson_edit_insert(h, eb, 0, 1), 0);
            assert_eq!(run(h, e, &[], &["X"], &[]), r#"{"b": [1, 2],"c":X}"#);
            assert_eq!(run(h, eb, &[], &["X"], &[]), "[X,1, 2]");
            // Back to the saved (empty) edits, once.
            assert_eq!(qjson_edit_restore(e), 0);
            assert_eq!(qjson_edit_restore(eb), 0);
            assert_eq!(qjson_edit_restore(e), 2);
            assert_eq!(qjson_edit_changed(e), 0);
            assert_eq!(qjson_edit_changed(eb), 0);
            assert_eq!(run(h, e, &[], &[], &[]), r#"{"a": 1, "b": [1, 2]}"#);
            assert_eq!(run(h, eb, &[], &[], &[]), "[1, 2]");
            // A save keeps edits made before it.
            assert_eq!(
                qjson_edit_set(h, e, b"a".as_ptr().cast(), 1, 2, &mut added),
                0
            );
            assert_eq!(qjson_edit_save(e), 0);
            assert_eq!(qjson_edit_delete(h, e, b"b".as_ptr().cast(), 1), 0);
            assert_eq!(qjson_edit_restore(e), 0);
            assert_eq!(run(h, e, &[], &["", "Y"], &[]), r#"{"a": Y, "b": [1, 2]}"#);
            // A reset drops the edits and the saved copy: the state is as new.
            assert_eq!(qjson_edit_save(e), 0);
            assert_eq!(qjson_edit_reset(e), 0);
            assert_eq!(qjson_edit_reset(eb), 0);
            assert_eq!(qjson_edit_changed(e), 0);
            assert_eq!(qjson_edit_changed(eb), 0);
            assert_eq!(qjson_edit_restore(e), 2);
            assert_eq!(run(h, e, &[], &[], &[]), r#"{"a": 1, "b": [1, 2]}"#);
            assert_eq!(qjson_edit_insert(h, eb, 2, 1), 0);
            assert_eq!(run(h, eb, &[], &["Z"], &[]), "[1, 2,Z]");
            assert_eq!(qjson_edit_reset(std::ptr::null_mut()), 6);
            qjson_edit_free(e);
            qjson_edit_free(eb);
            qjson_free(h);
        }
    }

    #[test]
    fn arrays_and_views() {
        let h = parse(b"[ {\"a\":1} , 2, 3 ]");
        let (e, root) = new_edit(h, "");
        let mut first = CCursor::default();
        let mut slot = 0i64;
        // SAFETY: live handle and state.
        unsafe {
            assert_eq!(qjson_index(h, &root, 0, &mut first), 0);
            // Untouched: the whole input (the root).
            assert_eq!(run(h, e, &[], &[], &[]), "[ {\"a\":1} , 2, 3 ]");
            assert_eq!(qjson_edit_changed(e), 0);
            // A lazy array with a dirty child view: spliced.
            assert_eq!(run(h, e, &[first], &[], &["V"]), "[ V , 2, 3 ]");
            assert_eq!(qjson_edit_insert(h, e, 1, 1), 0);
            assert_eq!(qjson_edit_remove(h, e, 3), 0);
            assert_eq!(qjson_edit_remove(h, e, 3), 6);
            assert_eq!(qjson_edit_slot(h, e, 1, &mut slot), 0);
            assert_eq!(slot, -1);
            assert_eq!(qjson_edit_slot(h, e, 2, &mut slot), 0);
            assert_eq!(slot, 1);
            let mut n = 0usize;
            assert_eq!(qjson_edit_len(h, e, &mut n), 0);
            assert_eq!(n, 3);
            assert_eq!(run(h, e, &[first], &["X"], &["V"]), "[V,X,2]");
            assert_eq!(qjson_edit_put(h, e, 0, 2), 0);
            assert_eq!(run(h, e, &[first], &["X", "Y"], &["V"]), "[Y,X,2]");
            qjson_edit_free(e);
            qjson_free(h);
        }
    }

    #[test]
    fn owned_states_are_freed_with_the_document() {
        let h = parse(br#"{"a": {"x": 1}, "b": [1, 2]}"#);
        let (mut root, mut a) = (CCursor::default(), CCursor::default());
        let (mut e1, mut e2) = (std::ptr::null_mut(), std::ptr::null_mut());
        let mut added = -1;
        // SAFETY: live handle, valid pointers; the owned states are only
        // freed by `qjson_free`.
        unsafe {
            assert_eq!(
                qjson_find(h, std::ptr::null(), c"".as_ptr(), 0, &mut root),
                0
            );
            assert_eq!(qjson_find(h, std::ptr::null(), c"a".as_ptr(), 1, &mut a), 0);
            assert_eq!(qjson_edit_new_owned(h, &root, &mut e1), 0);
            assert_eq!(qjson_edit_new_owned(h, &a, &mut e2), 0);
            assert_ne!(e1, e2);
            assert_eq!(
                qjson_edit_set(h, e2, b"x".as_ptr().cast(), 1, 1, &mut added),
                0
            );
            assert_eq!(added, 0);
            assert_eq!(qjson_edit_delete(h, e1, b"b".as_ptr().cast(), 1), 0);
            assert_eq!(run(h, e2, &[], &["9"], &[]), r#"{"x": 9}"#);
            assert_eq!(run(h, e1, &[a], &[], &["A"]), r#"{"a": A}"#);
            // Bad arguments are refused, nothing is kept.
            let mut e3 = std::ptr::null_mut();
            assert_eq!(qjson_edit_new_owned(std::ptr::null(), &root, &mut e3), 6);
            assert_eq!(qjson_edit_new_owned(h, std::ptr::null(), &mut e3), 6);
            assert!(e3.is_null());
            assert_eq!((*h).input.edits.len(), 2);
            qjson_free(h);
        }
    }

    /// States made on one document from several threads at once are all
    /// kept (the list's push is a compare-and-swap: a plain load and store
    /// would lose some of them, and leak them).
    #[test]
    fn owned_states_from_several_threads_are_all_kept() {
        let h = parse(br#"{"a": 1}"#);
        let mut root = CCursor::default();
        // SAFETY: live handle, valid pointers.
        unsafe {
            assert_eq!(
                qjson_find(h, std::ptr::null(), c"".as_ptr(), 0, &mut root),
                0
            );
        }
        let (threads, each) = (4, 2000);
        let addr = h as usize;
        let start = std::sync::Barrier::new(threads);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    start.wait();
                    for _ in 0..each {
                        let mut e = std::ptr::null_mut();
                        // SAFETY: the handle is live until every thread is
                        // joined; a document may be used from several
                        // threads; the states are freed with it.
                        let rc =
                            unsafe { qjson_edit_new_owned(addr as *const Handle, &root, &mut e) };
                        assert_eq!(rc, 0);
                        assert!(!e.is_null());
                    }
                });
            }
        });
        // SAFETY: every thread is joined: this is the handle's one user.
        unsafe {
            assert_eq!((*h).input.edits.len(), threads * each);
            qjson_free(h);
        }
    }

    /// `qjson_member_span`: the object's and the member value's ranges for
    /// a key of an object with distinct keys; NOT_FOUND for an absent key
    /// or a repeated one; an error for an array.
    #[test]
    fn member_span_of_distinct_keys_only() {
        let span = |doc: &'static [u8], key: &str| -> (c_int, [usize; 4]) {
            let h = parse(doc);
            let (e, c) = new_edit(h, "");
            let mut out = [0usize; 4];
            // SAFETY: live handle and cursor, a key of `key.len()` bytes,
            // room for 4 values.
            let rc = unsafe {
                qjson_member_span(h, &c, key.as_ptr().cast(), key.len(), out.as_mut_ptr())
            };
            // SAFETY: from qjson_edit_new / qjson_parse, freed once.
            unsafe {
                qjson_edit_free(e);
                qjson_free(h);
            }
            (rc, out)
        };
        let doc = b" {\"a\": 1 , \"b\" :\"x\"} ";
        assert_eq!(span(doc, "b"), (0, [1, 20, 16, 19]));
        assert_eq!(&doc[16..19], b"\"x\"");
        assert_eq!(span(doc, "a"), (0, [1, 20, 7, 8]));
        assert_eq!(span(doc, "c").0, Status::NotFound as c_int);
        assert_eq!(
            span(b"{\"a\": 1, \"a\": 2}", "a").0,
            Status::NotFound as c_int
        );
        assert_ne!(span(b"[1]", "a").0, 0);
    }
}
