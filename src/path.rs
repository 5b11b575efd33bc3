//! Paths: dotted keys and indices, quoted keys, and RFC 6901 JSON Pointers.
//!
//! - `""` is the root.
//! - Dotted: `messages[2].content`, `[0].user.login`, `a.b[-1]` (a negative
//!   index counts from the end). A bare key is a non-empty run of bytes other
//!   than `.` and `[` (so `]`, `"`, spaces and non-ASCII are fine inside it:
//!   `a]b` is the key `a]b`).
//! - Quoted key: `["a.b"]`, a JSON string literal inside brackets (escapes
//!   allowed, including `\uXXXX` and surrogate pairs), for keys holding `.`,
//!   `[` or `"`, or the empty key `[""]`. Brackets may follow each other:
//!   `["a.b"]["c[d]"][1]`.
//! - JSON Pointer: a leading `/`; tokens split on `/`, `~1` is `/` and `~0`
//!   is `~`. A token that is a canonical non-negative integer indexes arrays
//!   and is a key for objects. `/` alone is the key `""`; `/a/` ends with the
//!   key `""`. The URI fragment form (`#/a`) is not special.
//! - Wildcards (dotted paths only): `[*]` is every element of an array,
//!   `.*` (or a leading `*`) every member value of an object:
//!   `messages[*].content`, `[*].user.login`, `tools[*].function.*`. The
//!   literal key `*` is written `["*"]`; in a JSON Pointer `/a/*` is the key
//!   `*` (RFC 6901 has no wildcards). Reads of one value reject wildcards;
//!   `Doc::find_all` walks them (see `doc/matches.rs`).
//!
//! Strictness (anything else is `AccessError::PathSyntax`):
//! - a `.` must be followed by a bare key: `.a`, `a.`, `a..b`, `a.[0]` are
//!   errors (write `a[0]`, `a[""]` for the empty key);
//! - after `]` comes `.`, `[` or the end: `a[0]b` is an error;
//! - an index is `-?(0|[1-9][0-9]*)`, the JSON integer grammar: no leading
//!   zeros (`[01]` is an error), no `+`, no spaces; `[-0]` is `[0]`; an index
//!   outside the i64 range is an error (never a panic);
//! - brackets hold an index or a double-quoted JSON string: `[]`, `[x]`,
//!   `['x']`, `[1`, `["a"` and an unterminated `["a` are errors;
//! - a quoted key follows JSON string rules (no raw control characters, only
//!   JSON escapes, no lone surrogates);
//! - in a JSON Pointer, `~` must be followed by `0` or `1`;
//! - a wildcard stands alone: `[*]` exactly (`[*`, `[**]`, `[*x]` are
//!   errors), and a bare key that begins with `*` is the wildcard `*`, which
//!   must be followed by `.`, `[` or the end (`a.*b`, `**` are errors; write
//!   `["*b"]`). A `*` later in a bare key is an ordinary byte (`a*` is the key
//!   `a*`).
//!
//! Offsets: every segment carries the byte offset where it starts in the
//! path: the first byte of a bare key, the `[` of a bracket, the first byte
//! of a pointer token (after its `/`). Syntax errors carry the offset of the
//! offending byte (`path.len()` when the path ends too early).
//!
//! # Algorithm
//!
//! A hand-written scanner over the path bytes with three states (start,
//! dotted, pointer), yielding one segment per call. Bare keys, pointer
//! tokens without `~` and quoted keys without `\` borrow from the path; only
//! unescaping allocates. The iterator is fused: after an error it ends.
//!
//! [`Compiled`] is a path parsed once: its text and its segments, owned, so
//! that reads repeated over many documents skip the scan.

use crate::decode::string::decode_str;
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
    /// `[*]`: every element of an array.
    AnyIndex,
    /// `.*` (or a leading `*`): every member value of an object.
    AnyKey,
}

