//! Patches: the light overlay of a lazy object.
//!
//! The common edits of a forwarded request (set `model`, add a field,
//! replace one message's `content`, delete `stream`) touch one or two keys
//! of an object with a handful of members. Unfolding the whole object into
//! slots for that (see [`super::members`]) decodes every key; a patch list
//! records only what changed, and the object stays lazy for everything
//! else:
//!
//! - a *replacement* (`orig: Some(cursor)`, `value: Some(v)`) stands in for
//!   the original member whose value is at `cursor`, in its position;
//! - a *deletion* (`orig: Some(cursor)`, `value: None`) drops that member;
//! - an *addition* (`orig: None`, `value: Some(v)`) follows the original
//!   members, in the order the keys were added.
//!
//! The current state of a key is its last patch, or the original member
//! when it has none. Setting a key deleted from the original adds it anew
//! (at the end, as a dict does); deleting an added key removes its patch.
//! So the list holds at most one replacement or deletion per original
//! member and at most one live patch per key, and it reads back exactly
//! like the dict the same operations would give.
//!
//! A key that repeats in the original reads as its first occurrence, so
//! "the original member" of a patch is that first one; writing drops the
//! later occurrences of every key (`Doc::distinct_items`), so the output
//! holds each key once and reads back like the view. Hosts unfold the
//! object for any other operation, applying the patches in order
//! ([`Patches::drain`]).
//!
//! `K` is the host's key (a Python `str`, a Lua string) and `V` its value.
//! Keys are compared by a function the host passes (`same`), which may
//! fail (a Python `str` without a UTF-8 form); the host makes sure a key it
//! stores has one, so that writing it cannot fail after the fact.

use super::table::MemberTable;
use crate::doc::Cursor;
use smallvec::SmallVec;

#[derive(Debug)]
pub struct Patch<K, V> {
    pub key: K,
    /// The original member's value this patch replaces or deletes; `None`
    /// for an added key.
    pub orig: Option<Cursor>,
    /// The new value; `None`: the original member is deleted.
    pub value: Option<V>,
}

/// What the patches say about one key.
#[derive(Debug)]
pub enum KeyState<'a, V> {
    Set(&'a V),
    Deleted,
    /// No patch: the original member (if any) holds.
    Untouched,
}

/// Patches kept without a heap allocation (set `model` and `temperature`).
const INLINE: usize = 2;

#[derive(Debug)]
pub struct Patches<K, V> {
    list: SmallVec<[Patch<K, V>; INLINE]>,
    /// Where the object's members are, once a lookup through it was made
    /// (see [`MemberTable`]): the lookups of later edits and the writer's
    /// check for repeated keys read it instead of walking the members.
    pub table: MemberTable,
}

impl<K, V> Default for Patches<K, V> {
    fn default() -> Self {
        Patches {
            list: SmallVec::new(),
            table: MemberTable::default(),
        }
    }
}

impl<K, V> Patches<K, V> {
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether dropping the list frees nothing: no patch, and no heap
    /// buffer left from earlier ones.
    pub fn is_bare(&self) -> bool {
        self.list.is_empty() && !self.list.spilled()
    }

