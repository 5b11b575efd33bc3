//! The cache of child views a lazy container keeps, by the child's byte
//! offset (so `v["a"] is v["a"]`).
//!
//! Most containers cache a handful of children (a request's `messages`, the
//! first message), so the cache is a small vector searched linearly: no
//! hashing, and no allocation for the first two. A container whose children
//! are all visited (`for m in req["messages"]` over thousands of messages)
//! caches them in document order, so the vector stays sorted by offset: it
//! keeps growing (appends, binary search) as long as every view comes after
//! the last. The first one out of order beyond [`SMALL_MAX`] views moves
//! the cache to a hash map keyed with a multiplicative hash (the keys are
//! distinct byte offsets, not attacker-chosen strings: the worst case is a
//! slower map, never a wrong answer).

#[cfg(not(feature = "abi3"))]
use pyo3::ffi;
use pyo3::prelude::*;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Views kept in the vector before moving to the map.
const SMALL_MAX: usize = 16;

/// Hashes one `u32` offset by a multiply (Fibonacci hashing).
#[derive(Default)]
pub(super) struct OffsetHasher(u64);

impl Hasher for OffsetHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = u64::from(v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type Map = HashMap<u32, Py<PyAny>, BuildHasherDefault<OffsetHasher>>;

/// Views kept without a heap allocation (a request's `messages`, its
/// first message: most lazy containers cache one or two children).
const INLINE: usize = 2;

/// Child views by byte offset.
#[derive(Default)]
pub(super) struct ViewCache {
    small: SmallVec<[(u32, Py<PyAny>); INLINE]>,
    big: Option<Box<Map>>,
}

impl ViewCache {
    /// The view cached for offset `at`: the usual few views (no map, a
    /// short vector) are searched inline, the rest by [`Self::get_more`].
    #[inline(always)]
    pub(super) fn get(&self, at: u32) -> Option<&Py<PyAny>> {
        if self.big.is_none() && self.small.len() <= INLINE {
            return self.small.iter().find(|(k, _)| *k == at).map(|(_, v)| v);
        }
        self.get_more(at)
    }

    #[inline(never)]
    fn get_more(&self, at: u32) -> Option<&Py<PyAny>> {
        match &self.big {
            Some(m) => m.get(&at),
            None if self.small.len() <= SMALL_MAX => {
                self.small.iter().find(|(k, _)| *k == at).map(|(_, v)| v)
            }
            // Beyond SMALL_MAX the vector is sorted by offset (see `insert`);
            // a loop over a container's children asks for each child past
            // the last one cached, answered without the search.
            None if self.small.last().is_some_and(|(k, _)| *k < at) => None,
            None => match self.small.binary_search_by_key(&at, |(k, _)| *k) {
                Ok(i) => Some(&self.small[i].1),
                Err(_) => None,
            },
        }
    }

    /// Cache `v` for offset `at` (not cached yet).
    pub(super) fn insert(&mut self, at: u32, v: Py<PyAny>) {
        if let Some(m) = &mut self.big {
            m.insert(at, v);
            return;
        }
        if self.small.len() < SMALL_MAX {
            self.small.push((at, v));
            return;
        }
        // Keep growing the vector while it is sorted and `at` comes last
        // (the views of a container visited in order).
        let sorted = self.small.len() > SMALL_MAX || self.small.windows(2).all(|w| w[0].0 < w[1].0);
        if sorted && self.small.last().is_some_and(|(k, _)| *k < at) {
            self.small.push((at, v));
            return;
        }
        let mut m: Map = self.small.drain(..).collect();
        m.insert(at, v);
        self.small = SmallVec::new();
        self.big = Some(Box::new(m));
    }

    pub(super) fn remove(&mut self, at: u32) -> Option<Py<PyAny>> {
        match &mut self.big {
            Some(m) => m.remove(&at),
            None => {
                let i = self.small.iter().position(|(k, _)| *k == at)?;
                // `remove`, not `swap_remove`: a long vector stays sorted.
                Some(self.small.remove(i).1)
            }
        }
    }

    /// Whether dropping the cache frees nothing: no view, and no heap
    /// memory (the vector not spilled, no map).
    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    pub(super) fn is_bare(&self) -> bool {
        self.big.is_none() && self.small.is_empty() && !self.small.spilled()
    }

    /// Whether the cached views (if any) sit in the inline room: no heap
    /// memory to free once they are released.
    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    pub(super) fn is_inline(&self) -> bool {
        self.big.is_none() && !self.small.spilled()
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        match &self.big {
            Some(m) => m.is_empty(),
            None => self.small.is_empty(),
        }
    }

    /// Move every cached view into `out`.
    pub(super) fn drain_into(&mut self, out: &mut impl Extend<Py<PyAny>>) {
        out.extend(self.small.drain(..).map(|(_, v)| v));
        if let Some(m) = self.big.take() {
            out.extend(m.into_values());
        }
    }

    /// Empty the cache, releasing every view by a plain `Py_DECREF` in
    /// place (no move into another vector first; see `super::drop::shed`).
    ///
    /// # Safety
    ///
    /// The thread is attached (holds the GIL).
    #[cfg(not(feature = "abi3"))]
    pub(super) unsafe fn decref_all(&mut self) {
        let n = self.small.len();
        let at = self.small.as_ptr();
        // SAFETY: the first `n` entries are initialized; the length is set
        // to zero first, so each is read out (and its reference released)
        // exactly once and the vector never drops them again. A decref may
        // free a child view, which never reaches this cache (its owner is
        // being dropped). Attached: the caller's contract.
        unsafe {
            self.small.set_len(0);
            for i in 0..n {
                let (_, v) = std::ptr::read(at.add(i));
                ffi::Py_DECREF(v.into_ptr());
            }
        }
        if let Some(m) = self.big.take() {
            for v in m.into_values() {
                // SAFETY: attached (the caller's contract); `into_ptr`
                // hands over the reference the `Py` owned.
                unsafe { ffi::Py_DECREF(v.into_ptr()) };
            }
        }
    }

    /// Give `each` every cached view (cheaper than iterating [`Self::values`]).
    pub(super) fn for_each(&self, each: &mut impl FnMut(&Py<PyAny>)) {
        match &self.big {
            Some(m) => m.values().for_each(each),
            None => self.small.iter().for_each(|(_, v)| each(v)),
        }
    }

    pub(super) fn values(&self) -> Values<'_> {
        // (The vector is empty once the map is in use.)
        match &self.big {
            None => Values::Small(self.small.iter()),
            Some(m) => Values::Big(m.values()),
        }
    }

    /// A copy sharing the cached views (for a snapshot of the overlay).
    pub(super) fn dup(&self, py: Python<'_>) -> ViewCache {
        ViewCache {
            small: self
                .small
                .iter()
                .map(|(k, v)| (*k, v.clone_ref(py)))
                .collect(),
            big: self
                .big
                .as_ref()
                .map(|m| Box::new(m.iter().map(|(k, v)| (*k, v.clone_ref(py))).collect())),
        }
    }
}

/// The views of a [`ViewCache`]: one match per step, no chain of the two.
pub(super) enum Values<'a> {
    Small(std::slice::Iter<'a, (u32, Py<PyAny>)>),
    Big(std::collections::hash_map::Values<'a, u32, Py<PyAny>>),
}

impl<'a> Iterator for Values<'a> {
    type Item = &'a Py<PyAny>;

    #[inline]
    fn next(&mut self) -> Option<&'a Py<PyAny>> {
        match self {
            Values::Small(i) => i.next().map(|(_, v)| v),
            Values::Big(i) => i.next(),
        }
    }
}
