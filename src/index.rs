//! Stage 2: grammar validation and the container table.
//!
//! Stage 1 ([`crate::scan`]) leaves the offsets of every structural character
//! and opening quote. Stage 2 walks that list once with a small state machine
//! (expect value / key / colon / comma-or-close, and a depth stack) and:
//!
//! - checks the grammar: every gap between two structurals must be
//!   whitespace, except where a scalar (number, `true`, `false`, `null`) may
//!   stand; in strict mode each scalar token is checked too;
//! - records, for every container, its matching closer, the ordinal that
//!   follows all of its descendants, and its child count, in a table indexed
//!   by container ordinal (document order of the openers). With it, skipping a
//!   container is O(1) and `len` is O(1).
//!
//! Strict mode also checks what stage 1 collected on the side: every escape
//! sequence (with surrogate pairing), the first control byte inside a string,
//! and, only if any byte was >= 0x80, UTF-8 over the whole input. When
//! several errors exist, the one at the smallest offset is reported.
//!
//! Strings are not read here: a string ends at the last `"` before the next
//! structural (see [`string_close`]), so a 1 MB base64 string costs nothing
//! in stage 2.

use crate::decode::number::{check_scalar, scalar_end};
use crate::decode::string::check_escape;
use crate::doc::ChildTable;
use crate::error::{Error, ErrorKind};
use crate::scan::{self, Scan};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Parse options.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Check only structure and depth; value errors surface when read.
    pub lazy: bool,
    /// Maximum container nesting; deeper input is `DepthExceeded`.
    pub max_depth: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            lazy: false,
            max_depth: 1024,
        }
    }
}

/// One container (object or array) of the document.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Container {
    /// Index in the structurals of the matching `}` or `]`.
    pub close: u32,
    /// The ordinal following this container's last descendant.
    pub next: u32,
    /// Number of children (members or elements).
    pub len: u32,
}

/// Where a walk over a container's children stands: child number `i`, whose
/// value (or, in objects, key) begins at structural index `k`; `ord` is the
/// ordinal of the first container at or after it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ChildPos {
    pub container: u32,
    pub i: u32,
    pub k: u32,
    pub ord: u32,
}

/// The structural index of one document. It does not hold the input: pair it
/// with the same bytes in a [`crate::Doc`].
#[derive(Debug)]
pub struct Index {
    /// Offsets of structurals and opening quotes, then `input.len()`.
    pub(crate) structurals: Vec<u32>,
    pub(crate) containers: Vec<Container>,
    pub(crate) lazy: bool,
    /// Whether the input holds bytes >= 0x80 (strings then need a UTF-8 check
    /// on read in lazy mode).
    pub(crate) non_ascii: bool,
    /// Child tables of large containers, built on first lookup (see `doc`).
    pub(crate) tables: Mutex<HashMap<u32, Arc<ChildTable>>>,
}

#[inline]
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Eight spaces, the unit of indentation skipping.
const SPACES: u64 = u64::from_le_bytes([b' '; 8]);

