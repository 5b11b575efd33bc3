//! Keys: comparing a key with the raw key bodies of an object, and the
//! word-sized summaries of keys that make most comparisons one test.
//!
//! # Algorithm
//!
//! A lookup compares one key with many raw bodies, so whatever depends on
//! the key alone is worked out once per lookup ([`KeyMatcher::new`]).
//!
//! The common key is plain: printable ASCII without `"` or `\`. A raw body
//! whose bytes are the key's followed by a quote decodes to the key: it
//! holds no backslash there, so that quote is where the string ends (for
//! stage 1 as for the decoder), and bytes without an escape decode to
//! themselves (no control byte, ASCII, so valid in lazy documents too).
//! Any other body that decodes to the key holds an escape, and its first
//! backslash is the first byte where it differs from the key: the bytes
//! before it are copied as they are, so they are the key's, and the key
//! holds no backslash. So a member is tested from its opening quote alone,
//! without finding where its body ends: for keys of up to seven bytes, the
//! eight bytes after the quote against the key and its closing quote, one
//! masked compare; only when the first difference is a backslash is the
//! body decoded ([`body_eq`](crate::decode::string::body_eq)). Longer keys compare their first word the same
//! way, then, up to 15 bytes, the word that ends with the closing quote
//! (their last seven bytes and the quote), longer ones the rest.
//!
//! Other keys (escapes, quotes, control or non-ASCII bytes) compare body by
//! body: a body shorter than the key never equals it; a body of the key's
//! length equals it only when the bytes match; a longer body only through
//! an escape, and then its first byte is the key's or a backslash. In a
//! strict document every body was validated, so equal bytes without a
//! backslash are a match; in a lazy one a candidate is confirmed by
//! decoding it ([`body_eq`](crate::decode::string::body_eq)).

use crate::decode::string::body_eq;

/// Whether a (short) key body holds a backslash, eight bytes at a time in
/// a general register (cheaper than a vectorized search on a few bytes):
/// overlapping words cover the tail, so no byte loop runs past length 3.
#[inline]
#[allow(clippy::manual_contains)] // `contains` is the vectorized search this avoids
pub(super) fn has_backslash(raw: &[u8]) -> bool {
    let any = word_has_backslash;
    let word = |i: usize| u64::from_le_bytes(raw[i..i + 8].try_into().expect("8 bytes"));
    let half = |i: usize| u32::from_le_bytes(raw[i..i + 4].try_into().expect("4 bytes"));
    let n = raw.len();
    match n {
        0..=3 => raw.iter().any(|&b| b == b'\\'),
        4..=7 => any(u64::from(half(0)) | u64::from(half(n - 4)) << 32),
        _ => {
            let mut i = 0;
            while i + 8 < n {
                if any(word(i)) {
                    return true;
                }
                i += 8;
            }
            any(word(n - 8))
        }
    }
}

/// The first eight bytes of a key body as a little-endian word, zeros
/// past its end: with its length, a fingerprint (keys with different
/// fingerprints differ). `key` lies in `input`.
#[inline(always)]
pub(super) fn first_word(input: &[u8], key: &[u8]) -> u64 {
    let start = key.as_ptr() as usize - input.as_ptr() as usize;
    let word = match input.get(start..start + 8) {
        Some(w) => u64::from_le_bytes(w.try_into().expect("8 bytes")),
        None => key
            .iter()
            .take(8)
            .enumerate()
            .fold(0, |w, (i, &b)| w | u64::from(b) << (8 * i)),
    };
    // Only the key's own bytes: the ones after it belong to the member.
    match key.len() {
        0..=7 => word & ((1u64 << (8 * key.len())) - 1),
        _ => word,
    }
}