impl Segment<'_> {
    /// Whether the segment is a wildcard (`[*]` or `.*`).
    #[inline]
    pub fn is_wildcard(&self) -> bool {
        matches!(self, Segment::AnyIndex | Segment::AnyKey)
    }

    /// The same segment owning its key bytes.
    pub fn into_owned(self) -> Segment<'static> {
        match self {
            Segment::Key(k) => Segment::Key(Cow::Owned(k.into_owned())),
            Segment::Token(t) => Segment::Token(Cow::Owned(t.into_owned())),
            Segment::Index(i) => Segment::Index(i),
            Segment::AnyIndex => Segment::AnyIndex,
            Segment::AnyKey => Segment::AnyKey,
        }
    }

    /// The same segment borrowing its key bytes from `self`.
    #[inline]
    pub fn borrowed(&self) -> Segment<'_> {
        match self {
            Segment::Key(k) => Segment::Key(Cow::Borrowed(k)),
            Segment::Token(t) => Segment::Token(Cow::Borrowed(t)),
            Segment::Index(i) => Segment::Index(*i),
            Segment::AnyIndex => Segment::AnyIndex,
            Segment::AnyKey => Segment::AnyKey,
        }
    }
}

/// The error of a read of one value given a wildcard path at offset `at`.
#[cold]
pub fn wildcard_error(at: usize) -> AccessError {
    AccessError::PathSyntax {
        at,
        reason: "a wildcard matches many values: read them with get_all",
    }
}

/// Iterate over the segments of `path`. Each item carries the byte offset of
/// the segment in the path (for error messages). Malformed paths yield
/// `AccessError::PathSyntax`.
pub fn segments(path: &str) -> Segments<'_> {
    Segments {
        path: path.as_bytes(),
        pos: 0,
        state: State::Start,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    Dotted,
    Pointer,
    Done,
}

/// The iterator returned by [`segments`].
#[derive(Debug, Clone)]
pub struct Segments<'p> {
    path: &'p [u8],
    pos: usize,
    state: State,
}

type Item<'p> = Result<(usize, Segment<'p>), AccessError>;

#[cold]
fn syntax(at: usize, reason: &'static str) -> AccessError {
    AccessError::PathSyntax { at, reason }
}

impl<'p> Iterator for Segments<'p> {
    type Item = Item<'p>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = match self.state {
            State::Done => return None,
            State::Start => match self.path.first() {
                None => {
                    self.state = State::Done;
                    return None;
                }
                Some(b'/') => {
                    self.state = State::Pointer;
                    self.pos = 1;
                    self.pointer_token()
                }
                Some(b'[') => {
                    self.state = State::Dotted;
                    self.bracket()
                }
                Some(b'.') => Err(syntax(0, "a path cannot start with '.'")),
                Some(b'*') => {
                    self.state = State::Dotted;
                    self.any_key()
                }
                Some(_) => {
                    self.state = State::Dotted;
                    Ok(self.bare_key())
                }
            },
            State::Pointer => {
                if self.pos > self.path.len() {
                    self.state = State::Done;
                    return None;
                }
                self.pointer_token()
            }
            State::Dotted => match self.path.get(self.pos) {
                None => {
                    self.state = State::Done;
                    return None;
                }
                Some(b'.') => {
                    self.pos += 1;
                    match self.path.get(self.pos) {
                        None | Some(b'.' | b'[') => {
                            Err(syntax(self.pos, "expected a key after '.'"))
                        }
                        Some(b'*') => self.any_key(),
                        Some(_) => Ok(self.bare_key()),
                    }
                }
                Some(b'[') => self.bracket(),
                Some(_) => Err(syntax(self.pos, "expected '.', '[' or the end of the path")),
            },
        };
        if item.is_err() {
            self.state = State::Done;
        }
        Some(item)
    }
}

