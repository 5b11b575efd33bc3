//! Lazy views with an edit overlay: `Object` (a `MutableMapping`) and
//! `Array` (a `MutableSequence`), `qjson.decode` and `qjson.materialize`.
//!
//! # Model
//!
//! A view is a cursor into a parsed document (it holds a share of the
//! `Arc<Parsed>`, so the input and index live as long as any view does)
//! plus a state:
//!
//! - **Lazy**: nothing was written to this container. Reads go to the index;
//!   the views of container children are cached by their byte offset, so
//!   `v["a"] is v["a"]`.
//! - **Edited**: the first write unfolds the container into slots, one per
//!   child (object members deduplicated, the first occurrence wins, as in
//!   reads). A slot is either *original* (cursor, ordinal among the
//!   original children, cached view) or *new* (any Python object). The
//!   unfold is O(children) and decodes only object keys; the untouched
//!   children stay lazy. The input bytes are never changed.
//!
//! # Writing (`dumps`)
//!
//! A view is *dirty* when it is Edited or patched, or one of its cached
//! child views is dirty; writing a view first works this out for every
//! view cached below it in one walk (`dirty`). A clean view is one copy of
//! its original bytes (the root view: the whole input, surrounding
//! whitespace included). A dirty view is written by the core edit engine
//! (`crate::edit`: splice into the original bytes, or member by member
//! with runs of untouched members copied at once, ranges of lazy
//! documents validated first); `write` is the Python host of that engine
//! and [`Sink`] is where the bytes go (`dumps` implements it). Nested
//! edits that only replace plain scalars skip the level-by-level write:
//! `write` finds their spans in one walk and splices the input once
//! (`write::write_flat`); for a root without patches of its own that walk
//! is also the dirty check (a tree it finds unedited is one copy), and
//! `dirty` walks only the trees it gives up on. Before any walk, a view
//! of a document never edited (`Input::ever_edited`, set by every editing
//! path before it changes anything) is one copy, whatever views are cached.
//!
//! # Depth
//!
//! Cached views can nest as deep as the document. Nothing here recurses
//! without a bound on the C stack: the dirty check walks with a list of
//! its own (`dirty`), the writers stop with an error when the thread's
//! stack runs low (`stack`), and a dropped view releases deep descendants
//! in a loop (`drop`).
//!
//! # Files
//!
//! `view.rs`: the types, reads and edits; `view/entry.rs`: raw CPython
//! entry points of the common reads; `view/assign.rs`: the raw entry point
//! of `Object[key] = value`; `view/alloc.rs`: making and freeing
//! view objects; `view/cache.rs`: cached child views; `view/patch.rs`: patches of lazy objects (the core's, over Python
//! keys); `view/edit.rs`: hooks for `qjson.patch` and snapshots;
//! `view/dirty.rs`: the dirty walk; `view/write.rs`: writing through the
//! core engine; `view/drop.rs`: dropping deep trees of views.

use super::convert;
use super::doc::{Doc, Parsed};
use super::errors::access_error;
use super::input::{key_utf8, str_utf8};
use super::share::Share;
use crate::doc::Cursor;
use crate::error::{AccessError, JsonType};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySlice, PyString, PyTuple};
use pyo3::PyTraverseError;

#[cfg(not(feature = "abi3"))]
pub(crate) mod alloc;
#[cfg(not(feature = "abi3"))]
mod assign;
mod cache;
mod dirty;
mod drop;
mod edit;
#[cfg(not(feature = "abi3"))]
mod entry;
mod inserted;
#[cfg(not(feature = "abi3"))]
mod iter;
mod patch;
mod write;

#[cfg(not(feature = "abi3"))]
pub(crate) use alloc::make;
#[cfg(not(feature = "abi3"))]
pub(crate) use assign::install as install_assign;
use cache::ViewCache;
use dirty::{dirty_now, mark_dirty, new_era};
pub(crate) use edit::{
    array_get, array_insert, array_len, array_remove, array_set, object_add_absent, object_delete,
    object_get, object_has, object_replace, object_set, pristine_twin, snapshot, Saved,
};
#[cfg(not(feature = "abi3"))]
pub(crate) use entry::install as install_entries;
use inserted::Inserted;
use patch::{KeyState, Patches};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
#[cfg(not(feature = "abi3"))]
pub(crate) use write::input_len;
pub(crate) use write::{is_view, write, Sink};

/// One child of an Edited container: an original child (its cursor,
/// ordinal and cached view) or a value set from Python (see `crate::edit`).
type Slot = crate::edit::Slot<Py<PyAny>>;

/// A member of an Edited object.
type Member = crate::edit::Member<Py<PyAny>>;

/// The members of an Edited object, in order (see `crate::edit::Members`).
type Members = crate::edit::Members<Py<PyAny>>;

/// (key, value cursor, offset of the key's quote, ordinal among all members).
type DistinctMember = (Box<str>, Cursor, u32, u32);

/// The value of a member of a Lazy object, as its patches leave it.
enum Live {
    /// The original value, at this cursor.
    Orig(Cursor),
    /// Set by a patch.
    Set(Py<PyAny>),
}

enum ObjState {
    Lazy {
        /// Views of container children, by byte offset.
        views: ViewCache,
        /// Number of distinct keys, once counted.
        distinct: Option<usize>,
        /// Edits (see `patch`).
        patches: Patches,
    },
    Edited(Members),
}

