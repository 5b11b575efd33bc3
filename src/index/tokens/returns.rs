//! The way back of a stream's dropped index vectors to the thread that
//! builds them.
//!
//! `parse_many` of a large stream builds its indexes on a thread of its
//! own once the caller lags, and the caller drops them (each `Doc` when the
//! loop moves on). (While the caller still splits inline, a list of the
//! same kind serves the caller's own next windows: `Returns::close_here`.)
//! Recycling ([`super::recycle`]) keeps a dropped index's vectors on the
//! thread that drops it, so without a way back the building thread got
//! none of them: two fresh allocations per line, and the dropping thread
//! two frees of memory from the other thread's arena (glibc then locks
//! that arena).
//!
//! # Algorithm
//!
//! A stream that builds on one thread and drops on another owns a
//! [`Returns`]: a list of vectors behind a mutex, shared by both threads.
//! - The dropping thread registers it ([`Returns::drop_here`], in its
//!   [`Spare`]: one at a time per thread, the last stream started). Every
//!   index dropped there then puts its vectors in the list if they are
//!   small (at most [`CLASSES`] size classes: 16 KiB of structurals, 1 Ki
//!   containers) and the list holds at most [`LIST_MAX`] bytes; else they
//!   are freed as before. The mutex is only tried, never waited for (one
//!   uncontended lock per dropped index; a busy lock, or a process forked
//!   while the other thread held it, just frees the vectors).
//! - The building thread takes the whole list before each window
//!   ([`Returns::take_here`]) into size classes in its own [`Spare`] (at
//!   most [`HELD_MAX`] bytes, with those it still holds; more are freed),
//!   and its
//!   builds take a vector of the right class that [`fits`] before they
//!   allocate (the same test as recycling: no index holds more room).
//! - [`Returns::close`] (the stream's end, or its iterator dropped) frees
//!   the list and turns the list away from then on: a `Doc` that outlives
//!   its stream frees its index normally, on any thread, and the dropping
//!   thread forgets the closed list at its next drop. `close` waits for
//!   the lock, so a forked child never calls it (the parent's building
//!   thread may have held the lock at the fork): there the list stays
//!   open: a later return finds the lock busy and frees its vectors, or
//!   (lock free) leaves them in the list, within [`LIST_MAX`], until the
//!   list itself is dropped.
//!
//! The building thread may also be the dropping one (`parse_many` split
//! inline: a window's documents are all built before the first is handed
//! out, so the one index a thread keeps for its next build would serve
//! one of them): it registers the list, takes it before each window, and
//! at the stream's end frees what it holds ([`Returns::close_here`]).
//!
//! Memory: at most [`LIST_MAX`] bytes wait in the list and [`HELD_MAX`]
//! bytes in the building thread's classes, per stream; both are vectors
//! that would otherwise have been freed and allocated again.

use super::{fits, with_spare, Container, Spare};
use std::sync::{Arc, Mutex, TryLockError};

/// Size classes of returned vectors: structurals by [`S_CLASS`] entries,
/// container tables by [`C_CLASS`]; larger ones are not returned.
const CLASSES: usize = 64;
/// Entries per class of structurals (256 bytes: [`fits`]' fixed slack, so
/// a vector of a document's class, or of the next one, nearly always fits).
const S_CLASS: usize = 64;
/// Entries per class of container tables (192 bytes).
const C_CLASS: usize = 16;
/// How many vectors of a class a build looks at (the last ones returned).
const SEARCH: usize = 8;
/// The most bytes of vectors the list holds.
const LIST_MAX: usize = 1 << 20;
/// The most bytes of returned vectors the building thread holds.
const HELD_MAX: usize = 1 << 20;

/// Vectors of dropped indexes (see the module doc).
#[derive(Debug, Default)]
struct List {
    closed: bool,
    structurals: Vec<Vec<u32>>,
    containers: Vec<Vec<Container>>,
    bytes: usize,
}

/// A stream's way back for dropped index vectors (see the module doc).
#[derive(Debug, Default)]
pub struct Returns {
    list: Mutex<List>,
}

