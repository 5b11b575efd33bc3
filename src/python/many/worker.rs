//! The splitting thread of `parse_many`: the next windows of an in-memory
//! stream are split while the caller reads the documents of this one.
//!
//! # Algorithm
//!
//! Splitting (stage 1 and each document's index, [`Splitter::split`]) is
//! most of what `parse_many` costs per byte, and it needs nothing of
//! Python. So once the caller lags (below), a thread of its own runs the
//! splitter over the rest of the stream, a window (`WINDOW`, 1 MiB) at a
//! time, and hands each window's [`Piece`]s to the iterator through a
//! queue of [`AHEAD`] windows: the calling thread only makes the `Doc`s
//! and runs the caller's reads, while the next windows are indexed on
//! another core (simdjson's `iterate_many` runs its stage 1 on a second
//! thread the same way; fastsimdjson's `parse_many` does). The pieces are
//! exactly those of the inline path: the same splitter (the iterator's,
//! handed over with its state), fed the same bytes from the same
//! position, with the same window.
//!
//! # When the thread starts
//!
//! The thread is not free: what it writes (each document's index, the
//! pieces) is read on the caller's core, and what the caller drops
//! (returned vectors) is written again on the thread's, each a transfer
//! between the two cores' caches. Measured on many_bench's read row (20
//! MB, two reads per line; LTO builds; CPU time, medians of interleaved
//! rounds on the shared 2-core machine): split inline, 5.8-5.9 ms; on the
//! thread, 6.6-6.7 ms for the process (2.0-2.3 ms of it the caller's) at
//! a load of 6-9, and up to 10-12 ms (3.7 ms the caller's) at a load of
//! 10-13, where the same thread pinned to the caller's core took 5.8-6.0
//! ms: the extra is the cores' traffic, not the thread's own work
//! (fastsimdjson's `parse_many`: 8.9 ms pinned, 13.9 ms not). Without the
//! returned vectors, 9.0 ms. So the thread buys wall time (the caller's
//! share of the work overlaps the split) for 13-15% more CPU on a machine
//! with a spare core, and costs both where there is none. The rule: the
//! iterator splits inline and times each window's split against the time
//! the caller then takes over that window's documents, both by the calling
//! thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`; wall time where there is
//! none: a caller descheduled on a loaded machine, or waiting on I/O,
//! then does not count as busy); once the caller has taken at least 1 /
//! [`SHARE`] (a quarter) of the split time over [`LAGS`] windows in a
//! row, and at least [`WORKER_MIN`] bytes are left, the thread takes over
//! from there. Measured on the 20 MB batch file (LTO; the caller's CPU
//! time over a window's documents / the window's split, the first two
//! windows of five runs): a loop that only iterates (makes each `Doc` and
//! drops it) 0.14-0.28, so it mostly stays inline, where its process CPU
//! is lowest; one `get_str` per document 0.29-0.51; many_bench's read row
//! (two) 0.37-0.50, so it gets the thread from its third window (inline,
//! its calling thread would do the whole split: 1.5x fastsimdjson's
//! calling thread, short of the 2x target). With a third as the line, the
//! read row stayed inline in many_cores.py's runs (the caller's CPU 5.6
//! ms of the process's 6.1 ms, 1.6x fastsimdjson's caller). Time off the
//! CPU does not count, but a wait's system call does: a `time.sleep` per
//! document costs the caller's thread microseconds of CPU time in the
//! kernel, more than its document's split. Streams shorter than
//! [`WORKER_MIN`] never get one: the first window is waited for in any
//! case, so only the next ones could overlap the reads.
//! `_qjson._many_thread` sets the policy process-wide for tests and
//! benchmarks ("auto", "always": from the first window, "never").
//!
//! The window stays 1 MiB: with 256 KiB windows, the 100 MB batch file
//! took about 1.8x the calling thread's CPU time and 1.5x the process's
//! (more hand-overs, each a wake-up, and the channel's waits spin a little
//! before they sleep).
//!
//! # Waking the reader
//!
//! The thread is the slower side (it does the split, the caller only the
//! reads), so the caller nearly always finds the queue empty and sleeps
//! until the next window; each such wake-up is a futex wake from the
//! thread's core and a context switch on the caller's, which a profile of
//! the read row (perf, 20 MB, the thread from the first window) put at 6-7%
//! of the process's CPU time (kernel time in the thread's wake-up and the
//! caller's switch back in; on a virtual machine a wake-up is an interrupt
//! between virtual CPUs). So the queue ([`Queue`], a mutex and two
//! condition variables; it replaced a `sync_channel`, whose waits also spin
//! before they sleep) wakes a waiting reader only once it is full
//! ([`AHEAD`] windows) or the thread ends, and a thread waiting for room
//! only once the reader has emptied it: one wake-up per [`AHEAD`] windows
//! instead of one per window, the same memory bound (perf stat: 42 context
//! switches per 20 MB stream -> 13-16; inline, under 1). Each side is woken
//! after the lock is released (else the woken reader met the lock still
//! held and slept again on it: the mutex's contended path went from 0.4% of
//! the samples to none). The read row, A/B in one process (LTO builds,
//! medians of 30 rounds taken in alternating order, collector on, a load of
//! about 2.5 on the 2 cores), process CPU: 20 MB, the default policy 3.93
//! -> 3.72 ms (the caller's 1.49 -> 1.39), the thread from the first window
//! 3.87 -> 3.70 (the caller's 1.18 -> 1.08), inline 3.55 either way; 100
//! MB, 19.80 -> 18.61 ms and 19.71 -> 18.86 (fastsimdjson 29.1); a loop
//! that only iterates, with the thread from the first window, 3.65 -> 3.18
//! ms (inline 2.95, where the default keeps it). A queue of four windows
//! (one wake-up per four) did no better than two.
//!
//! Memory stays bounded: at most [`AHEAD`] windows wait in the queue
//! (plus the one being split and the one being read). The index vectors
//! of the documents the calling thread drops come back to this thread
//! ([`Returns`]: at most 1 MiB waiting, 1 MiB held here), which takes them
//! before each window and builds that window's indexes in them: the
//! thread then allocates few index vectors, and the caller frees none of
//! another thread's memory. Nothing of Python is
//! touched by the thread: it reads the stream's bytes through a raw slice
//! that the iterator keeps alive ([`Worker::start`]'s contract), and a
//! [`Worker`] that is dropped (the iterator finished, freed or abandoned)
//! closes the queue and joins the thread before those bytes can go.
//!
//! A child process forked while the thread runs has no such thread (only
//! the forking thread is copied): there the iterator raises instead of
//! waiting for windows that never come, and its `Drop` does not join.

