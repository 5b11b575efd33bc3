//! The builder's allocations kept between calls on a thread: its frame
//! stack and its unescape buffer (one allocation less per document, none
//! for documents with a few escaped strings). Each is taken out while in
//! use, so a re-entrant `loads` (from a finalizer our allocations trigger)
//! just allocates its own; large ones are freed rather than kept.

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

/// The unescape buffer the last builder on this thread left (any contents).
pub(super) fn take_scratch() -> Vec<u8> {
    SPARE_SCRATCH.try_with(Cell::take).unwrap_or_default()
}

/// Keep `scratch` for [`take_scratch`], unless it is large.
pub(super) fn give_back_scratch(scratch: Vec<u8>) {
    if scratch.capacity() <= KEEP_SCRATCH {
        let _ = SPARE_SCRATCH.try_with(|c| c.set(scratch));
    }
}

/// An empty frame stack, with the capacity the last one left.
pub(super) fn take_stack() -> Vec<Frame> {
    SPARE_STACK.try_with(Cell::take).unwrap_or_default()
}

/// Keep `stack` (empty) for [`take_stack`], unless it is large.
pub(super) fn give_back_stack(mut stack: Vec<Frame>) {
    debug_assert!(stack.is_empty());
    // (Frames hold raw pointers, no owned values: clearing releases
    // nothing, and `run` has released every frame already.)
    stack.clear();
    if stack.capacity() <= KEEP_FRAMES {
        let _ = SPARE_STACK.try_with(|c| c.set(stack));
    }
}
