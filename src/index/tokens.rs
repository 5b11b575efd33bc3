//! Strict validation over the token index: the fast path of
//! [`super::validate`].
//!
//! [`scan::scan_tokens`] emits, besides the structurals and opening quotes,
//! the first byte of every scalar token. Every gap between two emitted
//! offsets is then whitespace, the inside of a string, or the rest of one
//! scalar token, so the grammar is a walk over the first bytes of the
//! tokens alone, with no gap to measure and no closing quote to find:
//! - a string is one token (`"`); a key is `"` followed by the token `:`;
//! - a scalar token is checked where it starts, and the byte where it ends
//!   must be one that ends a token (whitespace, a structural or `"`): plain
//!   numbers that end right before the next token from one digit mask and
//!   their known length ([`plain_number`]), literals by their first byte,
//!   the rest by [`scalar_end`];
//! - each container kind has its own loop for "after a value", so an
//!   array's elements and an object's members each run through one short
//!   sequence of predictable branches; after a literal element, a run of
//!   `, literal` pairs (`[true, null, ...]`) is passed by a tighter loop
//!   still (`scalar_run!`: one offset test per pair, the literal read as
//!   one word).
//!
//! The answer is only "certainly valid" or "not known to be": the walk
//! gives up on any error, and also on nesting deeper than its inline stack,
//! and [`super::validate`] then runs the exact path, which finds the error
//! (and its offset) as before. Only acceptance has to be exact: the walk
//! accepts exactly the documents the strict grammar accepts, up to the
//! nesting limit.
//!
//! An eager decoder (the Python edge's `loads`) uses the same index and
//! walk (`eager`), which then also records each container's child count
//! and leaves the scalar tokens to the decoder, which checks each one as it
//! parses it.

use super::{check_strings, Container};
use crate::decode::number::scalar_end;
use crate::scan::{self, Scan};
use std::cell::RefCell;
use std::mem::MaybeUninit;

#[cfg(feature = "python")]
pub(crate) mod eager;
pub(super) mod returns;

/// Containers nested deeper than this are left to the exact path.
const STACK: usize = 256;

/// The bytes that may follow a scalar token: whitespace, structurals and
/// `"` (which opens a string, then rejected by the grammar).
static ENDS_TOKEN: [bool; 256] = {
    let mut t = [false; 256];
    let chars = *b" \t\n\r{}[]:,\"";
    let mut i = 0;
    while i < chars.len() {
        t[chars[i] as usize] = true;
        i += 1;
    }
    t
};

/// Whether `input` is certainly valid JSON (strict, nesting at most
/// `max_depth`); `false` means "run the exact check".
pub(super) fn valid(input: &[u8], max_depth: usize) -> bool {
    with_spare(|spare| {
        let scan = &mut spare.scan;
        let ok = match scan::scan_tokens_valid(input, scan) {
            Some(Ok(())) => {
                scan.first_control.is_none()
                    && walk(input, &scan.structurals, max_depth, &mut Check)
                    && check_strings(input, escapes_left(scan), None, utf8_left(scan)).is_ok()
            }
            _ => false,
        };
        if scan.structurals.capacity() > KEEP_MAX || scan.escapes.capacity() > KEEP_MAX {
            // (Not kept when large.)
            *scan = Scan::default();
        }
        ok
    })
}

/// Whether [`check_strings`] still has to validate UTF-8: the input has a
/// byte >= 0x80 and the token scan did not validate it already.
#[inline(always)]
pub(super) fn utf8_left(scan: &Scan) -> bool {
    scan.non_ascii && !scan.utf8_valid
}

/// The escapes [`check_strings`] still has to check: none when stage 1
/// found them all valid.
#[inline(always)]
fn escapes_left(scan: &Scan) -> &[u32] {
    if scan.escapes_valid {
        &[]
    } else {
        &scan.escapes
    }
}

/// Index vectors with at most this many entries of capacity are kept for
/// the next call on the same thread (512 KiB each: a thread that parses
/// documents of up to about 1 MB of dense JSON, twitter.json's 75 000
/// tokens, reuses one list); larger ones are freed. (Measured and not
/// taken: keeping up to 512 Ki entries, the Doc's structurals and table
/// copied out of the spare ones, cut parse_bench's page faults per parse
/// on citm_catalog.json from 64 to 1 and on canada.json from 741 to 2,
/// and its CPU time by 21% and 54%, but made canada.json 12% slower from
/// Python, whose malloc did not fault there to begin with; keeping only
/// the scan's vectors that large made citm_catalog.json fault more in
/// parse_bench, 65 -> 181 per parse, 32% slower. Whether glibc faults
/// depends on its dynamic mmap threshold, i.e. on the process's history.)
const KEEP_MAX: usize = 128 * 1024;

/// Everything the index builds of one thread keep between calls, in one
/// thread-local (one TLS lookup per build: in a shared library each one
/// is a call of `__tls_get_addr`).
struct Spare {
    /// The last scan's vectors: for documents of a few hundred bytes
    /// their allocation and release cost about as much as scanning them.
    scan: Scan,
    /// The strict index's container table while the walk fills it (the
    /// Doc gets an exact copy).
    containers: Vec<Container>,
    /// The structurals of a large strict index (from [`COPY_MIN`] tokens)
    /// while the walk writes them, when no free vector fits them (see
    /// [`build`]).
    kept: Vec<u32>,
    /// The vectors of the last index dropped on this thread (see
    /// [`recycle`]): the next build's exact copies go into them when they
    /// fit (see [`fits`]), instead of a fresh allocation (and, for a
    /// large one, its page faults) and a free.
    free_structurals: Vec<u32>,
    free_containers: Vec<Container>,
    /// Whether this thread has built a strict index (see [`build`]): only
    /// then does [`recycle`] keep a dropped index's vectors here, so a
    /// thread that only drops documents parsed on others keeps none.
    builds: bool,
    /// The stream this thread drops indexes for, if any: their vectors go
    /// back to the thread that builds them (see [`returns`]).
    returns: Option<std::sync::Arc<returns::Returns>>,
    /// Vectors returned by the thread that drops the indexes this one
    /// builds, by size class (see [`returns`]).
    held: Option<Box<returns::Held>>,
}

impl Spare {
    const EMPTY: Spare = Spare {
        scan: Scan {
            structurals: Vec::new(),
            escapes: Vec::new(),
            first_control: None,
            non_ascii: false,
            escapes_valid: false,
            utf8_valid: false,
        },
        containers: Vec::new(),
        kept: Vec::new(),
        free_structurals: Vec::new(),
        free_containers: Vec::new(),
        builds: false,
        returns: None,
        held: None,
    };
}

thread_local! {
    /// This thread's [`Spare`]. Borrowed only for the length of one call
    /// that runs no foreign code ([`with_spare`]); a nested call (e.g.
    /// from a finalizer that `loads` triggers between [`take_scan`] and
    /// [`give_back_scan`]) finds its parts empty and just allocates.
    static SPARE: RefCell<Spare> = const { RefCell::new(Spare::EMPTY) };
}

/// Runs `f` on this thread's [`Spare`], or on an empty one while the
/// thread exits (or, never in practice, while it is borrowed: its
/// vectors are then dropped afterwards).
#[inline(always)]
fn with_spare<T>(f: impl FnOnce(&mut Spare) -> T) -> T {
    let mut f = Some(f);
    let r = SPARE.try_with(|c| match c.try_borrow_mut() {
        Ok(mut spare) => Some((f.take().expect("called once"))(&mut spare)),
        Err(_) => None,
    });
    match r {
        Ok(Some(t)) => t,
        _ => {
            let mut empty = Spare::EMPTY;
            (f.take().expect("not called"))(&mut empty)
        }
    }
}

/// Keep `v` as the spare structurals (see [`Spare::kept`]) if it is not
/// large and has more room than the one kept now (else it is freed).
fn give_back_kept(spare: &mut Spare, mut v: Vec<u32>) {
    if v.capacity() <= KEEP_MAX && v.capacity() > spare.kept.capacity() {
        v.clear();
        spare.kept = v;
    }
}

/// Keep `v` as the spare container table, unless it is large.
fn give_back_containers(spare: &mut Spare, mut v: Vec<Container>) {
    if v.capacity() <= KEEP_CONTAINERS_MAX {
        v.clear();
        spare.containers = v;
    }
}

/// An empty [`Scan`], with the capacity the last one on this thread left
/// (for the eager decoder, which holds it while it builds Python objects).
#[cfg(feature = "python")]
pub(super) fn take_scan() -> Scan {
    with_spare(|spare| std::mem::take(&mut spare.scan))
}

/// Keep `scan`'s vectors for the next [`take_scan`] on this thread, unless
/// they are large.
#[cfg(feature = "python")]
pub(super) fn give_back_scan(scan: Scan) {
    if scan.structurals.capacity() <= KEEP_MAX && scan.escapes.capacity() <= KEEP_MAX {
        with_spare(|spare| spare.scan = scan);
    }
}

/// Slack a recycled vector may have beyond the `len` entries it receives
/// (an exact copy, or a walk over `len` tokens): [`SPARE_MAX`] bytes plus
/// a sixteenth.
#[inline(always)]
fn slack_max<T>(len: usize) -> usize {
    SPARE_MAX / std::mem::size_of::<T>() + len / 16
}

/// Whether `v` has room for `len` entries and at most [`slack_max`] more:
/// a recycled vector is reused only then, so that no index holds much
/// more than it needs.
#[inline(always)]
fn fits<T>(v: &Vec<T>, len: usize) -> bool {
    let cap = v.capacity();
    cap >= len && cap - len <= slack_max::<T>(len)
}

/// `src` copied into a vector with room for `room` (at least its length,
/// at most its length and [`slack_max`]): `free`, the vector of an index
/// dropped earlier, if it fits `room`, else a fresh one.
#[inline(always)]
fn copy_into<T: Copy>(src: &[T], room: usize, free: &mut Vec<T>) -> Vec<T> {
    debug_assert!(room >= src.len() && room - src.len() <= slack_max::<T>(src.len()));
    let mut v = if fits(free, room) {
        let mut v = std::mem::take(free);
        v.clear();
        v
    } else {
        Vec::with_capacity(room)
    };
    v.extend_from_slice(src);
    v
}

