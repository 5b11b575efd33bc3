//! The block algorithm (simdjson's stage 1), written once for every SIMD
//! backend.
//!
//! The input is read in 64-byte blocks; each block becomes a handful of
//! 64-bit masks (bit `i` = byte `i`), and a few bits of state carry from one
//! block to the next:
//!
//! 1. **Classify** ([`Block64::classify`]): masks of `"`, `\`, the
//!    structural characters `{ } [ ] : ,` and control bytes (< 0x20).
//! 2. **Escapes.** Within a run of backslashes, those at an even distance
//!    from the run's start begin an escape and the byte after each of them
//!    is escaped (so the byte after an odd-length run is escaped). One
//!    subtraction finds the parity of every run at once ([`Escapes::next`]).
//!    Carried: "the next block's first byte is escaped". This yields both
//!    the escaped bytes and the backslashes that *begin* an escape (the
//!    `escapes` list).
//! 3. **Strings.** The unescaped quotes alternate open/close, so the prefix
//!    XOR of the quote mask is 1 from an opening quote (inclusive) to its
//!    closing quote (exclusive). Prefix XOR is a carry-less multiplication
//!    by all ones (PCLMULQDQ / PMULL); XOR with the carried "inside a
//!    string" state (all ones or all zeros) continues a string across
//!    blocks.
//! 4. **Emit** structurals outside strings and the opening quotes
//!    (`quote & in_string`) as `u32` offsets ([`Block64::write_offsets`]:
//!    eight or sixteen stores at a time, advancing by the popcount, no branch
//!    per bit); the escape starts likewise.
//! 5. **Checks.** A backslash outside a string is an error; the first control
//!    byte inside a string is recorded (the token scan only ORs the control
//!    bytes inside strings together, and a cold second pass finds the first
//!    one if there is any: its callers only ask whether there is one); the
//!    OR of all blocks tells whether any byte is >= 0x80.
//! 6. **Escapes (token scan, AVX-512 only).** For blocks holding an escaped byte (or
//!    the digits of a `\u` from the previous block): every escaped byte must
//!    be a one-letter escape or `u`, the four bytes after each `u` hex
//!    digits, and no `\u` may be a surrogate (`d`/`D`, then `8-9a-fA-F`).
//!    Three small carries continue an escape into the next block, which is
//!    then never skipped as part of a long string. All passing means stage 2
//!    need not look at the escapes (`Scan::escapes_valid`); otherwise it
//!    checks them one by one (surrogate pairs, error offsets). A few vector
//!    instructions per such block replace a scalar loop with a jump on
//!    each escape's kind (twitter_timeline, 851 escapes in 42 KB: validate
//!    9.6 -> 9.0 us).
//!
//! **Long strings.** Once a whole block lay inside one string, the next
//! blocks are only tested for "anything to do": a `"`, a `\`, a control
//! byte (and, until one has been seen, a byte >= 0x80). That test is three
//! vector instructions per 64 bytes on AVX-512; four blocks are tested per
//! step, eight once a string has passed one such step (one, two or eight
//! per step measured the same wall time: the loop runs at the cache's read
//! bandwidth; eight take fewer instructions per byte).
//! Blocks that pass emit nothing and change no state (except that they end
//! any escape), so they are simply skipped. Base64 payloads run through
//! this loop at close to the bandwidth of the cache.
//!
//! **Prefetching.** The scan asks for the input 4 KiB ahead of the block it
//! reads (one cache line per block), within the input only, in the line
//! scan of a stream (16 KiB or more left). Not for whole documents: parses
//! of files that stay in the cache between calls lost 1.4-4% (twitter,
//! citm_catalog, canada, LTO, interleaved). A stream's lines come from memory, not the cache, and
//! the hardware prefetcher alone left the scan's loads waiting (perf on
//! the 20 MB batch file put the scan's samples on its loads). A line's
//! scan is given the rest of its window, so it prefetches the next lines
//! too. Measured on Zen 4 (AVX-512), parse_many reading two fields of each
//! line, split inline, process CPU, interleaved medians, LTO builds: 20 MB
//! 4.12 -> 3.79 ms, 100 MB 19.4 -> 17.8 ms (2 KiB ahead: -6%, 8 KiB: the
//! same as 4 KiB), for ~1.3% more instructions (these figures are of the
//! build that also prefetched in the long-string loop; the block loop's
//! prefetch alone has not been measured against none). Not in the long-string
//! loop ([`skip_quiet`]), which first asked for its eight lines ahead per
//! step too: a perf profile of the read row (PGO) put about 11% of the
//! line scan's samples on those `prefetcht0`s, and without them the row
//! took 0.956-0.973x the process CPU split inline (base64-heavy batch file,
//! 100 MB, PGO builds, two copies of each build in one process, three
//! orders; two copies of one build: 1.003-1.007), 0.93-0.96x with the
//! splitting thread (once its figures were not bimodal, see
//! `benchmarks/many_ab.py`). (Presumably the hardware prefetcher follows
//! a long string's sequential loads on its own, and eight requests per
//! step only held the line fill buffers the loads need.)
//!
//! **The tail** (the last `len % 64` bytes) is loaded followed by spaces,
//! which are neither structural nor string-relevant
//! ([`Block64::load_tail`]: AVX-512 masks the load, the others copy the
//! bytes into a block of spaces).
//!
//! **The first line** ([`scan_tokens_line`], for streams of one document
//! per line): the scan stops at the first newline outside strings. Each
//! block's control bytes outside strings (whitespace other than the space,
//! so nearly always just a line's newline) are tested as a whole, two
//! instructions per block; only a block that has one looks for a newline
//! among them. In that block only the bytes before the newline count (the
//! masks are cut there), and the newline's offset is the sentinel. The
//! line's end thus costs less than a separate search for the newline (on
//! AVX2 `memchr` took about 0.09 instructions a byte), and the line's last
//! block is loaded in place, not copied into a padded block. A control
//! byte inside a string ends the scan with an error at once: such a line
//! is not one document, and its string may be left open over many lines.
//!
//! **Output memory** is reserved by estimate: a modest first guess (for
//! inputs up to 2 KiB, one offset per two bytes, so that small documents
//! never grow), then growth projected from the density seen so far (capped
//! at 4x per step), so base64-heavy inputs never reserve a fraction of
//! their length.

