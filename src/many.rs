//! Many documents in one stream: NDJSON / JSON Lines, or any JSON texts
//! separated by whitespace.
//!
//! # Algorithm
//!
//! Nearly every stream is one document per line, and nearly every line is
//! valid. So [`Splitter::split`] first takes whole lines (up to a window's
//! worth): a line that is one valid document, checked and indexed on its
//! own by the token walk (`Index::build_tokens`, the fast path of a single
//! document's strict parse), is taken as it is, with no window pass and no
//! structurals copied. The first line the token walk does not accept (an
//! error, several documents or part of one, deep nesting) stops the line
//! path there, at a line start, and the window path below splits from
//! there exactly as it would have from the stream's start: errors and
//! their offsets are its own. (A document of the line path ends at its
//! line's last non-blank byte.) The token walk needs no gap measured and
//! no structurals copied out of a window's list: on the generated batch
//! file, splitting 5 MB took 16.9 M instructions instead of 25.5 M
//! (callgrind; the exact walk and the closer search were 15.3 M of them,
//! the token walk is 6.9 M), and `parse_many` with two reads per line
//! of the 100 MB file took 0.64x and 0.75x the CPU time in two
//! interleaved runs (LTO builds, a loaded machine).
//!
//! A line's end is found by its token scan itself
//! (`Index::build_tokens_line`, see "The first line" in `scan/block.rs`):
//! the scan runs on from the line's first byte (up to a window's worth)
//! and stops at the first newline outside strings, instead of a `memchr`
//! for the newline and then a scan of the line (whose last partial block
//! was copied into a padded one). Only when the scan meets no newline (the
//! stream's last line, a line cut by the end of an `open_many` chunk or
//! longer than a window) is the newline searched for and the line scanned
//! as before. The 1 MB generated batch file, `parse_many` and two reads
//! per line: 3.355 M -> 3.286 M instructions per call, 18.2 k -> 17.9 k
//! per line (callgrind, AVX2, LTO builds).
//!
//! # The window path
//!
//! The stream is cut into *regions* of whole lines (a region ends just
//! after a newline, or at the end of the stream): at most a window's worth
//! of bytes, the window doubling while a single document does not fit.
//! Each region gets **one** stage-1 pass ([`crate::scan`]); the document
//! boundaries are then read off its structurals: a document that begins
//! with `{` or `[` ends at the closer that brings the bracket depth back to
//! zero, a string at its closing quote, any other scalar at the next
//! whitespace or structural; whitespace must follow each document (or the
//! stream end). Empty lines cost nothing (they are whitespace between
//! documents), and a UTF-8 byte order mark at the start of the stream is
//! skipped.
//!
//! Each document then gets its own small index: its slice of the region's
//! structurals (and escapes), rebased to the document's first byte, goes
//! through stage 2 (`Index::from_scan`). Nothing of the input is copied
//! and no document is scanned twice; a document's index holds only its own
//! structurals and containers, so a document kept by a caller keeps alive
//! its index and the bytes it was cut from, nothing else.
//!
//! # Bad input, and getting back in step
//!
//! A stage-1 pass over many lines is only as good as its quote parity: a
//! string left open on one line would swallow the lines after it. No
//! string of valid JSON holds a raw newline (a control character), so the
//! structurals of a region are trusted only up to the line of the first
//! control byte inside a string that the pass reports. From there (and
//! after a stage-1 error), the region is split *line by line*: each line
//! (extended to more lines while a pretty-printed document continues) gets
//! its own pass, so a broken line is reported on its own and the next line
//! starts afresh. A document that fails is abandoned at the end of the line
//! it begins on, or, when its brackets balance on a later line (a
//! pretty-printed document), at the end of that line; the error carries the
//! document's ordinal and a byte offset into the buffer. (A line whose
//! brackets do not match takes later lines with it only when one of them
//! is unbalanced the other way, itself an error.) A failing document cut
//! by the end of a region is read on to its end when it fails past its
//! first line and is shorter than the window; otherwise (a truncated line)
//! it is abandoned at the end of its first line.

use crate::error::{Error, ErrorKind};
use crate::index::{Index, Options};
use crate::lex::{is_ws, skip_ws};
use crate::scan::{self, Scan};

/// The UTF-8 byte order mark, skipped at the start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The bracket depth change of each byte: +1 for `{` `[`, -1 for `}` `]`.
static DEPTH: [i8; 256] = {
    let mut t = [0i8; 256];
    t[b'{' as usize] = 1;
    t[b'[' as usize] = 1;
    t[b'}' as usize] = -1;
    t[b']' as usize] = -1;
    t
};

/// The default window: how many bytes one stage-1 pass covers.
pub const WINDOW: usize = 1 << 20;

/// One document of the stream, or why it failed.
#[derive(Debug)]
pub struct Piece {
    /// Ordinal of the document in the stream (0-based; failed ones count).
    pub ordinal: u64,
    /// Byte range of the document in the buffer given to [`Splitter::split`].
    pub start: usize,
    pub end: usize,
    /// The document's index (and stage 1's escape offsets, for `loads`:
    /// they may be left out when the splitter checks scalars itself), with
    /// offsets relative to `start`; or the error, whose offset is into the
    /// buffer.
    pub result: Result<(Index, Vec<u32>), Error>,
}

