//! Where the edit writer's output goes: the host's side of the contract.
//!
//! The writer ([`super::writer`]) decides what each piece of an edited
//! container is; the host carries the pieces out through [`Out`]. Input
//! ranges and punctuation are plain bytes; keys and values are the host's
//! own (each edge encodes them with its own encoder), and an edited child
//! container is written by the host (which calls the writer again for it,
//! or walks its own tree): the engine never recurses, so its stack use
//! does not grow with the document's depth.

use crate::doc::Cursor;
use crate::error::{AccessError, Error};
use std::fmt;

/// What the writer can meet: a document read that failed, or (in a lazy
/// document) a range that does not validate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// A read of the document failed (a malformed container met lazily).
    Access(AccessError),
    /// `input[a..b]` of a lazy document failed strict validation; the
    /// error's offset is in the whole input.
    Invalid(Error),
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::Access(e) => e.fmt(f),
            EditError::Invalid(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for EditError {}

/// The host's sink for one container's output.
///
/// `Key` is the key type of the host's patches ([`super::Patches`]) and
/// `Value` the host's value type (new values and cached child views).
pub trait Out {
    type Key;
    type Value;
    type Error;
    /// Copy `input[a..b]` of the document (already validated).
    fn copy(&mut self, a: usize, b: usize);
    /// One byte of punctuation (`{ } [ ] , :`).
    fn byte(&mut self, b: u8);
    /// A new key given as text (a member added to an unfolded object),
    /// written as a JSON string.
    fn key_text(&mut self, key: &str);
    /// A new key of a patch, written as a JSON string.
    fn key(&mut self, key: &Self::Key) -> Result<(), Self::Error>;
    /// A new value, through the host's encoder.
    fn value(&mut self, v: &Self::Value) -> Result<(), Self::Error>;
    /// A cached child that [`Out::edited`] found edited: the host writes
    /// it (its key, if any, is written already).
    fn child(&mut self, v: &Self::Value) -> Result<(), Self::Error>;
    /// Whether a cached child (a view of an original child container)
    /// holds edits to write, and then its cursor; `None` when it is
    /// untouched (it is then copied with its neighbours).
    fn edited(&mut self, v: &Self::Value) -> Result<Option<Cursor>, Self::Error>;
    /// Turn an engine error into the host's.
    fn fail(&mut self, e: EditError) -> Self::Error;
}
