//! Dropping views without recursing as deep as the document (see
//! [`release`]), and without attaching PyO3 from `tp_dealloc` (see
//! [`shed`]).

use super::{ArrState, Array, Members, ObjState, Object, Slot, ViewCache};
#[cfg(not(feature = "abi3"))]
use crate::python::share::Share;
#[cfg(not(feature = "abi3"))]
use pyo3::ffi;
use pyo3::prelude::*;
use smallvec::SmallVec;

/// The child objects a dropped view releases, kept on the stack for the
/// usual few.
type Orphans = SmallVec<[Py<PyAny>; 4]>;

/// What dropping a view needs of its type.
pub(super) trait Holder {
    /// Whether the view holds no Python objects for its children.
    fn holds_nothing(&self) -> bool;
    /// Whether the view's state owns nothing at all: Lazy, no cached view,
    /// no patch, and no heap memory left from earlier ones. Then dropping
    /// the view is dropping its share of the document (see `drop_bare`).
    #[cfg(not(feature = "abi3"))]
    fn is_bare(&self) -> bool;
    /// The cached views and the share of the document of a view whose
    /// state owns nothing else ([`Self::is_bare`] but for cached views kept
    /// in the cache's inline room: Lazy, no patch, no heap memory); `None`
    /// otherwise. See [`drop_quick`].
    #[cfg(not(feature = "abi3"))]
    fn quick_parts(&mut self) -> Option<(&mut ViewCache, &mut Share)>;
    /// Move every Python object the view holds for its children (cached
    /// views, new values) into `out`; the view is left empty.
    fn take_children(&mut self, out: &mut Orphans);
    /// Drop them in place.
    fn clear_children(&mut self);
    /// Release what a view holds (cached views; a patched object's keys
    /// and values; an array's inserted elements; an unfolded view's
    /// children) by plain decrefs where it lies, without moving it
    /// anywhere first, and leave the state Lazy and bare (see `drop_bare`).
    /// Every state is covered.
    ///
    /// # Safety
    ///
    /// The thread is attached (holds the GIL).
    #[cfg(not(feature = "abi3"))]
    unsafe fn decref_lazy(&mut self);
}

impl Holder for Object {
    fn holds_nothing(&self) -> bool {
        self.unedited().is_some_and(ViewCache::is_empty)
    }

    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    fn is_bare(&self) -> bool {
        match &self.state {
            ObjState::Lazy { views, patches, .. } => views.is_bare() && patches.is_bare(),
            ObjState::Edited(_) => false,
        }
    }

    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    fn quick_parts(&mut self) -> Option<(&mut ViewCache, &mut Share)> {
        match &mut self.state {
            ObjState::Lazy { views, patches, .. } if views.is_inline() && patches.is_bare() => {
                Some((views, &mut self.parsed))
            }
            _ => None,
        }
    }

    fn take_children(&mut self, out: &mut Orphans) {
        match &mut self.state {
            ObjState::Lazy { views, patches, .. } => {
                views.drain_into(out);
                // The keys too: a `Py` dropped here, in a `tp_dealloc`
                // that CPython calls with PyO3 not attached, would go to
                // PyO3's pool of deferred decrefs (a locked vector, emptied
                // by the next call into the module: ~200 instructions).
                for p in patches.drain() {
                    out.push(p.key.into_any());
                    out.extend(p.value);
                }
            }
            ObjState::Edited(m) => {
                for member in std::mem::take(m).list.into_iter().flatten() {
                    out.extend(member.slot.into_held());
                }
            }
        }
    }

    fn clear_children(&mut self) {
        self.state = ObjState::Edited(Members::default());
    }