/// Where the split of one region stopped.
enum Stop {
    /// Every document of the region was handled.
    End,
    /// The document at the returned position continues past the region.
    Stuck,
    /// The region's structurals are not trusted from the returned position
    /// on (a control byte in a string: possibly an unterminated string).
    /// In line mode it carries the error for the document there.
    Dirty(Error),
    /// Stage 1 failed on the region.
    Scan(Error),
}

/// Splits a stream into documents, window by window. Keeps its stage-1
/// buffers between calls.
#[derive(Debug)]
pub struct Splitter {
    opts: Options,
    check_scalars: bool,
    /// Whether [`Splitter::split`] takes the line path first (with
    /// `check_scalars`; tests turn it off to compare).
    line_path: bool,
    window: usize,
    /// The bytes the window path's first region of a [`Splitter::split`]
    /// call covers (at most `window`; see [`Splitter::set_region`]).
    region: usize,
    scan: Scan,
    next_ordinal: u64,
    started: bool,
}

impl Splitter {
    /// `check_scalars` false leaves numbers and literals to a caller that
    /// checks them as it reads them (`loads`; see
    /// `Index::build_unchecked_scalars`); a document that then fails is
    /// re-checked strictly, so its error is always the exact one.
    pub fn new(opts: Options, check_scalars: bool, window: usize) -> Splitter {
        Splitter {
            opts,
            check_scalars,
            line_path: check_scalars,
            window: window.max(64),
            region: window.max(64),
            scan: Scan::default(),
            next_ordinal: 0,
            started: false,
        }
    }

    /// The options documents are parsed with.
    pub fn options(&self) -> Options {
        self.opts
    }

    /// Let the window path of the next [`Splitter::split`] calls begin
    /// with a region of about `bytes` bytes of whole lines (at most the
    /// window; at least one line, the region doubling while a document does
    /// not fit, as it does from the window). A caller that takes most
    /// lines itself (`loads_many`, see [`Splitter::line_start`]) and hands the
    /// splitter only a line it could not take then gets back the documents
    /// of that line and a few after it, not of a whole window. The
    /// documents and errors are the same whatever the region: only where
    /// a call returns changes (a document longer than the window is still
    /// measured against the window). The line path of `check_scalars`
    /// splitters also stops after about a region of whole lines
    /// (`parse_many` of a stream of a window or less splits it a region at
    /// a time, so that the index vectors of the documents dropped meanwhile
    /// serve the next region's).
    pub fn set_region(&mut self, bytes: usize) {
        self.region = bytes.clamp(64, self.window);
    }

    /// How many documents (good or bad) have been produced.
    pub fn count(&self) -> u64 {
        self.next_ordinal
    }

    /// The line fast path of a caller that holds the whole stream (`buf`
    /// and `pos` as for [`Splitter::split`] with `at_end`). When `pos` is
    /// at a line start (nothing but whitespace follows it up to a
    /// newline), the next line holding more than whitespace is
    /// `buf[start..end]` (without its newline) and `Some((start, end))` is
    /// returned, `Some((n, n))` when only whitespace is left; `None` when
    /// `pos` is inside a line. The caller checks the line on its own (one
    /// document per line is the common case): if it is one valid document
    /// it takes it with [`Splitter::take_ordinal`] and goes on at `end`;
    /// otherwise it calls [`Splitter::split`] at `start`, which finds the
    /// documents and errors there exactly as without the fast path.
    pub fn line(&mut self, buf: &[u8], pos: usize) -> Option<(usize, usize)> {
        let start = self.line_start(buf, pos)?;
        Some((start, line_end(buf, start)))
    }

    /// [`Splitter::line`]'s start alone, for a caller that finds the
    /// line's end itself (`loads_many`: where the line's document ends,
    /// see `LinesIndex::line_at`): `Some(start)`, `Some(n)` when only
    /// whitespace is left, `None` when `pos` is inside a line.
    pub fn line_start(&mut self, buf: &[u8], pos: usize) -> Option<usize> {
        let mut pos = pos;
        let mut line_start = pos == 0 || buf[pos - 1] == b'\n';
        if !self.started {
            self.started = true;
            if buf[pos..].starts_with(BOM) {
                pos += BOM.len();
            }
            line_start = true;
        }
        let start = skip_ws(buf, pos);
        // Only whitespace may stand between the last document and the
        // line's end.
        // (Not `memchr::memchr`: the gap is whitespace, after a document of a
        // stream of lines usually just its newline, and a `memchr` call
        // cost about 35 instructions per line there.)
        if !line_start && !buf[pos..start].contains(&b'\n') {
            return None;
        }
        Some(start)
    }

    /// The ordinal of a document the caller took itself (see
    /// [`Splitter::line_start`]).
    pub fn take_ordinal(&mut self) -> u64 {
        self.next_ordinal += 1;
        self.next_ordinal - 1
    }