/// The first eight bytes of `key` as a little-endian word, zeros past its
/// end ([`first_word`] for a key that is not in the input).
#[inline(always)]
pub(super) fn word_of(key: &[u8]) -> u64 {
    // Overlapping loads instead of a loop over the bytes: the bytes two
    // loads share are the same, so or-ing them in twice changes nothing.
    let n = key.len();
    let half = |i: usize| {
        u64::from(u32::from_le_bytes(
            key[i..i + 4].try_into().expect("4 bytes"),
        ))
    };
    match n {
        0 => 0,
        1..=3 => {
            u64::from(key[0])
                | u64::from(key[n / 2]) << (8 * (n / 2))
                | u64::from(key[n - 1]) << (8 * (n - 1))
        }
        4..=7 => half(0) | half(n - 4) << (8 * (n - 4)),
        _ => u64::from_le_bytes(key[..8].try_into().expect("8 bytes")),
    }
}

/// A key's fingerprint: its length and first eight bytes (as a word from
/// [`first_word`] or [`word_of`]). Keys with different prints differ.
#[inline(always)]
pub(super) fn print(word: u64, len: usize) -> u64 {
    word ^ (len as u64).rotate_right(8)
}

/// Whether any of the eight bytes of `w` is a backslash: a byte of `w` xor
/// a word of backslashes is zero exactly there, and `(x - LO) & !x & HI`
/// is non-zero exactly when `x` has a zero byte (a borrow only flips bits
/// above a real zero).
#[inline(always)]
pub(super) fn word_has_backslash(w: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = LO << 7;
    let x = w ^ (LO * u64::from(b'\\'));
    x.wrapping_sub(LO) & !x & HI != 0
}

/// Compares the raw key bodies of one object with a key (unescaped bytes);
/// see the module docs.
pub(super) struct KeyMatcher<'i, 'k> {
    input: &'i [u8],
    pub(super) key: &'k [u8],
    /// [`first_word`] of the key.
    word: u64,
    lazy: bool,
    /// Whether the key is plain (printable ASCII, no `"` or `\`).
    plain: bool,
    /// Plain keys of up to seven bytes: the key and its closing quote as a
    /// little-endian word, and the mask of those bytes. Plain keys of 8 to
    /// 15 bytes: their last seven bytes and the closing quote (`quoted`,
    /// all of whose bytes count).
    quoted: u64,
    quoted_mask: u64,
}

impl<'i, 'k> KeyMatcher<'i, 'k> {
    #[inline(always)]
    pub(super) fn new(input: &'i [u8], lazy: bool, key: &'k [u8]) -> Self {
        let word = word_of(key);
        let n = key.len();
        let plain = is_plain(key, word);
        let (quoted, quoted_mask) = match n {
            0..=7 => (word | u64::from(b'"') << (8 * n), u64::MAX >> (8 * (7 - n))),
            8..=15 => {
                let last = u64::from_le_bytes(key[n - 8..].try_into().expect("8 bytes"));
                (last >> 8 | u64::from(b'"') << 56, u64::MAX)
            }
            _ => (0, 0),
        };
        KeyMatcher {
            input,
            key,
            word,
            lazy,
            plain,
            quoted,
            quoted_mask,
        }
    }

    /// The key's `print`.
    #[inline(always)]
    pub(super) fn print(&self) -> u64 {
        print(self.word, self.key.len())
    }

    /// Whether the key is plain and at most seven bytes long: then
    /// [`Self::short_at`] tests a member.
    #[inline(always)]
    pub(super) fn is_short(&self) -> bool {
        self.plain && self.key.len() <= 7
    }

    /// [`Self::quick_at`] for a short key ([`Self::is_short`]): the eight
    /// bytes after the opening quote against the key and its closing quote.
    /// `None` (ask [`Self::matches`]) when fewer than eight bytes follow the
    /// quote, or when the first byte that differs is a backslash.
    #[inline(always)]
    pub(super) fn short_at(&self, open: usize) -> Option<bool> {
        let w = self.input.get(open + 1..open + 9)?;
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        let diff = (w ^ self.quoted) & self.quoted_mask;
        if diff == 0 {
            return Some(true);
        }
        escape_at_first_difference(w, diff)
    }