/// The most bytes of capacity this thread's free slots
/// ([`Spare::free_structurals`] and [`Spare::free_containers`]) hold
/// together: an index larger than this is freed when it drops. A recycled
/// index saves the next build one allocation and one release per vector
/// (and, for vectors over glibc's mmap threshold, the page faults of fresh
/// memory), a cost that does not grow with the document while the parse
/// does: a few percent of a parse at this size (twitter.json, 631 KB, whose
/// index of 243 KiB is the largest this keeps), less above it; and every
/// thread that parses may hold this much. With it, the most a thread keeps
/// between calls is the scan's two vectors ([`KEEP_MAX`] entries each, 1
/// MiB), the container table (768 KiB), the walk's structurals (512 KiB)
/// and this: about 2.5 MiB, and only on threads that parse (the free
/// slots only on threads that have built a strict index; see the README's
/// "Threads"), and on `parse_many`'s splitting thread the vectors its
/// caller gave back ([`returns`], 1 MiB).
const FREE_MAX: usize = 256 * 1024;

/// Called when an index drops: its vectors go back to the thread that
/// built it when this thread drops a stream's indexes for it (see
/// [`returns`]); else they become this thread's free
/// ones (see [`Spare::free_structurals`]) if the thread builds indexes
/// (see [`Spare::builds`]) and they hold at most [`FREE_MAX`] bytes; the
/// ones kept before (which the builds since did not fit into) are freed.
/// (Kept only while the slot was empty, a first document of another size,
/// e.g. one parsed at import, held the slot for good: measured, 2 mallocs
/// and 2 frees per parse from Python.)
pub(super) fn recycle(structurals: &mut Vec<u32>, containers: &mut Vec<Container>) {
    let s = structurals.capacity();
    if s == 0 {
        return;
    }
    let bytes =
        s * std::mem::size_of::<u32>() + containers.capacity() * std::mem::size_of::<Container>();
    with_spare(|spare| {
        if returns::give_back(spare, structurals, containers) || bytes > FREE_MAX {
            return;
        }
        if spare.builds {
            spare.free_structurals = std::mem::take(structurals);
            spare.free_containers = std::mem::take(containers);
        }
    });
}

/// Container tables with at most this many entries of capacity are kept
/// for the next call on the same thread: the room the walk reserves for a
/// document of [`KEEP_MAX`] tokens ([`table_room`], 771 KiB, of which a
/// document touches only the entries of its containers).
const KEEP_CONTAINERS_MAX: usize = KEEP_MAX / 2 + STACK;

/// What the walk does besides checking the grammar.
///
/// The container table is written through a raw buffer ([`Record::table`])
/// with room for every container the walk can open, reserved before it
/// runs: the walk keeps its pointer and the count of opened containers in
/// locals, as it keeps the kept tokens' ([`Record::keep_buf`]), and tests
/// no room per container. (Written through `&mut self` methods that
/// checked the room, the table's pointer and length were reloaded from the
/// recorder after stores of kept tokens, which LLVM could not tell apart
/// from them, and spilled again: callgrind, Rust parse of the 4 MB batch
/// file as one array, 11.9 M -> 11.5 M instructions, see [`build`].)
trait Record {
    /// Whether scalar tokens are checked here (else by the caller, who
    /// gets each one's offset and the next token's).
    const CHECK_SCALARS: bool;
    /// Whether containers are recorded (else the walk skips its
    /// bookkeeping and calls none of the table's methods).
    const RECORD: bool;
    /// One container's entry in the table.
    type Entry: Copy;
    /// The entry of container `ord`, which closed with `len` children;
    /// with [`Record::KEEP`], its closer is kept token `at` (else `at`
    /// means nothing); `next` is the ordinal the next container will get
    /// (the one after its last descendant: `ord + 1` when it holds no
    /// container).
    fn entry(len: u32, at: usize, ord: usize, next: usize) -> Self::Entry;
    /// With [`Record::RECORD`]: where the walk writes container `ord`'s
    /// entry when it closes: a buffer valid for writes of at least `room`
    /// entries (the most the walk can open, see [`table_room`]), reserved
    /// once, before the walk, so that opening a container tests nothing.
    /// Entries of containers still open are left unwritten.
    fn table(&mut self, room: usize) -> *mut Self::Entry;
    /// A scalar token was passed (in document order).
    #[inline(always)]
    fn scalar(&mut self) {}
    /// Whether the walk keeps every token it passes that is not a scalar
    /// token (the structurals and opening quotes, in order) in the buffer
    /// [`Record::keep_buf`] gives.
    const KEEP: bool = false;
    /// With [`Record::KEEP`]: where the kept tokens go, and how many fit
    /// (the buffer must be valid for writes of that many `u32`s; with room
    /// for fewer than all the tokens, the walk answers `false`).
    #[inline(always)]
    fn keep_buf(&mut self) -> (*mut u32, usize) {
        (std::ptr::null_mut(), 0)
    }
    /// The walk accepted the input: with [`Record::KEEP`] it kept `kept`
    /// tokens, and with [`Record::RECORD`] it opened (and closed) `opened`
    /// containers.
    ///
    /// # Safety
    ///
    /// With [`Record::KEEP`], the first `kept` entries of
    /// [`Record::keep_buf`]'s buffer are written and `kept` is at most its
    /// room; with [`Record::RECORD`], the first `opened` entries of
    /// [`Record::table`]'s buffer are written and `opened` is at most the
    /// room asked for.
    #[inline(always)]
    unsafe fn accepted(&mut self, _kept: usize, _opened: usize) {}
    /// Whether the walk accepts the first value of the tokens on its own,
    /// whatever tokens follow it (the document of a line of a stream, walked
    /// on the tokens of the lines after it too, see
    /// `eager::LinesIndex::line_at`): the ordinal of the token after the
    /// value goes to [`Record::stopped`], before [`Record::accepted`].
    /// Else the value must be followed by the sentinel.
    const STOP: bool = false;
    /// With [`Record::STOP`]: the first value ended before token `next`
    /// (the sentinel, or the first token of what follows it).
    #[inline(always)]
    fn stopped(&mut self, _next: usize) {}
}

/// Validation only: nothing recorded.
struct Check;

impl Record for Check {
    const CHECK_SCALARS: bool = true;
    const RECORD: bool = false;
    type Entry = ();
    #[inline(always)]
    fn entry(_: u32, _: usize, _: usize, _: usize) {}
    /// (Not called: nothing is recorded.)
    #[inline(always)]
    fn table(&mut self, _: usize) -> *mut () {
        std::ptr::null_mut()
    }
}

/// The strict index: the structurals (the tokens the walk keeps, i.e. all
/// but the scalar tokens, in order) and the container table, with each
/// closer's position in those structurals.
struct Table {
    /// The thread's spare table (see [`Spare::containers`]), copied out
    /// exactly at the end. While the walk runs its length stays 0 and
    /// only its room is used: a container's entry is written once, when
    /// it closes (entries of containers still open are uninitialised),
    /// and the length becomes the count of containers opened when the
    /// walk accepts (then every container has closed).
    containers: Vec<Container>,
    /// The structurals so far; its capacity is at least the number of
    /// tokens, so it never grows (the walk keeps each token at most once).
    kept: Vec<u32>,
    /// Whether the document has at most [`KEEP_MAX`] tokens, so that
    /// [`settle_kept`] decides what the Doc keeps of `kept` (else `fill`
    /// trims it).
    kept_spare: bool,
    /// Whether `containers` is the thread's spare table (see [`build`]).
    containers_spare: bool,
}

impl Record for Table {
    const CHECK_SCALARS: bool = true;
    const RECORD: bool = true;
    type Entry = Container;
    #[inline(always)]
    fn entry(len: u32, at: usize, _: usize, next: usize) -> Container {
        Container {
            close: at as u32,
            next: next as u32,
            len,
        }
    }
    #[inline(always)]
    fn table(&mut self, room: usize) -> *mut Container {
        if self.containers.capacity() < room {
            reserve_fresh(&mut self.containers, room);
        }
        self.containers.as_mut_ptr()
    }
    const KEEP: bool = true;
    #[inline(always)]
    fn keep_buf(&mut self) -> (*mut u32, usize) {
        (self.kept.as_mut_ptr(), self.kept.capacity())
    }
    #[inline(always)]
    unsafe fn accepted(&mut self, kept: usize, opened: usize) {
        // SAFETY: the caller wrote the first `kept` entries of the buffer
        // `keep_buf` gave, `kept` at most its room (the capacity), and the
        // first `opened` entries of the buffer `table` gave (the table's),
        // `opened` at most its capacity.
        unsafe {
            self.kept.set_len(kept);
            self.containers.set_len(opened);
        }
    }
}

/// Replaces the empty vector `v` by one with room for `room` entries: a
/// fresh allocation (growing `v` would copy its old capacity's bytes,
/// which hold nothing). Out of line: a thread's spare table has the room
/// after its first document of a size.
#[cold]
#[inline(never)]
pub(super) fn reserve_fresh<T>(v: &mut Vec<T>, room: usize) {
    debug_assert!(v.is_empty());
    *v = Vec::with_capacity(room);
}

/// The most containers the walk can open over `tokens` tokens (the
/// sentinel included, which no container takes) with at most `depth` of
/// them open at once: every closed container took two tokens of its own
/// (its opener and its closer), so a walk that fails half way has opened
/// no more either. A valid document has at most `tokens / 2`; the room
/// beyond what a document opens is reserved, never touched (the Doc gets
/// an exact copy of the table, or, above [`KEEP_MAX`] tokens, the table
/// shrunk by `Index::assemble`).
#[inline(always)]
fn table_room(tokens: usize, depth: usize) -> usize {
    tokens / 2 + depth
}

/// Spare room in the strict index's structurals (the scalar tokens' slots)
/// up to this many bytes plus a quarter of what they hold
/// ([`HANDOVER_SLACK`]) is kept rather than given back: documents with
/// few numbers and literals (a 2 KB chat request, github_issues) keep the
/// vector the walk wrote. Every strict index holds at most that much
/// beyond its exact structurals (above [`KEEP_MAX`] tokens, this many
/// bytes), and its container table at most [`slack_max`] beyond its exact
/// length. (Sizing the list exactly from a count of scalar tokens in
/// stage 1 measured ~3% more instructions on twitter.json.)
const SPARE_MAX: usize = 256;

/// Token lists of at least this many entries (64 KiB, half of glibc's
/// first mmap threshold) have their structurals copied out when the Doc
/// does not take the vector the walk wrote; smaller ones are trimmed in
/// place (see [`settle_kept`]).
const COPY_MIN: usize = 16 * 1024;

/// The strict index built from the token scan, with stage 1's escapes.
pub(super) struct Built {
    pub structurals: Vec<u32>,
    pub containers: Vec<Container>,
    pub escapes: Vec<u32>,
    /// Whether any byte is 0x80 or above.
    pub non_ascii: bool,
    /// Whether stage 1 found any escape (even when `escapes` is not copied).
    pub escaped: bool,
}

