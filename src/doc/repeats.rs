//! Repeated keys of an object: which members repeat the key of an
//! earlier one, without hashing. For large objects, by sorted
//! fingerprints: the one mechanism every reader of large objects uses:
//! [`Doc::distinct_items`] (views, `.*` wildcards, patches, the writer's
//! member-by-member path), [`Doc::keys_unique`], and the splice writer,
//! which gathers the keys during a walk it makes anyway ([`Keys::push`]).
//! For small objects of strict documents, the lean walk [`small_keys`]
//! ([`Doc::keys_unique`], the splice writer's walk when it cuts out
//! deleted members, and, with each key's fingerprint, the member table of
//! an edited object: [`small_keys_printed`], `crate::edit::MemberTable`).
//!
//! # Why
//!
//! Objects of up to [`SMALL`] members compare each key with the ones before
//! it ([`small_keys`], or `Pairwise` in `doc.rs` where that walk cannot
//! tell: no set, nothing to sort). Above that a hash
//! set of the keys costs more than the rest of a read or an edit put
//! together (a SipHash of each key and a heap table: ~12k instructions for
//! one 30-member object of the github issues, against ~1k for its whole
//! splice).
//!
//! # Algorithm
//!
//! A key is compared by its identity, its unescaped bytes: in a strict
//! document a raw key body without a backslash is that already, so the
//! common case reads the keys in place; a key with a backslash, or any key
//! of a lazy document (its keys were never validated), is decoded first
//! (an undecodable key is an error, as for every read of it).
//!
//! Each key gets a 64-bit fingerprint from its length and its first and
//! last eight bytes ([`print()`]). The fingerprints, each with its member's
//! ordinal in the low [`ORD_BITS`] bits, are sorted as plain integers
//! (several times cheaper than sorting `(fingerprint, key)` pairs; objects
//! of more than 2^16 members sort pairs). Equal keys have equal
//! fingerprints, so they end up in one run, in member order (the ordinal
//! breaks ties); a member repeats a key when an earlier member of its run
//! has the same identity. A collision of different keys costs one byte
//! comparison, never a wrong answer.

use super::key::{
    first_word, has_backslash as body_has_backslash, print as key_print, tag, word_has_backslash,
};
use super::{next_member, Cursor, Doc};
use crate::error::{AccessError, JsonType};
use crate::lex::string_close;
use smallvec::SmallVec;
use std::borrow::Cow;

/// Objects up to this many members are checked by [`small_keys`] (or,
/// when it cannot tell, pairwise by `Doc::distinct_items`); larger ones by
/// sorted fingerprints.
pub(crate) const SMALL: usize = 16;

/// Objects up to this many members compare each key's fingerprint with
/// every earlier one in [`small_keys`]; larger ones test a 256-bit filter
/// first.
const PAIRWISE: usize = 8;

/// Members kept on the stack; larger objects spill to the heap.
const STACK: usize = 64;

/// Bits of a sort entry that hold the member's ordinal (the rest hold its
/// fingerprint); larger objects sort (fingerprint, ordinal) pairs.
const ORD_BITS: u32 = 16;
const ORD_MASK: u64 = (1 << ORD_BITS) - 1;

/// The ordinals of the members that repeat an earlier key, ascending
/// (empty in the common case).
pub(crate) type Later = SmallVec<[u32; 4]>;

/// The raw keys of one object, gathered member by member.
pub(crate) struct Keys<'a> {
    input: &'a [u8],
    keys: SmallVec<[&'a [u8]; STACK]>,
    /// Per key: its fingerprint in the high bits, its ordinal in the low
    /// [`ORD_BITS`] (while the ordinal fits).
    prints: SmallVec<[u64; STACK]>,
    /// A key holds a backslash: its raw bytes are not its identity.
    escaped: bool,
}

impl<'a> Keys<'a> {
    /// Room for `n` keys of `doc`.
    pub(crate) fn with_capacity(doc: &Doc<'a>, n: usize) -> Self {
        Keys {
            input: doc.input(),
            keys: SmallVec::with_capacity(n),
            prints: SmallVec::with_capacity(n),
            escaped: false,
        }
    }

    /// The keys of object `c`, in member order.
    pub(crate) fn of(doc: &Doc<'a>, c: Cursor) -> Result<Self, AccessError> {
        let items = doc.object_items(c)?;
        let mut keys = Keys::with_capacity(doc, items.size_hint().0);
        for (raw, _) in items {
            keys.push(raw);
        }
        Ok(keys)
    }

