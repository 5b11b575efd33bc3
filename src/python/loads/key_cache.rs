//! The key cache: keys of up to [`CACHE_KEY_MAX`] bytes go through a
//! process-wide cache of [`CACHE_SLOTS`] `str` objects, mapped on a hash
//! of the raw key bytes ([`hash_key`]), as orjson does: a repeated key
//! costs no allocation, and its `str` hash is already computed when the
//! dict needs it. A key is looked for in the slot its hash picks, then in
//! the other slot of that pair (slot number xor 1); a miss takes the first
//! and moves the entry it held to the other (releasing that one's), so the
//! two keys used last of a pair stay cached. Direct-mapped (one slot), two
//! keys of a document that picked the same slot evicted each other at every
//! occurrence: with 74 distinct keys in 2,048 slots some pair collides in
//! about 3 documents of 4 (twitter_timeline.json: `retweet_count` and
//! `notifications`, 40 misses per call, each a new `str` and its hash).
//!
//! Before the hash, a key is looked for in one slot more: the slot of the
//! key that followed the last key found, the last time that key was found
//! (`KeyCache::next`, one `u16` per slot). Objects of one shape give their
//! keys in the same order (a timeline's tweets and users, a stream's
//! lines), so most keys are found there, compared by length and bytes, and
//! never hashed; any other key is hashed and looked up as above, and
//! becomes the one predicted after the key before it. On
//! twitter_timeline.json, 901 k -> 886 k instructions per `loads`; twitter
//! -2.4%, citm -1.6%, random -0.6%, the 1 MB generated batch file's
//! `loads_many` -0.6% (callgrind, LTO builds).
//!
//! `loads_many` also shares short string *values* (up to
//! [`CACHE_VALUE_MAX`] bytes) through a second table of
//! [`CACHE_VALUE_SLOTS`] slots, as fastsimdjson does: the lines of a stream
//! repeat the same enum-like values (`"role": "user"`, `"type":
//! "function"`, a model name), and one shared `str` per value instead of
//! one per occurrence is an allocation less each, and fewer objects for the
//! collector and the deallocator to visit later (on the generated batch
//! file, 48 k value strings per 5 MB became 13 k objects). A table of its
//! own, so that values that never repeat (ids) do not evict keys. `loads`
//! of one document does not share values: there a short value repeats less
//! often, and each miss costs a hash and a slot update. Values up to 48
//! bytes (the whole of a slot's key field, was 16): an endpoint, a model
//! name with its date, a short prompt repeat on every line of a batch file
//! (5 MB of it: 5.3 k values of 17-48 bytes, 129 distinct). On the 100 MB
//! batch file, thread CPU of a call and the freeing of its result, one
//! process, interleaved: 233.3 / 240.0 -> 224.5 / 226.6 ms (both orders,
//! A/A 0.993; PGO builds; fastsimdjson 234.9 / 239.8), page faults per
//! call about halved (fewer pymalloc pools made); the 1 MB file's
//! instructions 12.50 M -> 12.31 M per call. amazon_cellphones.ndjson
//! (129 such values, none repeated): 3.23 M -> 3.27 M instructions
//! (evicted values freed), time per call within +-1% (callgrind, and
//! thread CPU of LTO builds). Sharing longer values too (up to 128 bytes,
//! ASCII without escapes, compared with the cached `str`'s characters)
//! saved under 1% more there and cost amazon_cellphones 3% (session 32).
//!
//! A slot is one cache line (the raw key, its `str` and a tag of hash and
//! length), so a lookup reads one line. The lookup itself is the builder's
//! (`Builder::key`, in `builder.rs`: it makes the `str` on a miss, between
//! reading the slot and filling it); this file holds the table, its hash and
//! its comparison. The cache sits behind a mutex that
//! `loads` (and `loads_many`) only try to take: a concurrent or re-entrant
//! call builds its keys without it.
//!
//! The cached strings are Python objects that outlive the call that made
//! them: `tracemalloc` started after the cache was filled shows them as
//! growth (+23.6 KB over 1000 `loads_many` calls of
//! amazon_cellphones.ndjson, 383 strings of 61.5 bytes on average with
//! 48-byte values, the same after 2000 and 3000 calls: entries made by
//! traced calls replacing untraced ones), bounded by the
//! two tables' slots; started before, the growth over 300 calls of a
//! stream is ~0 (`tests/many/test_loads_many_memory.py`).