use crate::index::Returns;
use crate::many::{Piece, Splitter, WINDOW};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Streams with this many bytes left (two windows) may get a splitting
/// thread: the first window is waited for in any case, so only the next
/// ones can overlap the reads.
pub(super) const WORKER_MIN: usize = 2 * WINDOW;
/// How many split windows may wait for the reader.
const AHEAD: usize = 2;
/// How many windows in a row the caller must lag (see [`SHARE`]) before
/// the thread starts.
const LAGS: u32 = 2;
/// The caller lags when it takes at least 1 / `SHARE` of a window's split
/// time over that window's documents (CPU time of the calling thread; see
/// the module doc).
const SHARE: u32 = 4;

/// When `parse_many` starts its splitting thread: [`Policy::Auto`] (see
/// [`Pace`]); the others for tests and benchmarks (`_qjson._many_thread`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Policy {
    /// When the caller lags (see the module doc).
    Auto = 0,
    /// At the first window of every stream of [`WORKER_MIN`] bytes or more.
    Always = 1,
    /// Never: every window is split inline.
    Never = 2,
}

static POLICY: AtomicU8 = AtomicU8::new(Policy::Auto as u8);

impl Policy {
    /// The process-wide policy.
    pub(super) fn get() -> Policy {
        match POLICY.load(Ordering::Relaxed) {
            1 => Policy::Always,
            2 => Policy::Never,
            _ => Policy::Auto,
        }
    }