    /// The next member's raw key body (as [`Doc::object_items`] gives it:
    /// a slice of the document's input).
    #[inline(always)]
    pub(crate) fn push(&mut self, raw: &'a [u8]) {
        let (print, escaped) = raw_print(self.input, raw);
        self.escaped |= escaped;
        let ord = self.keys.len() as u64 & ORD_MASK;
        self.prints.push(print & !ORD_MASK | ord);
        self.keys.push(raw);
    }

    /// Whether no key repeats (after unescaping).
    pub(crate) fn unique(self, doc: &Doc<'a>) -> Result<bool, AccessError> {
        let mut any = false;
        self.repeats(doc, |_| {
            any = true;
            false
        })?;
        Ok(!any)
    }

    /// The ordinals of the members whose key repeats an earlier one's,
    /// ascending.
    pub(crate) fn later(self, doc: &Doc<'a>) -> Result<Later, AccessError> {
        let mut later = Later::new();
        self.repeats(doc, |i| {
            later.push(i);
            true
        })?;
        later.sort_unstable();
        Ok(later)
    }

    /// Call `f` with the ordinal of every member that repeats an earlier
    /// key (in no particular order) while it returns true.
    fn repeats(mut self, doc: &Doc<'a>, f: impl FnMut(u32) -> bool) -> Result<(), AccessError> {
        if self.escaped || doc.index().is_lazy() {
            return self.decoded(doc, f);
        }
        let keys = &self.keys;
        if keys.len() <= ORD_MASK as usize + 1 {
            self.prints.sort_unstable();
            let prints = &self.prints;
            runs(
                prints.len(),
                |i| prints[i] & !ORD_MASK,
                |i| (prints[i] & ORD_MASK) as u32,
                |a, b| keys[a as usize] == keys[b as usize],
                f,
            );
        } else {
            paired_runs(
                keys.iter().map(|k| raw_print(self.input, k).0),
                |a, b| keys[a as usize] == keys[b as usize],
                f,
            );
        }
        Ok(())
    }

    /// [`Self::repeats`] by the keys' decoded bytes (a key with an escape,
    /// or a lazy document).
    #[cold]
    #[inline(never)]
    fn decoded(&self, doc: &Doc<'a>, f: impl FnMut(u32) -> bool) -> Result<(), AccessError> {
        let ids = self
            .keys
            .iter()
            .map(|&raw| doc.key_identity(raw))
            .collect::<Result<Vec<Cow<'a, [u8]>>, _>>()?;
        paired_runs(
            ids.iter().map(|k| print(k)),
            |a, b| ids[a as usize] == ids[b as usize],
            f,
        );
        Ok(())
    }
}

/// [`runs`] over (fingerprint, ordinal) pairs sorted together: for
/// objects too large to pack an ordinal into the fingerprint's low bits,
/// and for decoded keys. `prints` gives each member's fingerprint in
/// member order.
fn paired_runs(
    prints: impl Iterator<Item = u64>,
    same: impl Fn(u32, u32) -> bool,
    f: impl FnMut(u32) -> bool,
) {
    let mut pairs: Vec<(u64, u32)> = prints.zip(0u32..).collect();
    pairs.sort_unstable();
    runs(pairs.len(), |i| pairs[i].0, |i| pairs[i].1, same, f);
}

/// Walk the `n` sorted entries (fingerprint `print(i)`, ordinal `ord(i)`):
/// within each run of equal fingerprints (in member order), call `f` with
/// the ordinal of every entry whose key equals an earlier entry's of the
/// run (`same`), while `f` returns true. Runs longer than one are
/// collisions or repeats: rare and short, so every pair is compared.
#[inline(always)]
fn runs(
    n: usize,
    print: impl Fn(usize) -> u64,
    ord: impl Fn(usize) -> u32,
    same: impl Fn(u32, u32) -> bool,
    mut f: impl FnMut(u32) -> bool,
) {
    let mut run = 0;
    for i in 1..n {
        if print(i) != print(run) {
            run = i;
            continue;
        }
        let me = ord(i);
        if (run..i).any(|j| same(ord(j), me)) && !f(me) {
            return;
        }
    }
}

/// Whether no key of object `at` repeats (after unescaping), for an object
/// of more than [`SMALL`] members. Out of line, so its key buffers (about
/// 1.5 KB of stack) take no room in the frames of callers that recurse
/// (the writer into edited children).
#[inline(never)]
pub(crate) fn keys_unique(doc: &Doc<'_>, at: Cursor) -> Result<bool, AccessError> {
    Keys::of(doc, at)?.unique(doc)
}