    /// Whether the string whose opening quote is at byte `open` decodes to
    /// the key; `body` gives its raw body (only asked for keys that are
    /// not plain, and near the end of the input). The member walks run its
    /// two halves apart ([`Self::quick_at`] in their loop, [`Self::matches`]
    /// out of it); the tests hold them to the whole.
    #[cfg(test)]
    pub(super) fn matches_at<'b>(&self, open: usize, body: impl FnOnce() -> &'b [u8]) -> bool {
        match self.quick_at(open) {
            Some(hit) => hit,
            None => self.matches(body()),
        }
    }

    /// Whether the string whose opening quote is at byte `open` decodes to
    /// the key, where the words after the quote tell (a plain key, no
    /// escape where the body first differs, the end of the input not
    /// near); `None` otherwise (ask [`Self::matches`] with its body).
    #[inline(always)]
    pub(super) fn quick_at(&self, open: usize) -> Option<bool> {
        if self.is_short() {
            return self.short_at(open);
        }
        if !self.plain {
            return None;
        }
        let at = open + 1;
        let n = self.key.len();
        let w = self.input.get(at..at + 8)?;
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        let diff = w ^ self.word;
        if diff != 0 {
            return escape_at_first_difference(w, diff);
        }
        if n <= 15 {
            // The first eight bytes are the key's: the word that ends
            // with the byte after the key's last decides (its bytes
            // before the eighth are the key's too).
            let t = self.input.get(at + n - 7..at + n + 1)?;
            let t = u64::from_le_bytes(t.try_into().expect("8 bytes"));
            let diff = t ^ self.quoted;
            if diff == 0 {
                return Some(true);
            }
            return escape_at_first_difference(t, diff);
        }
        if self
            .input
            .get(at + 8..=at + n)
            .is_some_and(|t| t[..n - 8] == self.key[8..] && t[n - 8] == b'"')
        {
            return Some(true);
        }
        None
    }

    /// Whether the raw body `raw` (a slice of the input) decodes to the key.
    #[inline(always)]
    pub(super) fn matches(&self, raw: &[u8]) -> bool {
        let (n, k) = (raw.len(), self.key.len());
        if n == k {
            if first_word(self.input, raw) != self.word {
                return false;
            }
            if self.lazy {
                return body_eq(raw, self.key);
            }
            // Equal bytes: a match unless they hold an escape (a plain key
            // holds none; others are searched only here, on a candidate).
            return (self.plain || !has_backslash(self.key))
                && (n <= 8 || raw[8..] == self.key[8..]);
        }
        if n < k || k == 0 || (raw[0] != self.key[0] && raw[0] != b'\\') {
            return false;
        }
        body_eq(raw, self.key)
    }
}

/// A plain key of at most 15 bytes as the words a member is tested with
/// from its opening quote: the fast test of the common lookup, made with no
/// more than the key (see [`KeyMatcher`] for the general one). Each kind
/// gets its own member walk, so that the walk keeps its few words in
/// registers.
#[derive(Clone, Copy)]
pub(super) enum PlainKey {
    /// Up to seven bytes: one masked compare.
    Short(ShortWord),
    /// Eight to fifteen bytes: two compares.
    Medium(MediumWords),
}

/// A plain key of up to seven bytes: the eight bytes after the quote
/// compared with the key and its closing quote, under the mask of those
/// bytes.
#[derive(Clone, Copy)]
pub(super) struct ShortWord {
    word: u64,
    mask: u64,
}

/// A plain key of eight to fifteen bytes: its first eight bytes, then the
/// word that ends with the closing quote (its last seven bytes and the
/// quote), which starts `tail_at` bytes after the opening quote.
#[derive(Clone, Copy)]
pub(super) struct MediumWords {
    head: u64,
    tail: u64,
    tail_at: usize,
}

/// How a [`PlainKey`] tests the string whose opening quote is at byte
/// `open` of `input`: `Some(hit)`, or `None` when its words cannot tell
/// (fewer than eight bytes left, or a backslash where the body first
/// differs: the body must be decoded, see the module docs).
pub(super) trait WordTest {
    fn test(&self, input: &[u8], open: usize) -> Option<bool>;

    /// [`Self::test`] without its bounds checks, for a walk that proved
    /// them once (see `Doc::walk_members`).
    ///
    /// # Safety
    ///
    /// `open + UNCHECKED_READ <= input.len()`.
    #[inline(always)]
    unsafe fn test_unchecked(&self, input: &[u8], open: usize) -> Option<bool> {
        self.test(input, open)
    }
}