    /// Set the process-wide policy (for iterators that have not started a
    /// thread yet); returns the one before.
    pub(super) fn set(p: Policy) -> Policy {
        let old = POLICY.swap(p as u8, Ordering::Relaxed);
        match old {
            1 => Policy::Always,
            2 => Policy::Never,
            _ => Policy::Auto,
        }
    }
}

/// The calling thread's CPU time: `CLOCK_THREAD_CPUTIME_ID` where there is
/// one (Unix), else wall time since the first call. (A syscall on Linux,
/// not the vDSO: about a microsecond, twice per 1 MiB window.)
fn thread_cpu() -> Duration {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid `timespec` for the call to write.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
        }
    }
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

/// How much CPU time the caller's thread spent on the documents of the
/// windows it split inline, against what their splits took: whether it
/// lags (see the module doc).
#[derive(Debug, Default)]
pub(super) struct Pace {
    /// The calling thread's CPU time spent on the last inline split.
    split: Duration,
    /// Its CPU clock when that split ended (it has since been reading
    /// the window's documents), and which thread that clock is: an
    /// iterator advanced from another thread next is not measured (two
    /// threads' CPU clocks do not subtract).
    done: Option<(Duration, std::thread::ThreadId)>,
    /// Windows in a row whose documents took the caller at least
    /// 1 / [`SHARE`] of their split.
    lagged: u32,
}

impl Pace {
    /// Called before an inline split with `left` bytes of the stream left:
    /// whether the splitting thread should take over from here.
    pub(super) fn wants_thread(&mut self, left: usize) -> bool {
        if let Some((done, by)) = self.done.take() {
            if by != std::thread::current().id() {
                // Another thread's clock: no measure of this window.
            } else if thread_cpu().saturating_sub(done) * SHARE >= self.split {
                self.lagged += 1;
            } else {
                self.lagged = 0;
            }
        }
        left >= WORKER_MIN
            && match Policy::get() {
                Policy::Auto => self.lagged >= LAGS,
                Policy::Always => true,
                Policy::Never => false,
            }
    }

    /// Run the inline split `f`, timed by the calling thread's CPU clock.
    pub(super) fn split<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = thread_cpu();
        let r = f();
        let now = thread_cpu();
        self.split = now.saturating_sub(t);
        self.done = Some((now, std::thread::current().id()));
        r
    }
}

/// The documents of one window, and where the split stopped.
pub(super) struct Batch {
    pub(super) pieces: Vec<Piece>,
    pub(super) pos: usize,
}

/// The stream's bytes, sent to the splitting thread.
struct Bytes {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the bytes are only read, and `Worker::start`'s caller keeps them
// alive and unchanged until the thread has been joined.
unsafe impl Send for Bytes {}

/// The split windows on their way from the thread to the iterator: at most
/// [`AHEAD`] of them, behind a mutex, with a condition variable for each
/// side's wait (see the module doc, "Waking the reader").
#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
    /// The reader waits here for windows.
    filled: Condvar,
    /// The thread waits here for room.
    emptied: Condvar,
}

#[derive(Default)]
struct QueueState {
    batches: VecDeque<Batch>,
    /// The thread sends no more (the stream is split, or it ended early).
    done: bool,
    /// The reader takes no more (the iterator is gone).
    closed: bool,
    /// Whether the reader / the thread waits (only then is it woken).
    reader_waits: bool,
    thread_waits: bool,
}

impl Queue {
    /// The state, also after a panic of the other side while it held the
    /// lock (the state is consistent at every unlock).
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queue a window, waiting while [`AHEAD`] wait already; `false` when
    /// the reader is gone. A waiting reader is woken only once the queue is
    /// full (see the module doc).
    fn send(&self, batch: Batch) -> bool {
        let mut st = self.lock();
        while st.batches.len() >= AHEAD && !st.closed {
            st.thread_waits = true;
            st = self.emptied.wait(st).unwrap_or_else(|e| e.into_inner());
            st.thread_waits = false;
        }
        if st.closed {
            return false;
        }
        st.batches.push_back(batch);
        let wake = st.reader_waits && st.batches.len() >= AHEAD;
        // (Woken after the unlock: else the reader wakes into a held lock
        // and sleeps again at once, on the mutex.)
        drop(st);
        if wake {
            self.filled.notify_one();
        }
        true
    }