/// The members of object `at` that repeat an earlier key ([`Keys::later`]).
#[inline(never)]
pub(crate) fn later(doc: &Doc<'_>, at: Cursor) -> Result<Later, AccessError> {
    Keys::of(doc, at)?.later(doc)
}

/// The lean walk over the members of a small object: whether the keys of
/// object `c` are distinct, with `each` given every member's key
/// structural and the ordinal of the first container at or after the
/// member ([`member_value`] makes its value's cursor from them), in order,
/// until a key repeats (then `Some(false)`). `None`: not the case this
/// walk covers (a lazy document, not an object, more than [`SMALL`]
/// members, a key with a backslash, an index that does not fit the
/// input); `each` may have been called, and the caller starts over with
/// the general walk. [`Doc::keys_unique`] and the splice writer's walk
/// for deletions use it.
///
/// In a strict document a key without a backslash is its own identity, so
/// equal keys are equal bytes. Per member: the key's quote and the `:`
/// after it (its closing quote is usually the byte before the `:`; with
/// whitespace between them, found by the general test), its first eight
/// bytes in one load masked to its length, their fingerprint with the
/// length ([`key_print`](super::key::print)), compared with the earlier
/// members' (in objects of more than [`PAIRWISE`] members only when a
/// 256-bit filter of the fingerprints says one may be equal); equal
/// fingerprints compare the keys' bytes. In a document without any
/// backslash ([`crate::Index::has_escapes`]) no key is tested for one. The
/// value is skipped by [`next_member`]; nothing else is kept per member.
#[inline(always)]
pub(crate) fn small_keys(
    doc: &Doc<'_>,
    c: Cursor,
    mut each: impl FnMut(usize, u32),
) -> Option<bool> {
    let mut prints = [0u64; SMALL];
    small_keys_printed(doc, c, &mut prints, |_, k, ord, _| each(k, ord))
}

/// [`small_keys`], keeping each member's key fingerprint (the one
/// [`lookup_print`] gives for the same key) in `prints` (member `i`'s at
/// `prints[i]`), and giving `each` the member's position `i` (below
/// [`SMALL`]) and its key's length too: the member table of an edited
/// object (`crate::edit::MemberTable`) walks straight into its own arrays.
#[inline(always)]
pub(crate) fn small_keys_printed(
    doc: &Doc<'_>,
    c: Cursor,
    prints: &mut [u64; SMALL],
    mut each: impl FnMut(usize, usize, u32, usize),
) -> Option<bool> {
    if doc.index.lazy || doc.type_of(c) != JsonType::Object {
        return None;
    }
    let n = doc.container_len(c) as usize;
    if n > SMALL {
        return None;
    }
    let (input, s) = (doc.input, doc.s());
    let containers = &doc.index.containers;
    let escapes = doc.index.has_escapes();
    // `prints`, per key: its fingerprint (the earlier keys' bodies are
    // found again by `repeats_earlier` in the rare case of an equal
    // fingerprint).
    let mut seen = [0u64; 4];
    let mut k = c.sidx as usize + 1;
    let mut ord = c.ord + 1;
    // The bounds, proven once: every member's key and `:` are structurals
    // before the object's closer `cl`, and structurals ascend, so each lies
    // before the closer's byte, inside the input (checked here: an index
    // paired with another input fails the walk, never reads out of
    // bounds).
    let cl = containers.get(c.ord as usize)?.close as usize;
    if *s.get(cl)? as usize >= input.len() {
        return None;
    }
    for i in 0..n {
        if k + 1 >= cl {
            return None;
        }
        // SAFETY: `k + 1 < cl < s.len()` (checked above).
        let (open, colon) = unsafe { (*s.get_unchecked(k), *s.get_unchecked(k + 1)) };
        let (open, colon) = (open as usize, colon as usize);
        // SAFETY: `colon = s[k + 1] <= s[cl] < input.len()` (checked above).
        let close = unsafe { key_close(input, s, k, open, colon) }?;
        let len = close - open - 1;
        let print = key_fingerprint(input, open, close, escapes)?;
        let maybe = if n <= PAIRWISE {
            prints[..i].contains(&print)
        } else {
            let t = tag(print);
            let (w, bit) = (usize::from(t >> 6), 1u64 << (t & 63));
            let hit = seen[w] & bit != 0;
            seen[w] |= bit;
            hit
        };
        if maybe && repeats_earlier(doc, c, &prints[..i], print, &input[open + 1..close]) {
            return Some(false);
        }
        prints[i] = print;
        each(i, k, ord, len);
        if i + 1 < n {
            (k, ord) = next_member(s, input, containers, k, ord)?;
        }
    }
    Some(true)
}

