//! The unfolded state of an edited container: its children as slots.
//!
//! The first edit that the light overlays cannot hold (see
//! [`super::patches`]) unfolds a container into one [`Slot`] per child,
//! in order: an *original* child (its cursor, its ordinal among the
//! container's original children, and the host's value for it once read,
//! e.g. a cached child view) or a *new* value the host set. An object's
//! slots are [`Members`]: each with its decoded key (for lookups) and, for
//! an original member, the offset of its key's opening quote, so the key,
//! the colon and the whitespace around them are copied as written.
//!
//! Unfolding is O(children) and decodes only keys; the original children
//! stay lazy. `V` is the host's value type (a Python object, a Lua
//! registry id); nothing here looks inside it.

use crate::doc::{Cursor, Doc};
use crate::error::AccessError;
use std::collections::HashMap;

/// The slots of array `at`, all original; `view` gives the host's value
/// kept for a child (its cached view), if any.
pub fn unfold_array<V>(
    doc: &Doc<'_>,
    at: Cursor,
    mut view: impl FnMut(Cursor) -> Option<V>,
) -> Result<Vec<Slot<V>>, AccessError> {
    Ok(doc
        .array_items(at)?
        .enumerate()
        .map(|(i, at)| Slot::Orig {
            at,
            i: i as u32,
            view: view(at),
        })
        .collect())
}

/// One child of an unfolded container.
#[derive(Debug)]
pub enum Slot<V> {
    /// An original child: its value's cursor, its ordinal among the
    /// container's original children, and the host's value for it once
    /// read (containers only: a view that may hold edits of its own).
    Orig { at: Cursor, i: u32, view: Option<V> },
    /// A value set by the host.
    New(V),
}

impl<V> Slot<V> {
    /// A copy whose host values are made by `dup` (the state kept by a
    /// snapshot shares the host's objects).
    pub fn dup_with(&self, dup: &mut impl FnMut(&V) -> V) -> Slot<V> {
        match self {
            Slot::Orig { at, i, view } => Slot::Orig {
                at: *at,
                i: *i,
                view: view.as_ref().map(&mut *dup),
            },
            Slot::New(v) => Slot::New(dup(v)),
        }
    }

    /// The host value this slot holds: the new value, or the cached view.
    pub fn held(&self) -> Option<&V> {
        match self {
            Slot::New(v) | Slot::Orig { view: Some(v), .. } => Some(v),
            Slot::Orig { view: None, .. } => None,
        }
    }

    /// The host value this slot holds, taken out of it.
    pub fn into_held(self) -> Option<V> {
        match self {
            Slot::New(v) | Slot::Orig { view: Some(v), .. } => Some(v),
            Slot::Orig { view: None, .. } => None,
        }
    }
}

/// A member of an unfolded object.
#[derive(Debug)]
pub struct Member<V> {
    /// The key, decoded.
    pub key: Box<str>,
    /// Offset of the key's opening quote (original members only; new ones
    /// hold 0 and a [`Slot::New`]).
    pub key_at: u32,
    pub slot: Slot<V>,
}

/// Objects with more members than this get a hash index; smaller ones are
/// searched linearly (cheaper than hashing at this size).
pub const INDEX_MIN: usize = 16;

/// The members of an unfolded object, in order; deleted ones are `None`
/// (tombstones, compacted when they outnumber the live members).
#[derive(Debug)]
pub struct Members<V> {
    pub list: Vec<Option<Member<V>>>,
    /// Number of live members.
    pub live: usize,
    /// Key -> position in `list`, once there are more than [`INDEX_MIN`].
    pub index: Option<HashMap<Box<str>, usize>>,
}

impl<V> Default for Members<V> {
    fn default() -> Self {
        Members {
            list: Vec::new(),
            live: 0,
            index: None,
        }
    }
}

impl<V> Members<V> {
    /// The members of object `at`, all original (a repeated key keeps its
    /// first occurrence, as reads do); `view` as in [`unfold_array`].
    pub fn unfold_with(
        doc: &Doc<'_>,
        at: Cursor,
        mut view: impl FnMut(Cursor) -> Option<V>,
    ) -> Result<Members<V>, AccessError> {
        let base = doc.input().as_ptr() as usize;
        let mut m = Members::default();
        for item in doc.distinct_items(at)? {
            let (i, raw, c) = item?;
            let key = doc.key_str(raw)?;
            m.push(Member {
                key: Box::from(&*key),
                key_at: (raw.as_ptr() as usize - base - 1) as u32,
                slot: Slot::Orig {
                    at: c,
                    i,
                    view: view(c),
                },
            });
        }
        Ok(m)
    }

    /// [`Self::unfold_with`] with no host values kept.
    pub fn unfold(doc: &Doc<'_>, at: Cursor) -> Result<Members<V>, AccessError> {
        Self::unfold_with(doc, at, |_| None)
    }

    pub fn live(&self) -> usize {
        self.live
    }

    /// The live members, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Member<V>> {
        self.list.iter().flatten()
    }

    /// Position in `list` of the member `key`.
    pub fn find(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(ix) => ix.get(key).copied(),
            None => self
                .list
                .iter()
                .position(|m| m.as_ref().is_some_and(|m| &*m.key == key)),
        }
    }

    /// The live member at `pos` (from [`Self::find`]).
    pub fn at_mut(&mut self, pos: usize) -> &mut Member<V> {
        self.list[pos].as_mut().expect("indexed members are live")
    }

    /// Drop the tombstones and rebuild the index.
    pub fn reindex(&mut self) {
        self.list.retain(Option::is_some);
        if let Some(ix) = &mut self.index {
            ix.clear();
            for (i, m) in self.list.iter().enumerate() {
                if let Some(m) = m {
                    ix.insert(m.key.clone(), i);
                }
            }
        }
    }

    /// Remove member `key`.
    pub fn remove(&mut self, key: &str) -> Option<Member<V>> {
        let pos = self.find(key)?;
        if let Some(ix) = &mut self.index {
            ix.remove(key);
        }
        let m = self.list[pos].take();
        self.live -= 1;
        // Keep the tombstones bounded.
        if self.list.len() > INDEX_MIN && self.list.len() > 2 * self.live {
            self.reindex();
        }
        m
    }

    /// Append a member whose key is not present.
    pub fn push(&mut self, m: Member<V>) {
        if let Some(ix) = &mut self.index {
            ix.insert(m.key.clone(), self.list.len());
        }
        self.list.push(Some(m));
        self.live += 1;
        if self.index.is_none() && self.live > INDEX_MIN {
            self.index = Some(HashMap::with_capacity(2 * self.live));
            self.reindex();
        }
    }

    /// Set `key` to the new value `v`: in place when present, else
    /// appended (as a dict does).
    pub fn set(&mut self, key: &str, v: V) {
        match self.find(key) {
            Some(pos) => self.at_mut(pos).slot = Slot::New(v),
            None => self.push(Member {
                key: key.into(),
                key_at: 0,
                slot: Slot::New(v),
            }),
        }
    }

    /// A copy whose host values are made by `dup`.
    pub fn dup_with(&self, mut dup: impl FnMut(&V) -> V) -> Members<V> {
        let list = self
            .list
            .iter()
            .map(|m| {
                m.as_ref().map(|m| Member {
                    key: m.key.clone(),
                    key_at: m.key_at,
                    slot: m.slot.dup_with(&mut dup),
                })
            })
            .collect();
        Members {
            list,
            live: self.live,
            index: self.index.clone(),
        }
    }
}