    /// Split documents from `buf[pos..]`, appending them to `out`, and
    /// return the position after the last one handled. `at_end` says that
    /// `buf` holds the rest of the stream; without it, only whole lines are
    /// looked at, and a return without progress (nothing appended) means
    /// the document at the returned position needs more bytes. With it,
    /// the return is `buf.len()` exactly when nothing but whitespace is
    /// left.
    pub fn split(&mut self, buf: &[u8], pos: usize, at_end: bool, out: &mut Vec<Piece>) -> usize {
        let mut pos = pos;
        // Whether `pos` begins a line although the byte before it is not a
        // newline (the stream start, after a byte order mark).
        let mut fresh = false;
        if !self.started {
            if buf.len() - pos < BOM.len() && !at_end {
                return pos;
            }
            self.started = true;
            fresh = true;
            if buf[pos..].starts_with(BOM) {
                pos += BOM.len();
            }
        }
        if self.line_path {
            let before = out.len();
            pos = self.whole_lines(buf, pos, fresh, at_end, out);
            if out.len() > before {
                return pos;
            }
        }
        let n = buf.len();
        let mut window = self.region;
        loop {
            let p0 = skip_ws(buf, pos);
            if p0 == n {
                return n;
            }
            let want = p0.saturating_add(window);
            let (end, last) = if want >= n {
                if at_end {
                    (n, true)
                } else {
                    match memchr::memrchr(b'\n', &buf[p0..]) {
                        Some(i) => (p0 + i + 1, false),
                        None => return p0,
                    }
                }
            } else {
                match memchr::memrchr(b'\n', &buf[p0..want]) {
                    Some(i) => (p0 + i + 1, false),
                    None => {
                        window = window.saturating_mul(2);
                        continue;
                    }
                }
            };
            let before = out.len();
            let (q, stop) = self.region(buf, p0, end, last, false, out);
            if q > p0 || out.len() > before {
                return q;
            }
            match stop {
                Stop::End => return q,
                Stop::Stuck if want >= n => return p0,
                Stop::Stuck => window = window.saturating_mul(2),
                Stop::Dirty(_) | Stop::Scan(_) => {
                    return self.lines(buf, p0, end, at_end, out);
                }
            }
        }
    }

    /// The line path of [`Splitter::split`]: from `pos` (just after a
    /// document, or at the stream start), as long as the next line (up to
    /// its newline) holds exactly one valid document, that document is
    /// indexed on its own by the token walk ([`Index::build_tokens`]) and
    /// taken, up to about a region of bytes (the window unless
    /// [`Splitter::set_region`] made it less). Returns where it stopped: at
    /// the end of the last line taken, or `pos` when the first line was
    /// not one valid document (or not complete), for the window path to
    /// split from there.
    fn whole_lines(
        &mut self,
        buf: &[u8],
        pos: usize,
        fresh: bool,
        at_end: bool,
        out: &mut Vec<Piece>,
    ) -> usize {
        let n = buf.len();
        let limit = pos.saturating_add(self.region);
        let mut p = pos;
        while p < limit {
            let start = skip_ws(buf, p);
            if start == n {
                // Only whitespace left: the window path says so.
                return p;
            }
            // A document must begin its line (after one on the same line,
            // only the window path knows what follows).
            let line_start = (fresh && p == pos) || p == 0 || buf[p - 1] == b'\n';
            if !line_start && memchr::memchr(b'\n', &buf[p..start]).is_none() {
                return p;
            }
            let lazy = self.opts.lazy;
            let max_depth = self.opts.max_depth;
            // The token scan finds the line's end as it goes (up to a
            // window's worth of bytes); only a line it does not end (none
            // of that length, or the stream's last line) is searched for
            // its newline first.
            let reach = start.saturating_add(self.window).min(n);
            let (doc_end, end, built) =
                match Index::build_tokens_line(&buf[start..reach], max_depth, lazy, false) {
                    Ok(Some((index, escapes, e, newline))) => {
                        (start + e, start + newline, (index, escapes))
                    }
                    Ok(None) => return p,
                    Err(()) => {
                        let end = match memchr::memchr(b'\n', &buf[start..]) {
                            Some(i) => start + i,
                            None if at_end => n,
                            None => return p,
                        };
                        let mut doc_end = end;
                        while is_ws(buf[doc_end - 1]) {
                            doc_end -= 1;
                        }
                        let Some(built) =
                            Index::build_tokens(&buf[start..doc_end], max_depth, lazy, false)
                        else {
                            return p;
                        };
                        (doc_end, end, built)
                    }
                };
            self.push(out, start, doc_end, Ok(built));
            p = (end + 1).min(n);
        }
        p
    }

    /// Line mode: split `buf[p..end]` one line at a time (a document that
    /// continues extends its line region, up to the end of `buf`).
    fn lines(
        &mut self,
        buf: &[u8],
        mut p: usize,
        end: usize,
        at_end: bool,
        out: &mut Vec<Piece>,
    ) -> usize {
        let n = buf.len();
        while p < end {
            p = skip_ws(buf, p);
            if p >= end {
                break;
            }
            let mut e = eol(buf, p);
            // A stage-1 error on a later line of a region extended for a
            // document that continues: the region was cut before its line.
            let mut cap: Option<Error> = None;
            loop {
                let last = e == n && at_end;
                if e == n && !at_end && buf[n - 1] != b'\n' {
                    // The line is not complete yet.
                    return p;
                }
                let (q, stop) = self.region(buf, p, e, last, true, out);
                match stop {
                    Stop::End => {
                        p = q;
                        break;
                    }
                    Stop::Stuck if q > p => {
                        p = q;
                        break;
                    }
                    Stop::Stuck => {
                        if let Some(err) = cap.take() {
                            // The document runs into the line of that error.
                            let r = eol(buf, err.offset);
                            self.push(out, p, r, Err(err));
                            p = r;
                            break;
                        }
                        if e == n {
                            return p;
                        }
                        // Twice as many bytes, to whole lines.
                        e = eol(buf, (p + 2 * (e - p)).min(n - 1));
                    }
                    Stop::Dirty(err) | Stop::Scan(err) => {
                        // An error past the first line of the document at
                        // `q` is not its own unless the document reaches
                        // it: split up to the error's line first.
                        let cut =
                            memchr::memrchr(b'\n', &buf[..err.offset.min(n)]).map_or(0, |i| i + 1);
                        if cap.is_none() && cut > q && err.offset >= eol(buf, q) {
                            p = q;
                            e = cut;
                            cap = Some(err);
                            continue;
                        }
                        let r = eol(buf, q);
                        self.push(out, q, r, Err(err));
                        p = r;
                        break;
                    }
                }
            }
        }
        p
    }

