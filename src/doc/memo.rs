//! The memo of a document's last path steps: for a few containers, the
//! member a key last led to and the element an index last led to, so that
//! the reads a loop repeats (`messages[i].content` for every `i`: the key
//! `messages` of the root each time, then elements `i`, `i + 1`, ...) cost
//! one key compare or one step over a sibling, not a walk from the
//! container's first child.
//!
//! # Algorithm
//!
//! A [`Memo`] lives in the document's [`Tables`](super::Tables) and has a
//! few slots for keys and a few for elements, the slot of a container
//! chosen by its ordinal (and, for keys, the key's length). A key slot remembers a member value (by the
//! index of its first structural, `sidx`) that a lookup found, which is
//! the first member of its object with that key (every lookup answers the
//! first occurrence). A later lookup in the same object tests the member's
//! key against its own (one masked compare for a short plain key): when it
//! matches, that member is the first with this key too, so it is the
//! answer. An element slot remembers element `i` of an array; a read of
//! element `i` again is the memo's answer, a read of `i + 1` (or a few
//! further) steps from it over the siblings between.
//!
//! The path getters read every key step through the memo; the views'
//! lookup ([`Doc::field`]) only the keys of objects of more than
//! [`TABLE_MIN`] members that have their child table (objects read again
//! and again), where the table's lookup costs more than the memo's test
//! (a small object's walk stays inline in the view's subscript, and the
//! dense reads of large records pay no miss).
//! A hit is tested on the raw key, or on the words of a short plain key
//! when the getter has made them anyway; its value is taken right after
//! the colon when no whitespace follows it (no call to skip any).
//!
//! A miss falls back to the ordinary lookup (a walk, or the child table of
//! a large container) and records its answer. Keys are recorded only when
//! the walk to them was long (see [`FAR`]): the first members of an object
//! are cheaper to walk to than to test and record, and records of them
//! would evict the ones that pay.
//!
//! # Resumed walks
//!
//! Records read a few keys each, mostly in document order (`id`, `title`,
//! `user` of every issue: the 7th, 10th and 11th of 30 members). In an
//! object of more than [`TABLE_MIN`] members without its child table, a
//! lookup walks from the first member, so those three reads walk 28
//! members. A resume slot remembers, for a few objects, where the last
//! lookup's walk stopped (the member after its hit, or the closer after a
//! miss) and a 64-bit summary of the keys walked before that point: one
//! bit per key, picked by a hash of the key's first two bytes (a closing
//! quote included; [`raw_key_bit`]). A lookup whose key's bit is clear in
//! the summary knows its key is none of those members (the first members
//! hold no key equal to it), so it walks on from the slot's point: the
//! first match there is the first in the object, and reaching the closer
//! means the key is absent. A set bit (the key, or another key with its
//! bit, came before) walks from the first member as before, and records
//! its stop and its summary (a resumed walk leaves the slot as it is). A raw key with a backslash in its
//! first two bytes (its first decoded bytes are then not its raw bytes)
//! sets every bit: that object's lookups walk from the start.
//!
//! # Threads
//!
//! One document may be read from many threads at once (the Python `Doc` is
//! shared; the C ABI allows concurrent reads), so the slots are atomics,
//! read and written without a lock and in any interleaving. Each word of a
//! slot states one fact about the value at `sidx` that holds for the whole
//! life of the (immutable) document, whichever thread wrote it:
//!
//! - `parent` = (container ordinal + 1, `sidx`): the value at `sidx` is a
//!   direct child of that container (for key slots: the value of the first
//!   member of that object with its key);
//! - `index` = (`i`, `sidx`): the value at `sidx` is element `i` of its
//!   array (element slots only);
//! - `value` = (`sidx`, `ord`): `ord` is the ordinal of the first container
//!   at or after that value (what a cursor to it needs).
//!
//! A read loads the words and uses them only when they all name the same
//! `sidx` (and `parent` the container asked about); words of different
//! writes, torn between two threads' updates, then name different values
//! and the read falls back to the lookup. So a memo answer is a conjunction
//! of true facts about one value, never a mix of two writes; a word is
//! never half-written (64-bit atomics). Relaxed ordering suffices: no
//! word refers to memory another thread wrote (the document is read-only).
//!
//! A resume slot's words, tagged the same way with the structural `k` of
//! the point to resume at: `parent` = (object ordinal + 1, `k`): `k` is a
//! member key of that object, or the structural after its last member;
//! `next` = (`k`, `ord`): the ordinal of the first container at or after
//! `k`; `lo` and `hi` = (half of the summary, `k`): every member before `k`
//! has its key's bit in that half.

use super::key::{word_of, PlainKey, ShortWord, WordTest};
use super::{
    next_member, ChildPos, Cursor, Doc, MemberAt, MemberTest, Plain, TABLE_MIN, UNCHECKED_READ,
};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Slots for key lookups (by container ordinal and key length).
const KEY_SLOTS: usize = 4;

/// Slots for element reads (by container ordinal).
const ELEMENT_SLOTS: usize = 4;

/// A key is recorded when its member's value lies at least this many
/// structurals after the object's opener: from about the third member on
/// (each member takes two or three structurals), where a walk costs more
/// than the memo's test.
const FAR: u32 = 10;

/// Slots for resumed walks (by object ordinal). Two: the reads of a
/// record finish in it before the next record's start (a second slot keeps
/// an outer object's point across a read of a large child, `user` in a
/// tweet); every slot costs the making of every document 32 bytes.
const RESUME_SLOTS: usize = 2;

/// A read of element `i` steps from the memo's element `j` when
/// `j < i <= j + NEAR`; further ones read the array as usual (its child
/// table, or a walk).
const NEAR: u32 = 8;

/// The memo of one document (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Memo {
    keys: [KeySlot; KEY_SLOTS],
    elements: [ElementSlot; ELEMENT_SLOTS],
    resume: [ResumeSlot; RESUME_SLOTS],
}

