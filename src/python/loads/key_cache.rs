//! The key cache: keys of up to [`CACHE_KEY_MAX`] bytes go through a
//! process-wide cache of [`CACHE_SLOTS`] `str` objects, direct-mapped on a
//! hash of the raw key bytes ([`hash_key`]), as orjson does: a repeated key
//! costs no allocation, and its `str` hash is already computed when the
//! dict needs it.
//!
//! A slot is one cache line (the raw key, its `str` and a tag of hash and
//! length), so a lookup reads one line. The cache sits behind a mutex that
//! `loads` (and `loads_many`) only try to take: a concurrent or re-entrant
//! call builds its keys without it.

use pyo3::ffi;
use std::sync::Mutex;

/// Keys up to this many bytes (raw, as in the input) are cached (a slot,
/// with its key, then fills one 64-byte cache line).
pub(super) const CACHE_KEY_MAX: usize = 48;
/// Number of cache slots (a power of two).
const CACHE_SLOTS: usize = 2048;

/// One cache slot, one cache line: a raw key, its `str` (owned) and a tag
/// of its hash and length ([`tag`]). A lookup then reads one line, not a
/// slot and, elsewhere, the key (twice the L1 misses on documents with
/// many distinct keys).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Slot {
    obj: *mut ffi::PyObject,
    tag: u64,
    key: [u8; CACHE_KEY_MAX],
}

/// The tag of a key of `len` bytes with hash `h`: the length in the low
/// byte (the hash bits it replaces also chose the slot).
#[inline(always)]
fn tag(h: u64, len: usize) -> u64 {
    (h & !0xff) | len as u64
}

/// A direct-mapped cache from raw key bytes to `str` objects.
pub(crate) struct KeyCache {
    slots: Vec<Slot>,
}

// SAFETY: the `str` pointers are only touched with the interpreter attached
// (`loads` holds the GIL while it holds the lock), and str objects are
// immutable.
unsafe impl Send for KeyCache {}

static KEY_CACHE: Mutex<KeyCache> = Mutex::new(KeyCache { slots: Vec::new() });

/// The key cache `loads` shares between calls (`None` while another
/// thread holds it).
pub(crate) fn key_cache() -> Option<std::sync::MutexGuard<'static, KeyCache>> {
    KEY_CACHE.try_lock().ok()
}

/// Where a key missing from the cache goes: its slot, its tag and the
/// entry it replaces (see [`KeyCache::put`]).
pub(super) struct Vacancy {
    i: usize,
    tag: u64,
    old: *mut ffi::PyObject,
}

impl KeyCache {
    /// The cached `str` of the raw key `body` (a new reference), or where
    /// to put it once it is made.
    ///
    /// # Safety
    /// The interpreter must be attached; `body` has at most
    /// [`CACHE_KEY_MAX`] bytes.
    #[inline(always)]
    pub(super) unsafe fn get(&mut self, body: &[u8]) -> Result<*mut ffi::PyObject, Vacancy> {
        let h = hash_key(body);
        let i = h as usize & (CACHE_SLOTS - 1);
        if self.slots.is_empty() {
            self.slots = vec![
                Slot {
                    obj: std::ptr::null_mut(),
                    tag: 0,
                    key: [0; CACHE_KEY_MAX],
                };
                CACHE_SLOTS
            ];
        }
        let t = tag(h, body.len());
        let slot = &self.slots[i];
        if !slot.obj.is_null() && slot.tag == t && short_eq(&slot.key[..body.len()], body) {
            // SAFETY: the cache owns a reference; we hand out a new one.
            unsafe { ffi::Py_INCREF(slot.obj) };
            return Ok(slot.obj);
        }
        Err(Vacancy {
            i,
            tag: t,
            old: slot.obj,
        })
    }

    /// Cache `obj`, the `str` of `body` that [`Self::get`] did not find
    /// (the caller keeps its own reference).
    ///
    /// # Safety
    /// The interpreter must be attached; `obj` is a live `str` and `v` is
    /// what `get` returned for `body`, with no other call on this cache
    /// since.
    #[inline(always)]
    pub(super) unsafe fn put(&mut self, v: Vacancy, body: &[u8], obj: *mut ffi::PyObject) {
        // SAFETY: one reference for the cache, one for the caller; the
        // replaced entry's reference is released.
        unsafe {
            ffi::Py_INCREF(obj);
            if !v.old.is_null() {
                ffi::Py_DECREF(v.old);
            }
        }
        // The key bytes change together with the slot, once the string
        // exists: a failed `string` leaves the old entry whole.
        let slot = &mut self.slots[v.i];
        slot.key[..body.len()].copy_from_slice(body);
        slot.tag = v.tag;
        slot.obj = obj;
    }
}

/// A fast hash of a short byte string (8 bytes a step, multiply-rotate).
#[inline(always)]
fn hash_key(b: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = (b.len() as u64).wrapping_mul(K);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(a)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        h = (h.rotate_left(5) ^ tail_le(b, rest.len())).wrapping_mul(K);
    }
    h ^ (h >> 29)
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

/// `a == b` for two short slices of equal length, 8 bytes a step (no
/// `memcmp` call).
#[inline(always)]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        if x != y {
            return false;
        }
    }
    ca.remainder()
        .iter()
        .zip(cb.remainder())
        .all(|(x, y)| x == y)
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
    fn hash_depends_on_every_byte() {
        let a = hash_key(b"abcdefghijk");
        assert_ne!(a, hash_key(b"abcdefghijl"));
        assert_ne!(a, hash_key(b"abcdefghij"));
        assert_ne!(hash_key(b""), hash_key(b"\0"));
    }
}