/// [`small_keys_printed`] for the member table of an edited object
/// (`crate::edit::MemberTable`): the same answer (`Some(true)`: the keys
/// are distinct, none escaped, and `prints`, `lens`, `members` hold the
/// `*count` members; `Some(false)`: a key repeats; `None`: not an
/// object the walk covers), from a loop of its own: every read of the
/// index proven by one test per member (the member's value structural
/// lies before the object's closer), the member written straight into
/// the table's arrays, and the step to the next member reading the
/// container table only after a container value.
#[inline(always)]
pub(crate) fn small_keys_table(
    doc: &Doc<'_>,
    c: Cursor,
    prints: &mut [u64; SMALL],
    lens: &mut [u32; SMALL],
    members: &mut [(u32, u32); SMALL],
    count: &mut usize,
) -> Option<bool> {
    let (input, s) = (doc.input, doc.s());
    let containers = &doc.index.containers;
    if doc.index.lazy || input.get(c.start as usize) != Some(&b'{') {
        return None;
    }
    let ct = containers.get(c.ord as usize)?;
    // (An object cursor's structural is its `{`: the type test's
    // `at_structural`.)
    if s.get(c.sidx as usize).copied() != Some(c.start) {
        return None;
    }
    let n = ct.len as usize;
    if n > SMALL {
        return None;
    }
    let cl = ct.close as usize;
    // The bounds, proven once: every member's key, `:` and value are
    // structurals at or before the object's closer `cl`, and structurals ascend,
    // so each lies before the closer's byte, inside the input (checked
    // here: an index paired with another input fails the walk, never reads
    // out of bounds).
    if *s.get(cl)? as usize >= input.len() {
        return None;
    }
    let escapes = doc.index.has_escapes();
    let mut seen = [0u64; 4];
    let mut k = c.sidx as usize + 1;
    let mut ord = c.ord + 1;
    for i in 0..n {
        // (A scalar value's structural is the `,` or `}` after it: the
        // last member's may be the closer itself.)
        if k + 2 > cl {
            return None;
        }
        // SAFETY: `k + 2 <= cl < s.len()` (checked above).
        let (open, colon, v) = unsafe {
            (
                *s.get_unchecked(k) as usize,
                *s.get_unchecked(k + 1) as usize,
                *s.get_unchecked(k + 2) as usize,
            )
        };
        // SAFETY: `colon = s[k + 1] <= s[cl] < input.len()` (checked above).
        let close = unsafe { key_close(input, s, k, open, colon) }?;
        let len = close - open - 1;
        let print = key_fingerprint(input, open, close, escapes)?;
        // A 256-bit filter of the fingerprints' tags at every size (a
        // multiply and a bit test, where comparing with each earlier
        // fingerprint is a loop); a hit is confirmed by the earlier keys'
        // bodies.
        let t = tag(print);
        let (w, bit) = (usize::from(t >> 6), 1u64 << (t & 63));
        let maybe = seen[w] & bit != 0;
        seen[w] |= bit;
        if maybe && repeats_earlier(doc, c, &prints[..i], print, &input[open + 1..close]) {
            return Some(false);
        }
        prints[i] = print;
        lens[i] = len as u32;
        members[i] = (k as u32, ord);
        // The next member: past a container by the container table, past
        // a string by its two quotes, past any other scalar by its one
        // structural. (`max`: an index that is not this input's still
        // moves on, as in `next_member`.)
        // SAFETY: `v = s[k + 2] <= s[cl] < input.len()` (checked above).
        let b = unsafe { *input.get_unchecked(v) };
        if b | 0x20 == b'{' {
            let vt = containers.get(ord as usize)?;
            k = (vt.close as usize + 2).max(k + 3);
            ord = vt.next;
        } else {
            k += 3 + usize::from(b == b'"');
        }
    }
    *count = n;
    Some(true)
}