/// Where the last walk over an object's members stopped, and the summary
/// of the keys before it (see the module docs): `parent` = (object
/// ordinal + 1) << 32 | `k`, `next` = `k` << 32 | `ord`, `lo` and `hi` =
/// summary half << 32 | `k` (zero: empty).
#[derive(Debug, Default)]
struct ResumeSlot {
    parent: AtomicU64,
    next: AtomicU64,
    lo: AtomicU64,
    hi: AtomicU64,
}

/// The summary bit of a key from its first two bytes as they stand in the
/// input (`w`, little-endian: the key's bytes, or its byte and its closing
/// quote), hashed to one of 64 bits. Every bit when either is a
/// backslash (the key's first decoded bytes may then differ from these).
/// (The empty key's second byte follows its closing quote: a plain lookup
/// of the empty key never resumes, so its bit only adds to a summary.)
#[inline(always)]
fn summary_bit(w: u16) -> u64 {
    // (Branch-free: a word with a backslash sets every bit.)
    let x = w ^ 0x5C5C;
    let backslash = x.wrapping_sub(0x0101) & !x & 0x8080 != 0;
    let bit = 1u64 << (u32::from(w).wrapping_mul(0x9E37_79B1) >> 26);
    bit | u64::from(backslash).wrapping_neg()
}

/// [`summary_bit`] of the raw key whose opening quote is at byte `open`
/// (every bit when fewer than two bytes follow it).
#[inline(always)]
fn raw_key_bit(input: &[u8], open: usize) -> u64 {
    match input.get(open + 1..open + 3) {
        Some(b) => summary_bit(u16::from_le_bytes([b[0], b[1]])),
        None => u64::MAX,
    }
}

const _: () = assert!(UNCHECKED_READ >= 3);

/// [`raw_key_bit`] without the bounds check.
///
/// # Safety
///
/// `open + 3 <= input.len()`.
#[inline(always)]
unsafe fn raw_key_bit_unchecked(input: &[u8], open: usize) -> u64 {
    debug_assert!(open + 3 <= input.len());
    // SAFETY: `open + 1 + 2 <= input.len()` (the caller's).
    let w = unsafe { input.as_ptr().add(open + 1).cast::<u16>().read_unaligned() };
    summary_bit(u16::from_le(w))
}

/// [`summary_bit`] of a plain key (no quote, no backslash) as a member's
/// raw key spells it: its first two bytes, or its byte and the closing
/// quote; `None` for the empty key (see [`summary_bit`]).
#[inline(always)]
fn key_bit(key: &[u8]) -> Option<u64> {
    let &b0 = key.first()?;
    let b1 = key.get(1).copied().unwrap_or(b'"');
    Some(summary_bit(u16::from_le_bytes([b0, b1])))
}

/// A member test that also gathers the summary bits of the keys it sees.
struct Summarized<'t, T> {
    test: &'t T,
    seen: Cell<u64>,
}

impl<T: MemberTest> MemberTest for Summarized<'_, T> {
    #[inline(always)]
    fn quick(&self, input: &[u8], open: usize) -> Option<bool> {
        self.seen.set(self.seen.get() | raw_key_bit(input, open));
        self.test.quick(input, open)
    }
    #[inline(always)]
    unsafe fn quick_unchecked(&self, input: &[u8], open: usize) -> Option<bool> {
        // SAFETY: `open + UNCHECKED_READ <= input.len()` (the caller's),
        // and `UNCHECKED_READ >= 3`.
        let bit = unsafe { raw_key_bit_unchecked(input, open) };
        self.seen.set(self.seen.get() | bit);
        // SAFETY: the caller's contract is the inner test's.
        unsafe { self.test.quick_unchecked(input, open) }
    }
    #[inline(always)]
    fn slow(&self, doc: &Doc<'_>, k: usize) -> bool {
        self.test.slow(doc, k)
    }
}

/// A member value a key led to: `parent` = (object ordinal + 1) << 32 |
/// `sidx`, `value` = `sidx` << 32 | `ord` (zero: empty).
#[derive(Debug, Default)]
struct KeySlot {
    parent: AtomicU64,
    value: AtomicU64,
}

/// An element an index led to: `parent` = (array ordinal + 1) << 32 |
/// `sidx`, `index` = `i` << 32 | `sidx`, `value` = `sidx` << 32 | `ord`.
#[derive(Debug, Default)]
struct ElementSlot {
    parent: AtomicU64,
    index: AtomicU64,
    value: AtomicU64,
}

/// The key slot of a lookup of a key of `len` bytes in container `ord`.
/// The key's length takes part so that the keys of different lengths read
/// from one object (`id`, `title`, `user` of each record of an array) take
/// different slots: a record then does not evict the member another key
/// of the same object led to, and a lookup of the other key finds a slot
/// of another container (one compare) rather than a member whose key it
/// must test.
#[inline(always)]
fn key_slot_index(ord: u32, len: usize) -> usize {
    (ord as usize).wrapping_add(len) % KEY_SLOTS
}

#[inline(always)]
fn pack(hi: u32, lo: u32) -> u64 {
    u64::from(hi) << 32 | u64::from(lo)
}

#[inline(always)]
fn parent_word(container: Cursor, sidx: u32) -> u64 {
    pack(container.ord + 1, sidx)
}

/// The test of a key against the raw key of the memo's member: the raw
/// bytes are the key's followed by a quote, and the key holds neither a
/// backslash nor a quote. The raw key then has no escape and that quote
/// closes it, so it is the key. (A key holding a quote, `a":`, would
/// otherwise match the member `"a":"x"`: its bytes run on into the value.)
/// Any key that the member's raw key decodes to is found too, through the
/// lookup, when it does not pass: the test answers only when it is sure.
struct RawKey<'k>(&'k [u8]);

