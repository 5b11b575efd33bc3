//! Repeated keys of a large object, for the splice writer: whether any key
//! of an object of a strict document repeats, without hashing.
//!
//! # Why
//!
//! [`super::writer`] splices an edited object only when its keys are
//! distinct (with a repeated key the later occurrences are dropped from the
//! output, member by member). For objects of up to sixteen members the
//! document answers that cheaply ([`Doc::keys_unique`] compares raw keys
//! pairwise); above that it builds a hash set of every key, which costs
//! more than the rest of an edit put together (a SipHash of each key and a
//! heap table: ~12k instructions for one 30-member object of the github
//! issues, against ~1k for its whole splice).
//!
//! # Algorithm
//!
//! In a strict document a key body without a backslash is its own
//! unescaped text, so two such keys are equal exactly when their bytes
//! are. Each key gets a 64-bit fingerprint from its length and its first
//! and last eight bytes ([`print`]); the `(fingerprint, key)` pairs are
//! sorted by fingerprint (on the stack up to [`STACK`] members), and only
//! neighbours with equal fingerprints are compared in full. Equal keys
//! have equal fingerprints, so every repeat is found; a collision of
//! different keys costs one byte comparison, never a wrong answer. A key
//! with a backslash (rare), or a lazy document (its keys were never
//! validated), goes to [`Doc::keys_unique`], which unescapes.
//!
//! The walk over the members is the caller's ([`Keys::push`] per member),
//! so a walk the writer makes anyway (to find the members it cuts) also
//! gathers the keys.

use crate::doc::{Cursor, Doc};
use crate::error::AccessError;
use smallvec::SmallVec;

/// Members kept on the stack; larger objects spill to the heap.
const STACK: usize = 64;

/// Bits of a sort entry that hold the member's ordinal (the rest hold its
/// fingerprint); objects with more members go to [`Doc::keys_unique`].
const ORD_BITS: u32 = 16;
const ORD_MASK: u64 = (1 << ORD_BITS) - 1;