    fn push(
        &mut self,
        out: &mut Vec<Piece>,
        start: usize,
        end: usize,
        result: Result<(Index, Vec<u32>), Error>,
    ) {
        out.push(Piece {
            ordinal: self.next_ordinal,
            start,
            end,
            result,
        });
        self.next_ordinal += 1;
    }

    /// Split the region `buf[a..b]` (whole lines, or the end of the stream
    /// when `last`) with one stage-1 pass.
    fn region(
        &mut self,
        buf: &[u8],
        a: usize,
        b: usize,
        last: bool,
        line_mode: bool,
        out: &mut Vec<Piece>,
    ) -> (usize, Stop) {
        let input = &buf[a..b];
        let mut scan = std::mem::take(&mut self.scan);
        let stop = self.region_scanned(input, a, last, line_mode, &mut scan, out);
        self.scan = scan;
        stop
    }

    fn region_scanned(
        &mut self,
        input: &[u8],
        a: usize,
        last: bool,
        line_mode: bool,
        scan: &mut Scan,
        out: &mut Vec<Piece>,
    ) -> (usize, Stop) {
        if let Err(e) = scan::scan(input, scan) {
            return (a, Stop::Scan(shift(e, a)));
        }
        let len = input.len();
        let s = &scan.structurals;
        let sentinel = s.len() - 1;
        // Structurals are trusted up to the line of the first control byte
        // inside a string (in line mode, only a newline breaks them).
        let (limit, dirty) = match scan.first_control {
            Some(c) if !line_mode || input[c as usize] == b'\n' => {
                let c = c as usize;
                let at = memchr::memrchr(b'\n', &input[..c]).map_or(0, |i| i + 1);
                (at, Error::new(ErrorKind::UnterminatedString, a + c))
            }
            _ => (len, Error::new(ErrorKind::UnterminatedString, a + len)),
        };
        let mut k = 0usize;
        let mut p = 0usize;
        let mut next_escape = 0usize;
        loop {
            p = skip_ws(input, p);
            if p == len {
                return (a + len, Stop::End);
            }
            if p >= limit {
                return (a + p, Stop::Dirty(dirty));
            }
            while (s[k] as usize) < p {
                k += 1;
            }
            let sk = s[k] as usize;
            let (end, k_end, complete) = if sk == p {
                match input[p] {
                    b'{' | b'[' => match closer(input, &s[..sentinel], k) {
                        Some(j) => (s[j] as usize + 1, j + 1, true),
                        None => (len, sentinel, false),
                    },
                    b'"' => match string_end(input, p) {
                        Some(c) => (c + 1, k + 1, true),
                        None => (len, sentinel, false),
                    },
                    // A stray `,` `:` `}` `]`: stage 2 says what is wrong.
                    _ => (p + 1, k + 1, true),
                }
            } else {
                // A number or literal: up to whitespace or a structural.
                let mut e = p;
                while e < sk && !is_ws(input[e]) {
                    e += 1;
                }
                (e, k, e < len || last)
            };
            if !complete && !last {
                // A document cut by the region's end is only worth more
                // bytes if what there is of it is a valid beginning (a line
                // truncated in the middle of a stream is not).
                match self.index_one(input, scan, p, len, k, sentinel, &mut next_escape) {
                    // Failing past its first line: a pretty-printed
                    // document, worth reading to its end (up to a window's
                    // worth) so that its other lines are not reported.
                    Err(e)
                        if e.kind != ErrorKind::UnexpectedEnd
                            && e.offset >= eol(input, p)
                            && len - p < self.window =>
                    {
                        return (a + p, Stop::Stuck)
                    }
                    Err(e) if e.kind != ErrorKind::UnexpectedEnd => {
                        self.push(out, a + p, a + len, Err(shift(e, a)));
                        p = eol(input, p);
                        continue;
                    }
                    _ => return (a + p, Stop::Stuck),
                }
            }
            if end > limit {
                return (a + p, Stop::Dirty(dirty));
            }
            let mut result = self.index_one(input, scan, p, end, k, k_end, &mut next_escape);
            // Documents are separated by whitespace: `[1]x` or `1"` is one
            // bad line, not a document and then an error.
            if result.is_ok() && end < len && !is_ws(input[end]) {
                result = Err(Error::new(ErrorKind::TrailingContent, end));
            }
            let failed = result.is_err();
            self.push(out, a + p, a + end, result.map_err(|e| shift(e, a)));
            if failed {
                // Abandoned at the end of its line, or of the line of its
                // closer when it spans lines (a pretty-printed document:
                // its other lines are not documents of their own).
                p = eol(input, p);
                if complete {
                    p = p.max(eol(input, end - 1));
                }
            } else {
                p = end;
                k = k_end;
            }
        }
    }