use super::vector::Utf8Check;
use super::vector::{Block64, Masks, TokenBlock};
use super::Scan;
use crate::error::{Error, ErrorKind};

/// Room (in `u32`s) that must be free in an output vector before a block
/// writes to it: a block emits at most 64 offsets, and the writers may store
/// garbage past the count but never past 64 entries.
pub(crate) const SLACK: usize = 64;

/// The first guess for the structurals' capacity, at most this many entries.
const FIRST_GUESS_MAX: usize = 8192;

/// Inputs up to this many bytes reserve their output for the densest
/// ordinary JSON at once.
const SMALL_INPUT: usize = 2048;

/// Scans `input` into `out` with backend `B`.
///
/// # Safety
///
/// The CPU must support `B`'s instruction set, and this function must be
/// inlined into a function compiled with those target features.
#[inline(always)]
pub(crate) unsafe fn scan<B: Block64>(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    // SAFETY: `scan_impl` has this function's contract (B's instruction set
    // on this CPU, inlined into code compiled with it), which our caller
    // guarantees.
    unsafe { scan_impl::<B, NoScalars, false>(input, out, NoScalars) }.map(|_| ())
}

/// [`scan`], also emitting the first byte of every scalar token (see
/// [`super::scan_tokens`]).
///
/// # Safety
///
/// As for [`scan`].
#[inline(always)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (x86 backends only)
pub(crate) unsafe fn scan_tokens<B: TokenBlock>(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    // SAFETY: `scan_impl` has this function's contract (B's instruction set
    // on this CPU, inlined into code compiled with it), which our caller
    // guarantees.
    unsafe { scan_impl::<B, ScalarStarts<B, true>, false>(input, out, ScalarStarts::new()) }
        .map(|_| ())
}

/// [`scan_tokens`] for strict validation alone: with a backend that checks
/// the escapes in the scan ([`TokenBlock::CHECKS_ESCAPES`]), their offsets
/// are not written block by block, and `out.escapes` stays empty when
/// they are all plain (`out.escapes_valid`); otherwise a cold pass over
/// the input finds them after the scan ([`TokenBlock::escapes_before`]),
/// so `escapes` holds them whenever `escapes_valid` is `false`, as after
/// [`scan_tokens`]. The escape sink's compress, store and length in the
/// block loop cost about 5% of validating twitter_timeline.json (249 of
/// its 660 blocks hold a backslash) on AVX-512. (Measured and not taken,
/// LTO and LTO + PGO, interleaved: any test of the escape check's state
/// in the block loop, to write the escapes from the first one found not
/// plain on, or to stop there and scan again with [`scan_tokens`], made
/// documents of plain escapes 3-4% slower to validate than writing them
/// all; a `memchr` per run of backslashes for this pass made a
/// `json.dumps` (`ensure_ascii`) of twitter.json and twitterescaped.json
/// 2.2x slower.)
///
/// # Safety
///
/// As for [`scan`].
#[inline(always)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (x86 backends only)
pub(crate) unsafe fn scan_tokens_valid<B: TokenBlock>(
    input: &[u8],
    out: &mut Scan,
) -> Result<(), Error> {
    // SAFETY: as in `scan_tokens`.
    unsafe { scan_impl::<B, ScalarStarts<B, false>, false>(input, out, ScalarStarts::new()) }
        .map(|_| ())
}

/// [`scan_tokens`] of the first line of `input` only: the scan stops at the
/// first newline outside strings (see "The first line" in the module doc).
/// `Ok(Some(p))`: `input[p]` is that newline, and `out` holds the tokens
/// of `input[..p]` with `p` as the last entry (the sentinel); `Ok(None)`:
/// there is no newline outside strings in `input` (`out` is then
/// [`scan_tokens`]' result for the whole input).
///
/// # Safety
///
/// As for [`scan`].
#[inline(always)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (x86 backends only)
pub(crate) unsafe fn scan_tokens_line<B: TokenBlock>(
    input: &[u8],
    out: &mut Scan,
) -> Result<Option<usize>, Error> {
    // SAFETY: as in `scan_tokens`.
    unsafe { scan_impl::<B, ScalarStarts<B, true>, true>(input, out, ScalarStarts::new()) }
}

