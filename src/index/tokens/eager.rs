//! The token index of an eager decoder (one that builds every value at
//! once, as the Python edge's `loads` does).
//!
//! An eager decoder reads every token, so it checks each scalar itself as
//! it parses it; what it needs from the index is everything else: the
//! grammar walk of [`super`] (over the token index, where every number and
//! literal start is marked), the strings' escapes and UTF-8, and each
//! container's child count (to size the list or dict it builds). The walk
//! records the counts through [`ChildCounts`] and leaves the scalar tokens
//! unchecked ([`Record::CHECK_SCALARS`] false). When anything is off the
//! answer is `None` and the caller takes the exact path
//! ([`Index::build_unchecked_scalars`], then [`Index::build`] for the exact
//! error).
//!
//! The vectors are kept per thread between calls, as the token scan's are
//! (see [`super::take_scan`]), with the same size limit.
//!
//! For a stream of one document per line (`loads_many`), [`LinesIndex`]
//! scans a window of whole lines at once and walks each line's tokens on
//! their own (see its doc): one stage-1 pass per window instead of one
//! per line.

use super::{
    check_strings, escapes_left, give_back_scan, literal8, plain_number_shape, reserve_fresh,
    take_scan, utf8_left, walk, Record, KEEP_MAX,
};
use crate::error::Error;
use crate::index::{Index, Options};
use crate::scan::{self, Scan};
use std::cell::Cell;

thread_local! {
    /// The last child-count table, kept for the next call on this thread.
    static SPARE_LENS: Cell<Vec<u32>> = const { Cell::new(Vec::new()) };
}

/// The token index `loads` builds from (see [`for_loads`]).
pub(crate) struct LoadsIndex {
    /// Offsets of the tokens (structurals, opening quotes, scalar starts),
    /// then `input.len()`.
    pub structurals: Vec<u32>,
    /// Stage 1's escape offsets.
    pub escapes: Vec<u32>,
    /// The number of children of each container, in the order of their
    /// openers, with [`FLAT`] set when it holds no container.
    pub lens: Vec<u32>,
    /// Whether any byte is >= 0x80.
    pub non_ascii: bool,
}

/// The token index of `input` for `loads`, with everything checked but the
/// scalar tokens (which `loads` checks as it parses them: it must then
/// reject every scalar token that is not exactly one valid number or
/// literal followed by whitespace up to the next token). `None` means "not
/// known to be valid": the caller takes the exact path.
pub(crate) fn for_loads(input: &[u8], max_depth: usize) -> Option<LoadsIndex> {
    let mut scan = take_scan();
    match scan::scan_tokens(input, &mut scan) {
        Some(Ok(())) if scan.first_control.is_none() => {}
        _ => {
            give_back_scan(scan);
            return None;
        }
    }
    let s = &scan.structurals;
    // (The walk reserves the room, see `Record::table`.)
    let mut lens = SPARE_LENS.try_with(Cell::take).unwrap_or_default();
    lens.clear();
    let mut counts = ChildCounts::<false> {
        lens: &mut lens,
        next: 0,
    };
    let ok = walk(input, s, max_depth, &mut counts)
        && check_strings(input, escapes_left(&scan), None, utf8_left(&scan)).is_ok();
    let index = LoadsIndex {
        structurals: scan.structurals,
        escapes: scan.escapes,
        lens,
        non_ascii: scan.non_ascii,
    };
    if ok {
        Some(index)
    } else {
        index.give_back();
        None
    }
}

impl LoadsIndex {
    /// Keep the vectors for the next call on this thread (see
    /// [`take_scan`]), unless they are large.
    pub(crate) fn give_back(self) {
        give_back_scan(Scan {
            structurals: self.structurals,
            escapes: self.escapes,
            first_control: None,
            non_ascii: false,
            escapes_valid: false,
            utf8_valid: false,
        });
        if self.lens.capacity() <= KEEP_MAX {
            let _ = SPARE_LENS.try_with(|c| c.set(self.lens));
        }
    }
}

/// The bit of a child count ([`LoadsIndex::lens`]) that marks a container
/// holding no container: every child of it is one token (a string, number
/// or literal), so an eager decoder can fill it in a loop of its own, with
/// no frame per container and no dispatch on the kind of the enclosing
/// one. (Counts stay below it: a container has fewer children than the
/// input, whose offsets fit in a `u32`, has bytes over two.)
pub(crate) const FLAT: u32 = 1 << 31;

/// `loads`: each container's child count, by ordinal, [`FLAT`] set on
/// those holding no container (empty ones too).
/// (It borrows the table, so that a caller that keeps one, as
/// [`LinesIndex`] does across lines, does not move it in and out per call.)
/// With `STOP`, the walk accepts the first value whatever follows it and
/// says where it ended (see [`LinesIndex::line_at`]).
struct ChildCounts<'a, const STOP: bool = false> {
    /// Empty (length 0) while the walk runs: it writes each container's
    /// count into the room when the container closes, and the length
    /// becomes the count of containers when it accepts.
    lens: &'a mut Vec<u32>,
    /// With `STOP`, once accepted: the token after the value.
    next: usize,
}

impl<const STOP: bool> Record for ChildCounts<'_, STOP> {
    const CHECK_SCALARS: bool = false;
    const RECORD: bool = true;
    const STOP: bool = STOP;
    #[inline(always)]
    fn stopped(&mut self, next: usize) {
        self.next = next;
    }
    type Entry = u32;
    #[inline(always)]
    fn entry(len: u32, _: usize, ord: usize, next: usize) -> u32 {
        // No container opened between this one and its closer.
        if next == ord + 1 {
            len | FLAT
        } else {
            len
        }
    }
    #[inline(always)]
    fn table(&mut self, room: usize) -> *mut u32 {
        if self.lens.capacity() < room {
            reserve_fresh(self.lens, room);
        }
        self.lens.as_mut_ptr()
    }
    #[inline(always)]
    unsafe fn accepted(&mut self, _: usize, opened: usize) {
        // SAFETY: the caller wrote the first `opened` entries of the
        // buffer `table` gave (`lens`'), `opened` at most its capacity.
        unsafe { self.lens.set_len(opened) };
    }
}

/// Whether `input[p..]` starts with `true`, `null` or `false` followed by
/// a byte that ends a token, or by the end of input (`input[p]` is a
/// token's first byte). In the token index the literal then is the whole
/// token and only whitespace follows it up to the next token. The last 7
/// bytes of input are read padded with spaces (the end of input ends a
/// token as a space does), so a literal there needs no slow path.
#[inline(always)]
pub(crate) fn literal_token(input: &[u8], p: usize) -> bool {
    let w = match input.get(p..).and_then(<[u8]>::first_chunk::<8>) {
        Some(w) => *w,
        None => padded_tail(input, p),
    };
    w[0] > b'9' && literal8(u64::from_le_bytes(w), w[0])
}

