//! `parse_many`, `open_many`, `loads_many`: many documents from one buffer
//! or file (the splitting is the core's, [`crate::many`]).
//!
//! A `DocIterator` asks the core's [`Splitter`] for the documents of the
//! next window (about `chunk_size` bytes: one stage-1 pass, then each
//! document's own stage 2, all with the GIL released) and hands them out
//! one by one. What a `Doc` keeps alive: its own index, and the input
//! object (`parse_many`; no copy) or the buffer its document was read into
//! (`open_many`: at most `chunk_size` plus the document carried over).
//! Files are read `chunk_size` bytes at a time; a document cut by the end
//! of a chunk is carried over into the next buffer, so memory is bounded
//! by the chunk size plus the largest document (two buffers, reused once
//! no `Doc` holds them; each `Doc` kept keeps its chunk alive).
//!
//! `parse_many` splits on a thread of its own, a few windows ahead of the
//! documents handed out, once its caller lags behind the inline split
//! ([`worker`]: the rule and why, the thread's cores trading cache lines,
//! are there): the pieces are the same, only the calling thread's share
//! of the work changes (on the 100 MB batch file, reading two fields of
//! every line took 0.3x the calling thread's CPU time and 1.1x the
//! process's, LTO builds, A/B against the inline split). The index
//! vectors of the documents dropped come back to the next split
//! ([`crate::index::Returns`]); once the thread can no longer start, the
//! rest of the stream is split in regions of [`SMALL_REGION`] bytes, so
//! that a stream of about one window gets them back too.
//!
//! `loads_many` first tries each line on its own ([`Splitter::line_start`]):
//! when the line is one valid document, `loads`' own builder builds it
//! from the line's tokens, with no structural index of its own. The
//! tokens come from one stage-1 scan per window of about 16 KiB of whole
//! lines ([`LinesIndex`]: each line's document then walked on the window's
//! tokens from the line's first, its end where the document ends);
//! a window stage 1 rejects (a control byte in a string, an unterminated
//! string, a stray backslash, a bad escape) falls back to a token scan of
//! each line on its own ([`loads::from_tokens`]). On
//! amazon_cellphones.ndjson (793 lines), one scan per window instead of one
//! per line cut the instruction-cache misses per call from 12.3 k to 1.5 k
//! and the instructions by 3% (callgrind, LTO builds). Just after a line it
//! took, the line path guesses the next line's end from the last line's
//! token count ([`LinesIndex::line_end`]: lines of one shape), with no
//! search of the bytes for the newline nor of the tokens for the line's
//! last; a guess that does not hold falls back to the searches (on
//! amazon_cellphones.ndjson, 3.86 M instructions per call became 3.69 M;
//! on the generated 1 MB batch file, whose lines differ, 14.40 M became
//! 14.35 M: callgrind, LTO builds). Only a line that path
//! does not accept (an error, several documents, part of a pretty-printed
//! one) goes to the splitter, which then reports exactly what it would
//! have without the line path. It gets a region of about 1 KiB of whole
//! lines from that line ([`Splitter::set_region`]), doubled while the line
//! path keeps failing right after it (pretty-printed documents), up to the
//! window: one bad line near the start of amazon_cellphones.ndjson (three
//! copies, 833 KB) sent the whole rest of it down the exact path, +41%
//! instructions over the file without it; with the small region, +1.3%
//! (a stream of pretty-printed documents: +1.7%, callgrind, fast builds).
//! The line path runs with the GIL held (it builds Python objects as it
//! goes); measured on the batch file and
//! amazon_cellphones with the collector paused, 10-30% less CPU than
//! splitting every window first. Its builder shares short string values
//! between documents (one `str` per distinct value of up to 48 bytes, see
//! `loads/key_cache.rs`; with values up to 16 bytes, on the 20 MB batch
//! file, about 0.7x the CPU time per call and 0.75x the time to free the
//! result). `loads_many`'s loop
//! calls the line path directly ([`DocIterator::next_eager`], the splitter
//! only behind it) and makes its list at the final size once the documents
//! are built (on amazon_cellphones.ndjson, with the direct unescaping of
//! `loads`' builder: 0.95x the instructions, callgrind, and about 0.8x the
//! time per call).