/// Whether, and how, stage 1 emits the scalar tokens as well.
trait Scalars<B: Block64> {
    /// Whether `first_control` is found block by block (the plain scan),
    /// or only whether there is one, with the offset found afterwards by a
    /// cold second pass (the token scan: its callers only ask whether there
    /// is one, and the per-block search cost about 12 instructions per
    /// block on AVX2).
    const EXACT_CONTROL: bool;

    /// Whether each block's escape starts are written to `escapes` as the
    /// scan goes (else see [`scan_tokens_valid`]).
    const KEEP_ESCAPES: bool;

    /// Without [`Scalars::KEEP_ESCAPES`]: the escape starts of
    /// `input[..to]`, appended to `out` (see [`scan_tokens_valid`]).
    ///
    /// # Safety
    ///
    /// `to <= input.len()`; the CPU must support `B`'s instruction set.
    unsafe fn escapes_before(&self, input: &[u8], to: usize, out: &mut Vec<u32>);

    /// The masks of `block` and, for the token scan, its delimiters (see
    /// [`TokenBlock::delimiters`]; 0 when not needed).
    ///
    /// # Safety
    ///
    /// The CPU must support `B`'s instruction set.
    unsafe fn classify(&self, block: B) -> (Masks, u64);

    /// The mask of the bytes that begin a scalar token: bytes outside
    /// strings that are neither whitespace, nor structural, nor a quote
    /// (`delimiters` from [`Scalars::classify`]), and whose previous byte
    /// (carried across blocks) is not such a byte either. `outside` has a 1
    /// for every byte outside strings (closing quotes included).
    fn starts(&mut self, delimiters: u64, outside: u64) -> u64;

    /// Checks the escapes of `block`, whose escaped bytes (those right
    /// after a backslash that begins an escape) are `escaped`.
    ///
    /// # Safety
    ///
    /// The CPU must support `B`'s instruction set.
    unsafe fn check_escapes(&mut self, block: B, escaped: u64);

    /// Whether the next block must not be skipped as part of a long
    /// string: an escape of this block continues into it.
    fn escape_pending(&self, next_escaped: u64) -> bool;

    /// The fused UTF-8 check of `block` (see [`Utf8Check::block`]).
    ///
    /// # Safety
    ///
    /// The CPU must support `B`'s instruction set.
    unsafe fn utf8(&mut self, block: B, keep: u64);

    /// The fused UTF-8 check of the blocks skipped in a long string (see
    /// [`Utf8Check::skipped`]).
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads of `to` bytes; the CPU must support
    /// `B`'s instruction set.
    unsafe fn utf8_skipped(&mut self, ptr: *const u8, from: usize, to: usize, ascii: bool);

    /// Records the result of the escape check (and the UTF-8 check) in `out`.
    ///
    /// # Safety
    ///
    /// The CPU must support `B`'s instruction set.
    unsafe fn finish(&self, next_escaped: u64, out: &mut Scan);
}

/// The index [`scan`] builds: no scalar tokens.
struct NoScalars;

impl<B: Block64> Scalars<B> for NoScalars {
    const EXACT_CONTROL: bool = true;
    const KEEP_ESCAPES: bool = true;

    #[inline(always)]
    unsafe fn escapes_before(&self, _: &[u8], _: usize, _: &mut Vec<u32>) {}

    #[inline(always)]
    unsafe fn classify(&self, block: B) -> (Masks, u64) {
        // SAFETY: the caller guarantees B's instruction set.
        (unsafe { block.classify() }, 0)
    }

    #[inline(always)]
    fn starts(&mut self, _: u64, _: u64) -> u64 {
        0
    }

    #[inline(always)]
    unsafe fn check_escapes(&mut self, _: B, _: u64) {}

    #[inline(always)]
    fn escape_pending(&self, _: u64) -> bool {
        false
    }

    #[inline(always)]
    unsafe fn utf8(&mut self, _: B, _: u64) {}

    #[inline(always)]
    unsafe fn utf8_skipped(&mut self, _: *const u8, _: usize, _: usize, _: bool) {}

    #[inline(always)]
    unsafe fn finish(&self, _: u64, _: &mut Scan) {}
}

/// The token index [`scan_tokens`] builds; without `ESCAPES`, the one of
/// [`scan_tokens_valid`].
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct ScalarStarts<B: TokenBlock, const ESCAPES: bool> {
    /// 1 if the previous block's last byte was part of a scalar token.
    carry: u64,
    escapes: EscapeCheck,
    /// The fused UTF-8 check (see [`Scan::utf8_valid`]).
    utf8: B::Utf8,
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
impl<B: TokenBlock, const ESCAPES: bool> ScalarStarts<B, ESCAPES> {
    /// # Safety
    ///
    /// The CPU must support `B`'s instruction set.
    #[inline(always)]
    unsafe fn new() -> Self {
        ScalarStarts {
            carry: 0,
            escapes: EscapeCheck::default(),
            // SAFETY: the caller guarantees B's instruction set.
            utf8: unsafe { B::Utf8::new() },
        }
    }
}

/// The escape check of the token scan (see [`Scan::escapes_valid`]), with
/// its carries between blocks.
#[derive(Default)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct EscapeCheck {
    /// The bytes of the next block that must be hex digits (bits 0..3:
    /// the digits of a `\u` near the end of this block).
    hex: u64,
    /// 1 if the next block's first byte is the first digit of a `\u`.
    first: u64,
    /// 1 if the next block's first byte is the second digit of a `\u`
    /// whose first digit is `d` or `D`.
    second_of_d: u64,
    /// Nonzero once an escape was found invalid or a surrogate.
    not_plain: u64,
}