use super::spare::Spares;
use pyo3::ffi;
use std::sync::Mutex;

/// Keys up to this many bytes (raw, as in the input) are cached (a slot,
/// with its key, then fills one 64-byte cache line).
pub(super) const CACHE_KEY_MAX: usize = 48;
/// Number of cache slots (a power of two).
pub(super) const CACHE_SLOTS: usize = 2048;
/// String values up to this many bytes (raw) go through the value table
/// when values are shared (at most `CACHE_KEY_MAX`).
pub(super) const CACHE_VALUE_MAX: usize = 48;
// A value's bytes are copied into a key-sized slot.
const _: () = assert!(CACHE_VALUE_MAX <= CACHE_KEY_MAX);
/// Number of value slots (a power of two).
pub(super) const CACHE_VALUE_SLOTS: usize = 1024;

/// One cache slot, one cache line: a raw key, its `str` (owned) and a tag
/// of its hash and length ([`tag`]). A lookup then reads one line, not a
/// slot and, elsewhere, the key (twice the L1 misses on documents with
/// many distinct keys).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Slot {
    pub(super) obj: *mut ffi::PyObject,
    pub(super) tag: u64,
    pub(super) key: [u8; CACHE_KEY_MAX],
}

/// The tag of a key of `len` bytes with hash `h`: the length in the low
/// byte (the hash bits it replaces also chose the slot).
#[inline(always)]
pub(super) fn tag(h: u64, len: usize) -> u64 {
    (h & !0xff) | len as u64
}

/// A direct-mapped cache from raw key bytes to `str` objects (keys), and
/// one for short string values (made on first use by `loads_many`).
pub(crate) struct KeyCache {
    pub(super) slots: Vec<Slot>,
    /// For each slot, the slot of the key found after its key the last
    /// time its key was found (`CACHE_SLOTS` entries, made with `slots`):
    /// where the builder looks first for the key after it.
    pub(super) next: Vec<u16>,
    /// The slot of the key found last (below `CACHE_SLOTS`).
    pub(super) last: usize,
    pub(super) values: Vec<Slot>,
    /// The builder's stack and unescape buffer, kept between the documents
    /// built while the cache is held (see `spare`).
    pub(super) spares: Spares,
}

// SAFETY: the `str` pointers are only touched with the interpreter attached
// (`loads` holds the GIL while it holds the lock), and str objects are
// immutable; the kept frame stack is empty (no pointers in it).
unsafe impl Send for KeyCache {}

impl KeyCache {
    /// The key in slot `i` was found (not where `next` said) or stored
    /// there: it follows the last one, and is now the last.
    #[inline(always)]
    pub(super) fn follow(&mut self, i: usize) {
        debug_assert!(i < CACHE_SLOTS);
        self.next[self.last] = i as u16;
        self.last = i;
    }
}

static KEY_CACHE: Mutex<KeyCache> = Mutex::new(KeyCache {
    slots: Vec::new(),
    next: Vec::new(),
    last: 0,
    values: Vec::new(),
    spares: Spares::EMPTY,
});

/// The key cache `loads` shares between calls (`None` while another
/// thread holds it).
pub(crate) fn key_cache() -> Option<std::sync::MutexGuard<'static, KeyCache>> {
    KEY_CACHE.try_lock().ok()
}