    /// Stage 2 for the document `input[p..end]`, whose structurals are
    /// `s[k..k_end]`. Error offsets are into `input`.
    #[allow(clippy::too_many_arguments)]
    fn index_one(
        &self,
        input: &[u8],
        scan: &Scan,
        p: usize,
        end: usize,
        k: usize,
        k_end: usize,
        next_escape: &mut usize,
    ) -> Result<(Index, Vec<u32>), Error> {
        let doc = &input[p..end];
        let strict_rebuild =
            |doc: &[u8]| Index::build_with_escapes(doc, &self.opts).map_err(|e| shift(e, p));
        // A control byte before this document leaves this document's own
        // unknown (stage 1 keeps only the first): scan it alone.
        if scan.first_control.is_some_and(|c| (c as usize) < p) {
            return strict_rebuild(doc);
        }
        let base = p as u32;
        let mut structurals = Vec::with_capacity(k_end - k + 1);
        structurals.extend(scan.structurals[k..k_end].iter().map(|&o| o - base));
        structurals.push((end - p) as u32);
        let esc = &scan.escapes;
        while *next_escape < esc.len() && (esc[*next_escape] as usize) < p {
            *next_escape += 1;
        }
        let first = *next_escape;
        while *next_escape < esc.len() && (esc[*next_escape] as usize) < end {
            *next_escape += 1;
        }
        let escapes = esc[first..*next_escape].iter().map(|&o| o - base).collect();
        let first_control = scan
            .first_control
            .filter(|&c| (c as usize) < end)
            .map(|c| c - base);
        let one = Scan {
            structurals,
            escapes,
            first_control,
            non_ascii: scan.non_ascii && !doc.is_ascii(),
            escapes_valid: false,
            utf8_valid: false,
        };
        match Index::from_scan(doc, one, &self.opts, self.check_scalars) {
            Ok(built) => Ok(built),
            Err(_) if !self.check_scalars => strict_rebuild(doc),
            Err(e) => Err(shift(e, p)),
        }
    }
}

fn shift(e: Error, by: usize) -> Error {
    Error::new(e.kind, e.offset + by)
}

/// The newline ending the line that holds byte `p` (its offset), or the
/// end of `input`.
#[inline]
pub(crate) fn line_end(input: &[u8], p: usize) -> usize {
    memchr::memchr(b'\n', &input[p..]).map_or(input.len(), |i| p + i)
}

/// Just after the newline ending the line that holds byte `p` (or the end).
fn eol(input: &[u8], p: usize) -> usize {
    (line_end(input, p) + 1).min(input.len())
}

/// The index of the structural that closes the container opened by
/// structural `k`, if `s` holds it. Without a branch per structural: four
/// depth changes are summed at a time and only a group in which the depth
/// may reach zero is looked at one by one.
fn closer(input: &[u8], s: &[u32], k: usize) -> Option<usize> {
    let d = |o: u32| i32::from(DEPTH[input[o as usize] as usize]);
    let mut depth = 0i32;
    let mut j = k;
    for g in s[k..].chunks_exact(4) {
        let (a, b, c, e) = (d(g[0]), d(g[1]), d(g[2]), d(g[3]));
        // The lowest depth within the group (each step is -1, 0 or +1,
        // so zero is reached only if the minimum is <= 0).
        let m1 = depth + a;
        let m2 = m1 + b;
        let m3 = m2 + c;
        let m4 = m3 + e;
        if m1.min(m2).min(m3.min(m4)) <= 0 {
            break;
        }
        depth = m4;
        j += 4;
    }
    while j < s.len() {
        depth += d(s[j]);
        if depth == 0 {
            return Some(j);
        }
        j += 1;
    }
    None
}

/// The closing quote of the string opened at `open`, if any.
fn string_end(input: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        i += memchr::memchr2(b'"', b'\\', &input[i..])?;
        if input[i] == b'"' {
            return Some(i);
        }
        i += 2;
        if i > input.len() {
            return None;
        }
    }
}

/// Line and column (1-based, in bytes, as `JSONDecodeError` counts them) of
/// stream offsets, counted incrementally: offsets are asked for in
/// increasing order, and bytes may be dropped once counted.
#[derive(Debug, Clone, Copy)]
pub struct LineCounter {
    /// Stream offset counted up to.
    pos: u64,
    /// Line number at `pos` (1-based).
    line: u64,
    /// Stream offset of the first byte of that line.
    line_start: u64,
}

impl Default for LineCounter {
    fn default() -> Self {
        LineCounter {
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }
}

impl LineCounter {
    /// Count up to stream offset `to`; `buf` holds the stream from offset
    /// `base` on, and `base <= self.pos` unless nothing is left to count.
    pub fn advance(&mut self, buf: &[u8], base: u64, to: u64) {
        if to <= self.pos {
            return;
        }
        let from = self.pos.saturating_sub(base) as usize;
        let upto = ((to - base) as usize).min(buf.len());
        if from < upto {
            let seg = &buf[from..upto];
            let nl = memchr::memchr_iter(b'\n', seg).count() as u64;
            if nl > 0 {
                self.line += nl;
                let lastnl = memchr::memrchr(b'\n', seg).unwrap_or(0);
                self.line_start = base + (from + lastnl) as u64 + 1;
            }
        }
        self.pos = to;
    }

