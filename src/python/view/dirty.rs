//! Which views hold edits to write ("dirty"), worked out once per write.
//!
//! A clean view is written as one copy of its original bytes; a dirty one
//! goes through the edit writer (see `write`). [`mark_dirty`] walks every
//! view cached below a root in one pass and notes each answer with the
//! current era; writers read the notes ([`dirty_now`]) until Python code
//! may have run ([`new_era`]).

use super::{cached, ArrState, Array, ObjState, Object};
use pyo3::ffi;
use pyo3::prelude::*;
use smallvec::SmallVec;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Work out which views under `root` (itself included) have edits to
/// write, in one walk, and note the answer in each ([`Marked::mark`], with
/// the current [`ERA`]); returns `root`'s. A view is dirty when it holds
/// edits of its own (it is Edited or patched) or a view cached below it is
/// dirty.
///
/// The walk reaches every view a writer of `root` may ask about: the views
/// cached by lazy containers (patched ones included) and by the original
/// slots of Edited ones; new values are walked when they are written. The
/// writers then read the notes ([`dirty_now`]), so writing a tree of
/// cached views costs O(views) for this, however deep they nest (a writer
/// asking at every level would cost views times levels), unless Python
/// code runs in between (a new era: the views asked about are walked
/// again). The walk uses a list of its own rather than recursion, since a
/// chain of cached views can be as deep as the document.
///
/// The answer must be exact: a clean view is written as one copy of its
/// bytes (the root with the whitespace around it; in a lazy document, or
/// with repeated keys, as written), which the edit path would not give. A
/// view that cannot be borrowed (being changed right now) counts as dirty.
pub(super) fn mark_dirty<'py>(py: Python<'py>, root: &impl Marked) -> bool {
    let era = ERA.load(Relaxed);
    // Most trees of cached views are shallow: walked by recursion, with no
    // list to grow; a deeper one is walked again by the list.
    let mut deep = false;
    let mut below = false;
    let own = root.edits_and_views(&mut |c| {
        if !deep {
            match mark_shallow(c.bind_borrowed(py), era, 1) {
                Some(d) => below |= d,
                None => deep = true,
            }
        }
    });
    if deep {
        return mark_deep(py, root);
    }
    let dirty = own || below;
    root.mark().store(note(era, dirty), Relaxed);
    dirty
}

/// Views deeper than this below a root are walked by [`mark_deep`] (the
/// recursion of [`mark_shallow`] would grow the native stack with them).
const SHALLOW: u32 = 24;

/// [`mark_dirty`] for view `v` at `depth` below the root, by recursion:
/// notes `v` and the views below it and returns `v`'s answer (a value
/// that is not a view, or a view that cannot be borrowed, counts as
/// dirty, as in [`mark_deep`]); `None` past [`SHALLOW`] levels (some views
/// may be noted by then: rightly, their walk was whole).
fn mark_shallow(v: Borrowed<'_, '_, PyAny>, era: u64, depth: u32) -> Option<bool> {
    fn below(py: Python<'_>, v: &impl Marked, era: u64, depth: u32) -> Option<bool> {
        let (mut deep, mut below) = (false, false);
        let own = v.edits_and_views(&mut |c| {
            if !deep {
                match mark_shallow(c.bind_borrowed(py), era, depth + 1) {
                    Some(d) => below |= d,
                    None => deep = true,
                }
            }
        });
        if deep {
            return None;
        }
        let dirty = own || below;
        v.mark().store(note(era, dirty), Relaxed);
        Some(dirty)
    }
    if depth > SHALLOW {
        return None;
    }
    if let Ok(o) = v.cast_exact::<Object>() {
        return match o.try_borrow() {
            Ok(o) => below(v.py(), &*o, era, depth),
            Err(_) => Some(true),
        };
    }
    match v.cast_exact::<Array>().map(|a| a.try_borrow()) {
        Ok(Ok(a)) => below(v.py(), &*a, era, depth),
        _ => Some(true),
    }
}

