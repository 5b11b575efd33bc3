//! Stack headroom for the walks that recurse once per container level.
//!
//! `dumps` (of plain values and of views) and `materialize` call themselves
//! for each nested container. Their depth limits (`MAX_DEPTH` in each)
//! bound that recursion, but not the stack it needs: a thread started with
//! a small stack (musl's default is 128 KiB, macOS's 512 KiB, and Python
//! code can ask for as little as 32 KiB with `threading.stack_size`) runs
//! out long before a thousand levels. Measured before this guard, on a
//! 256 KiB thread: `dumps` of plain dicts needed ~330 bytes a level,
//! `materialize` of a chain of views ~400 and `dumps` of an edited chain of
//! views ~1,300, so 1,023 levels crashed the process.
//!
//! A crash is never an acceptable answer, so past the first 32 levels
//! (where the callers already take a cold path for their cycle checks) each
//! level asks how much stack is left and refuses to go deeper with less
//! than [`RESERVE`]: room for one more level and what it calls (a
//! `default=` hook, raising the error). The answer comes from `stacker`:
//! the thread's stack bounds, looked up once per thread and cached, against
//! the stack pointer.
//!
//! Limits: the first 32 levels are not checked (up to ~42 KB of stack for
//! edited views), so a thread needs at least that much room left when it
//! calls in; and on a platform where `stacker` cannot tell the bounds the
//! guard is off (the depth limits still hold).

/// Stack kept free below the deepest level a walk enters.
const RESERVE: usize = 32 * 1024;

/// The message of the error a walk raises when [`low`].
pub(crate) const TOO_DEEP: &str =
    "Maximum nesting depth exceeded: this thread's stack is too small";

/// Whether the current thread has less than [`RESERVE`] bytes of stack
/// left (false when the platform does not say).
#[inline]
pub(crate) fn low() -> bool {
    stacker::remaining_stack().is_some_and(|left| left < RESERVE)
}
