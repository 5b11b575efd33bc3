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
//! several errors exist, the one at the smallest offset is reported, at the
//! offset Python's `json` reports: stage 1's own errors (a string that
//! never closes, a backslash outside strings) are found over the whole
//! input first, so on that cold path the prefix before them is walked
//! again to find an earlier error (see `stage1_error`).
//!
//! [`validate`] and strict [`Index::build`] first try a faster walk
//! (`tokens`) over a token index in which stage 1 also marks where each
//! number and literal starts, so that no gap needs measuring; it only ever
//! answers "valid" (the build then records the same container table and
//! keeps every token it passes but the scalar tokens, which leaves exactly
//! the structurals of the exact walk), and anything else goes to the exact
//! walk described here. Lazy builds take the exact walk directly.
//!
//! Strings are not read here: a string ends at the last `"` before the next
//! structural (see `crate::lex::string_close`), so a 1 MB base64 string costs nothing
//! in stage 2.
//!
//! # Cost
//!
//! The walk costs a few nanoseconds per structural, so the per-structural
//! work is kept small:
//! - each gap is measured once (`crate::lex::gap_end`): empty, one non-space byte (a
//!   scalar) and one space (after `:`) are tested directly, anything else
//!   (a newline and indentation) takes 16 bytes per SSE2 step;
//! - a value is dispatched on its structural (`"`, `{`, `[`, or a scalar
//!   in the gap before a `,` or closer), which is known before the gap's
//!   end, and the gap check then nearly always passes;
//! - keys: one two-byte compare finds `":` in the common case;
//! - scalars: a 32-byte digit mask validates plain integers and decimals
//!   without a loop ([`scalar_end`]); the full grammar runs otherwise, and
//!   any failure goes to a cold path that recomputes the exact error;
//! - the frame of the innermost container lives in locals; its kind also
//!   stands for the top level, so "after a value" is one match;
//! - allocation: the container table starts small and, if that was short,
//!   jumps to its upper bound (no repeated copying); spare capacity is
//!   returned only when it exceeds both 2 KiB and what is used.

use crate::decode::number::{check_scalar, literal_prefix_len, scalar_end};
use crate::decode::string::{check_escape, is_plain_unicode_escape};
use crate::error::{Error, ErrorKind};
use crate::lex::{gap_end, is_ws, skip_ws, string_close};
use crate::scan::{self, Scan};

mod tokens;

/// The token index of an eager decoder (only the Python edge's `loads` uses
/// it today).
#[cfg(feature = "python")]
pub(crate) use tokens::eager;
pub use tokens::returns::Returns;
#[cfg(test)]
pub(crate) use tokens::token_scan_runs;

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

/// The structural index of one document. It does not hold the input: pair it
/// with the same bytes in a [`crate::Doc`].
///
/// Invariant (every index is made by `Index::assemble` from a scan of one
/// input, and nothing changes it after): its structurals increase strictly.
/// A reader may rest memory safety on it even when the index is paired with
/// another input (`Doc::new` allows that misuse): from one bounds check of
/// a container's closer, the member walk knows every offset before it in
/// bounds (see `Doc::walk_members`).
#[derive(Debug)]
pub struct Index {
    /// Offsets of structurals and opening quotes, then `input.len()`;
    /// strictly increasing (see above).
    pub(crate) structurals: Vec<u32>,
    pub(crate) containers: Vec<Container>,
    pub(crate) lazy: bool,
    /// Whether the input holds bytes >= 0x80 (strings then need a UTF-8 check
    /// on read in lazy mode).
    pub(crate) non_ascii: bool,
    /// Whether any string holds a backslash escape (stage 1 found one).
    pub(crate) escaped: bool,
}

