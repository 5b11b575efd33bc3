//! `qjson.loads` and `qjson.validate`.
//!
//! # Algorithm
//!
//! Both accept and reject exactly what `parse` ([`Index::build`]) does, and
//! report the same error offsets. `validate` stops there. `loads` then
//! makes one left-to-right pass over an index and builds the Python objects
//! directly, with no intermediate tree.
//!
//! The index is, when the CPU has a token scan (AVX-512, AVX2), the token
//! index of `validate`'s fast path (`index/tokens.rs`: stage 1 also marks
//! where each number and literal starts, and the walk records each
//! container's child count); on any error, or nesting deeper than that
//! walk's stack, `loads` builds the exact structural index instead (which
//! also finds the error and its offset). The builder reads either:
//!
//! - in the token index every value is one token: a string, object or
//!   array by its first byte, else a scalar (number, `true`, `false`,
//!   `null`); in the structural index, a value starting at byte `q` whose
//!   first structural candidate is `s[k]` is a scalar when `q < s[k]`,
//!   else a string, object or array by the byte at `s[k]`;
//! - containers are counted in document order, so the `ord`-th opener finds
//!   its child count in the container table: lists are allocated at their
//!   final size and filled in place;
//! - open containers live on an explicit stack (no recursion, so any
//!   `max_depth` is safe); a finished value is stored into the container on
//!   top, and the structural after it is a `,` (another child follows) or the
//!   closer (pop);
//! - object members go through `PyDict_SetItem` (or, for a key whose `str`
//!   hash is known, as every cached key's is, `_PyDict_SetItem_KnownHash`
//!   on version-specific builds before 3.13), so a repeated key keeps its
//!   first position and its last value, as `json.loads` does;
//! - keys of up to [`CACHE_KEY_MAX`] bytes go through a process-wide cache
//!   of [`CACHE_SLOTS`] `str` objects (direct-mapped on a hash of the raw
//!   key bytes), as orjson does: a repeated key costs no allocation, and its
//!   `str` hash is already computed when the dict needs it;
//! - strings without a backslash are handed to `PyUnicode_FromStringAndSize`
//!   as they are; others are unescaped (plain runs copied 8 bytes a step,
//!   see [`unescape`]) into a scratch buffer kept across calls first.
//!
//! - documents with at least [`GC_PAUSE_MIN`] containers are built with the
//!   cyclic garbage collector paused (when it was enabled): collections our
//!   own allocations would trigger can free nothing, but each would walk
//!   the half-built tree again.
//!
//! Everything the walk reads was validated, so it does not re-check the
//! grammar; the only failures left are Python's (out of memory), after which
//! every object built so far is released.

use super::convert::big_int;
use super::errors::decode_error;
use super::input::Input;
use crate::decode::number::{parse_number_at, plain_decimal, plain_long_decimal};
use crate::decode::Number;
use crate::index::eager::{literal_token, plain_fraction};
use crate::index::{Container, Index, Options};
use crate::lex::{skip_ws, string_close};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::cell::Cell;
use std::sync::Mutex;

/// Inputs at least this large are validated with the GIL released.
const DETACH_MIN: usize = 64 * 1024;
/// Documents with at least this many containers build with the cyclic
/// collector paused.
const GC_PAUSE_MIN: usize = 1024;
/// Keys up to this many bytes (raw, as in the input) are cached (a slot,
/// with its key, then fills one 64-byte cache line).
const CACHE_KEY_MAX: usize = 48;
/// Number of cache slots (a power of two).
const CACHE_SLOTS: usize = 2048;

/// Validate `data` strictly and build its index; also stage 1's escape
/// offsets. With `check_scalars` false, numbers and literals are left to
/// the caller (see [`Index::build_unchecked_scalars`]); any error is then
/// recomputed by a strict build, so it is exactly the one `validate`
/// reports.
fn index(
    py: Python<'_>,
    input: &Input,
    max_depth: usize,
    check_scalars: bool,
) -> PyResult<(Index, Vec<u32>)> {
    let opts = Options {
        lazy: false,
        max_depth,
    };
    let bytes = input.bytes();
    let build = || {
        if check_scalars {
            Index::build_with_escapes(bytes, &opts)
        } else {
            Index::build_unchecked_scalars(bytes, max_depth)
        }
    };
    let built = if bytes.len() >= DETACH_MIN {
        py.detach(build)
    } else {
        build()
    };
    match built {
        Ok(b) => Ok(b),
        Err(_) if !check_scalars => index(py, input, max_depth, true),
        Err(e) => Err(decode_error(py, e, input)),
    }
}

