//! The builder's allocations kept between calls: its frame stack and its
//! unescape buffer (one allocation less per document, none for documents
//! with a few escaped strings). They are kept in the key cache
//! ([`Spares`], when the builder holds the cache: no thread-local access
//! per document, which `loads_many` paid on every line) or else in
//! thread-locals. Each is taken out while in use, so a re-entrant `loads`
//! (from a finalizer our allocations trigger) just allocates its own;
//! large ones are freed rather than kept.

use super::builder::Frame;
use std::cell::Cell;

/// Stacks with at most this many frames of capacity are kept for the next
/// call on the same thread.
const KEEP_FRAMES: usize = 1024;

thread_local! {
    /// The last builder's stack, kept for the next one on this thread (one
    /// allocation less per document). Taken out while in use, so a
    /// re-entrant `loads` (from a finalizer our allocations trigger) just
    /// allocates its own.
    static SPARE_STACK: Cell<Vec<Frame>> = const { Cell::new(Vec::new()) };
    /// The same for the unescape buffer (documents with a few escaped
    /// strings then allocate nothing for them).
    static SPARE_SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Unescape buffers with at most this many bytes of capacity are kept for
/// the next call on the same thread.
const KEEP_SCRATCH: usize = 64 * 1024;

/// A frame stack and an unescape buffer kept for the next builder (in the
/// key cache, see the module doc).
pub(crate) struct Spares {
    stack: Vec<Frame>,
    scratch: Vec<u8>,
}

impl Spares {
    pub(super) const EMPTY: Spares = Spares {
        stack: Vec::new(),
        scratch: Vec::new(),
    };
}

/// The builder's stack (empty) and unescape buffer (any contents): from
/// `kept` when given, else those the last builder on this thread left.
#[inline(always)]
pub(super) fn take(kept: Option<&mut Spares>) -> (Vec<Frame>, Vec<u8>) {
    match kept {
        Some(k) => (std::mem::take(&mut k.stack), std::mem::take(&mut k.scratch)),
        None => (take_stack(), take_scratch()),
    }
}

/// Keep `stack` (empty) and `scratch` for [`take`]: in `kept` when given,
/// else for this thread; large ones are freed.
#[inline(always)]
pub(super) fn give_back(kept: Option<&mut Spares>, mut stack: Vec<Frame>, scratch: Vec<u8>) {
    let Some(k) = kept else {
        give_back_stack(stack);
        give_back_scratch(scratch);
        return;
    };
    debug_assert!(stack.is_empty());
    // (As in `give_back_stack`: frames own nothing by then.)
    stack.clear();
    if stack.capacity() <= KEEP_FRAMES {
        k.stack = stack;
    }
    if scratch.capacity() <= KEEP_SCRATCH {
        k.scratch = scratch;
    }
}

/// The unescape buffer the last builder on this thread left (any contents).
fn take_scratch() -> Vec<u8> {
    SPARE_SCRATCH.try_with(Cell::take).unwrap_or_default()
}

/// Keep `scratch` for [`take_scratch`], unless it is large.
fn give_back_scratch(scratch: Vec<u8>) {
    if scratch.capacity() <= KEEP_SCRATCH {
        let _ = SPARE_SCRATCH.try_with(|c| c.set(scratch));
    }
}

/// An empty frame stack, with the capacity the last one left.
fn take_stack() -> Vec<Frame> {
    SPARE_STACK.try_with(Cell::take).unwrap_or_default()
}

/// Keep `stack` (empty) for [`take_stack`], unless it is large.
fn give_back_stack(mut stack: Vec<Frame>) {
    debug_assert!(stack.is_empty());
    // (Frames hold raw pointers, no owned values: clearing releases
    // nothing, and `run` has released every frame already.)
    stack.clear();
    if stack.capacity() <= KEEP_FRAMES {
        let _ = SPARE_STACK.try_with(|c| c.set(stack));
    }
}