    #[cfg(not(feature = "abi3"))]
    unsafe fn decref_lazy(&mut self) {
        match &mut self.state {
            // SAFETY: attached (the method's contract); each `into_ptr`
            // hands over the reference its `Py` owned, released once here.
            ObjState::Lazy { views, patches, .. } => unsafe {
                views.decref_all();
                for p in patches.drain() {
                    ffi::Py_DECREF(p.key.into_ptr());
                    if let Some(v) = p.value {
                        ffi::Py_DECREF(v.into_ptr());
                    }
                }
            },
            // Unfolded (a member added past the patch list, or deleted):
            // each member's value released in place, and the state left
            // Lazy and empty, so that what follows is the bare drop
            // (`drop_bare`: no `Python::attach`, no drop glue).
            ObjState::Edited(m) => {
                // SAFETY: attached (the method's contract); each
                // `into_ptr` hands over the reference its `Py` owned,
                // released once here (`take` leaves no member behind).
                // The object is being dropped: a finalizer a decref runs
                // cannot reach it.
                unsafe {
                    for member in std::mem::take(&mut m.list).into_iter().flatten() {
                        if let Some(v) = member.slot.into_held() {
                            ffi::Py_DECREF(v.into_ptr());
                        }
                    }
                }
                // (What the old state still owns is memory only: a key
                // index, freed here.)
                self.state = ObjState::Lazy {
                    views: ViewCache::default(),
                    distinct: None,
                    patches: Default::default(),
                };
            }
        }
    }
}

impl Holder for Array {
    fn holds_nothing(&self) -> bool {
        self.unedited().is_some_and(ViewCache::is_empty)
    }

    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    fn is_bare(&self) -> bool {
        match &self.state {
            ArrState::Lazy { views } => views.is_bare(),
            ArrState::Inserted(_) | ArrState::Edited(_) => false,
        }
    }

    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    fn quick_parts(&mut self) -> Option<(&mut ViewCache, &mut Share)> {
        match &mut self.state {
            ArrState::Lazy { views } if views.is_inline() => Some((views, &mut self.parsed)),
            _ => None,
        }
    }

    fn take_children(&mut self, out: &mut Orphans) {
        match &mut self.state {
            ArrState::Lazy { views } => views.drain_into(out),
            ArrState::Inserted(ins) => ins.drain_into(out),
            ArrState::Edited(s) => out.extend(s.drain(..).filter_map(Slot::into_held)),
        }
    }

    fn clear_children(&mut self) {
        self.state = ArrState::Edited(Vec::new());
    }

    #[cfg(not(feature = "abi3"))]
    unsafe fn decref_lazy(&mut self) {
        match &mut self.state {
            // SAFETY: attached (the method's contract).
            ArrState::Lazy { views } => unsafe { views.decref_all() },
            // Elements inserted (a patch's `add` into `messages`): the
            // views and the new elements are released in place too, and
            // the state left Lazy and empty, so that what follows is the
            // bare drop (`drop_bare`: no `Python::attach`, no drop glue).
            ArrState::Inserted(ins) => {
                // SAFETY: attached (the method's contract); each
                // `into_ptr` hands over the reference its `Py` owned,
                // released once here (`drain` leaves none behind). The
                // array is being dropped: a finalizer a decref runs cannot
                // reach it.
                unsafe {
                    ins.views.decref_all();
                    for (_, v) in ins.new.drain(..) {
                        ffi::Py_DECREF(v.into_ptr());
                    }
                }
                // (What the old state still owns is memory only: a spilled
                // cache or element list, freed here.)
                self.state = ArrState::Lazy {
                    views: ViewCache::default(),
                };
            }
            // Unfolded (an element set or removed): each slot's value
            // released in place, and the state left Lazy and empty, as
            // above.
            ArrState::Edited(slots) => {
                // SAFETY: as above; `drain` leaves no slot behind.
                unsafe {
                    for v in slots.drain(..).filter_map(Slot::into_held) {
                        ffi::Py_DECREF(v.into_ptr());
                    }
                }
                self.state = ArrState::Lazy {
                    views: ViewCache::default(),
                };
            }
        }
    }
}

/// Views being dropped, one inside the other. Views are dropped attached,
/// and with the GIL one thread at a time: one count serves every thread
/// (read and written without a thread-local lookup in the shared library,
/// nor an atomic read-modify-write). A thread whose finalizer releases the
/// GIL in the middle of a drop leaves its levels in the count, so another
/// thread may see more than its own nesting and switch to the loop of
/// [`release`] sooner, never later. Free-threaded builds count per thread.
#[cfg(not(Py_GIL_DISABLED))]
static DROPPING: Depth = Depth(std::sync::atomic::AtomicU32::new(0));