/// The bytes from a key's opening quote that [`WordTest::test_unchecked`]
/// may read: the quote, then at most two words (a [`MediumWords`] key's
/// tail word starts at most eight bytes after the first).
pub(super) const UNCHECKED_READ: usize = 17;

/// The little-endian word at `input[at..at + 8]`, if there is one.
#[inline(always)]
fn word_at(input: &[u8], at: usize) -> Option<u64> {
    input
        .get(at..at + 8)
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
}

/// [`word_at`] without the bounds check.
///
/// # Safety
///
/// `at + 8 <= input.len()`.
#[inline(always)]
unsafe fn word_at_unchecked(input: &[u8], at: usize) -> u64 {
    debug_assert!(at + 8 <= input.len());
    // SAFETY: the caller's `at + 8 <= input.len()`: the eight bytes are
    // in `input`; `read_unaligned` has no alignment requirement.
    u64::from_le(unsafe { input.as_ptr().add(at).cast::<u64>().read_unaligned() })
}

impl ShortWord {
    /// The words of a key of `n` bytes (0 to 7: the empty key's word is
    /// its closing quote alone) whose bytes are `word`
    /// ([`word_of`] of the key), when the caller has tested it for the
    /// bytes it must not hold ([`PlainKey::new`] is the checked maker).
    #[inline(always)]
    pub(super) fn of_word(word: u64, n: usize) -> ShortWord {
        debug_assert!(n <= 7);
        ShortWord {
            word: word | u64::from(b'"') << (8 * n),
            mask: u64::MAX >> (8 * (7 - n)),
        }
    }

    /// The key's own bytes as a little-endian word, zeros past its end
    /// ([`word_of`] of the key): the word without its closing quote.
    #[inline(always)]
    pub(super) fn key_word(&self) -> u64 {
        self.word & self.mask >> 8
    }
}

/// A plain key's words, with its first eight bytes as [`print()`] wants
/// them: the lookup of a large object's table by the same words as its
/// walk.
pub(super) trait PlainWords: WordTest {
    /// The key's first eight bytes as a little-endian word, zeros past its
    /// end ([`word_of`] of the key).
    fn first(&self) -> u64;
}

impl PlainWords for ShortWord {
    #[inline(always)]
    fn first(&self) -> u64 {
        self.key_word()
    }
}

impl PlainWords for MediumWords {
    #[inline(always)]
    fn first(&self) -> u64 {
        self.head
    }
}

impl ShortWord {
    /// The test of the word `w` after a member's opening quote.
    #[inline(always)]
    fn test_word(&self, w: u64) -> Option<bool> {
        let diff = (w ^ self.word) & self.mask;
        if diff == 0 {
            return Some(true);
        }
        escape_at_first_difference(w, diff)
    }
}

impl WordTest for ShortWord {
    #[inline(always)]
    fn test(&self, input: &[u8], open: usize) -> Option<bool> {
        self.test_word(word_at(input, open + 1)?)
    }

    #[inline(always)]
    unsafe fn test_unchecked(&self, input: &[u8], open: usize) -> Option<bool> {
        // SAFETY: the caller's `open + UNCHECKED_READ <= input.len()`
        // covers the word at `open + 1`.
        self.test_word(unsafe { word_at_unchecked(input, open + 1) })
    }
}

impl MediumWords {
    /// The test of the words after a member's opening quote: its first
    /// word `w`, then, if that matches, `tail` (the word `tail_at` bytes
    /// later).
    #[inline(always)]
    fn test_words(&self, w: u64, tail: impl FnOnce(usize) -> Option<u64>) -> Option<bool> {
        let diff = w ^ self.head;
        if diff != 0 {
            return escape_at_first_difference(w, diff);
        }
        let t = tail(self.tail_at)?;
        let diff = t ^ self.tail;
        if diff == 0 {
            return Some(true);
        }
        escape_at_first_difference(t, diff)
    }
}