/// Deserialize JSON text to Python objects (dict, list, str, int, float,
/// bool, None), like `json.loads`.
#[pyfunction]
#[pyo3(signature = (data, *, max_depth = 1024))]
pub(crate) fn loads(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    max_depth: usize,
) -> PyResult<Py<PyAny>> {
    let input = Input::new(data)?;
    let bytes = input.bytes();
    // First the token index (faster to build; `None` on any error, or
    // without a token scan on this CPU), else the exact path. Either way
    // stage 2 leaves the numbers and literals to the builder, which checks
    // each one as it parses it (one pass instead of two).
    let fast = || crate::index::eager::for_loads(bytes, max_depth);
    let tokens = if bytes.len() >= DETACH_MIN {
        py.detach(fast)
    } else {
        fast()
    };
    let mut cache = KEY_CACHE.try_lock().ok();
    let p = match tokens {
        Some(t) => {
            let b = Builder::<[u32], true> {
                py,
                input: bytes,
                s: &t.structurals,
                containers: &t.lens[..],
                escapes: &t.escapes,
                next_escape: 0,
                ascii: !t.non_ascii,
                scratch: take_scratch(),
                cache: cache.as_deref_mut(),
                stack: take_stack(),
                bad_scalar: false,
            };
            let p = build(py, b, t.lens.len());
            t.give_back();
            p
        }
        None => {
            let (index, escapes) = index(py, &input, max_depth, false)?;
            from_index(py, bytes, &index, &escapes, cache.as_deref_mut())
        }
    };
    match p {
        // SAFETY: `run` returns a new (owned) reference.
        Ok(p) => Ok(unsafe { Bound::from_owned_ptr(py, p) }.unbind()),
        Err(true) => Err(scalar_error(py, &input, max_depth)),
        Err(false) => Err(PyErr::fetch(py)),
    }
}

/// The Python objects of `bytes`, whose index (scalars unchecked, see
/// [`Index::build_unchecked_scalars`]) and escape offsets are given:
/// `Err(true)` when a scalar failed its check, `Err(false)` when a Python
/// exception is set.
pub(crate) fn from_index(
    py: Python<'_>,
    bytes: &[u8],
    index: &Index,
    escapes: &[u32],
    cache: Option<&mut KeyCache>,
) -> Result<*mut ffi::PyObject, bool> {
    let b = Builder::<[Container], false> {
        py,
        input: bytes,
        s: &index.structurals,
        containers: &index.containers[..],
        escapes,
        next_escape: 0,
        ascii: !index.non_ascii,
        scratch: take_scratch(),
        cache,
        stack: take_stack(),
        bad_scalar: false,
    };
    build(py, b, index.containers.len())
}

/// The key cache `loads` shares between calls (`None` while another
/// thread holds it).
pub(crate) fn key_cache() -> Option<std::sync::MutexGuard<'static, KeyCache>> {
    KEY_CACHE.try_lock().ok()
}

/// Run the builder `b` over a document with `containers` containers: the
/// root object, or `Err(bad_scalar)` (a scalar failed its check, or else a
/// Python exception is set).
fn build<L: ?Sized + Lens, const TOKENS: bool>(
    py: Python<'_>,
    mut b: Builder<'_, L, TOKENS>,
    containers: usize,
) -> Result<*mut ffi::PyObject, bool> {
    // No cyclic collection can free anything while the walk only adds
    // reachable objects, and each one our allocations trigger would walk
    // the half-built tree again: pause the collector (when it is enabled)
    // for documents with many containers. Through the `gc` module, so the
    // abi3-py39 build can do it too; the calls cost well under 1% there.
    let paused = (containers >= GC_PAUSE_MIN && gc_pause(py)).then(|| Paused(py));
    // SAFETY: the interpreter is attached (`py`), and the index was built
    // strictly from exactly these bytes (scalars aside, which the builder
    // checks).
    let p = unsafe { b.run() };
    drop(paused);
    // `run` leaves the stack empty (every frame popped, or released on
    // failure).
    give_back_stack(std::mem::take(&mut b.stack));
    give_back_scratch(std::mem::take(&mut b.scratch));
    p.ok_or(b.bad_scalar)
}

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

/// Cold path: the builder met an invalid number or literal (or garbage
/// after one); a strict build finds the first error of the document, which
/// is the one to report.
#[cold]
#[inline(never)]
fn scalar_error(py: Python<'_>, input: &Input, max_depth: usize) -> PyErr {
    match index(py, input, max_depth, true) {
        Err(e) => e,
        Ok(_) => pyo3::exceptions::PySystemError::new_err(
            "qjson: a scalar was rejected that strict validation accepts",
        ),
    }
}

/// Check that `data` is valid JSON (RFC 8259, strict) without building any
/// Python object; raises `JSONDecodeError` exactly where `loads` would.
#[pyfunction]
#[pyo3(signature = (data, *, max_depth = 1024))]
pub(crate) fn validate(py: Python<'_>, data: &Bound<'_, PyAny>, max_depth: usize) -> PyResult<()> {
    let input = Input::new(data)?;
    let opts = Options {
        lazy: false,
        max_depth,
    };
    let bytes = input.bytes();
    let checked = if bytes.len() >= DETACH_MIN {
        py.detach(|| crate::index::validate(bytes, &opts))
    } else {
        crate::index::validate(bytes, &opts)
    };
    checked.map_err(|e| decode_error(py, e, &input))
}

static GC: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// Re-enables the collector when dropped, also if the walk panics.
pub(crate) struct Paused<'py>(Python<'py>);
impl Drop for Paused<'_> {
    fn drop(&mut self) {
        gc_resume(self.0);
    }
}

