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

use super::{
    check_strings, escapes_left, give_back_scan, literal8, plain_number_shape, take_scan, walk,
    Record, KEEP_MAX,
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
    /// openers.
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
    // Two tokens per container at most; most documents have far fewer.
    let mut lens = SPARE_LENS.try_with(Cell::take).unwrap_or_default();
    if lens.capacity() < s.len() / 8 + 1 {
        lens = Vec::with_capacity(s.len() / 8 + 1); // (no copy of the old)
    }
    lens.clear();
    let mut counts = ChildCounts {
        lens,
        limit: s.len() / 2 + 1,
    };
    let ok = walk(input, s, max_depth, &mut counts)
        && check_strings(input, escapes_left(&scan), None, scan.non_ascii).is_ok();
    let index = LoadsIndex {
        structurals: scan.structurals,
        escapes: scan.escapes,
        lens: counts.lens,
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
        });
        if self.lens.capacity() <= KEEP_MAX {
            let _ = SPARE_LENS.try_with(|c| c.set(self.lens));
        }
    }
}

/// `loads`: each container's child count, by ordinal.
struct ChildCounts {
    lens: Vec<u32>,
    /// The most containers the input can hold (the first reservation is a
    /// guess; when it runs out, the table jumps to this bound at once).
    limit: usize,
}

impl Record for ChildCounts {
    const CHECK_SCALARS: bool = false;
    const RECORD: bool = true;
    #[inline(always)]
    fn open(&mut self) {
        if self.lens.len() == self.lens.capacity() {
            // (Saturating: the bound holds for valid documents only, and
            // the thread's spare table may hold more room than it.)
            self.lens
                .reserve_exact(self.limit.saturating_sub(self.lens.len()));
        }
        self.lens.push(0);
    }
    #[inline(always)]
    fn close(&mut self, ord: usize, len: u32, _: usize) {
        self.lens[ord] = len;
    }
    #[inline(always)]
    fn next_ord(&self) -> usize {
        self.lens.len()
    }
}

/// Whether `input[p..]` starts with `true`, `null` or `false` followed by
/// a byte that ends a token (`input[p]` is a token's first byte); `false`
/// also means "not known" (the last 7 bytes of input). In the token index
/// the literal then is the whole token and only whitespace follows it up
/// to the next token.
#[inline(always)]
pub(crate) fn literal_token(input: &[u8], p: usize) -> bool {
    match input.get(p..).and_then(<[u8]>::first_chunk::<8>) {
        Some(w) => w[0] > b'9' && literal8(u64::from_le_bytes(*w), w[0]),
        None => false,
    }
}

/// Whether `input[p..q]` is exactly one plain number with a fraction, as
/// [`plain_number`] checks (`loads` then hands it to the float parser
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
