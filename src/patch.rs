//! JSON Patch (RFC 6902) rules that do not depend on the host language:
//! pointers split into tokens, the array index rules, the "move into its
//! own child" check, and the op names.
//!
//! The edges (Python in `python/patch.rs`, Lua in `qjson.lua`) walk their
//! own values with the tokens given here; what a token means for an array
//! is decided by [`array_index`], so both edges accept and reject the same
//! indices.
//!
//! # Pointers
//!
//! A patch path is `""` (the whole document) or an RFC 6901 pointer: `/`
//! followed by tokens split on `/`, with `~1` for `/` and `~0` for `~`.
//! The split and unescape are the path resolver's ([`crate::path`]); a path
//! in the dotted syntax is refused here, as RFC 6902 requires pointers.
//!
//! # Array indices
//!
//! A token indexes an array when it is `0` or digits without a leading
//! zero (`01`, `+1`, `-1`, ` 1` are errors); `-` is the position after the
//! last element, valid only where a value is inserted (`add`, and the
//! target of `move` / `copy`). An index may equal the length only where a
//! value is inserted.

use crate::error::AccessError;
use crate::path::{segments, Segment};
use smallvec::SmallVec;
use std::borrow::Cow;

/// The tokens of a pointer; the common paths (`/model`,
/// `/messages/0/content`) fit without a heap allocation.
pub type Tokens<'a> = SmallVec<[Cow<'a, [u8]>; 4]>;

/// The six operations of RFC 6902.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Remove,
    Replace,
    Move,
    Copy,
    Test,
}

impl Op {
    /// The op named `name`, if it is one of the six.
    pub fn parse(name: &str) -> Option<Op> {
        Some(match name {
            "add" => Op::Add,
            "remove" => Op::Remove,
            "replace" => Op::Replace,
            "move" => Op::Move,
            "copy" => Op::Copy,
            "test" => Op::Test,
            _ => return None,
        })
    }

    /// Whether the op carries a `value` member.
    pub fn needs_value(self) -> bool {
        matches!(self, Op::Add | Op::Replace | Op::Test)
    }

    /// Whether the op carries a `from` member.
    pub fn needs_from(self) -> bool {
        matches!(self, Op::Move | Op::Copy)
    }
}

/// Why a patch op cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchFault {
    /// The path is not `""` or a JSON Pointer, or has a bad `~` escape.
    BadPointer(String),
    /// A token is not a valid array index here.
    BadIndex(String),
    /// The index is past the end of the array.
    OutOfRange(String),
}

impl std::fmt::Display for PatchFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PatchFault::BadPointer(s) | PatchFault::BadIndex(s) | PatchFault::OutOfRange(s) => {
                f.write_str(s)
            }
        }
    }
}

/// The unescaped tokens of `path`, a JSON Pointer (`""` has none).
pub fn pointer(path: &str) -> Result<Tokens<'_>, PatchFault> {
    if !path.is_empty() && !path.starts_with('/') {
        return Err(PatchFault::BadPointer(format!(
            "path {path:?} is not a JSON Pointer (it must be empty or start with '/')"
        )));
    }
    if path.is_empty() {
        return Ok(Tokens::new());
    }
    // Without a `~` there is nothing to unescape: the tokens are the pieces
    // between slashes (what the resolver gives, without its per-segment
    // state machine). Patch paths are short: one pass over the bytes finds
    // the slashes and looks for a `~`.
    let bytes = path.as_bytes();
    let mut tokens = Tokens::new();
    let mut start = 1;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(1) {
        if b == b'/' {
            tokens.push(Cow::Borrowed(&bytes[start..i]));
            start = i + 1;
        } else if b == b'~' {
            escaped = true;
            break;
        }
    }
    if !escaped {
        tokens.push(Cow::Borrowed(&bytes[start..]));
        return Ok(tokens);
    }
    segments(path)
        .map(|s| match s {
            Ok((_, Segment::Token(t))) => Ok(t),
            Ok(_) => unreachable!("a path starting with '/' yields pointer tokens"),
            Err(AccessError::PathSyntax { at, reason }) => Err(PatchFault::BadPointer(format!(
                "bad JSON Pointer {path:?}: {reason} at offset {at}"
            ))),
            Err(e) => Err(PatchFault::BadPointer(format!(
                "bad JSON Pointer {path:?}: {e}"
            ))),
        })
        .collect()
}

