//! The state of a lazy array with elements inserted into it and no other
//! edit: `insert`, `append`, `extend` and a patch's `add` at an index or
//! `-` on an array of a strict document (a request's `messages`).
//!
//! # Algorithm
//!
//! The array stays lazy (its original elements are never walked or
//! unfolded into slots): the state keeps the cache of child views and
//! each new element with the ordinal of the original element it goes
//! before (the array's length: after the last one), sorted by ordinal,
//! equal ordinals in array order. In that order, new element `j` with
//! ordinal `b` is at position `b + j` of the array (the `b` originals
//! and the `j` new elements before it), so an insert at position `p`
//! goes at the first `j` with `b_j + j >= p`, with ordinal `p - j`.
//! `dumps` splices the new elements into the original bytes with
//! `crate::edit::write_lazy_array_inserts`, the same bytes the unfolded
//! array would give. Any other edit or read by position unfolds the
//! array first ([`Inserted::unfold`]), the new elements in their places.

use super::cache::ViewCache;
use super::Slot;
use crate::doc::{Cursor, Doc};
use crate::error::AccessError;
use pyo3::prelude::*;
use smallvec::SmallVec;

/// A lazy array's cached child views and its inserted elements.
pub(crate) struct Inserted {
    pub(super) views: ViewCache,
    /// (ordinal of the original element it goes before, value), sorted
    /// by ordinal, equal ordinals in array order. The usual one element
    /// (a request's new first message) is kept inline: no allocation to
    /// make or free (as big as a `Vec`: smallvec's `union` layout).
    pub(super) new: NewElements,
}

/// The inserted elements of an [`Inserted`] array.
pub(super) type NewElements = SmallVec<[(u32, Py<PyAny>); 1]>;

impl Inserted {
    pub(super) fn new(views: ViewCache) -> Inserted {
        Inserted {
            views,
            new: NewElements::new(),
        }
    }

    /// Insert `v` at position `p` of the array (`p <= len`).
    pub(super) fn insert(&mut self, p: usize, v: Py<PyAny>) {
        let j = self
            .new
            .iter()
            .enumerate()
            .position(|(j, &(b, _))| b as usize + j >= p)
            .unwrap_or(self.new.len());
        self.new.insert(j, ((p - j) as u32, v));
    }

    /// The array's elements as slots: the original elements (each with
    /// its cached view, taken from the cache) with the new ones in their
    /// places. Nothing is taken when walking the array fails.
    pub(super) fn unfold(&mut self, doc: &Doc<'_>, at: Cursor) -> Result<Vec<Slot>, AccessError> {
        let items = doc.array_items(at)?;
        let mut slots = Vec::with_capacity(doc.len(at)? + self.new.len());
        let mut views = std::mem::take(&mut self.views);
        let mut new = std::mem::take(&mut self.new).into_iter().peekable();
        for (i, c) in items.enumerate() {
            while let Some((_, v)) = new.next_if(|&(b, _)| b as usize <= i) {
                slots.push(Slot::New(v));
            }
            slots.push(Slot::Orig {
                at: c,
                i: i as u32,
                view: views.remove(c.start),
            });
        }
        slots.extend(new.map(|(_, v)| Slot::New(v)));
        Ok(slots)
    }

    /// Move every Python object held into `out` (see `drop`).
    pub(super) fn drain_into(&mut self, out: &mut impl Extend<Py<PyAny>>) {
        self.views.drain_into(out);
        out.extend(self.new.drain(..).map(|(_, v)| v));
    }

    /// Every Python object held: the cached views and the new elements.
    pub(super) fn held(&self) -> impl Iterator<Item = &Py<PyAny>> {
        self.views.values().chain(self.new.iter().map(|(_, v)| v))
    }

    /// A copy sharing the Python objects (for a snapshot of the overlay).
    pub(super) fn dup(&self, py: Python<'_>) -> Inserted {
        Inserted {
            views: self.views.dup(py),
            new: self
                .new
                .iter()
                .map(|(b, v)| (*b, v.clone_ref(py)))
                .collect(),
        }
    }
}