impl<B: TokenBlock, const ESCAPES: bool> Scalars<B> for ScalarStarts<B, ESCAPES> {
    const EXACT_CONTROL: bool = false;
    // (A backend without the escape check leaves them all to stage 2.)
    const KEEP_ESCAPES: bool = ESCAPES || !B::CHECKS_ESCAPES;

    #[inline(always)]
    unsafe fn escapes_before(&self, input: &[u8], to: usize, out: &mut Vec<u32>) {
        // SAFETY: forwarded from the caller.
        unsafe { B::escapes_before(input, to, out) }
    }

    #[inline(always)]
    unsafe fn classify(&self, block: B) -> (Masks, u64) {
        // SAFETY: the caller guarantees B's instruction set.
        unsafe { block.classify_tokens() }
    }

    #[inline(always)]
    fn starts(&mut self, delimiters: u64, outside: u64) -> u64 {
        let scalar = outside & !delimiters;
        let starts = scalar & !((scalar << 1) | self.carry);
        self.carry = scalar >> 63;
        starts
    }

    /// Per block with escapes: the escaped bytes must be one-letter escapes
    /// or `u`; the four bytes after each `u` hex digits; and no `\u` may
    /// start with `d`/`D` followed by `8-9a-fA-F` (a surrogate, left to
    /// the exact check). Positions past the block carry into the next one.
    #[inline(always)]
    unsafe fn check_escapes(&mut self, block: B, escaped: u64) {
        let e = &mut self.escapes;
        if !B::CHECKS_ESCAPES || escaped | e.hex == 0 {
            return;
        }
        // SAFETY: the caller guarantees B's instruction set.
        let c = unsafe { block.escape_classes() };
        let u = escaped & c.u;
        let u = u as u128;
        let need = (u << 1) | (u << 2) | (u << 3) | (u << 4);
        let hex = need as u64 | e.hex;
        e.hex = (need >> 64) as u64;
        let first = (u << 1) as u64 | e.first;
        e.first = (u >> 63) as u64;
        let first_d = first & c.d;
        let second_of_d = (first_d << 1) | e.second_of_d;
        e.second_of_d = first_d >> 63;
        e.not_plain |= (escaped & !(c.one | c.u)) | (hex & !c.hex) | (second_of_d & c.upper8);
    }

    #[inline(always)]
    fn escape_pending(&self, next_escaped: u64) -> bool {
        // (Without the check, as on AVX2, long strings skip as before.)
        B::CHECKS_ESCAPES && next_escaped | self.escapes.hex != 0
    }

    #[inline(always)]
    unsafe fn utf8(&mut self, block: B, keep: u64) {
        // SAFETY: the caller guarantees B's instruction set.
        unsafe { self.utf8.block(block, keep) }
    }

    #[inline(always)]
    unsafe fn utf8_skipped(&mut self, ptr: *const u8, from: usize, to: usize, ascii: bool) {
        // SAFETY: forwarded from the caller.
        unsafe { self.utf8.skipped(ptr, from, to, ascii) }
    }

    #[inline(always)]
    unsafe fn finish(&self, next_escaped: u64, out: &mut Scan) {
        out.escapes_valid =
            B::CHECKS_ESCAPES && self.escapes.not_plain | self.escapes.hex | next_escaped == 0;
        // SAFETY: the caller guarantees B's instruction set.
        out.utf8_valid = unsafe { self.utf8.valid() };
    }
}

/// The block loop behind [`scan`] and [`scan_tokens`]: with prefetching
/// for the line scan of at least [`PREFETCH_MIN`] bytes, without for
/// smaller ones (there it would only add instructions: 84 a 2 KB
/// document's parse) and for whole documents (see "Prefetching" in the
/// module doc).
///
/// # Safety
///
/// As for [`scan`].
#[inline(always)]
unsafe fn scan_impl<B: Block64, S: Scalars<B>, const LINE: bool>(
    input: &[u8],
    out: &mut Scan,
    scalars: S,
) -> Result<Option<usize>, Error> {
    // SAFETY: forwarded from our caller.
    unsafe {
        if LINE && input.len() >= PREFETCH_MIN {
            scan_run::<B, S, LINE, true>(input, out, scalars)
        } else {
            scan_run::<B, S, LINE, false>(input, out, scalars)
        }
    }
}