/// The strict index of `input` built from the token scan: the same
/// structurals and container table as [`super::Index::build`]'s exact walk
/// (the token walk checks the same grammar and keeps every token but the
/// scalar tokens as it passes them). `None` means "not known to be valid"
/// (an error, nesting deeper than the walk's stack, no token scan on this
/// CPU): the caller takes the exact path, which also finds the error.
/// Stage 1's escapes are copied out only with `escapes`.
///
/// The token list is scratch, so it is the thread's spare one (see
/// [`Spare`]): no allocation and no growth once the thread has scanned
/// a document as large. The walk writes the structurals straight into a
/// vector with room for every token (no second pass over the tokens to
/// drop the scalar ones): the vector of an index dropped earlier when it
/// fits every token ([`fits`]), else a fresh one, or from [`COPY_MIN`]
/// tokens the thread's spare one ([`Spare::kept`]). The Doc takes that
/// vector as it is when the scalar tokens' room (and any left over) is
/// at most [`SPARE_MAX`] bytes and a quarter of the structurals (beyond
/// [`SPARE_MAX`], for a small document, only while the vector takes no
/// more bytes than the input; see [`keeps`]): the vector, recycled, then
/// has room for the next such document's walk. Else a small document's vector is trimmed (a
/// shrinking `realloc`, which the allocator does in place: measured, a
/// copy into a recycled vector instead cost more, see [`settle_kept`]),
/// and a large one's structurals are copied out exactly: a large vector
/// allocated with room for every token and then shrunk was, with glibc, a
/// fresh `mmap` on every parse (the shrunk size it frees sets the
/// allocator's mmap threshold below the next request), then page faults
/// on every page, `mremap` and `munmap`: about 40% of a strict parse of
/// twitter.json from Python, against a copy of a few microseconds. The
/// container table is likewise filled in the thread's spare table and
/// copied out exactly (a small document's index then holds no guessed
/// room). Above [`KEEP_MAX`] tokens the thread keeps no spare vectors, and
/// both are the Doc's own, shrunk as before: a spare table that size would
/// be dropped after every parse, and measured 6x the page faults on
/// citm_catalog.json.
///
/// **Recycling.** When an index drops, its two vectors become the
/// thread's free ones ([`recycle`]), and the next build puts its exact
/// copies (or a document's walk) into them when they fit ([`fits`]): a
/// loop that parses, reads and drops documents of similar size (an API
/// server's requests) then allocates, frees and faults in no index memory
/// at all (callgrind, Rust parse of the 2 KB chat request: 4,201 -> 4,057
/// instructions, malloc and free gone; twitter.json 2.64M -> 2.45M, the
/// 300 KB copy gone).
pub(super) fn build(input: &[u8], max_depth: usize, escapes: bool) -> Option<Built> {
    build_scanned(max_depth, escapes, |scan| {
        let ok =
            matches!(scan::scan_tokens(input, scan), Some(Ok(()))) && scan.first_control.is_none();
        ok.then_some(input)
    })
}

/// What [`build_line`] found at the start of its input.
pub(super) enum LineBuilt {
    /// The first line, `input[..newline]`, is one valid document,
    /// `input[..end]` (`end` its last non-whitespace byte's end).
    Doc {
        built: Built,
        end: usize,
        newline: usize,
    },
    /// The first line (up to a newline) is not known to be one valid
    /// document (as [`build`]'s `None` for it).
    Rejected,
    /// No newline outside strings in the input (or no token scan on this
    /// CPU): the caller searches for the line's end and uses [`build`].
    NoNewline,
}

/// [`build`] of the first line of `input` (from its first non-whitespace
/// byte), found by the token scan itself ([`scan::scan_tokens_line`]: it
/// stops at the first newline outside strings) instead of a search for
/// the newline first: one pass over the line, and its last block is read
/// in place (the bytes after the newline are in `input`) rather than
/// copied into a padded block. The document is the line without its
/// trailing whitespace (`\r`, spaces, tabs), as for a line given to
/// [`build`] whole. (A newline inside a string is a control byte there:
/// the line's scan then fails, as a scan of that line alone would.)
pub(super) fn build_line(input: &[u8], max_depth: usize, escapes: bool) -> LineBuilt {
    let mut found = None;
    let mut no_newline = false;
    let built = build_scanned(max_depth, escapes, |scan| {
        match scan::scan_tokens_line(input, scan) {
            Some(Ok(Some(newline))) => {
                let mut end = newline;
                while end > 0 && crate::lex::is_ws(input[end - 1]) {
                    end -= 1;
                }
                found = Some((end, newline));
                if scan.first_control.is_some() || end == 0 {
                    return None;
                }
                // The sentinel is the document's end (only whitespace, which
                // is no token, lies between it and the newline).
                *scan.structurals.last_mut().expect("the sentinel") = end as u32;
                Some(&input[..end])
            }
            // (Stage 1 stops at the first newline, and at the first error
            // before it: an error is the line's, except a string left open at
            // the input's end, where the line may go on.)
            Some(Err(e)) if e.kind != crate::error::ErrorKind::UnterminatedString => None,
            Some(Err(_)) | Some(Ok(None)) | None => {
                no_newline = true;
                None
            }
        }
    });
    match (built, found) {
        (Some(built), Some((end, newline))) => LineBuilt::Doc {
            built,
            end,
            newline,
        },
        _ if no_newline => LineBuilt::NoNewline,
        _ => LineBuilt::Rejected,
    }
}

/// [`build`] after stage 1: `stage1` scans into the thread's spare
/// [`Scan`] and returns the document it scanned (the tokens of exactly
/// those bytes, then their length), or `None` when stage 1 does not
/// accept it.
#[inline(always)]
fn build_scanned<'a>(
    max_depth: usize,
    escapes: bool,
    stage1: impl FnOnce(&mut Scan) -> Option<&'a [u8]>,
) -> Option<Built> {
    with_spare(|spare| {
        spare.builds = true;
        let mut scan = std::mem::take(&mut spare.scan);
        let mut table = Table {
            containers: std::mem::take(&mut spare.containers),
            kept: Vec::new(),
            kept_spare: false,
            containers_spare: true,
        };
        let scanned = stage1(&mut scan);
        let input: &[u8] = scanned.unwrap_or_default();
        let ok = scanned.is_some() && fill(input, max_depth, &mut scan, &mut table, spare);
        if table.kept_spare {
            settle_kept(&mut table, scan.structurals.len(), input.len(), ok, spare);
        }
        let built = ok.then(|| Built {
            structurals: std::mem::take(&mut table.kept),
            // (Exactly as many as there are, up to `fits`' slack: a small
            // document's table is then no larger than needed, and no guess
            // is ever grown or shrunk.)
            containers: if table.containers_spare {
                copy_containers(&table.containers, spare)
            } else {
                std::mem::take(&mut table.containers)
            },
            escapes: if escapes {
                scan.escapes.clone()
            } else {
                Vec::new()
            },
            non_ascii: scan.non_ascii,
            escaped: !scan.escapes.is_empty(),
        });
        if table.containers_spare {
            give_back_containers(spare, table.containers);
        }
        if scan.structurals.capacity() <= KEEP_MAX && scan.escapes.capacity() <= KEEP_MAX {
            spare.scan = scan;
        }
        built
    })
}

/// The most spare room the Doc's structurals keep when they hold `len`
/// entries: [`SPARE_MAX`] bytes and a quarter of them.
#[inline(always)]
fn handover_room(len: usize) -> usize {
    SPARE_MAX / std::mem::size_of::<u32>() + len / HANDOVER_SLACK
}

/// Whether the Doc keeps its `len` structurals in a vector with room for
/// `cap` (of a document of `tokens` tokens and `input_len` bytes): spare
/// room up to [`SPARE_MAX`] bytes always, up to [`handover_room`] when the
/// document is large (from [`COPY_MIN`] tokens) or the vector takes no
/// more bytes than the input (the room then does not push a dense small
/// document's index over the input's size, the memory target: measured,
/// google_maps_api_compact_response.json's index 1.32x -> 1.39x of its
/// input without this condition).
#[inline(always)]
fn keeps(len: usize, cap: usize, tokens: usize, input_len: usize) -> bool {
    let slack = cap - len;
    slack <= SPARE_MAX / std::mem::size_of::<u32>()
        || slack <= handover_room(len)
            && (tokens >= COPY_MIN || cap * std::mem::size_of::<u32>() <= input_len)
}

/// Up to [`KEEP_MAX`] tokens: the vector the walk wrote the structurals
/// into (see [`walk_vector`]) becomes the Doc's as it is when it
/// [`keeps`] its spare room; else, under [`COPY_MIN`] tokens, the room is
/// given back in place ([`trim_kept`]), and from there the structurals
/// are copied out ([`copy_out_kept`]). (Measured, callgrind,
/// decode_access github_issues: copying the 37 KB structurals exactly into
/// the recycled vector, 619,263 instructions per op, against 583,022 with
/// malloc, realloc and free; taking the walk's vector, whose scalar tokens
/// are 8% of its structurals, as it is: neither.)
#[inline(always)]
fn settle_kept(table: &mut Table, tokens: usize, input_len: usize, ok: bool, spare: &mut Spare) {
    let (len, cap) = (table.kept.len(), table.kept.capacity());
    let keep = keeps(len, cap, tokens, input_len);
    if !ok || tokens >= COPY_MIN && !keep {
        copy_out_kept(table, tokens, ok, spare);
    } else if !keep {
        trim_kept(&mut table.kept, tokens, input_len);
    }
}

/// [`settle_kept`]'s small documents with too much spare room: room for
/// every token is kept when the Doc [`keeps`] that much (the vector was a
/// larger recycled one; recycled again, it then takes the next such
/// document's walk), else the room is given back exactly.
#[cold]
#[inline(never)]
fn trim_kept(kept: &mut Vec<u32>, tokens: usize, input_len: usize) {
    if keeps(kept.len(), tokens, tokens, input_len) {
        kept.shrink_to(tokens);
    } else {
        super::shrink_exact(kept);
    }
}

/// [`settle_kept`]'s large documents: the structurals are copied out (when
/// the walk accepted), with room for every token when the scalar tokens
/// are few (so that the vector, recycled, takes the next such document's
/// walk), else exactly; the vector the walk wrote is kept as the thread's
/// spare one (see [`give_back_kept`]). Out of line, so that a small
/// document's parse does not fetch its code.
#[cold]
#[inline(never)]
fn copy_out_kept(table: &mut Table, tokens: usize, ok: bool, spare: &mut Spare) {
    let walked = std::mem::take(&mut table.kept);
    if ok {
        let len = walked.len();
        let room = if tokens - len <= slack_max::<u32>(len) {
            tokens
        } else {
            len
        };
        table.kept = copy_into(&walked, room, &mut spare.free_structurals);
    }
    give_back_kept(spare, walked);
}