/// Pause the cyclic collector (when it is enabled) until the guard drops.
pub(crate) fn gc_paused(py: Python<'_>) -> Option<Paused<'_>> {
    gc_pause(py).then(|| Paused(py))
}

/// Disable the cyclic collector if it is enabled; whether it was.
#[cold]
fn gc_pause(py: Python<'_>) -> bool {
    let pause = || -> PyResult<bool> {
        let gc = GC.get_or_try_init(py, || py.import("gc").map(Bound::unbind))?;
        let gc = gc.bind(py);
        if !gc.call_method0(intern!(py, "isenabled"))?.is_truthy()? {
            return Ok(false);
        }
        gc.call_method0(intern!(py, "disable"))?;
        Ok(true)
    };
    // Not pausing is always correct: ignore failures.
    pause().unwrap_or_else(|e| {
        drop(e);
        false
    })
}

/// Enable the collector [`gc_pause`] disabled.
#[cold]
fn gc_resume(py: Python<'_>) {
    if let Some(gc) = GC.get(py) {
        // Keep the walk's own exception, if any, in place.
        let pending = PyErr::take(py);
        drop(gc.bind(py).call_method0(intern!(py, "enable")));
        if let Some(e) = pending {
            e.restore(py);
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    Ok(())
}

// ---------------------------------------------------------------------------
// The key cache
// ---------------------------------------------------------------------------

/// One cache slot, one cache line: a raw key, its `str` (owned) and a tag
/// of its hash and length ([`tag`]). A lookup then reads one line, not a
/// slot and, elsewhere, the key (twice the L1 misses on documents with
/// many distinct keys).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Slot {
    obj: *mut ffi::PyObject,
    tag: u64,
    key: [u8; CACHE_KEY_MAX],
}

/// The tag of a key of `len` bytes with hash `h`: the length in the low
/// byte (the hash bits it replaces also chose the slot).
#[inline(always)]
fn tag(h: u64, len: usize) -> u64 {
    (h & !0xff) | len as u64
}

/// A direct-mapped cache from raw key bytes to `str` objects.
pub(crate) struct KeyCache {
    slots: Vec<Slot>,
}

// SAFETY: the `str` pointers are only touched with the interpreter attached
// (`loads` holds the GIL while it holds the lock), and str objects are
// immutable.
unsafe impl Send for KeyCache {}

static KEY_CACHE: Mutex<KeyCache> = Mutex::new(KeyCache { slots: Vec::new() });

/// A fast hash of a short byte string (8 bytes a step, multiply-rotate).
#[inline(always)]
fn hash_key(b: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = (b.len() as u64).wrapping_mul(K);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(a)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        h = (h.rotate_left(5) ^ tail_le(b, rest.len())).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

/// The last `r` (1..=7) bytes of `b` as a little-endian integer (the
/// zero-padded tail `hash_key` mixes in), with whole loads only: a copy of
/// a variable-length tail into a buffer became a `memcpy` call per key.
#[inline(always)]
fn tail_le(b: &[u8], r: usize) -> u64 {
    let n = b.len();
    let le = |at: usize, w: usize| -> u64 {
        let mut a = [0u8; 8];
        a[..w].copy_from_slice(&b[at..at + w]);
        u64::from_le_bytes(a)
    };
    if n >= 8 {
        // The last eight bytes, the ones already mixed in shifted out.
        return le(n - 8, 8) >> (8 * (8 - r));
    }
    // The whole key is the tail (n == r): two overlapping loads.
    if r >= 4 {
        le(0, 4) | le(r - 4, 4) << (8 * (r - 4))
    } else if r >= 2 {
        le(0, 2) | le(r - 2, 2) << (8 * (r - 2))
    } else {
        b[0] as u64
    }
}

// ---------------------------------------------------------------------------
// The builder
// ---------------------------------------------------------------------------

/// An open container: the object being filled, the pending key (objects)
/// and how many children are still to come.
struct Frame {
    obj: *mut ffi::PyObject,
    /// The key of the member being read (owned), or null in arrays.
    key: *mut ffi::PyObject,
    object: bool,
    /// Next list slot (arrays).
    i: ffi::Py_ssize_t,
    left: u32,
}

/// Child counts by container ordinal (in the order of the openers).
trait Lens {
    fn len_of(&self, ord: usize) -> Option<u32>;
}

/// The exact path's container table.
impl Lens for [Container] {
    #[inline(always)]
    fn len_of(&self, ord: usize) -> Option<u32> {
        self.get(ord).map(|c| c.len)
    }
}

/// The token walk's counts.
impl Lens for [u32] {
    #[inline(always)]
    fn len_of(&self, ord: usize) -> Option<u32> {
        self.get(ord).copied()
    }
}

/// The builder, over the structural index of the exact path or, with
/// `TOKENS`, over the token index (where every value is one token: a
/// scalar starts at its token, and no gap needs skipping).
struct Builder<'a, L: ?Sized + Lens, const TOKENS: bool> {
    py: Python<'a>,
    input: &'a [u8],
    s: &'a [u32],
    containers: &'a L,
    /// Stage 1's escape offsets, and the first one not before the string
    /// being read (strings are read in order).
    escapes: &'a [u32],
    next_escape: usize,
    /// The whole input is ASCII (only the version-specific build uses it).
    #[cfg_attr(feature = "abi3", allow(dead_code))]
    ascii: bool,
    scratch: Vec<u8>,
    cache: Option<&'a mut KeyCache>,
    stack: Vec<Frame>,
    /// A number or literal failed its check (no Python exception is set).
    bad_scalar: bool,
}

impl<L: ?Sized + Lens, const TOKENS: bool> Builder<'_, L, TOKENS> {
    /// Build the whole document. Returns a new reference, or `None` with a
    /// Python exception set (everything built so far is released).
    ///
    /// # Safety
    /// The interpreter must be attached, and the index must have been built
    /// strictly from `self.input`.
    unsafe fn run(&mut self) -> Option<*mut ffi::PyObject> {
        let r = self.walk();
        if r.is_none() {
            for f in self.stack.drain(..) {
                // SAFETY: frames own their object and (when non-null) key.
                unsafe {
                    ffi::Py_DECREF(f.obj);
                    if !f.key.is_null() {
                        ffi::Py_DECREF(f.key);
                    }
                }
            }
        }
        r
    }

    /// # Safety
    /// As for [`Builder::run`].
    #[inline(always)]
    unsafe fn walk(&mut self) -> Option<*mut ffi::PyObject> {
        let input = self.input;
        let s = self.s;
        let mut k = 0usize;
        let mut ord = 0usize;
        // (The token index needs no gap skipping: `q` stays unused.)
        let mut q = if TOKENS { 0 } else { skip_ws(input, 0) };
        'value: loop {
            let sk = s[k] as usize;
            // SAFETY (whole block): the interpreter is attached; every
            // pointer passed to the C API is a live object we own or borrow.
            let mut v = unsafe {
                if !TOKENS && q < sk {
                    self.scalar(q, sk)?
                } else {
                    match input[sk] {
                        b'"' => {
                            let close = string_close(input, s, k)?;
                            k += 1;
                            self.string(sk + 1, close)?
                        }
                        // A literal token, when 8 bytes can be read.
                        c @ (b't' | b'n' | b'f') if TOKENS && literal_token(input, sk) => {
                            k += 1;
                            let lit = match c {
                                b't' => ffi::Py_True(),
                                b'n' => ffi::Py_None(),
                                _ => ffi::Py_False(),
                            };
                            // SAFETY: the interpreter is attached; the
                            // singletons are alive, and we return a new
                            // reference to one.
                            ffi::Py_INCREF(lit);
                            lit
                        }
                        // A scalar token: a plain decimal read at once,
                        // anything else checked and read by `scalar`.
                        c if TOKENS && c != b'{' && c != b'[' => {
                            k += 1;
                            let next = s[k] as usize;
                            match plain_decimal(input, sk, next) {
                                Some(n) => self.number_object(n)?,
                                // Longer fractions (17 significant digits
                                // in canada.json): read once, by the same
                                // masks, up to 19 digits.
                                None => match plain_long_decimal(input, sk, next) {
                                    Some(n) => self.number_object(n)?,
                                    None => self.long_number(sk, next)?,
                                },
                            }
                        }
                        open => {
                            let object = open == b'{';
                            let len = self.containers.len_of(ord)?;
                            ord += 1;
                            k += 1;
                            let obj = if object {
                                new_dict(len)
                            } else {
                                ffi::PyList_New(len as ffi::Py_ssize_t)
                            };
                            if obj.is_null() {
                                return None;
                            }
                            if len == 0 {
                                k += 1; // the closer
                                obj
                            } else {
                                let mut key = std::ptr::null_mut();
                                if object {
                                    key = self.key(k);
                                    if key.is_null() {
                                        ffi::Py_DECREF(obj);
                                        return None;
                                    }
                                    k += 2; // the key and the colon
                                }
                                self.stack.push(Frame {
                                    obj,
                                    key,
                                    object,
                                    i: 0,
                                    left: len,
                                });
                                if !TOKENS {
                                    q = skip_ws(input, s[k - 1] as usize + 1);
                                }
                                continue 'value;
                            }
                        }
                    }
                }
            };
            // Store `v` into the container on top; close finished ones.
            loop {
                let Some(top) = self.stack.last_mut() else {
                    return Some(v);
                };
                // SAFETY: `top.obj` is a dict (objects) or a list with
                // `top.left` unfilled slots from `top.i` on; `v` and
                // `top.key` are owned references (SetItem on a list steals).
                unsafe {
                    if top.object {
                        let rc = dict_set(top.obj, top.key, v);
                        ffi::Py_DECREF(top.key);
                        ffi::Py_DECREF(v);
                        top.key = std::ptr::null_mut();
                        if rc != 0 {
                            return None;
                        }
                    } else {
                        list_set(top.obj, top.i, v);
                        top.i += 1;
                    }
                }
                top.left -= 1;
                k += 1; // the `,` or the closer after the value
                if top.left > 0 {
                    if top.object {
                        // SAFETY: as above.
                        let key = unsafe { self.key(k) };
                        if key.is_null() {
                            return None;
                        }
                        self.stack.last_mut()?.key = key;
                        k += 2;
                    }
                    if !TOKENS {
                        q = skip_ws(input, s[k - 1] as usize + 1);
                    }
                    continue 'value;
                }
                v = self.stack.pop()?.obj;
            }
        }
    }

    /// The scalar token starting at `q`, before the structural at `sk`,
    /// checked: a valid number or literal followed by nothing but
    /// whitespace. On failure, `None` with `bad_scalar` set.
    ///
    /// # Safety
    /// The interpreter must be attached.
    #[inline(always)]
    unsafe fn scalar(&mut self, q: usize, sk: usize) -> Option<*mut ffi::PyObject> {
        let input = self.input;
        let rest = &input[q..sk];
        let (lit, end) = match rest[0] {
            b't' if rest.starts_with(b"true") => (ffi::Py_True(), q + 4),
            b'f' if rest.starts_with(b"false") => (ffi::Py_False(), q + 5),
            b'n' if rest.starts_with(b"null") => (ffi::Py_None(), q + 4),
            // SAFETY: the interpreter is attached.
            b'-' | b'0'..=b'9' => return unsafe { self.number(q, sk) },
            _ => return self.bad(),
        };
        if !ends_at(input, end, sk) {
            return self.bad();
        }
        // SAFETY: the interpreter is attached; the singletons are immortal
        // or at least alive, and we return a new reference to them.
        unsafe { ffi::Py_INCREF(lit) };
        Some(lit)
    }

    #[cold]
    fn bad(&mut self) -> Option<*mut ffi::PyObject> {
        self.bad_scalar = true;
        None
    }

    /// # Safety
    /// The interpreter must be attached.
    #[inline(always)]
    unsafe fn number(&mut self, q: usize, sk: usize) -> Option<*mut ffi::PyObject> {
        // One pass: the grammar is checked while the digits are read.
        let Some((n, end)) = parse_number_at(self.input, q).filter(|&(_, end)| end <= sk) else {
            return self.bad();
        };
        if !ends_at(self.input, end, sk) {
            return self.bad();
        }
        // SAFETY: the interpreter is attached.
        unsafe { self.number_object(n) }
    }

    /// A scalar token `input[p..q]` that the plain-decimal readers left:
    /// a plain fraction of more than 19 digits goes straight to the float
    /// parser (the digit mask has checked its grammar, so its digits are
    /// read once); anything else is checked and read by [`Self::scalar`].
    ///
    /// # Safety
    /// The interpreter must be attached.
    #[inline(never)]
    unsafe fn long_number(&mut self, p: usize, q: usize) -> Option<*mut ffi::PyObject> {
        if plain_fraction(self.input, p, q) {
            if let Ok(v) = fast_float2::parse::<f64, _>(&self.input[p..q]) {
                // SAFETY: the interpreter is attached.
                return unsafe { self.number_object(Number::Float(v)) };
            }
        }
        // SAFETY: the interpreter is attached.
        unsafe { self.scalar(p, q) }
    }

    /// The `int` or `float` of `n` (a new reference, or `None` with an
    /// exception set).
    ///
    /// # Safety
    /// The interpreter must be attached.
    #[inline(always)]
    unsafe fn number_object(&self, n: Number<'_>) -> Option<*mut ffi::PyObject> {
        // SAFETY: the interpreter is attached.
        let p = unsafe {
            match n {
                Number::Int(v) => ffi::PyLong_FromLongLong(v),
                Number::Float(v) => ffi::PyFloat_FromDouble(v),
                Number::BigInt(t) => return big_number(self.py, t),
            }
        };
        (!p.is_null()).then_some(p)
    }

    /// Whether the string body `input[start..end]` holds an escape: the
    /// next escape offset at or after `start` says (no search).
    #[inline(always)]
    fn has_escape(&mut self, start: usize, end: usize) -> bool {
        let mut i = self.next_escape;
        while self.escapes.get(i).is_some_and(|&e| (e as usize) < start) {
            i += 1;
        }
        self.next_escape = i;
        self.escapes.get(i).is_some_and(|&e| (e as usize) < end)
    }

    /// A `str` from the string body `input[start..end]` (between the quotes).
    ///
    /// # Safety
    /// The interpreter must be attached; the body was validated.
    #[inline(always)]
    unsafe fn string(&mut self, start: usize, end: usize) -> Option<*mut ffi::PyObject> {
        let body = &self.input[start..end];
        let escaped = self.has_escape(start, end);
        let text = if !escaped {
            body
        } else {
            unescape(body, &mut self.scratch)
        };
        // Version-specific builds: an ASCII string is one allocation and a
        // memcpy (the full API exposes the compact string layout). Without
        // escapes, an all-ASCII input needs no check.
        #[cfg(not(feature = "abi3"))]
        if (self.ascii && !escaped) || text.is_ascii() {
            // SAFETY: the interpreter is attached; `PyUnicode_New(n, 127)`
            // makes a compact ASCII string whose data holds `n` bytes (plus
            // the NUL it already wrote), which we fill before anyone sees it.
            unsafe {
                let p = ffi::PyUnicode_New(text.len() as ffi::Py_ssize_t, 127);
                if p.is_null() {
                    return None;
                }
                let dst = ffi::PyUnicode_DATA(p).cast::<u8>();
                std::ptr::copy_nonoverlapping(text.as_ptr(), dst, text.len());
                return Some(p);
            }
        }
        // Version-specific builds: other strings are decoded straight into
        // a `str` of the right width.
        #[cfg(not(feature = "abi3"))]
        // SAFETY: the interpreter is attached.
        let p = unsafe { new_str_non_ascii(text) };
        // SAFETY: validated bodies unescape to valid UTF-8; the pointer and
        // length describe a live slice.
        #[cfg(feature = "abi3")]
        let p = unsafe {
            ffi::PyUnicode_FromStringAndSize(text.as_ptr().cast(), text.len() as ffi::Py_ssize_t)
        };
        (!p.is_null()).then_some(p)
    }

    /// The key whose opening quote is structural `k` (a new reference, or
    /// null with an exception set).
    ///
    /// # Safety
    /// The interpreter must be attached.
    #[inline(always)]
    unsafe fn key(&mut self, k: usize) -> *mut ffi::PyObject {
        let input = self.input;
        let open = self.s[k] as usize;
        let Some(close) = string_close(input, self.s, k) else {
            return std::ptr::null_mut();
        };
        let body = &input[open + 1..close];
        if body.len() > CACHE_KEY_MAX || self.cache.is_none() {
            // SAFETY: as in `string`.
            return unsafe { self.string(open + 1, close) }.unwrap_or(std::ptr::null_mut());
        }
        let h = hash_key(body);
        let i = h as usize & (CACHE_SLOTS - 1);
        let cache = match self.cache.as_deref_mut() {
            Some(c) => c,
            None => return std::ptr::null_mut(),
        };
        if cache.slots.is_empty() {
            cache.slots = vec![
                Slot {
                    obj: std::ptr::null_mut(),
                    tag: 0,
                    key: [0; CACHE_KEY_MAX],
                };
                CACHE_SLOTS
            ];
        }
        let t = tag(h, body.len());
        let slot = &cache.slots[i];
        if !slot.obj.is_null() && slot.tag == t && short_eq(&slot.key[..body.len()], body) {
            // SAFETY: the cache owns a reference; we hand out a new one.
            unsafe { ffi::Py_INCREF(slot.obj) };
            return slot.obj;
        }
        let old = slot.obj;
        // SAFETY: as in `string`.
        let Some(obj) = (unsafe { self.string(open + 1, close) }) else {
            return std::ptr::null_mut();
        };
        let cache = match self.cache.as_deref_mut() {
            Some(c) => c,
            None => return obj,
        };
        // SAFETY: one reference for the cache, one for the caller; the
        // replaced entry's reference is released.
        unsafe {
            ffi::Py_INCREF(obj);
            if !old.is_null() {
                ffi::Py_DECREF(old);
            }
        }
        // The key bytes change together with the slot, once the string
        // exists: a failed `string` leaves the old entry whole.
        let slot = &mut cache.slots[i];
        slot.key[..body.len()].copy_from_slice(body);
        slot.tag = t;
        slot.obj = obj;
        obj
    }
}