/// [`scan_impl`], prefetching if `FETCH`.
///
/// # Safety
///
/// As for [`scan`].
#[inline(always)]
unsafe fn scan_run<B: Block64, S: Scalars<B>, const LINE: bool, const FETCH: bool>(
    input: &[u8],
    out: &mut Scan,
    mut scalars: S,
) -> Result<Option<usize>, Error> {
    out.clear();
    let n = input.len();
    // Small inputs reserve for one structural per two bytes (dense JSON's
    // most) up front: with a guess of n/8, nearly every document under a
    // few hundred bytes grew once (a realloc, about 10% of validating it).
    let per = if n <= SMALL_INPUT { 2 } else { 8 };
    let guess = (n / per).min(FIRST_GUESS_MAX) + SLACK + 1;
    if out.structurals.capacity() < guess {
        // (A fresh allocation: growing the empty vector would copy its old
        // capacity's bytes.)
        out.structurals = Vec::with_capacity(guess);
    }
    let mut structurals = Sink::new(&mut out.structurals);
    let mut escapes = Sink::new(&mut out.escapes);
    let ptr = input.as_ptr();
    // SAFETY: the CPU supports B (our caller's contract).
    let mut st = unsafe { State::<B>::new() };
    let mut i = 0usize;
    let result = 'run: {
        while i + 64 <= n {
            if FETCH {
                prefetch::<1>(ptr, i + PREFETCH, n);
            }
            // SAFETY: `i + 64 <= n`, so the 64 bytes at `ptr + i` are in
            // bounds; the CPU supports B.
            let r = unsafe {
                st.block::<S, LINE>(
                    B::load(ptr.add(i)),
                    input,
                    i,
                    n,
                    &mut structurals,
                    &mut escapes,
                    &mut scalars,
                )
            };
            if r.is_err() {
                break 'run r;
            }
            i += 64;
            // (Tested right after the block that sets it, not at the top
            // of the next turn: the flag then stays in the flags register
            // instead of a stack slot, stored and reloaded on every block.)
            if st.long_string {
                // SAFETY: `ptr` is valid for `n` bytes; the CPU supports B.
                unsafe {
                    let ascii = !st.high.any_high();
                    let j = st.skip(ptr, i, n);
                    scalars.utf8_skipped(ptr, i, j, ascii);
                    i = j;
                }
            }
        }
        if i < n {
            // SAFETY: the `n - i` (< 64) bytes at `ptr + i` are in bounds;
            // the CPU supports B.
            unsafe {
                st.block::<S, LINE>(
                    B::load_tail(ptr.add(i), n - i),
                    input,
                    i,
                    n,
                    &mut structurals,
                    &mut escapes,
                    &mut scalars,
                )
            }
        } else {
            Ok(())
        }
    };
    // (The line scan's stop at its newline ends the loop as an error.)
    let result = match result {
        Err(_) if LINE && st.line_end.is_some() => Ok(()),
        r => r,
    };
    structurals.finish();
    escapes.finish();
    result?;
    // SAFETY: the CPU supports B.
    unsafe { scalars.finish(st.escapes.next_escaped, out) };
    let control_seen = st.control_seen != 0;
    let line_end = st.line_end;
    let end = line_end.unwrap_or(n);
    // SAFETY: the CPU supports B.
    unsafe { st.finish(end, out) }?;
    if control_seen {
        out.first_control = Some(first_control(&input[..end]));
    }
    if !S::KEEP_ESCAPES && !out.escapes_valid {
        // SAFETY: `end <= n`; the CPU supports B.
        unsafe { scalars.escapes_before(input, end, &mut out.escapes) };
    }
    Ok(line_end)
}

/// The line scan's test of a block whose `breaks` (control bytes outside
/// strings: whitespace other than the space, or errors) are not all zero:
/// the mask of the block's bytes before its first newline among them
/// (`None` if none is a newline: a tab or carriage return). Rare (once per
/// line), so out of line.
#[cold]
#[inline(never)]
fn before_newline(input: &[u8], at: usize, mut breaks: u64) -> Option<u64> {
    while breaks != 0 {
        let b = breaks.trailing_zeros();
        if input.get(at + b as usize) == Some(&b'\n') {
            return Some((1u64 << b) - 1);
        }
        breaks &= breaks - 1;
    }
    None
}

/// The offsets of the backslashes of `input[..to]` that begin an escape,
/// appended to `out`: each block's backslashes classified again and passed
/// through [`Escapes::next`] as the scan does (the long-string blocks it
/// skips hold none), so the same offsets as the scan's. The cold pass of
/// the validation scan ([`TokenBlock::escapes_before`]).
///
/// # Safety
///
/// `to <= input.len()`; the CPU must support `B`'s instruction set.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (the AVX-512 scan's only)
#[inline(always)]
pub(crate) unsafe fn escape_starts<B: Block64>(input: &[u8], to: usize, out: &mut Vec<u32>) {
    let mut sink = Sink::new(out);
    let mut e = Escapes { next_escaped: 0 };
    let mut i = 0;
    while i < to {
        let ptr = input[i..].as_ptr();
        // SAFETY: `i < to <= input.len()`: 64 bytes readable at `ptr`, or
        // the `to - i` (< 64) of the tail; the CPU supports B.
        unsafe {
            let block = if to - i >= 64 {
                B::load(ptr)
            } else {
                B::load_tail(ptr, to - i)
            };
            let (_, starts) = e.next(block.classify().backslash);
            if starts != 0 {
                sink.push::<B>(i, starts, to);
            }
        }
        i += 64;
    }
    sink.finish();
}

/// Cold path of a scan without [`Scalars::EXACT_CONTROL`] that saw a
/// control byte inside a string: its offset, from the scalar scan (the
/// oracle, which finds the same strings). (Were the two ever to disagree,
/// offset 0 still says "there is one", so no caller accepts the input.)
#[cold]
#[inline(never)]
fn first_control(input: &[u8]) -> u32 {
    let mut scan = Scan::default();
    match super::scalar::scan(input, &mut scan) {
        Ok(()) => scan.first_control.unwrap_or(0),
        Err(_) => 0,
    }
}