/// A document's Doc keeps the vector the walk wrote its structurals into
/// when the spare room is at most 1 / this of what it holds (and
/// [`SPARE_MAX`] bytes; the scalar tokens of twitter.json are about a
/// seventh of its structurals, github_issues' a twelfth): a
/// parse-read-drop loop then neither copies nor allocates the list (the
/// copy of twitter.json's 300 KB list was about 6% of its parse).
const HANDOVER_SLACK: usize = 4;

/// The vector the walk writes the structurals of `tokens` tokens (at most
/// [`KEEP_MAX`]) into: the vector of an index dropped earlier on this
/// thread when it has room for every token and no more than [`fits`]'
/// slack, else [`spare_kept`].
#[inline(always)]
fn walk_vector(tokens: usize, spare: &mut Spare) -> Vec<u32> {
    if fits(&spare.free_structurals, tokens) {
        let mut v = std::mem::take(&mut spare.free_structurals);
        v.clear();
        v
    } else {
        spare_kept(tokens, spare)
    }
}

/// From [`COPY_MIN`] tokens, the thread's spare structurals
/// ([`Spare::kept`]) if they have room for `tokens` entries; else a fresh
/// vector with that room. Out of line: a loop over documents of one size
/// takes [`walk_vector`]'s first case.
#[inline(never)]
fn spare_kept(tokens: usize, spare: &mut Spare) -> Vec<u32> {
    if tokens >= COPY_MIN && spare.kept.capacity() >= tokens {
        let mut v = std::mem::take(&mut spare.kept);
        v.clear();
        v
    } else if let Some(v) = spare.held.as_mut().and_then(|h| h.take_structurals(tokens)) {
        v
    } else {
        Vec::with_capacity(tokens)
    }
}

/// The Doc's exact copy of the container table `c`: into the vector of an
/// index dropped earlier on this thread ([`copy_into`]), or one returned
/// by the thread that drops this one's indexes ([`returns`]) when that
/// one does not fit.
#[inline(always)]
fn copy_containers(c: &[Container], spare: &mut Spare) -> Vec<Container> {
    if !fits(&spare.free_containers, c.len()) {
        if let Some(mut v) = spare.held.as_mut().and_then(|h| h.take_containers(c.len())) {
            v.extend_from_slice(c);
            return v;
        }
    }
    copy_into(c, c.len(), &mut spare.free_containers)
}

/// Above [`KEEP_MAX`] tokens the table is the Doc's own, grown and trimmed
/// as `Index::assemble` does (the thread's spare one is put back unused).
#[cold]
#[inline(never)]
fn own_containers(table: &mut Table, spare: &mut Spare) {
    give_back_containers(spare, std::mem::take(&mut table.containers));
    table.containers_spare = false;
}

/// [`build`] up to the structurals and the container table, from the
/// token scan of exactly `input` in `scan` (stage 1 accepted it), recording
/// into `table` (whose container table is cleared first); `false` if the
/// input is not known to be valid. (Inlined into both [`build`] and
/// [`build_line`], as it was into `build` alone: out of line, a parse of
/// each line of amazon_cellphones.ndjson took 25 instructions more.)
#[inline(always)]
fn fill(
    input: &[u8],
    max_depth: usize,
    scan: &mut Scan,
    table: &mut Table,
    spare: &mut Spare,
) -> bool {
    let s = &scan.structurals;
    if s.len() > KEEP_MAX {
        // (Larger than the thread keeps.)
        own_containers(table, spare);
    }
    // (The walk reserves the table's room, see `Record::table`.)
    table.containers.clear();
    table.kept_spare = s.len() <= KEEP_MAX;
    table.kept = if table.kept_spare {
        walk_vector(s.len(), spare)
    } else {
        large_kept(s.len())
    };
    let ok = walk(input, s, max_depth, table)
        && check_strings(input, escapes_left(scan), None, utf8_left(scan)).is_ok();
    if !ok {
        return false;
    }
    // The sentinel (the walk accepted, so it ended there), then, for a
    // document larger than the thread keeps, the spare room (the scalar
    // tokens') back unless it is small (else see `settle_kept`).
    table.kept.push(*s.last().expect("the sentinel"));
    if !table.kept_spare {
        trim_large_kept(&mut table.kept);
    }
    true
}

/// The structurals' vector of a document larger than the thread keeps.
#[cold]
#[inline(never)]
fn large_kept(tokens: usize) -> Vec<u32> {
    Vec::with_capacity(tokens)
}

/// The spare room of a large document's structurals (the scalar tokens')
/// given back unless it is small.
#[cold]
#[inline(never)]
fn trim_large_kept(kept: &mut Vec<u32>) {
    if (kept.capacity() - kept.len()) * 4 > SPARE_MAX {
        super::shrink_exact(kept);
    }
}

/// The grammar walk, compiled for AVX2 when the CPU has it (as
/// [`super::walk`] is: the number masks take one vector step).
///
/// Precondition, which its unchecked reads rely on (it is a safe fn only
/// because its callers are this module's and all meet it): `s` is not
/// empty, every token before the last lies below `input.len()` and the
/// last (the sentinel) at or after it, as stage 1's structurals with their
/// sentinel are (and the lines path's, whose sentinel is the first token at
/// or after the line's end). `scalar_run!` relies on the second half: a
/// token below `input.len()` is not the last, so the next one exists.
fn walk<R: Record>(input: &[u8], s: &[u32], max_depth: usize, rec: &mut R) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() {
        /// # Safety
        ///
        /// The CPU must support AVX2, BMI1, BMI2, LZCNT and POPCNT.
        #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
        unsafe fn walk_avx2<R: Record>(
            input: &[u8],
            s: &[u32],
            max_depth: usize,
            rec: &mut R,
        ) -> bool {
            walk_impl(input, s, max_depth, rec)
        }
        // SAFETY: `has_avx2` is true only when the CPU has every feature
        // `walk_avx2` enables (`cpu::Features::avx2_walk`).
        return unsafe { walk_avx2(input, s, max_depth, rec) };
    }
    walk_impl(input, s, max_depth, rec)
}

/// Whether token `k` (not the sentinel, and not `"`, `{` or `[`) can be a
/// value: with `R::CHECK_SCALARS`, a valid scalar ([`scalar_ok`]); else
/// anything but a structural, left for the caller to check.
#[inline(always)]
fn value_ok<R: Record>(input: &[u8], s: &[u32], k: usize) -> bool {
    if R::CHECK_SCALARS {
        scalar_ok(input, s, k)
    } else {
        !matches!(input[s[k] as usize], b',' | b':' | b']' | b'}')
    }
}

/// Whether token `k` (not the sentinel) is a valid scalar (number or
/// literal) that ends at a byte that ends tokens (or at the end of input).
#[inline(always)]
fn scalar_ok(input: &[u8], s: &[u32], k: usize) -> bool {
    let p = s[k] as usize;
    let c = input[p];
    // (`-` and the digits sort before the letters of the literals.)
    if c <= b'9' {
        // SAFETY: token `k` is not the sentinel, so token `k + 1` exists.
        let q = unsafe { *s.get_unchecked(k + 1) } as usize;
        plain_number(input, p, q) || any_scalar(input, p)
    } else if let Some(w) = input.get(p..).and_then(<[u8]>::first_chunk::<8>) {
        literal8(u64::from_le_bytes(*w), c)
    } else {
        match c {
            b't' => literal(input, p, *b"true"),
            b'n' => literal(input, p, *b"null"),
            b'f' => input.get(p + 1..p + 5) == Some(b"alse") && ends_token(input, p + 5),
            _ => false,
        }
    }
}

/// A literal as the 8 bytes where it starts see it: the literal's bytes
/// (little-endian), the mask of its bytes, and the shift that brings the
/// byte after it down.
#[derive(Clone, Copy)]
struct Literal {
    word: u64,
    mask: u64,
    shift: u32,
}

/// [`Literal`]s by the low five bits of their first byte (`t`, `n`, `f`
/// differ there); the other slots match nothing (mask 0, word 1). Another
/// letter in a literal's slot fails the comparison of the first byte.
static LITERALS: [Literal; 32] = {
    let none = Literal {
        word: 1,
        mask: 0,
        shift: 0,
    };
    let mut t = [none; 32];
    t[(b't' & 31) as usize] = Literal {
        word: u32::from_le_bytes(*b"true") as u64,
        mask: 0xffff_ffff,
        shift: 32,
    };
    t[(b'n' & 31) as usize] = Literal {
        word: u32::from_le_bytes(*b"null") as u64,
        mask: 0xffff_ffff,
        shift: 32,
    };
    t[(b'f' & 31) as usize] = Literal {
        word: u64::from_le_bytes(*b"false\0\0\0"),
        mask: 0xff_ffff_ffff,
        shift: 40,
    };
    t
};

/// Whether the 8 bytes `w` (little-endian) at a token whose first byte is
/// `c` (a byte above `9`) start with `true`, `null` or `false` followed by
/// a byte that ends a token: one table load and two tests, no branch on
/// which literal it is.
#[inline(always)]
fn literal8(w: u64, c: u8) -> bool {
    let l = LITERALS[(c & 31) as usize];
    w & l.mask == l.word && ENDS_TOKEN[(w >> l.shift) as u8 as usize]
}

/// The bytes that start a scalar token: every byte but the structurals
/// `{}[]:,` and `"` (the only other bytes stage 1 emits tokens at).
static SCALAR_START: [bool; 256] = {
    let mut t = [true; 256];
    let chars = *b"{}[]:,\"";
    let mut i = 0;
    while i < chars.len() {
        t[chars[i] as usize] = false;
        i += 1;
    }
    t
};

/// [`value_ok`] for `scalar_run!`: the token whose first 8 bytes are `w`
/// (little-endian). Without `R::CHECK_SCALARS` any scalar token is one
/// (any token but a structural or `"`); else only a literal (a number ends
/// the run; `"` and the structurals fail the literal's first byte). The
/// common element of a run, `true` or `null` followed by a comma, is
/// tested first with no table load (it is what [`literal8`] accepts for
/// those words and that byte); the rest go through [`literal8`].
#[inline(always)]
fn run_word_ok<R: Record>(w: u64) -> bool {
    let c = w as u8;
    if !R::CHECK_SCALARS {
        return SCALAR_START[c as usize];
    }
    const TRUE: u32 = u32::from_le_bytes(*b"true");
    const NULL: u32 = u32::from_le_bytes(*b"null");
    let head = w as u32;
    ((head == TRUE || head == NULL) && (w >> 32) as u8 == b',') || literal8(w, c)
}

/// The general check of a scalar token at `p` (exponents, whitespace after
/// the token, the end of input, errors): out of line, so that the common
/// shapes keep their registers.
#[inline(never)]
fn any_scalar(input: &[u8], p: usize) -> bool {
    scalar_end(input, p).is_some_and(|e| ends_token(input, e))
}