/// The returned vectors a building thread holds, by size class.
#[derive(Debug)]
pub(super) struct Held {
    structurals: Vec<Vec<Vec<u32>>>,
    containers: Vec<Vec<Vec<Container>>>,
    bytes: usize,
}

impl Held {
    fn new() -> Held {
        Held {
            structurals: (0..CLASSES).map(|_| Vec::new()).collect(),
            containers: (0..CLASSES).map(|_| Vec::new()).collect(),
            bytes: 0,
        }
    }

    /// An empty vector with room for `room` entries, within [`fits`]'
    /// slack, if one is held: among the last [`SEARCH`] of the next class
    /// up (nearly all of them fit) or of class `room / class` (those with
    /// room enough).
    #[inline]
    fn take<T>(
        classes: &mut [Vec<Vec<T>>],
        bytes: &mut usize,
        room: usize,
        class: usize,
    ) -> Option<Vec<T>> {
        let c = room / class;
        for k in [c + 1, c] {
            let Some(slot) = classes.get_mut(k) else {
                continue;
            };
            let from = slot.len().saturating_sub(SEARCH);
            if let Some(i) = slot[from..].iter().rposition(|v| fits(v, room)) {
                let mut v = slot.swap_remove(from + i);
                *bytes -= v.capacity() * std::mem::size_of::<T>();
                v.clear();
                return Some(v);
            }
        }
        None
    }

    pub(super) fn take_structurals(&mut self, room: usize) -> Option<Vec<u32>> {
        Held::take(&mut self.structurals, &mut self.bytes, room, S_CLASS)
    }

    pub(super) fn take_containers(&mut self, room: usize) -> Option<Vec<Container>> {
        if room == 0 {
            return None;
        }
        Held::take(&mut self.containers, &mut self.bytes, room, C_CLASS)
    }

    /// Hold `v` in its class if there is room under [`HELD_MAX`].
    fn hold<T>(classes: &mut [Vec<Vec<T>>], bytes: &mut usize, v: Vec<T>, class: usize) {
        let b = v.capacity() * std::mem::size_of::<T>();
        if *bytes + b <= HELD_MAX {
            if let Some(slot) = classes.get_mut(v.capacity() / class) {
                *bytes += b;
                slot.push(v);
            }
        }
    }
}

/// The class of a vector of `cap` entries, if it is returned at all.
#[inline]
fn class_of(cap: usize, class: usize) -> Option<usize> {
    let c = cap / class;
    (cap > 0 && c < CLASSES).then_some(c)
}

impl Returns {
    /// A new, open list.
    pub fn new() -> Arc<Returns> {
        Arc::new(Returns::default())
    }

    /// Indexes dropped on this thread from now on return their vectors to
    /// this list (until it is closed, or another list is registered here).
    pub fn drop_here(self: &Arc<Self>) {
        let me = Arc::clone(self);
        with_spare(|spare| spare.returns = Some(me));
    }

    /// Move the returned vectors to this thread's size classes, for its
    /// next builds (the ones it holds stay: a window may get more back
    /// than it uses, the next fewer; over `HELD_MAX` they are freed).
    pub fn take_here(&self) {
        let (s, c) = {
            let Ok(mut list) = self.list.lock() else {
                return;
            };
            list.bytes = 0;
            (
                std::mem::take(&mut list.structurals),
                std::mem::take(&mut list.containers),
            )
        };
        with_spare(|spare| {
            let held = spare.held.get_or_insert_with(|| Box::new(Held::new()));
            for v in s {
                Held::hold(&mut held.structurals, &mut held.bytes, v, S_CLASS);
            }
            for v in c {
                Held::hold(&mut held.containers, &mut held.bytes, v, C_CLASS);
            }
        });
    }

    /// Free the list and turn every later return away. Waits for the lock:
    /// never call it in a forked child (see the module doc).
    pub fn close(&self) {
        let list = match self.list.lock() {
            Ok(mut list) => std::mem::replace(
                &mut *list,
                List {
                    closed: true,
                    ..List::default()
                },
            ),
            Err(_) => return,
        };
        drop(list);
    }

    /// [`Returns::close`], and free the returned vectors this thread holds
    /// (for a stream split on the thread that drops its documents: what
    /// it held for the stream's windows is not kept past the stream).
    pub fn close_here(&self) {
        self.close();
        with_spare(|spare| spare.held = None);
    }