impl<'p> Segments<'p> {
    /// A bare key starting at `pos` (known non-empty).
    fn bare_key(&mut self) -> (usize, Segment<'p>) {
        let start = self.pos;
        // Paths are short: a plain loop beats a memchr2 call here.
        let end = self.path[start..]
            .iter()
            .position(|&b| b == b'.' || b == b'[')
            .map_or(self.path.len(), |p| start + p);
        self.pos = end;
        (start, Segment::Key(Cow::Borrowed(&self.path[start..end])))
    }

    /// The wildcard `*` at `pos`, which must stand alone.
    fn any_key(&mut self) -> Item<'p> {
        let start = self.pos;
        self.pos += 1;
        match self.path.get(self.pos) {
            None | Some(b'.' | b'[') => Ok((start, Segment::AnyKey)),
            Some(_) => Err(syntax(
                self.pos,
                "a wildcard '*' must be followed by '.', '[' or the end (quote a key \
                 that begins with '*': [\"*a\"])",
            )),
        }
    }

    /// A JSON Pointer token starting at `pos` (just after a `/`).
    fn pointer_token(&mut self) -> Item<'p> {
        let start = self.pos;
        let rest = &self.path[start..];
        let end = start + memchr::memchr(b'/', rest).unwrap_or(rest.len());
        self.pos = end + 1;
        let tok = &self.path[start..end];
        if memchr::memchr(b'~', tok).is_none() {
            return Ok((start, Segment::Token(Cow::Borrowed(tok))));
        }
        let mut out = Vec::with_capacity(tok.len());
        let mut i = 0;
        while i < tok.len() {
            if tok[i] == b'~' {
                match tok.get(i + 1) {
                    Some(b'0') => out.push(b'~'),
                    Some(b'1') => out.push(b'/'),
                    _ => {
                        return Err(syntax(
                            start + i,
                            "'~' must be followed by '0' or '1' in a JSON Pointer",
                        ))
                    }
                }
                i += 2;
            } else {
                out.push(tok[i]);
                i += 1;
            }
        }
        Ok((start, Segment::Token(Cow::Owned(out))))
    }

    /// A bracketed index or quoted key; `path[pos]` is `[`.
    fn bracket(&mut self) -> Item<'p> {
        let open = self.pos;
        let p = open + 1;
        let seg = match self.path.get(p) {
            None => return Err(syntax(p, "unclosed '['")),
            Some(b'"') => self.quoted_key(p)?,
            Some(b'-' | b'0'..=b'9') => self.index(p)?,
            Some(b']') => return Err(syntax(p, "empty brackets")),
            Some(b'*') => match self.path.get(p + 1) {
                Some(b']') => {
                    self.pos = p + 2;
                    Segment::AnyIndex
                }
                _ => return Err(syntax(p + 1, "expected ']' after '[*'")),
            },
            Some(_) => return Err(syntax(p, "expected an index or a quoted key after '['")),
        };
        Ok((open, seg))
    }

    /// A JSON string literal whose opening quote is at `q`, then `]`.
    fn quoted_key(&mut self, q: usize) -> Result<Segment<'p>, AccessError> {
        let path = self.path;
        let mut j = q + 1;
        let close = loop {
            match memchr::memchr2(b'"', b'\\', &path[j.min(path.len())..]) {
                None => return Err(syntax(q, "unterminated quoted key")),
                Some(d) if path[j + d] == b'\\' => j += d + 2,
                Some(d) => break j + d,
            }
        };
        let body = &path[q + 1..close];
        let key = decode_str(body, q + 1).map_err(|e| syntax(e.offset, e.kind.message()))?;
        if path.get(close + 1) != Some(&b']') {
            return Err(syntax(close + 1, "expected ']' after a quoted key"));
        }
        self.pos = close + 2;
        Ok(Segment::Key(match key {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        }))
    }

    /// An index `-?(0|[1-9][0-9]*)` starting at `p`, then `]`.
    fn index(&mut self, p: usize) -> Result<Segment<'p>, AccessError> {
        let path = self.path;
        let neg = path[p] == b'-';
        let d0 = p + neg as usize;
        let mut i = d0;
        // Accumulate negatively so that i64::MIN fits.
        let mut v: i64 = 0;
        while let Some(&c) = path.get(i).filter(|c| c.is_ascii_digit()) {
            if i > d0 && path[d0] == b'0' {
                return Err(syntax(i, "leading zero in an index"));
            }
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_sub((c - b'0') as i64))
                .ok_or_else(|| syntax(d0, "index out of range"))?;
            i += 1;
        }
        if i == d0 {
            return Err(syntax(i, "expected digits after '-'"));
        }
        if path.get(i) != Some(&b']') {
            return Err(syntax(i, "expected ']' after an index"));
        }
        let v = if neg {
            v
        } else {
            v.checked_neg()
                .ok_or_else(|| syntax(d0, "index out of range"))?
        };
        self.pos = i + 1;
        Ok(Segment::Index(v))
    }
}