/// Whether `key` holds neither a quote nor a backslash: a word at a time
/// (the last word overlaps the one before it; a byte tested twice changes
/// nothing).
#[inline(always)]
fn plain(key: &[u8]) -> bool {
    let n = key.len();
    if n <= 8 {
        return !quote_or_backslash(word_of(key));
    }
    let at = |i: usize| u64::from_le_bytes(key[i..i + 8].try_into().expect("8 bytes"));
    let mut i = 0;
    while i + 8 < n {
        if quote_or_backslash(at(i)) {
            return false;
        }
        i += 8;
    }
    !quote_or_backslash(at(n - 8))
}

/// Whether a byte of `w` is a quote or a backslash (the has-a-zero-byte
/// test of `w` xor each, exact as a yes/no; the zero bytes [`word_of`]
/// pads a short key with match neither).
#[inline(always)]
fn quote_or_backslash(w: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = LO << 7;
    let zero = |b: u8| {
        let x = w ^ (LO * u64::from(b));
        x.wrapping_sub(LO) & !x
    };
    (zero(b'"') | zero(b'\\')) & HI != 0
}

impl WordTest for RawKey<'_> {
    #[inline(always)]
    fn test(&self, input: &[u8], open: usize) -> Option<bool> {
        let key = self.0;
        let n = key.len();
        let body = input.get(open + 1..open + 2 + n)?;
        if body[n] != b'"' {
            return Some(false);
        }
        // A key of up to eight bytes as one word, compared with the
        // body's (a byte loop, or a call to `memcmp`, costs several times
        // more for a few bytes).
        Some(if n <= 8 {
            let w = word_of(key);
            word_of(&body[..n]) == w && !quote_or_backslash(w)
        } else {
            body[..n] == *key && plain(key)
        })
    }
}

impl<'a> Doc<'a> {
    /// The first member of object `c` (of more than [`TABLE_MIN`]
    /// members, read without its table) with the plain key `key`, whose
    /// test is `test`: (members walked, its value). The walk resumes at the
    /// slot's point of `c` when `key`'s bit is clear in its summary (see the
    /// module docs); a walk from the first member gathers the summary and
    /// records where it stops. (A resumed walk gathers none: the reads of a
    /// record in document order then pay for the summary of the members up
    /// to the first key read only, and the last read of each record,
    /// whose summary would go unused, pays for none.)
    #[inline(always)]
    pub(super) fn walk_resumed(
        &self,
        c: Cursor,
        test: impl MemberTest,
        key: &[u8],
    ) -> (u32, Option<Cursor>) {
        let (Some(tables), Some(bit)) = (self.tables, key_bit(key)) else {
            return self.walk_members(c, test);
        };
        let slot = &tables.memo.resume[c.ord as usize % RESUME_SLOTS];
        if let Some((k, ord, summary)) = resume_point(slot, c) {
            if summary & bit == 0 {
                // (The slot's point stays: a later key clear in its
                // summary resumes there too.)
                let (walked, found, _) =
                    self.walk_members_from(c, MemberAt { k, ord, i: 0 }, &test);
                return (walked, found);
            }
        }
        let from = MemberAt {
            k: c.sidx as usize + 1,
            ord: c.ord + 1,
            i: 0,
        };
        let test = Summarized {
            test: &test,
            seen: Cell::new(0),
        };
        let (walked, found, at) = self.walk_members_from(c, from, &test);
        // The point after the hit's member (its bit is in the summary), or
        // the walk's end after a miss.
        let (k, ord) = match found {
            Some(_) => {
                let next = next_member(self.s(), self.input, &self.index.containers, at.k, at.ord);
                let Some(next) = next else {
                    return (walked, found);
                };
                next
            }
            None => (at.k, at.ord),
        };
        record_resume(slot, c, k, ord, test.seen.get());
        (walked, found)
    }

    /// The memo's answer for a key slot's value, when the slot holds a
    /// member of object `c`: (the value's `sidx`, its cursor's `ord`).
    #[inline(always)]
    fn key_slot(&self, slot: &KeySlot, c: Cursor) -> Option<(u32, u32)> {
        let parent = slot.parent.load(Relaxed);
        if parent >> 32 != u64::from(c.ord) + 1 {
            return None;
        }
        let sidx = parent as u32;
        let value = slot.value.load(Relaxed);
        ((value >> 32) as u32 == sidx).then_some((sidx, value as u32))
    }

    /// [`Doc::field`] of object `c` (`c` is an object) through the memo:
    /// the value of the first member with `key`.
    ///
    /// The lookup is [`Doc::field`]'s, written out here so that it runs in
    /// this function's frame; the memo's member is tested on the raw key
    /// ([`RawKey`]), which makes nothing for a miss.
    #[inline(never)]
    pub(crate) fn field_memo(&self, c: Cursor, key: &[u8]) -> Option<Cursor> {
        self.through_memo(c, key.len(), &RawKey(key), || {
            if self.container_len(c) > TABLE_MIN {
                return self.large_lookup(c, key, self.recent_table(c));
            }
            match PlainKey::new(key) {
                Some(PlainKey::Short(p)) => self.walk_members(c, Plain(&p, key)).1,
                Some(PlainKey::Medium(p)) => self.walk_members(c, Plain(&p, key)).1,
                None => self.field_general(c, key),
            }
        })
    }

    /// [`Doc::field`] in an object of more than [`TABLE_MIN`] members:
    /// [`Doc::large_lookup`], through the memo (tested on the raw key,
    /// [`RawKey`]: a hit makes nothing) once the object has its table,
    /// that is once it is read again and again. An object read a few
    /// times (a field or three of each of many records) would only pay
    /// for the memo's misses and records.
    #[inline(never)]
    pub(super) fn field_large(&self, c: Cursor, key: &[u8]) -> Option<Cursor> {
        let table = self.recent_table(c);
        if table.is_none() {
            return self.large_lookup(c, key, None);
        }
        self.through_memo(c, key.len(), &RawKey(key), || {
            self.large_lookup(c, key, table)
        })
    }