/// [`literal_token`] of a token whose first 8 bytes are `w` (little-endian;
/// the end of input read as spaces): one 8-byte word, its low byte the
/// token's first.
#[inline(always)]
pub(crate) fn literal_word(w: u64) -> bool {
    let c = w as u8;
    c > b'9' && literal8(w, c)
}

/// The fewer than 8 bytes of `input` from `p` on, then spaces.
#[cold]
#[inline(never)]
fn padded_tail(input: &[u8], p: usize) -> [u8; 8] {
    let rest = input.get(p..).unwrap_or(&[]);
    let mut w = [b' '; 8];
    w[..rest.len()].copy_from_slice(rest);
    w
}

/// Whether `input[p..q]` is exactly one plain number with a fraction, as
/// `plain_number` checks (`loads` then hands it to the float parser
/// directly, without reading its digits first).
#[inline(always)]
pub(crate) fn plain_fraction(input: &[u8], p: usize, q: usize) -> bool {
    plain_number_shape(input, p, q) == Some(true)
}

/// The index build of an eager decoder.
impl Index {
    /// A strict [`Index::build_with_escapes`] that leaves the scalar tokens
    /// (numbers and literals, and what follows them up to the next
    /// structural) unchecked, for a caller that checks them itself while
    /// it reads them (`loads`). Everything else is checked as in strict
    /// mode; the errors it reports may not be the first one, so a caller
    /// that meets any error gets the exact one from [`Index::build`].
    pub(crate) fn build_unchecked_scalars(
        input: &[u8],
        max_depth: usize,
    ) -> Result<(Index, Vec<u32>), Error> {
        let opts = Options {
            lazy: false,
            max_depth,
        };
        Index::build_parts(input, &opts, false, true)
    }
}

/// Windows of [`LinesIndex`] end at the first line end at least this many
/// bytes after their start (or at the stream's end).
const LINES_WINDOW: usize = 16 * 1024;

/// The token index of a window of whole lines of a stream, for a caller
/// that reads one document per line (`loads_many`).
///
/// # Algorithm
///
/// Stage 1 ([`scan::scan_tokens`]) runs once over a window of about
/// [`LINES_WINDOW`] bytes of whole lines, not once per line; the escapes
/// of the whole window are checked at once too ([`check_strings`]), UTF-8
/// only in the lines that have a byte >= 0x80 (a window's UTF-8 is valid
/// exactly when each of its lines' is: a newline ends every sequence).
/// Each line is then walked on its own tokens ([`walk`], recording child
/// counts as [`for_loads`] does). (16 KiB, so that a line is more likely
/// still in L1 when it is built; callgrind counted, on a 2 MB generated
/// batch file, 1.5x the L1 data misses of a scan per line with 32 KiB
/// windows and 1.4x with 16 KiB, most of them stage 1 and `memchr`
/// reading bytes first.)
///
/// That the window's tokens are each line's own rests on one fact: when
/// no string of the window holds a control byte (`first_control` is
/// `None`; a raw newline is one), every newline lies outside strings, so
/// stage 1 leaves each line in the state it began it in (outside strings,
/// no escape pending, no scalar token running on: a newline ends tokens).
/// A line's tokens are then exactly those a scan of the line alone gives,
/// shifted by its offset, and the tokens from a line's first byte up to its
/// newline are its document's. A window with any stage-1 error, a control
/// byte in a string, or a bad escape anywhere is not used at all
/// ([`Line::NoWindow`]: the caller checks each of its lines on its own, as
/// without the window); nor is a line with invalid UTF-8.
///
/// A line's walk accepts only a line that holds exactly one valid
/// document (its scalar tokens left to the builder, as for
/// [`for_loads`]). Its end is not searched for first: the walk runs on
/// the window's tokens from the line's first and stops after the first
/// value, and the line ends at the first newline between that value and
/// the next token, which must hold one ([`LinesIndex::line_at`]; on the
/// generated batch file, lines of ~5.7 KB, a `memchr` per line for the
/// newline had cost ~0.9% of `loads_many`'s instructions). (A line whose
/// end is known, [`LinesIndex::guessed_line`], is walked up to its
/// newline, the next line's first token standing for the end of input.)
///
/// That walk reads nothing of a token but the class of its first byte
/// ([`CLASS`]), so a line whose tokens have, in order, the classes of a
/// line walked (accepted) before is accepted with the same child counts
/// without a walk: lines of one shape (amazon_cellphones.ndjson, every
/// line an array of nine values) are compared with the last one, token by
/// token, at about a third of the walk's cost (see
/// [`LinesIndex::walk_line`]). Besides the last line's shape, up to
/// [`OTHERS`] more are kept, one per token count ([`Shape`]), and one is
/// swapped in when a line's token count changes to its own: lines of a
/// few shapes interleaved (the generated batch file: six lines of one
/// shape, then one of another) each meet theirs, while a stream of one
/// shape runs as with the last one alone.
pub(crate) struct LinesIndex {
    /// The window's tokens and escapes, offsets from `start`.
    scan: Scan,
    /// The window, `stream[start..end]`: whole lines (`end` is just after
    /// a newline, or the stream's end).
    start: usize,
    end: usize,
    /// Whether the window's tokens can be used (see the type's doc).
    ok: bool,
    /// The first token and escape not before the next line (lines are
    /// read in order).
    k: usize,
    e: usize,
    /// The child counts of the last line walked.
    lens: Vec<u32>,
    /// The offsets of the window's 64-byte blocks that hold a byte >= 0x80
    /// (only when it has one), and the first not before the next line: a
    /// line without such a byte tells the builder that it is all ASCII (a
    /// window-wide answer sent every string of most windows of
    /// amazon_cellphones.ndjson, 21 lines of 793 non-ASCII, through an
    /// ASCII check).
    high: Vec<u32>,
    h: usize,
    /// How many tokens the last line walked had (see
    /// [`LinesIndex::line_end`]).
    shape: usize,
    /// The token classes ([`CLASS`]) of a line of `memo.len()` tokens
    /// (see [`LinesIndex::walk_line`]): recorded only when a line has as
    /// many tokens as the line before it.
    memo: Vec<u8>,
    /// Whether `memo` holds the classes of the last line walked, which
    /// was accepted with the child counts `lens` under `memo_depth`.
    memo_valid: bool,
    memo_depth: usize,
    /// The other shapes kept, at most one per token count, none of
    /// `memo.len()` (see [`LinesIndex::switch`]).
    others: [Shape; OTHERS],
    /// The one of `others` the next token count not kept replaces (they
    /// are replaced in turn: the oldest).
    victim: usize,
    /// The child counts of [`LinesIndex::line_at`]'s walk, kept apart
    /// from `lens` until the shape they go with is known.
    walked: Vec<u32>,
}