/// A `str` from valid UTF-8 `text` that is not all ASCII (a new reference,
/// or null with an exception set), built in place: one pass counts the
/// characters and finds the largest byte, which gives the exact width
/// (CPython's strings must use the narrowest one: a largest byte up to
/// 0xC3 means every character is below 256, below 0xF0 below 65536), and
/// a second pass decodes into the string's data. CPython's own decoder
/// starts narrow and widens (and reallocates) at the first wider character.
///
/// # Safety
/// The interpreter must be attached.
#[cfg(not(feature = "abi3"))]
#[inline(never)]
unsafe fn new_str_non_ascii(text: &[u8]) -> *mut ffi::PyObject {
    // Characters are the bytes that do not continue a sequence (0x80..0xC0).
    let (chars, max) = text.iter().fold((0usize, 0u8), |(n, m), &b| {
        (n + ((b as i8) >= -0x40) as usize, m.max(b))
    });
    let maxchar: u32 = match max {
        0..=0x7F => 0x7F,
        0x80..=0xC3 => 0xFF,
        0xC4..=0xEF => 0xFFFF,
        _ => 0x10FFFF,
    };
    // SAFETY: the interpreter is attached.
    let p = unsafe { ffi::PyUnicode_New(chars as ffi::Py_ssize_t, maxchar as ffi::Py_UCS4) };
    if p.is_null() {
        return p;
    }
    // SAFETY: `p` is a new compact string of `chars` characters whose
    // width `PyUnicode_New` chose from `maxchar` (1 byte up to 0xFF, 2 up to
    // 0xFFFF, else 4), so its data holds `chars` units of that width; no
    // one else sees it before we return it. The slices cover exactly that.
    unsafe {
        let data = ffi::PyUnicode_DATA(p);
        match maxchar {
            0x7F | 0xFF => decode_utf8(
                text,
                std::slice::from_raw_parts_mut(data.cast::<u8>(), chars),
            ),
            0xFFFF => decode_utf8(
                text,
                std::slice::from_raw_parts_mut(data.cast::<u16>(), chars),
            ),
            _ => decode_utf8(
                text,
                std::slice::from_raw_parts_mut(data.cast::<u32>(), chars),
            ),
        }
    }
    p
}