/// A fast hash of a short byte string (8 bytes a step, multiply-rotate).
/// An index loop rather than `chunks_exact`, whose iterator cost more
/// instructions per key than the words it mixes (twitter_timeline.json's keys
/// are one or two words long).
#[inline(always)]
pub(super) fn hash_key(b: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let n = b.len();
    let mut h = (n as u64).wrapping_mul(K);
    let mut i = 0;
    while i + 8 <= n {
        h = (h.rotate_left(5) ^ word8(b, i)).wrapping_mul(K);
        i += 8;
    }
    if i < n {
        h = (h.rotate_left(5) ^ tail_le(b, n - i)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

/// The 8 bytes of `b` from `at` on, little-endian (`at + 8 <= b.len()`).
#[inline(always)]
fn word8(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// The last `r` (1..=7) bytes of `b` as a little-endian integer (the
/// zero-padded tail `hash_key` mixes in), with whole loads only: a copy of
/// a variable-length tail into a buffer became a `memcpy` call per key.
#[inline(always)]
fn tail_le(b: &[u8], r: usize) -> u64 {
    let n = b.len();
    let le = |at: usize, w: usize| -> u64 {
        let mut a = [0u8; 8];
        a[..w].copy_from_slice(&b[at..at + w]);
        u64::from_le_bytes(a)
    };
    if n >= 8 {
        // The last eight bytes, the ones already mixed in shifted out.
        return le(n - 8, 8) >> (8 * (8 - r));
    }
    // The whole key is the tail (n == r): two overlapping loads.
    if r >= 4 {
        le(0, 4) | le(r - 4, 4) << (8 * (r - 4))
    } else if r >= 2 {
        le(0, 2) | le(r - 2, 2) << (8 * (r - 2))
    } else {
        b[0] as u64
    }
}

/// `a == b` for two short slices (a cached key and a body of the same
/// length, as the tag says), with whole loads only: 8 bytes a step, the last
/// word overlapping the one before, and under 8 bytes two overlapping 4- or
/// 2-byte loads. No byte loop for the tail (the zipped iterators of a byte
/// loop cost ~30 instructions per key on twitter_timeline.json) and no
/// `memcmp` call.
#[inline(always)]
pub(super) fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            if word8(a, i) != word8(b, i) {
                return false;
            }
            i += 8;
        }
        return word8(a, n - 8) == word8(b, n - 8);
    }
    let le = |s: &[u8], at: usize, w: usize| -> u32 {
        let mut x = [0u8; 4];
        x[..w].copy_from_slice(&s[at..at + w]);
        u32::from_le_bytes(x)
    };
    if n >= 4 {
        (le(a, 0, 4) ^ le(b, 0, 4)) | (le(a, n - 4, 4) ^ le(b, n - 4, 4)) == 0
    } else if n >= 2 {
        (le(a, 0, 2) ^ le(b, 0, 2)) | (le(a, n - 2, 2) ^ le(b, n - 2, 2)) == 0
    } else {
        n == 0 || a[0] == b[0]
    }
}

#[cfg(test)]
mod tests {
    use super::hash_key;

    #[test]
    fn tails_are_the_zero_padded_bytes() {
        let b: Vec<u8> = (1..=40).collect();
        for n in 1..=b.len() {
            let r = n % 8;
            if r == 0 {
                continue;
            }
            let mut a = [0u8; 8];
            a[..r].copy_from_slice(&b[n - r..n]);
            assert_eq!(super::tail_le(&b[..n], r), u64::from_le_bytes(a), "n {n}");
        }
    }

    #[test]
    fn short_eq_is_slice_equality() {
        let a: Vec<u8> = (1..=48).collect();
        let copy = a.clone();
        for n in 0..=a.len() {
            assert!(super::short_eq(&a[..n], &copy[..n]), "n {n}");
            for i in 0..n {
                let mut b = a[..n].to_vec();
                b[i] ^= 0x80;
                assert!(!super::short_eq(&a[..n], &b), "n {n} i {i}");
            }
            if n > 0 {
                assert!(!super::short_eq(&a[..n], &a[..n - 1]), "n {n}");
            }
        }
    }

    #[test]
    fn hash_depends_on_every_byte() {
        let a = hash_key(b"abcdefghijk");
        assert_ne!(a, hash_key(b"abcdefghijl"));
        assert_ne!(a, hash_key(b"abcdefghij"));
        assert_ne!(hash_key(b""), hash_key(b"\0"));
    }
}