/// How many line shapes a [`LinesIndex`] keeps besides the last line's.
const OTHERS: usize = 3;

/// A line shape [`LinesIndex`] keeps besides the last line's: as its
/// `memo`, `lens`, `memo_valid` and `memo_depth`, for lines of
/// `classes.len()` tokens (0: none yet).
#[derive(Default)]
struct Shape {
    classes: Vec<u8>,
    lens: Vec<u32>,
    valid: bool,
    depth: usize,
}

/// The class of a token by its first byte, for the token walk of a line
/// whose scalars are left to the builder: each of `{ } [ ] : , "` is its
/// own class, every other byte (a scalar's first byte) is class 0. That
/// walk (`walk` with `Record::CHECK_SCALARS` false) reads nothing of a
/// token but the class of its first byte, so two lines whose tokens have
/// the same classes, in order, walk alike: both accepted with the same
/// child counts, or both not.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let structural = *b"{}[]:,\"";
    let mut i = 0;
    while i < structural.len() {
        t[structural[i] as usize] = structural[i];
        i += 1;
    }
    t
};

/// The class ([`CLASS`]) of the token at offset `t` of `window`.
///
/// # Safety
/// `t` must be the offset of a byte of `window`.
#[inline(always)]
unsafe fn class(window: &[u8], t: u32) -> u8 {
    debug_assert!((t as usize) < window.len());
    // SAFETY: the caller's contract.
    CLASS[unsafe { *window.get_unchecked(t as usize) } as usize]
}

/// Whether the tokens `tokens` of `window` have the classes `memo` (as
/// long as `tokens`), in order. Four tokens per step, one test of the
/// four: about five instructions a token.
///
/// # Safety
/// Every token must be the offset of a byte of `window`.
#[inline(always)]
unsafe fn same_classes(window: &[u8], tokens: &[u32], memo: &[u8]) -> bool {
    debug_assert_eq!(tokens.len(), memo.len());
    let mut t4 = tokens.chunks_exact(4);
    let mut m4 = memo.chunks_exact(4);
    for (t, m) in (&mut t4).zip(&mut m4) {
        // SAFETY: (each) a token of `tokens` (the caller's contract).
        let d = unsafe {
            (class(window, t[0]) ^ m[0])
                | (class(window, t[1]) ^ m[1])
                | (class(window, t[2]) ^ m[2])
                | (class(window, t[3]) ^ m[3])
        };
        if d != 0 {
            return false;
        }
    }
    let (t, m) = (t4.remainder(), m4.remainder());
    // SAFETY: as above.
    t.iter()
        .zip(m)
        .all(|(&t, &m)| unsafe { class(window, t) } == m)
}

/// Write the classes ([`CLASS`]) of the tokens `tokens` of `window` into
/// `memo` (as long as `tokens`).
///
/// # Safety
/// Every token must be the offset of a byte of `window`.
#[inline(always)]
unsafe fn record_classes(window: &[u8], tokens: &[u32], memo: &mut [u8]) {
    debug_assert_eq!(tokens.len(), memo.len());
    for (&t, m) in tokens.iter().zip(memo.iter_mut()) {
        // SAFETY: a token of `tokens` (the caller's contract).
        *m = unsafe { class(window, t) };
    }
}

/// A line's document, as [`LinesIndex::line_at`] gives it: the builder's
/// input (the window; offsets are relative to its start), the line's tokens
/// (then the next token, as the end), the escapes from the line on, the
/// child counts, and whether the window has non-ASCII bytes.
pub(crate) struct LineTokens<'a> {
    pub input: &'a [u8],
    pub structurals: &'a [u32],
    pub escapes: &'a [u32],
    pub lens: &'a [u32],
    pub non_ascii: bool,
}

/// What [`LinesIndex::line_at`] and [`LinesIndex::guessed_line`] say about a line.
pub(crate) enum Line<'a> {
    /// One valid document (scalars aside).
    Tokens(LineTokens<'a>),
    /// Not known to be one valid document: the caller's exact path.
    Exact,
    /// The window cannot be used: the caller checks the line on its own.
    NoWindow,
}

impl LinesIndex {
    pub(crate) fn new() -> LinesIndex {
        LinesIndex {
            scan: take_scan(),
            start: 0,
            end: 0,
            ok: false,
            k: 0,
            e: 0,
            lens: Vec::new(),
            high: Vec::new(),
            h: 0,
            shape: 0,
            memo: Vec::new(),
            memo_valid: false,
            memo_depth: 0,
            others: Default::default(),
            victim: 0,
            walked: Vec::new(),
        }
    }

    /// Make the shape of `n` tokens (`n` not `memo.len()`) the current
    /// one (`memo`, `lens`, `memo_valid`, `memo_depth`), the current one
    /// kept in its place: true when such a shape was kept (its classes
    /// recorded or not), false when none was (the current one then takes
    /// the oldest's place and the new one has no classes: they are recorded
    /// when a second line of `n` tokens comes, so that a stream whose lines
    /// all differ records few).
    #[cold]
    #[inline(never)]
    fn switch(&mut self, n: usize) -> bool {
        let (i, known) = match self.others.iter().position(|sh| sh.classes.len() == n) {
            Some(i) => (i, true),
            None => {
                let v = self.victim;
                self.victim = (v + 1) % OTHERS;
                (v, false)
            }
        };
        let sh = &mut self.others[i];
        std::mem::swap(&mut self.memo, &mut sh.classes);
        std::mem::swap(&mut self.lens, &mut sh.lens);
        std::mem::swap(&mut self.memo_valid, &mut sh.valid);
        std::mem::swap(&mut self.memo_depth, &mut sh.depth);
        if !known {
            self.memo.resize(n, 0);
            self.memo_valid = false;
        }
        known
    }