/// The keys of one object, gathered member by member.
pub(crate) struct Keys<'a> {
    input: &'a [u8],
    keys: SmallVec<[&'a [u8]; STACK]>,
    /// Per key: its fingerprint in the high bits, its ordinal in the low
    /// [`ORD_BITS`] (sorting plain integers is several times cheaper than
    /// sorting (fingerprint, key) pairs).
    prints: SmallVec<[u64; STACK]>,
    /// A key holds a backslash: the fingerprints cannot decide.
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

    /// The next member's raw key body (as [`Doc::object_items`] gives it:
    /// a slice of the document's input).
    #[inline(always)]
    pub(crate) fn push(&mut self, raw: &'a [u8]) {
        let (print, escaped) = print(self.input, raw);
        self.escaped |= escaped;
        let ord = self.keys.len() as u64 & ORD_MASK;
        self.prints.push(print & !ORD_MASK | ord);
        self.keys.push(raw);
    }

    /// Whether no key repeats; `doc` and `at` (the object) answer when a
    /// key holds a backslash (or the object is too large to sort here).
    pub(crate) fn unique(mut self, doc: &Doc<'_>, at: Cursor) -> Result<bool, AccessError> {
        if self.escaped || doc.index().is_lazy() || self.keys.len() > ORD_MASK as usize {
            return doc.keys_unique(at);
        }
        self.prints.sort_unstable();
        // Within a run of equal fingerprints, compare every pair (runs
        // longer than one are collisions or repeats: rare and short).
        let mut run = 0;
        for i in 1..self.prints.len() {
            if self.prints[i] & !ORD_MASK != self.prints[run] & !ORD_MASK {
                run = i;
                continue;
            }
            let key = self.keys[(self.prints[i] & ORD_MASK) as usize];
            if self.prints[run..i]
                .iter()
                .any(|&p| self.keys[(p & ORD_MASK) as usize] == key)
            {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Whether no key of object `at` repeats (after unescaping): the same
/// answer as [`Doc::keys_unique`], without its hash set for large objects.
/// Out of line, so its key buffers (about 1.5 KB of stack) take no room in
/// the frames of the writer's recursion into edited children.
#[inline(never)]
pub(crate) fn keys_unique(doc: &Doc<'_>, at: Cursor) -> Result<bool, AccessError> {
    let n = doc.len(at)?;
    if n <= SMALL || doc.index().is_lazy() {
        return doc.keys_unique(at);
    }
    let mut keys = Keys::with_capacity(doc, n);
    for (raw, _) in doc.object_items(at)? {
        keys.push(raw);
    }
    keys.unique(doc, at)
}

/// Objects up to this many members are left to [`Doc::keys_unique`]
/// (pairwise there, with no set).
pub(crate) const SMALL: usize = 16;

/// A key's fingerprint: its length and its first and last eight bytes
/// (zeros past the end of a shorter key), mixed so that the high bits
/// (the ones kept, see [`ORD_BITS`]) depend on all of them; and whether
/// the key holds a backslash (read from the same words).
#[inline(always)]
fn print(input: &[u8], raw: &[u8]) -> (u64, bool) {
    let n = raw.len();
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let (first, last, escaped) = if n >= 8 {
        let (first, last) = (word(&raw[..8]), word(&raw[n - 8..]));
        let mut escaped = has_backslash(first) | has_backslash(last);
        // The words between (keys are short: rarely any).
        let mut i = 8;
        while i + 8 < n {
            escaped |= has_backslash(word(&raw[i..i + 8]));
            i += 8;
        }
        (first, last, escaped)
    } else {
        // A short key: the eight input bytes from its start (the closing
        // quote and what follows it), masked to the key's own bytes.
        let start = raw.as_ptr() as usize - input.as_ptr() as usize;
        let w = match input.get(start..start + 8) {
            Some(b) => word(b) & ((1u64 << (8 * n)) - 1),
            None => raw
                .iter()
                .enumerate()
                .fold(0u64, |w, (i, &b)| w | u64::from(b) << (8 * i)),
        };
        (w, 0, has_backslash(w))
    };
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let h = (first ^ last.rotate_left(29) ^ (n as u64).wrapping_mul(K)).wrapping_mul(K);
    (h, escaped)
}

/// Whether any of the eight bytes of `w` is a backslash: a byte of `w` xor
/// a word of backslashes is zero exactly there, and `(x - LO) & !x & HI`
/// is non-zero exactly when `x` has a zero byte.
#[inline(always)]
fn has_backslash(w: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = LO << 7;
    let x = w ^ (LO * u64::from(b'\\'));
    x.wrapping_sub(LO) & !x & HI != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Index, Options};

    fn check(text: &str) -> bool {
        let index = Index::build(text.as_bytes(), &Options::default()).unwrap();
        let doc = Doc::new(text.as_bytes(), &index);
        let ours = keys_unique(&doc, doc.root()).unwrap();
        assert_eq!(ours, doc.keys_unique(doc.root()).unwrap(), "{text}");
        ours
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
        }
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

    #[test]
    fn escaped_keys_go_to_the_document() {
        let mut keys = numbered(20, |i| format!("key_{i}"));
        keys.push("key_\\u0031".to_string()); // "key_1" escaped
        assert!(!check(&object(&keys)));
        keys.pop();
        keys.push("key_\\u0078".to_string()); // "key_x"
        assert!(check(&object(&keys)));
    }

    #[test]
    fn backslashes_are_seen_anywhere_in_a_key() {
        for n in 0..40 {
            let key = vec![b'a'; n];
            let input = [b"\"".as_slice(), &key, b"\": 1"].concat();
            assert!(!print(&input, &input[1..=n]).1, "{n}");
            for at in 0..n {
                let mut input = input.clone();
                input[1 + at] = b'\\';
                assert!(print(&input, &input[1..=n]).1, "{n} {at}");
            }
        }
        // A short key at the very end of the input.
        let input = b"\"ab\\";
        assert!(print(input, &input[1..]).1);
        assert!(!print(input, &input[1..3]).1);
    }

    #[test]
    fn pseudo_random_objects_agree_with_the_document() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..300 {
            let n = 17 + (next() % 60) as usize;
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