/// An output vector opened for appending: its pointer, length and capacity
/// live in locals (registers) while the scan runs, instead of being reloaded
/// from the `Vec` after every store through its pointer.
struct Sink<'a> {
    vec: &'a mut Vec<u32>,
    ptr: *mut u32,
    len: usize,
    /// The capacity less [`SLACK`] (0 if smaller): a block may write while
    /// `len` is below it (one compare per block, no subtraction).
    full: usize,
}

impl<'a> Sink<'a> {
    #[inline(always)]
    fn new(vec: &'a mut Vec<u32>) -> Self {
        Sink {
            ptr: vec.as_mut_ptr(),
            len: vec.len(),
            full: vec.capacity().saturating_sub(SLACK),
            vec,
        }
    }

    /// Appends `at + i` for every set bit `i` of `bits` (`at` and the input
    /// length `n` feed the growth estimate).
    ///
    /// # Safety
    ///
    /// The CPU must support `B`'s instruction set.
    #[inline(always)]
    unsafe fn push<B: Block64>(&mut self, at: usize, bits: u64, n: usize) {
        if self.len >= self.full {
            self.grow(at + 64, n);
        }
        // SAFETY: `len < full`, so more than SLACK entries are free past
        // `len` (`grow` leaves at least 2 * SLACK), as
        // `write_offsets` requires; it initialises the first `k` of them,
        // which become part of the length.
        unsafe {
            let k = B::write_offsets(self.ptr.add(self.len), at as u32, bits);
            self.len += k;
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, scanned: usize, n: usize) {
        // SAFETY: the first `len` entries were initialised by `push`, and
        // `len <= cap`.
        unsafe { self.vec.set_len(self.len) };
        grow(self.vec, scanned, n);
        self.ptr = self.vec.as_mut_ptr();
        self.full = self.vec.capacity() - SLACK;
    }

    /// Hands the length back to the `Vec`.
    #[inline(always)]
    fn finish(self) {
        // SAFETY: as in `grow`.
        unsafe { self.vec.set_len(self.len) };
    }
}

/// The escape scanner: which bytes are escaped, and which backslashes begin
/// an escape, with the carry between blocks.
struct Escapes {
    /// 1 if the first byte of the next block is escaped.
    next_escaped: u64,
}

impl Escapes {
    /// Returns `(escaped, escape_starts)` for a block's backslash mask.
    #[inline(always)]
    fn next(&mut self, backslash: u64) -> (u64, u64) {
        const ODD: u64 = 0xAAAA_AAAA_AAAA_AAAA;
        if backslash == 0 {
            let escaped = self.next_escaped;
            self.next_escaped = 0;
            return (escaped, 0);
        }
        // A backslash escaped by the previous block begins nothing.
        let potential = backslash & !self.next_escaped;
        // In `((P << 1) | ODD) - P` each run borrows from the bit right after
        // it; after the XOR with ODD, `code` has a 1 exactly at the
        // backslashes at an even distance from their run's start (they begin
        // escapes) and at the byte after each odd-length run (escaped by the
        // run's last backslash). XOR with the backslashes then gives the
        // escaped bytes: backslashes at an odd distance, plus those bytes.
        let maybe_escaped = potential << 1;
        let code = (maybe_escaped | ODD).wrapping_sub(potential) ^ ODD;
        let escaped = code ^ (backslash | self.next_escaped);
        let starts = code & backslash;
        self.next_escaped = starts >> 63;
        (escaped, starts)
    }
}

/// A block's masks, as [`State::block`] hands them to [`State::emit`].
#[derive(Clone, Copy)]
struct Classified {
    m: Masks,
    delimiters: u64,
    escaped: u64,
    escape_starts: u64,
    quote: u64,
    in_string: u64,
}

/// The state carried from block to block.
struct State<B: Block64> {
    escapes: Escapes,
    /// All ones if the previous block ended inside a string, else zero.
    in_string: u64,
    /// The previous block lay entirely inside one string.
    long_string: bool,
    /// OR of every classified block (its top bits say "non-ASCII").
    high: B,
    first_control: Option<u32>,
    /// Without [`Scalars::EXACT_CONTROL`]: nonzero once a control byte was
    /// seen inside a string.
    control_seen: u64,
    /// The line scan: the offset of the newline it stopped at.
    line_end: Option<usize>,
}

impl<B: Block64> State<B> {
    /// # Safety
    ///
    /// The CPU must support `B`'s instruction set.
    #[inline(always)]
    unsafe fn new() -> Self {
        let zero = [0u8; 64];
        State {
            escapes: Escapes { next_escaped: 0 },
            in_string: 0,
            long_string: false,
            // SAFETY: `zero` holds 64 bytes; the CPU supports B.
            high: unsafe { B::load(zero.as_ptr()) },
            first_control: None,
            control_seen: 0,
            line_end: None,
        }
    }