mod worker;

use super::doc::{Doc, Parsed};
use super::input::{Input, Origin};
use super::loads;
use crate::error::Error;
use crate::index::eager::{Line, LinesIndex};
use crate::index::{Index, Options, Returns};
use crate::many::{line_end, LineCounter, Piece, Splitter, WINDOW};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyTuple, PyType};
use std::collections::VecDeque;
use std::io::Read;
use std::sync::Arc;
use worker::{Pace, Policy, Worker, WORKER_MIN};

static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The first region (bytes of whole lines) the splitter gets from
/// `loads_many` after a line the line path did not take: that line and a
/// few after it, not a whole window (see [`DocIterator::next_value`]).
const FALLBACK_MIN: usize = 1024;

/// Windows of in-memory input smaller than this are split with the GIL held.
const DETACH_MIN: usize = 64 * 1024;

/// `parse_many` splits the rest of a stream this many bytes of whole lines
/// at a time once its splitting thread can no longer start (fewer than
/// `WORKER_MIN` bytes left: a stream of a window or a little more from
/// its start), so that the index vectors of the documents dropped
/// meanwhile serve the next region's (see [`DocIterator::fill`]).
const SMALL_REGION: usize = 128 * 1024;

/// Where the bytes come from.
enum Source {
    /// `parse_many` / `loads_many`: the whole stream, held without a copy.
    Memory(Arc<Input>),
    /// `open_many`: a file read in chunks.
    File(FileSource),
}

struct FileSource {
    reader: Reader,
    /// The stream from offset `base` on, as far as it has been read (a
    /// `Vec`, so that a chunk is read in place, never copied).
    buf: Arc<Vec<u8>>,
    /// The buffer before `buf`, kept while a `Doc` may still hold it (the
    /// loop variable of `for doc in open_many(...)` holds the last document
    /// of a chunk while the next chunk is read): once that `Doc` is gone,
    /// it is reused.
    spare: Option<Arc<Vec<u8>>>,
    base: u64,
    /// Line and column of the stream offset `base`.
    base_line_col: (u64, u64),
    eof: bool,
    chunk: usize,
    /// What the caller passed (for `JSONDecodeError.doc`).
    object: Py<PyAny>,
}

enum Reader {
    File(std::fs::File),
    Python(Py<PyAny>),
}

/// Iterator of the documents of a stream (`parse_many`, `open_many`).
/// `.errors` lists what `errors="skip"` skipped.
#[pyclass(module = "qjson")]
pub struct DocIterator {
    /// `parse_many`'s splitting thread, if it has one (see `worker.rs`).
    /// First of the fields, so that it is dropped (its thread joined)
    /// before `source`, whose bytes the thread reads.
    worker: Option<Worker>,
    source: Source,
    splitter: Splitter,
    /// Position in the current buffer up to which documents were split.
    pos: usize,
    pending: VecDeque<Piece>,
    lines: LineCounter,
    errors: Py<PyList>,
    skip: bool,
    /// Python objects (`loads_many`) rather than `Doc`s.
    eager: bool,
    /// `loads_many`'s token index of a window of lines (see
    /// [`DocIterator::next_line`]).
    lines_index: Option<LinesIndex>,
    /// The first region the splitter gets when `loads_many`'s line path
    /// hands it a line (see [`DocIterator::next_value`]).
    fallback: usize,
    /// Whether the line path took the last document (the iterator's
    /// position is then just after that line, see
    /// [`DocIterator::next_line`]).
    chained: bool,
    /// `parse_many`: whether the caller lags behind the inline split, when
    /// the splitting thread starts (see `worker.rs`).
    pace: Pace,
    /// `parse_many` split inline: the way back of the index vectors of the
    /// documents dropped here to this thread's next windows (the same
    /// list as the splitting thread's, see `index::Returns`: without it,
    /// each window's documents were built in fresh vectors, as only the
    /// last dropped index is kept for the next build).
    returns: Option<Arc<Returns>>,
}

/// Close `parse_many`'s inline list of returned vectors, if any (see
/// [`DocIterator::returns`]), and free those this thread holds: documents
/// dropped from then on free theirs.
fn close_returns(r: &mut Option<Arc<Returns>>) {
    if let Some(r) = r.take() {
        r.close_here();
    }
}