/// The closing quote of the key whose opening quote is structural `k` at
/// `open`, its `:` at `colon`: right before the `:`, or (whitespace
/// between them) found by the general test. Shared by
/// [`small_keys_printed`] and [`small_keys_table`]'s member loops.
///
/// # Safety
/// `colon < input.len()` (each loop proves it once, from its object's
/// closer).
#[inline(always)]
unsafe fn key_close(input: &[u8], s: &[u32], k: usize, open: usize, colon: usize) -> Option<usize> {
    // SAFETY: `colon - 1 < colon < input.len()` (the caller's contract)
    // when `colon > open + 1 >= 1`.
    if colon > open + 1 && unsafe { *input.get_unchecked(colon - 1) } == b'"' {
        Some(colon - 1)
    } else {
        string_close(input, s, k)
    }
}

/// The fingerprint ([`key_print`]) of the key whose body is
/// `input[open + 1..close]`, read as one word where eight bytes follow
/// its quote; `None` when `escapes` and the key has a backslash (the
/// callers give up on such objects). Shared by [`small_keys_printed`] and
/// [`small_keys_table`]'s member loops.
#[inline(always)]
fn key_fingerprint(input: &[u8], open: usize, close: usize, escapes: bool) -> Option<u64> {
    let len = close - open - 1;
    let word = if open + 9 <= input.len() {
        // SAFETY: the eight bytes from `open + 1` are in the input
        // (checked on the line above); an unaligned read of them.
        let w =
            u64::from_le(unsafe { input.as_ptr().add(open + 1).cast::<u64>().read_unaligned() });
        if len < 8 {
            w & ((1u64 << (8 * len)) - 1)
        } else {
            w
        }
    } else {
        first_word(input, &input[open + 1..close])
    };
    if escapes {
        // (A short key is all in `word`, zeros after it.)
        let escaped = if len <= 8 {
            word_has_backslash(word)
        } else {
            body_has_backslash(&input[open + 1..close])
        };
        if escaped {
            return None;
        }
    }
    Some(key_print(word, len))
}

/// Whether one of the first members of object `c`, whose fingerprints
/// are `prints`, has fingerprint `print` and key body `key`: a second walk
/// over them, for [`small_keys`]' rare equal fingerprint (a repeat or a
/// collision), so that its loop keeps nothing per member but the
/// fingerprint.
#[cold]
#[inline(never)]
fn repeats_earlier(doc: &Doc<'_>, c: Cursor, prints: &[u64], print: u64, key: &[u8]) -> bool {
    let (s, containers) = (doc.s(), &doc.index.containers);
    let (mut k, mut ord) = (c.sidx as usize + 1, c.ord + 1);
    for &p in prints {
        if p == print && doc.string_body(k as u32) == key {
            return true;
        }
        match next_member(s, doc.input, containers, k, ord) {
            Some(next) => (k, ord) = next,
            None => return false,
        }
    }
    false
}

/// Whether a member after the one whose value is `v` in object `at` has
/// the same key: the check an object needs before its bytes are copied
/// around an edited child (`v`) when none of its own members changed
/// (the splice writer): a reader that keeps the last of a repeated key
/// would otherwise not see the edit. Only the members after `v`'s are
/// walked (no earlier one has its key: `v`, as every child a host reads,
/// is its key's first occurrence), by the lookup walk of [`Doc::field`]
/// started at the next member ([`Doc::field_from`]) with `v`'s key (its
/// raw body, unescaped when the document has escapes): for a plain key
/// each later key is told from its opening quote by the key's words, and
/// only a body whose first difference is a backslash is decoded (an
/// escaped key equal to `v`'s is found); any other key goes through the
/// general matcher member by member. A later key that cannot be decoded
/// is not `v`'s. `None`: not the case this walk covers (a lazy document,
/// `v`'s own key undecodable, an index that does not fit the input); the
/// caller checks every key.
pub(crate) fn repeated_later(doc: &Doc<'_>, at: Cursor, v: Cursor) -> Option<bool> {
    if doc.index.lazy {
        return None;
    }
    let (input, s) = (doc.input, doc.s());
    let containers = &doc.index.containers;
    // The object's closer: every member's key comes before it.
    let cl = containers.get(at.ord as usize)?.close as usize;
    let first = (v.sidx as usize).checked_sub(2)?;
    if first <= at.sidx as usize || first >= cl {
        return None;
    }
    // (Past the last member, `k` is past the closer: the last member,
    // a request's `messages`, reads no key at all.)
    let (k, ord) = next_member(s, input, containers, first, v.ord)?;
    if k >= cl {
        return Some(false);
    }
    // `v`'s key body, by its quote (structural `first`) and the `:` after it.
    let (open, colon) = (*s.get(first)? as usize, *s.get(first + 1)? as usize);
    let close = if colon > open + 1 && input.get(colon - 1) == Some(&b'"') {
        colon - 1
    } else {
        string_close(input, s, first)?
    };
    let raw = input.get(open + 1..close)?;
    let key = if doc.index.has_escapes() {
        doc.key_identity(raw).ok()?
    } else {
        Cow::Borrowed(raw)
    };
    Some(doc.field_from(at, k, ord, &key).is_some())
}

