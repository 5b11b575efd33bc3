//! Reads by a parsed path: every value a wildcard path matches
//! ([`Doc::each_match`], [`Doc::find_all`]), and reads of one value by a
//! [`Compiled`](crate::path::Compiled) path ([`Doc::find_compiled`]).
//!
//! # Algorithm
//!
//! `each_match` walks the document once, depth first, following the path's
//! segments from the base cursor:
//!
//! - a key or index steps to one child, as in `find`; where it does not
//!   match (a missing key, an index out of range, a container of the other
//!   kind, a scalar) that branch ends silently;
//! - a wildcard opens the children of the container it meets (`[*]` the
//!   elements of an array, `.*` the members of an object without the later
//!   occurrences of a repeated key: the first occurrence wins, as in every
//!   read) and pushes them as a frame on an explicit stack; the walk takes
//!   them one at a time and resolves the rest of the path from each.
//!
//! The children of a container come in document order and the subtrees of
//! siblings do not overlap, so depth-first order is document order. Only
//! wildcards push frames, so the stack is no deeper than the number of
//! wildcards in the path (nor than the document); nothing recurses, so a long
//! path cannot overflow the thread's stack.
//!
//! Lookups before the first wildcard go through `step`, which uses the child
//! tables of large containers like every single read. Lookups after it touch
//! each container once per call, so they scan its members (or skip to its
//! element) directly and leave the tables alone: marking or building a table
//! for each of a hundred objects read once would cost more than the scans.
//! (The scan compares keys itself rather than through `field`, whose table
//! bookkeeping it avoids; it relies only on the child-walking helpers.)
//! What a key's comparisons need that depends on the key alone (its words,
//! whether it is plain) is prepared once per call, not once per object.

use super::key::{word_of, MediumWords, PlainKey, ShortWord};
use super::{AnyKey, ArrayItems, Cursor, DistinctItems, Doc, KeyMatcher, MemberTest, Plain};
use crate::error::{AccessError, JsonType};
use crate::path::{segments, wildcard_error, Compiled, Segment};
use smallvec::SmallVec;

/// The children a wildcard opened. Large on purpose (the keys seen so far
/// of a small object live inline): frames sit in one `Vec` for the whole
/// walk, where boxing would allocate for every object `.*` opens.
#[allow(clippy::large_enum_variant)]
enum Open<'a> {
    Elements(ArrayItems<'a>),
    Members(DistinctItems<'a>),
}

impl Open<'_> {
    #[inline]
    fn next(&mut self) -> Option<Result<Cursor, AccessError>> {
        match self {
            Open::Elements(items) => items.next().map(Ok),
            Open::Members(items) => items.next().map(|m| m.map(|(_, _, c)| c)),
        }
    }
}

/// An open wildcard: its children still to visit, and the index of the
/// segment that follows it.
struct Frame<'a> {
    children: Open<'a>,
    rest: usize,
}

/// A parsed path: segments with their offsets. Paths are short; eight
/// segments live on the stack.
type Parsed<'p> = SmallVec<[(usize, Segment<'p>); 8]>;

/// A key segment after the first wildcard, prepared once per call: its
/// matcher and, for a plain key of up to 15 bytes, the words
/// [`Doc::short_member`] (up to seven bytes) or [`Doc::medium_member`]
/// (eight to fifteen) tests members with.
struct Key<'i, 'k> {
    m: KeyMatcher<'i, 'k>,
    words: Option<PlainKey>,
}

impl<'i, 'k> Key<'i, 'k> {
    fn new(m: KeyMatcher<'i, 'k>) -> Self {
        let words = if m.is_short() {
            Some(PlainKey::Short(ShortWord::of_word(
                word_of(m.key),
                m.key.len(),
            )))
        } else {
            // A plain key of 8 to 15 bytes (`screen_name`, `created_at`):
            // two word compares from the quote, as `Doc::field` makes;
            // `None` for longer or other keys.
            PlainKey::new(m.key)
        };
        Key { m, words }
    }
}

/// The first allocation for the matches: most wildcard reads find a few
/// dozen values, and growing from four costs more than the walk of a short
/// array.
const MATCHES_CAPACITY: usize = 32;

fn parse(path: &str) -> Result<Parsed<'_>, AccessError> {
    segments(path).collect()
}

impl<'a> Doc<'a> {
    /// Every value `path` matches from `at`, in document order (see the
    /// module docs); a path without wildcards gives its value or nothing.
    /// `PathSyntax` for a malformed path, `Decode` for an undecodable key met
    /// by `.*` in a lazy document.
    pub fn find_all(&self, at: Cursor, path: &str) -> Result<Vec<Cursor>, AccessError> {
        let segs = parse(path)?;
        let mut out = Vec::with_capacity(MATCHES_CAPACITY);
        self.each_match(at, &segs, |c| {
            out.push(c);
            true
        })?;
        Ok(out)
    }