impl Drop for DocIterator {
    fn drop(&mut self) {
        // (The list is only ever locked on this thread, also in a forked
        // child: `close` cannot wait for a lock nobody releases.)
        close_returns(&mut self.returns);
    }
}

/// What [`DocIterator::next_line`] found.
enum Fast {
    Value(Py<PyAny>),
    /// Only whitespace is left.
    End,
    /// The exact path ([`Splitter::split`]) takes over at the iterator's
    /// position.
    Exact,
}

fn skip_mode(errors: &str) -> PyResult<bool> {
    match errors {
        "raise" => Ok(false),
        "skip" => Ok(true),
        _ => Err(PyValueError::new_err(format!(
            "errors must be \"raise\" or \"skip\", not {errors:?}"
        ))),
    }
}

impl DocIterator {
    fn new(
        py: Python<'_>,
        source: Source,
        opts: Options,
        eager: bool,
        window: usize,
        errors: &str,
    ) -> PyResult<DocIterator> {
        Ok(DocIterator {
            worker: None,
            source,
            splitter: Splitter::new(opts, !eager, window),
            pos: 0,
            pending: VecDeque::new(),
            lines: LineCounter::default(),
            errors: PyList::empty(py).unbind(),
            skip: skip_mode(errors)?,
            eager,
            lines_index: None,
            fallback: FALLBACK_MIN,
            chained: false,
            pace: Pace::default(),
            returns: None,
        })
    }