/// The fingerprint [`small_keys_printed`] gives a member whose key body is
/// `key` (a strict document's body without a backslash: the key itself).
/// Equal keys have equal fingerprints; two keys both of up to seven bytes
/// have equal fingerprints only when they are equal (the word holds all
/// their bytes, the top byte their length). A longer key's eighth byte
/// shares the top byte with its length, so a key of eight bytes or more
/// can share a shorter key's fingerprint: compare lengths too.
#[inline]
pub(crate) fn lookup_print(key: &[u8]) -> u64 {
    key_print(super::key::word_of(key), key.len())
}

/// The value of the member whose key is structural `k`, `ord` the ordinal
/// of the first container at or after the member (as [`small_keys`] gives
/// them).
#[inline]
pub(crate) fn member_value(doc: &Doc<'_>, k: usize, ord: u32) -> Cursor {
    let colon = doc.s()[k + 1] as usize;
    doc.value_at(k as u32 + 2, colon + 1, ord)
}

/// A raw key body's fingerprint ([`print()`]) and whether it holds a
/// backslash (read from the same words). A short key is read as the eight
/// input bytes from its start (the closing quote and what follows it),
/// masked to the key's own bytes: one load.
#[inline(always)]
fn raw_print(input: &[u8], raw: &[u8]) -> (u64, bool) {
    let n = raw.len();
    if n >= 8 {
        let (first, last) = (word(&raw[..8]), word(&raw[n - 8..]));
        let mut escaped = has_backslash(first) | has_backslash(last);
        // The words between (keys are short: rarely any).
        let mut i = 8;
        while i + 8 < n {
            escaped |= has_backslash(word(&raw[i..i + 8]));
            i += 8;
        }
        return (mix(first, last, n), escaped);
    }
    let start = raw.as_ptr() as usize - input.as_ptr() as usize;
    let w = match input.get(start..start + 8) {
        Some(b) => word(b) & ((1u64 << (8 * n)) - 1),
        None => short_word(raw),
    };
    (mix(w, 0, n), has_backslash(w))
}

/// A key's fingerprint: its length and its first and last eight bytes
/// (zeros past the end of a shorter key), mixed so that the high bits (the
/// ones kept, see [`ORD_BITS`]) depend on all of them. Equal to
/// [`raw_print`]'s for the same bytes.
#[inline]
fn print(key: &[u8]) -> u64 {
    let n = key.len();
    if n >= 8 {
        mix(word(&key[..8]), word(&key[n - 8..]), n)
    } else {
        mix(short_word(key), 0, n)
    }
}

#[inline(always)]
fn mix(first: u64, last: u64, n: usize) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    (first ^ last.rotate_left(29) ^ (n as u64).wrapping_mul(K)).wrapping_mul(K)
}

#[inline(always)]
fn word(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8 bytes"))
}

/// The bytes of a key shorter than eight bytes as a little-endian word.
#[inline]
fn short_word(key: &[u8]) -> u64 {
    key.iter()
        .enumerate()
        .fold(0u64, |w, (i, &b)| w | u64::from(b) << (8 * i))
}