#[cfg(Py_GIL_DISABLED)]
thread_local! {
    /// Views being dropped on this thread, one inside the other.
    static DROPPING: Depth = const { Depth(std::sync::atomic::AtomicU32::new(0)) };
}

/// A count of nested drops, raised and lowered by plain loads and stores
/// (one thread at a time uses it: see [`DROPPING`]).
struct Depth(std::sync::atomic::AtomicU32);

impl Depth {
    #[inline(always)]
    fn get(&self) -> u32 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[inline(always)]
    fn add(&self, d: i32) {
        self.0.store(
            self.get().wrapping_add_signed(d),
            std::sync::atomic::Ordering::Relaxed,
        );
    }
}

/// Views nested deeper than this, being dropped, release their children in
/// a loop (see [`release`]).
const DROP_RECURSION_MAX: u32 = 32;

/// Release the children of a dropped view without recursing.
///
/// Dropping a view drops its cached child views, whose drops drop theirs: a
/// chain of views as deep as the document (`x = x["k"]` a thousand times)
/// recursed once per level in `tp_dealloc` and overflowed a small thread
/// stack (measured: ~310 bytes a level, so 1,023 levels crashed a 256 KiB
/// thread). CPython's own containers avoid this with the "trashcan". Here
/// the first [`DROP_RECURSION_MAX`] nested drops recurse as usual (cheap,
/// and all that a request's few views need); below that a view releases
/// its children itself, and each child that is a view nobody else holds
/// first gives up its own children to the same loop, so its drop has
/// nothing left to recurse into. Other values (a dict holding views) are
/// dropped as they are: CPython bounds their recursion, and a view inside
/// one starts a loop of its own.
fn release(py: Python<'_>, mut todo: Orphans) {
    while let Some(v) = todo.pop() {
        // A count of one: this loop holds the only reference, so nothing
        // can see the view emptied.
        if v.get_refcnt(py) == 1 {
            let v = v.bind(py);
            if let Ok(o) = v.cast_exact::<Object>() {
                if let Ok(mut o) = o.try_borrow_mut() {
                    o.take_children(&mut todo);
                }
            } else if let Ok(a) = v.cast_exact::<Array>() {
                if let Ok(mut a) = a.try_borrow_mut() {
                    a.take_children(&mut todo);
                }
            }
        }
        drop(v);
    }
}

/// Run `clear`, which drops a view's children, as one more nested drop;
/// false (and `clear` not run) when drops already nest
/// [`DROP_RECURSION_MAX`] deep on this thread.
#[inline(always)]
fn nested_drop(clear: impl FnOnce()) -> bool {
    /// Takes this drop's level out of the count however `clear` ends (a
    /// finalizer it runs may panic through it).
    struct Restore<'a>(&'a Depth);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            self.0.add(-1);
        }
    }
    let run = |count: &Depth| {
        if count.get() >= DROP_RECURSION_MAX {
            return false;
        }
        count.add(1);
        let _restore = Restore(count);
        clear();
        true
    };
    #[cfg(not(Py_GIL_DISABLED))]
    return run(&DROPPING);
    #[cfg(Py_GIL_DISABLED)]
    DROPPING.with(run)
}

/// Drop a view's children: in place while drops nest less than
/// [`DROP_RECURSION_MAX`] deep on this thread, else by [`release`].
fn drop_view(v: &mut impl Holder) {
    if v.holds_nothing() {
        return;
    }
    if !nested_drop(|| v.clear_children()) {
        let mut todo = Orphans::new();
        v.take_children(&mut todo);
        // SAFETY: a view is dropped with the interpreter attached: by its
        // `tp_dealloc`, or by the code of this module, which runs attached.
        release(unsafe { Python::assume_attached() }, todo);
    }
}