/// [`mark_dirty`] by a list of its own rather than recursion (a chain of
/// cached views can be as deep as the document).
#[cold]
#[inline(never)]
fn mark_deep<'py>(py: Python<'py>, root: &impl Marked) -> bool {
    /// A view met by the walk: where its note is, the position of its
    /// parent, and whether it is dirty (its own edits first, then its
    /// children's).
    struct Met {
        mark: *const AtomicU64,
        parent: usize,
        dirty: bool,
    }
    /// `v`'s note and own edits, its cached child views given to `each`
    /// (`None`: not a view, or one that cannot be borrowed).
    fn visit(
        v: Borrowed<'_, '_, PyAny>,
        each: &mut impl FnMut(&Py<PyAny>),
    ) -> Option<(*const AtomicU64, bool)> {
        if let Ok(o) = v.cast_exact::<Object>() {
            let o = o.try_borrow().ok()?;
            return Some((o.mark(), o.edits_and_views(each)));
        }
        let a = v.cast_exact::<Array>().ok()?.try_borrow().ok()?;
        Some((a.mark(), a.edits_and_views(each)))
    }
    // Borrowed pointers: each view met is kept alive by the cache of a
    // view the caller holds (and a note by its view), and the walk runs no
    // Python code (type tests, borrow flags, and reference counts that
    // never reach zero), so under the interpreter lock (the module
    // declares `gil_used`) no other thread runs either, and none of them
    // is changed or freed meanwhile.
    //
    // Views to visit, with the position of their parent in `met`.
    let mut todo: SmallVec<[(*mut ffi::PyObject, usize); 8]> = SmallVec::new();
    let (mark, own) = (
        root.mark(),
        root.edits_and_views(&mut |c| todo.push((c.as_ptr(), 0))),
    );
    let era = ERA.load(Relaxed);
    if todo.is_empty() {
        mark.store(note(era, own), Relaxed);
        return own;
    }
    let mut met: SmallVec<[Met; 8]> = SmallVec::new();
    met.push(Met {
        mark: mark as *const AtomicU64,
        parent: 0,
        dirty: own,
    });
    // `todo` holds the children of `met[0]`; from here on, the children
    // of each view met are listed right after it is met.
    let mut next = 0;
    while next < todo.len() {
        let (p, parent) = todo[next];
        next += 1;
        let i = met.len();
        // SAFETY: `p` is a live object for the whole walk (see above).
        let child = unsafe { Borrowed::from_ptr(py, p) };
        let mut add = |c: &Py<PyAny>| todo.push((c.as_ptr(), i));
        match visit(child, &mut add) {
            Some((mark, own)) => met.push(Met {
                mark,
                parent,
                dirty: own,
            }),
            // A cached view being changed right now counts as dirty.
            None => met[parent].dirty = true,
        }
    }
    // Children come after their parents: one backward pass passes each
    // child's answer up.
    for i in (1..met.len()).rev() {
        if met[i].dirty {
            let parent = met[i].parent;
            met[parent].dirty = true;
        }
    }
    for m in &met {
        // SAFETY: each note is in a view met, alive for the walk (above).
        unsafe { &*m.mark }.store(note(era, m.dirty), Relaxed);
    }
    met[0].dirty
}

/// A view, as [`mark_dirty`] sees it.
pub(super) trait Marked {
    /// Where the walk notes its answer (see [`note`]).
    fn mark(&self) -> &AtomicU64;
    /// Whether the view holds edits of its own (it is Edited or patched);
    /// `each` is given every child view it caches.
    fn edits_and_views(&self, each: &mut impl FnMut(&Py<PyAny>)) -> bool;
}

impl Marked for Object {
    fn mark(&self) -> &AtomicU64 {
        &self.dirty_mark
    }

    fn edits_and_views(&self, each: &mut impl FnMut(&Py<PyAny>)) -> bool {
        match &self.state {
            ObjState::Lazy { views, patches, .. } => {
                views.for_each(each);
                !patches.is_empty()
            }
            ObjState::Edited(m) => {
                m.iter().for_each(|m| cached(&m.slot, each));
                true
            }
        }
    }
}

impl Marked for Array {
    fn mark(&self) -> &AtomicU64 {
        &self.dirty_mark
    }

    fn edits_and_views(&self, each: &mut impl FnMut(&Py<PyAny>)) -> bool {
        match &self.state {
            ArrState::Lazy { views } => {
                views.for_each(each);
                false
            }
            ArrState::Inserted(ins) => {
                ins.views.for_each(each);
                true
            }
            ArrState::Edited(s) => {
                s.iter().for_each(|slot| cached(slot, each));
                true
            }
        }
    }
}

/// Notes taken by [`mark_dirty`] are good until Python code may have run:
/// a writer that hands a value to the serializer (a `default` hook, a
/// property) starts a new era, and a note from an earlier one is not
/// trusted. Views start with note 0, from no era.
pub(super) static ERA: AtomicU64 = AtomicU64::new(1);

/// Python code may have run since the views were marked.
pub(super) fn new_era() {
    ERA.fetch_add(1, Relaxed);
}

/// A view's note: the era it was taken in, and the answer.
fn note(era: u64, dirty: bool) -> u64 {
    era << 1 | u64::from(dirty)
}

/// Whether a view has edits to write: its note when taken in this era,
/// else a fresh walk (which notes the views below it anew).
pub(super) fn dirty_now<'py>(py: Python<'py>, v: &impl Marked) -> bool {
    let note = v.mark().load(Relaxed);
    if note >> 1 == ERA.load(Relaxed) {
        return note & 1 == 1;
    }
    mark_dirty(py, v)
}