    /// Split the next window into `pending`; `false` at the end of the stream.
    fn fill(&mut self, py: Python<'_>) -> PyResult<bool> {
        let mut out = Vec::new();
        loop {
            let pos = self.pos;
            let sp = &mut self.splitter;
            match &mut self.source {
                Source::Memory(input) => {
                    let bytes = input.bytes();
                    if let Some(w) = &mut self.worker {
                        if w.orphaned() {
                            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                                "qjson: a parse_many iterator cannot go on in a process \
                                 forked while it was splitting; make a new one",
                            ));
                        }
                        let Some(batch) = py.detach(|| w.next()) else {
                            if w.failed() {
                                return Err(pyo3::exceptions::PySystemError::new_err(
                                    "qjson: the parse_many splitting thread failed",
                                ));
                            }
                            self.pos = bytes.len();
                            return Ok(false);
                        };
                        self.pos = batch.pos;
                        self.pending.extend(batch.pieces);
                        return Ok(true);
                    }
                    if pos >= bytes.len() {
                        close_returns(&mut self.returns);
                        return Ok(false);
                    }
                    // The thread takes over (with this splitter's state)
                    // once the caller lags behind the inline split.
                    if !self.eager && self.pace.wants_thread(bytes.len() - pos) {
                        // (The thread gets a list of its own.)
                        close_returns(&mut self.returns);
                        // SAFETY: `input` (held by `self.source`) keeps the
                        // bytes alive and unchanged, and the worker is
                        // dropped before it (field order of `DocIterator`).
                        if let Some(w) = unsafe { Worker::start(bytes, pos, sp) } {
                            self.worker = Some(w);
                            continue;
                        }
                    }
                    let left = bytes.len() - pos;
                    if !self.eager {
                        // The vectors of this stream's documents dropped
                        // since the last window, for this one's (once the
                        // stream has a next window to use them). Once the
                        // thread can no longer start (see `worker.rs`: its
                        // rule times whole windows), the rest is split a
                        // region at a time: else a stream of a window or
                        // a little more had all its documents built in
                        // fresh vectors (two per line, about 1,000
                        // instructions a line for their malloc and free).
                        if left < WORKER_MIN {
                            sp.set_region(SMALL_REGION);
                        }
                        match &self.returns {
                            Some(r) => r.take_here(),
                            None if left > SMALL_REGION => {
                                let r = Returns::new();
                                r.drop_here();
                                self.returns = Some(r);
                            }
                            None => {}
                        }
                    }
                    let split = |sp: &mut Splitter, out: &mut Vec<Piece>| {
                        if left >= DETACH_MIN {
                            py.detach(|| sp.split(bytes, pos, true, out))
                        } else {
                            sp.split(bytes, pos, true, out)
                        }
                    };
                    // Timed only while the thread may still start (see
                    // `worker.rs`; the CPU clock is a system call).
                    self.pos = if left >= WORKER_MIN {
                        self.pace.split(|| split(sp, &mut out))
                    } else {
                        split(sp, &mut out)
                    };
                    self.pending.extend(out);
                    return Ok(true);
                }
                Source::File(f) => {
                    // As an in-memory stream's inline split: the vectors
                    // of the documents dropped since the last split, for
                    // this one's, from the second chunk on (a file of one
                    // chunk has no next split to use them).
                    if !self.eager {
                        match &self.returns {
                            Some(r) => r.take_here(),
                            None if f.base > 0 => {
                                let r = Returns::new();
                                r.drop_here();
                                self.returns = Some(r);
                            }
                            None => {}
                        }
                    }
                    let (buf, eof) = (&f.buf, f.eof);
                    let q = py.detach(|| sp.split(buf, pos, eof, &mut out));
                    let progress = q > pos || !out.is_empty();
                    self.pos = q;
                    self.pending.extend(out.drain(..));
                    if progress {
                        return Ok(true);
                    }
                    if f.eof {
                        close_returns(&mut self.returns);
                        return Ok(false);
                    }
                    // Count the lines of what is dropped, then read on.
                    self.lines.advance(&f.buf, f.base, f.base + q as u64);
                    let read = refill(py, f, q);
                    f.base_line_col = self.lines.locate(&f.buf, f.base, f.base);
                    self.pos = 0;
                    read?;
                }
            }
        }
    }

    /// The stream's bytes from `base` on, `base`, and the object for errors.
    fn view(&self) -> (&[u8], u64, &Py<PyAny>) {
        match &self.source {
            Source::Memory(input) => (input.bytes(), 0, input.object()),
            Source::File(f) => (&f.buf, f.base, &f.object),
        }
    }

    /// `JSONDecodeError` for `e` (offset into the current buffer) in document `ordinal`.
    fn error(&mut self, py: Python<'_>, e: Error, ordinal: u64) -> PyErr {
        let (buf, base, object) = match &self.source {
            Source::Memory(input) => (input.bytes(), 0, input.object()),
            Source::File(f) => (&f.buf[..], f.base, &f.object),
        };
        let at = base + e.offset as u64;
        let (lineno, colno) = self.lines.locate(buf, base, at);
        let make = || -> PyResult<PyErr> {
            let ty = DECODE_ERROR.import(py, "qjson._errors", "JSONDecodeError")?;
            let exc = ty.call1((e.kind.message(), object, at, lineno, colno))?;
            exc.setattr("doc_index", ordinal)?;
            Ok(PyErr::from_value(exc))
        };
        make().unwrap_or_else(|err| err)
    }

    /// The Python value of a good document.
    fn value(
        &self,
        py: Python<'_>,
        piece: &Piece,
        index: Index,
        escapes: &[u32],
        cache: Option<&mut loads::KeyCache>,
        origin: Origin,
    ) -> Result<Py<PyAny>, Option<Error>> {
        if self.eager {
            let (buf, _, _) = self.view();
            let bytes = &buf[piece.start..piece.end];
            return match loads::from_index(py, bytes, &index, escapes, cache, true) {
                // SAFETY: `from_index` returns a new (owned) reference.
                Ok(p) => Ok(unsafe { Bound::from_owned_ptr(py, p) }.unbind()),
                Err(true) => {
                    let opts = Options {
                        lazy: false,
                        max_depth: usize::MAX,
                    };
                    let e = Index::build(bytes, &opts).err();
                    Err(e.map(|e| Error::new(e.kind, e.offset + piece.start)))
                }
                Err(false) => Err(None),
            };
        }
        let input = match &self.source {
            Source::Memory(input) => Input::slice_of(py, input, piece.start, piece.end, origin),
            Source::File(f) => Input::slice_of_shared(
                &f.buf,
                piece.start,
                piece.end,
                f.object.clone_ref(py),
                origin,
            ),
        };
        let doc = Doc::from_parsed(Parsed::new_arc(input, index));
        Py::new(py, doc).map(Py::into_any).map_err(|e| {
            e.restore(py);
            None
        })
    }

    /// Where the document of `piece` begins in the stream (for errors its
    /// lazy reads meet: lines are counted then, in the buffer it holds).
    fn origin(&self, piece: &Piece) -> Origin {
        let mut o = Origin {
            doc_index: piece.ordinal,
            at: piece.start as u64,
            in_buf: piece.start,
            line: 0,
            col: 0,
        };
        if let Source::File(f) = &self.source {
            o.at += f.base;
            (o.line, o.col) = f.base_line_col;
        }
        o
    }

    /// With the splitting thread: start fetching what the next pending
    /// document's first reads touch (the first lines of its structurals,
    /// of its container table and of its bytes), all written or last read
    /// on the thread's core, while the caller works on this one. Without
    /// it, each is a cache miss from the other core when the caller gets
    /// there (many_bench's read row, 20 MB, LTO: the calling thread's CPU
    /// 2.26 -> 2.10 ms, the process's 6.73 -> 6.48 ms, medians of 15
    /// interleaved rounds on a loaded machine; inline, no change).
    #[inline]
    fn prefetch_next(&self) {
        let Some(next) = self.pending.front() else {
            return;
        };
        if let Ok((ix, _)) = &next.result {
            let (buf, _, _) = self.view();
            prefetch(&ix.structurals, 256);
            prefetch(&ix.containers, 128);
            prefetch(buf.get(next.start..next.end).unwrap_or(&[]), 256);
        }
    }

    /// `loads_many`'s line fast path (see [`Splitter::line_start`]): the line at
    /// `self.pos` built by `loads`' own fast path when it is one valid
    /// document; else [`Fast::Exact`], and the splitter takes over there.
    fn next_line(&mut self, py: Python<'_>, cache: Option<&mut loads::KeyCache>) -> PyResult<Fast> {
        let Source::Memory(input) = &self.source else {
            return Ok(Fast::Exact);
        };
        let bytes = input.bytes();
        let lines = self.lines_index.get_or_insert_with(LinesIndex::new);
        // Just after a line the line path took, the next line and its end
        // from the tokens when the lines have one shape; else searched.
        let guess = if std::mem::take(&mut self.chained) {
            lines.line_end(bytes)
        } else {
            None
        };
        // Else the line's end is where its document ends (see
        // `LinesIndex::line_at`), not searched for first: on the generated
        // batch file (lines of ~5.7 KB, of many shapes) a `memchr` per
        // line read each line once more (callgrind: 12,816,528 ->
        // 12,705,474 instructions per call, 1 MB, LTO).
        let max_depth = self.splitter.options().max_depth;
        let (start, end, line) = match guess {
            Some((start, end)) => (start, end, lines.guessed_line(bytes, start, end, max_depth)),
            None => {
                let Some(start) = self.splitter.line_start(bytes, self.pos) else {
                    return Ok(Fast::Exact);
                };
                if start == bytes.len() {
                    self.pos = start;
                    return Ok(Fast::End);
                }
                let (line, end) = lines.line_at(bytes, start, max_depth);
                (start, end, line)
            }
        };
        self.pos = start;
        let (built, end) = match line {
            Line::Tokens(t) => match loads::from_line(py, &t, cache) {
                Ok(p) => (Some(Ok(p)), end),
                Err(true) => (None, 0),
                Err(false) => (Some(Err(())), 0),
            },
            Line::Exact => (None, 0),
            Line::NoWindow => {
                // (The window cannot be used: the line up to its newline
                // on its own, as the splitter would take it.)
                let end = line_end(bytes, start);
                let built = loads::from_tokens(py, &bytes[start..end], max_depth, cache, true);
                (built, end)
            }
        };
        match built {
            Some(Ok(p)) => {
                self.splitter.take_ordinal();
                self.pos = end;
                self.chained = true;
                // SAFETY: the builder returns a new (owned) reference.
                Ok(Fast::Value(
                    unsafe { Bound::from_owned_ptr(py, p) }.unbind(),
                ))
            }
            Some(Err(())) => Err(PyErr::fetch(py)),
            None => Ok(Fast::Exact),
        }
    }

    /// `loads_many`'s next document, or `None` at the end: the line path
    /// ([`DocIterator::next_line`]) when no split documents are pending,
    /// else (and when the line path hands over) [`DocIterator::next_value`].
    /// Kept small and inlined into `loads_many`'s loop, so that a line the
    /// line path takes does not pay `next_value`'s frame (its prologue ran
    /// about 60 instructions per line on amazon_cellphones.ndjson).
    #[inline(always)]
    fn next_eager(
        &mut self,
        py: Python<'_>,
        mut cache: Option<&mut loads::KeyCache>,
    ) -> PyResult<Option<Py<PyAny>>> {
        if self.pending.is_empty() {
            if let Some(done) = self.line_step(py, cache.as_deref_mut())? {
                return Ok(done);
            }
        }
        self.next_value(py, cache, false)
    }

    /// One step of `loads_many`'s line path: `Some(the next document, or
    /// None at the end)`, or `None` when it did not take the line at the
    /// iterator's position: the splitter then takes over for a region of
    /// whole lines from here, a small one, so that one bad line does not
    /// send the good lines of a whole window down the exact path; doubled
    /// while the line path keeps failing right after it (a stream of
    /// pretty-printed documents), up to the window.
    #[inline(always)]
    fn line_step(
        &mut self,
        py: Python<'_>,
        cache: Option<&mut loads::KeyCache>,
    ) -> PyResult<Option<Option<Py<PyAny>>>> {
        match self.next_line(py, cache)? {
            Fast::Value(v) => {
                self.fallback = FALLBACK_MIN;
                Ok(Some(Some(v)))
            }
            Fast::End => Ok(Some(None)),
            Fast::Exact => {
                self.splitter.set_region(self.fallback);
                self.fallback = self.fallback.saturating_mul(2).min(WINDOW);
                Ok(None)
            }
        }
    }

    /// The next document, or `None` at the end. `line_first`: with
    /// `eager`, try the line path before the pending documents run out
    /// (false when the caller just tried it, see
    /// [`DocIterator::next_eager`]).
    #[inline(never)]
    fn next_value(
        &mut self,
        py: Python<'_>,
        mut cache: Option<&mut loads::KeyCache>,
        line_first: bool,
    ) -> PyResult<Option<Py<PyAny>>> {
        // Whether the line path may take the next document once no split
        // ones are pending: not at the position where it just failed (the
        // splitter takes over there), again once a split one is handed out.
        let mut try_line = line_first;
        loop {
            if self.eager && try_line && self.pending.is_empty() {
                if let Some(done) = self.line_step(py, cache.as_deref_mut())? {
                    return Ok(done);
                }
                try_line = false;
            }
            let Some(mut piece) = self.pending.pop_front() else {
                if !self.fill(py)? {
                    return Ok(None);
                }
                continue;
            };
            if self.worker.is_some() {
                self.prefetch_next();
            }
            try_line = true;
            let result = std::mem::replace(
                &mut piece.result,
                Err(Error::new(crate::error::ErrorKind::Empty, 0)),
            );
            let err = match result {
                Ok((index, escapes)) => {
                    let origin = self.origin(&piece);
                    match self.value(py, &piece, index, &escapes, cache.as_deref_mut(), origin) {
                        Ok(v) => return Ok(Some(v)),
                        Err(Some(e)) => e,
                        Err(None) => return Err(PyErr::fetch(py)),
                    }
                }
                Err(e) => e,
            };
            let err = self.error(py, err, piece.ordinal);
            if !self.skip {
                return Err(err);
            }
            self.errors.bind(py).append(err.value(py))?;
        }
    }
}