/// Decode valid UTF-8 `text` into `out`, one unit per character; `out` has
/// exactly one unit per character and each unit type is wide enough for
/// every character (`TryFrom` cannot fail then; a malformed text would
/// panic on an index, never write out of bounds).
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn decode_utf8<T: TryFrom<u32> + Copy>(text: &[u8], out: &mut [T]) {
    let unit = |c: u32| T::try_from(c).ok().expect("unit wide enough");
    let (mut i, mut j) = (0, 0);
    while i < text.len() {
        let b = text[i] as u32;
        let c = if b < 0x80 {
            i += 1;
            b
        } else if b < 0xE0 {
            i += 2;
            (b & 0x1F) << 6 | (text[i - 1] as u32 & 0x3F)
        } else if b < 0xF0 {
            i += 3;
            (b & 0x0F) << 12 | (text[i - 2] as u32 & 0x3F) << 6 | (text[i - 1] as u32 & 0x3F)
        } else {
            i += 4;
            (b & 0x07) << 18
                | (text[i - 3] as u32 & 0x3F) << 12
                | (text[i - 2] as u32 & 0x3F) << 6
                | (text[i - 1] as u32 & 0x3F)
        };
        out[j] = unit(c);
        j += 1;
    }
}

/// A new dict with room for `len` members without resizing (version-specific
/// builds: `_PyDict_NewPresized`, which CPython exports for this purpose
/// and orjson and Cython use too; the stable ABI has only `PyDict_New`).
///
/// # Safety
/// The interpreter must be attached.
#[inline(always)]
unsafe fn new_dict(len: u32) -> *mut ffi::PyObject {
    #[cfg(not(feature = "abi3"))]
    {
        extern "C" {
            fn _PyDict_NewPresized(minused: ffi::Py_ssize_t) -> *mut ffi::PyObject;
        }
        // Up to 5 members fit the smallest table anyway.
        if len > 5 {
            // SAFETY: the interpreter is attached (our caller's contract).
            return unsafe { _PyDict_NewPresized(len as ffi::Py_ssize_t) };
        }
    }
    let _ = len;
    // SAFETY: the interpreter is attached (our caller's contract).
    unsafe { ffi::PyDict_New() }
}