    /// [`Doc::field`] of a short plain key whose words `p` the caller
    /// made ([`Doc::find_simple`] of a one-key path): the memo's answer,
    /// tested here (inlined in the getters, so that a hit, a read repeated
    /// in a loop, makes no call and no frame), else [`Self::short_lookup`].
    #[inline(always)]
    pub(super) fn field_short(&self, c: Cursor, p: &ShortWord, key: &[u8]) -> Option<Cursor> {
        self.memo_hit(c, key.len(), p)
            .or_else(|| self.short_lookup(c, p, key))
    }

    /// [`Self::field_short`] past the memo: the walk of a small object or
    /// the lookup in a large one, without making the words again; the
    /// answer recorded.
    #[inline(never)]
    fn short_lookup(&self, c: Cursor, p: &ShortWord, key: &[u8]) -> Option<Cursor> {
        let v = if self.container_len(c) <= TABLE_MIN {
            self.walk_members(c, Plain(p, key)).1
        } else {
            self.large_plain(c, p, key, self.recent_table(c))
        }?;
        self.remember_member(c, key.len(), v);
        Some(v)
    }

    /// [`Doc::find_simple`] of `path` from `at` when it is one key of one
    /// to seven bytes whose member the memo holds (a getter's read repeated
    /// in a loop, `cur.get_int("id")`): the value, tested on the key's one
    /// word before anything else is made. `None` for any other path or
    /// object and for a miss (the caller then runs `find_simple`).
    ///
    /// The path holds no `.`, `[` (a path of several segments), `"` or `\`
    /// (the member's raw key, the path's bytes and a quote, then has no
    /// escape and that quote closes it, so it is the key: [`RawKey`]'s
    /// reasoning), and does not start with `/` or `*` (the parser's).
    // (Used by the vectorcall getters, which abi3 builds do not have.)
    #[cfg_attr(any(not(feature = "python"), feature = "abi3"), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn memo_key(&self, at: Cursor, path: &[u8]) -> Option<Cursor> {
        const LO: u64 = 0x0101_0101_0101_0101;
        const HI: u64 = LO << 7;
        let n = path.len();
        if !(1..8).contains(&n) {
            return None;
        }
        // The slot first: the first read of each object of many (a cursor
        // per record) leaves here, at the cost of a few instructions.
        let slot = &self.tables?.memo.keys[key_slot_index(at.ord, n)];
        let (sidx, ord) = self.key_slot(slot, at)?;
        if matches!(path[0], b'/' | b'*') {
            return None;
        }
        let w = word_of(path);
        // The has-a-zero-byte test of the word xor each byte (exact as a
        // yes/no; the bytes past the key are zeros, which match none).
        let zero = |b: u8| {
            let x = w ^ (LO * u64::from(b));
            x.wrapping_sub(LO) & !x
        };
        if (zero(b'.') | zero(b'[') | zero(b'"') | zero(b'\\')) & HI != 0 {
            return None;
        }
        if !(self.byte(at) == b'{' && self.at_structural(at)) {
            return None;
        }
        self.member_if(sidx, ord, &ShortWord::of_word(w, n))
    }

    /// The memo's member of object `c` for a key of `len` bytes, when the
    /// slot holds one of `c` and its key passes `test`.
    #[inline(always)]
    fn memo_hit(&self, c: Cursor, len: usize, test: &impl WordTest) -> Option<Cursor> {
        let slot = &self.tables?.memo.keys[key_slot_index(c.ord, len)];
        let (sidx, ord) = self.key_slot(slot, c)?;
        self.member_if(sidx, ord, test)
    }

    /// The member of object `c` whose key (of `len` bytes) passes `test`:
    /// the memo's member when its key passes, else `lookup`'s answer,
    /// recorded.
    #[inline(always)]
    fn through_memo(
        &self,
        c: Cursor,
        len: usize,
        test: &impl WordTest,
        lookup: impl FnOnce() -> Option<Cursor>,
    ) -> Option<Cursor> {
        if let Some(v) = self.memo_hit(c, len, test) {
            return Some(v);
        }
        // (`lookup` is called in one place only, so that it is inlined.)
        let v = lookup()?;
        self.remember_member(c, len, v);
        Some(v)
    }

    /// Record member value `v` of object `c`, found for a key of `len`
    /// bytes, in the key's slot (when the document has tables).
    #[inline(always)]
    fn remember_member(&self, c: Cursor, len: usize, v: Cursor) {
        if let Some(t) = self.tables {
            record_member(&t.memo.keys[key_slot_index(c.ord, len)], c, v);
        }
    }

    /// The member value at `sidx` (with `ord`) when its key passes `test`
    /// (a plain key's word test: a hit is a match, see `key.rs`).
    #[inline(always)]
    fn member_if(&self, sidx: u32, ord: u32, test: &impl WordTest) -> Option<Cursor> {
        let s = self.s();
        let k = sidx.checked_sub(2)? as usize;
        let open = *s.get(k)? as usize;
        if test.test(self.input, open) != Some(true) {
            return None;
        }
        let colon = *s.get(k + 1)? as usize;
        Some(self.value_after(sidx, colon + 1, ord))
    }

    /// [`Doc::element`] of array `c` (`c` is an array) through the memo:
    /// element `i` (negative counts from the end).
    #[inline(never)]
    pub(crate) fn element_memo(&self, c: Cursor, i: i64) -> Option<Cursor> {
        let len = self.container_len(c);
        let i = if i < 0 { i.checked_add(len as i64)? } else { i };
        if i < 0 || i >= len as i64 {
            return None;
        }
        let i = i as u32;
        // (`element` is called in one place only, so that it is inlined.)
        let slot = self
            .tables
            .map(|t| &t.memo.elements[c.ord as usize % ELEMENT_SLOTS]);
        if let Some(slot) = slot {
            if let Some(v) = self.memo_element(slot, c, i) {
                return Some(v);
            }
        }
        let v = self.element(c, i64::from(i))?;
        if let Some(slot) = slot {
            record_element(slot, c, i, v);
        }
        Some(v)
    }

    /// Element `i` of `c` from the slot: the slot's element itself, or a
    /// few steps after it (recorded in the slot).
    #[inline(always)]
    fn memo_element(&self, slot: &ElementSlot, c: Cursor, i: u32) -> Option<Cursor> {
        let parent = slot.parent.load(Relaxed);
        if parent >> 32 != u64::from(c.ord) + 1 {
            return None;
        }
        let sidx = parent as u32;
        let index = slot.index.load(Relaxed);
        let value = slot.value.load(Relaxed);
        if index as u32 != sidx || (value >> 32) as u32 != sidx {
            return None;
        }
        let j = (index >> 32) as u32;
        if i < j || i - j > NEAR {
            return None;
        }
        let mut pos = ChildPos {
            container: c.ord,
            i: j,
            k: sidx,
            ord: value as u32,
        };
        if i == j {
            return Some(self.child_value(pos, false));
        }
        // `i < len`, so every step lands on an element.
        while pos.i < i {
            pos = self.advance(pos, false);
        }
        let v = self.child_value(pos, false);
        record_element(slot, c, i, v);
        Some(v)
    }
}