/// Whether the four bytes at `p` are `word` and a token ends after them.
#[inline(always)]
fn literal(input: &[u8], p: usize, word: [u8; 4]) -> bool {
    input.get(p..p + 4) == Some(&word[..]) && ends_token(input, p + 4)
}

/// Whether `input[e]` ends a token (or `e` is the end of input).
#[inline(always)]
fn ends_token(input: &[u8], e: usize) -> bool {
    input.get(e).is_none_or(|&b| ENDS_TOKEN[b as usize])
}

/// Whether the bytes from `p` up to the next token at `q` are exactly one
/// plain number, `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, of at most 32 bytes: the
/// shape of nearly every number, checked with one digit mask and a few bit
/// operations. `false` means "not known": exponents, whitespace before the
/// next token, the last 32 bytes of input and every error go the general
/// way.
///
/// The token is exactly `p..q` when the byte before `q` is not whitespace:
/// between a scalar token and the next token there is only whitespace (any
/// other byte would be part of the token, or a token itself).
#[inline(always)]
fn plain_number(input: &[u8], p: usize, q: usize) -> bool {
    plain_number_shape(input, p, q).is_some()
}

/// [`plain_number`]: `Some(has_fraction)` when it is one.
#[inline(always)]
fn plain_number_shape(input: &[u8], p: usize, q: usize) -> Option<bool> {
    let chunk = input.get(p..).and_then(<[u8]>::first_chunk::<32>)?;
    let len = q.wrapping_sub(p);
    // (Whitespace is at most b' '; so are control bytes, which the
    // general path rejects.)
    if len.wrapping_sub(1) >= 32 || chunk[len - 1] <= b' ' {
        return None;
    }
    let neg = (chunk[0] == b'-') as u32;
    let token = (u64::MAX >> (64 - len)) as u32;
    let digits = digit_mask32(chunk) & token;
    // Every byte but a leading `-` and one `.` must be a digit.
    let others = token & !digits & !neg;
    // A leading `0` must be the whole integer part.
    let leading_zero = chunk[neg as usize] == b'0' && (digits >> (neg + 1)) & 1 != 0;
    if len as u32 <= neg || leading_zero {
        return None;
    }
    if others == 0 {
        return Some(false);
    }
    // One `.`, with digits on both sides.
    let dot = others.trailing_zeros();
    (others & (others - 1) == 0
        && dot > neg
        && dot + 1 < len as u32
        && chunk[dot as usize & 31] == b'.')
        .then_some(true)
}

/// The mask of the ASCII digits among 32 bytes (bit `i` for byte `i`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn digit_mask32(chunk: &[u8; 32]) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: `chunk` is 32 readable bytes and `loadu` has no alignment
    // requirement; SSE2 is part of the x86_64 baseline.
    unsafe {
        let half = |at: usize| {
            let v = _mm_loadu_si128(chunk.as_ptr().add(at).cast());
            // A digit is a byte b with (b - '0') as u8 <= 9.
            let d = _mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8));
            let digit = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
            _mm_movemask_epi8(digit) as u32 & 0xFFFF
        };
        half(0) | half(16) << 16
    }
}