    /// The kept shape (of `others`) whose classes the first tokens of the
    /// line at token `k` have, under the depth limit `max_depth`, made the
    /// current one ([`LinesIndex::switch`]): whether there was one. (For
    /// [`LinesIndex::line_at`] when the current one does not match: the
    /// first line of a window after a line of another shape.)
    #[cold]
    #[inline(never)]
    fn switch_to_match(&mut self, window: &[u8], k: usize, max_depth: usize) -> bool {
        let s = &self.scan.structurals;
        let found = self.others.iter().position(|sh| {
            let n = sh.classes.len();
            sh.valid
                && n > 0
                && sh.depth == max_depth
                && k + n < s.len()
                // SAFETY: `k + n < s.len()`: the tokens `k..k + n`
                // are not the last (the window's end), so offsets of bytes
                // of `window`. The last one's class first: a stream's
                // shapes often share their first tokens.
                && unsafe { class(window, s[k + n - 1]) } == sh.classes[n - 1]
                // SAFETY: as above, every token of `k..k + n` is a byte of
                // `window`.
                && unsafe { same_classes(window, &s[k..k + n], &sh.classes) }
        });
        match found {
            Some(i) => {
                let n = self.others[i].classes.len();
                self.switch(n)
            }
            None => false,
        }
    }