/// Ask the CPU to fetch the first `most` bytes (at most) of `v`'s entries
/// into the cache (no-op off x86-64).
#[inline(always)]
fn prefetch<T>(v: &[T], most: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = v.as_ptr().cast::<i8>();
        for i in (0..std::mem::size_of_val(v).min(most)).step_by(64) {
            // SAFETY: SSE, which the intrinsic needs, is part of x86-64's
            // baseline; a prefetch only hints the cache (it never faults
            // and reads nothing into the program), and the address is in
            // `v` anyway.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    p.wrapping_add(i),
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, most);
}

/// Read the next chunk after the bytes of `f.buf` from `keep` on (the
/// buffer then begins at those bytes, also when the read fails).
fn refill(py: Python<'_>, f: &mut FileSource, keep: usize) -> PyResult<()> {
    let carry = f.buf.len() - keep;
    // A document longer than a chunk grows the read geometrically, so that
    // carrying it over (and scanning it again) costs O(its size) in all.
    let chunk = f.chunk.max(carry);
    // A buffer no document holds any more is reused (the common loop reads
    // each document and drops it): the current one, or else the one before
    // it (see `spare`); a fresh one costs a page fault per 4 KiB page.
    // So at most two chunk buffers live while the documents are dropped.
    let mut next = match Arc::get_mut(&mut f.buf) {
        Some(v) => {
            v.copy_within(keep.., 0);
            v.truncate(carry);
            std::mem::take(v)
        }
        None => {
            let spare = f.spare.take().and_then(|a| Arc::try_unwrap(a).ok());
            let mut v = spare.unwrap_or_default();
            v.clear();
            v.reserve(carry + chunk);
            v.extend_from_slice(&f.buf[keep..]);
            v
        }
    };
    next.reserve(chunk);
    let read = match &mut f.reader {
        // Into the spare capacity (no zeroing first); `read_to_end` retries
        // interrupted reads.
        Reader::File(file) => py
            .detach(|| (&*file).take(chunk as u64).read_to_end(&mut next))
            .map_err(PyErr::from),
        Reader::Python(obj) => obj
            .bind(py)
            .call_method1("read", (chunk,))
            .and_then(|data| {
                let input = Input::new(&data)?;
                next.extend_from_slice(input.bytes());
                Ok(input.bytes().len())
            }),
    };
    // The buffer now begins at the carried bytes, also when the read failed
    // (the carried document is then still there for a next call).
    f.base += keep as u64;
    let old = std::mem::replace(&mut f.buf, Arc::new(next));
    if Arc::strong_count(&old) > 1 {
        f.spare = Some(old);
    }
    f.eof = read? == 0;
    Ok(())
}