/// `dict[key] = v` (neither reference stolen), like `PyDict_SetItem`. On
/// version-specific builds before 3.13, a key whose `str` hash is already
/// computed (every key from the cache) goes to `_PyDict_SetItem_KnownHash`
/// with that hash, which skips `PyDict_SetItem`'s type checks and hash
/// lookup (CPython exports it for this purpose; orjson uses it too).
///
/// # Safety
/// The interpreter must be attached; `dict` is a dict and `key` an exact
/// `str` (loads only makes those).
#[inline(always)]
unsafe fn dict_set(
    dict: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
    v: *mut ffi::PyObject,
) -> std::os::raw::c_int {
    #[cfg(not(any(feature = "abi3", Py_3_13)))]
    {
        extern "C" {
            fn _PyDict_SetItem_KnownHash(
                mp: *mut ffi::PyObject,
                key: *mut ffi::PyObject,
                item: *mut ffi::PyObject,
                hash: ffi::Py_hash_t,
            ) -> std::os::raw::c_int;
        }
        // SAFETY: `key` is a live exact `str`, so it has the compact
        // string header, whose `hash` is -1 until computed.
        let h = unsafe { (*key.cast::<ffi::PyASCIIObject>()).hash };
        if h != -1 {
            // SAFETY: as the caller guarantees; `h` is `key`'s own hash.
            return unsafe { _PyDict_SetItem_KnownHash(dict, key, v, h) };
        }
    }
    // SAFETY: as the caller guarantees.
    unsafe { ffi::PyDict_SetItem(dict, key, v) }
}