/// Record member value `v` of object `c` in `slot`, when it lies far
/// enough into `c` to be worth it (see [`FAR`]).
#[inline(always)]
fn record_member(slot: &KeySlot, c: Cursor, v: Cursor) {
    if v.sidx.wrapping_sub(c.sidx) >= FAR {
        slot.parent.store(parent_word(c, v.sidx), Relaxed);
        slot.value.store(pack(v.sidx, v.ord), Relaxed);
    }
}

/// A resume slot's point for object `c`: (the structural to resume at,
/// the ordinal of the next container there, the summary of the keys
/// before it), when the slot holds one of `c` and its words agree.
#[inline(always)]
fn resume_point(slot: &ResumeSlot, c: Cursor) -> Option<(usize, u32, u64)> {
    let parent = slot.parent.load(Relaxed);
    if parent >> 32 != u64::from(c.ord) + 1 {
        return None;
    }
    let k = parent as u32;
    let next = slot.next.load(Relaxed);
    let lo = slot.lo.load(Relaxed);
    let hi = slot.hi.load(Relaxed);
    if (next >> 32) as u32 != k || lo as u32 != k || hi as u32 != k {
        return None;
    }
    Some((k as usize, next as u32, (hi >> 32) << 32 | lo >> 32))
}

/// Record in `slot` that the members of object `c` before structural `k`
/// (the next container's ordinal there: `ord`) have their keys' bits in
/// `summary`.
#[inline(always)]
fn record_resume(slot: &ResumeSlot, c: Cursor, k: usize, ord: u32, summary: u64) {
    let Ok(k) = u32::try_from(k) else { return };
    slot.parent.store(pack(c.ord + 1, k), Relaxed);
    slot.next.store(pack(k, ord), Relaxed);
    slot.lo.store(pack(summary as u32, k), Relaxed);
    slot.hi.store(pack((summary >> 32) as u32, k), Relaxed);
}

/// Record element `i` of array `c`, `v`, in `slot`.
#[inline(always)]
fn record_element(slot: &ElementSlot, c: Cursor, i: u32, v: Cursor) {
    slot.parent.store(parent_word(c, v.sidx), Relaxed);
    slot.index.store(pack(i, v.sidx), Relaxed);
    slot.value.store(pack(v.sidx, v.ord), Relaxed);
}

#[cfg(test)]
mod tests {
    use super::super::{Cursor, Doc};
    use crate::document::Document;
    use crate::error::AccessError;
    use crate::index::Options;

    /// Documents whose reads the memo must not change: duplicate keys
    /// (first wins), keys that share a prefix or differ in length, escaped
    /// keys that decode to a plain key, nested containers (whose ordinals
    /// share slots), spacing, arrays of every element kind.
    const DOCS: &[&str] = &[
        r#"{"a":1,"b":2,"c":3,"d":4,"a":5,"e":{"a":6,"b":7,"c":8,"d":9,"x":[1,2,3]},"f":[{"k":1},{"k":2},{"k":3}]}"#,
        r#"{ "model" : "m" , "temperature" : 0.5 , "messages" : [ {"role":"s","content":"x"} , {"role":"u","content":[1,{"t":2}]} , {"role":"a","content":null} ] , "messages" : 7 }"#,
        r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k1":"dup"}"#,
        r#"{"ab":1,"abc":2,"a\u0062":3,"abcd":4,"\u0061bc":5,"abcdefghijk":6,"abcdefghijkl":7,"abcdefghij\u006bl":8,"abcdefghijklmnop":9}"#,
        r#"[0,"s",[1,2],{"a":1},true,null,-1.5,[],{},"t",[[[]]],{"b":{"c":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}}]"#,
        r#"[[1,2,3],[4,5,6],[7,8,9],[10,11,12],[13,14,15],[16,17,18],[19,20,21],[22,23,24],[25,26,27],[28,29,30]]"#,
        // Keys holding a quote, whose bytes match a member's key and run on
        // into its value (`a":"x` vs `"a":"x"`; one slot for key lengths 1
        // and 5): the reviewer's case of session 15.
        r#"{"k0":0,"k1":1,"k2":2,"k3":3,"a":"x","a\":":"y","a\":\"x":"z","b":"\"","b\"":1}"#,
    ];