impl WordTest for MediumWords {
    #[inline(always)]
    fn test(&self, input: &[u8], open: usize) -> Option<bool> {
        let w = word_at(input, open + 1)?;
        self.test_words(w, |at| word_at(input, open + 1 + at))
    }

    #[inline(always)]
    unsafe fn test_unchecked(&self, input: &[u8], open: usize) -> Option<bool> {
        // SAFETY: the caller's `open + UNCHECKED_READ <= input.len()`
        // covers the word at `open + 1` and the one at `open + 1 + at`
        // (`tail_at` <= 8: a key of 8 to 15 bytes).
        let w = unsafe { word_at_unchecked(input, open + 1) };
        self.test_words(w, |at| {
            debug_assert!(at <= 8);
            // SAFETY: as above, `open + 1 + at + 8 <= open + 17`.
            Some(unsafe { word_at_unchecked(input, open + 1 + at) })
        })
    }
}

impl PlainKey {
    /// The test of `key`, when it is plain and at most 15 bytes long.
    #[inline(always)]
    pub(super) fn new(key: &[u8]) -> Option<PlainKey> {
        let n = key.len();
        if n > 15 {
            return None;
        }
        let word = word_of(key);
        if !is_plain(key, word) {
            return None;
        }
        Some(if n <= 7 {
            PlainKey::Short(ShortWord {
                word: word | u64::from(b'"') << (8 * n),
                mask: u64::MAX >> (8 * (7 - n)),
            })
        } else {
            let last = u64::from_le_bytes(key[n - 8..].try_into().expect("8 bytes"));
            PlainKey::Medium(MediumWords {
                head: word,
                tail: last >> 8 | u64::from(b'"') << 56,
                tail_at: n - 7,
            })
        })
    }

    /// [`WordTest::test`] of whichever kind this key is.
    #[cfg(test)]
    fn test(&self, input: &[u8], open: usize) -> Option<bool> {
        match self {
            PlainKey::Short(k) => k.test(input, open),
            PlainKey::Medium(k) => k.test(input, open),
        }
    }
}

/// A key's tag: one byte of a multiplicative hash of its `print`. Child
/// tables of small objects keep one per member; equal keys have equal
/// tags, and a lookup compares the key only with members of its tag (one
/// in 256 of the others, on average).
#[inline(always)]
pub(super) fn tag(print: u64) -> u8 {
    (print.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
}

/// Tags compared at once by [`tag_mask`].
pub(super) const TAG_GROUP: usize = 16;

/// Bit `i` set when `group[i] == want`, for a group of [`TAG_GROUP`] tags:
/// one SSE2 byte compare and a movemask.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn tag_mask(group: &[u8], want: u8) -> u32 {
    use std::arch::x86_64::*;
    let group: &[u8; TAG_GROUP] = group.try_into().expect("a group of tags");
    // SAFETY: `group` is 16 readable bytes and `loadu` has no alignment
    // requirement; SSE2 is part of the x86_64 baseline.
    unsafe {
        let v = _mm_loadu_si128(group.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(want as i8))) as u32
    }
}

/// Bit `i` set when `group[i] == want` (portable).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn tag_mask(group: &[u8], want: u8) -> u32 {
    group
        .iter()
        .enumerate()
        .fold(0, |m, (i, &t)| m | u32::from(t == want) << i)
}

/// A plain key and the word `w` after a member's opening quote differ
/// (`diff`, non-zero, marks the differing bytes): `Some(false)`, no match,
/// unless the first differing byte is a backslash (an escape that may
/// decode to the key), then `None`.
#[inline(always)]
fn escape_at_first_difference(w: u64, diff: u64) -> Option<bool> {
    let first = diff.trailing_zeros() & !7;
    ((w >> first) as u8 != b'\\').then_some(false)
}