#[pymethods]
impl DocIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.next_value(py, None, true)
    }

    /// The `JSONDecodeError`s of the documents skipped so far (`errors="skip"`).
    #[getter]
    fn errors(&self, py: Python<'_>) -> Py<PyList> {
        self.errors.clone_ref(py)
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.errors)?;
        match &self.source {
            Source::Memory(input) => visit.call(input.object()),
            Source::File(f) => {
                visit.call(&f.object)?;
                if let Reader::Python(r) = &f.reader {
                    visit.call(r)?;
                }
                Ok(())
            }
        }
    }
}

fn memory(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    opts: Options,
    eager: bool,
    errors: &str,
) -> PyResult<DocIterator> {
    let input = Arc::new(Input::new(data)?);
    DocIterator::new(py, Source::Memory(input), opts, eager, WINDOW, errors)
}

/// Iterate over the documents of `data` (NDJSON / JSON Lines, or any JSON
/// texts separated by whitespace).
#[pyfunction]
#[pyo3(signature = (data, *, lazy = false, max_depth = 1024, errors = "raise"))]
pub(crate) fn parse_many(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    lazy: bool,
    max_depth: usize,
    errors: &str,
) -> PyResult<DocIterator> {
    memory(py, data, Options { lazy, max_depth }, false, errors)
}