    /// [`Self::find_all`] for a compiled path.
    pub fn find_all_compiled(
        &self,
        at: Cursor,
        path: &Compiled,
    ) -> Result<Vec<Cursor>, AccessError> {
        let mut out = Vec::with_capacity(MATCHES_CAPACITY);
        self.each_match(at, path.segments(), |c| {
            out.push(c);
            true
        })?;
        Ok(out)
    }

    /// [`Self::find`] for a compiled path: its one value, `NotFound` when it
    /// names nothing, `PathSyntax` when it has a wildcard.
    pub fn find_compiled(&self, at: Cursor, path: &Compiled) -> Result<Cursor, AccessError> {
        if let Some(off) = path.wildcard() {
            return Err(wildcard_error(off));
        }
        let mut cur = at;
        for (off, seg) in path.segments() {
            cur = self
                .step(cur, seg)
                .ok_or(AccessError::NotFound { at: *off })?;
        }
        Ok(cur)
    }

    /// Call `f` with every value the segments `segs` (as [`segments`] gives
    /// them) match from `at`, in document order, until `f` returns false.
    pub fn each_match(
        &self,
        at: Cursor,
        segs: &[(usize, Segment<'_>)],
        mut f: impl FnMut(Cursor) -> bool,
    ) -> Result<(), AccessError> {
        let first_wildcard = segs
            .iter()
            .position(|(_, s)| s.is_wildcard())
            .unwrap_or(segs.len());
        // The matchers of the keys after the first wildcard.
        let matchers: SmallVec<[Option<Key<'_, '_>>; 8]> = segs
            .iter()
            .enumerate()
            .map(|(i, (_, s))| match s {
                Segment::Key(k) if i > first_wildcard => {
                    Some(Key::new(KeyMatcher::new(self.input, self.index.lazy, k)))
                }
                _ => None,
            })
            .collect();
        // Past the last wildcard, a path is a chain of steps: the children
        // of the last wildcard's container are followed in a plain loop,
        // without a frame per child.
        let last_wildcard = segs.iter().rposition(|(_, s)| s.is_wildcard());
        let mut stack: Vec<Frame<'a>> = Vec::new();
        // The value to follow the path from, and the index of its next segment.
        let mut next = Some((at, 0));
        loop {
            if let Some((mut c, mut i)) = next.take() {
                loop {
                    let Some((_, seg)) = segs.get(i) else {
                        if !f(c) {
                            return Ok(());
                        }
                        break;
                    };
                    i += 1;
                    let mut children = match seg {
                        Segment::AnyIndex => match self.type_of(c) {
                            // The last wildcard, a key next: only objects.
                            JsonType::Array
                                if Some(i - 1) == last_wildcard
                                    && matches!(matchers.get(i), Some(Some(_))) =>
                            {
                                let (rest, keys) = (&segs[i..], &matchers[i..]);
                                if !self.object_elements(c, |e| match self.follow(e, rest, keys) {
                                    Some(v) => f(v),
                                    None => true,
                                }) {
                                    return Ok(());
                                }
                                break;
                            }
                            JsonType::Array => Open::Elements(self.array_items(c)?),
                            _ => break,
                        },
                        Segment::AnyKey => match self.type_of(c) {
                            JsonType::Object => Open::Members(self.distinct_items(c)?),
                            _ => break,
                        },
                        seg => {
                            let stepped = match &matchers[i - 1] {
                                Some(m) => self.member_once(c, m),
                                None if i <= first_wildcard => self.step(c, seg),
                                None => self.step_once(c, seg),
                            };
                            match stepped {
                                Some(n) => {
                                    c = n;
                                    continue;
                                }
                                None => break,
                            }
                        }
                    };
                    if Some(i - 1) == last_wildcard {
                        // The last wildcard: what follows it has none.
                        while let Some(child) = children.next() {
                            if let Some(v) = self.follow(child?, &segs[i..], &matchers[i..]) {
                                if !f(v) {
                                    return Ok(());
                                }
                            }
                        }
                        break;
                    }
                    stack.push(Frame { children, rest: i });
                    break;
                }
            }
            let Some(top) = stack.last_mut() else {
                return Ok(());
            };
            match top.children.next() {
                Some(child) => next = Some((child?, top.rest)),
                None => {
                    stack.pop();
                }
            }
        }
    }

    /// The value that the segments `segs` (after the last wildcard: keys
    /// and indices only, each key with its matcher in `matchers`) name
    /// from `c`, visited once: `None` where a step does not match.
    #[inline(always)]
    fn follow(
        &self,
        mut c: Cursor,
        segs: &[(usize, Segment<'_>)],
        matchers: &[Option<Key<'_, '_>>],
    ) -> Option<Cursor> {
        for ((_, seg), m) in segs.iter().zip(matchers) {
            c = match m {
                Some(m) => self.member_once(c, m)?,
                None => self.step_once(c, seg)?,
            };
        }
        Some(c)
    }

    /// The value of the member of `c` whose key `m` matches (`None` when
    /// `c` is not an object or has no such member), by a walk over its
    /// members: an object a wildcard reaches is read once, too few times
    /// to repay a child table.
    #[inline(always)]
    fn member_once(&self, c: Cursor, key: &Key<'_, '_>) -> Option<Cursor> {
        if self.type_of(c) != JsonType::Object {
            return None;
        }
        let m = &key.m;
        match &key.words {
            Some(PlainKey::Short(w)) => self.short_member(c, w, m.key),
            Some(PlainKey::Medium(w)) => self.medium_member(c, w, m.key),
            None => self.member_walk(c, AnyKey(m)),
        }
    }

    /// Call `f` with every element of array `c` that is an object, in
    /// order, until it returns false (then false). What follows `[*]` is a
    /// key, so other elements match nothing: they are skipped by the kind
    /// of their first structural (a container jumps past its closer, a
    /// string is one structural, a scalar none of its own), without making
    /// a cursor for each.
    #[inline(never)]
    fn object_elements(&self, c: Cursor, mut f: impl FnMut(Cursor) -> bool) -> bool {
        let containers = &self.index.containers[..];
        let Some(close) = containers.get(c.ord as usize).map(|t| t.close as usize) else {
            return true;
        };
        // Every element's first structural lies before the closer.
        let Some(s) = self.s().get(..close) else {
            return true;
        };
        let mut k = c.sidx as usize + 1;
        let mut ord = c.ord + 1;
        while let Some(&p) = s.get(k) {
            let b = self.input.get(p as usize).copied().unwrap_or(b' ');
            if b | 0x20 == b'{' {
                let Some(ct) = containers.get(ord as usize) else {
                    break;
                };
                // An object starts at its structural (only whitespace
                // precedes it).
                if b == b'{'
                    && !f(Cursor {
                        start: p,
                        sidx: k as u32,
                        ord,
                    })
                {
                    return false;
                }
                k = ct.close as usize + 2;
                ord = ct.next;
            } else {
                // (PGO builds compile this as a branch already: the empty
                // block `skip_kind` needs measured no gain here.)
                k += 1 + usize::from(b == b'"');
            }
        }
        true
    }

    /// [`Self::member_walk`] for a short plain key (its words `w`): the
    /// walk with the key's words in registers, as [`Doc::field`]'s (a
    /// member they cannot tell, an escape or the end of the input near, is
    /// compared by its body, out of the loop).
    #[inline(never)]
    fn short_member(&self, c: Cursor, w: &ShortWord, key: &[u8]) -> Option<Cursor> {
        self.walk_members(c, Plain(w, key)).1
    }

    /// [`Self::short_member`] for a plain key of 8 to 15 bytes (its words
    /// `w`: the first eight bytes, then the word that ends with the
    /// closing quote), rather than [`Self::member_walk`] with the general
    /// matcher, which tests each member through its checked reads and its
    /// branches on the key's kind.
    #[inline(never)]
    fn medium_member(&self, c: Cursor, w: &MediumWords, key: &[u8]) -> Option<Cursor> {
        self.walk_members(c, Plain(w, key)).1
    }

    /// The first member of object `c` whose key passes `test`: its value.
    ///
    /// [`Doc::walk_members`], the walk [`Doc::field`] makes, out of line:
    /// the loop then holds its state in registers (inlined into
    /// [`Self::each_match`] it shared them with the whole walk and spilled
    /// half of it, ~50 instructions a member).
    #[inline(never)]
    fn member_walk(&self, c: Cursor, test: impl MemberTest) -> Option<Cursor> {
        self.walk_members(c, test).1
    }

    /// `step` for a container visited once: a scan, no child table. (Keys
    /// do not come here: `each_match` walks the members itself
    /// ([`Self::member_once`]), with the key's matcher prepared once.)
    #[inline]
    fn step_once(&self, c: Cursor, seg: &Segment<'_>) -> Option<Cursor> {
        match (self.type_of(c), seg) {
            (JsonType::Array, Segment::Index(i)) => self.element_scan(c, *i),
            _ => self.step(c, seg),
        }
    }

    /// Element `i` of array `c` (negative counts from the end) by skipping
    /// the ones before it.
    fn element_scan(&self, c: Cursor, i: i64) -> Option<Cursor> {
        let len = self.len(c).ok()? as i64;
        let i = if i < 0 { i.checked_add(len)? } else { i };
        if i < 0 || i >= len {
            return None;
        }
        self.array_items(c).ok()?.nth(i as usize)
    }
}