    /// The line `stream[ls..le]` (`ls` its first non-whitespace byte, `le`
    /// its newline or the end of the stream), walked on the tokens of the
    /// window that holds it (scanned first when no window holds it). (The
    /// tests' reference for [`LinesIndex::line_at`], which finds `le`
    /// itself.)
    #[cfg(test)]
    pub(crate) fn line<'a>(
        &'a mut self,
        stream: &'a [u8],
        ls: usize,
        le: usize,
        max_depth: usize,
    ) -> Line<'a> {
        if ls < self.start || le > self.end || self.end == 0 {
            self.window(stream, ls);
        }
        if !self.ok {
            return Line::NoWindow;
        }
        let s = &self.scan.structurals;
        let (rl, re) = (ls - self.start, le - self.start);
        // The line's first token: usually the cursor already.
        let mut k = self.k;
        if s.get(k).is_none_or(|&t| t as usize != rl) {
            k = s.partition_point(|&t| (t as usize) < rl);
        }
        if s.get(k).is_none_or(|&t| t as usize != rl) {
            // (A line's first byte is always a token; never here.)
            return Line::Exact;
        }
        // The first token at or after `re` (there is one: the window's end
        // is the last): usually as many tokens on as the last line had
        // (lines of one shape); else, as its tokens lie at distinct offsets
        // in `rl..re`, at most that many further.
        let g = k + self.shape;
        let b = if self.shape > 0 && g < s.len() && s[g - 1] < re as u32 && s[g] >= re as u32 {
            g
        } else {
            let upto = (k + (re - rl) + 1).min(s.len());
            k + s[k..upto].partition_point(|&t| (t as usize) < re)
        };
        self.walk_line(stream, k, b, rl, re, max_depth)
    }

    /// The line [`LinesIndex::line_end`] just found, `stream[ls..le]`, as
    /// [`LinesIndex::line_at`] gives it: its tokens are known (`k..k + n`, `n`
    /// the last line's count, then the next line's first as the end), so
    /// neither the window nor the tokens are searched again.
    pub(crate) fn guessed_line<'a>(
        &'a mut self,
        stream: &'a [u8],
        ls: usize,
        le: usize,
        max_depth: usize,
    ) -> Line<'a> {
        let (k, start) = (self.k, self.start);
        debug_assert!(self.ok && ls >= start && le <= self.end);
        debug_assert_eq!(self.scan.structurals[k] as usize, ls - start);
        self.walk_line(stream, k, k + self.shape, ls - start, le - start, max_depth)
    }

    /// The line that begins at `ls` (its first non-whitespace byte) as
    /// `LinesIndex::line` (the tests' reference) gives it, with its end, which is not searched
    /// for first: the line's document is walked on the window's tokens
    /// from the line's first to the window's end, the walk stopping at the
    /// end of the first value ([`Record::STOP`]), and the line ends at the
    /// first newline between that value's last token and the next token
    /// (or the window's end, when the window ends the stream: then the
    /// stream's end). With no newline there, another token follows the
    /// value on its line: [`Line::Exact`]. (No newline lies inside the
    /// value's last token: every newline of a usable window lies outside
    /// strings, see the type's doc, and a newline ends a scalar token. A
    /// value spread over lines, `[1,\n2]`, is one document followed by
    /// whitespace holding a newline all the same, as the splitter finds it;
    /// see [`LinesIndex::line_end`].) The end (the newline's offset in the
    /// stream, or its length) is returned with [`Line::Tokens`] only (else
    /// 0); after [`Line::NoWindow`] the caller searches for it.
    ///
    /// A value the walk does not close before the window's end is
    /// [`Line::Exact`] (the splitter then takes it); a walk that fails
    /// reads at most the window's tokens, and a caller retries the line
    /// path only after a region the splitter took (see `loads_many`).
    pub(crate) fn line_at<'a>(
        &'a mut self,
        stream: &'a [u8],
        ls: usize,
        max_depth: usize,
    ) -> (Line<'a>, usize) {
        if ls < self.start || ls >= self.end {
            self.window(stream, ls);
        }
        if !self.ok {
            return (Line::NoWindow, 0);
        }
        let s = &self.scan.structurals;
        let rl = ls - self.start;
        let mut k = self.k;
        if s.get(k).is_none_or(|&t| t as usize != rl) {
            k = s.partition_point(|&t| (t as usize) < rl);
        }
        if s.get(k).is_none_or(|&t| t as usize != rl) {
            // (A line's first byte is always a token; never here.)
            return (Line::Exact, 0);
        }
        let window = &stream[self.start..self.end];
        // A line whose first tokens have the classes of the last line
        // walked (accepted) is a value of as many tokens, with its child
        // counts: the walk, which reads nothing but the classes, would stop
        // after them (see [`CLASS`]). (The first line of each window of
        // amazon_cellphones.ndjson, whose lines have one shape.)
        let n = self.memo.len();
        let same = self.memo_valid
            && n > 0
            && self.memo_depth == max_depth
            && k + n < s.len()
            // SAFETY: `k + n < s.len()`: the tokens `k..k + n` are not the
            // last (the window's end), so offsets of bytes of `window`.
            && unsafe { same_classes(window, &s[k..k + n], &self.memo) };
        let b = if same {
            k + n
        } else if self.switch_to_match(window, k, max_depth) {
            // (Another kept shape, now the current one.)
            k + self.memo.len()
        } else {
            let s = &self.scan.structurals;
            self.walked.clear();
            let mut counts = ChildCounts::<true> {
                lens: &mut self.walked,
                next: 0,
            };
            if !walk(window, &s[k..], max_depth, &mut counts) {
                return (Line::Exact, 0);
            }
            let b = k + counts.next;
            // The classes are recorded when a line of as many tokens came
            // before (see [`LinesIndex::walk_line`]).
            if b - k == n || self.switch(b - k) {
                let s = &self.scan.structurals;
                // SAFETY: the tokens `k..b` are followed by token `b`, so
                // not the last: offsets of bytes of `window`.
                unsafe { record_classes(window, &s[k..b], &mut self.memo) };
                self.memo_valid = true;
                self.memo_depth = max_depth;
            }
            std::mem::swap(&mut self.lens, &mut self.walked);
            b
        };
        let s = &self.scan.structurals;
        // The value is tokens `k..b`; token `b` (perhaps the window's end,
        // the last) follows it.
        let (last, next) = (s[b - 1] as usize, s[b] as usize);
        let re = if window.get(last + 1) == Some(&b'\n') {
            last + 1
        } else if let Some(i) = memchr::memchr(b'\n', &window[last + 1..next]) {
            last + 1 + i
        } else if next == window.len() && self.end == stream.len() {
            next
        } else {
            return (Line::Exact, 0);
        };
        self.shape = b - k;
        let end = self.start + re;
        (self.line_tokens(window, k, b, rl, re), end)
    }

    /// The rest of [`LinesIndex::line_at`] and [`LinesIndex::guessed_line`]
    /// once the line's tokens are known:
    /// `k..b` from the window's offset `rl` up to `re`, `b` the first token
    /// at or after `re`.
    #[inline(always)]
    fn walk_line<'a>(
        &'a mut self,
        stream: &'a [u8],
        k: usize,
        b: usize,
        rl: usize,
        re: usize,
        max_depth: usize,
    ) -> Line<'a> {
        let n = b - k;
        // (A line of another count than the last: the shape of its count
        // made the current one, if one is kept.)
        let known = n == self.memo.len() || self.switch(n);
        let window = &stream[self.start..self.end];
        let s = &self.scan.structurals;
        let tokens = &s[k..=b];
        // A line whose tokens have the classes of the last line walked
        // (accepted, with the child counts `lens`) walks as it did (see
        // [`CLASS`]): its walk is skipped. The classes are compared (a
        // table lookup per token, about a third of the walk's cost per
        // token) and recorded only for a line with as many tokens as a
        // line before it: a stream of lines of one shape records them
        // once and then only compares (amazon_cellphones.ndjson, every
        // line an array of nine values: 3.67 M -> 3.54 M instructions
        // per call, the 1 MB generated batch file 14.15 M -> 13.92 M;
        // callgrind, LTO builds), one of lines that differ rarely pays
        // for them.
        let mut same = false;
        let mut recorded = false;
        if known {
            // SAFETY: (both) the tokens `k..b` lie before the line's end
            // `re` (`b` is the first token at or after it), so inside
            // `window`.
            same = self.memo_valid
                && self.memo_depth == max_depth
                && unsafe { same_classes(window, &s[k..b], &self.memo) };
            if !same {
                // SAFETY: as above.
                unsafe { record_classes(window, &s[k..b], &mut self.memo) };
                recorded = true;
            }
        }
        if !same {
            self.memo_valid = false;
            self.lens.clear();
            let mut counts = ChildCounts::<false> {
                lens: &mut self.lens,
                next: 0,
            };
            if !walk(&window[..re], tokens, max_depth, &mut counts) {
                return Line::Exact;
            }
            if recorded {
                self.memo_valid = true;
                self.memo_depth = max_depth;
            }
        }
        self.shape = n;
        self.line_tokens(window, k, b, rl, re)
    }

    /// The end of [`LinesIndex::walk_line`] and [`LinesIndex::line_at`],
    /// once the line's document (tokens `k..b`, walked and accepted, from
    /// `window`'s offset `rl` up to its end `re`) is known: the line as
    /// [`Line::Tokens`] (its UTF-8 checked when it has a byte >= 0x80), its
    /// tokens `k..=b`; the cursors move on to the next line.
    #[inline(always)]
    fn line_tokens<'a>(
        &'a mut self,
        window: &'a [u8],
        k: usize,
        b: usize,
        rl: usize,
        re: usize,
    ) -> Line<'a> {
        self.k = b;
        let tokens = &self.scan.structurals[k..=b];
        let esc = &self.scan.escapes;
        let mut e = self.e.min(esc.len());
        while esc.get(e).is_some_and(|&x| (x as usize) < rl) {
            e += 1;
        }
        self.e = e;
        let mut non_ascii = false;
        if self.scan.non_ascii {
            let mut h = self.h;
            while self.high.get(h).is_some_and(|&x| x as usize + 64 <= rl) {
                h += 1;
            }
            self.h = h;
            non_ascii = self.high.get(h).is_some_and(|&x| (x as usize) < re);
            // UTF-8 is checked line by line (the window's is the lines'
            // together: a newline ends every sequence), and only where a
            // line has a byte >= 0x80 (none when the token scan already
            // validated the whole window).
            if non_ascii
                && !self.scan.utf8_valid
                && simdutf8::basic::from_utf8(&window[rl..re]).is_err()
            {
                return Line::NoWindow;
            }
        }
        Line::Tokens(LineTokens {
            input: window,
            structurals: tokens,
            escapes: &esc[e..],
            lens: &self.lens,
            non_ascii,
        })
    }

    /// The line after the one [`LinesIndex::line_at`] last accepted, when it
    /// has as many tokens as that one (a stream of one document per line
    /// in one shape; amazon_cellphones.ndjson: every line an array of nine
    /// values): its first byte and its end, found without searching the
    /// bytes for the newline, nor the tokens for the line's last. The line
    /// begins at the token after the last line's (only whitespace holding
    /// its newline lies before it). With `n` tokens `k..k + n`, the guess
    /// holds when token `k` opens a container, token `k + n - 1` closes
    /// one, and the whitespace between that closer and token `k + n` (in
    /// the window, not its end) holds a newline: the line ends there.
    /// `None` when the guess does not hold, or the window ends before
    /// token `k + n` (the caller then searches). [`LinesIndex::guessed_line`]
    /// then says whether tokens `k..k + n` are one valid document. (When
    /// a newline lies among them, a document spread over lines, `[1,\n2]`,
    /// the line is taken to end at the newline after its closer: a valid
    /// document there is one all the same, followed by whitespace holding
    /// a newline, as the splitter finds it.)
    ///
    /// When the guess does not hold for the last line's count, it is tried
    /// with the counts of the other kept shapes whose classes are known
    /// (see the type's doc); the count that holds becomes the last line's,
    /// which [`LinesIndex::guessed_line`] reads.
    #[inline(always)]
    pub(crate) fn line_end(&mut self, stream: &[u8]) -> Option<(usize, usize)> {
        if !self.ok {
            return None;
        }
        match self.guess(stream, self.shape) {
            Some(g) => Some(g),
            None => self.guess_others(stream),
        }
    }

    /// [`LinesIndex::line_end`] with the counts of the other kept shapes.
    #[cold]
    #[inline(never)]
    fn guess_others(&mut self, stream: &[u8]) -> Option<(usize, usize)> {
        for i in 0..OTHERS {
            let n = self.others[i].classes.len();
            if self.others[i].valid && n != self.shape {
                if let Some(g) = self.guess(stream, n) {
                    self.shape = n;
                    return Some(g);
                }
            }
        }
        None
    }

    /// [`LinesIndex::line_end`]'s guess for a line of `n` tokens.
    #[inline(always)]
    fn guess(&self, stream: &[u8], n: usize) -> Option<(usize, usize)> {
        let (k, s) = (self.k, &self.scan.structurals);
        let b = k + n;
        if n < 2 || b + 1 >= s.len() {
            return None;
        }
        let window = &stream[self.start..self.end];
        let (rl, close, next) = (s[k] as usize, s[b - 1] as usize, s[b] as usize);
        if !matches!(window[rl], b'{' | b'[') || !matches!(window[close], b'}' | b']') {
            return None;
        }
        let gap = &window[close + 1..next];
        let nl = if gap.first() == Some(&b'\n') {
            0
        } else {
            memchr::memchr(b'\n', gap)?
        };
        Some((self.start + rl, self.start + close + 1 + nl))
    }

    /// Scan the window of whole lines from `ls` (a line's first
    /// non-whitespace byte): up to the first newline at least
    /// [`LINES_WINDOW`] bytes on (included), or the stream's end.
    fn window(&mut self, stream: &[u8], ls: usize) {
        let from = ls.saturating_add(LINES_WINDOW);
        let end = if from >= stream.len() {
            stream.len()
        } else {
            memchr::memchr(b'\n', &stream[from..]).map_or(stream.len(), |i| from + i + 1)
        };
        self.start = ls;
        self.end = end;
        self.k = 0;
        self.e = 0;
        let window = &stream[ls..end];
        let scan = &mut self.scan;
        self.ok = matches!(scan::scan_tokens(window, scan), Some(Ok(())))
            && scan.first_control.is_none()
            && check_strings(window, escapes_left(scan), None, false).is_ok();
        self.h = 0;
        self.high.clear();
        if self.ok && scan.non_ascii {
            high_blocks(window, &mut self.high);
        }
    }
}