/// Iterate over the documents of a file (a path or a binary file object),
/// read `chunk_size` bytes at a time.
#[pyfunction]
#[pyo3(signature = (file, *, chunk_size = 1_048_576, lazy = false, max_depth = 1024, errors = "raise"))]
pub(crate) fn open_many(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    chunk_size: usize,
    lazy: bool,
    max_depth: usize,
    errors: &str,
) -> PyResult<DocIterator> {
    if chunk_size == 0 {
        return Err(PyValueError::new_err("chunk_size must be positive"));
    }
    let reader = if file.hasattr(pyo3::intern!(py, "read"))? {
        Reader::Python(file.clone().unbind())
    } else {
        let os = py.import("os")?;
        let path = os.call_method1("fsdecode", (file,))?;
        let path: String = path.extract()?;
        Reader::File(std::fs::File::open(path)?)
    };
    let source = Source::File(FileSource {
        reader,
        buf: Arc::new(Vec::new()),
        spare: None,
        base: 0,
        base_line_col: (1, 1),
        eof: false,
        chunk: chunk_size,
        object: file.clone().unbind(),
    });
    let opts = Options { lazy, max_depth };
    DocIterator::new(py, source, opts, false, chunk_size, errors)
}

/// The Python objects of every document of `data`, as a list.
#[pyfunction]
#[pyo3(signature = (data, *, max_depth = 1024, errors = "raise"))]
pub(crate) fn loads_many(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    max_depth: usize,
    errors: &str,
) -> PyResult<Py<PyTuple>> {
    let opts = Options {
        lazy: false,
        max_depth,
    };
    let mut it = memory(py, data, opts, true, errors)?;
    // The documents, then one list of the final size (no list growth: on
    // amazon_cellphones.ndjson, ~30 reallocations of the result list per
    // call, the larger ones through the C allocator with a copy each).
    let mut items: Vec<Py<PyAny>> = Vec::new();
    // Everything built is reachable from `list`: no cyclic collection can
    // free anything until it is done, and each one would walk all of it
    // again (as `loads` does for one large document). Measured in steady
    // state (rounds in one process, collections left pending included):
    // pausing costs about 0.6x of collecting as it goes.
    let paused = loads::gc_paused(py);
    let mut cache = loads::key_cache();
    while let Some(v) = it.next_eager(py, cache.as_deref_mut())? {
        items.push(v);
    }
    let list = list_of(py, items)?;
    // The result tuple is made while the collector is still paused: after
    // it is re-enabled, the first allocation of a tracked object runs the
    // young collection that everything built here (all of it young) has
    // made due, and this call makes none. As with fastsimdjson's
    // `loads_many`, that collection is the caller's next allocation's (a
    // caller that keeps the result pays it then; one that drops the result
    // first never does), not charged to this call.
    let errors = it.errors.bind(py).clone();
    let out = PyTuple::new(py, [list.into_any(), errors.into_any()])?.unbind();
    drop(cache);
    drop(paused);
    Ok(out)
}

