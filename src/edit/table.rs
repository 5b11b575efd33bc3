//! The member table of an edited small object: where each member is and
//! its key's fingerprint, from one walk, so that the edits' lookups and
//! the writer's check for repeated keys do not walk the members again.
//!
//! # Why
//!
//! Editing a forwarded request's top-level object looks members up one by
//! one (`model`, then `temperature`; a patch's `/model`, `/stream`, then
//! `/messages`; a merge patch's keys, most of them absent), each lookup a
//! walk from the first member (~70 instructions per member passed, every
//! member for a miss), and writing it by splicing needs its keys distinct,
//! one more walk over all of them ([`Doc::keys_unique`]: ~100 instructions
//! a member). The table makes the first lookup that walk, once.
//!
//! # Algorithm
//!
//! Built on the first lookup through it ([`MemberTable::field`]) by the
//! walk of [`Doc::keys_unique`], in a loop of its own
//! (`repeats::small_keys_table`: a strict document, at most `repeats::SMALL`
//! members, no key with a backslash; one bounds test per member, each
//! member written straight into the table), which checks on the way that
//! the keys are distinct and gives each member's key structural, the
//! ordinal of the first container at or after it, and its key's
//! fingerprint. Any other object (a key repeats, an
//! escaped key, more members, a lazy document) gets no table: its lookups
//! go to [`Doc::field`], as without one, and the writer checks its keys.
//!
//! A lookup compares the key's length and fingerprint with the members'
//! (the fingerprint [`Doc::keys_unique`] computes: first eight bytes with
//! the length folded into the top byte, which alone cannot tell a long key
//! from a short one, hence the length kept beside it); a key of up to
//! seven bytes is equal to a member's exactly when both are, a longer one
//! is confirmed by its bytes and the closing quote after them (a body
//! without a backslash is its key). Keys
//! are distinct, so the first match is the only one. A table holds no
//! reference to the document: the host keeps it beside the object it was
//! built for (a lazy object's [`super::Patches`]), and a document's bytes
//! never change, so it stays right for the object's life.

use crate::doc::repeats::{self, SMALL};
use crate::doc::{Cursor, Doc};

/// Not built yet.
const UNBUILT: u8 = 0;
/// Built: the keys are distinct, `members` and `prints` hold them.
const BUILT: u8 = 1;
/// The object is not one a table covers.
const NONE: u8 = 2;

/// See the module docs.
#[derive(Debug, Clone)]
pub struct MemberTable {
    state: u8,
    n: u8,
    /// Per member, in order: its key's fingerprint.
    prints: [u64; SMALL],
    /// Per member: its key's length in bytes (a fingerprint holds it only
    /// modulo the key's own bytes: see `find`).
    lens: [u32; SMALL],
    /// Per member: its key's structural, and the ordinal of the first
    /// container at or after it.
    members: [(u32, u32); SMALL],
}

impl Default for MemberTable {
    fn default() -> Self {
        MemberTable {
            state: UNBUILT,
            n: 0,
            prints: [0; SMALL],
            lens: [0; SMALL],
            members: [(0, 0); SMALL],
        }
    }
}

impl MemberTable {
    /// Forget the table (its object is gone: the table may serve another).
    #[inline]
    pub fn clear(&mut self) {
        self.state = UNBUILT;
    }

    /// Whether the table is built: the keys of its object are distinct.
    #[inline]
    pub fn distinct(&self) -> bool {
        self.state == BUILT
    }

    /// The members' (key structural, ordinal of the first container at or
    /// after it), in order, when the table is built.
    pub fn members(&self) -> Option<&[(u32, u32)]> {
        self.distinct()
            .then(|| &self.members[..usize::from(self.n)])
    }

    /// The value of member `key` (unescaped bytes) of object `at` of
    /// `doc`, the object this table is for: through the table, built
    /// first when it is not yet (see the module docs), else by
    /// [`Doc::field`].
    #[inline]
    pub fn field(&mut self, doc: &Doc<'_>, at: Cursor, key: &[u8]) -> Option<Cursor> {
        if self.state == UNBUILT {
            self.build(doc, at);
        }
        if self.state != BUILT {
            return doc.field(at, key);
        }
        self.find(doc, key)
    }

    /// The lookup in a built table.
    fn find(&self, doc: &Doc<'_>, key: &[u8]) -> Option<Cursor> {
        let print = repeats::lookup_print(key);
        let n = usize::from(self.n);
        for (i, &p) in self.prints[..n].iter().enumerate() {
            if p != print || self.lens[i] as usize != key.len() {
                continue;
            }
            let (k, ord) = self.members[i];
            if key.len() >= 8 && !body_is(doc, k as usize, key) {
                continue;
            }
            return Some(repeats::member_value(doc, k as usize, ord));
        }
        None
    }

    #[inline(never)]
    fn build(&mut self, doc: &Doc<'_>, at: Cursor) {
        let mut n = 0;
        let walk = repeats::small_keys_table(
            doc,
            at,
            &mut self.prints,
            &mut self.lens,
            &mut self.members,
            &mut n,
        );
        // A repeated key stops the walk: no table (nor for `None`).
        self.state = if walk == Some(true) { BUILT } else { NONE };
        self.n = n as u8;
    }
}

/// Whether the key at structural `k` (a body without a backslash) is
/// `key`, of eight bytes or more: its bytes, then the closing quote. A key
/// of up to sixteen bytes (most long keys: `temperature`, `max_tokens`)
/// is compared as two words, its first and last eight bytes.
#[inline]
fn body_is(doc: &Doc<'_>, k: usize, key: &[u8]) -> bool {
    let input = doc.input();
    let Some(&open) = doc.index().structurals.get(k) else {
        return false;
    };
    let (a, n) = (open as usize + 1, key.len());
    if input.get(a + n) != Some(&b'"') {
        return false;
    }
    let word = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    if (8..=16).contains(&n) {
        // (`a + n` is in the input: checked above.)
        let body = &input[a..a + n];
        return word(body, 0) == word(key, 0) && word(body, n - 8) == word(key, n - 8);
    }
    &input[a..a + n] == key
}