    /// The next window, waiting for it if need be; `None` once the thread
    /// sends no more and every window was taken. A waiting thread is woken
    /// only once the queue is empty.
    fn recv(&self) -> Option<Batch> {
        let mut st = self.lock();
        loop {
            if let Some(b) = st.batches.pop_front() {
                let wake = st.thread_waits && st.batches.is_empty();
                drop(st);
                if wake {
                    self.emptied.notify_one();
                }
                return Some(b);
            }
            if st.done || st.closed {
                return None;
            }
            st.reader_waits = true;
            st = self.filled.wait(st).unwrap_or_else(|e| e.into_inner());
            st.reader_waits = false;
        }
    }

    /// The thread sends no more: wake the reader.
    fn finish(&self) {
        let mut st = self.lock();
        st.done = true;
        let wake = st.reader_waits;
        drop(st);
        if wake {
            self.filled.notify_one();
        }
    }

    /// The reader takes no more: free the waiting windows, wake the
    /// thread.
    fn close(&self) {
        let (wake, batches) = {
            let mut st = self.lock();
            st.closed = true;
            (st.thread_waits, std::mem::take(&mut st.batches))
        };
        if wake {
            self.emptied.notify_one();
        }
        // (Their documents' vectors are freed outside the lock.)
        drop(batches);
    }
}

/// Marks the queue finished when the splitting thread ends, however it
/// ends.
struct Done<'a>(&'a Queue);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// A splitting thread and the receiving end of its queue.
pub(super) struct Worker {
    /// The split windows on their way to the iterator.
    queue: Arc<Queue>,
    thread: Option<JoinHandle<()>>,
    /// The process that started the thread (see the module doc on fork).
    pid: u32,
    /// The way back of the index vectors of the documents the calling
    /// thread drops, to the splitting thread (see [`Returns`]).
    returns: Arc<Returns>,
}

impl Worker {
    /// Start splitting `bytes` (the whole stream) from `pos` with
    /// `splitter`'s state on a new thread: the thread takes `splitter` (the
    /// caller's is left fresh) once it has started; `None`, with `splitter`
    /// untouched, when no thread can be started (the caller then splits
    /// inline).
    ///
    /// # Safety
    /// `bytes` must stay alive and unchanged until the returned `Worker`
    /// is dropped (its `Drop` joins the thread).
    pub(super) unsafe fn start(
        bytes: &[u8],
        pos: usize,
        splitter: &mut Splitter,
    ) -> Option<Worker> {
        let queue = Arc::new(Queue::default());
        let theirs_q = Arc::clone(&queue);
        // The splitter goes over once the thread exists (a spawn that fails
        // leaves it with the caller).
        let (give, take) = sync_channel::<Splitter>(1);
        let returns = Returns::new();
        let theirs = Arc::clone(&returns);
        let b = Bytes {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
        };
        let thread = std::thread::Builder::new()
            .name("qjson-parse-many".into())
            .spawn(move || {
                let b = b;
                // The reader learns that no more windows come however the
                // thread ends (also by a panic).
                let _done = Done(&theirs_q);
                // SAFETY: the caller of `start` keeps the bytes alive and
                // unchanged until this thread is joined.
                let buf = unsafe { std::slice::from_raw_parts(b.ptr, b.len) };
                let mut pos = pos;
                let mut splitter = match take.recv() {
                    Ok(s) => s,
                    Err(_) => {
                        theirs.close();
                        return;
                    }
                };
                while pos < buf.len() {
                    // The vectors of the documents dropped since the last
                    // window, for this one's.
                    theirs.take_here();
                    let mut pieces = Vec::new();
                    let q = splitter.split(buf, pos, true, &mut pieces);
                    if q == pos && pieces.is_empty() {
                        break; // (`split` at the end always progresses)
                    }
                    pos = q;
                    // A closed queue: the iterator is gone.
                    if !theirs_q.send(Batch { pieces, pos }) {
                        break;
                    }
                }
                // Documents dropped from now on free their vectors.
                theirs.close();
            })
            .ok()?;
        let fresh = Splitter::new(splitter.options(), true, WINDOW);
        // (The thread waits for it: the channel has room, and is open.)
        let _ = give.send(std::mem::replace(splitter, fresh));
        // The calling thread drops the documents (mostly: any other thread
        // frees them as usual).
        returns.drop_here();
        Some(Worker {
            queue,
            thread: Some(thread),
            pid: std::process::id(),
            returns,
        })
    }