    /// Line and column of stream offset `at` (counting up to it first).
    pub fn locate(&mut self, buf: &[u8], base: u64, at: u64) -> (u64, u64) {
        self.advance(buf, base, at);
        (self.line, at.saturating_sub(self.line_start) + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_all(input: &[u8], window: usize, lazy: bool) -> Vec<Piece> {
        let mut sp = Splitter::new(
            Options {
                lazy,
                max_depth: 16,
            },
            true,
            window,
        );
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < input.len() {
            let before = out.len();
            let q = sp.split(input, pos, true, &mut out);
            assert!(q > pos || out.len() > before, "no progress at {pos}");
            pos = q;
        }
        out
    }

    /// Feed `input` to `sp` in chunks of `chunk` bytes, as a reader does (the
    /// unsplit rest carried into the next buffer), handing each piece and
    /// its buffer's stream offset to `each`.
    fn feed_chunked(
        sp: &mut Splitter,
        input: &[u8],
        chunk: usize,
        mut each: impl FnMut(Piece, usize),
    ) {
        let mut out = Vec::new();
        let mut buf: Vec<u8> = Vec::new();
        let (mut base, mut fed, mut pos) = (0usize, 0usize, 0usize);
        loop {
            let at_end = fed == input.len();
            let q = sp.split(&buf, pos, at_end, &mut out);
            let progressed = q > pos || !out.is_empty();
            for piece in out.drain(..) {
                each(piece, base);
            }
            pos = q;
            if at_end && pos == buf.len() {
                return;
            }
            if !progressed || pos == buf.len() {
                if at_end {
                    continue;
                }
                let take = chunk.min(input.len() - fed);
                buf.drain(..pos);
                base += pos;
                pos = 0;
                buf.extend_from_slice(&input[fed..fed + take]);
                fed += take;
            }
        }
    }

    /// The same split, the stream fed in chunks of `chunk` bytes.
    fn split_chunked(input: &[u8], chunk: usize) -> Vec<(usize, usize, Option<Error>)> {
        let mut sp = Splitter::new(Options::default(), true, 64);
        let mut res = Vec::new();
        feed_chunked(&mut sp, input, chunk, |piece, base| {
            res.push((
                base + piece.start,
                base + piece.end,
                piece.result.err().map(|e| shift(e, base)),
            ));
        });
        res
    }

    fn spans(pieces: &[Piece]) -> Vec<(usize, usize, Option<ErrorKind>)> {
        pieces
            .iter()
            .map(|p| (p.start, p.end, p.result.as_ref().err().map(|e| e.kind)))
            .collect()
    }

    #[test]
    fn lines_and_whitespace() {
        let input = b"\xEF\xBB\xBF{\"a\": 1}\n\n  [1, 2]\n\"s\\\"{\" 12 true\n{\"b\": {\"c\": []}}";
        for window in [64, 1 << 20] {
            let got = split_all(input, window, false);
            let texts: Vec<&[u8]> = got.iter().map(|p| &input[p.start..p.end]).collect();
            assert_eq!(
                texts,
                vec![
                    &b"{\"a\": 1}"[..],
                    b"[1, 2]",
                    b"\"s\\\"{\"",
                    b"12",
                    b"true",
                    b"{\"b\": {\"c\": []}}"
                ]
            );
            assert!(got.iter().all(|p| p.result.is_ok()));
            assert_eq!(
                got.iter().map(|p| p.ordinal).collect::<Vec<_>>(),
                (0..6).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn an_unterminated_string_does_not_swallow_the_next_lines() {
        let input = b"{\"a\": 1}\n{\"a\": \"x}\n{\"b\": 2}\n{\"c\": \"}\n[3]\n";
        for window in [64, 1 << 20] {
            let got = spans(&split_all(input, window, false));
            assert_eq!(got.len(), 5, "{got:?}");
            assert_eq!(got[0], (0, 8, None));
            assert_eq!(got[1].2, Some(ErrorKind::UnterminatedString));
            assert_eq!(got[2], (19, 27, None));
            assert_eq!(got[3].2, Some(ErrorKind::UnterminatedString));
            assert_eq!(got[4], (37, 40, None));
        }
    }

    #[test]
    fn bad_lines_are_reported_and_skipped() {
        let deep = format!("{}{}", "[".repeat(20), "]".repeat(20));
        let input = format!("{{\"a\": 1}}\n{deep}\n\"XYZ\"\n[1,]\n\\\n{{\"z\": 0}}\n{{\"t\": ");
        let mut bytes = input.into_bytes();
        let bad = bytes.windows(3).position(|w| w == b"XYZ").unwrap();
        bytes[bad..bad + 3].copy_from_slice(b"\xff\xff\xff");
        let got = spans(&split_all(&bytes, 1 << 20, false));
        let kinds: Vec<_> = got.iter().map(|g| g.2).collect();
        assert_eq!(
            kinds,
            vec![
                None,
                Some(ErrorKind::DepthExceeded),
                Some(ErrorKind::InvalidUtf8),
                Some(ErrorKind::ExpectedValue),
                Some(ErrorKind::StrayBackslash),
                None,
                Some(ErrorKind::UnexpectedEnd),
            ]
        );
    }

    #[test]
    fn chunked_equals_whole() {
        let mut input = Vec::new();
        for i in 0..200 {
            input.extend_from_slice(
                format!(
                    "{{\"id\": {i}, \"s\": \"{}\", \"a\": [1, {{\"b\": null}}]}}\n",
                    "x".repeat(i % 37)
                )
                .as_bytes(),
            );
            if i % 17 == 0 {
                input.extend_from_slice(b"{\"bad\": \"open\n");
            }
            if i % 23 == 0 {
                input.extend_from_slice(b"{\n  \"pretty\": [\n    1\n  ]\n}\n\n");
            }
        }
        let whole: Vec<_> = split_all(&input, 64, false)
            .into_iter()
            .map(|p| (p.start, p.end, p.result.err()))
            .collect();
        for chunk in [1, 7, 64, 1000, input.len()] {
            assert_eq!(split_chunked(&input, chunk), whole, "chunk {chunk}");
        }
        assert_eq!(whole.iter().filter(|w| w.2.is_some()).count(), 12);
    }

    #[test]
    fn a_bad_pretty_printed_document_is_one_error() {
        let input = b"{\n  \"a\": [1,],\n  \"b\": 2\n}\n{\"c\": 3}\n[\n  1,\n  2 3\n]\n[4]\n";
        for window in [64, 1 << 20] {
            let got = spans(&split_all(input, window, false));
            let kinds: Vec<_> = got.iter().map(|g| g.2).collect();
            let e = Some(ErrorKind::ExpectedValue);
            assert_eq!(
                kinds,
                vec![e, None, Some(ErrorKind::ExpectedArrayCommaOrEnd), None],
                "{got:?}"
            );
            assert_eq!(&input[got[1].0..got[1].1], b"{\"c\": 3}");
            assert_eq!(&input[got[3].0..got[3].1], b"[4]");
        }
    }

    #[test]
    fn documents_need_whitespace_between_them() {
        let input = b"[1]x\n{}{}\n1\"\n[2]\n";
        let got = spans(&split_all(input, 1 << 20, false));
        let kinds: Vec<_> = got.iter().map(|g| g.2).collect();
        let t = Some(ErrorKind::TrailingContent);
        assert_eq!(kinds, vec![t, t, Some(ErrorKind::UnterminatedString), None]);
        assert_eq!(got[0], (0, 3, t));
        assert_eq!(got[3], (13, 16, None));
    }

    #[test]
    fn the_line_fast_path_finds_lines_and_bows_out_inside_one() {
        let buf = b"\xEF\xBB\xBF [1]\n\n  {\"a\": 2} \r\n3 4\n \n";
        let mut sp = Splitter::new(Options::default(), false, 64);
        assert_eq!(sp.line(buf, 0), Some((4, 7)));
        assert_eq!(sp.take_ordinal(), 0);
        // At the newline ending the line, or just after it.
        assert_eq!(sp.line(buf, 7), Some((11, 21)));
        assert_eq!(sp.line(buf, 8), Some((11, 21)));
        assert_eq!(sp.take_ordinal(), 1);
        assert_eq!(sp.line(buf, 22), Some((22, 25)));
        // After the first document of a line, only the splitter knows.
        assert_eq!(sp.line(buf, 23), None);
        assert_eq!(sp.line(buf, 25), Some((buf.len(), buf.len())));
        let mut out = Vec::new();
        assert_eq!(sp.split(buf, 22, true, &mut out), buf.len());
        let ords: Vec<_> = out.iter().map(|p| (p.ordinal, p.start, p.end)).collect();
        assert_eq!(ords, vec![(2, 22, 23), (3, 24, 25)]);
    }

    /// The line path finds the same documents, indexes and errors as the
    /// window path alone, whole and in chunks, strict and lazy; so does the
    /// window path from a smaller first region.
    #[test]
    fn the_line_path_changes_nothing() {
        let mut input = b"\xEF\xBB\xBF".to_vec();
        for i in 0..420 {
            let line = match i % 14 {
                0 => {
                    format!("{{\"id\": {i}, \"a\": [1, {{\"b\": null}}], \"s\": \"\\u00e9\"}}\r\n")
                }
                1 => "{\n  \"pretty\": [\n    1\n  ]\n}\n\n".to_string(),
                2 => format!("[{i}, tru]\n"),
                3 => format!("{i} \"two\"\n"),
                4 => "{\"open\": \"x\n".to_string(),
                5 => "   \t\n".to_string(),
                6 => format!("{}{}\n", "[".repeat(300), "]".repeat(300)),
                7 => "\"\u{e9}\"   \n".to_string(),
                8 => "{\"a\": 1} {\"b\": 2}\n".to_string(),
                // Non-ASCII after a short ASCII line: the short line's scan
                // block holds it (its non_ascii hint may be set).
                10 => "[\"\u{e9}\u{20ac}\"]\n".to_string(),
                // Lines of 61 to 68 bytes: the newline at and around the
                // end of a 64-byte block of the line's scan.
                11 => format!("{{\"p\": \"{}\"}}\n", "z".repeat(52 + i % 8)),
                // Tabs and a carriage return outside strings.
                12 => "[1,\t2]\t\r\n".to_string(),
                // Escapes just before the line's end.
                13 => format!("{{\"e\": \"{}\\\\\\\"\"}}\n", "w".repeat(48 + i % 16)),
                _ => format!("{{\"k\": \"{}\"}}\n", "y".repeat(i % 50)),
            };
            input.extend_from_slice(line.as_bytes());
        }
        input.extend_from_slice(b"[1, 2]");
        let run = |line_path: bool, lazy: bool, chunk: usize, region: usize| {
            let opts = Options {
                lazy,
                max_depth: 1024,
            };
            let mut sp = Splitter::new(opts, true, 256);
            sp.line_path = line_path;
            sp.set_region(region);
            let mut res = Vec::new();
            feed_chunked(&mut sp, &input, chunk, |piece, base| {
                let r = piece.result.map(|(ix, _)| {
                    let t: Vec<_> = ix
                        .containers
                        .iter()
                        .map(|c| (c.close, c.next, c.len))
                        .collect();
                    (ix.structurals.clone(), t, ix.lazy, ix.non_ascii)
                });
                res.push((
                    piece.ordinal,
                    base + piece.start,
                    base + piece.end,
                    r.map_err(|e| shift(e, base)),
                ));
            });
            res
        };
        // Equal pieces, but `non_ascii` is a hint the line scan may set
        // from bytes after the newline in its last block (src/scan/mod.rs,
        // `scan_tokens_line`): it must be set wherever the reference sets
        // it, and may be set where it does not.
        #[allow(clippy::type_complexity)]
        fn same<O, S, T, L, E>(
            got: &[(O, usize, usize, Result<(S, T, L, bool), E>)],
            want: &[(O, usize, usize, Result<(S, T, L, bool), E>)],
            what: &str,
        ) where
            O: PartialEq + std::fmt::Debug,
            S: PartialEq + std::fmt::Debug,
            T: PartialEq + std::fmt::Debug,
            L: PartialEq + std::fmt::Debug,
            E: PartialEq + std::fmt::Debug,
        {
            assert_eq!(got.len(), want.len(), "{what}");
            for (g, w) in got.iter().zip(want) {
                assert_eq!((&g.0, g.1, g.2), (&w.0, w.1, w.2), "{what}");
                match (&g.3, &w.3) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!((&a.0, &a.1, &a.2), (&b.0, &b.1, &b.2), "{what} at {}", w.1);
                        assert!(a.3 || !b.3, "{what} at {}: non_ascii lost", w.1);
                    }
                    (Err(a), Err(b)) => assert_eq!(a, b, "{what} at {}", w.1),
                    _ => panic!("{what} at {}: {:?} vs {:?}", w.1, g.3.is_ok(), w.3.is_ok()),
                }
            }
        }
        for lazy in [false, true] {
            let want = run(false, lazy, input.len(), 256);
            assert!(want.iter().filter(|r| r.3.is_err()).count() >= 27);
            for chunk in [input.len(), 100, 4096] {
                same(
                    &run(true, lazy, chunk, 256),
                    &want,
                    &format!("lazy {lazy} chunk {chunk}"),
                );
            }
            // A smaller first region (`loads_many`'s fallback; with the
            // line path, `parse_many`'s regions of a small stream) changes
            // where calls return, nothing else.
            for region in [64, 100] {
                for chunk in [input.len(), 100] {
                    for line_path in [false, true] {
                        let got = run(line_path, lazy, chunk, region);
                        same(
                            &got,
                            &want,
                            &format!(
                                "lazy {lazy} chunk {chunk} region {region} line path {line_path}"
                            ),
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_line_path_stops_after_a_region() {
        // 40 lines of 20 bytes: a region of 64 bytes takes 4 of them
        // (up to the first line that ends at or past the region).
        let line = b"{\"k\": \"abcdefghij\"}\n";
        assert_eq!(line.len(), 20);
        if !crate::index::token_scan_runs(line) {
            return; // no line path here: the window path splits instead
        }
        let input = line.repeat(40);
        let opts = Options {
            lazy: false,
            max_depth: 16,
        };
        let mut sp = Splitter::new(opts, true, 1 << 20);
        let mut out = Vec::new();
        assert_eq!(sp.split(&input, 0, true, &mut out), input.len());
        assert_eq!(out.len(), 40);
        let mut sp = Splitter::new(opts, true, 1 << 20);
        sp.set_region(64);
        out.clear();
        assert_eq!(sp.split(&input, 0, true, &mut out), 80);
        assert_eq!(out.len(), 4);
        assert_eq!(sp.split(&input, 80, true, &mut out), 160);
        assert_eq!(out.last().map(|p| (p.ordinal, p.start)), Some((7, 140)));
    }

    #[test]
    fn lines_are_counted() {
        let buf = b"ab\ncd\n\nef";
        let mut lc = LineCounter::default();
        assert_eq!(lc.locate(buf, 0, 1), (1, 2));
        assert_eq!(lc.locate(buf, 0, 4), (2, 2));
        assert_eq!(lc.locate(&buf[4..], 4, 8), (4, 2));
    }
}