    /// Put a dropped index's vectors in the list (those that are returned
    /// at all and fit under [`LIST_MAX`]; the others are left to the
    /// caller).
    fn give(&self, structurals: &mut Vec<u32>, containers: &mut Vec<Container>) -> Given {
        let mut list = match self.list.try_lock() {
            Ok(list) => list,
            Err(TryLockError::WouldBlock) => return Given::Left,
            Err(TryLockError::Poisoned(_)) => return Given::Closed,
        };
        if list.closed {
            return Given::Closed;
        }
        let mut given = Given::Left;
        if class_of(structurals.capacity(), S_CLASS).is_some() {
            let b = structurals.capacity() * 4;
            if list.bytes + b <= LIST_MAX {
                list.bytes += b;
                list.structurals.push(std::mem::take(structurals));
                given = Given::Taken;
            }
        }
        if class_of(containers.capacity(), C_CLASS).is_some() {
            let b = containers.capacity() * std::mem::size_of::<Container>();
            if list.bytes + b <= LIST_MAX {
                list.bytes += b;
                list.containers.push(std::mem::take(containers));
                given = Given::Taken;
            }
        }
        given
    }
}

/// What [`Returns::give`] did with a dropped index's vectors.
#[derive(Debug, PartialEq, Eq)]
enum Given {
    /// Some went to the list (the others are freed).
    Taken,
    /// None did (too large, the list full or its lock busy): they are
    /// recycled as on a thread without a list.
    Left,
    /// The list is closed (or poisoned): the thread forgets it.
    Closed,
}