/// Store `v` (stolen) into the empty slot `i` of the fresh list `list`.
///
/// # Safety
/// The interpreter must be attached; `list` is a list whose slot `i` is in
/// range and still empty (NULL), as `PyList_New` leaves it.
#[inline(always)]
unsafe fn list_set(list: *mut ffi::PyObject, i: ffi::Py_ssize_t, v: *mut ffi::PyObject) {
    // SAFETY: as the caller guarantees; the full API's macro writes the
    // slot directly (no type or range check, no old item to release).
    #[cfg(not(feature = "abi3"))]
    unsafe {
        ffi::PyList_SET_ITEM(list, i, v)
    }
    // SAFETY: as the caller guarantees.
    #[cfg(feature = "abi3")]
    unsafe {
        ffi::PyList_SetItem(list, i, v);
    }
}

/// Whether only whitespace lies between a token's end and the structural
/// at `sk` (usually nothing at all).
#[inline(always)]
fn ends_at(input: &[u8], end: usize, sk: usize) -> bool {
    end == sk || skip_ws(input, end) == sk
}

/// `a == b` for two short slices of equal length, 8 bytes a step (no
/// `memcmp` call).
#[inline(always)]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        if x != y {
            return false;
        }
    }
    ca.remainder()
        .iter()
        .zip(cb.remainder())
        .all(|(x, y)| x == y)
}

/// An integer beyond i64 (a new reference, or `None` with an exception set).
#[cold]
fn big_number(py: Python<'_>, text: &str) -> Option<*mut ffi::PyObject> {
    big_int(py, text)
        .map(Py::into_ptr)
        .map_err(|e| e.restore(py))
        .ok()
}

/// Unescape a validated string body into `out`, returning the result (the
/// start of `out`). `out` is grown (never shrunk) to at least
/// `body.len() + 8` bytes: unescaping never lengthens a body (an escape of
/// 2, 6 or 12 bytes writes at most 1, 3 or 4), so every write, including
/// the 8-byte copies below, stays inside it, and a reused buffer needs no
/// clearing or zeroing.
///
/// Plain runs are copied 8 bytes a step (the whole word is written, then
/// the output advances only up to the first backslash in it, found with a
/// SWAR zero-byte test), so a string with an escape every few bytes (URLs
/// with `\/`) costs no search call per escape.
#[inline(never)]
fn unescape<'o>(body: &[u8], out: &'o mut Vec<u8>) -> &'o [u8] {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    let n = body.len();
    if out.len() < n + 8 {
        out.resize(n + 8, 0);
    }
    let out = &mut out[..n + 8];
    let (mut i, mut o) = (0, 0);
    while i < n {
        if let Some(chunk) = body.get(i..i + 8) {
            out[o..o + 8].copy_from_slice(chunk);
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            let x = u64::from_le_bytes(w) ^ BACKSLASHES;
            // The lowest set bit marks the first zero byte of `x` (bits
            // above it may be false positives, never below).
            let m = x.wrapping_sub(ONES) & !x & HIGH;
            if m == 0 {
                i += 8;
                o += 8;
                continue;
            }
            let p = (m.trailing_zeros() / 8) as usize;
            i += p;
            o += p;
        } else if body[i] != b'\\' {
            out[o] = body[i];
            i += 1;
            o += 1;
            continue;
        }
        // `body[i]` is a backslash.
        let c = match body.get(i + 1) {
            Some(b'n') => b'\n',
            Some(b't') => b'\t',
            Some(b'r') => b'\r',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0C,
            Some(b'u') => {
                let hi = hex4(body, i + 2);
                let (cp, len) = if (0xD800..0xDC00).contains(&hi) {
                    let lo = hex4(body, i + 8);
                    (
                        0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF),
                        12,
                    )
                } else {
                    (hi, 6)
                };
                o += encode_utf8(cp, &mut out[o..o + 4]);
                i += len;
                continue;
            }
            // `"`, `\\`, `/`.
            Some(&c) => c,
            None => break,
        };
        out[o] = c;
        o += 1;
        i += 2;
    }
    &out[..o]
}