/// Where a token points in an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// An existing element (`remove`, `replace`, `test`, the source of
    /// `move` / `copy`, and every step on the way).
    Existing,
    /// A position a value is inserted at (`add`, the target of `move` /
    /// `copy`): `0..=len`, or `-` for `len`.
    Insert,
}

/// The position `token` names in an array of `len` elements.
pub fn array_index(token: &[u8], len: usize, place: Place) -> Result<usize, PatchFault> {
    let shown = || String::from_utf8_lossy(token).into_owned();
    if token == b"-" {
        return match place {
            Place::Insert => Ok(len),
            Place::Existing => Err(PatchFault::OutOfRange(
                "'-' names no existing array element".to_owned(),
            )),
        };
    }
    let canonical = match token {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !canonical {
        return Err(PatchFault::BadIndex(format!(
            "{:?} is not an array index",
            shown()
        )));
    }
    let limit = match place {
        Place::Existing => len,
        Place::Insert => len + 1,
    };
    // Digits only: the parse fails only on overflow, which is out of range.
    match std::str::from_utf8(token)
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
    {
        Some(i) if i < limit => Ok(i),
        _ => Err(PatchFault::OutOfRange(format!(
            "array index {} out of range (length {len})",
            shown()
        ))),
    }
}

/// Whether `from` is a proper prefix of `path`: moving a value there
/// would move it into one of its own children.
pub fn is_proper_prefix<T: AsRef<[u8]>>(from: &[T], path: &[T]) -> bool {
    from.len() < path.len() && from.iter().zip(path).all(|(a, b)| a.as_ref() == b.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers() {
        for p in ["", "/a/b", "/", "//", "/a/", "/0/-/x y", "/a~1b/~0", "/é/ü"] {
            let resolver: Vec<Vec<u8>> = segments(p)
                .map(|s| match s.unwrap().1 {
                    Segment::Token(t) => t.into_owned(),
                    other => panic!("{other:?}"),
                })
                .collect();
            let ours: Vec<Vec<u8>> = pointer(p)
                .unwrap()
                .into_iter()
                .map(Cow::into_owned)
                .collect();
            assert_eq!(ours, resolver, "{p}");
        }
        assert!(pointer("").unwrap().is_empty());
        let t = pointer("/a~1b/~0c/").unwrap();
        assert_eq!(t.to_vec(), vec![&b"a/b"[..], b"~c", b""]);
        let long = pointer("/a/b/c/d/e/f").unwrap();
        assert_eq!(long.len(), 6);
        assert_eq!(&*long[5], b"f");
        assert!(pointer("a/b").is_err());
        assert!(pointer("/a~2").is_err());
    }

    #[test]
    fn indices() {
        assert_eq!(array_index(b"0", 1, Place::Existing), Ok(0));
        assert!(array_index(b"1", 1, Place::Existing).is_err());
        assert_eq!(array_index(b"1", 1, Place::Insert), Ok(1));
        assert_eq!(array_index(b"-", 3, Place::Insert), Ok(3));
        assert!(array_index(b"-", 3, Place::Existing).is_err());
        for bad in [&b"01"[..], b"+1", b"-1", b" 1", b"", b"1a"] {
            assert!(matches!(
                array_index(bad, 5, Place::Insert),
                Err(PatchFault::BadIndex(_))
            ));
        }
        assert!(array_index(b"99999999999999999999999", 5, Place::Insert).is_err());
    }

    #[test]
    fn prefixes() {
        let a: Vec<&[u8]> = vec![b"a"];
        let ab: Vec<&[u8]> = vec![b"a", b"b"];
        assert!(is_proper_prefix(&a, &ab));
        assert!(!is_proper_prefix(&ab, &ab));
        assert!(!is_proper_prefix(&ab, &a));
    }
}