/// [`super::recycle`]'s first step: the vectors go to the list this
/// thread registered, if any (`true`: nothing more to do); when the list
/// takes none of them (full, busy, or vectors too large for it), they are
/// recycled as on a thread without one (`false`), so that a full list
/// does not make other parses on the thread allocate afresh; a closed
/// list is forgotten.
#[inline]
pub(super) fn give_back(
    spare: &mut Spare,
    structurals: &mut Vec<u32>,
    containers: &mut Vec<Container>,
) -> bool {
    let Some(r) = &spare.returns else {
        return false;
    };
    match r.give(structurals, containers) {
        Given::Taken => true,
        Given::Left => false,
        Given::Closed => {
            spare.returns = None;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Index;
    use std::sync::mpsc;

    fn held_bytes() -> usize {
        with_spare(|spare| spare.held.as_ref().map_or(0, |h| h.bytes))
    }

    fn list_bytes(r: &Returns) -> usize {
        r.list.lock().expect("not poisoned").bytes
    }

    /// Indexes built on one thread and dropped on another (registered)
    /// come back: the next builds there take them, and read the same.
    #[test]
    fn dropped_vectors_go_back_to_the_building_thread() {
        const DOC: &[u8] = br#"{"a": [1, 2, {"b": "c"}], "d": "e", "f": [[], {}]}"#;
        if !crate::index::tokens::token_scan_runs(DOC) {
            return;
        }
        let build = || Index::build_tokens(DOC, 64, false, false).expect("valid").0;
        let r = Returns::new();
        r.drop_here();
        let (tx, rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let theirs = Arc::clone(&r);
        let builder = std::thread::spawn(move || {
            tx.send((0..8).map(|_| build()).collect::<Vec<_>>())
                .expect("sent");
            go_rx.recv().expect("dropped");
            theirs.take_here();
            let held = held_bytes();
            let again: Vec<_> = (0..8).map(|_| build()).collect();
            (held, held_bytes(), again)
        });
        let first = rx.recv().expect("built");
        let one = first[0].heap_bytes();
        drop(first);
        assert_eq!(list_bytes(&r), 8 * one);
        go_tx.send(()).expect("sent");
        let (held, left, again) = builder.join().expect("no panic");
        assert_eq!((held, left), (8 * one, 0));
        assert_eq!(list_bytes(&r), 0);
        let want = build();
        for ix in &again {
            assert_eq!(ix.structurals, want.structurals);
            assert_eq!(ix.containers.len(), want.containers.len());
            assert_eq!(ix.heap_bytes(), one);
        }
        // Closed: the list turns later drops away (they are freed here).
        r.close();
        drop(again);
        assert_eq!(list_bytes(&r), 0);
        assert!(with_spare(|spare| spare.returns.is_none()));
    }

    /// One thread both builds and drops (a stream split inline): the
    /// vectors come back to its own next builds, and `close_here` frees
    /// what it holds.
    #[test]
    fn a_thread_that_builds_and_drops_takes_its_own_back() {
        const DOC: &[u8] = br#"{"a": [1, 2, {"b": "c"}], "d": "e", "f": [[], {}]}"#;
        if !crate::index::tokens::token_scan_runs(DOC) {
            return;
        }
        let build = || Index::build_tokens(DOC, 64, false, false).expect("valid").0;
        let want = build().structurals.clone();
        let r = Returns::new();
        r.drop_here();
        let first: Vec<_> = (0..4).map(|_| build()).collect();
        let one = first[0].heap_bytes();
        drop(first);
        assert_eq!(list_bytes(&r), 4 * one);
        r.take_here();
        assert_eq!((list_bytes(&r), held_bytes()), (0, 4 * one));
        let again: Vec<_> = (0..4).map(|_| build()).collect();
        assert_eq!(held_bytes(), 0);
        assert!(again.iter().all(|ix| ix.structurals == want));
        drop(again);
        r.take_here();
        assert_eq!(held_bytes(), 4 * one);
        r.close_here();
        assert_eq!((list_bytes(&r), held_bytes()), (0, 0));
    }

    /// A full list takes nothing: the index dropped then is recycled as
    /// on a thread without a list (a plain parse next to a stream keeps
    /// its free vectors), and the list stays registered.
    #[test]
    fn a_full_list_leaves_vectors_to_the_free_slot() {
        const DOC: &[u8] = br#"{"a": [1, 2, {"b": "c"}], "d": "e"}"#;
        if !crate::index::tokens::token_scan_runs(DOC) {
            return;
        }
        let build = || Index::build_tokens(DOC, 64, false, false).expect("valid").0;
        drop(build()); // this thread builds: it keeps a free index
        let r = Returns::new();
        r.drop_here();
        let mut c = Vec::new();
        for room in [S_CLASS * (CLASSES - 1), 1] {
            loop {
                let mut s = Vec::with_capacity(room);
                if r.give(&mut s, &mut c) != Given::Taken {
                    break;
                }
            }
        }
        assert_eq!(list_bytes(&r), LIST_MAX);
        let full = list_bytes(&r);
        with_spare(|spare| spare.free_structurals = Vec::new());
        drop(build());
        assert_eq!(list_bytes(&r), full);
        assert!(with_spare(|spare| spare.free_structurals.capacity()) > 0);
        assert!(with_spare(|spare| spare.returns.is_some()));
        r.close();
        drop(build());
        assert!(with_spare(|spare| spare.returns.is_none()));
    }

    #[test]
    fn the_list_is_bounded() {
        let r = Returns::new();
        let mut s = Vec::with_capacity(S_CLASS * (CLASSES - 1));
        let mut c = Vec::new();
        let per = s.capacity() * 4;
        let mut n = 0;
        while r.give(&mut s, &mut c) == Given::Taken && s.capacity() == 0 {
            n += 1;
            s = Vec::with_capacity(S_CLASS * (CLASSES - 1));
        }
        assert_eq!(n, LIST_MAX / per);
        assert!(list_bytes(&r) <= LIST_MAX);
        // Full, or too large a vector: left to its owner.
        assert_eq!(r.give(&mut s, &mut c), Given::Left);
        assert_eq!(s.capacity(), S_CLASS * (CLASSES - 1));
        let mut big = Vec::with_capacity(S_CLASS * CLASSES);
        let fresh = Returns::new();
        assert_eq!(fresh.give(&mut big, &mut c), Given::Left);
        assert_eq!(list_bytes(&fresh), 0);
        r.close();
        assert_eq!(r.give(&mut big, &mut c), Given::Closed);
        assert_eq!(big.capacity(), S_CLASS * CLASSES);
        assert_eq!(list_bytes(&r), 0);
    }
}