    /// Processes the block at offset `at` of an input of `n` bytes.
    ///
    /// # Safety
    ///
    /// The CPU must support `B`'s instruction set.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn block<S: Scalars<B>, const LINE: bool>(
        &mut self,
        block: B,
        input: &[u8],
        at: usize,
        n: usize,
        structurals: &mut Sink<'_>,
        escapes: &mut Sink<'_>,
        scalars: &mut S,
    ) -> Result<(), Error> {
        // SAFETY: the CPU supports B (our caller's contract), which is all
        // the classification and the sinks need.
        unsafe {
            let (m, delimiters) = scalars.classify(block);
            self.high = self.high.or(block);
            let (escaped, escape_starts) = self.escapes.next(m.backslash);
            let quote = m.quote & !escaped;
            let in_string = B::prefix_xor(quote) ^ self.in_string;
            let b = Classified {
                m,
                delimiters,
                escaped,
                escape_starts,
                quote,
                in_string,
            };
            if LINE {
                // The line scan: a block with a newline outside strings
                // is its last, and only its bytes before the newline count.
                let breaks = m.control & !in_string;
                if breaks != 0 {
                    if let Some(line) = before_newline(input, at, breaks) {
                        self.emit::<S, LINE>(
                            block,
                            &b,
                            line,
                            at,
                            n,
                            structurals,
                            escapes,
                            scalars,
                        )?;
                        // The newline is outside strings, and nothing
                        // after it is the line's.
                        self.in_string = 0;
                        self.long_string = false;
                        self.escapes.next_escaped = 0;
                        self.line_end = Some(at + line.count_ones() as usize);
                        // (Ends the block loop, which tests every block's
                        // result anyway; `scan_impl` tells it from errors
                        // by `line_end`.)
                        return Err(Error::new(ErrorKind::Empty, at));
                    }
                }
            }
            self.emit::<S, LINE>(block, &b, u64::MAX, at, n, structurals, escapes, scalars)
        }
    }

    /// The rest of [`State::block`] once its masks are known: the state
    /// carried on, the checks and the offsets written, of the bytes in
    /// `line` only (all ones but in the line scan's last block).
    ///
    /// # Safety
    ///
    /// The CPU must support `B`'s instruction set.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn emit<S: Scalars<B>, const LINE: bool>(
        &mut self,
        block: B,
        b: &Classified,
        line: u64,
        at: usize,
        n: usize,
        structurals: &mut Sink<'_>,
        escapes: &mut Sink<'_>,
        scalars: &mut S,
    ) -> Result<(), Error> {
        let Classified {
            m,
            delimiters,
            escaped,
            escape_starts,
            quote,
            in_string,
        } = *b;
        // SAFETY: the CPU supports B (our caller's contract), which is all
        // the escape check and the sinks need.
        unsafe {
            scalars.utf8(block, line);
            scalars.check_escapes(block, escaped & line);
            self.in_string = ((in_string as i64) >> 63) as u64;
            // (No quote in the block, and inside a string before it, is
            // inside a string after it: one test of both.)
            self.long_string = (quote | !self.in_string) == 0
                && !scalars.escape_pending(self.escapes.next_escaped);

            let stray = m.backslash & !in_string & line;
            if stray != 0 {
                return Err(stray_backslash(at, stray));
            }
            let control = m.control & in_string & line;
            if LINE && control != 0 {
                // The line is not one document (its scan alone would say
                // so too): no need to read on, possibly far, to its end.
                return Err(Error::new(
                    ErrorKind::ControlCharacter,
                    at + control.trailing_zeros() as usize,
                ));
            }
            if S::EXACT_CONTROL {
                if control != 0 && self.first_control.is_none() {
                    self.first_control = Some(at as u32 + control.trailing_zeros());
                }
            } else {
                self.control_seen |= control;
            }
            let escape_starts = escape_starts & line;
            if S::KEEP_ESCAPES && escape_starts != 0 {
                escapes.push::<B>(at, escape_starts, n);
            }
            let scalar_starts = scalars.starts(delimiters, !in_string);
            let emitted =
                ((m.structural & !in_string) | (quote & in_string) | scalar_starts) & line;
            structurals.push::<B>(at, emitted, n);
        }
        Ok(())
    }

    /// Skips whole blocks from `i` that need no work while inside a long
    /// string; returns the offset of the first block that needs work (or
    /// of the first incomplete block).
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads of `n` bytes; the CPU must support `B`'s
    /// instruction set.
    #[inline(always)]
    unsafe fn skip(&mut self, ptr: *const u8, i: usize, n: usize) -> usize {
        // SAFETY: forwarded from our caller.
        let j = unsafe {
            if self.high.any_high() {
                skip_quiet::<B, false>(ptr, i, n)
            } else {
                skip_quiet::<B, true>(ptr, i, n)
            }
        };
        if j != i {
            // The skipped blocks hold no backslash, so nothing escapes into
            // the next block.
            self.escapes.next_escaped = 0;
        }
        j
    }

    /// # Safety
    ///
    /// The CPU must support `B`'s instruction set.
    #[inline(always)]
    unsafe fn finish(self, n: usize, out: &mut Scan) -> Result<(), Error> {
        if self.in_string != 0 {
            // Nothing is emitted inside a string, so the last offset is the
            // opening quote of the string that never closed.
            let open = out.structurals.last().copied().unwrap_or(0);
            return Err(Error::new(ErrorKind::UnterminatedString, open as usize));
        }
        // SAFETY: the CPU supports B.
        out.non_ascii = unsafe { self.high.any_high() };
        out.first_control = self.first_control;
        out.structurals.push(n as u32);
        Ok(())
    }
}

