//! [`Share`]: a view's or cursor's share of its document, counted without
//! a locked instruction where the GIL is.
//!
//! # Why
//!
//! Every container a read returns is a new view, and every `Doc.open` a
//! new cursor; each held a clone of the document's `Arc<Parsed>`: a locked
//! increment to make it and a locked decrement to free it. Natively those
//! two were the costliest instructions of making a child view (about a
//! quarter of `lazy_child`'s samples on the increment alone).
//!
//! # How
//!
//! The views and cursors of one document hold *one* count of its `Arc`
//! between them, and count themselves in `Input::shares` with plain loads
//! and stores: the first share takes the `Arc` count (a real increment),
//! the last one gives it back (a real decrement, which drops the document
//! when nothing else holds it). A `Share` is made and dropped only by a
//! thread attached to the interpreter (views and cursors are values of
//! Python objects, made by reads and dropped by `tp_dealloc`), and where
//! the GIL is, attached threads run one at a time (the GIL's hand-overs
//! order them), so the count needs no read-modify-write.
//!
//! `Share::new` takes the attached thread's token (`Python`), so a share
//! is never made detached; one is dropped only with the value holding it.
//!
//! A `Share` dereferences to the document's `Arc`: code that keeps the
//! document beyond the share (a cursor, a writer's segments) clones that
//! `Arc` as before, which is sound while the share lives (the shares'
//! count keeps the `Arc` alive).
//!
//! Free-threaded builds (`Py_GIL_DISABLED`) have no such order: there a
//! `Share` is a plain clone of the `Arc`, and `Input::shares` stays 0.

use super::doc::Parsed;
use pyo3::Python;
use std::mem::ManuallyDrop;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A share of a document held by a view or cursor (see the module docs).
///
/// `Share` is `Send` and `Sync` by its field (PyO3 requires both of a
/// class's value), yet its count is kept with plain loads and stores: that
/// is sound because every `Share` is made with a `Python` token and
/// dropped attached (by `tp_dealloc` of the object holding it, or by the
/// read that made it when the object cannot be made); no detached section
/// holds one (the parses and splits that release the GIL work on bytes
/// and indexes). Debug builds (not `abi3`) check the attachment in `drop`.
pub(crate) struct Share {
    /// The document's `Arc`, copied without a count of its own in GIL
    /// builds (the shares' one count covers it), and never dropped as
    /// such except by the last share.
    arc: ManuallyDrop<Arc<Parsed>>,
}