    /// Position of the last patch whose key is `same`.
    fn last<E>(&self, same: &mut impl FnMut(&K) -> Result<bool, E>) -> Result<Option<usize>, E> {
        for (i, p) in self.list.iter().enumerate().rev() {
            if same(&p.key)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// The state of the key that `same` recognises.
    pub fn state<E>(
        &self,
        mut same: impl FnMut(&K) -> Result<bool, E>,
    ) -> Result<KeyState<'_, V>, E> {
        Ok(match self.last(&mut same)? {
            Some(i) => match &self.list[i].value {
                Some(v) => KeyState::Set(v),
                None => KeyState::Deleted,
            },
            None => KeyState::Untouched,
        })
    }

    /// Set `key` (recognised by `same`) to `value`; `orig` finds the
    /// original member's value (asked only when the key has no patch yet),
    /// given the object's member table (see [`MemberTable::field`]).
    pub fn set<E>(
        &mut self,
        key: impl FnOnce() -> K,
        mut same: impl FnMut(&K) -> Result<bool, E>,
        value: V,
        orig: impl FnOnce(&mut MemberTable) -> Option<Cursor>,
    ) -> Result<(), E> {
        let orig = match self.last(&mut same)? {
            Some(i) if self.list[i].value.is_some() => {
                self.list[i].value = Some(value);
                return Ok(());
            }
            // Deleted from the original: added anew, at the end.
            Some(_) => None,
            None => orig(&mut self.table),
        };
        self.list.push(Patch {
            key: key(),
            orig,
            value: Some(value),
        });
        Ok(())
    }

    /// Set `key`, which has no patch (the caller asked [`Self::state`]:
    /// `Untouched`), to `value`: [`Self::set`] without looking for its
    /// patch again.
    pub fn set_untouched(
        &mut self,
        key: K,
        value: V,
        orig: impl FnOnce(&mut MemberTable) -> Option<Cursor>,
    ) {
        let orig = orig(&mut self.table);
        self.list.push(Patch {
            key,
            orig,
            value: Some(value),
        });
    }

    /// Delete `key` (recognised by `same`); false when it is absent.
    /// `orig` as in [`Self::set`].
    pub fn delete<E>(
        &mut self,
        key: impl FnOnce() -> K,
        mut same: impl FnMut(&K) -> Result<bool, E>,
        orig: impl FnOnce(&mut MemberTable) -> Option<Cursor>,
    ) -> Result<bool, E> {
        match self.last(&mut same)? {
            Some(i) => match (self.list[i].orig, &self.list[i].value) {
                (_, None) => Ok(false),
                (Some(_), Some(_)) => {
                    self.list[i].value = None;
                    Ok(true)
                }
                (None, Some(_)) => {
                    self.list.remove(i);
                    Ok(true)
                }
            },
            None => match orig(&mut self.table) {
                Some(at) => {
                    self.list.push(Patch {
                        key: key(),
                        orig: Some(at),
                        value: None,
                    });
                    Ok(true)
                }
                None => Ok(false),
            },
        }
    }

    /// The replacement or deletion of the original member at `offset`.
    pub fn for_original(&self, offset: u32) -> Option<&Patch<K, V>> {
        self.list
            .iter()
            .find(|p| p.orig.is_some_and(|c| c.start == offset))
    }

    /// Added keys and their values, in order.
    pub fn added(&self) -> impl Iterator<Item = (&K, &V)> {
        self.list
            .iter()
            .filter(|p| p.orig.is_none())
            .filter_map(|p| p.value.as_ref().map(|v| (&p.key, v)))
    }

    /// Whether some patch deletes an original member.
    pub fn deletes(&self) -> bool {
        self.list.iter().any(|p| p.value.is_none())
    }

    /// Members added minus members deleted.
    pub fn len_delta(&self) -> isize {
        self.list
            .iter()
            .map(|p| match (p.orig, &p.value) {
                (None, Some(_)) => 1,
                (Some(_), None) => -1,
                _ => 0,
            })
            .sum()
    }

    /// The patches in the order they must be applied to unfolded members.
    pub fn drain(&mut self) -> impl Iterator<Item = Patch<K, V>> + '_ {
        self.list.drain(..)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Patch<K, V>> {
        self.list.iter()
    }

    /// A copy whose keys and values are made by `key` and `value` (for a
    /// snapshot of the overlay, sharing the host's objects).
    pub fn dup_with(
        &self,
        mut key: impl FnMut(&K) -> K,
        mut value: impl FnMut(&V) -> V,
    ) -> Patches<K, V> {
        Patches {
            list: self
                .list
                .iter()
                .map(|p| Patch {
                    key: key(&p.key),
                    orig: p.orig,
                    value: p.value.as_ref().map(&mut value),
                })
                .collect(),
            table: self.table.clone(),
        }
    }
}
