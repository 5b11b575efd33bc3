//! The edit engine: an overlay of edits on a parsed document, written
//! back with every untouched byte copied. Host-agnostic: generic over the
//! host's key and value types, no Python and no Lua; both edges drive it.
//!
//! # The pieces
//!
//! - **State, per container** (the host keeps one per view or proxy):
//!   a lazy object holds [`Patches`] (replaced, deleted and added members,
//!   without unfolding it); an object unfolded by any other edit holds
//!   [`Members`] (each with its decoded key, the offset of its key as
//!   written, and a [`Slot`]: original child or new host value); an
//!   unfolded array holds [`Slot`]s ([`unfold_array`]); a lazy array may
//!   hold inserted elements by the ordinal they go before, without
//!   unfolding it ([`write_lazy_array_inserts`]: the bytes [`write_slots`]
//!   gives for the same elements). A lazy container has nothing else but
//!   the host's cache of child views. A patched lazy object's
//!   [`MemberTable`] (in its `Patches`) finds its members for the edits'
//!   lookups and the writer, from one walk.
//! - **The writer** ([`writer`]) turns one container's state into its
//!   output: it decides between splicing edits into the original bytes
//!   and writing member by member (runs of untouched members merged into
//!   one copy, keys, separators and whitespace copied as written), and
//!   validates copied ranges of lazy documents. The algorithm is in
//!   [`writer`]'s docs; a splice needs distinct keys, which the document
//!   checks (for large objects by sorted fingerprints, `doc/repeats.rs`).
//! - **The host's side** ([`Out`]): copies, punctuation, the host's new
//!   keys and values (its own encoder), and the edited children (the host
//!   recurses). Python's `dumps` implements it over its output buffer;
//!   [`Plan`] implements it as a flat list of [`Piece`]s for the C ABI.
//!
//! # How an edge drives it
//!
//! Per view: on the first edit of a lazy object, record it in its
//! `Patches` (`set` / `delete` with the host's key comparison); on an edit
//! patches cannot hold (insertion order games, `popitem`, ...), unfold it
//! with [`Members::unfold_with`] (moving cached child views into the
//! slots) and apply the patches in order ([`Patches::drain`]). To write,
//! the host works out which views hold edits (its own dirty tracking),
//! writes a clean one with [`write_clean`], and an edited one with the
//! writer matching its state ([`write_lazy_object`], [`write_members`],
//! [`write_lazy_array`], [`write_slots`]); [`Out::child`] brings it back
//! for each edited child, in output order. See the example in [`writer`].

pub mod members;
pub mod out;
pub mod patches;
pub mod plan;
pub mod table;
pub mod writer;

pub use members::{unfold_array, Member, Members, Slot};
pub use out::{EditError, Out};
pub use patches::{KeyState, Patch, Patches};
pub use plan::{Piece, Plan};
pub use table::MemberTable;
pub use writer::{
    check, write_clean, write_lazy_array, write_lazy_array_inserts, write_lazy_object,
    write_members, write_slots,
};

#[cfg(test)]
mod tests;