/// A dropped index's vectors are kept by its thread for the next build's
/// exact copies (see `tokens::recycle`): a parse-read-drop loop then
/// allocates and frees no index memory.
impl Drop for Index {
    #[inline]
    fn drop(&mut self) {
        tokens::recycle(&mut self.structurals, &mut self.containers);
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

/// What encloses a value: an array, an object, or nothing (the top level,
/// where only the end of input may follow).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Array,
    Object,
    Top,
}

/// Documents with at most this many structurals reserve the container
/// table's upper bound (two structurals per container) up front.
const SMALL: usize = 4096;

/// Spare index capacity below this many bytes is kept rather than returned
/// with a realloc.
const SHRINK_MIN: usize = 2 * 1024;

#[derive(Clone, Copy)]
struct Frame {
    ord: u32,
    kind: Kind,
    count: u32,
}

/// The parents of the current container: the first [`FrameStack::INLINE`]
/// levels live on the machine stack (no allocation for ordinary
/// documents), deeper ones in a vector.
struct FrameStack {
    inline: [Frame; FrameStack::INLINE],
    len: usize,
    spill: Vec<Frame>,
}

impl FrameStack {
    const INLINE: usize = 32;

    fn new() -> FrameStack {
        FrameStack {
            inline: [TOP; FrameStack::INLINE],
            len: 0,
            spill: Vec::new(),
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn push(&mut self, f: Frame) {
        if self.len < Self::INLINE {
            self.inline[self.len] = f;
        } else {
            self.spill.push(f);
        }
        self.len += 1;
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Frame> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        if self.len < Self::INLINE {
            Some(self.inline[self.len])
        } else {
            self.spill.pop()
        }
    }
}

/// The frame standing for "outside any container".
const TOP: Frame = Frame {
    ord: u32::MAX,
    kind: Kind::Top,
    count: 0,
};

impl Index {
    /// Scan and (in strict mode) fully validate `input`.
    pub fn build(input: &[u8], opts: &Options) -> Result<Index, Error> {
        Index::build_parts(input, opts, true, false).map(|(index, _)| index)
    }

    /// [`Index::build`], also returning stage 1's list of escape offsets
    /// (the backslashes that begin escape sequences, in order): `loads`
    /// learns from it which strings need unescaping without searching them.
    pub(crate) fn build_with_escapes(
        input: &[u8],
        opts: &Options,
    ) -> Result<(Index, Vec<u32>), Error> {
        Index::build_parts(input, opts, true, true)
    }

    /// The index, and stage 1's escape list if `escapes` is set (else the
    /// list may be empty: the token walk then does not copy it out).
    fn build_parts(
        input: &[u8],
        opts: &Options,
        check_scalars: bool,
        escapes: bool,
    ) -> Result<(Index, Vec<u32>), Error> {
        // Strict builds try the token walk first (see [`tokens::build`]):
        // it needs no gap measured, and answers only for valid input.
        if !opts.lazy && check_scalars {
            if let Some(b) = tokens::build(input, opts.max_depth, escapes) {
                let index =
                    Index::assemble(b.structurals, b.containers, false, b.non_ascii, b.escaped);
                return Ok((index, b.escapes));
            }
        }
        Index::exact_parts(input, opts, check_scalars)
    }

    /// The strict index of `input` from the token walk alone
    /// ([`tokens::build`]), or `None` wherever [`Index::build`] would go on
    /// to the exact walk (an error, nesting deeper than the token walk's
    /// stack, no token scan on this CPU). For [`crate::many`]'s line path:
    /// a line that is one valid document needs nothing more, anything else
    /// goes to its exact splitting. `lazy` only marks the index (a valid
    /// document reads the same either way); stage 1's escapes are copied
    /// out only with `escapes`.
    pub(crate) fn build_tokens(
        input: &[u8],
        max_depth: usize,
        lazy: bool,
        escapes: bool,
    ) -> Option<(Index, Vec<u32>)> {
        let b = tokens::build(input, max_depth, escapes)?;
        let index = Index::assemble(b.structurals, b.containers, lazy, b.non_ascii, b.escaped);
        Some((index, b.escapes))
    }

    /// [`Index::build_tokens`] of the first line of `input` (which begins
    /// with a non-whitespace byte), the line's end found by the token scan
    /// itself ([`tokens::build_line`]): `Ok(Some((index, escapes, end,
    /// newline)))` when `input[..newline]` is one valid document,
    /// `input[..end]` (without the line's trailing whitespace); `Ok(None)`
    /// when the line is not known to be one (where `build_tokens` of the
    /// line would give `None`); `Err(())` when there is no newline outside
    /// strings in `input` (the caller finds the line's end itself).
    #[allow(clippy::type_complexity, clippy::result_unit_err)]
    pub(crate) fn build_tokens_line(
        input: &[u8],
        max_depth: usize,
        lazy: bool,
        escapes: bool,
    ) -> Result<Option<(Index, Vec<u32>, usize, usize)>, ()> {
        match tokens::build_line(input, max_depth, escapes) {
            tokens::LineBuilt::Doc {
                built: b,
                end,
                newline,
            } => {
                let index =
                    Index::assemble(b.structurals, b.containers, lazy, b.non_ascii, b.escaped);
                Ok(Some((index, b.escapes, end, newline)))
            }
            tokens::LineBuilt::Rejected => Ok(None),
            tokens::LineBuilt::NoNewline => Err(()),
        }
    }

    /// [`Index::build_parts`] without the token walk: stage 1, then the
    /// exact walk, which also finds the first error.
    fn exact_parts(
        input: &[u8],
        opts: &Options,
        check_scalars: bool,
    ) -> Result<(Index, Vec<u32>), Error> {
        let mut scan = Scan::default();
        if let Err(e) = scan::scan(input, &mut scan) {
            return Err(reported(input, stage1_error(input, e, opts)));
        }
        Index::from_scan(input, scan, opts, check_scalars)
    }

    /// Stage 2 over a stage-1 result that the caller produced for exactly
    /// `input` (see [`crate::many`], which scans many documents at once and
    /// hands each its own slice of the structurals).
    pub(crate) fn from_scan(
        input: &[u8],
        scan: Scan,
        opts: &Options,
        check_scalars: bool,
    ) -> Result<(Index, Vec<u32>), Error> {
        let Scan {
            structurals,
            escapes,
            first_control,
            non_ascii,
            escapes_valid: _,
            utf8_valid: _,
        } = scan;
        let walk_opts = Options {
            lazy: opts.lazy || !check_scalars,
            ..*opts
        };
        let walked = walk::<true>(input, &structurals, &walk_opts);
        let containers = if opts.lazy {
            walked.map_err(|e| reported(input, e))?
        } else {
            // Report whichever error comes first in the input, as a
            // left-to-right parser would.
            match (
                walked,
                check_strings(input, &escapes, first_control, non_ascii),
            ) {
                (Ok(c), Ok(())) => c,
                (Err(a), Err(b)) => return Err(reported(input, min_err(Some(a), b))),
                (Err(e), Ok(())) | (Ok(_), Err(e)) => return Err(reported(input, e)),
            }
        };
        let escaped = !escapes.is_empty();
        let index = Index::assemble(structurals, containers, opts.lazy, non_ascii, escaped);
        Ok((index, escapes))
    }

    /// The index from its parts, spare capacity given back when it is both
    /// over [`SHRINK_MIN`] bytes and more than what is used: a Doc then
    /// retains at most twice its index plus a little (the first guess
    /// over-reserves on string-heavy input, and the chat ladder's index
    /// must stay a few percent of the input), while growth by doubling,
    /// which never leaves more spare than used, costs no realloc.
    fn assemble(
        structurals: Vec<u32>,
        containers: Vec<Container>,
        lazy: bool,
        non_ascii: bool,
        escaped: bool,
    ) -> Index {
        debug_assert!(
            structurals.windows(2).all(|w| w[0] < w[1]),
            "structurals increase strictly"
        );
        let mut index = Index {
            structurals,
            containers,
            lazy,
            non_ascii,
            escaped,
        };
        fn shrink<T>(v: &mut Vec<T>) {
            let spare = (v.capacity() - v.len()) * std::mem::size_of::<T>();
            if spare > SHRINK_MIN && spare > v.len() * std::mem::size_of::<T>() {
                shrink_exact(v);
            }
        }
        shrink(&mut index.structurals);
        shrink(&mut index.containers);
        index
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

    /// Whether any string of the document (key or value) holds a backslash
    /// escape. When `false`, every string's bytes between its quotes are its
    /// text (after the UTF-8 check a lazy document's reads still make):
    /// readers may skip their escape tests. Found by stage 1 at no extra
    /// cost (its list of escape offsets is not empty).
    #[inline]
    pub fn has_escapes(&self) -> bool {
        self.escaped
    }

    /// Whether the input holds a byte >= 0x80 (found by stage 1): when it
    /// does not, every string body is ASCII, and readers may skip their
    /// width and UTF-8 work.
    #[inline]
    pub fn has_non_ascii(&self) -> bool {
        self.non_ascii
    }
}

/// `v.shrink_to_fit()` out of line: the `realloc` and its error path stay
/// out of the parse's hot code (a small document's index is rarely
/// shrunk, so its parse does not fetch them).
#[cold]
#[inline(never)]
fn shrink_exact<T>(v: &mut Vec<T>) {
    v.shrink_to_fit();
}

/// Check `input` as [`Index::build`] does (same errors, same offsets)
/// without keeping the index.
/// Stage 1, then the stage-2 walk without recording the container table.
pub fn validate(input: &[u8], opts: &Options) -> Result<(), Error> {
    // The token walk answers "valid" quickly; anything else (an error, or
    // no token scan on this CPU) takes the exact path, which reports the
    // error and its offset.
    if !opts.lazy && tokens::valid(input, opts.max_depth) {
        return Ok(());
    }
    validate_exact(input, opts)
}

/// The fast path of [`validate`] alone: `true` only if `input` is valid
/// strict JSON nested at most `max_depth` deep; `false` for every invalid
/// input and for some valid ones (deep nesting, no token scan on this CPU).
/// For tests and benchmarks.
#[doc(hidden)]
pub fn validate_fast(input: &[u8], max_depth: usize) -> bool {
    tokens::valid(input, max_depth)
}

/// [`validate`] without the fast path: stage 1 and the stage-2 walk of
/// [`Index::build`] without the container table. For tests and benchmarks.
#[doc(hidden)]
pub fn validate_exact(input: &[u8], opts: &Options) -> Result<(), Error> {
    let mut scan = Scan::default();
    if let Err(e) = scan::scan(input, &mut scan) {
        return Err(reported(input, stage1_error(input, e, opts)));
    }
    check_scanned(input, &scan, opts).map_err(|e| reported(input, e))
}

/// Stage 2 of [`validate_exact`] over a finished scan.
fn check_scanned(input: &[u8], scan: &Scan, opts: &Options) -> Result<(), Error> {
    let walked = walk::<false>(input, &scan.structurals, opts).map(drop);
    if opts.lazy {
        return walked;
    }
    let strings = check_strings(input, &scan.escapes, scan.first_control, scan.non_ascii);
    match (walked, strings) {
        (Err(a), Err(b)) => Err(min_err(Some(a), b)),
        (Err(e), _) | (_, Err(e)) => Err(e),
        (Ok(()), Ok(())) => Ok(()),
    }
}

/// Cold path: the error to report for invalid `input` whose first error is
/// `e`. An input that begins as `json.loads` recognises UTF-16 or UTF-32
/// (a byte order mark, or zero bytes among its first four, the rule of
/// Python's `json.detect_encoding`) is reported as such, at offset 0,
/// instead of as the stray zero byte or bad token it is in UTF-8.
#[cold]
#[inline(never)]
fn reported(input: &[u8], e: Error) -> Error {
    let utf16 = Error::new(ErrorKind::Utf16Input, 0);
    let utf32 = Error::new(ErrorKind::Utf32Input, 0);
    if e.kind == ErrorKind::TooLarge {
        return e;
    }
    if input.starts_with(&[0, 0, 0xFE, 0xFF]) || input.starts_with(&[0xFF, 0xFE, 0, 0]) {
        return utf32;
    }
    if input.starts_with(&[0xFE, 0xFF]) || input.starts_with(&[0xFF, 0xFE]) {
        return utf16;
    }
    match *input {
        [0, b1, _, _, ..] => {
            if b1 != 0 {
                utf16
            } else {
                utf32
            }
        }
        [_, 0, b2, b3, ..] => {
            if b2 != 0 || b3 != 0 {
                utf16
            } else {
                utf32
            }
        }
        [0, _] | [_, 0] => utf16,
        _ => e,
    }
}

/// Cold path: stage 1 stopped at `e`, a string that never closes or a
/// backslash outside any string, at byte `x = e.offset`. Stage 1 finds
/// these over the whole input before any grammar is checked, but the first
/// error in the input may come earlier, or the byte at `x` may be the error
/// for another reason (a missing `:` or `,`). So the prefix `input[..x]`,
/// which stage 1 accepts (it ends outside any string and has no stray
/// backslash), is checked with a probe in place of the bad byte:
///
/// - an unterminated string gets `""`, an empty string: a walk error
///   before `x` is the first error; one at `x` says that no string may
///   stand there (`Expecting ':' delimiter`, ...); otherwise the string is
///   where a value or key may be, and the first error is inside it (a bad
///   escape, a control byte, invalid UTF-8) or its missing end;
/// - a stray backslash gets `x`, which no grammar position accepts: the
///   walk's error at `x` says what was expected there (an invalid literal
///   in value position is `ExpectedValue`, as `json` reports it).
///
/// Costs a copy of the prefix, on invalid input only.
#[cold]
#[inline(never)]
fn stage1_error(input: &[u8], e: Error, opts: &Options) -> Error {
    let x = e.offset;
    let tail: &[u8] = match e.kind {
        ErrorKind::UnterminatedString => b"\"\"",
        ErrorKind::StrayBackslash => b"x",
        _ => return e,
    };
    let mut probe = Vec::with_capacity(x + tail.len());
    probe.extend_from_slice(&input[..x]);
    probe.extend_from_slice(tail);
    let mut scan = Scan::default();
    if scan::scan(&probe, &mut scan).is_err() {
        return e; // not expected: the prefix passed stage 1
    }
    match check_scanned(&probe, &scan, opts) {
        Err(p) if p.offset < x => p,
        Err(p) if p.offset == x => match p.kind {
            ErrorKind::InvalidLiteral => Error::new(ErrorKind::ExpectedValue, x),
            _ => p,
        },
        _ if e.kind == ErrorKind::UnterminatedString && !opts.lazy => unterminated_string(input, x),
        _ => e,
    }
}

/// Cold path: the first error of the string opened at `open` that runs to
/// the end of the input, read left to right as `json` does: an invalid
/// escape, a raw control byte or invalid UTF-8 inside it, else the missing
/// closing quote (`UnterminatedString` at `open`).
#[cold]
fn unterminated_string(input: &[u8], open: usize) -> Error {
    let body = &input[open + 1..];
    let utf8_end = match simdutf8::compat::from_utf8(body) {
        Ok(_) => body.len(),
        Err(u) => u.valid_up_to(),
    };
    let mut i = 0;
    while i < utf8_end {
        match body[i] {
            // A backslash as the last byte escapes nothing: the string is
            // unterminated.
            b'\\' if i + 1 == body.len() => break,
            b'\\' => {
                // `json` wants a byte after a `\uXXXX` escape before it
                // decodes it: one that ends the input (alone, or as the
                // second half of a pair) is an invalid escape at its `u`.
                let at = open + 1 + i;
                if body[i + 1] == b'u' && at + 6 >= input.len() {
                    return Error::new(ErrorKind::InvalidUnicodeEscape, at + 1);
                }
                match check_escape(input, at) {
                    Ok(12) if at + 12 == input.len() => {
                        return Error::new(ErrorKind::InvalidUnicodeEscape, at + 7)
                    }
                    Ok(n) => i += n,
                    Err(err) => return err,
                }
            }
            0x00..=0x1f => return Error::new(ErrorKind::ControlCharacter, open + 1 + i),
            _ => i += 1,
        }
    }
    if utf8_end < body.len() {
        return Error::new(ErrorKind::InvalidUtf8, open + 1 + utf8_end);
    }
    Error::new(ErrorKind::UnterminatedString, open)
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
        // The one-letter escapes (`\/` in URLs, `\"` in HTML) and `\u`
        // escapes of characters outside the surrogates need no call.
        if matches!(
            input.get(e + 1),
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
        ) || is_plain_unicode_escape(input, e)
        {
            continue;
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
        // The fast validator first; the one that locates the error only
        // when there is one.
        if !crate::scan::utf8_valid(input) {
            if let Err(e) = simdutf8::compat::from_utf8(input) {
                worst = Some(min_err(
                    worst,
                    Error::new(ErrorKind::InvalidUtf8, e.valid_up_to()),
                ));
            }
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

/// The stage-2 state machine. Returns the container table.
///
/// Each step of the outer loop reads one value whose first byte is `q` (the
/// first non-whitespace byte after the previous structural; every gap is
/// measured exactly once) and whose first structural candidate is `s[k]`:
/// `q < s[k]` means a scalar, else `input[s[k]]` says which value it is.
/// The inner loop then consumes the terminators after the value (`,` or
/// closers) until the next value begins.
fn walk<const TABLE: bool>(
    input: &[u8],
    s: &[u32],
    opts: &Options,
) -> Result<Vec<Container>, Error> {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        /// The same walk, compiled for AVX2 and BMI: the 32-byte number
        /// masks take one vector step instead of two, and variable shifts
        /// and bit scans are single instructions (about 15% fewer
        /// instructions on number-heavy input).
        ///
        /// # Safety
        ///
        /// The CPU must support AVX2, BMI1, BMI2, LZCNT and POPCNT.
        #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
        unsafe fn walk_avx2<const TABLE: bool>(
            input: &[u8],
            s: &[u32],
            opts: &Options,
        ) -> Result<Vec<Container>, Error> {
            walk_impl::<TABLE>(input, s, opts)
        }
        // SAFETY: `has_avx2` is true only when the CPU has every feature
        // `walk_avx2` enables (`cpu::Features::avx2_walk`).
        return unsafe { walk_avx2::<TABLE>(input, s, opts) };
    }
    walk_impl::<TABLE>(input, s, opts)
}

/// Whether the AVX2 build of [`walk`] runs (see [`crate::cpu`]: the CPU
/// has every feature it enables, and `QJSON_BACKEND` allows it).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2() -> bool {
    crate::cpu::kernels().avx2_walk
}

///
/// With `TABLE` false (validation only) nothing is recorded: the result is
/// an empty vector.
#[inline(always)]
fn walk_impl<const TABLE: bool>(
    input: &[u8],
    s: &[u32],
    opts: &Options,
) -> Result<Vec<Container>, Error> {
    let n = input.len();
    let last = s.len() - 1; // the sentinel
    let strict = !opts.lazy;
    // A modest first guess: most documents have one container per 16
    // structurals or fewer (and then nothing is reserved in vain).
    // Small documents take the upper bound at once (it is small).
    let guess = if !TABLE {
        0
    } else if s.len() <= SMALL {
        s.len() / 2 + 1
    } else {
        s.len() / 16 + 1
    };
    let mut containers: Vec<Container> = Vec::with_capacity(guess);
    // Parents of the current container; `cur` is the innermost open one.
    let mut stack = FrameStack::new();
    let mut cur = TOP;
    let err = |kind, at: usize| Err(Error::new(kind, at));

    if skip_ws(input, 0) == n {
        return err(ErrorKind::Empty, n);
    }
    let mut k = 0usize;
    let mut p = 0usize;
    'value: loop {
        // --- a value in the gap from byte p, or at structural k ---
        let sk = s[k] as usize;
        // Which kind of value comes next is the branch that mispredicts,
        // so decide it on `input[sk]`, which is known before the gap's end;
        // the gap check itself nearly always passes.
        match input.get(sk) {
            Some(b'"') if gap_end(input, p, sk) == sk => {
                if string_close(input, s, k).is_none() {
                    let at = after_string_garbage(input, sk);
                    return err(after_value_error(cur, at == n), at);
                }
                k += 1;
            }
            Some(&open @ (b'{' | b'[')) if gap_end(input, p, sk) == sk => {
                if stack.len() >= opts.max_depth {
                    return err(ErrorKind::DepthExceeded, sk);
                }
                stack.push(cur);
                let object = open == b'{';
                cur = Frame {
                    ord: containers.len() as u32,
                    kind: if object { Kind::Object } else { Kind::Array },
                    count: 0,
                };
                if TABLE {
                    if containers.len() == containers.capacity() {
                        // The first guess was short: go straight to the
                        // upper bound (two structurals per container)
                        // rather than copy the table at every doubling.
                        containers.reserve_exact(s.len() / 2 + 1 - containers.len());
                    }
                    containers.push(Container::default());
                }
                k += 1;
                let next = s[k] as usize;
                let g = gap_end(input, sk + 1, next);
                let close = if object { b'}' } else { b']' };
                if g == next && k < last && input[next] == close {
                    // Empty container.
                    k = close_container::<TABLE>(
                        input,
                        s,
                        k,
                        &mut cur,
                        &mut stack,
                        &mut containers,
                    )?;
                } else {
                    if object {
                        k = expect_key(input, s, k, g, last)?;
                    }
                    p = s[k - 1] as usize + 1;
                    continue 'value;
                }
            }
            _ => {
                let q = gap_end(input, p, sk);
                if q == sk {
                    if k == last {
                        return err(ErrorKind::UnexpectedEnd, n);
                    }
                    return err(ErrorKind::ExpectedValue, sk);
                }
                // A scalar token between q and the next structural.
                // Nothing but whitespace may follow the token; any failure
                // takes the cold path, which reports the error.
                if strict {
                    match scalar_end(input, q) {
                        Some(e) if gap_end(input, e, sk) == sk => {}
                        _ => {
                            return Err(scalar_gap_error(
                                input,
                                q,
                                sk,
                                after_value_error(cur, false),
                            ))
                        }
                    }
                }
            }
        }
        // --- after a value: S[k] is the terminator, gap already checked ---
        loop {
            if k == last {
                if cur.kind == Kind::Top {
                    return Ok(containers);
                }
                return err(ErrorKind::UnexpectedEnd, n);
            }
            if TABLE {
                cur.count += 1;
            }
            let sk = s[k] as usize;
            // At the top level every structural is trailing content.
            match (input[sk], cur.kind) {
                (b',', Kind::Array) => {
                    k += 1;
                    // Arrays of numbers: when the gap up to the next
                    // structural is whitespace and then exactly one valid
                    // scalar token (strict), or not only whitespace
                    // (lazy), it is the value, and the walk stays here (the
                    // next structural terminates it, or is the error);
                    // anything else takes the general path below, which
                    // would accept the same gaps.
                    let next = s[k] as usize;
                    let q = gap_end(input, sk + 1, next);
                    let scalar = q < next && (!strict || scalar_end(input, q) == Some(next));
                    if scalar {
                        continue;
                    }
                    // (The gap before `q` is whitespace: start from there.)
                    p = q;
                    continue 'value;
                }
                (b',', Kind::Object) => {
                    k += 1;
                    let g = gap_end(input, sk + 1, s[k] as usize);
                    k = expect_key(input, s, k, g, last)?;
                    p = s[k - 1] as usize + 1;
                    continue 'value;
                }
                (b']', Kind::Array) | (b'}', Kind::Object) => {
                    k = close_container::<TABLE>(
                        input,
                        s,
                        k,
                        &mut cur,
                        &mut stack,
                        &mut containers,
                    )?;
                }
                _ => return err(after_value_error(cur, false), sk),
            }
        }
    }
}

/// Cold path: the error for a scalar gap `input[q..sk]` that failed
/// [`check_scalar`] as a whole: either the first whitespace-delimited token
/// is bad, or something follows it (reported as `after`, the error for an
/// unexpected byte after a value in the enclosing container). The lazy
/// readers report a scalar they cannot read through this too
/// ([`crate::doc::Doc`]), so a lazy document names the same first error
/// as a strict parse.
#[cold]
#[inline(never)]
pub(crate) fn scalar_gap_error(input: &[u8], q: usize, sk: usize, after: ErrorKind) -> Error {
    let mut end = q;
    while end < sk && !is_ws(input[end]) {
        end += 1;
    }
    let token = &input[q..end];
    // `true`, `false` or `null` with more bytes after it (`truex`): as in
    // `json`, the literal is the value and the next byte stands where a
    // `,`, a closer or the end must be.
    if let Some(n) = literal_prefix_len(token) {
        return Error::new(after, q + n);
    }
    if let Err(e) = check_scalar(token, q) {
        return e;
    }
    Error::new(after, gap_end(input, end, sk))
}

/// The error for an unexpected byte after a value inside `cur`.
fn after_value_error(cur: Frame, at_end: bool) -> ErrorKind {
    if at_end {
        ErrorKind::UnexpectedEnd
    } else {
        match cur.kind {
            Kind::Top => ErrorKind::TrailingContent,
            Kind::Object => ErrorKind::ExpectedObjectCommaOrEnd,
            Kind::Array => ErrorKind::ExpectedArrayCommaOrEnd,
        }
    }
}

/// Structural `k` (after `{` or `,`, whose gap ends at byte `g`) must be a
/// key string followed by `:`. Returns the structural index of the value's
/// first structural candidate (the one after the colon).
#[inline(always)]
fn expect_key(input: &[u8], s: &[u32], k: usize, g: usize, last: usize) -> Result<usize, Error> {
    let sk = s[k] as usize;
    // (At the sentinel, `sk` is `input.len()` and `get` fails.)
    if g != sk || input.get(sk) != Some(&b'"') {
        return Err(key_error(input, g));
    }
    // Usually the colon follows the closing quote: one two-byte compare.
    let colon = s[k + 1] as usize;
    if colon > sk + 1 && input.get(colon - 1..colon + 1) == Some(b"\":") {
        return Ok(k + 2);
    }
    if string_close(input, s, k).is_none() || k + 1 == last || input[colon] != b':' {
        return Err(colon_error(input, sk));
    }
    Ok(k + 2)
}

/// Cold path of [`expect_key`]: no key string where one must begin (at `g`).
#[cold]
#[inline(never)]
fn key_error(input: &[u8], g: usize) -> Error {
    let kind = if g == input.len() {
        ErrorKind::UnexpectedEnd
    } else {
        ErrorKind::ExpectedKey
    };
    Error::new(kind, g)
}

/// Cold path of [`expect_key`]: the key string opened at `open` is not
/// followed by a colon.
#[cold]
#[inline(never)]
fn colon_error(input: &[u8], open: usize) -> Error {
    let at = after_string_garbage(input, open);
    let kind = if at == input.len() {
        ErrorKind::UnexpectedEnd
    } else {
        ErrorKind::ExpectedColon
    };
    Error::new(kind, at)
}

/// Close `cur` at structural `k`; returns the index of the structural after
/// it, with the gap up to it checked.
#[inline(always)]
fn close_container<const TABLE: bool>(
    input: &[u8],
    s: &[u32],
    k: usize,
    cur: &mut Frame,
    stack: &mut FrameStack,
    containers: &mut [Container],
) -> Result<usize, Error> {
    if TABLE {
        let next = containers.len() as u32;
        containers[cur.ord as usize] = Container {
            close: k as u32,
            next,
            len: cur.count,
        };
    }
    *cur = stack.pop().unwrap_or(TOP);
    let k = k + 1;
    let sk = s[k] as usize;
    let g = gap_end(input, s[k - 1] as usize + 1, sk);
    if g != sk {
        return Err(Error::new(after_value_error(*cur, false), g));
    }
    Ok(k)
}