/// Write the UTF-8 form of code point `cp` (a validated escape: never a
/// lone surrogate; U+FFFD stands in for one all the same) to the start of
/// `out`; its length.
#[inline(always)]
fn encode_utf8(cp: u32, out: &mut [u8]) -> usize {
    if cp < 0x80 {
        out[0] = cp as u8;
        1
    } else if cp < 0x800 {
        out[0] = 0xC0 | (cp >> 6) as u8;
        out[1] = 0x80 | (cp & 0x3F) as u8;
        2
    } else if cp < 0x10000 {
        let cp = if (0xD800..0xE000).contains(&cp) {
            0xFFFD
        } else {
            cp
        };
        out[0] = 0xE0 | (cp >> 12) as u8;
        out[1] = 0x80 | ((cp >> 6) & 0x3F) as u8;
        out[2] = 0x80 | (cp & 0x3F) as u8;
        3
    } else {
        out[0] = 0xF0 | (cp >> 18) as u8;
        out[1] = 0x80 | ((cp >> 12) & 0x3F) as u8;
        out[2] = 0x80 | ((cp >> 6) & 0x3F) as u8;
        out[3] = 0x80 | (cp & 0x3F) as u8;
        4
    }
}

/// The value of the four hex digits at `b[at..at + 4]` (0 past the end or
/// for a non-digit: validated input always has them), through the
/// decoder's table.
#[inline(always)]
fn hex4(b: &[u8], at: usize) -> u32 {
    crate::decode::string::hex4(b, at).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::{hash_key, unescape};

    #[test]
    fn unescapes() {
        let mut out = Vec::new();
        let got = unescape(br#"a\"b\\c\/d\n\t\r\b\f\u00e9\ud83d\ude00x"#, &mut out);
        assert_eq!(got, "a\"b\\c/d\n\t\r\u{8}\u{c}é😀x".as_bytes());
    }

    /// Every escape at every offset around the 8-byte steps, in a reused
    /// (dirty, longer) buffer and a fresh one, against a plain decoder.
    #[test]
    fn unescapes_at_every_offset() {
        let escapes: [(&str, &str); 12] = [
            (r"\/", "/"),
            (r"\\", "\\"),
            (r#"\""#, "\""),
            (r"\n", "\n"),
            (r"\b", "\u{8}"),
            (r"\u0041", "A"),
            (r"\u00E9", "é"),
            (r"\u07ff", "\u{7ff}"),
            (r"\u30c0", "ダ"),
            (r"\uFFFF", "\u{ffff}"),
            (r"\ud83d\ude00", "😀"),
            (r"\uDBFF\uDFFF", "\u{10ffff}"),
        ];
        let mut dirty = vec![0xAAu8; 300];
        for pre in 0..20 {
            for post in 0..12 {
                for (e, want) in escapes {
                    for (e2, want2) in [("", ""), (r"\t", "\t"), (r"\u00e9", "é")] {
                        let body = format!("{}{e}{e2}{}é{e}", "x".repeat(pre), "y".repeat(post));
                        let expect = format!(
                            "{}{want}{want2}{}é{want}",
                            "x".repeat(pre),
                            "y".repeat(post)
                        );
                        let got = unescape(body.as_bytes(), &mut dirty);
                        assert_eq!(got, expect.as_bytes(), "{body}");
                        let mut fresh = Vec::new();
                        let got = unescape(body.as_bytes(), &mut fresh);
                        assert_eq!(got, expect.as_bytes(), "{body}");
                    }
                }
            }
        }
    }

    #[test]
    fn tails_are_the_zero_padded_bytes() {
        let b: Vec<u8> = (1..=40).collect();
        for n in 1..=b.len() {
            let r = n % 8;
            if r == 0 {
                continue;
            }
            let mut a = [0u8; 8];
            a[..r].copy_from_slice(&b[n - r..n]);
            assert_eq!(super::tail_le(&b[..n], r), u64::from_le_bytes(a), "n {n}");
        }
    }

    #[test]
    fn hash_depends_on_every_byte() {
        let a = hash_key(b"abcdefghijk");
        assert_ne!(a, hash_key(b"abcdefghijl"));
        assert_ne!(a, hash_key(b"abcdefghij"));
        assert_ne!(hash_key(b""), hash_key(b"\0"));
    }
}