/// The long-string loop: four blocks per test; once one such test passed
/// (a string of more than 256 more bytes), eight per test, then four once
/// more; then single blocks. (Eight from the start cost the strings of a
/// few hundred bytes a failed test of twice the length.) It asks for no
/// input ahead (see "Prefetching" in the module doc).
///
/// # Safety
///
/// `ptr` must be valid for reads of `n` bytes; the CPU must support `B`'s
/// instruction set.
#[inline(always)]
unsafe fn skip_quiet<B: Block64, const ASCII: bool>(
    ptr: *const u8,
    mut i: usize,
    n: usize,
) -> usize {
    // SAFETY: each test reads `N * 64` bytes at `ptr + i`, and the
    // conditions keep that range below `n`; the CPU supports B.
    unsafe {
        if i + 256 <= n && B::quiet::<4, ASCII>(ptr.add(i)) {
            i += 256;
            while i + 512 <= n && B::quiet::<8, ASCII>(ptr.add(i)) {
                i += 512;
            }
            if i + 256 <= n && B::quiet::<4, ASCII>(ptr.add(i)) {
                i += 256;
            }
        }
        while i + 64 <= n && B::quiet::<1, ASCII>(ptr.add(i)) {
            i += 64;
        }
    }
    i
}

/// How far ahead of the block being scanned the scan asks for input.
const PREFETCH: usize = 4096;

/// The smallest input the scan prefetches for.
const PREFETCH_MIN: usize = 16 * 1024;

/// A hint to load the `L` cache lines (64 bytes each) at `ptr + at`, if
/// they lie in the input (`n` bytes): none past its end is brought in (see
/// "Prefetching" in the module doc).
#[inline(always)]
fn prefetch<const L: usize>(ptr: *const u8, at: usize, n: usize) {
    #[cfg(target_arch = "x86_64")]
    if at + 64 * L <= n {
        for k in 0..L {
            // SAFETY: `at + 64 * k < n`, so the address is in the input; a
            // prefetch reads nothing into the program and cannot fault.
            unsafe {
                use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(ptr.add(at + 64 * k).cast());
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ptr, at, n);
}

/// Grows an output vector after `scanned` of `n` bytes: to the length the
/// density so far projects for the whole input, at least 1.5x and at most
/// 4x the current length.
#[cold]
#[inline(never)]
fn grow(v: &mut Vec<u32>, scanned: usize, n: usize) {
    let len = v.len();
    let projected = ((len as u64 + 1) * n as u64 / scanned.max(1) as u64) as usize;
    let want = projected.clamp(len + len / 2, len * 4) + 2 * SLACK;
    v.reserve_exact(want - len);
}

#[cold]
#[inline(never)]
fn stray_backslash(at: usize, stray: u64) -> Error {
    Error::new(
        ErrorKind::StrayBackslash,
        at + stray.trailing_zeros() as usize,
    )
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::super::{avx2::Avx2, avx512::Avx512, scan_tokens_with, Backend, Scan};
    use super::escape_starts;
    use crate::scan::vector::TokenBlock;

    /// The cold pass of the validation scan finds the escapes the full
    /// token scan writes: AVX-512's `escape_starts` (where this CPU has
    /// it), and the byte loop every other backend's
    /// `TokenBlock::escapes_before` defaults to (never called today: only
    /// AVX-512 checks escapes in the scan), on backslash runs, surrogate
    /// pairs and escaped quotes at every offset across block borders.
    #[test]
    fn escape_passes_find_the_scans_escapes() {
        let available = Backend::available();
        let Some(&full) = [Backend::Avx512, Backend::Avx2]
            .iter()
            .find(|b| available.contains(b))
        else {
            eprintln!("skipped: no token scan on this CPU");
            return;
        };
        let bodies = [
            r#""\ud83d\ude00 \\\\ \" \n""#.to_string(),
            format!(r#""{}\\""#, r"\\".repeat(70)),
            format!(r#""{}\"x\"", "a\\/b""#, "y".repeat(61)),
        ];
        for body in &bodies {
            for shift in 0..130 {
                let doc = format!("{}[{body}, 1]", " ".repeat(shift)).into_bytes();
                let mut scan = Scan::default();
                assert!(matches!(
                    scan_tokens_with(full, &doc, &mut scan),
                    Some(Ok(()))
                ));
                for to in [doc.len(), shift + 1 + body.len() / 2, shift + 2] {
                    let want: Vec<u32> = scan
                        .escapes
                        .iter()
                        .copied()
                        .filter(|&e| (e as usize) < to)
                        .collect();
                    let mut bytewise = Vec::new();
                    // SAFETY: `to <= doc.len()`; the default uses no
                    // vector instructions.
                    unsafe { <Avx2 as TokenBlock>::escapes_before(&doc, to, &mut bytewise) };
                    assert_eq!(bytewise, want, "{shift} {to}");
                    if available.contains(&Backend::Avx512) {
                        let mut vector = Vec::new();
                        // SAFETY: `to <= doc.len()`; the CPU has the AVX-512
                        // scan's features (`available`).
                        unsafe { escape_starts::<Avx512>(&doc, to, &mut vector) };
                        assert_eq!(vector, want, "{shift} {to}");
                    }
                }
            }
        }
    }
}