/// Whether every byte of `key` is printable ASCII other than `"` and `\`
/// (`word` is its [`word_of`]). Keys of up to eight bytes are tested in one
/// word (the bytes past the key set to a plain `a`), longer ones a word at
/// a time (the last word overlapping the one before): no byte may be
/// 0x80 or more, below 0x20, 0x7F, `"` or `\`. A byte below `m` (`m` <= 0x80) in
/// a word of ASCII bytes is found by `(x - m * LO) & !x & HI`, a zero byte
/// by the same with `m` = 1 (a borrow only sets bits above a real hit, so
/// the test is exact for "any").
#[inline(always)]
fn is_plain(key: &[u8], word: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    let n = key.len();
    if n > 8 {
        // Eight bytes at a time; the last word overlaps the one before
        // (a test of every byte does not mind seeing some twice).
        let at = |i: usize| u64::from_le_bytes(key[i..i + 8].try_into().expect("8 bytes"));
        let mut i = 0;
        while i + 8 < n {
            if !plain_word(at(i)) {
                return false;
            }
            i += 8;
        }
        return plain_word(at(n - 8));
    }
    let pad = if n == 8 {
        0
    } else {
        (LO * u64::from(b'a')) & (u64::MAX << (8 * n))
    };
    plain_word(word | pad)
}

/// Whether all eight bytes of `w` are printable ASCII other than `"` and
/// `\\` (see [`is_plain`]).
#[inline(always)]
fn plain_word(w: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = LO << 7;
    // The hits of the five tests or-ed together, one branch (the tests
    // are a few operations each; branching after every one costs more).
    let below = |x: u64, m: u64| x.wrapping_sub(LO * m) & !x;
    (w | below(w, 0x20)
        | below(w ^ (LO * 0x7F), 1)
        | below(w ^ (LO * u64::from(b'"')), 1)
        | below(w ^ (LO * u64::from(b'\\')), 1))
        & HI
        == 0
}

#[cfg(test)]
mod tests {
    use super::{has_backslash, is_plain, word_of, KeyMatcher, PlainKey};

    /// The word-at-a-time search against a byte loop: every length to 40,
    /// a backslash (or none) at every position, neighbours that differ from
    /// a backslash by one bit or by a borrow (`[`, `]`, 0xDC, 0x5B + 0x80).
    #[test]
    fn has_backslash_matches_a_byte_loop() {
        for fill in [b'a', b'[', b']', 0xDC, 0xDB, 0x00, 0xFF, b'"'] {
            for n in 0..40 {
                let mut key = vec![fill; n];
                assert_eq!(has_backslash(&key), key.contains(&b'\\'), "{fill} {n}");
                for at in 0..n {
                    key[at] = b'\\';
                    assert!(has_backslash(&key), "{fill} {n} {at}");
                    key[at] = fill;
                }
            }
        }
    }

    /// A short key's word without its quote is the key's own word.
    #[test]
    fn short_key_word_is_word_of() {
        for n in 0..=7 {
            let key: Vec<u8> = (0..n).map(|i| b'a' + i as u8).collect();
            let Some(PlainKey::Short(p)) = PlainKey::new(&key) else {
                panic!("{n}: a short plain key");
            };
            assert_eq!(p.key_word(), word_of(&key), "{n}");
        }
    }

    /// The overlapping loads against a byte loop, and the one-word
    /// plainness test against a byte test, for every length to 12 and every
    /// byte value at every position.
    #[test]
    fn word_of_and_is_plain_match_byte_loops() {
        let slow_word = |k: &[u8]| {
            k.iter()
                .take(8)
                .enumerate()
                .fold(0u64, |w, (i, &b)| w | u64::from(b) << (8 * i))
        };
        let slow_plain = |k: &[u8]| {
            k.iter()
                .all(|&b| (0x20..0x7F).contains(&b) && b != b'"' && b != b'\\')
        };
        for n in 0..=26 {
            let mut key: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
            assert_eq!(word_of(&key), slow_word(&key));
            assert_eq!(is_plain(&key, word_of(&key)), slow_plain(&key));
            for at in 0..n {
                for b in 0..=255u8 {
                    let old = key[at];
                    key[at] = b;
                    assert_eq!(word_of(&key), slow_word(&key), "{n} {at} {b}");
                    assert_eq!(
                        is_plain(&key, word_of(&key)),
                        slow_plain(&key),
                        "{n} {at} {b}"
                    );
                    key[at] = old;
                }
            }
        }
    }