/// Append to `out` the offsets of the 64-byte blocks of `input` (the last
/// one may be shorter) that hold a byte >= 0x80. Four blocks are tested
/// at once first: a window comes here when any of its bytes is >= 0x80,
/// but most of its blocks are ASCII (amazon_cellphones.ndjson: about half
/// its windows come here, for 21 non-ASCII lines of 793), and one test of
/// 256 bytes ran about a third of the instructions of four tests of 64.
fn high_blocks(input: &[u8], out: &mut Vec<u32>) {
    let mut quads = input.chunks_exact(256);
    let mut at = 0u32;
    for q in &mut quads {
        if quad_high(q.try_into().expect("256 bytes")) {
            for b in q.chunks_exact(64) {
                if block_high(b.try_into().expect("64 bytes")) {
                    out.push(at);
                }
                at += 64;
            }
        } else {
            at += 256;
        }
    }
    let mut blocks = quads.remainder().chunks_exact(64);
    for b in &mut blocks {
        if block_high(b.try_into().expect("64 bytes")) {
            out.push(at);
        }
        at += 64;
    }
    if !blocks.remainder().is_ascii() {
        out.push(at);
    }
}

/// Whether 256 bytes hold a byte >= 0x80 (as [`block_high`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn quad_high(q: &[u8; 256]) -> bool {
    use std::arch::x86_64::*;
    // SAFETY: the sixteen loads read the 256 bytes; `loadu` has no
    // alignment requirement; SSE2 is part of the x86_64 baseline.
    unsafe {
        let p = q.as_ptr();
        let v = |at: usize| _mm_loadu_si128(p.add(at).cast());
        let mut or = v(0);
        for i in 1..16 {
            or = _mm_or_si128(or, v(16 * i));
        }
        _mm_movemask_epi8(or) != 0
    }
}

/// [`quad_high`] without SIMD.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn quad_high(q: &[u8; 256]) -> bool {
    !q.is_ascii()
}

/// Whether a 64-byte block holds a byte >= 0x80: the OR of four 16-byte
/// loads, then its sign bits (SSE2, part of the x86_64 baseline).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block_high(b: &[u8; 64]) -> bool {
    use std::arch::x86_64::*;
    // SAFETY: the four loads read the block's 64 bytes; `loadu` has no
    // alignment requirement; SSE2 is part of the x86_64 baseline.
    unsafe {
        let p = b.as_ptr();
        let v = |at: usize| _mm_loadu_si128(p.add(at).cast());
        let or = _mm_or_si128(_mm_or_si128(v(0), v(16)), _mm_or_si128(v(32), v(48)));
        _mm_movemask_epi8(or) != 0
    }
}