/// Eight bytes at `input[p..p + 8]`, if they exist.
#[inline(always)]
fn load8(input: &[u8], p: usize) -> Option<u64> {
    let bytes: [u8; 8] = input.get(p..p + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// The first non-whitespace byte at or after `p` (or `input.len()`).
///
/// Indentation is runs of spaces, so eight bytes are compared with eight
/// spaces at once; the first byte that is not a space ends the step, and is
/// either other whitespace (a newline: step over it and go on) or the answer.
#[inline]
pub(crate) fn skip_ws(input: &[u8], mut p: usize) -> usize {
    loop {
        match load8(input, p) {
            Some(w) => {
                let x = w ^ SPACES;
                if x == 0 {
                    p += 8;
                    continue;
                }
                p += (x.trailing_zeros() / 8) as usize;
            }
            None => {
                while p < input.len() && is_ws(input[p]) {
                    p += 1;
                }
                return p;
            }
        }
        // `input[p]` exists and is not a space.
        if !is_ws(input[p]) {
            return p;
        }
        p += 1;
    }
}

/// The end (exclusive) of the token that ends before `end`, trailing
/// whitespace removed. Steps back eight spaces at a time, as [`skip_ws`].
#[inline]
pub(crate) fn trim_end(input: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && is_ws(input[end - 1]) {
        end -= 1;
        if end >= start + 8 {
            if let Some(w) = load8(input, end - 8) {
                let x = w ^ SPACES;
                end -= (x.leading_zeros() / 8) as usize;
            }
        }
    }
    end
}

/// The closing quote of the string whose opening quote is structural `k`.
///
/// Stage 1 guarantees there is no backslash and no unescaped quote outside
/// strings, so between a string's closing quote and the next structural
/// there is no `"` at all: stepping back from the next structural over
/// whitespace lands on the closing quote, or the input has garbage after the
/// string (`None`).
#[inline(always)]
pub(crate) fn string_close(input: &[u8], s: &[u32], k: usize) -> Option<usize> {
    let open = s[k] as usize;
    let next = s[k + 1] as usize;
    // Usually (keys, and values before `,`) the quote is right there.
    if next > open + 1 && input[next - 1] == b'"' {
        return Some(next - 1);
    }
    string_close_after_ws(input, open, next)
}

/// [`string_close`] when whitespace (or garbage) precedes the next structural.
#[inline(never)]
fn string_close_after_ws(input: &[u8], open: usize, next: usize) -> Option<usize> {
    let end = trim_end(input, open + 1, next);
    if end > open + 1 && input[end - 1] == b'"' {
        Some(end - 1)
    } else {
        None
    }
}

/// Cold path: the offset of the first byte after the string opened at
/// `open` that is neither part of the string nor whitespace.
#[cold]
fn after_string_garbage(input: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    while i < input.len() {
        match input[i] {
            b'\\' => i += 2,
            b'"' => return skip_ws(input, i + 1),
            _ => i += 1,
        }
    }
    input.len()
}

#[derive(Clone, Copy)]
struct Frame {
    ord: u32,
    object: bool,
    count: u32,
}

/// The frame standing for "outside any container".
const TOP: Frame = Frame {
    ord: u32::MAX,
    object: false,
    count: 0,
};

impl Index {
    /// Scan and (in strict mode) fully validate `input`.
    pub fn build(input: &[u8], opts: &Options) -> Result<Index, Error> {
        let mut scan = Scan::default();
        scan::scan(input, &mut scan)?;
        let Scan {
            structurals,
            escapes,
            first_control,
            non_ascii,
        } = scan;
        let walked = walk(input, &structurals, opts);
        let containers = if opts.lazy {
            walked?
        } else {
            // Report whichever error comes first in the input, as a
            // left-to-right parser would.
            match (
                walked,
                check_strings(input, &escapes, first_control, non_ascii),
            ) {
                (Ok(c), Ok(())) => c,
                (Err(a), Err(b)) => return Err(min_err(Some(a), b)),
                (Err(e), Ok(())) | (Ok(_), Err(e)) => return Err(e),
            }
        };
        let mut index = Index {
            structurals,
            containers,
            lazy: opts.lazy,
            non_ascii,
            tables: Mutex::new(HashMap::new()),
        };
        index.structurals.shrink_to_fit();
        index.containers.shrink_to_fit();
        Ok(index)
    }

    /// Bytes of heap memory the index holds.
    pub fn heap_bytes(&self) -> usize {
        self.structurals.capacity() * 4
            + self.containers.capacity() * std::mem::size_of::<Container>()
    }

    /// Whether the document was parsed with `lazy`.
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }
}

/// Strict checks of string contents from stage 1's side outputs; reports the
/// error at the smallest offset.
fn check_strings(
    input: &[u8],
    escapes: &[u32],
    first_control: Option<u32>,
    non_ascii: bool,
) -> Result<(), Error> {
    let mut worst: Option<Error> =
        first_control.map(|o| Error::new(ErrorKind::ControlCharacter, o as usize));
    let mut covered = 0usize;
    for &e in escapes {
        let e = e as usize;
        if e < covered {
            continue; // the second half of a surrogate pair already checked
        }
        match check_escape(input, e) {
            Ok(n) => covered = e + n,
            Err(err) => {
                worst = Some(min_err(worst, err));
                break;
            }
        }
    }
    if non_ascii {
        if let Err(e) = simdutf8::compat::from_utf8(input) {
            worst = Some(min_err(
                worst,
                Error::new(ErrorKind::InvalidUtf8, e.valid_up_to()),
            ));
        }
    }
    match worst {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn min_err(a: Option<Error>, b: Error) -> Error {
    match a {
        Some(a) if a.offset <= b.offset => a,
        _ => b,
    }
}

/// The first non-whitespace byte at or after `p`, knowing that a structural
/// sits at `next` (so the answer is at most `next`): most gaps are empty.
#[inline(always)]
fn gap_end(input: &[u8], p: usize, next: usize) -> usize {
    if p == next {
        return p;
    }
    skip_ws(input, p)
}

/// The stage-2 state machine. Returns the container table.
///
/// Each step of the outer loop reads one value whose first byte is `q` (the
/// first non-whitespace byte after the previous structural; every gap is
/// measured exactly once) and whose first structural candidate is `s[k]`:
/// `q < s[k]` means a scalar, else `input[s[k]]` says which value it is.
/// The inner loop then consumes the terminators after the value (`,` or
/// closers) until the next value begins.
fn walk(input: &[u8], s: &[u32], opts: &Options) -> Result<Vec<Container>, Error> {
    let n = input.len();
    let last = s.len() - 1; // the sentinel
    let strict = !opts.lazy;
    // A modest first guess; containers are far rarer than structurals.
    let mut containers: Vec<Container> = Vec::with_capacity(s.len() / 16 + 1);
    // Parents of the current container; `cur` is the innermost open one.
    let mut stack: Vec<Frame> = Vec::new();
    let mut cur = TOP;
    let err = |kind, at: usize| Err(Error::new(kind, at));

    let mut k = 0usize;
    let mut q = skip_ws(input, 0);
    if q == n {
        return err(ErrorKind::Empty, n);
    }
    'value: loop {
        // --- a value starting at byte q ---
        let sk = s[k] as usize;
        if q < sk {
            // A scalar token between q and the next structural. Nothing
            // but whitespace may follow the token; any failure takes the
            // cold path, which reports the error.
            if strict {
                match scalar_end(input, q) {
                    Some(e) if gap_end(input, e, sk) == sk => {}
                    _ => return Err(scalar_gap_error(input, q, sk, cur)),
                }
            }
        } else if k == last {
            return err(ErrorKind::UnexpectedEnd, n);
        } else {
            match input[sk] {
                b'"' => {
                    if string_close(input, s, k).is_none() {
                        let at = after_string_garbage(input, sk);
                        return err(after_value_error(cur, at == n), at);
                    }
                    k += 1;
                }
                open @ (b'{' | b'[') => {
                    if stack.len() >= opts.max_depth {
                        return err(ErrorKind::DepthExceeded, sk);
                    }
                    stack.push(cur);
                    let object = open == b'{';
                    cur = Frame {
                        ord: containers.len() as u32,
                        object,
                        count: 0,
                    };
                    containers.push(Container::default());
                    k += 1;
                    let next = s[k] as usize;
                    let g = gap_end(input, sk + 1, next);
                    let close = if object { b'}' } else { b']' };
                    if g == next && k < last && input[next] == close {
                        // Empty container.
                        k = close_container(input, s, k, &mut cur, &mut stack, &mut containers)?;
                    } else {
                        if object {
                            k = expect_key(input, s, k, g, last)?;
                            q = gap_end(input, s[k - 1] as usize + 1, s[k] as usize);
                        } else {
                            q = g;
                        }
                        continue 'value;
                    }
                }
                _ => return err(ErrorKind::ExpectedValue, sk),
            }
        }
        // --- after a value: S[k] is the terminator, gap already checked ---
        loop {
            if cur.ord == u32::MAX {
                if k != last {
                    return err(ErrorKind::TrailingContent, s[k] as usize);
                }
                return Ok(containers);
            }
            cur.count += 1;
            if k == last {
                return err(ErrorKind::UnexpectedEnd, n);
            }
            let sk = s[k] as usize;
            match (input[sk], cur.object) {
                (b',', false) => {
                    k += 1;
                    q = gap_end(input, sk + 1, s[k] as usize);
                    continue 'value;
                }
                (b',', true) => {
                    k += 1;
                    let g = gap_end(input, sk + 1, s[k] as usize);
                    k = expect_key(input, s, k, g, last)?;
                    q = gap_end(input, s[k - 1] as usize + 1, s[k] as usize);
                    continue 'value;
                }
                (b']', false) | (b'}', true) => {
                    k = close_container(input, s, k, &mut cur, &mut stack, &mut containers)?;
                }
                _ => return err(after_value_error(cur, false), sk),
            }
        }
    }
}

/// Cold path: the error for a scalar gap `input[q..sk]` that failed
/// [`check_scalar`] as a whole: either the first whitespace-delimited token
/// is bad, or something follows it.
#[cold]
#[inline(never)]
fn scalar_gap_error(input: &[u8], q: usize, sk: usize, cur: Frame) -> Error {
    let mut end = q;
    while end < sk && !is_ws(input[end]) {
        end += 1;
    }
    if let Err(e) = check_scalar(&input[q..end], q) {
        return e;
    }
    Error::new(after_value_error(cur, false), gap_end(input, end, sk))
}

/// The error for an unexpected byte after a value inside `cur`.
fn after_value_error(cur: Frame, at_end: bool) -> ErrorKind {
    if at_end {
        ErrorKind::UnexpectedEnd
    } else if cur.ord == u32::MAX {
        ErrorKind::TrailingContent
    } else if cur.object {
        ErrorKind::ExpectedObjectCommaOrEnd
    } else {
        ErrorKind::ExpectedArrayCommaOrEnd
    }
}

/// Structural `k` (after `{` or `,`, whose gap ends at byte `g`) must be a
/// key string followed by `:`. Returns the structural index of the value's
/// first structural candidate (the one after the colon).
#[inline(always)]
fn expect_key(input: &[u8], s: &[u32], k: usize, g: usize, last: usize) -> Result<usize, Error> {
    let sk = s[k] as usize;
    if g != sk || k == last || input[sk] != b'"' {
        let kind = if g == input.len() {
            ErrorKind::UnexpectedEnd
        } else {
            ErrorKind::ExpectedKey
        };
        return Err(Error::new(kind, g));
    }
    if string_close(input, s, k).is_none() || k + 1 == last || input[s[k + 1] as usize] != b':' {
        let at = after_string_garbage(input, sk);
        let kind = if at == input.len() {
            ErrorKind::UnexpectedEnd
        } else {
            ErrorKind::ExpectedColon
        };
        return Err(Error::new(kind, at));
    }
    Ok(k + 2)
}

/// Close `cur` at structural `k`; returns the index of the structural after
/// it, with the gap up to it checked.
#[inline(always)]
fn close_container(
    input: &[u8],
    s: &[u32],
    k: usize,
    cur: &mut Frame,
    stack: &mut Vec<Frame>,
    containers: &mut [Container],
) -> Result<usize, Error> {
    let next = containers.len() as u32;
    containers[cur.ord as usize] = Container {
        close: k as u32,
        next,
        len: cur.count,
    };
    *cur = stack.pop().unwrap_or(TOP);
    let k = k + 1;
    let sk = s[k] as usize;
    let g = gap_end(input, s[k - 1] as usize + 1, sk);
    if g != sk {
        return Err(Error::new(after_value_error(*cur, false), g));
    }
    Ok(k)
}