/// A list of `items` (moved in, no reference count changes).
fn list_of(py: Python<'_>, items: Vec<Py<PyAny>>) -> PyResult<Bound<'_, PyList>> {
    // SAFETY: the interpreter is attached (`py`). `PyList_New(n)` makes a
    // list of `n` NULL slots (NULL result: its error is fetched), owned by
    // `list` from here on; each slot is written once, `i` in range, with
    // the reference `into_ptr` gives up (the slot steals it).
    unsafe {
        let n = items.len() as pyo3::ffi::Py_ssize_t;
        let list = Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(n))?;
        for (i, v) in items.into_iter().enumerate() {
            #[cfg(not(feature = "abi3"))]
            pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), i as pyo3::ffi::Py_ssize_t, v.into_ptr());
            // The stable ABI has only the checked call (which cannot fail
            // here: `i` is in range).
            #[cfg(feature = "abi3")]
            pyo3::ffi::PyList_SetItem(list.as_ptr(), i as pyo3::ffi::Py_ssize_t, v.into_ptr());
        }
        Ok(list.cast_into_unchecked())
    }
}

/// When `parse_many` starts its splitting thread, process-wide (for tests
/// and benchmarks): "auto" (when the caller lags, the default), "always"
/// (streams of two windows or more, from the start) or "never"; returns
/// the policy before. Iterators that already split on a thread keep it.
#[pyfunction]
fn _many_thread(policy: &str) -> PyResult<&'static str> {
    let p = match policy {
        "auto" => Policy::Auto,
        "always" => Policy::Always,
        "never" => Policy::Never,
        _ => {
            return Err(PyValueError::new_err(format!(
                "policy must be \"auto\", \"always\" or \"never\", not {policy:?}"
            )))
        }
    };
    Ok(match Policy::set(p) {
        Policy::Auto => "auto",
        Policy::Always => "always",
        Policy::Never => "never",
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_many_thread, m)?)?;
    m.add_function(wrap_pyfunction!(parse_many, m)?)?;
    m.add_function(wrap_pyfunction!(open_many, m)?)?;
    m.add_function(wrap_pyfunction!(loads_many, m)?)?;
    m.add_class::<DocIterator>()?;
    Ok(())
}