    /// Every path of `doc` (keys in dotted or bracket form, indices from
    /// the front and from the back), plus misses.
    fn paths(doc: &Doc<'_>, at: Cursor, prefix: &str, out: &mut Vec<String>) {
        out.push(prefix.to_owned());
        if let Ok(w) = doc.walk(at) {
            let mut w = w;
            let n = doc.len(at).unwrap();
            let mut i = 0;
            while let Some((key, c)) = doc.walk_next(&mut w) {
                match key {
                    Some(raw) => {
                        let key = doc.key_str(raw).unwrap();
                        let dotted = if prefix.is_empty() {
                            key.to_string()
                        } else {
                            format!("{prefix}.{key}")
                        };
                        let quoted = format!("{prefix}[{}]", serde_like_quote(&key));
                        paths(doc, c, &quoted, out);
                        if !key.is_empty() && !key.contains(['.', '[', '*', '/']) {
                            paths(doc, c, &dotted, out);
                        }
                    }
                    None => {
                        paths(doc, c, &format!("{prefix}[{i}]"), out);
                        out.push(format!("{prefix}[{}]", i as i64 - n as i64));
                    }
                }
                i += 1;
            }
            out.push(format!("{prefix}[{n}]"));
            out.push(format!("{prefix}[{}]", -(n as i64) - 1));
            let dot = if prefix.is_empty() { "" } else { "." };
            out.push(format!("{prefix}{dot}nope"));
            out.push(format!("{prefix}{dot}ab"));
        }
    }

    fn serde_like_quote(s: &str) -> String {
        let mut q = String::from("\"");
        for ch in s.chars() {
            match ch {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                c if (c as u32) < 0x20 => q.push_str(&format!("\\u{:04x}", c as u32)),
                c => q.push(c),
            }
        }
        q.push('"');
        q
    }

    /// A small deterministic generator (xorshift), enough to shuffle.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// The answer of a document without tables or memo.
    fn plain(text: &str, path: &str) -> Result<Cursor, AccessError> {
        let index = crate::index::Index::build(text.as_bytes(), &Options::default()).unwrap();
        let doc = Doc::new(text.as_bytes(), &index);
        doc.find(doc.root(), path)
    }

