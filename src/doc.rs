//! Reads from an indexed document: path resolution, typed getters, raw spans
//! and iteration.

use crate::decode::Number;
use crate::error::{AccessError, JsonType};
use crate::index::Index;
use std::borrow::Cow;

/// A position of one value in a document. Plain data (`Copy`, no lifetime):
/// hosts store it beside a reference to the document it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cursor {
    /// Byte offset of the value's first byte.
    pub(crate) start: u32,
    /// Index in the structurals of the first structural at or after `start`.
    pub(crate) sidx: u32,
    /// For containers, its ordinal in the container table.
    pub(crate) ord: u32,
}

/// A decoded value. Containers are returned as cursors.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Number(Number<'a>),
    String(Cow<'a, str>),
    Object(Cursor),
    Array(Cursor),
}

/// An input and its index.
#[derive(Clone, Copy)]
pub struct Doc<'a> {
    input: &'a [u8],
    index: &'a Index,
}

impl<'a> Doc<'a> {
    /// Pair an input with the index built from it. Using another input is a
    /// logic error (wrong answers or `AccessError`s), never memory-unsafe.
    pub fn new(input: &'a [u8], index: &'a Index) -> Doc<'a> {
        Doc { input, index }
    }
    pub fn input(&self) -> &'a [u8] { self.input }
    pub fn root(&self) -> Cursor { todo!() }
    /// Resolve `path` relative to `at`.
    pub fn find(&self, at: Cursor, path: &str) -> Result<Cursor, AccessError> { let _ = (at, path); todo!() }
    pub fn type_of(&self, c: Cursor) -> JsonType { let _ = c; todo!() }
    /// Decode the value at `c` (containers come back as cursors).
    pub fn value(&self, c: Cursor) -> Result<Value<'a>, AccessError> { let _ = c; todo!() }
    /// Number of children of an object or array (`Type` error otherwise).
    pub fn len(&self, c: Cursor) -> Result<usize, AccessError> { let _ = c; todo!() }
    /// The original bytes of the value.
    pub fn raw(&self, c: Cursor) -> &'a [u8] { let _ = c; todo!() }
    // Convenience: resolve then read.
    pub fn get(&self, at: Cursor, path: &str) -> Result<Value<'a>, AccessError> { self.value(self.find(at, path)?) }
    pub fn get_str(&self, at: Cursor, path: &str) -> Result<Cow<'a, str>, AccessError> { let _ = (at, path); todo!() }
    pub fn get_number(&self, at: Cursor, path: &str) -> Result<Number<'a>, AccessError> { let _ = (at, path); todo!() }
    pub fn get_i64(&self, at: Cursor, path: &str) -> Result<i64, AccessError> { let _ = (at, path); todo!() }
    pub fn get_f64(&self, at: Cursor, path: &str) -> Result<f64, AccessError> { let _ = (at, path); todo!() }
    pub fn get_bool(&self, at: Cursor, path: &str) -> Result<bool, AccessError> { let _ = (at, path); todo!() }
    /// Children of an array, in order.
    pub fn array_items(&self, c: Cursor) -> Result<ArrayItems<'a>, AccessError> { let _ = c; todo!() }
    /// Members of an object, in order: (raw key body, value).
    pub fn object_items(&self, c: Cursor) -> Result<ObjectItems<'a>, AccessError> { let _ = c; todo!() }
    /// Decode a raw key body returned by `object_items`.
    pub fn key_str(&self, raw_key: &'a [u8]) -> Result<Cow<'a, str>, AccessError> { let _ = raw_key; todo!() }
}

pub struct ArrayItems<'a> { _d: Doc<'a> }
impl<'a> Iterator for ArrayItems<'a> { type Item = Cursor; fn next(&mut self) -> Option<Cursor> { todo!() } }
pub struct ObjectItems<'a> { _d: Doc<'a> }
impl<'a> Iterator for ObjectItems<'a> { type Item = (&'a [u8], Cursor); fn next(&mut self) -> Option<Self::Item> { todo!() } }