    /// Whether the thread belongs to another process (this one is a
    /// child forked while it ran): then nothing comes through the queue.
    pub(super) fn orphaned(&self) -> bool {
        self.pid != std::process::id()
    }

    /// The next window's documents (waiting for them if need be); `None`
    /// when the stream is split to its end. Call without the interpreter
    /// attached: it may wait. (The caller checks [`Worker::orphaned`]
    /// first.)
    pub(super) fn next(&mut self) -> Option<Batch> {
        self.queue.recv()
    }

    /// Whether the thread ended by panicking (after [`Worker::next`]
    /// returned `None`): the stream was then not split to its end.
    pub(super) fn failed(&mut self) -> bool {
        self.queue.close();
        match self.thread.take() {
            Some(t) => t.join().is_err(),
            None => false,
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the queue stops the thread at its next send; joining it
        // ends its use of the bytes before they can be released.
        let orphaned = self.orphaned();
        if !orphaned {
            // (Not in a forked child: the queue's lock may have been held
            // by the parent's thread at the fork.)
            self.queue.close();
        }
        if !orphaned {
            // (Not in a forked child: the parent's splitting thread may have
            // held the list's lock at the fork, and nobody would release
            // it. There, later returns find the lock busy and free their
            // vectors themselves.)
            self.returns.close();
        }
        if let Some(t) = self.thread.take() {
            if orphaned {
                // No such thread here: joining would wait forever.
                std::mem::forget(t);
            } else {
                let _ = t.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(pos: usize) -> Batch {
        Batch {
            pieces: Vec::new(),
            pos,
        }
    }

    /// Every window comes out, in order; a reader waiting on a queue that
    /// is not full is woken when the thread ends (also with no window).
    #[test]
    fn the_reader_gets_every_window_and_the_end() {
        for n in [0, 1, AHEAD - 1, AHEAD, 2 * AHEAD + 1] {
            let q = Arc::new(Queue::default());
            let theirs = Arc::clone(&q);
            let t = std::thread::spawn(move || {
                let _done = Done(&theirs);
                for i in 0..n {
                    // (Some sends after the reader waits.)
                    if i % 2 == 1 {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    assert!(theirs.send(batch(i)));
                }
            });
            let got: Vec<usize> = std::iter::from_fn(|| q.recv()).map(|b| b.pos).collect();
            assert_eq!(got, (0..n).collect::<Vec<_>>());
            t.join().expect("no panic");
        }
    }

    /// A thread that waits for room is woken when the reader goes, and
    /// sends no more; one that panics still ends the reader's wait.
    #[test]
    fn close_wakes_the_thread_and_a_panic_ends_the_stream() {
        let q = Arc::new(Queue::default());
        let theirs = Arc::clone(&q);
        let t = std::thread::spawn(move || {
            let _done = Done(&theirs);
            (0..=AHEAD)
                .map(|i| theirs.send(batch(i)))
                .collect::<Vec<_>>()
        });
        while q.lock().batches.len() < AHEAD || !q.lock().thread_waits {
            std::thread::sleep(Duration::from_millis(1));
        }
        q.close();
        let sent = t.join().expect("no panic");
        assert_eq!(sent, [vec![true; AHEAD], vec![false]].concat());
        assert!(q.recv().is_none());

        let q = Arc::new(Queue::default());
        let theirs = Arc::clone(&q);
        let t = std::thread::spawn(move || {
            let _done = Done(&theirs);
            assert!(theirs.send(batch(7)));
            panic!("the split failed");
        });
        assert_eq!(q.recv().map(|b| b.pos), Some(7));
        assert!(q.recv().is_none());
        assert!(t.join().is_err());
    }
}
