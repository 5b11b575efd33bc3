//! The writer's output as data: a flat list of pieces, for hosts that
//! cannot take callbacks cheaply (the C ABI: Lua carries out one
//! container's plan after one call, instead of two calls per member).
//!
//! [`Plan`] is an [`Out`] that records what the writer asks for: copies of
//! the input and punctuation (merged into one piece when they follow each
//! other: a run of untouched members is one [`Piece::Copy`]), new keys as
//! text or as host keys, new values, and edited children. The host then
//! walks [`Plan::pieces`] and writes each: bytes as they are, keys and
//! values with its own encoder, children by planning them in turn.

use super::out::{EditError, Out};
use crate::doc::Cursor;

/// One piece of a container's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<K, V> {
    /// `input[a..b]`, validated.
    Copy(usize, usize),
    /// `Plan::bytes()[a..b]`: punctuation the writer added (`{`, `,`, `:`).
    Bytes(usize, usize),
    /// A new key, `Plan::text()[a..b]`, to write as a JSON string.
    KeyText(usize, usize),
    /// A new key of a patch, to write as a JSON string.
    Key(K),
    /// A new value.
    Value(V),
    /// An edited child (its key, if any, is in the pieces before it).
    Child(V),
}

/// The pieces of one container, and the bytes they point into.
///
/// `edited` answers [`Out::edited`] for the host's cached children.
pub struct Plan<K, V, F> {
    pieces: Vec<Piece<K, V>>,
    bytes: Vec<u8>,
    text: String,
    edited: F,
}

impl<K, V, F> Plan<K, V, F>
where
    F: FnMut(&V) -> Option<Cursor>,
{
    pub fn new(edited: F) -> Self {
        Plan {
            pieces: Vec::new(),
            bytes: Vec::new(),
            text: String::new(),
            edited,
        }
    }

    pub fn pieces(&self) -> &[Piece<K, V>] {
        &self.pieces
    }

    /// What [`Piece::Bytes`] points into.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// What [`Piece::KeyText`] points into.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Forget the pieces, keep the buffers (to plan the next container).
    pub fn clear(&mut self) {
        self.pieces.clear();
        self.bytes.clear();
        self.text.clear();
    }
}

impl<K: Clone, V: Clone, F> Out for Plan<K, V, F>
where
    F: FnMut(&V) -> Option<Cursor>,
{
    type Key = K;
    type Value = V;
    type Error = EditError;

    fn copy(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        if let Some(Piece::Copy(_, end)) = self.pieces.last_mut() {
            if *end == a {
                *end = b;
                return;
            }
        }
        self.pieces.push(Piece::Copy(a, b));
    }

    fn byte(&mut self, b: u8) {
        let at = self.bytes.len();
        self.bytes.push(b);
        if let Some(Piece::Bytes(_, end)) = self.pieces.last_mut() {
            if *end == at {
                *end = at + 1;
                return;
            }
        }
        self.pieces.push(Piece::Bytes(at, at + 1));
    }

    fn key_text(&mut self, key: &str) {
        let at = self.text.len();
        self.text.push_str(key);
        self.pieces.push(Piece::KeyText(at, self.text.len()));
    }

    fn key(&mut self, key: &K) -> Result<(), EditError> {
        self.pieces.push(Piece::Key(key.clone()));
        Ok(())
    }

    fn value(&mut self, v: &V) -> Result<(), EditError> {
        self.pieces.push(Piece::Value(v.clone()));
        Ok(())
    }

    fn child(&mut self, v: &V) -> Result<(), EditError> {
        self.pieces.push(Piece::Child(v.clone()));
        Ok(())
    }

    fn edited(&mut self, v: &V) -> Result<Option<Cursor>, EditError> {
        Ok((self.edited)(v))
    }

    fn fail(&mut self, e: EditError) -> EditError {
        e
    }
}