    /// The plain-key test against the general one, on the same inputs as
    /// `matches_at_agrees_with_matches`: where it answers, it answers as
    /// `matches_at`, and it answers for every body without a backslash
    /// followed by at least eight bytes.
    #[test]
    fn plain_key_agrees_with_matches_at() {
        let alphabet = b"abcdefghijklm/opqrstu";
        for n in 0..=16 {
            let key = &alphabet[..n];
            let Some(p) = PlainKey::new(key) else {
                assert_eq!(n, 16);
                continue;
            };
            let mut bodies: Vec<Vec<u8>> = vec![key.to_vec(), [key, b"x"].concat()];
            for i in 0..n {
                let mut b = key.to_vec();
                b[i] = b'z';
                bodies.push(b);
                let mut b = key.to_vec();
                b.insert(i, b'\\');
                b.insert(i + 1, b'/');
                bodies.push(b);
                let mut b = key[..i].to_vec();
                b.extend(format!("\\u{:04x}", key[i]).bytes());
                b.extend(&key[i + 1..]);
                bodies.push(b);
            }
            if n > 0 {
                bodies.push(key[..n - 1].to_vec());
            }
            for body in &bodies {
                for tail in [&b""[..], b":1}", b":\"0123456789abcdef\"}"] {
                    let input = [b"\"", &body[..], b"\"", tail].concat();
                    let m = KeyMatcher::new(&input, false, key);
                    let raw = &input[1..1 + body.len()];
                    let want = m.matches_at(0, || raw);
                    match p.test(&input, 0) {
                        Some(got) => assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&input)),
                        None => assert!(
                            input.len() < 9 + n.saturating_sub(7) || body.contains(&b'\\'),
                            "{:?}",
                            String::from_utf8_lossy(&input)
                        ),
                    }
                }
            }
        }
        assert!(PlainKey::new(b"a\"b").is_none());
        assert!(PlainKey::new(b"caf\xc3\xa9").is_none());
    }

    /// The test from the opening quote against the body-by-body compare
    /// (the reference), for plain keys of every length to 20 against bodies
    /// that equal them, differ in one byte, are one byte longer or shorter,
    /// or hold an escape; each body ends the input or is followed by more.
    #[test]
    fn matches_at_agrees_with_matches() {
        let alphabet = b"abcdefghijklm/opqrstu";
        for n in 0..=20 {
            let key = &alphabet[..n];
            let mut bodies: Vec<Vec<u8>> = vec![key.to_vec()];
            for i in 0..n {
                let mut b = key.to_vec();
                b[i] = b'z';
                bodies.push(b);
                let mut b = key.to_vec();
                b.insert(i, b'\\');
                b.insert(i + 1, b'n');
                bodies.push(b);
                let mut b = key.to_vec();
                b[i] = b'"';
                bodies.push(b);
                // Escapes that decode to the key: `\u00XX`, and `\/`.
                let mut b = key[..i].to_vec();
                b.extend(format!("\\u{:04x}", key[i]).bytes());
                b.extend(&key[i + 1..]);
                bodies.push(b);
                let mut b = key[..i].to_vec();
                b.extend(br"\/");
                b.extend(&key[i + 1..]);
                bodies.push(b);
            }
            bodies.push([key, b"x"].concat());
            if n > 0 {
                bodies.push(key[..n - 1].to_vec());
            }
            for body in &bodies {
                for tail in [&b""[..], b":1}", b":\"0123456789abcdef\"}"] {
                    let input = [b"\"", &body[..], b"\"", tail].concat();
                    for lazy in [false, true] {
                        let m = KeyMatcher::new(&input, lazy, key);
                        let raw = &input[1..1 + body.len()];
                        // A body holding a quote ends there for real.
                        let want = !body.contains(&b'"') && m.matches(raw);
                        assert_eq!(
                            m.matches_at(0, || raw),
                            want,
                            "{:?} {:?}",
                            String::from_utf8_lossy(key),
                            String::from_utf8_lossy(&input)
                        );
                    }
                }
            }
        }
    }
}