impl Share {
    /// A new share of the document `parsed` (which the caller holds, so
    /// its count is at least one), made attached (`_py`).
    #[inline(always)]
    pub(crate) fn new(_py: Python<'_>, parsed: &Arc<Parsed>) -> Share {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            let shares = &parsed.input.shares;
            let n = shares.load(Ordering::Relaxed);
            let p = Arc::as_ptr(parsed);
            if n == 0 {
                // SAFETY: `p` is the pointer of a live `Arc` (the caller's);
                // the shares' one count is taken here and given back by
                // the last share's drop.
                unsafe { Arc::increment_strong_count(p) };
            }
            shares.store(n + 1, Ordering::Relaxed);
            // SAFETY: `p` came from `Arc::as_ptr` of a live `Arc`; the
            // copy is never dropped except as the shares' one count (by
            // the last share), which `n + 1` shares now hold.
            let arc = unsafe { Arc::from_raw(p) };
            Share {
                arc: ManuallyDrop::new(arc),
            }
        }
        #[cfg(Py_GIL_DISABLED)]
        Share {
            arc: ManuallyDrop::new(parsed.clone()),
        }
    }

    /// A share made of the `Arc` `parsed`, made attached (`py`): its
    /// count becomes the share's (free-threaded builds), or the shares'
    /// one count when it is the first share (a new document's root view:
    /// no locked instruction); otherwise it is given back.
    #[cfg(not(feature = "abi3"))]
    pub(crate) fn from_arc(py: Python<'_>, parsed: Arc<Parsed>) -> Share {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            let shares = &parsed.input.shares;
            if shares.load(Ordering::Relaxed) != 0 {
                let share = Share::new(py, &parsed);
                drop(parsed);
                return share;
            }
            // (Attached, as in `new`: the GIL orders this with every
            // other share's count.)
            shares.store(1, Ordering::Relaxed);
        }
        let _ = py;
        Share {
            arc: ManuallyDrop::new(parsed),
        }
    }

    /// Whether dropping this share releases no Python object through it:
    /// another share or another count of the `Arc` remains, or the
    /// input's object was released already.
    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    pub(crate) fn drops_nothing(&self) -> bool {
        self.others() || Arc::strong_count(&self.arc) > 1 || self.arc.input.released()
    }

    /// The document, when this share is its last hold (no other share, no
    /// other count of its `Arc`, no weak reference).
    #[cfg(not(feature = "abi3"))]
    #[inline]
    pub(crate) fn sole(&mut self) -> Option<&mut Parsed> {
        // (The count first: most shares are one of several, and `get_mut`
        // would find that by a locked compare-exchange.)
        if self.others() || Arc::strong_count(&self.arc) != 1 {
            return None;
        }
        Arc::get_mut(&mut self.arc)
    }

    /// Drop this share when other shares of the document remain: that
    /// only counts it out (true). False, with nothing done, for the last
    /// share (and always in free-threaded builds, where a share is a count
    /// of the `Arc`): then the caller drops it as usual.
    ///
    /// # Safety
    ///
    /// When this returns true the share is gone: the caller must not use
    /// or drop it again. The thread is attached (as for `drop`).
    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    pub(crate) unsafe fn drop_if_others(&mut self) -> bool {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            #[cfg(debug_assertions)]
            assert_attached();
            let shares = &self.arc.input.shares;
            let n = shares.load(Ordering::Relaxed);
            if n > 1 {
                // (As `drop` does for a share that is not the last.)
                shares.store(n - 1, Ordering::Relaxed);
                return true;
            }
        }
        false
    }

    /// Whether other shares of the document remain (always false in
    /// free-threaded builds, where each share is a count of the `Arc`).
    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    fn others(&self) -> bool {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            self.arc.input.shares.load(Ordering::Relaxed) > 1
        }
        #[cfg(Py_GIL_DISABLED)]
        false
    }
}

impl std::ops::Deref for Share {
    type Target = Arc<Parsed>;
    #[inline(always)]
    fn deref(&self) -> &Arc<Parsed> {
        &self.arc
    }
}

impl Drop for Share {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            #[cfg(all(debug_assertions, not(feature = "abi3")))]
            assert_attached();
            let shares = &self.arc.input.shares;
            let n = shares.load(Ordering::Relaxed);
            shares.store(n - 1, Ordering::Relaxed);
            if n != 1 {
                return;
            }
        }
        // SAFETY: dropped once, here: the last share gives back the
        // shares' one count (GIL builds), or the share's own count
        // (free-threaded builds).
        unsafe { ManuallyDrop::drop(&mut self.arc) };
    }
}

/// A hold on a document that a view class keeps: a [`Share`] (views,
/// cursors) or the `Arc` itself (`Doc`).
#[cfg(not(feature = "abi3"))]
pub(crate) trait Hold {
    /// The document, when this is its last hold.
    fn sole(&mut self) -> Option<&mut Parsed>;
}

#[cfg(not(feature = "abi3"))]
impl Hold for Share {
    #[inline]
    fn sole(&mut self) -> Option<&mut Parsed> {
        Share::sole(self)
    }
}

#[cfg(not(feature = "abi3"))]
impl Hold for Arc<Parsed> {
    #[inline]
    fn sole(&mut self) -> Option<&mut Parsed> {
        // (The count first, as in `Share::sole`.)
        if Arc::strong_count(self) != 1 {
            return None;
        }
        Arc::get_mut(self)
    }
}

/// Debug builds: a share is counted out only by a thread attached to the
/// interpreter (see the type's docs: plain stores, serialized by the GIL).
#[cfg(all(debug_assertions, not(feature = "abi3"), not(Py_GIL_DISABLED)))]
fn assert_attached() {
    // SAFETY: `PyGILState_Check` only reads the calling thread's state; it
    // may be called attached or not.
    let attached = unsafe { pyo3::ffi::PyGILState_Check() } == 1;
    assert!(
        attached,
        "a document's share dropped by a thread not attached to the interpreter"
    );
}