/// [`block_high`] without SIMD.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn block_high(b: &[u8; 64]) -> bool {
    !b.is_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a line's walk gave: its tokens (offsets in the stream), its
    /// child counts and whether it has non-ASCII bytes; `None` for
    /// [`Line::Exact`] or [`Line::NoWindow`].
    type Walked = Option<(Vec<usize>, Vec<u32>, bool)>;

    fn walked(line: Line<'_>, start: usize) -> Walked {
        match line {
            Line::Tokens(t) => Some((
                t.structurals
                    .iter()
                    .map(|&x| x as usize + start)
                    .collect::<Vec<_>>(),
                t.lens.to_vec(),
                t.non_ascii,
            )),
            _ => None,
        }
    }

    /// The next line from `pos`: its first non-whitespace byte and its
    /// newline (or the stream's end); `None` when only whitespace is left.
    fn line_bounds(stream: &[u8], pos: usize) -> Option<(usize, usize)> {
        let ls = pos
            + stream[pos..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
        if ls == stream.len() {
            return None;
        }
        Some((ls, crate::many::line_end(stream, ls)))
    }

    /// The lines of `stream` read as `loads_many` reads them (each line
    /// after an accepted one through `line_end` and `guessed_line` when
    /// the guess holds) and read with `line` alone (searching each line's
    /// end): the same lines, the same walks.
    fn chained_matches_searched(stream: &[u8]) -> usize {
        let (mut chained, mut searched) = (LinesIndex::new(), LinesIndex::new());
        let (mut pos, mut guessed) = (0, 0);
        let mut accepted = false;
        while pos < stream.len() {
            let Some((ls, le)) = line_bounds(stream, pos) else {
                break;
            };
            let guess = if accepted {
                chained.line_end(stream)
            } else {
                None
            };
            // (A guessed line may run past `le`: a document spread over
            // lines, up to the newline after its closer.)
            let (ls, le, got) = match guess {
                Some((gs, ge)) => {
                    assert_eq!(gs, ls, "the guessed line starts the next line");
                    guessed += 1;
                    let line = chained.guessed_line(stream, gs, ge, 64);
                    (gs, ge, walked(line, 0))
                }
                None => (ls, le, walked(chained.line(stream, ls, le, 64), 0)),
            };
            let got = got.map(|(t, lens, a)| {
                (
                    t.iter().map(|&x| x + chained.start).collect::<Vec<_>>(),
                    lens,
                    a,
                )
            });
            let line = searched.line(stream, ls, le, 64);
            let want = walked(line, 0).map(|(t, lens, a)| {
                (
                    t.iter().map(|&x| x + searched.start).collect::<Vec<_>>(),
                    lens,
                    a,
                )
            });
            assert_eq!(got, want, "line at {ls}");
            accepted = got.is_some();
            pos = le;
        }
        guessed
    }

    #[test]
    fn guessed_lines_walk_as_searched_ones() {
        if !crate::index::token_scan_runs(b"[1]") {
            return; // no token scan: every line gives None, both ways
        }
        let mut stream = Vec::new();
        for i in 0..2000 {
            match i % 7 {
                0 => stream.extend_from_slice(b"[1,\"a\\n\",{\"k\":[true,null]}]\n"),
                1 => stream.extend_from_slice("[2,\"é\",{\"k\":[false,null]}]  \n".as_bytes()),
                2 => stream.extend_from_slice(b"  [3,\"b\",{\"k\":[true,1.5]}]\r\n"),
                3 => stream.extend_from_slice(b"{\"a\":1}\n\n"),
                4 => stream.extend_from_slice(b"[1,\n2]\n"),
                5 => stream.extend_from_slice(b"[4,\"c\",{\"k\":[true,null]}] [5]\n"),
                _ => stream.extend_from_slice(b"[6,\"d\",{\"k\":[true,null]}]\n"),
            }
        }
        assert!(chained_matches_searched(&stream) > 500);
        let same: Vec<u8> = b"[1,\"x\",{\"k\":[2,3]}]\n".repeat(3000);
        assert!(chained_matches_searched(&same) > 2900);
    }

    /// `line_at` (the line's end found from its document's) agrees with
    /// `line` given the end searched for: a line it takes is the one
    /// `line` takes up to the same end (the first newline after the
    /// document: the line's own, or a later one for a document spread
    /// over lines), and one it does not take `line` does not take up to
    /// the line's newline either. Lines of all kinds: containers, strings
    /// and scalars at the top, trailing whitespace and tokens, documents
    /// spread over lines, unclosed ones, escapes, non-ASCII and invalid
    /// UTF-8, control bytes in strings, lines longer than a window, and a
    /// last line without its newline.
    #[test]
    fn lines_end_where_their_documents_do() {
        if !crate::index::token_scan_runs(b"[1]") {
            return; // no token scan: every line gives None, both ways
        }
        let kinds: [&[u8]; 15] = [
            b"[1,\"a\\n\",{\"k\":[true,null]}]\n",
            "{\"\u{e9}\":\"\u{e8}\"}  \r\n".as_bytes(),
            b"\"a string\"\n",
            b"12.5\n",
            b"  true \n\n",
            b"[1,\n2]\n",
            b"{\"a\":\n{\"b\":\n[]}}   \n",
            b"[4,\"c\"] [5]\n",
            b"7 8\n",
            b"[1,\n",
            b"{\"a\":1}}\n",
            b"[\"\xff\"]\n",
            b"{\"x\":\"\\u00e9\\\"\"}\n",
            b"[[[[[[[[[[1]]]]]]]]]]\n",
            b"[]\n",
        ];
        let mut x = 7u32;
        for round in 0..4 {
            let mut stream = Vec::new();
            for i in 0..1500 {
                if round == 2 && i == 700 {
                    // A control byte in a string: its window is not used.
                    stream.extend_from_slice(b"\"a\tb\"\n");
                }
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                stream.extend_from_slice(kinds[(x >> 16) as usize % kinds.len()]);
                if (x >> 8).is_multiple_of(97) {
                    // A line longer than a window.
                    let long = format!("[\"{}\"]\n", "y".repeat(LINES_WINDOW + 100));
                    stream.extend_from_slice(long.as_bytes());
                }
            }
            if round % 2 == 1 {
                stream.extend_from_slice(b"{\"last\":[1,2]}"); // no newline
            }
            let (mut found, mut searched) = (LinesIndex::new(), LinesIndex::new());
            let (mut pos, mut taken, mut spread) = (0, 0, 0);
            while let Some((ls, le)) = line_bounds(&stream, pos) {
                let (line, end) = found.line_at(&stream, ls, 8);
                let end = match &line {
                    Line::Tokens(_) => end,
                    _ => le,
                };
                let got = walked(line, 0).map(|(t, lens, a)| {
                    let t = t.iter().map(|&x| x + found.start).collect::<Vec<_>>();
                    (t, lens, a)
                });
                let want = walked(searched.line(&stream, ls, end, 8), 0).map(|(t, lens, a)| {
                    let t = t.iter().map(|&x| x + searched.start).collect::<Vec<_>>();
                    (t, lens, a)
                });
                if got.is_some() {
                    assert!(end >= le, "line at {ls}");
                    assert!(end == stream.len() || stream[end] == b'\n', "line at {ls}");
                    assert_eq!(got, want, "line at {ls}");
                    taken += 1;
                    spread += usize::from(end > le);
                    pos = end;
                } else {
                    assert_eq!(want, None, "line at {ls}");
                    pos = le;
                }
            }
            assert!(taken > 500 && spread > 50, "{taken} {spread}");
        }
    }

    /// A stream of `runs` runs of lines, each run `pick(x)`'s line
    /// repeated its count of times (one newline after each), `x` the next
    /// value of a linear congruential sequence from `seed`.
    fn runs_of_lines(
        runs: usize,
        seed: u32,
        pick: impl Fn(u32) -> (&'static [u8], u32),
    ) -> Vec<u8> {
        let (mut stream, mut x) = (Vec::new(), seed);
        for _ in 0..runs {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let (line, count) = pick(x);
            for _ in 0..count {
                stream.extend_from_slice(line);
                stream.push(b'\n');
            }
        }
        stream
    }

    /// A line walked after lines of its shape (its walk skipped, see
    /// `LinesIndex::memo`) gives what a fresh index's walk of it gives,
    /// whatever came before: lines of five tokens in every order, valid
    /// and not, and the depth limit changing between two lines.
    #[test]
    fn remembered_shapes_walk_as_fresh_lines() {
        if !crate::index::token_scan_runs(b"[1]") {
            return; // no token scan: every line gives None, both ways
        }
        let lines: [&[u8]; 12] = [
            b"[1,2]",
            b"{\"a\":1}",
            b"[[1]]",
            b"[1:2]",
            b"[1,]]",
            b"[\"a\",2]",
            b"{\"a\":{}}",
            b"{\"a\":\"b\"}",
            b"[true,-2]",
            b"[1,\"\\u00e9\"]",
            b"[[[[1]]]]",
            b"[[[[[1]]]]]",
        ];
        let stream = runs_of_lines(3000, 12345, |x| {
            (lines[(x >> 16) as usize % lines.len()], 1 + (x >> 8) % 3)
        });
        let mut memo = LinesIndex::new();
        let (mut pos, mut n, mut accepted) = (0, 0, 0);
        while pos < stream.len() {
            let le = pos + memchr::memchr(b'\n', &stream[pos..]).unwrap();
            // The depth limit changes now and then (five brackets deep
            // passes 8, not 4).
            let depth = if n % 50 < 25 { 8 } else { 4 };
            let got = walked(memo.line(&stream, pos, le, depth), 0);
            let got = got.map(|(t, lens, a)| {
                (
                    t.iter().map(|&x| x + memo.start).collect::<Vec<_>>(),
                    lens,
                    a,
                )
            });
            let mut fresh = LinesIndex::new();
            let want = walked(fresh.line(&stream, pos, le, depth), 0);
            let want = want.map(|(t, lens, a)| {
                (
                    t.iter().map(|&x| x + fresh.start).collect::<Vec<_>>(),
                    lens,
                    a,
                )
            });
            assert_eq!(got, want, "line at {pos}");
            accepted += usize::from(got.is_some());
            pos = le + 1;
            n += 1;
        }
        assert!(accepted > n / 3 && accepted < n, "{accepted} of {n}");
    }

    /// Lines of more shapes than a `LinesIndex` keeps, in runs,
    /// interleaved, read as `loads_many` reads them (after an accepted
    /// line through `line_end` and `guessed_line` when a remembered count's
    /// guess holds, else `line_at`), give what an index that remembers
    /// nothing gives: shapes of one token count with other classes and
    /// other child counts (`[[1],2]`, `[1,[2]]`), bad lines, lines two
    /// documents long, empty lines and carriage returns among them.
    #[test]
    fn lines_of_many_shapes_walk_as_fresh_lines() {
        if !crate::index::token_scan_runs(b"[1]") {
            return; // no token scan: every line gives None, both ways
        }
        let shapes: [&[u8]; 12] = [
            b"[[1],2]",
            b"[1,[2]]",
            b"{\"a\":1,\"b\":[2,3]}",
            b"{\"a\":[2,3],\"b\":1}",
            b"[1,\"s\",2.5]",
            b"{\"k\":{\"m\":[1]}}",
            b"[[[[[[1]]]]]]",
            b"[1,2,3,4,5,6,7,8,9]",
            b"{\"a\":\"b\"}\r",
            b"[1,2,3,4,5,6,7,8:9]",
            b"[[1],2] [3]",
            b"",
        ];
        // Mostly the first eight (valid), in runs of 1 to 8.
        let stream = runs_of_lines(2500, 4242, |x| {
            let pick = (x >> 16) as usize % 40;
            let line = shapes[if pick < 32 { pick % 8 } else { 8 + pick % 4 }];
            (line, 1 + (x >> 8) % 8)
        });
        let mut memo = LinesIndex::new();
        let (mut pos, mut accepted, mut lines, mut guessed) = (0, 0, 0, 0);
        let mut chained = false;
        while let Some((ls, _)) = line_bounds(&stream, pos) {
            let guess = if chained {
                memo.line_end(&stream)
            } else {
                None
            };
            let (line, end) = match guess {
                Some((gs, ge)) => {
                    assert_eq!(gs, ls, "the guessed line starts the next line");
                    guessed += 1;
                    (memo.guessed_line(&stream, gs, ge, 5), ge)
                }
                None => memo.line_at(&stream, ls, 5),
            };
            let got = walked(line, 0).map(|(t, lens, a)| {
                let t = t.iter().map(|&x| x + memo.start).collect::<Vec<_>>();
                (t, lens, a)
            });
            // (A guessed line is the tokens up to the guessed end, perhaps
            // two lines: the splitter then takes them.)
            let mut fresh = LinesIndex::new();
            let (line, fresh_end) = match guess {
                Some((_, ge)) => (fresh.line(&stream, ls, ge, 5), ge),
                None => fresh.line_at(&stream, ls, 5),
            };
            let want = walked(line, 0).map(|(t, lens, a)| {
                let t = t.iter().map(|&x| x + fresh.start).collect::<Vec<_>>();
                (t, lens, a)
            });
            assert_eq!(got, want, "line at {ls}");
            chained = got.is_some();
            if chained {
                assert_eq!(end, fresh_end, "line at {ls}");
                accepted += 1;
                pos = end;
            } else {
                pos = crate::many::line_end(&stream, ls);
            }
            lines += 1;
        }
        assert!(
            accepted > lines / 2 && accepted < lines,
            "{accepted} of {lines}"
        );
        assert!(guessed > accepted / 2, "{guessed} of {accepted}");
    }

    /// `high_blocks` finds exactly the 64-byte blocks with a byte >= 0x80
    /// (a naive oracle), wherever the bytes lie and whatever the length.
    #[test]
    fn high_blocks_match_a_naive_search() {
        let mut x = 99u32;
        for len in [0, 1, 63, 64, 65, 255, 256, 257, 511, 700, 1024, 1300] {
            for _ in 0..40 {
                let mut input = vec![b'a'; len];
                for _ in 0..(x % 4) {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    if len > 0 {
                        input[(x >> 8) as usize % len] = 0x80 | (x as u8);
                    }
                }
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let mut got = Vec::new();
                high_blocks(&input, &mut got);
                let want: Vec<u32> = (0..len.div_ceil(64))
                    .filter(|&b| !input[b * 64..len.min(b * 64 + 64)].is_ascii())
                    .map(|b| b as u32 * 64)
                    .collect();
                assert_eq!(got, want, "len {len}");
            }
        }
    }
}
