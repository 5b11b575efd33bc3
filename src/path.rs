//! Paths: dotted keys and indices, quoted keys, and RFC 6901 JSON Pointers.
//!
//! - `""` is the root.
//! - Dotted: `messages[2].content`, `[0].user.login`, `a.b[-1]` (a negative
//!   index counts from the end). A bare key is a non-empty run of bytes other
//!   than `.` and `[`.
//! - Quoted key: `["a.b"]`, a JSON string literal inside brackets (escapes
//!   allowed), for keys holding `.`, `[` or `"`.
//! - JSON Pointer: a leading `/`; tokens split on `/`, `~1` is `/` and `~0`
//!   is `~`. A token that is a canonical non-negative integer indexes arrays
//!   and is a key for objects.
//!
//! Parsing does not allocate unless a key needs unescaping.

use crate::error::AccessError;
use std::borrow::Cow;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'p> {
    /// An object key (already unescaped).
    Key(Cow<'p, [u8]>),
    /// An array index; negative counts from the end.
    Index(i64),
    /// A JSON Pointer token (already unescaped): an index for arrays when it
    /// is a canonical non-negative integer, else a key.
    Token(Cow<'p, [u8]>),
}

/// Iterate over the segments of `path`. Each item carries the byte offset of
/// the segment in the path (for error messages). Malformed paths yield
/// `AccessError::PathSyntax`.
pub fn segments(path: &str) -> Segments<'_> {
    Segments {
        path: path.as_bytes(),
        pos: 0,
    }
}

pub struct Segments<'p> {
    path: &'p [u8],
    pos: usize,
}

impl<'p> Iterator for Segments<'p> {
    type Item = Result<(usize, Segment<'p>), AccessError>;
    fn next(&mut self) -> Option<Self::Item> {
        let _ = (self.path, self.pos);
        todo!("helper C")
    }
}