/// Whether any of the eight bytes of `w` is a backslash: a byte of `w` xor
/// a word of backslashes is zero exactly there, and `(x - LO) & !x & HI`
/// is non-zero exactly when `x` has a zero byte.
#[inline(always)]
fn has_backslash(w: u64) -> bool {
    super::key::word_has_backslash(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Index, Options};

    /// Whether the keys of the object `text` are distinct, by the
    /// fingerprints and by a plain set of decoded keys, which must agree;
    /// and the repeating ordinals likewise.
    fn check_with(text: &str, options: &Options) -> bool {
        let index = Index::build(text.as_bytes(), options).unwrap();
        let doc = Doc::new(text.as_bytes(), &index);
        let root = doc.root();
        let mut seen = std::collections::HashSet::new();
        let mut want = Vec::new();
        for (i, (raw, _)) in doc.object_items(root).unwrap().enumerate() {
            if !seen.insert(doc.key_str(raw).unwrap().into_owned()) {
                want.push(i as u32);
            }
        }
        let got = later(&doc, root).unwrap();
        assert_eq!(&got[..], &want[..], "{text}");
        let unique = keys_unique(&doc, root).unwrap();
        assert_eq!(unique, want.is_empty(), "{text}");
        assert_eq!(doc.keys_unique(root).unwrap(), unique, "{text}");
        let distinct: Vec<u32> = doc
            .distinct_items(root)
            .unwrap()
            .map(|m| m.unwrap().0)
            .collect();
        let n = doc.len(root).unwrap() as u32;
        let all: Vec<u32> = (0..n).filter(|i| !want.contains(i)).collect();
        assert_eq!(distinct, all, "{text}");
        unique
    }

    fn check(text: &str) -> bool {
        let strict = check_with(text, &Options::default());
        let lazy = Options {
            lazy: true,
            ..Options::default()
        };
        assert_eq!(check_with(text, &lazy), strict, "lazy: {text}");
        strict
    }

    fn object(keys: &[String]) -> String {
        let members: Vec<String> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| format!("\"{k}\": {i}"))
            .collect();
        format!("{{{}}}", members.join(", "))
    }

    fn numbered(n: usize, f: impl Fn(usize) -> String) -> Vec<String> {
        (0..n).map(f).collect()
    }

    #[test]
    fn large_objects_with_and_without_repeats() {
        for n in [17, 30, 64, 65, 200] {
            let mut keys = numbered(n, |i| format!("key_{i}"));
            assert!(check(&object(&keys)), "{n} distinct");
            keys.push(format!("key_{}", n / 2));
            assert!(!check(&object(&keys)), "{n} with a repeat");
            keys.push(format!("key_{}", n / 2));
            keys.push(format!("key_{}", n - 1));
            assert!(!check(&object(&keys)), "{n} with three repeats");
        }
    }

    #[test]
    fn more_members_than_the_packed_ordinals_hold() {
        let n = (ORD_MASK as usize + 1) + 40;
        let mut keys = numbered(n, |i| format!("k{i}"));
        assert!(check_with(&object(&keys), &Options::default()));
        keys.push("k70000".into());
        keys.push("k3".into());
        assert!(!check_with(&object(&keys), &Options::default()));
    }

    #[test]
    fn equal_prints_of_different_keys_are_compared_in_full() {
        // Same length, first and last eight bytes: only the middle differs.
        let keys = numbered(20, |i| format!("abcdefgh_{:02}_12345678", i % 20));
        assert!(check(&object(&keys)));
        let mut keys = numbered(20, |i| format!("abcdefgh{}12345678", "x".repeat(i % 3 + 1)));
        // Three distinct keys, each repeated: repeats.
        assert!(!check(&object(&keys)));
        keys.truncate(3);
        keys.extend(numbered(15, |i| format!("other_{i}")));
        assert!(check(&object(&keys)));
    }

    #[test]
    fn short_keys_and_empty_keys() {
        let mut keys = numbered(26, |i| ((b'a' + i as u8) as char).to_string());
        keys.push(String::new());
        assert!(check(&object(&keys)));
        keys.push(String::new());
        assert!(!check(&object(&keys)));
        // A short key and a longer one that starts with it.
        let mut keys = numbered(20, |i| format!("k{i}"));
        keys.push("k1\u{0}".replace('\u{0}', "0"));
        assert!(!check(&object(&keys)), "k10 twice");
    }

    /// [`repeated_later`] of every member of the object `text` (strict)
    /// against a model: the decoded keys after it; and [`Doc::field_from`]
    /// from every member, for every key of the object and a few absent
    /// ones, against the first member at or after it with that key.
    fn check_later(text: &str) {
        let index = Index::build(text.as_bytes(), &Options::default()).unwrap();
        let doc = Doc::new(text.as_bytes(), &index);
        let root = doc.root();
        let s = doc.s();
        let members: Vec<(String, Cursor)> = doc
            .object_items(root)
            .unwrap()
            .map(|(raw, c)| (doc.key_str(raw).unwrap().into_owned(), c))
            .collect();
        let mut probes: Vec<String> = members.iter().map(|(k, _)| k.clone()).collect();
        probes.extend(["", "absent", "a_key_of_more_than_fifteen"].map(String::from));
        // Each member's key structural and the next container's ordinal.
        let (mut k, mut ord) = (root.sidx as usize + 1, root.ord + 1);
        for (i, (key, c)) in members.iter().enumerate() {
            if members[..i].iter().all(|(e, _)| e != key) {
                let want = members[i + 1..].iter().any(|(e, _)| e == key);
                assert_eq!(repeated_later(&doc, root, *c), Some(want), "{text}: {key}");
            }
            for p in &probes {
                let want = members[i..].iter().find(|(e, _)| e == p).map(|m| m.1);
                let got = doc.field_from(root, k, ord, p.as_bytes());
                assert_eq!(got, want, "{text}: from {key}, {p}");
            }
            (k, ord) = next_member(s, doc.input, &doc.index.containers, k, ord).unwrap();
        }
        let past = doc.field_from(root, k, ord, members[0].0.as_bytes());
        assert_eq!(past, None, "{text}: past the last member");
    }

    #[test]
    fn later_repeats_of_an_edited_childs_key() {
        // Short, medium (8-15 bytes) and long keys; plain and escaped,
        // either side; a later key longer than the edited one holding a
        // backslash, one starting with its bytes; container values (the
        // walk skips them by the container table); space before a colon.
        for text in [
            r#"{"o": {}, "a": 1}"#,
            r#"{"o": {}, "a": 1, "o": 2}"#,
            r#"{"o": [], "a": 1, "\u006f": 2}"#,
            r#"{"\u006f": {}, "a": 1, "o": 2}"#,
            r#"{"o": {}, "o\n": 1, "\\o": 2, "oo": [3]}"#,
            r#"{"messages": [1], "tools": [], "tool_choice": "a", "metadata": {"x": 1}}"#,
            r#"{"messages": [1], "tools": [], "messages" : {}}"#,
            r#"{"messages": [1], "tools": [], "m\u0065ssages": 2}"#,
            r#"{"messages": [1], "messages_x": 1, "messagesx": 2, "\\messages": 3}"#,
            r#"{"a_key_of_more_than_fifteen": {}, "b": 1, "a_key_of_more_than_fifteen": 2}"#,
            r#"{"a_key_of_more_than_fifteen": {}, "b": 1, "a_key_of_more_than_fifteeN": 2}"#,
            r#"{"a_key_of_more_than_fifteen": {}, "a_key_of_more_than_fift\u0065en": 2}"#,
            r#"{"é": {}, "x": 1, "\u00e9": 2}"#,
            r#"{"": {}, "x": 1, "": 2}"#,
            r#"{"k": {"k": 1}, "j": [{"k": 2}], "l": 3}"#,
        ] {
            check_later(text);
        }
    }

    #[test]
    fn escaped_keys_are_compared_decoded() {
        let mut keys = numbered(20, |i| format!("key_{i}"));
        keys.push("key_\\u0031".to_string()); // "key_1" escaped
        assert!(!check(&object(&keys)));
        keys.pop();
        keys.push("key_\\u0078".to_string()); // "key_x"
        assert!(check(&object(&keys)));
        // The escaped one first: the plain one repeats it.
        let mut keys = vec!["\\u0061bc".to_string()];
        keys.extend(numbered(20, |i| format!("x{i}")));
        keys.push("abc".into());
        assert!(!check(&object(&keys)));
    }

    #[test]
    fn backslashes_are_seen_anywhere_in_a_key() {
        for n in 0..40 {
            let key = vec![b'a'; n];
            let input = [b"\"".as_slice(), &key, b"\": 1"].concat();
            assert!(!raw_print(&input, &input[1..=n]).1, "{n}");
            assert_eq!(raw_print(&input, &input[1..=n]).0, print(&key), "{n}");
            for at in 0..n {
                let mut input = input.clone();
                input[1 + at] = b'\\';
                assert!(raw_print(&input, &input[1..=n]).1, "{n} {at}");
            }
        }
        // A short key at the very end of the input.
        let input = b"\"ab\\";
        assert!(raw_print(input, &input[1..]).1);
        assert!(!raw_print(input, &input[1..3]).1);
        assert_eq!(raw_print(input, &input[1..3]).0, print(b"ab"));
    }

    #[test]
    fn pseudo_random_objects_agree_with_a_set() {
        let mut next = crate::test_rng(0x2545_F491_4F6C_DD1D);
        for _ in 0..300 {
            let n = 1 + (next() % 80) as usize;
            let alphabet = 2 + (next() % 40) as usize;
            let keys = numbered(n, |_| String::new())
                .into_iter()
                .map(|_| {
                    let len = (next() % 12) as usize;
                    (0..len)
                        .map(|_| (b'a' + (next() % alphabet as u64) as u8 % 26) as char)
                        .collect()
                })
                .collect::<Vec<String>>();
            check(&object(&keys));
        }
    }
}