/// Release the Python objects a view holds for its children (cached
/// views, new values) by plain decrefs, for a `tp_dealloc` that CPython
/// calls attached.
///
/// PyO3 counts its own attachments in a thread-local; called straight from
/// CPython that count is zero, so a `Py` dropped there goes to PyO3's pool
/// of deferred decrefs unless the drop runs inside `Python::attach` (a
/// `PyGILState_Ensure` and `_Release`, thread-local reads, a check of the
/// pool: about 250 instructions). The children here are released with
/// `Py_DECREF` instead, as one more nested drop (their own `tp_dealloc`s
/// run inside it), so the view's drop usually has nothing left that needs
/// PyO3. When drops already nest [`DROP_RECURSION_MAX`] deep the children
/// stay, for the caller's `Python::attach` path and [`release`].
///
/// # Safety
///
/// The thread is attached (it holds the GIL), and `v` is being dropped.
#[cfg(not(feature = "abi3"))]
pub(super) unsafe fn shed(v: &mut impl Holder) {
    if v.holds_nothing() {
        return;
    }
    // Every state is released where it lies (`decref_lazy`: cached views,
    // a patched object's keys and values, inserted elements, an unfolded
    // view's members); when drops nest too deep the children stay, for the
    // caller's `Python::attach` path and [`release`].
    // SAFETY: attached (the caller's contract).
    nested_drop(|| unsafe { v.decref_lazy() });
}

/// Drop a lazy view the common way, if it can be: its cached views (kept
/// in the cache's inline room) released by plain decrefs as one more
/// nested drop (as [`shed`] does), then its share of the document counted
/// out when other shares remain (`Share::drop_if_others`). False when the
/// view holds more (patches, a spilled cache, edits), when drops already
/// nest [`DROP_RECURSION_MAX`] deep, or when its share is the document's
/// last: then the views it cached may be released already (its cache is
/// left empty) and the caller drops the rest as usual. The rest of the
/// value owns nothing once the cache is empty (as for [`drop_bare`]), so it
/// is left undropped.
///
/// # Safety
///
/// The thread is attached (it holds the GIL), and `v` is being dropped:
/// the caller never uses or drops it again when this returns true.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
pub(super) unsafe fn drop_quick(v: &mut impl Holder) -> bool {
    let Some((views, share)) = v.quick_parts() else {
        return false;
    };
    // SAFETY: attached (the function's contract); the cache is emptied
    // where it lies (`decref_all`), so no view is released twice.
    if !views.is_empty() && !nested_drop(|| unsafe { views.decref_all() }) {
        return false;
    }
    // SAFETY: the function's contract; the rest of the value owns nothing
    // (see above).
    unsafe { share.drop_if_others() }
}

/// Drop a view whose state owns nothing ([`Holder::is_bare`]): only its
/// share of the document (`parsed` finds it) is dropped, in place, and the rest of the value is left as it lies (it owns
/// nothing, so nothing leaks), which skips the drop glue of the states
/// (about 60 instructions a view). False, with nothing done, otherwise.
///
/// # Safety
///
/// `v` is being dropped: the caller never uses or drops it again when this
/// returns true. Dropping the share releases no Python object, or the
/// thread is attached as PyO3 counts it.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
pub(super) unsafe fn drop_bare<V: Holder>(
    v: &mut V,
    parsed: impl FnOnce(&mut V) -> &mut super::super::share::Share,
) -> bool {
    if !v.is_bare() {
        return false;
    }
    let share = parsed(v);
    // SAFETY: the share is dropped exactly once, here; the caller never
    // touches the value again (the function's contract), and the rest of
    // it owns nothing (`is_bare`: a Lazy state with an empty, unspilled
    // cache and patch list; the other fields are plain data), so leaving
    // it undropped frees and releases nothing less than dropping it would
    // (the views' own `Drop` does nothing for a view that holds nothing).
    unsafe { std::ptr::drop_in_place(share) };
    true
}

impl Drop for Object {
    fn drop(&mut self) {
        drop_view(self);
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        drop_view(self);
    }
}