/// A path parsed once: its text and its segments (owned), for reads repeated
/// over many documents or threads. Immutable; equal when the texts are.
#[derive(Debug, Clone)]
pub struct Compiled {
    text: Box<str>,
    segs: Box<[(usize, Segment<'static>)]>,
    /// Offset of the first wildcard, if any.
    wildcard: Option<usize>,
}

impl Compiled {
    /// Parse `text`; a malformed path is `AccessError::PathSyntax`.
    pub fn new(text: &str) -> Result<Compiled, AccessError> {
        let segs = segments(text)
            .map(|s| s.map(|(off, seg)| (off, seg.into_owned())))
            .collect::<Result<Box<[_]>, _>>()?;
        let wildcard = segs.iter().find(|(_, s)| s.is_wildcard()).map(|&(o, _)| o);
        Ok(Compiled {
            text: text.into(),
            segs,
            wildcard,
        })
    }

    /// The path as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The segments, each with its byte offset in the text.
    pub fn segments(&self) -> &[(usize, Segment<'static>)] {
        &self.segs
    }

    /// The offset of the first wildcard, or `None` for a path naming at most
    /// one value.
    pub fn wildcard(&self) -> Option<usize> {
        self.wildcard
    }
}

impl PartialEq for Compiled {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Compiled {}

impl std::hash::Hash for Compiled {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Segment<'_> {
        Segment::Key(Cow::Borrowed(s.as_bytes()))
    }
    fn tok(s: &str) -> Segment<'_> {
        Segment::Token(Cow::Borrowed(s.as_bytes()))
    }

    fn all(path: &str) -> Result<Vec<(usize, Segment<'_>)>, AccessError> {
        segments(path).collect()
    }

    #[test]
    fn every_form() {
        use Segment::Index;
        let cases: &[(&str, &[(usize, Segment<'_>)])] = &[
            ("", &[]),
            ("a", &[(0, key("a"))]),
            ("model", &[(0, key("model"))]),
            (
                "messages[2].content",
                &[(0, key("messages")), (8, Index(2)), (12, key("content"))],
            ),
            (
                "[0].user.login",
                &[(0, Index(0)), (4, key("user")), (9, key("login"))],
            ),
            ("a.b[-1]", &[(0, key("a")), (2, key("b")), (3, Index(-1))]),
            (
                "[0][1][-2]",
                &[(0, Index(0)), (3, Index(1)), (6, Index(-2))],
            ),
            ("[-0]", &[(0, Index(0))]),
            ("[10]", &[(0, Index(10))]),
            ("[9223372036854775807]", &[(0, Index(i64::MAX))]),
            ("[-9223372036854775808]", &[(0, Index(i64::MIN))]),
            (r#"["a.b"]"#, &[(0, key("a.b"))]),
            (r#"[""]"#, &[(0, key(""))]),
            (
                r#"["a.b"]["c[d]"][1]"#,
                &[(0, key("a.b")), (7, key("c[d]")), (15, Index(1))],
            ),
            (
                r#"x["y"].z"#,
                &[(0, key("x")), (1, key("y")), (7, key("z"))],
            ),
            ("a]b.c\"d", &[(0, key("a]b")), (4, key("c\"d"))]),
            ("é.ü", &[(0, key("é")), (3, key("ü"))]),
            ("a b", &[(0, key("a b"))]),
            ("#/a", &[(0, key("#/a"))]),
            ("/", &[(1, tok(""))]),
            ("//", &[(1, tok("")), (2, tok(""))]),
            ("/a/", &[(1, tok("a")), (3, tok(""))]),
            (
                "/messages/2/content",
                &[(1, tok("messages")), (10, tok("2")), (12, tok("content"))],
            ),
            (
                "/a.b/c[d]/2",
                &[(1, tok("a.b")), (5, tok("c[d]")), (10, tok("2"))],
            ),
            ("/-", &[(1, tok("-"))]),
            // Wildcards.
            ("[*]", &[(0, Segment::AnyIndex)]),
            ("*", &[(0, Segment::AnyKey)]),
            ("a.*", &[(0, key("a")), (2, Segment::AnyKey)]),
            ("*.a", &[(0, Segment::AnyKey), (2, key("a"))]),
            ("*[0]", &[(0, Segment::AnyKey), (1, Index(0))]),
            ("[*][*]", &[(0, Segment::AnyIndex), (3, Segment::AnyIndex)]),
            (
                "a[*].b[-1]",
                &[
                    (0, key("a")),
                    (1, Segment::AnyIndex),
                    (5, key("b")),
                    (6, Index(-1)),
                ],
            ),
            (
                "tools[*].function.*",
                &[
                    (0, key("tools")),
                    (5, Segment::AnyIndex),
                    (9, key("function")),
                    (18, Segment::AnyKey),
                ],
            ),
            (r#"["*"]"#, &[(0, key("*"))]),
            (r#"a["*"]"#, &[(0, key("a")), (1, key("*"))]),
            ("a*", &[(0, key("a*"))]),
            ("a.b*c", &[(0, key("a")), (2, key("b*c"))]),
            ("/a/*", &[(1, tok("a")), (3, tok("*"))]),
            ("/*", &[(1, tok("*"))]),
        ];
        for &(path, want) in cases {
            assert_eq!(all(path).as_deref(), Ok(want), "{path:?}");
            // Nothing is allocated for these.
            for (_, seg) in all(path).unwrap() {
                if let Segment::Key(k) | Segment::Token(k) = seg {
                    assert!(matches!(k, Cow::Borrowed(_)), "{path:?}");
                }
            }
        }
    }

    #[test]
    fn unescaping() {
        let owned = |s: &str| Cow::<[u8]>::Owned(s.as_bytes().to_vec());
        let cases: &[(&str, Vec<(usize, Segment<'_>)>)] = &[
            (r#"["q\"k"]"#, vec![(0, Segment::Key(owned("q\"k")))]),
            (r#"["a\\b"]"#, vec![(0, Segment::Key(owned("a\\b")))]),
            (r#"["\u0061"]"#, vec![(0, Segment::Key(owned("a")))]),
            (
                r#"["\ud83d\ude00\n\/"]"#,
                vec![(0, Segment::Key(owned("😀\n/")))],
            ),
            (r#"["\""]"#, vec![(0, Segment::Key(owned("\"")))]),
            (r#"["a\"]"]"#, vec![(0, Segment::Key(owned("a\"]")))]),
            ("/~0~1", vec![(1, Segment::Token(owned("~/")))]),
            ("/~01", vec![(1, Segment::Token(owned("~1")))]),
            (
                "/a~1b/~0",
                vec![
                    (1, Segment::Token(owned("a/b"))),
                    (6, Segment::Token(owned("~"))),
                ],
            ),
        ];
        for (path, want) in cases {
            let got = all(path).unwrap();
            assert_eq!(&got, want, "{path:?}");
            // Cow equality ignores ownership: check it.
            if let (_, Segment::Key(k) | Segment::Token(k)) = &got[0] {
                assert!(matches!(k, Cow::Owned(_)), "{path:?}");
            }
        }
    }

    #[test]
    fn compiled() {
        for path in [
            "",
            "a",
            "a.b[2]",
            "[*].user.login",
            r#"["q\"k"].*"#,
            "/a~1b/0",
        ] {
            let c = Compiled::new(path).unwrap();
            assert_eq!(c.text(), path);
            let want = all(path).unwrap();
            assert_eq!(c.segments().len(), want.len(), "{path:?}");
            for ((o1, s1), (o2, s2)) in c.segments().iter().zip(&want) {
                assert_eq!((o1, &s1.borrowed()), (o2, s2), "{path:?}");
            }
            assert_eq!(
                c.wildcard(),
                want.iter().find(|(_, s)| s.is_wildcard()).map(|&(o, _)| o)
            );
            assert_eq!(c, Compiled::new(path).unwrap());
        }
        assert_eq!(Compiled::new("a.*.b").unwrap().wildcard(), Some(2));
        assert_ne!(
            Compiled::new("a").unwrap(),
            Compiled::new(r#"["a"]"#).unwrap()
        );
        assert!(matches!(
            Compiled::new("a..b"),
            Err(AccessError::PathSyntax { at: 2, .. })
        ));
    }

    #[test]
    fn syntax_errors() {
        let cases: &[(&str, usize)] = &[
            (".a", 0),
            ("a.", 2),
            ("a..b", 2),
            ("a.[0]", 2),
            ("a[", 2),
            ("[", 1),
            ("a[x]", 2),
            ("a['x']", 2),
            ("a[]", 2),
            ("a[1", 3),
            ("a[1x]", 3),
            ("a[ 1]", 2),
            ("a[1 ]", 3),
            ("a[+1]", 2),
            ("a[-]", 3),
            ("a[--1]", 3),
            ("[01]", 2),
            ("[-01]", 3),
            ("[00]", 2),
            ("[9223372036854775808]", 1),
            ("[-9223372036854775809]", 2),
            ("[99999999999999999999999999999999]", 1),
            ("[0]x", 3),
            ("[0]]", 3),
            ("[0]\"a\"", 3),
            (r#"["a"x"#, 4),
            (r#"["a""#, 4),
            (r#"["a"]x"#, 5),
            (r#"["abc"#, 1),
            (r#"["abc\"]"#, 1),
            (r#"["a\"#, 1),
            (r#"["a\x"]"#, 3),
            (r#"["\u12"]"#, 3), // at the `u`, as in JSON text
            (r#"["\ud800"]"#, 2),
            (r#"["\udc00"]"#, 2),
            ("[\"a\u{1}\"]", 3),
            ("a[\"\"", 4),
            ("/~", 1),
            ("/a~2", 2),
            ("/ok/x~", 5),
            ("a[*", 3),
            ("[*", 2),
            ("[**]", 2),
            ("[*x]", 2),
            ("[*]x", 3),
            ("a.*b", 3),
            ("*a", 1),
            ("**", 1),
            ("a.**", 3),
            ("a.*.", 4),
            ("[ *]", 1),
        ];
        for &(path, at) in cases {
            let mut it = segments(path);
            let err = loop {
                match it.next() {
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => break e,
                    None => panic!("{path:?}: no error"),
                }
            };
            match err {
                AccessError::PathSyntax { at: got, .. } => assert_eq!(got, at, "{path:?}"),
                other => panic!("{path:?}: {other:?}"),
            }
            // Fused after an error.
            assert!(it.next().is_none(), "{path:?}");
        }
    }
}