    /// Reads in order, in reverse, in loops over the indices and in random
    /// order give what a document without the memo gives, for every path,
    /// from the root and from a cursor, strict and lazy.
    #[test]
    fn reads_through_the_memo_match_plain_reads() {
        for (n, text) in DOCS.iter().enumerate() {
            for lazy in [false, true] {
                let opts = Options {
                    lazy,
                    ..Options::default()
                };
                let document = Document::parse(text.as_bytes(), &opts).unwrap();
                let doc = document.doc();
                let mut all = Vec::new();
                paths(&doc, doc.root(), "", &mut all);
                let want: Vec<_> = all.iter().map(|p| plain(text, p)).collect();
                let check = |order: &mut dyn Iterator<Item = usize>| {
                    for i in order {
                        assert_eq!(
                            doc.find(doc.root(), &all[i]),
                            want[i],
                            "doc {n} {:?}",
                            all[i]
                        );
                        let c = crate::path::Compiled::new(&all[i]).unwrap();
                        assert_eq!(doc.find_compiled(doc.root(), &c), want[i], "{:?}", all[i]);
                    }
                };
                check(&mut (0..all.len()));
                check(&mut (0..all.len()).rev());
                // Each path twice in a row, then alternating pairs.
                check(&mut (0..2 * all.len()).map(|i| i / 2));
                check(&mut (0..all.len()).flat_map(|i| [i, all.len() - 1 - i]));
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ n as u64);
                check(&mut (0..4 * all.len()).map(|_| rng.below(all.len())));
            }
        }
    }

    /// Lookups in large objects (no table yet: each document is fresh and
    /// read a few times) resume where the last walk stopped when the
    /// key's summary bit allows, and answer as a document without memo:
    /// duplicate keys (the first wins), escaped keys that decode to a
    /// plain one (before and after the resume point), the empty key, keys
    /// sharing their first bytes, containers as values, absent keys.
    #[test]
    fn resumed_walks_match_plain_reads() {
        const KEYS: &[&str] = &[
            "a", "b", "ab", "abc", "abcd", "abcde", "id", "idx", "user", "users", "", "title", "x",
        ];
        let raw = |k: &str, rng: &mut Rng| -> String {
            // Now and then spell a key with an escape, at its start or
            // further in.
            match (k.len(), rng.below(6)) {
                (1.., 0) => format!("\\u{:04x}{}", k.as_bytes()[0], &k[1..]),
                (3.., 1) => format!("{}\\u{:04x}{}", &k[..2], k.as_bytes()[2], &k[3..]),
                _ => k.to_owned(),
            }
        };
        let mut rng = Rng(0x5EED_0F1E_5700);
        for round in 0..400 {
            let n = 17 + rng.below(24);
            let members: Vec<String> = (0..n)
                .map(|i| {
                    let k = KEYS[rng.below(KEYS.len())];
                    let v = match rng.below(4) {
                        0 => format!("{i}"),
                        1 => format!("\"s{i}\""),
                        2 => format!("[{i},{{\"k\":{i}}}]"),
                        _ => format!("{{\"a\":{i},\"b\":[{i}]}}"),
                    };
                    format!("\"{}\":{v}", raw(k, &mut rng))
                })
                .collect();
            let text = format!(
                "[{{{}}},{{{}}}]",
                members.join(","),
                members[..n / 2].join(" , ")
            );
            for lazy in [false, true] {
                let opts = Options {
                    lazy,
                    ..Options::default()
                };
                let document = Document::parse(text.as_bytes(), &opts).unwrap();
                let doc = document.doc();
                for _ in 0..6 {
                    let key = KEYS[rng.below(KEYS.len())];
                    let path = format!("[{}][\"{key}\"]", rng.below(2));
                    assert_eq!(
                        doc.find(doc.root(), &path),
                        plain(&text, &path),
                        "round {round} {path} in {text}"
                    );
                    let obj = doc.find(doc.root(), &path[..3]).unwrap();
                    let want = plain(&text, &path).ok();
                    assert_eq!(doc.field(obj, key.as_bytes()), want, "{path} in {text}");
                }
            }
        }
    }

    /// The summary bit of a plain key is the bit of its raw spelling in a
    /// document, whatever follows the key; a backslash in its first two
    /// bytes sets every bit.
    #[test]
    fn summary_bits_of_keys_and_raw_keys_agree() {
        for key in ["a", "id", "abc", "abcd", "abcdefgh", "é", "ü1"] {
            for after in [":1}", " : 1}", ":\"\\\"\"}", ":{}}"] {
                let text = format!("\"{key}\"{after}");
                assert_eq!(
                    super::raw_key_bit(text.as_bytes(), 0),
                    super::key_bit(key.as_bytes()).unwrap(),
                    "{text}"
                );
            }
        }
        for text in [r#""\u0061":1}"#, r#""a\n":1}"#, r#""\\":1}"#] {
            assert_eq!(super::raw_key_bit(text.as_bytes(), 0), u64::MAX, "{text}");
        }
        // An escape from the third byte on leaves the first two as they are.
        assert_eq!(
            super::raw_key_bit(br#""ab\n":1}"#, 0),
            super::key_bit(b"abcd").unwrap()
        );
        assert_eq!(super::key_bit(b""), None);
    }

    /// A loop over an array's elements steps from the last one read, and
    /// reads beside it (the same element again, one further back, a few
    /// ahead, negative indices) still answer right.
    #[test]
    fn element_loops_match_plain_reads() {
        let text = format!(
            "{{\"pad\":0,\"xs\":[{}]}}",
            (0..40)
                .map(|i| match i % 4 {
                    0 => format!("{i}"),
                    1 => format!("\"s{i}\""),
                    2 => format!("[{i},[{i}]]"),
                    _ => format!("{{\"v\":{i}}}"),
                })
                .collect::<Vec<_>>()
                .join(" , ")
        );
        let document = Document::parse(text.as_bytes(), &Options::default()).unwrap();
        let doc = document.doc();
        let xs = doc.find(doc.root(), "xs").unwrap();
        let mut rng = Rng(7);
        let mut i: i64 = 0;
        for _ in 0..2000 {
            i = match rng.below(6) {
                0 => i + 1,
                1 => i,
                2 => i - 1,
                3 => i + rng.below(12) as i64,
                4 => -(rng.below(41) as i64),
                _ => rng.below(45) as i64,
            };
            if !(-45..45).contains(&i) {
                i = 0;
            }
            let path = format!("xs[{i}]");
            assert_eq!(doc.find(doc.root(), &path), plain(&text, &path), "{path}");
            let want = plain(&text, &path).map_err(|_| AccessError::NotFound { at: 0 });
            assert_eq!(doc.find(xs, &format!("[{i}]")), want, "{path}");
        }
    }

    /// [`Doc::field`] (the views' lookup, through the memo in objects of
    /// more than `TABLE_MIN` members) answers every key of every object as
    /// a document without tables or memo does, in any order and again and
    /// again: wide objects with repeated keys (first wins), escaped keys
    /// that decode to plain ones, keys of 8 to 15 bytes and longer, keys
    /// holding a quote, and misses.
    #[test]
    fn field_through_the_memo_matches_plain_reads() {
        let wide: String = {
            let mut m: Vec<String> = (0..20).map(|i| format!("\"k{i}\":{i}")).collect();
            m.push(r#""k\u0031":"esc""#.to_owned());
            m.push(r#""abcdefghij":1,"abcdefghi\u006a":2,"abcdefghijklmnopq":3"#.to_owned());
            m.push(r#""a\":":"q","a":"x","k3":"dup""#.to_owned());
            format!("{{{}}}", m.join(" , "))
        };
        let mut texts: Vec<String> = DOCS.iter().map(|t| t.to_string()).collect();
        texts.push(wide);
        let keys: Vec<String> = (0..22)
            .map(|i| format!("k{i}"))
            .chain(
                [
                    "abcdefghij",
                    "abcdefghijklmnopq",
                    "a\":",
                    "a",
                    "ab",
                    "nope",
                    "",
                ]
                .map(String::from),
            )
            .collect();
        for text in &texts {
            let document = Document::parse(text.as_bytes(), &Options::default()).unwrap();
            let doc = document.doc();
            let index = crate::index::Index::build(text.as_bytes(), &Options::default()).unwrap();
            let bare = Doc::new(text.as_bytes(), &index);
            let mut objects = Vec::new();
            let mut all = Vec::new();
            paths(&doc, doc.root(), "", &mut all);
            for p in &all {
                if let Ok(c) = doc.find(doc.root(), p) {
                    if doc.byte(c) == b'{' && !objects.contains(&c) {
                        objects.push(c);
                    }
                }
            }
            let mut rng = Rng(0x5EED);
            for _ in 0..40 * keys.len() {
                for &o in &objects {
                    let key = &keys[rng.below(keys.len())];
                    let want = bare.field(o, key.as_bytes());
                    assert_eq!(doc.field(o, key.as_bytes()), want, "{text} {key:?}");
                    assert_eq!(doc.field(o, key.as_bytes()), want, "{text} {key:?} again");
                }
            }
        }
    }

    /// Far keys of different lengths read in turn from one object keep
    /// their own slots: each read after the first of each key is the
    /// memo's answer (the slot names the member), and answers right.
    #[test]
    fn keys_of_one_object_keep_their_slots() {
        let text = r#"{"pad0":0,"pad1":1,"pad2":2,"pad3":3,"pad4":4,"pad5":5,"id":7,"title":"t","user":{"login":"u"}}"#;
        let document = Document::parse(text.as_bytes(), &Options::default()).unwrap();
        let doc = document.doc();
        let root = doc.root();
        let memo = &doc.tables.unwrap().memo;
        let keys = ["id", "title", "user"];
        for _ in 0..3 {
            for key in keys {
                assert_eq!(doc.find(root, key), plain(text, key), "{key}");
            }
            for key in keys {
                let want = plain(text, key).unwrap().sidx;
                let slot = &memo.keys[super::key_slot_index(root.ord, key.len())];
                assert_eq!(
                    doc.key_slot(slot, root).map(|(s, _)| s),
                    Some(want),
                    "{key}"
                );
            }
        }
    }

    /// [`Doc::memo_key`] (the getters' first try) answers only as
    /// `find_simple` does, and answers the repeated reads of far keys:
    /// keys of one to seven bytes read in random order from every object,
    /// with members whose raw keys are paths of another meaning (`a.b`,
    /// `a[0]`, `/a`, `*`, a key holding a quote or a backslash) read first
    /// through quoted paths so that the memo holds them.
    #[test]
    fn memo_key_answers_as_find_simple() {
        let pad: String = (0..12).map(|i| format!("\"p{i}\":{i},")).collect();
        let odd = format!(
            r#"{{{pad}"a.b":1,"a[0]":2,"/a":3,"*":4,"a\"":5,"a\\":6,"é":7,"a":{{{pad}"b":8}},"a\\\"":9,"id":10,"zz":0}}"#
        );
        let mut texts: Vec<String> = DOCS.iter().map(|t| t.to_string()).collect();
        texts.push(odd);
        let mut hits = 0;
        for text in &texts {
            for lazy in [false, true] {
                let opts = Options {
                    lazy,
                    ..Options::default()
                };
                let document = Document::parse(text.as_bytes(), &opts).unwrap();
                let doc = document.doc();
                let mut all = Vec::new();
                paths(&doc, doc.root(), "", &mut all);
                let objects: Vec<Cursor> = {
                    let mut o = vec![];
                    for p in &all {
                        if let Ok(c) = doc.find(doc.root(), p) {
                            if doc.byte(c) == b'{' && !o.contains(&c) {
                                o.push(c);
                            }
                        }
                    }
                    o
                };
                if objects.is_empty() {
                    continue;
                }
                let mut keys: Vec<String> = [
                    "a.b", "a[0]", "/a", "*", "a\"", "a\\", "é", "a", "b", "a\\\"", "id", "k19",
                    "k1", "nope", "",
                ]
                .map(String::from)
                .to_vec();
                keys.extend(all.iter().filter(|p| p.len() < 8).cloned());
                let quoted: Vec<String> = keys
                    .iter()
                    .map(|k| format!("[{}]", serde_like_quote(k)))
                    .collect();
                let mut rng = Rng(0xC0FFEE);
                for _ in 0..30 * keys.len() {
                    let o = objects[rng.below(objects.len())];
                    let i = rng.below(keys.len());
                    // Fill the memo through either path form.
                    let _ = doc.find(o, &quoted[i]);
                    let _ = doc.find(o, &keys[i]);
                    if let Some(v) = doc.memo_key(o, keys[i].as_bytes()) {
                        hits += 1;
                        assert_eq!(
                            doc.find_simple(o, keys[i].as_bytes()),
                            Some(Ok(v)),
                            "{text} {:?}",
                            keys[i]
                        );
                    }
                }
            }
        }
        assert!(hits > 100, "{hits} hits");
        // A far key read twice: the second read's answer is the memo's.
        let text = &texts[texts.len() - 1];
        let document = Document::parse(text.as_bytes(), &Options::default()).unwrap();
        let doc = document.doc();
        let root = doc.root();
        let want = doc.find(root, "id").unwrap();
        assert_eq!(doc.memo_key(root, b"id"), Some(want));
        let _ = doc.find(root, r#"["a.b"]"#);
        assert_eq!(doc.memo_key(root, b"a.b"), None);
        let _ = doc.find(root, r#"["a\\"]"#);
        assert_eq!(doc.memo_key(root, b"a\\"), None);
    }

    /// Threads reading one document at once, each in its own order, all
    /// get the plain answers (the slots' words are written and read in
    /// every interleaving).
    #[test]
    fn threads_share_the_memo() {
        let text = format!("[{}]", DOCS.join(","));
        let document = Document::parse(text.as_bytes(), &Options::default()).unwrap();
        let doc = document.doc();
        let mut all = Vec::new();
        paths(&doc, doc.root(), "", &mut all);
        let want: Vec<_> = all.iter().map(|p| plain(&text, p)).collect();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (document, all, want) = (&document, &all, &want);
                s.spawn(move || {
                    let doc = document.doc();
                    let mut rng = Rng(t * 0x1234_5678 + 1);
                    for _ in 0..20_000 {
                        let i = rng.below(all.len());
                        assert_eq!(doc.find(doc.root(), &all[i]), want[i], "{:?}", all[i]);
                    }
                });
            }
        });
    }

    /// [`RawKey`]'s word test and [`plain`] against byte loops: keys of
    /// every length to 20, each byte in turn a quote, a backslash, a zero
    /// or another byte, against bodies equal to the key, differing in one
    /// byte, or not followed by a quote, near the input's end and not.
    #[test]
    fn raw_key_words_match_byte_loops() {
        use super::super::key::WordTest;
        use super::{plain, RawKey};
        let slow_plain = |k: &[u8]| !k.iter().any(|&b| b == b'"' || b == b'\\');
        let slow_test = |key: &[u8], input: &[u8], open: usize| -> Option<bool> {
            let n = key.len();
            let body = input.get(open + 1..open + 2 + n)?;
            Some(body[n] == b'"' && &body[..n] == key && slow_plain(key))
        };
        let specials = [b'"', b'\\', 0, b'a', b'z', 0x80, b' '];
        for n in 0..=20usize {
            let base: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
            let mut keys = vec![base.clone()];
            for at in 0..n {
                for &b in &specials {
                    let mut k = base.clone();
                    k[at] = b;
                    keys.push(k);
                }
            }
            for key in &keys {
                assert_eq!(plain(key), slow_plain(key), "{key:?}");
                for body in &keys {
                    for tail in [&b"\""[..], b"x", b"\"}"] {
                        for pad in [0usize, 12] {
                            let mut input = b"{\"".to_vec();
                            input.extend_from_slice(body);
                            input.extend_from_slice(tail);
                            input.extend(std::iter::repeat_n(b' ', pad));
                            assert_eq!(
                                RawKey(key).test(&input, 1),
                                slow_test(key, &input, 1),
                                "{key:?} {input:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}