/// [`digit_mask32`] without SIMD.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[cfg_attr(not(target_arch = "x86_64"), inline(always))]
fn digit_mask32_portable(chunk: &[u8; 32]) -> u32 {
    chunk
        .iter()
        .enumerate()
        .fold(0, |m, (i, b)| m | (b.is_ascii_digit() as u32) << i)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn digit_mask32(chunk: &[u8; 32]) -> u32 {
    digit_mask32_portable(chunk)
}

/// The kinds of the enclosing container.
const TOP: u8 = 0;
const ARRAY: u8 = 1;
const OBJECT: u8 = 2;

#[inline(always)]
fn walk_impl<R: Record>(input: &[u8], s: &[u32], max_depth: usize, rec: &mut R) -> bool {
    let last = s.len() - 1;
    // The first byte of token `k`; `None` at the sentinel. Token `k` is
    // only read when `k == 0` or token `k - 1` was read and is not the
    // sentinel (every step past a token first matched its byte), so
    // `k <= last`.
    let tok = |k: usize| {
        debug_assert!(k <= last);
        // SAFETY: `k <= last < s.len()` (above).
        input.get(unsafe { *s.get_unchecked(k) } as usize).copied()
    };
    // The first byte of token `k`, known not to be the sentinel (`k <
    // last`): every other token's offset is that of a byte of the input,
    // so no bounds test.
    let inner = |k: usize| {
        debug_assert!(k < last);
        // SAFETY: `k < last < s.len()`, and every token before the
        // sentinel is the offset of a byte of the input (stage 1 emits
        // only offsets below `input.len()`, then the sentinel).
        unsafe { *input.get_unchecked(*s.get_unchecked(k) as usize) }
    };
    // The kept tokens (see `Record::KEEP`): `kept` of them so far are
    // written at `out`, which has room for `room`. The pointer and count
    // stay in registers for the whole walk.
    let (out, room) = if R::KEEP {
        rec.keep_buf()
    } else {
        (std::ptr::null_mut(), 0)
    };
    // (Room for every token, checked once here: then no keep can overflow,
    // see `keep!`, and the walk tests nothing per kept token.)
    if R::KEEP && room < s.len() {
        return false;
    }
    let mut kept = 0usize;
    // Keeps token `k`, a structural or opening quote just read with `tok`.
    // Every `keep!(k + i)` below keeps the `i`-th of the tokens `k..` that
    // the same step then passes (`k += m` after keeping tokens `k` to
    // `k + m - 1`, each at most once), so tokens are kept in increasing
    // order, each at most once: `kept <= k` whenever token `k` is kept.
    macro_rules! keep {
        ($k:expr) => {
            if R::KEEP {
                let k: usize = $k;
                debug_assert!(k <= last && kept <= k);
                // SAFETY: token `k` was read by `tok`, so `k <= last`;
                // `kept <= k` (above), so `kept < s.len() <= room` (checked
                // on entry), and `out` has room for `room` entries.
                unsafe { out.add(kept).write(*s.get_unchecked(k)) };
                kept += 1;
            }
        };
    }
    let max_depth = max_depth.min(STACK);
    // The container table (see `Record::table`): entries are written at
    // `table`, with room for `table_cap` of them, every container the walk can
    // open ([`table_room`]: at most `max_depth` at once); `opened`
    // containers were opened so far (the next one's ordinal).
    let table_cap = if R::RECORD {
        table_room(s.len(), max_depth)
    } else {
        0
    };
    let table = if R::RECORD {
        rec.table(table_cap)
    } else {
        std::ptr::null_mut()
    };
    let mut opened = 0usize;
    // Counts container `opened` as opened (its entry is written when it
    // closes).
    macro_rules! open {
        () => {
            if R::RECORD {
                opened += 1;
            }
        };
    }
    // Writes the entry of container `$ord`, which closes with `$len`
    // children at kept token `kept - 1`.
    macro_rules! close {
        ($ord:expr, $len:expr) => {
            if R::RECORD {
                let ord: usize = $ord;
                debug_assert!(ord < opened && opened <= table_cap);
                let entry = R::entry($len, kept.wrapping_sub(1), ord, opened);
                // SAFETY: container `ord` was opened, so `ord < opened`;
                // `opened <= table_cap` ([`table_room`]: every closed container
                // took two tokens of its own, and at most `max_depth` are
                // open at once, the depth being checked before each
                // opens), and `table` has room for `table_cap` entries.
                unsafe { table.add(ord).write(entry) };
            }
        };
    }
    // The enclosing containers' kinds; when recording, also their
    // ordinals and the commas seen so far (children - 1) in each, packed
    // in one word (see `frame`).
    // (Uninitialised, both: zeroing them cost more than walking a small
    // document. Frame `d` is written when a container opens at depth `d`
    // and read only when that container closes.)
    let mut stack = [MaybeUninit::<u8>::uninit(); STACK];
    let mut frames = [MaybeUninit::<u64>::uninit(); STACK];
    let mut depth = 0usize;
    let mut kind = TOP;
    // The innermost open container's ordinal (high 32 bits) and the commas
    // seen in it so far (low 32 bits; a comma adds 1): one register and one
    // store and load per container instead of two (the walk runs short of
    // registers). The commas never carry into the ordinal: a container has
    // fewer commas than the input has bytes, which is below `u32::MAX`.
    let mut frame = 0u64;
    let mut k = 0usize;
    // The empty container at tokens `k` and `k + 1` (no frame): kept, and
    // passed.
    macro_rules! empty {
        () => {{
            keep!(k);
            keep!(k + 1);
            let o = opened;
            open!();
            close!(o, 0);
            k += 2;
        }};
    }
    // A non-empty container opens (its depth checked): the enclosing
    // one's frame is pushed.
    macro_rules! open_frame {
        () => {
            stack[depth] = MaybeUninit::new(kind);
            if R::RECORD {
                frames[depth] = MaybeUninit::new(frame);
                frame = (opened as u64) << 32;
            }
            open!();
            depth += 1;
        };
    }
    // An object or array value at token `k` (not yet kept): a non-empty
    // one opens (its frame pushed) and the walk goes on with its first
    // member or element; an empty one is passed, and the walk goes on
    // after it as after any value. Objects and arrays apart, each with its
    // common case (a member, an element) first: an object's first key and
    // colon are tested before its closer, and no closer byte is chosen by
    // kind at run time. Used wherever a value may begin, so that a
    // container value of an object member or array element goes straight
    // here, not through the dispatch of a value again.
    macro_rules! open_object {
        ($value:lifetime) => {{
            if depth >= max_depth {
                return false;
            }
            match tok(k + 1) {
                Some(b'"') => {
                    if tok(k + 2) != Some(b':') {
                        return false;
                    }
                    open_frame!();
                    kind = OBJECT;
                    keep!(k);
                    keep!(k + 1);
                    keep!(k + 2);
                    k += 3;
                    continue $value;
                }
                Some(b'}') => empty!(),
                _ => return false,
            }
        }};
    }
    macro_rules! open_array {
        ($value:lifetime) => {{
            if depth >= max_depth {
                return false;
            }
            if tok(k + 1) == Some(b']') {
                empty!();
            } else {
                open_frame!();
                kind = ARRAY;
                keep!(k);
                k += 1;
                continue $value;
            }
        }};
    }
    // A run of literal elements in an array (`[true, null, true, ...]`),
    // after one was passed (not after a number: that cost a strict parse
    // of twitter.json, whose `[0, 10]` index pairs end a run at once,
    // 1.3% more instructions in the helper's A/B): while token `k` is a
    // `,` and token `k + 1` is a valid literal (with `R::CHECK_SCALARS`;
    // else any scalar token), both are passed here, with one test of the
    // position (`k` against `last`), one of the literal's offset against
    // `limit`, three loads in the common case and no dispatch on the
    // element's kind (strict validation: two pairs a step, see below;
    // truenull.json's 2,000 literals -8% instructions, +17% MB/s). Anything
    // else (the
    // closer, a string, a number, a container, an invalid literal, the
    // last 7 bytes of input) ends the run, and the element loop reads the
    // same tokens again.
    macro_rules! scalar_run {
        () => {
            // Offsets below this are of a byte of the input with 8 bytes
            // readable from it: below it, a token is not the sentinel, and
            // a literal's word can be read whole. (Not a variable of the
            // whole walk: one more live register there made a strict
            // parse of twitter.json cost more instructions.)
            let limit = input.len().saturating_sub(7);
            // Strict validation (no table recorded) passes two pairs a step
            // while four tokens below the sentinel remain: one load of
            // their four offsets, one test of the position and one of the
            // second literal's offset for both. (Not the recording walks:
            // there the larger loop cost the objects' loops registers,
            // twitter_timeline.json's `loads` +0.3% instructions, -1.5%
            // MB/s; with one single pair before the double ones, strict
            // validation kept the instructions saved but lost the time.)
            if !R::RECORD {
                loop {
                    // Tokens `k` to `k + 3` exist (`k + 2 < last`); token
                    // `k + 3` may be the sentinel, whose offset
                    // (`input.len()`) fails `p1 < limit` below.
                    if k + 2 >= last {
                        break;
                    }
                    let four = s.as_ptr().wrapping_add(k).cast::<[u32; 4]>();
                    // SAFETY: `k + 3 <= last < s.len()` (above).
                    let [q0, p0, q1, p1] = unsafe { four.read_unaligned() };
                    let (q0, p0) = (q0 as usize, p0 as usize);
                    let (q1, p1) = (q1 as usize, p1 as usize);
                    // (Offsets ascend: `p0 < q1 < p1 < limit` bounds both
                    // words.)
                    if p1 >= limit {
                        break;
                    }
                    debug_assert!(q0 < p0 && p0 < q1 && q1 < p1);
                    // SAFETY: tokens `k` and `k + 2` lie before the last
                    // token, so below `input.len()`; `p0, p1 < limit`, so 8
                    // bytes are readable from each.
                    let (c0, c1, w0, w1) = unsafe {
                        let at = |p: usize| input.as_ptr().add(p).cast::<u64>().read_unaligned();
                        (
                            *input.get_unchecked(q0),
                            *input.get_unchecked(q1),
                            u64::from_le(at(p0)),
                            u64::from_le(at(p1)),
                        )
                    };
                    let commas = c0 == b',' && c1 == b',';
                    if !(commas && run_word_ok::<R>(w0) && run_word_ok::<R>(w1)) {
                        break;
                    }
                    keep!(k);
                    keep!(k + 2);
                    rec.scalar();
                    rec.scalar();
                    k += 4;
                }
            }
            // Then one pair a step: three loads a pair in the common case
            // (both offsets in one, the comma's byte, the literal's word;
            // the loop ran at ~3 cycles a pair natively on its nine loads).
            loop {
                // Token `k - 1` was a scalar token, not the sentinel, so
                // `k <= last`; below `last`, token `k` is not the sentinel
                // either and token `k + 1` exists.
                if k >= last {
                    break;
                }
                // SAFETY: `k + 1 <= last < s.len()` (above): tokens `k`
                // and `k + 1`, read at once.
                let [q, p] = unsafe { s.as_ptr().add(k).cast::<[u32; 2]>().read_unaligned() };
                let (q, p) = (q as usize, p as usize);
                // (`p < limit` bounds the literal's word; the comma needs no
                // test: token `k` is not the last, so `q < input.len()`.)
                if p >= limit {
                    break;
                }
                debug_assert!(q < p);
                // SAFETY: `k < last`, and every token before the last lies
                // below `input.len()` (the walk's precondition).
                if unsafe { *input.get_unchecked(q) } != b',' {
                    break;
                }
                // SAFETY: `p < limit`, so 8 bytes are readable from `p`.
                let w = unsafe { input.as_ptr().add(p).cast::<u64>().read_unaligned() };
                let w = u64::from_le(w);
                if !run_word_ok::<R>(w) {
                    break;
                }
                keep!(k);
                if R::RECORD {
                    frame += 1;
                }
                rec.scalar();
                k += 2;
            }
        };
    }
    'value: loop {
        // --- a value at token k ---
        match tok(k) {
            // Numbers first, as in the array loop below (the first element
            // of each `[x, y]` pair of coordinates comes here).
            Some(c) if c.wrapping_sub(b'-') <= b'9' - b'-' => {
                if !value_ok::<R>(input, s, k) {
                    return false;
                }
                rec.scalar();
                k += 1
            }
            Some(b'"') => {
                keep!(k);
                k += 1
            }
            Some(b'{') => open_object!('value),
            Some(b'[') => open_array!('value),
            Some(_) if value_ok::<R>(input, s, k) => {
                rec.scalar();
                k += 1
            }
            _ => return false,
        }
        // --- after a value: token k must continue or close `kind` ---
        loop {
            if kind == ARRAY {
                loop {
                    match tok(k) {
                        Some(b',') => {
                            keep!(k);
                            k += 1;
                            if R::RECORD {
                                frame += 1;
                            }
                            // Elements that are strings or scalars stay here.
                            // Numbers are tested first, by one range test of
                            // their first byte (`-` to `9`; `.` and `/` then
                            // fail the number check): long arrays of numbers
                            // (coordinates, meshes) are the runs this loop
                            // spends most of its time on, and the three
                            // compares for `"`, `{` and `[` came first.
                            match tok(k) {
                                Some(c) if c.wrapping_sub(b'-') <= b'9' - b'-' => {
                                    if !value_ok::<R>(input, s, k) {
                                        return false;
                                    }
                                    rec.scalar();
                                    k += 1
                                }
                                Some(b'"') => {
                                    keep!(k);
                                    k += 1
                                }
                                Some(b'{') => open_object!('value),
                                Some(b'[') => open_array!('value),
                                Some(_) if value_ok::<R>(input, s, k) => {
                                    rec.scalar();
                                    k += 1;
                                    scalar_run!();
                                }
                                _ => return false,
                            }
                        }
                        Some(b']') => break,
                        _ => return false,
                    }
                }
            } else if kind == OBJECT {
                loop {
                    match tok(k) {
                        Some(b',') => {
                            // (Tokens `k + 1` and `k + 2` are a key and a
                            // colon, and token `k + 3` a value, only if
                            // `k + 3` is below the sentinel: one test of the
                            // position instead of one per token, the value's
                            // included.)
                            if k + 3 >= last || inner(k + 1) != b'"' || inner(k + 2) != b':' {
                                return false;
                            }
                            keep!(k);
                            keep!(k + 1);
                            keep!(k + 2);
                            k += 3;
                            if R::RECORD {
                                frame += 1;
                            }
                            // Members whose values are strings or scalars
                            // stay here.
                            match inner(k) {
                                b'"' => {
                                    keep!(k);
                                    k += 1
                                }
                                b'{' => open_object!('value),
                                b'[' => open_array!('value),
                                _ if value_ok::<R>(input, s, k) => {
                                    rec.scalar();
                                    k += 1
                                }
                                _ => return false,
                            }
                        }
                        Some(b'}') => break,
                        _ => return false,
                    }
                }
            } else {
                if R::STOP {
                    rec.stopped(k);
                } else if k != last {
                    return false;
                }
                // SAFETY: `keep!` wrote the first `kept` entries, and
                // `kept <= room`; every container opened has closed (the
                // walk is back at the top level), so `close!` wrote the
                // first `opened` entries of the table, and `opened <=
                // table_cap` (see `close!`).
                unsafe { rec.accepted(kept, opened) };
                return true;
            }
            // Close the non-empty container at token k.
            keep!(k);
            k += 1;
            depth -= 1;
            // SAFETY: frame `depth` was written when the container now
            // closing opened at this depth (a container closes here only
            // after it opened with a frame); depths only grow by one push
            // and shrink by one pop. So `depth < max_depth <= STACK`: the
            // read is in bounds (unchecked: LLVM could not prove it, and
            // tested it on every close).
            kind = unsafe { stack.get_unchecked(depth).assume_init() };
            if R::RECORD {
                let (ord, comma) = ((frame >> 32) as usize, frame as u32);
                close!(ord, comma + 1);
                // SAFETY: as for `stack`: frame `depth` was written (with
                // `RECORD`, as here) when the container now closing opened
                // at this depth, and `depth < STACK`.
                frame = unsafe { frames.get_unchecked(depth).assume_init() };
            }
        }
    }
}

/// Whether the token scan runs here: it does not without a vector level
/// (no AVX2, or `QJSON_BACKEND=scalar`), where the builders above give
/// `None` and the callers take the exact path. When not, says that the
/// calling test is skipped (tests of this module, of [`returns`] and of
/// the NDJSON line path, which need the token scan).
#[cfg(test)]
pub(crate) fn token_scan_runs(input: &[u8]) -> bool {
    let runs = scan::scan_tokens(input, &mut Scan::default()).is_some();
    if !runs {
        eprintln!("skipped: no token scan on this CPU or backend level");
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The validation scan ([`scan::scan_tokens_valid`]) leaves out the
    /// escapes only when all are plain, and otherwise finds the same ones
    /// as [`scan::scan_tokens`]: surrogates (pairs, lone halves), invalid
    /// escapes and runs of backslashes, shifted across block boundaries;
    /// [`valid`] then agrees with the exact check.
    #[test]
    fn validation_scan_escapes() {
        let bodies: [&[u8]; 10] = [
            br#""\ud83d\ude00""#,
            br#""a\\\\\"\\""#,
            br#""\ud83d""#,
            br#""\ude00 x \u0041""#,
            br#""\q""#,
            br#""\u12G4""#,
            br#""\\\\\\\\\\\\\\\\\ud800\udc00\\""#,
            br#""plain \n \t \u00e9 \/""#,
            br#""\uD834\uDD1E" , "\u0000""#,
            br#""\"\"\"\ud83d\ude00\"""#,
        ];
        // Plain escapes over several blocks before the first surrogate,
        // and after it.
        let long = [
            format!(
                r#""{}\ud83d\ude00{}""#,
                r"ab\n\\\\".repeat(40),
                r"\t".repeat(30)
            ),
            format!(r#""{}", "\udc00""#, r"x\/".repeat(100)),
            format!(r#""{}""#, r#"\u00e9\""#.repeat(50)),
        ];
        let bodies = bodies
            .iter()
            .copied()
            .chain(long.iter().map(|b| b.as_bytes()));
        for body in bodies {
            for shift in 0..70 {
                let mut doc = vec![b' '; shift];
                doc.extend_from_slice(b"[1, ");
                doc.extend_from_slice(body);
                doc.extend_from_slice(b", \"x\"]");
                if !token_scan_runs(&doc) {
                    return;
                }
                let (mut all, mut lazy) = (Scan::default(), Scan::default());
                let a = scan::scan_tokens(&doc, &mut all);
                let b = scan::scan_tokens_valid(&doc, &mut lazy);
                assert_eq!(a, b, "{shift} {:?}", String::from_utf8_lossy(body));
                assert_eq!(all.structurals, lazy.structurals);
                assert_eq!(all.escapes_valid, lazy.escapes_valid);
                if !lazy.escapes_valid {
                    assert_eq!(all.escapes, lazy.escapes, "{shift} {body:?}");
                } else {
                    assert!(lazy.escapes.is_empty() || lazy.escapes == all.escapes);
                }
                let opts = super::super::Options {
                    lazy: false,
                    max_depth: 64,
                };
                let exact = super::super::validate_exact(&doc, &opts).is_ok();
                assert_eq!(valid(&doc, 64), exact, "{shift} {body:?}");
            }
        }
    }

    /// [`literal8`] agrees with the byte-wise check on every first byte
    /// and on near misses.
    #[test]
    fn literals_by_word() {
        let words: [&[u8]; 12] = [
            b"true",
            b"null",
            b"false",
            b"tru",
            b"nul",
            b"fals",
            b"True",
            b"nulL",
            b"falsy",
            b"t",
            b"truee",
            b"nullnull",
        ];
        for word in words {
            for c in 0..=255u8 {
                for &after in b" \t\n\r,]}:\"xe0\x7f" {
                    let mut b = word.to_vec();
                    b[0] = if c > b'9' { c } else { b[0] };
                    b.push(after);
                    b.resize(8, b'x');
                    let w = u64::from_le_bytes(b[..8].try_into().unwrap());
                    let want = [&b"true"[..], b"null", b"false"]
                        .iter()
                        .any(|l| b.starts_with(l) && ENDS_TOKEN[b[l.len()] as usize]);
                    assert_eq!(literal8(w, b[0]), want, "{:?}", String::from_utf8_lossy(&b));
                }
            }
        }
    }

    /// The vectors kept between calls change no answer: documents of very
    /// different sizes (over and under [`KEEP_MAX`] tokens), valid and
    /// invalid, in turns, agree with the exact check; a large scan's
    /// vectors are not kept.
    #[test]
    fn reused_vectors_change_nothing() {
        let big = {
            let mut v = b"[".to_vec();
            for i in 0..(KEEP_MAX + 100) {
                v.extend_from_slice(if i % 2 == 0 { b"1," } else { b"\"a\"," });
            }
            v.extend_from_slice(b"true]");
            v
        };
        let docs: [&[u8]; 8] = [
            &big,
            b"[1,2,3]",
            b"{\"a\":[true,null,\"x\\n\"]}",
            b"[1,2,",
            &big[..big.len() - 1],
            b"\"\\u0041\"",
            b"{}",
            "[\"\u{e9}\", 1e5, -0.5]".as_bytes(),
        ];
        let opts = crate::index::Options {
            lazy: false,
            max_depth: 1024,
        };
        for round in 0..3 {
            for d in docs {
                let want = crate::index::validate_exact(d, &opts).is_ok();
                if !token_scan_runs(d) {
                    return;
                }
                assert_eq!(
                    valid(d, 1024),
                    want,
                    "round {round}: {:?}",
                    &d[..d.len().min(40)]
                );
                let kept = SPARE.with(|c| c.borrow().scan.structurals.capacity());
                assert!(kept <= KEEP_MAX);
            }
        }
    }

    /// A dropped index's vectors are the next build's (same addresses) when
    /// they fit, also after a document of another size held the slot, for
    /// documents the thread keeps: few scalar tokens (the walk's vector
    /// kept), under and over [`COPY_MIN`] tokens, among them a mid-size one
    /// with more scalar tokens than [`slack_max`] (as github_issues); many
    /// over [`COPY_MIN`] (copied out exactly); the index is the same as a
    /// fresh one's.
    #[test]
    fn a_dropped_index_is_recycled() {
        use crate::index::{Index, Options};
        let opts = Options::default();
        let small = br#"{"a": [1, 2, {"b": null}], "c": "d", "e": [[], {}]}"#.to_vec();
        if !token_scan_runs(&small) {
            return;
        }
        let other = format!("[{}0]", "[1, \"x\"], ".repeat(200)).into_bytes();
        // 60 objects of 18 tokens, 3 of them scalars (as github_issues):
        // more scalar tokens than `slack_max`, their room within
        // `handover_room`, the index smaller than the input.
        let issue =
            r#"{"id": 1, "n": 2.5, "ok": true, "title": "an issue's title, of some length"}, "#;
        let mid = format!("[{}{{}}]", issue.repeat(60)).into_bytes();
        let large = format!("{{\"k\": [{}1]}}", "\"s\", \"t\", 7, ".repeat(3000)).into_bytes();
        let numbers = format!("[{}\"e\"]", "1, 2, 3, \"s\", ".repeat(2500)).into_bytes();
        let exact = |d: &[u8]| Index::exact_parts(d, &opts, true).unwrap().0;
        let free = || {
            SPARE.with(|c| {
                let spare = c.borrow();
                (
                    spare.free_structurals.capacity(),
                    spare.free_containers.capacity(),
                )
            })
        };
        for doc in [&small, &mid, &large, &numbers] {
            let mut tokens = Scan::default();
            let _ = scan::scan_tokens(doc, &mut tokens);
            let n = tokens.structurals.len();
            assert!(n <= KEEP_MAX);
            drop(Index::build(&other, &opts).unwrap());
            let first = Index::build(doc, &opts).unwrap();
            assert!(first.heap_bytes() <= FREE_MAX, "{n} tokens");
            let (s, c) = (first.structurals.as_ptr(), first.containers.as_ptr());
            drop(first);
            let second = Index::build(doc, &opts).unwrap();
            // (Taken from the slots, not just the same addresses again
            // from the allocator.)
            assert_eq!(free(), (0, 0), "{n} tokens");
            assert_eq!(second.structurals.as_ptr(), s, "{n} tokens");
            assert_eq!(second.containers.as_ptr(), c, "{n} tokens");
            let want = exact(doc);
            assert_eq!(second.structurals, want.structurals);
            let t = |c: &[Container]| {
                c.iter()
                    .map(|c| (c.close, c.next, c.len))
                    .collect::<Vec<_>>()
            };
            assert_eq!(t(&second.containers), t(&want.containers));
            // A third round: no other document between.
            let p = second.structurals.as_ptr();
            drop(second);
            let third = Index::build(doc, &opts).unwrap();
            assert_eq!(third.structurals.as_ptr(), p, "{n} tokens");
        }
        // Over `FREE_MAX` bytes: freed, the slots keep what they held.
        let huge = format!("[{}1]", "[2], ".repeat(30_000)).into_bytes();
        drop(Index::build(&small, &opts).unwrap());
        let before = free();
        let index = Index::build(&huge, &opts).unwrap();
        assert!(index.heap_bytes() > FREE_MAX);
        drop(index);
        assert_eq!(free(), before);
    }

    /// Only a thread that builds indexes keeps dropped ones: a thread that
    /// drops an index built on another keeps none of its vectors (it would
    /// hold them until it exits), one that has built keeps them.
    #[test]
    fn only_building_threads_recycle() {
        use crate::index::{Index, Options};
        let opts = Options::default();
        let doc = format!("[{}0]", "[1, \"x\"], ".repeat(200)).into_bytes();
        if !token_scan_runs(&doc) {
            return;
        }
        let free = || SPARE.with(|c| c.borrow().free_structurals.capacity());
        let index = Index::build(&doc, &opts).unwrap();
        let kept = std::thread::spawn(move || {
            drop(index);
            free()
        })
        .join()
        .unwrap();
        assert_eq!(kept, 0);
        let index = Index::build(&doc, &opts).unwrap();
        let cap = index.structurals.capacity();
        let kept = std::thread::spawn(move || {
            drop(Index::build(b"[1]", &opts).unwrap());
            drop(index);
            free()
        })
        .join()
        .unwrap();
        assert_eq!(kept, cap);
    }

    /// Arrays of scalars, as `scalar_run!` passes them, valid and broken
    /// (bad literals, bad numbers, missing or doubled commas, strings and
    /// containers among them, the run ending in the last 7 bytes of
    /// input): the token walk accepts exactly what the exact check accepts,
    /// and the strict index it builds is the exact one.
    #[test]
    fn scalar_runs_agree_with_the_exact_check() {
        use crate::index::{Index, Options};
        if !token_scan_runs(b"[1]") {
            return;
        }
        let opts = Options::default();
        let pieces: [&[u8]; 24] = [
            b"true",
            b"null",
            b"false",
            b"1",
            b"-2.5",
            b"0",
            b"1e5",
            b"12345678",
            b"\"a\"",
            b"[]",
            b"{}",
            b"[true]",
            b"tru",
            b"nul",
            b"falsex",
            b"01",
            b"1.",
            b"-",
            b"t",
            b"nulll",
            b"truefalse",
            b"nan",
            b"1 2",
            b"\"\"",
        ];
        let seps: [&[u8]; 7] = [b",", b", ", b" ,", b",\n", b",,", b"", b" "];
        let mut rng = crate::test_rng(0x5CA1_AB1E);
        let (mut accepted, mut total) = (0, 0);
        for _ in 0..20_000 {
            let n = 1 + rng() as usize % 24;
            let mut d = Vec::new();
            if rng().is_multiple_of(4) {
                d.extend_from_slice(b"{\"k\": ");
            }
            d.push(b'[');
            for i in 0..n {
                if i > 0 {
                    // Mostly plain commas; now and then a broken separator.
                    let sep = if rng().is_multiple_of(16) {
                        seps[rng() as usize % seps.len()]
                    } else {
                        seps[rng() as usize % 2]
                    };
                    d.extend_from_slice(sep);
                }
                let piece = if rng().is_multiple_of(8) {
                    pieces[rng() as usize % pieces.len()]
                } else {
                    pieces[rng() as usize % 6]
                };
                d.extend_from_slice(piece);
            }
            d.push(b']');
            if d[0] == b'{' {
                d.push(b'}');
            }
            let want = crate::index::validate_exact(&d, &opts).is_ok();
            let text = String::from_utf8_lossy(&d).into_owned();
            assert_eq!(valid(&d, 64), want, "{text}");
            if want {
                let got = Index::build(&d, &opts).unwrap();
                let exact = Index::exact_parts(&d, &opts, true).unwrap().0;
                assert_eq!(got.structurals, exact.structurals, "{text}");
                let t = |c: &[Container]| {
                    c.iter()
                        .map(|c| (c.close, c.next, c.len))
                        .collect::<Vec<_>>()
                };
                assert_eq!(t(&got.containers), t(&exact.containers), "{text}");
                accepted += 1;
            }
            total += 1;
        }
        assert!(
            accepted > total / 4 && accepted < total,
            "{accepted} of {total}"
        );
    }

    /// Long runs of literals with one defect at each position in turn, as
    /// an element or as the separator before one (a broken literal, a
    /// missing, doubled or wrong separator, a number or a string among
    /// them; whitespace around the commas), so that it falls in the
    /// first and in the second pair of strict validation's two-pair steps,
    /// and near the input's end: the token walk accepts exactly what the
    /// exact check accepts.
    #[test]
    fn literal_runs_with_one_defect_agree_with_the_exact_check() {
        use crate::index::Options;
        if !token_scan_runs(b"[1]") {
            return;
        }
        let opts = Options::default();
        let defects: [&[u8]; 11] = [
            b"tru", b"nulx", b"", b",", b"1", b"\"s\"", b"falsy", b"[]", b" ", b":", b",,",
        ];
        for n in 1..14 {
            for sep in [&b","[..], b", ", b" ,", b",\n  "] {
                for at in 0..n {
                    for defect in defects {
                        let lit = |i: usize| -> &[u8] {
                            if i % 3 == 1 {
                                b"false"
                            } else {
                                b"true"
                            }
                        };
                        // The defect as element `at`, or as the separator
                        // before it (then element `at` is a literal).
                        let mut as_element = b"[".to_vec();
                        let mut as_separator = b"[".to_vec();
                        for i in 0..n {
                            if i > 0 {
                                as_element.extend_from_slice(sep);
                                as_separator.extend_from_slice(if i == at { defect } else { sep });
                            }
                            as_element.extend_from_slice(if i == at { defect } else { lit(i) });
                            as_separator.extend_from_slice(lit(i));
                        }
                        for mut d in [as_element, as_separator] {
                            d.push(b']');
                            for doc in [d.clone(), [b"{\"k\":".as_slice(), &d, b"}"].concat()] {
                                let want = crate::index::validate_exact(&doc, &opts).is_ok();
                                let text = String::from_utf8_lossy(&doc).into_owned();
                                assert_eq!(valid(&doc, 64), want, "{text}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// `plain_number` only accepts valid numbers that end right before the
    /// next token, and accepts every plain one.
    #[test]
    fn plain_numbers() {
        use crate::decode::number::check_scalar;
        let pieces: &[&[u8]] = &[b"-", b"0", b"1", b"9", b".", b"e", b"+", b"x", b" ", b"00"];
        let mut seed = 1u32;
        for _ in 0..200_000 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let mut tok = Vec::new();
            let mut r = seed;
            let parts = 1 + (r % 13) as usize;
            for _ in 0..parts {
                r = r.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
                tok.extend_from_slice(pieces[(r >> 24) as usize % pieces.len()]);
            }
            if tok.len() > 34 || tok.is_empty() {
                continue;
            }
            let mut input = tok.clone();
            input.push(b',');
            let q = tok.len();
            input.extend_from_slice(&[b' '; 40]);
            let chunk = input.first_chunk::<32>().unwrap();
            assert_eq!(digit_mask32(chunk), digit_mask32_portable(chunk));
            let plain = tok.iter().all(|b| b.is_ascii_digit() || b".-".contains(b));
            let valid = check_scalar(&tok, 0).is_ok();
            let got = plain_number(&input, 0, q);
            assert!(!got || valid, "{:?}", String::from_utf8_lossy(&tok));
            if plain && valid && tok.len() <= 32 {
                assert!(got, "{:?}", String::from_utf8_lossy(&tok));
            }
        }
        // Whitespace or a control byte between a number and the next token,
        // at every length up to the 32-byte window's.
        for n in 1..=32usize {
            for number in [&b"7"[..], b"-7", b"0.5", b"-12.25"] {
                for gap in [&b" "[..], b"\t", b"\n", b"\r", b"\x01", b"\x1f", b"  "] {
                    let mut input = vec![b'1'; n.saturating_sub(number.len() + gap.len())];
                    input.extend_from_slice(number);
                    input.extend_from_slice(gap);
                    let q = input.len();
                    input.push(b',');
                    input.extend_from_slice(&[b' '; 40]);
                    assert!(
                        !plain_number(&input, 0, q),
                        "{:?}",
                        String::from_utf8_lossy(&input)
                    );
                    // Without the gap the same token passes.
                    let q = q - gap.len();
                    if q <= 32 && check_scalar(&input[..q], 0).is_ok() {
                        let mut plain = input[..q].to_vec();
                        plain.push(b',');
                        plain.extend_from_slice(&[b' '; 40]);
                        assert!(plain_number(&plain, 0, q));
                    }
                }
            }
        }
    }

    /// The token-built strict index equals the exact walk's (structurals,
    /// container table, escapes) on every document the token walk accepts,
    /// and it accepts every valid one here.
    #[test]
    fn token_index_equals_exact_index() {
        let opts = crate::index::Options::default();
        let same = |input: &[u8]| {
            let exact = crate::index::Index::exact_parts(input, &opts, true);
            let Some(Built {
                structurals: s,
                containers: c,
                escapes: esc,
                non_ascii,
                escaped,
            }) = build(input, opts.max_depth, true)
            else {
                // (Nesting deeper than the walk's stack is left to the
                // exact walk.)
                let deep = input.iter().filter(|&&b| b == b'[').count() > STACK;
                if scan::scan_tokens(input, &mut Scan::default()).is_some() && !deep {
                    assert!(exact.is_err(), "{:?}", String::from_utf8_lossy(input));
                }
                return;
            };
            let (index, escapes) = exact.unwrap();
            assert_eq!(s, index.structurals, "{:?}", String::from_utf8_lossy(input));
            let t = |c: &[Container]| {
                c.iter()
                    .map(|c| (c.close, c.next, c.len))
                    .collect::<Vec<_>>()
            };
            assert_eq!(t(&c), t(&index.containers));
            // Up to the size the thread keeps, the Doc holds the table
            // with at most `fits`' slack (a recycled vector), however large
            // the thread's spare one is, and its structurals at most
            // `SPARE_MAX` bytes and a quarter; above, `SPARE_MAX` bytes.
            let mut tokens = Scan::default();
            let _ = scan::scan_tokens(input, &mut tokens);
            let slack = s.capacity() - s.len();
            if tokens.structurals.len() <= KEEP_MAX {
                assert!(fits(&c, c.len()), "{} {}", c.capacity(), c.len());
                assert!(
                    slack <= handover_room(s.len()),
                    "{} {}",
                    s.capacity(),
                    s.len()
                );
                if tokens.structurals.len() < COPY_MIN && slack * 4 > SPARE_MAX {
                    assert!(s.capacity() * 4 <= input.len(), "{}", s.capacity());
                }
            } else {
                assert!(slack * 4 <= SPARE_MAX);
            }
            assert_eq!(esc, escapes);
            assert_eq!(non_ascii, index.non_ascii);
            assert_eq!(escaped, index.escaped);
            assert_eq!(escaped, !escapes.is_empty());
        };
        let docs: [&[u8]; 14] = [
            b"{}",
            b"[]",
            b"1",
            b" \"a\\nb\" ",
            b"[1, [2, []], {}, {\"a\": [true, null, -1.5e3]}]",
            b"{\"a\": {\"b\": {}}, \"c\": [[[]]], \"d\": \"\\u00e9\"}",
            b"[1,2,]",
            b"{\"a\" 1}",
            b"[tru]",
            b"[1 2]",
            "[\"\u{e9}\", 1e5, -0.5, false]".as_bytes(),
            b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
            b"{\"k\":1,\"k2\":{\"x\":[1,2,{\"y\":null}]},\"z\":\"s\"}",
            b"",
        ];
        for d in docs {
            same(d);
        }
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        same(deep.as_bytes());
        // The most containers a walk opens before it fails: empty ones
        // (two tokens each), then as deep as the walk goes, then an
        // error; the table's room (`table_room`) holds them all (the
        // debug assertion in the walk's `close!` checks it).
        for (empties, depth) in [(0, STACK + 10), (1, STACK - 1), (5000, STACK), (3, 255)] {
            let doc = format!("[{}{}x", "[],".repeat(empties), "[".repeat(depth));
            same(doc.as_bytes());
            let nest = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let doc = format!("[{}{nest}x", "[],".repeat(empties));
            same(doc.as_bytes());
            let doc = format!("{}{}", "{\"a\":".repeat(depth), "{}".repeat(empties));
            same(doc.as_bytes());
        }
        // Many containers, over and under `KEEP_MAX` tokens; valid, cut
        // short, and broken inside.
        let unit = "{\"a\":[[],[1,{\"b\":[[]]}]]},";
        for n in [400, 3000, 20000] {
            let body = unit.repeat(n);
            let valid = format!("[[{body}1],{{\"c\":[{body}2]}}]");
            same(valid.as_bytes());
            same(&valid.as_bytes()[..valid.len() - 1]);
            same(format!("[[{body}1],{{\"c\":[{body}2}}]]").as_bytes());
        }
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
        for sub in ["jsonexamples", "JSONTestSuite/test_parsing"] {
            let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
                eprintln!("skipped: {} is absent", dir.join(sub).display());
                continue;
            };
            for e in entries.flatten() {
                if e.path().extension().is_some_and(|x| x == "json") {
                    same(&std::fs::read(e.path()).unwrap());
                }
            }
        }
    }

    #[test]
    fn corpus_files_are_valid() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/data/jsonexamples");
        if !dir.is_dir() {
            eprintln!(
                "skipped: {} is absent (see the README's Test data)",
                dir.display()
            );
            return;
        }
        for name in [
            "twitter.json",
            "citm_catalog.json",
            "canada.json",
            "marine_ik.json",
        ] {
            let input = std::fs::read(dir.join(name)).unwrap();
            if !token_scan_runs(&input) {
                return;
            }
            let mut scan = Scan::default();
            assert!(
                matches!(scan::scan_tokens(&input, &mut scan), Some(Ok(()))),
                "{name}"
            );
            assert!(scan.first_control.is_none());
            assert!(walk(&input, &scan.structurals, 1024, &mut Check), "{name}");
            assert!(valid(&input, 1024), "{name}");
        }
    }
}