enum ArrState {
    Lazy {
        views: ViewCache,
    },
    /// Lazy, with elements inserted (only; see `inserted`).
    Inserted(Inserted),
    Edited(Vec<Slot>),
}

/// A JSON object: read lazily from the document, edits kept as an overlay.
#[pyclass(module = "qjson")]
pub struct Object {
    parsed: Share,
    at: Cursor,
    state: ObjState,
    /// What the last [`mark_dirty`] walk found, and when.
    dirty_mark: AtomicU64,
}

/// A JSON array: read lazily from the document, edits kept as an overlay.
#[pyclass(module = "qjson")]
pub struct Array {
    parsed: Share,
    at: Cursor,
    state: ArrState,
    /// What the last [`mark_dirty`] walk found, and when.
    dirty_mark: AtomicU64,
}

// ------------------------------------------------------------------ helpers

/// A new Python object holding the view `value` (the raw allocation of
/// `alloc` in non-`abi3` builds).
#[cfg(feature = "abi3")]
pub(crate) fn make<T>(py: Python<'_>, value: T) -> PyResult<Py<PyAny>>
where
    T: pyo3::PyClass + Into<pyo3::PyClassInitializer<T>>,
{
    Ok(Py::new(py, value)?.into_any())
}

fn err(py: Python<'_>, parsed: &Parsed, e: AccessError) -> PyErr {
    access_error(py, e, &parsed.input, "")
}

/// The Python value of child `c`; container views are cached in `views`.
///
/// One dispatch on the child's type: a container's view from the cache,
/// or made and cached (nothing is decoded); the commonest scalars straight
/// from the input ([`convert::quick`]); the rest through the general
/// decode, out of line. The code a read runs stays small: reads of small
/// documents are short enough that the instructions they bring into the
/// cache count as much as the ones they execute.
fn lazy_child(
    py: Python<'_>,
    parsed: &Arc<Parsed>,
    views: &mut ViewCache,
    c: Cursor,
) -> PyResult<Py<PyAny>> {
    let doc = parsed.doc();
    let object = match doc.type_of(c) {
        JsonType::Object => true,
        JsonType::Array => false,
        JsonType::String | JsonType::Number => match convert::quick(py, &doc, c) {
            Some(v) => return Ok(v),
            None => return convert::value(py, parsed, c),
        },
        JsonType::Bool | JsonType::Null => return convert::value(py, parsed, c),
    };
    if let Some(v) = views.get(c.start) {
        return Ok(v.clone_ref(py));
    }
    let v = if object {
        make(py, Object::new(Share::new(py, parsed), c))?
    } else {
        make(py, Array::new(Share::new(py, parsed), c))?
    };
    views.insert(c.start, v.clone_ref(py));
    Ok(v)
}

/// A new view of the container at `c` (`object`: an `Object`, else an
/// `Array`) over `parsed`, for reads that return one without caching it
/// (the raw `get` of `Doc` and `Cursor`). Out of line: one copy of both
/// allocations.
#[cfg(not(feature = "abi3"))]
#[inline(never)]
pub(crate) fn new_view(
    py: Python<'_>,
    parsed: &Arc<Parsed>,
    c: Cursor,
    object: bool,
) -> PyResult<Py<PyAny>> {
    if object {
        make(py, Object::new(Share::new(py, parsed), c))
    } else {
        make(py, Array::new(Share::new(py, parsed), c))
    }
}

/// The Python value of a slot; an original container's view is cached in it.
fn slot_value(py: Python<'_>, parsed: &Arc<Parsed>, slot: &mut Slot) -> PyResult<Py<PyAny>> {
    match slot {
        Slot::New(v) => Ok(v.clone_ref(py)),
        Slot::Orig { view: Some(v), .. } => Ok(v.clone_ref(py)),
        Slot::Orig { at, view, .. } => {
            let v = convert::value(py, parsed, *at)?;
            if matches!(
                parsed.doc().type_of(*at),
                JsonType::Object | JsonType::Array
            ) {
                *view = Some(v.clone_ref(py));
            }
            Ok(v)
        }
    }
}

/// Give `each` the view an original slot caches, if any.
fn cached(slot: &Slot, each: &mut impl FnMut(&Py<PyAny>)) {
    if let Slot::Orig { view: Some(v), .. } = slot {
        each(v);
    }
}

fn visit_slot(slot: &Slot, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
    match slot {
        Slot::New(v) | Slot::Orig { view: Some(v), .. } => visit.call(v),
        Slot::Orig { view: None, .. } => Ok(()),
    }
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

fn collect(values: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
    values.try_iter()?.map(|v| v.map(Bound::unbind)).collect()
}

// ------------------------------------------------------------------- Object

impl Object {
    pub(crate) fn new(parsed: Share, at: Cursor) -> Object {
        Object {
            parsed,
            at,
            state: ObjState::Lazy {
                views: ViewCache::default(),
                distinct: None,
                patches: Patches::default(),
            },
            dirty_mark: AtomicU64::new(0),
        }
    }

    /// The cached child views, when this view itself holds no edits (it
    /// is Lazy, without patches); `None` when it does.
    fn unedited(&self) -> Option<&ViewCache> {
        match &self.state {
            ObjState::Lazy { views, patches, .. } if patches.is_empty() => Some(views),
            _ => None,
        }
    }

    /// (key, value cursor, offset of the key's quote) of every distinct key
    /// in document order; a repeated key keeps its first value.
    fn distinct_members(&self, py: Python<'_>) -> PyResult<Vec<DistinctMember>> {
        let doc = self.parsed.doc();
        let base = doc.input().as_ptr() as usize;
        let e = |e| err(py, &self.parsed, e);
        let items = doc.distinct_items(self.at).map_err(e)?;
        let mut out = Vec::with_capacity(items.size_hint().0);
        for m in items {
            let (i, raw, c) = m.map_err(e)?;
            let key = doc.key_str(raw).map_err(e)?;
            let key_at = (raw.as_ptr() as usize - base - 1) as u32;
            out.push((Box::<str>::from(&*key), c, key_at, i));
        }
        Ok(out)
    }

    /// The Edited members, unfolding a Lazy object first.
    fn members_mut(&mut self, py: Python<'_>) -> PyResult<&mut Members> {
        self.parsed.input.mark_edited();
        if let ObjState::Lazy { views, patches, .. } = &mut self.state {
            // The state changes only once the unfolding succeeded (a lazy
            // document may hold a malformed member).
            let mut m = Members::unfold_with(&self.parsed.doc(), self.at, |at| {
                views.get(at.start).map(|v| v.clone_ref(py))
            })
            .map_err(|e| err(py, &self.parsed, e))?;
            apply(py, &mut m, std::mem::take(patches))?;
            self.state = ObjState::Edited(m);
        }
        match &mut self.state {
            ObjState::Edited(m) => Ok(m),
            ObjState::Lazy { .. } => unreachable!("unfolded above"),
        }
    }

    /// The members of a Lazy object as its patches leave them, in order,
    /// read without unfolding it (so a read changes nothing `dumps`
    /// writes): the distinct original members with each replacement put in
    /// place and each deletion left out, then the added keys, as the core
    /// writer walks them (`crate::edit::write_lazy_object`).
    fn live_members(&self, py: Python<'_>) -> PyResult<Vec<(Box<str>, Live)>> {
        let ObjState::Lazy { patches, .. } = &self.state else {
            unreachable!("only Lazy objects have patches")
        };
        let patches = patches.core();
        let members = self.distinct_members(py)?;
        let mut out = Vec::with_capacity(members.len());
        for (k, c, ..) in members {
            match patches.for_original(c.start) {
                None => out.push((k, Live::Orig(c))),
                Some(p) => {
                    if let Some(v) = &p.value {
                        out.push((k, Live::Set(v.clone_ref(py))));
                    }
                }
            }
        }
        for (k, v) in patches.added() {
            let k = Box::<str>::from(str_utf8(k.bind(py))?);
            out.push((k, Live::Set(v.clone_ref(py))));
        }
        Ok(out)
    }

    /// Whether edits go into patches (the object is lazy).
    fn patchable(&self) -> bool {
        matches!(self.state, ObjState::Lazy { .. })
    }

    /// The value of `key`, or `None` when absent (or not a str).
    fn lookup(&mut self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
        let Ok(key_str) = key.cast::<PyString>() else {
            return Ok(None);
        };
        let Some(key) = key_utf8(key_str)? else {
            return Ok(None);
        };
        let parsed = &self.parsed;
        if let ObjState::Lazy { patches, .. } = &self.state {
            match patches.state(py, key_str)? {
                KeyState::Set(v) => return Ok(Some(v.clone_ref(py))),
                KeyState::Deleted => return Ok(None),
                KeyState::Untouched => {}
            }
        }
        match &mut self.state {
            ObjState::Lazy { views, .. } => match parsed.doc().field(self.at, key.as_bytes()) {
                Some(c) => lazy_child(py, parsed, views, c).map(Some),
                None => Ok(None),
            },
            ObjState::Edited(m) => match m.find(key) {
                Some(pos) => {
                    let member = m.list[pos].as_mut().expect("indexed members are live");
                    slot_value(py, parsed, &mut member.slot).map(Some)
                }
                None => Ok(None),
            },
        }
    }

    fn has(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(key_str) = key.cast::<PyString>() else {
            return Ok(false);
        };
        let Some(key) = key_utf8(key_str)? else {
            return Ok(false);
        };
        if let ObjState::Lazy { patches, .. } = &self.state {
            match patches.state(py, key_str)? {
                KeyState::Set(_) => return Ok(true),
                KeyState::Deleted => return Ok(false),
                KeyState::Untouched => {}
            }
        }
        Ok(match &self.state {
            ObjState::Lazy { .. } => self.parsed.doc().field(self.at, key.as_bytes()).is_some(),
            ObjState::Edited(m) => m.find(key).is_some(),
        })
    }

    fn key_list(&mut self, py: Python<'_>) -> PyResult<Vec<Box<str>>> {
        Ok(match &self.state {
            ObjState::Lazy { .. } => self.live_members(py)?.into_iter().map(|(k, _)| k).collect(),
            ObjState::Edited(m) => m.list.iter().flatten().map(|m| m.key.clone()).collect(),
        })
    }

    /// (key, value) of every member, in order.
    fn pairs(&mut self, py: Python<'_>) -> PyResult<Vec<(Box<str>, Py<PyAny>)>> {
        let parsed = self.parsed.clone();
        if let ObjState::Lazy { .. } = self.state {
            let members = self.live_members(py)?;
            let ObjState::Lazy { views, .. } = &mut self.state else {
                unreachable!("checked above")
            };
            let mut out = Vec::with_capacity(members.len());
            for (k, m) in members {
                let v = match m {
                    Live::Orig(c) => lazy_child(py, &parsed, views, c)?,
                    Live::Set(v) => v,
                };
                out.push((k, v));
            }
            return Ok(out);
        }
        let m = self.members_mut(py)?;
        let mut out = Vec::with_capacity(m.live());
        for member in m.list.iter_mut().flatten() {
            let v = slot_value(py, &parsed, &mut member.slot)?;
            out.push((member.key.clone(), v));
        }
        Ok(out)
    }

    fn set(&mut self, py: Python<'_>, key: &Bound<'_, PyAny>, value: Py<PyAny>) -> PyResult<()> {
        let Ok(k) = key.cast::<PyString>() else {
            return Err(PyTypeError::new_err(format!(
                "qjson.Object keys must be str, not {}",
                type_name(key)
            )));
        };
        self.parsed.input.mark_edited();
        if self.patchable() {
            let (doc, at) = (self.parsed.doc(), self.at);
            let ObjState::Lazy { patches, .. } = &mut self.state else {
                unreachable!("patchable objects are lazy")
            };
            let ks = str_utf8(k)?;
            return patches.set(py, k, value, |t| t.field(&doc, at, ks.as_bytes()));
        }
        let k = str_utf8(k)?;
        self.members_mut(py)?.set(k, value);
        Ok(())
    }

    /// Remove `key` (`None` when absent); its value is not decoded.
    fn take(&mut self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Member>> {
        let Ok(k) = key.cast::<PyString>() else {
            return Ok(None);
        };
        let Some(k) = key_utf8(k)? else {
            return Ok(None);
        };
        if !self.has(py, key)? {
            return Ok(None);
        }
        Ok(self.members_mut(py)?.remove(k))
    }

    /// Delete `key` (false when absent) without decoding its value.
    ///
    /// Deleting an absent key changes nothing, so the document is marked
    /// edited (`Input::mark_edited`) only when a member goes: a merge
    /// patch's `null` for a key the document lacks (`{"stream": null}`)
    /// leaves a document never edited one copy of its input at `dumps`.
    /// The lookup may leave an empty patch list behind (its member table
    /// built): a view with no patches reads and writes as made.
    fn delete(&mut self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(k) = key.cast::<PyString>() else {
            return Ok(false);
        };
        if self.patchable() {
            let (doc, at) = (self.parsed.doc(), self.at);
            let ObjState::Lazy { patches, .. } = &mut self.state else {
                unreachable!("patchable objects are lazy")
            };
            let Some(ks) = key_utf8(k)? else {
                return Ok(false);
            };
            let gone = patches.delete(py, k, |t| t.field(&doc, at, ks.as_bytes()))?;
            if gone {
                // Marked before anything reads the patch: no Python code
                // ran since it was pushed (the key compare is `str`'s own).
                self.parsed.input.mark_edited();
            }
            return Ok(gone);
        }
        // An unfolded object: its document was marked when it unfolded.
        Ok(self.take(py, key)?.is_some())
    }
}

/// Apply `patches` (in order) to the unfolded `members`.
fn apply(py: Python<'_>, m: &mut Members, patches: Patches) -> PyResult<()> {
    let mut patches = patches;
    for p in patches.drain() {
        let key = str_utf8(p.key.bind(py))?;
        match p.value {
            None => {
                m.remove(key);
            }
            Some(v) => m.set(key, v),
        }
    }
    Ok(())
}

#[pymethods]
impl Object {
    fn __getitem__(&mut self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        match self.lookup(py, key)? {
            Some(v) => Ok(v),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    #[pyo3(signature = (key, default = None))]
    fn get(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match self.lookup(py, key)? {
            Some(v) => Ok(v),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.has(py, key)
    }

    fn __len__(&mut self, py: Python<'_>) -> PyResult<usize> {
        let n = match &self.state {
            ObjState::Edited(m) => return Ok(m.live()),
            ObjState::Lazy {
                distinct: Some(n), ..
            } => *n,
            ObjState::Lazy { .. } => self.distinct_members(py)?.len(),
        };
        let ObjState::Lazy {
            distinct, patches, ..
        } = &mut self.state
        else {
            unreachable!("matched above")
        };
        *distinct = Some(n);
        Ok(n.saturating_add_signed(patches.len_delta()))
    }

    fn __iter__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.keys(py)?.into_any().try_iter().map(Bound::into_any)
    }

    fn keys<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let keys: Vec<_> = self
            .key_list(py)?
            .iter()
            .map(|k| PyString::new(py, k))
            .collect();
        PyList::new(py, keys)
    }

    fn values<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let values: Vec<_> = self.pairs(py)?.into_iter().map(|(_, v)| v).collect();
        PyList::new(py, values)
    }

    fn items<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut out = Vec::new();
        for (k, v) in self.pairs(py)? {
            out.push(PyTuple::new(
                py,
                [PyString::new(py, &k).into_any().unbind(), v],
            )?);
        }
        PyList::new(py, out)
    }

    fn __setitem__(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: Py<PyAny>,
    ) -> PyResult<()> {
        self.set(py, key, value)
    }

    fn __delitem__(&mut self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        match self.delete(py, key)? {
            true => Ok(()),
            false => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    /// Remove `key` and return its value; `default` (or KeyError) when absent.
    #[pyo3(signature = (key, /, *default))]
    fn pop(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        if default.len() > 1 {
            return Err(PyTypeError::new_err(format!(
                "pop expected at most 2 arguments, got {}",
                default.len() + 1
            )));
        }
        match self.take(py, key)? {
            Some(mut member) => slot_value(py, &self.parsed.clone(), &mut member.slot),
            None if default.len() == 1 => Ok(default.get_item(0)?.unbind()),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    /// Remove and return the last (key, value) pair.
    fn popitem<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let parsed = self.parsed.clone();
        let m = self.members_mut(py)?;
        let Some(key) = m.list.iter().rev().flatten().next().map(|m| m.key.clone()) else {
            return Err(PyKeyError::new_err("popitem(): qjson.Object is empty"));
        };
        let mut member = m.remove(&key).expect("a live member");
        let v = slot_value(py, &parsed, &mut member.slot)?;
        PyTuple::new(py, [PyString::new(py, &key).into_any().unbind(), v])
    }

    fn clear(&mut self) {
        self.parsed.input.mark_edited();
        self.state = ObjState::Edited(Members::default());
    }

    /// `update(other=(), **kwargs)`, as `dict.update`.
    #[pyo3(signature = (other = None, /, **kwargs))]
    fn update(
        slf: &Bound<'_, Self>,
        other: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let py = slf.py();
        let mut pairs: Vec<(Bound<'_, PyAny>, Py<PyAny>)> = Vec::new();
        if let Some(other) = other {
            if other.hasattr("keys")? {
                for k in other.call_method0("keys")?.try_iter()? {
                    let k = k?;
                    let v = other.get_item(&k)?.unbind();
                    pairs.push((k, v));
                }
            } else {
                for item in other.try_iter()? {
                    let (k, v): (Bound<'_, PyAny>, Py<PyAny>) = item?.extract()?;
                    pairs.push((k, v));
                }
            }
        }
        if let Some(kw) = kwargs {
            for (k, v) in kw.iter() {
                pairs.push((k, v.unbind()));
            }
        }
        let mut me = slf.try_borrow_mut()?;
        for (k, v) in pairs {
            me.set(py, &k, v)?;
        }
        Ok(())
    }

    /// `self[key]` if present, else set it to `default` and return that.
    #[pyo3(signature = (key, default = None))]
    fn setdefault(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if let Some(v) = self.lookup(py, key)? {
            return Ok(v);
        }
        let v = default.unwrap_or_else(|| py.None());
        self.set(py, key, v.clone_ref(py))?;
        Ok(v)
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = slf.py();
        let mine = materialize(py, slf.as_any())?;
        mine.eq(plain_other(py, other)?)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let mine = materialize(slf.py(), slf.as_any())?;
        Ok(format!("qjson.Object({})", mine.repr()?))
    }

    /// The original bytes of this object (edits are not included).
    fn raw<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, self.parsed.doc().raw(self.at))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        match &self.state {
            ObjState::Lazy { views, patches, .. } => {
                for v in views.values() {
                    visit.call(v)?;
                }
                for p in patches.core().iter() {
                    visit.call(&p.key)?;
                    if let Some(v) = &p.value {
                        visit.call(v)?;
                    }
                }
            }
            ObjState::Edited(m) => {
                for member in m.list.iter().flatten() {
                    visit_slot(&member.slot, &visit)?;
                }
            }
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.parsed.input.mark_edited();
        self.state = ObjState::Edited(Members::default());
    }
}

// -------------------------------------------------------------------- Array

impl Array {
    pub(crate) fn new(parsed: Share, at: Cursor) -> Array {
        Array {
            parsed,
            at,
            state: ArrState::Lazy {
                views: ViewCache::default(),
            },
            dirty_mark: AtomicU64::new(0),
        }
    }

    /// As [`Object::unedited`].
    fn unedited(&self) -> Option<&ViewCache> {
        match &self.state {
            ArrState::Lazy { views } => Some(views),
            ArrState::Inserted(_) | ArrState::Edited(_) => None,
        }
    }

    fn length(&self) -> usize {
        match &self.state {
            ArrState::Lazy { .. } => self.parsed.doc().len(self.at).unwrap_or(0),
            ArrState::Inserted(ins) => self.parsed.doc().len(self.at).unwrap_or(0) + ins.new.len(),
            ArrState::Edited(s) => s.len(),
        }
    }

    /// `i` as a position in `0..len`, negative counting from the end.
    fn position(&self, i: isize) -> PyResult<usize> {
        let n = self.length() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(PyIndexError::new_err("qjson.Array index out of range"));
        }
        Ok(j as usize)
    }

    fn item(&mut self, py: Python<'_>, i: usize) -> PyResult<Py<PyAny>> {
        if let ArrState::Inserted(_) = self.state {
            self.slots(py)?;
        }
        let parsed = &self.parsed;
        match &mut self.state {
            ArrState::Lazy { views } => match parsed.doc().element(self.at, i as i64) {
                Some(c) => lazy_child(py, parsed, views, c),
                None => Err(PyIndexError::new_err("qjson.Array index out of range")),
            },
            ArrState::Edited(s) => slot_value(py, parsed, &mut s[i]),
            ArrState::Inserted(_) => unreachable!("unfolded above"),
        }
    }

    fn all(&mut self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        if let ArrState::Inserted(_) = self.state {
            self.slots(py)?;
        }
        let parsed = &self.parsed;
        match &mut self.state {
            ArrState::Lazy { views } => {
                let items = parsed
                    .doc()
                    .array_items(self.at)
                    .map_err(|e| err(py, parsed, e))?;
                items.map(|c| lazy_child(py, parsed, views, c)).collect()
            }
            ArrState::Edited(s) => s.iter_mut().map(|s| slot_value(py, parsed, s)).collect(),
            ArrState::Inserted(_) => unreachable!("unfolded above"),
        }
    }

    /// The Edited slots, unfolding a Lazy array first.
    fn slots(&mut self, py: Python<'_>) -> PyResult<&mut Vec<Slot>> {
        self.parsed.input.mark_edited();
        if let ArrState::Lazy { views } = &mut self.state {
            // The cached views are taken only once the items are known: a
            // lazy document may hold a malformed array, and the views
            // (with their edits) must stay cached when that fails.
            let items = self
                .parsed
                .doc()
                .array_items(self.at)
                .map_err(|e| err(py, &self.parsed, e))?;
            let mut views = std::mem::take(views);
            let slots = items
                .enumerate()
                .map(|(i, at)| Slot::Orig {
                    at,
                    i: i as u32,
                    view: views.remove(at.start),
                })
                .collect();
            self.state = ArrState::Edited(slots);
        }
        if let ArrState::Inserted(ins) = &mut self.state {
            let slots = ins
                .unfold(&self.parsed.doc(), self.at)
                .map_err(|e| err(py, &self.parsed, e))?;
            self.state = ArrState::Edited(slots);
        }
        match &mut self.state {
            ArrState::Edited(s) => Ok(s),
            ArrState::Lazy { .. } | ArrState::Inserted(_) => unreachable!("unfolded above"),
        }
    }

    /// Insert `value` at position `i` (`i <= len`): kept without unfolding
    /// a lazy array of a strict document (see `inserted`), else into the
    /// slots.
    fn insert_at(&mut self, py: Python<'_>, i: usize, value: Py<PyAny>) -> PyResult<()> {
        self.parsed.input.mark_edited();
        if let ArrState::Lazy { views } = &mut self.state {
            if !self.parsed.doc().index().is_lazy() {
                self.state = ArrState::Inserted(Inserted::new(std::mem::take(views)));
            }
        }
        match &mut self.state {
            ArrState::Inserted(ins) => ins.insert(i, value),
            _ => self.slots(py)?.insert(i, Slot::New(value)),
        }
        Ok(())
    }

    fn find(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        for (i, v) in self.all(py)?.into_iter().enumerate() {
            if v.bind(py).eq(value)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }
}

fn index_of(index: &Bound<'_, PyAny>) -> PyResult<isize> {
    index.extract::<isize>().map_err(|e| {
        // An integer beyond the index range is out of range, as for a list.
        if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(index.py()) {
            return PyIndexError::new_err(format!(
                "cannot fit '{}' into an index-sized integer",
                type_name(index)
            ));
        }
        PyTypeError::new_err(format!(
            "qjson.Array indices must be integers or slices, not {}",
            type_name(index)
        ))
    })
}

#[pymethods]
impl Array {
    fn __getitem__(&mut self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = index.cast::<PySlice>() {
            let ix = slice.indices(self.length() as isize)?;
            let mut out = Vec::with_capacity(ix.slicelength);
            let mut j = ix.start;
            for _ in 0..ix.slicelength {
                out.push(self.item(py, j as usize)?);
                j += ix.step;
            }
            return Ok(PyList::new(py, out)?.into_any().unbind());
        }
        let i = self.position(index_of(index)?)?;
        self.item(py, i)
    }

    fn __setitem__(
        slf: &Bound<'_, Self>,
        index: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = slf.py();
        if let Ok(slice) = index.cast::<PySlice>() {
            let values = collect(value)?;
            let mut me = slf.try_borrow_mut()?;
            let ix = slice.indices(me.length() as isize)?;
            let slots = me.slots(py)?;
            if ix.step == 1 {
                let start = ix.start as usize;
                let stop = (ix.stop.max(ix.start)) as usize;
                slots.splice(start..stop, values.into_iter().map(Slot::New));
                return Ok(());
            }
            if values.len() != ix.slicelength {
                return Err(PyValueError::new_err(format!(
                    "attempt to assign sequence of size {} to extended slice of size {}",
                    values.len(),
                    ix.slicelength
                )));
            }
            let mut j = ix.start;
            for v in values {
                slots[j as usize] = Slot::New(v);
                j += ix.step;
            }
            return Ok(());
        }
        let mut me = slf.try_borrow_mut()?;
        let i = me.position(index_of(index)?)?;
        me.slots(py)?[i] = Slot::New(value.clone().unbind());
        Ok(())
    }

    fn __delitem__(&mut self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(slice) = index.cast::<PySlice>() {
            let ix = slice.indices(self.length() as isize)?;
            let mut doomed: Vec<usize> = (0..ix.slicelength)
                .map(|k| (ix.start + k as isize * ix.step) as usize)
                .collect();
            doomed.sort_unstable();
            let slots = self.slots(py)?;
            if ix.step == 1 && !doomed.is_empty() {
                slots.drain(doomed[0]..=doomed[doomed.len() - 1]);
            } else {
                for &j in doomed.iter().rev() {
                    slots.remove(j);
                }
            }
            return Ok(());
        }
        let i = self.position(index_of(index)?)?;
        self.slots(py)?.remove(i);
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.length()
    }

    fn __iter__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, self.all(py)?)?
            .into_any()
            .try_iter()
            .map(Bound::into_any)
    }

    fn __reversed__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut all = self.all(py)?;
        all.reverse();
        PyList::new(py, all)?
            .into_any()
            .try_iter()
            .map(Bound::into_any)
    }

    fn __contains__(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.find(py, value)?.is_some())
    }

    /// The first position of `value` in `[start, stop)`; ValueError when absent.
    #[pyo3(signature = (value, start = 0, stop = None))]
    fn index(
        &mut self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        start: isize,
        stop: Option<isize>,
    ) -> PyResult<usize> {
        let n = self.length() as isize;
        let clamp = |i: isize| if i < 0 { (i + n).max(0) } else { i.min(n) };
        let (a, b) = (clamp(start), clamp(stop.unwrap_or(n)));
        for i in a..b {
            if self.item(py, i as usize)?.bind(py).eq(value)? {
                return Ok(i as usize);
            }
        }
        Err(PyValueError::new_err("value is not in the qjson.Array"))
    }

    fn count(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        let mut n = 0;
        for v in self.all(py)? {
            if v.bind(py).eq(value)? {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Insert `value` before position `index` (clamped, as `list.insert`).
    fn insert(&mut self, py: Python<'_>, index: isize, value: Py<PyAny>) -> PyResult<()> {
        let n = self.length() as isize;
        let i = if index < 0 {
            (index + n).max(0)
        } else {
            index.min(n)
        };
        self.insert_at(py, i as usize, value)
    }

    fn append(&mut self, py: Python<'_>, value: Py<PyAny>) -> PyResult<()> {
        let n = self.length();
        self.insert_at(py, n, value)
    }

    fn extend(slf: &Bound<'_, Self>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let values = collect(values)?;
        let mut me = slf.try_borrow_mut()?;
        for v in values {
            let n = me.length();
            me.insert_at(slf.py(), n, v)?;
        }
        Ok(())
    }

    fn __iadd__(slf: &Bound<'_, Self>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        Array::extend(slf, values)
    }

    /// Remove and return the item at `index` (default: the last).
    #[pyo3(signature = (index = -1))]
    fn pop(&mut self, py: Python<'_>, index: isize) -> PyResult<Py<PyAny>> {
        if self.length() == 0 {
            return Err(PyIndexError::new_err("pop from empty qjson.Array"));
        }
        let i = self.position(index)?;
        let v = self.item(py, i)?;
        self.slots(py)?.remove(i);
        Ok(v)
    }

    /// Remove the first item equal to `value`; ValueError when absent.
    fn remove(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        match self.find(py, value)? {
            Some(i) => {
                self.slots(py)?.remove(i);
                Ok(())
            }
            None => Err(PyValueError::new_err(
                "qjson.Array.remove(x): x not in array",
            )),
        }
    }

    fn reverse(&mut self, py: Python<'_>) -> PyResult<()> {
        self.slots(py)?.reverse();
        Ok(())
    }

    fn clear(&mut self) {
        self.parsed.input.mark_edited();
        self.state = ArrState::Edited(Vec::new());
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = slf.py();
        let mine = materialize(py, slf.as_any())?;
        mine.eq(plain_other(py, other)?)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let mine = materialize(slf.py(), slf.as_any())?;
        Ok(format!("qjson.Array({})", mine.repr()?))
    }

    /// The original bytes of this array (edits are not included).
    fn raw<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, self.parsed.doc().raw(self.at))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        match &self.state {
            ArrState::Lazy { views } => {
                for v in views.values() {
                    visit.call(v)?;
                }
            }
            ArrState::Inserted(ins) => {
                for v in ins.held() {
                    visit.call(v)?;
                }
            }
            ArrState::Edited(s) => {
                for slot in s {
                    visit_slot(slot, &visit)?;
                }
            }
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.parsed.input.mark_edited();
        self.state = ArrState::Edited(Vec::new());
    }
}

// ------------------------------------------------------ decode, materialize

/// `qjson.decode(data)`: the lazy view (or scalar) of a strictly validated document.
#[pyfunction]
#[pyo3(signature = (data, *, max_depth = 1024))]
pub(crate) fn decode(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    max_depth: usize,
) -> PyResult<Py<PyAny>> {
    let doc = super::doc::parse(py, data, false, max_depth)?;
    convert::value(py, &doc.parsed, doc.parsed.doc().root())
}

/// Whether any view of the document of `obj` (a `Doc`, an `Object` or an
/// `Array`) was ever edited (`Input::ever_edited`), for tests: a document
/// never edited is dumped as one copy of its input, with no walk. `None`
/// for anything else.
#[pyfunction]
pub(crate) fn _ever_edited(obj: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
    if let Ok(o) = obj.cast_exact::<Object>() {
        return Ok(Some(o.try_borrow()?.parsed.input.ever_edited()));
    }
    if let Ok(a) = obj.cast_exact::<Array>() {
        return Ok(Some(a.try_borrow()?.parsed.input.ever_edited()));
    }
    if let Ok(d) = obj.cast_exact::<super::doc::Doc>() {
        return Ok(Some(d.get().parsed.input.ever_edited()));
    }
    Ok(None)
}

/// From this depth on, `materialize` checks for cycles.
const CYCLE_CHECK_DEPTH: usize = 32;
/// `materialize` refuses to nest deeper than this through overlays.
const MAX_DEPTH: usize = 4096;

/// Plain Python objects for a view, with its overlay applied; plain dicts
/// and lists (exact types) are copied with their values converted; other
/// values are returned as they are.
struct Plain<'py> {
    py: Python<'py>,
    open: Vec<*mut ffi::PyObject>,
}

impl<'py> Plain<'py> {
    fn enter(&mut self, p: *mut ffi::PyObject) -> PyResult<()> {
        if self.open.len() >= CYCLE_CHECK_DEPTH {
            if self.open.contains(&p) {
                return Err(PyValueError::new_err("Circular reference detected"));
            }
            if self.open.len() >= MAX_DEPTH {
                return Err(PyValueError::new_err("Maximum nesting depth exceeded"));
            }
            if super::stack::low() {
                return Err(PyValueError::new_err(super::stack::TOO_DEEP));
            }
        }
        self.open.push(p);
        Ok(())
    }

    /// A child of a view: its cached view if it has one, else from the index.
    fn child(
        &mut self,
        parsed: &Parsed,
        at: Cursor,
        view: Option<&Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match view {
            Some(v) => self.value(v.bind(self.py)),
            None => Ok(convert::materialize(self.py, parsed, at)?.into_bound(self.py)),
        }
    }

    fn value(&mut self, v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        if let Ok(o) = v.cast_exact::<Object>() {
            let me = o.try_borrow()?;
            if let ObjState::Lazy { views, patches, .. } = &me.state {
                if views.is_empty() && patches.is_empty() {
                    return Ok(convert::materialize(py, &me.parsed, me.at)?.into_bound(py));
                }
            }
            self.enter(v.as_ptr())?;
            let dict = PyDict::new(py);
            match &me.state {
                ObjState::Lazy { views, .. } => {
                    for (k, m) in me.live_members(py)? {
                        let child = match m {
                            Live::Orig(c) => self.child(&me.parsed, c, views.get(c.start))?,
                            Live::Set(n) => self.value(n.bind(py))?,
                        };
                        dict.set_item(PyString::new(py, &k), child)?;
                    }
                }
                ObjState::Edited(m) => {
                    for member in m.list.iter().flatten() {
                        let child = match &member.slot {
                            Slot::Orig { at, view, .. } => {
                                self.child(&me.parsed, *at, view.as_ref())?
                            }
                            Slot::New(n) => self.value(n.bind(py))?,
                        };
                        dict.set_item(PyString::new(py, &member.key), child)?;
                    }
                }
            }
            self.open.pop();
            return Ok(dict.into_any());
        }
        if let Ok(a) = v.cast_exact::<Array>() {
            let me = a.try_borrow()?;
            let list = PyList::empty(py);
            match &me.state {
                ArrState::Lazy { views } if views.is_empty() => {
                    return Ok(convert::materialize(py, &me.parsed, me.at)?.into_bound(py));
                }
                ArrState::Lazy { .. } | ArrState::Inserted(_) => {
                    // A lazy array is the inserted case with nothing inserted.
                    let (views, inserted) = match &me.state {
                        ArrState::Inserted(ins) => (&ins.views, &ins.new[..]),
                        ArrState::Lazy { views } => (views, &[][..]),
                        ArrState::Edited(_) => unreachable!("matched above"),
                    };
                    self.enter(v.as_ptr())?;
                    let items = me
                        .parsed
                        .doc()
                        .array_items(me.at)
                        .map_err(|e| err(py, &me.parsed, e))?;
                    let mut new = inserted.iter().peekable();
                    for (i, c) in items.enumerate() {
                        while let Some((_, n)) = new.next_if(|&&(b, _)| b as usize <= i) {
                            list.append(self.value(n.bind(py))?)?;
                        }
                        list.append(self.child(&me.parsed, c, views.get(c.start))?)?;
                    }
                    for (_, n) in new {
                        list.append(self.value(n.bind(py))?)?;
                    }
                }
                ArrState::Edited(s) => {
                    self.enter(v.as_ptr())?;
                    for slot in s {
                        list.append(match slot {
                            Slot::Orig { at, view, .. } => {
                                self.child(&me.parsed, *at, view.as_ref())?
                            }
                            Slot::New(n) => self.value(n.bind(py))?,
                        })?;
                    }
                }
            }
            self.open.pop();
            return Ok(list.into_any());
        }
        if let Ok(d) = v.cast_exact::<Doc>() {
            let d = d.get();
            if let Some(root) = d.root_view() {
                return self.value(&root.bind(py).clone());
            }
            let root = d.parsed.doc().root();
            return Ok(convert::materialize(py, &d.parsed, root)?.into_bound(py));
        }
        if v.is_exact_instance_of::<PyDict>() {
            self.enter(v.as_ptr())?;
            let dict = PyDict::new(py);
            for (k, val) in v.cast::<PyDict>()?.iter() {
                dict.set_item(k, self.value(&val)?)?;
            }
            self.open.pop();
            return Ok(dict.into_any());
        }
        if v.is_exact_instance_of::<PyList>() {
            self.enter(v.as_ptr())?;
            let list = PyList::empty(py);
            for val in v.cast::<PyList>()?.iter() {
                list.append(self.value(&val)?)?;
            }
            self.open.pop();
            return Ok(list.into_any());
        }
        Ok(v.clone())
    }
}

/// `other` for an equality test: views materialized, anything else as is.
fn plain_other<'py>(py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if other.is_instance_of::<Object>() || other.is_instance_of::<Array>() {
        return materialize(py, other);
    }
    Ok(other.clone())
}

/// `qjson.materialize(view)`: plain dicts and lists, edits applied (other
/// values are returned as they are).
#[pyfunction]
pub(crate) fn materialize<'py>(
    py: Python<'py>,
    view: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    Plain {
        py,
        open: Vec::new(),
    }
    .value(view)
}
