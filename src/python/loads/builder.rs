//! The builder: one left-to-right pass over a validated index that makes
//! the Python objects directly, with no intermediate tree.
//!
//! - In the token index every value is one token: a string, object or
//!   array by its first byte, else a scalar (number, `true`, `false`,
//!   `null`); in the structural index, a value starting at byte `q` whose
//!   first structural candidate is `s[k]` is a scalar when `q < s[k]`,
//!   else a string, object or array by the byte at `s[k]`.
//! - Containers are counted in document order, so the `ord`-th opener finds
//!   its child count in the container table ([`Lens`]): lists are allocated
//!   at their final size and filled in place.
//! - Open containers live on an explicit stack of [`Frame`]s (no recursion,
//!   so any `max_depth` is safe); a finished value is stored into the
//!   container on top, and the structural after it is a `,` (another child
//!   follows) or the closer (pop).
//! - In the token index, a container that holds no container (the walk
//!   marks its count with [`FLAT`]: `[true, null, ...]`, coordinate pairs,
//!   `{"id": 1, "name": "x"}`) is filled by a loop of its own
//!   ([`Builder::flat_array`], [`Builder::flat_object`]): each child is one
//!   token ([`Builder::leaf`]) then a `,` or the closer, so no frame is
//!   pushed and no child asks which kind of container it goes into.
//! - Object members go through `dict_set`, so a repeated key keeps its
//!   first position and its last value, as `json.loads` does; keys go
//!   through the key cache.
//! - Strings without a backslash are handed over as they are. In an ASCII
//!   input, one with escapes is written straight into its `str` from
//!   stage 1's escape offsets (`Builder::ascii_escaped` when they are all
//!   two bytes long, else [`new_str_escapes`]);
//!   in others (and in the `abi3` build) it is unescaped into a scratch
//!   buffer first ([`unescape_validated`]).
//! - Numbers and literals are checked as they are read (stage 2 left them
//!   unchecked); a failure sets `bad_scalar`, and the caller finds the
//!   error with a strict build.
//!
//! Everything else the walk reads was validated, so it does not re-check
//! the grammar; the only failures left are Python's (out of memory), after
//! which every object built so far is released.

use super::gc::{gc_paused, GC_PAUSE_MIN};
use super::key_cache::{
    hash_key, short_eq, tag, KeyCache, Slot, CACHE_KEY_MAX, CACHE_SLOTS, CACHE_VALUE_MAX,
    CACHE_VALUE_SLOTS,
};
#[cfg(not(feature = "abi3"))]
use super::objects::ascii_data;
use super::objects::copy_short;
use super::objects::{dict_set, list_push, list_set, new_dict, new_float, new_list_for};
#[cfg(not(feature = "abi3"))]
use super::objects::{new_str_census, new_str_escapes, short_ascii};
use super::spare::{give_back, take};
use crate::decode::number::{parse_number_at, plain_decimal, plain_long_decimal};
use crate::decode::string::unescape_validated;
use crate::decode::Number;
use crate::index::eager::{literal_token, literal_word, plain_fraction, FLAT};
use crate::index::Container;
use crate::lex::{skip_ws, string_close};
use crate::python::convert::big_int;
use pyo3::ffi;
use pyo3::prelude::*;

/// Run the builder `b` over a document with `containers` containers: the
/// root object, or `Err(bad_scalar)` (a scalar failed its check, or else a
/// Python exception is set).
pub(super) fn build<L: ?Sized + Lens, const TOKENS: bool, const SHARE: bool>(
    py: Python<'_>,
    mut b: Builder<'_, L, TOKENS, SHARE>,
    containers: usize,
) -> Result<*mut ffi::PyObject, bool> {
    // Pause the cyclic collector (when it is enabled) for documents with
    // many containers (see `gc`).
    let paused = if containers >= GC_PAUSE_MIN {
        gc_paused(py)
    } else {
        None
    };
    // SAFETY: the interpreter is attached (`py`), and the index was built
    // strictly from exactly these bytes (scalars aside, which the builder
    // checks).
    let p = unsafe { b.run() };
    drop(paused);
    // `run` leaves the stack empty (every frame popped, or released on
    // failure).
    let (stack, scratch) = (std::mem::take(&mut b.stack), std::mem::take(&mut b.scratch));
    give_back(
        b.cache.as_deref_mut().map(|c| &mut c.spares),
        stack,
        scratch,
    );
    p.ok_or(b.bad_scalar)
}

/// An open container: the object being filled, the pending key (objects)
/// and how many children are still to come.
pub(super) struct Frame {
    obj: *mut ffi::PyObject,
    /// The key of the member being read (owned), or null in arrays.
    key: *mut ffi::PyObject,
    object: bool,
    /// Next list slot (arrays).
    i: ffi::Py_ssize_t,
    left: u32,
}

/// Child counts by container ordinal (in the order of the openers).
pub(super) trait Lens {
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
///
/// With `SHARE`, short string values go through the cache's value table
/// too (`loads_many`: lines repeat the same enum-like values); a parameter
/// of the type, so that `loads` carries none of that code.
pub(super) struct Builder<'a, L: ?Sized + Lens, const TOKENS: bool, const SHARE: bool> {
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

impl<'a, L: ?Sized + Lens, const TOKENS: bool, const SHARE: bool> Builder<'a, L, TOKENS, SHARE> {
    /// A builder over `input` and its index: structurals `s`, child counts
    /// `containers`, escape offsets `escapes`; `ascii` says the whole input
    /// is ASCII. The stack and scratch buffer are the spares the cache (or
    /// else this thread) kept.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn new(
        py: Python<'a>,
        input: &'a [u8],
        s: &'a [u32],
        containers: &'a L,
        escapes: &'a [u32],
        ascii: bool,
        mut cache: Option<&'a mut KeyCache>,
    ) -> Self {
        // The cache's table is made on first use (once per process), here
        // rather than on every key.
        if let Some(c) = cache.as_deref_mut() {
            if c.next.is_empty() {
                c.next = vec![0; CACHE_SLOTS];
            }
            if c.slots.is_empty() {
                c.slots = vec![
                    Slot {
                        obj: std::ptr::null_mut(),
                        tag: 0,
                        key: [0; CACHE_KEY_MAX],
                    };
                    CACHE_SLOTS
                ];
            }
            if SHARE && c.values.is_empty() {
                c.values = vec![
                    Slot {
                        obj: std::ptr::null_mut(),
                        tag: 0,
                        key: [0; CACHE_KEY_MAX],
                    };
                    CACHE_VALUE_SLOTS
                ];
            }
        }
        let (stack, scratch) = take(cache.as_deref_mut().map(|c| &mut c.spares));
        Builder {
            py,
            input,
            s,
            containers,
            escapes,
            next_escape: 0,
            ascii,
            scratch,
            cache,
            stack,
            bad_scalar: false,
        }
    }
}

impl<L: ?Sized + Lens, const TOKENS: bool, const SHARE: bool> Builder<'_, L, TOKENS, SHARE> {
    /// Build the whole document. Returns a new reference, or `None` with a
    /// Python exception set (everything built so far is released).
    ///
    /// # Safety
    /// The interpreter must be attached, and the index must have been built
    /// strictly from `self.input`.
    unsafe fn run(&mut self) -> Option<*mut ffi::PyObject> {
        // SAFETY: this function's contract is `walk`'s.
        let r = unsafe { self.walk() };
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
            let sk = if TOKENS {
                // SAFETY: token `k` starts a value (a walk step only comes
                // here with one), so it is not the sentinel: in the token
                // index a value token is a byte of `input` (see
                // `token_byte`).
                unsafe { *s.get_unchecked(k) as usize }
            } else {
                s[k] as usize
            };
            // SAFETY: (whole block) the interpreter is attached; every
            // pointer passed to the C API is a live object we own or borrow.
            let mut v = unsafe {
                if !TOKENS && q < sk {
                    self.scalar(q, sk)?
                } else {
                    let c = if TOKENS {
                        // (As above.)
                        token_byte(input, s, k)
                    } else {
                        input[sk]
                    };
                    match c {
                        b'"' => {
                            // (`string_body`: token `k` is an opening
                            // quote of the index, built from `input`.)
                            let (start, end) = string_body(input, s, k)?;
                            k += 1;
                            self.value_string(start, end)?
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
                            let raw = self.containers.len_of(ord)?;
                            ord += 1;
                            k += 1;
                            // A non-empty container of leaves, filled by
                            // a loop of its own (see `FLAT`).
                            if TOKENS && raw > FLAT {
                                let (obj, next) = if object {
                                    self.flat_object(raw - FLAT, k)?
                                } else {
                                    self.flat_array(raw - FLAT, k)?
                                };
                                k = next;
                                obj
                            } else {
                                let len = raw & !FLAT;
                                let obj = if object {
                                    new_dict(len)
                                } else if len == 0 {
                                    ffi::PyList_New(0)
                                } else {
                                    new_list_for(len as usize)
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
                }
            };
            // Store `v` into the container on top; close finished ones.
            loop {
                let Some(top) = self.stack.last_mut() else {
                    return Some(v);
                };
                // SAFETY: `top.obj` is a dict (objects) or a list from
                // `new_list_for` holding `top.i` items, with room for
                // `top.left` more; `v` and `top.key` are owned references
                // (a list push steals).
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
                        list_push(top.obj, top.i, v);
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

    /// The value at token `k` of the token index `s` over `input` (the
    /// builder's own, passed in so that the callers' loops keep them in
    /// registers), known to be one token (a string, number or literal: no
    /// container), checked as the main loop checks it; `lits` are the
    /// literals' singletons ([`literals`]). On failure, `None` with
    /// `bad_scalar` set or an exception set.
    ///
    /// # Safety
    /// The interpreter must be attached; `input` and `s` are the builder's,
    /// a token index built strictly from `input` (scalars aside).
    #[inline(always)]
    unsafe fn leaf(
        &mut self,
        input: &[u8],
        s: &[u32],
        k: usize,
        lits: &[*mut ffi::PyObject; 4],
    ) -> Option<*mut ffi::PyObject> {
        // SAFETY: token `k` is a value token of the token index built
        // from `input` (this function's contract), not the sentinel.
        let sk = unsafe { *s.get_unchecked(k) as usize };
        // SAFETY: (whole block) the interpreter is attached.
        unsafe {
            // (As above.)
            let c = token_byte(input, s, k);
            if c == b'"' {
                // (`string_body`: token `k` is an opening quote of the
                // index, built from `input`.)
                let (start, end) = string_body(input, s, k)?;
                return self.value_string(start, end);
            }
            // Numbers by one range test of their first byte (`-` to `9`),
            // before the literal's word is read (canada.json's pairs).
            if c.wrapping_sub(b'-') > b'9' - b'-' && literal_token(input, sk) {
                let lit = lits[usize::from(c >> 3 & 3)];
                // SAFETY: the singletons are alive, and we return a new
                // reference to one.
                ffi::Py_INCREF(lit);
                return Some(lit);
            }
            let next = s[k + 1] as usize;
            match plain_decimal(input, sk, next) {
                Some(n) => self.number_object(n),
                None => match plain_long_decimal(input, sk, next) {
                    Some(n) => self.number_object(n),
                    None => self.long_number(sk, next),
                },
            }
        }
    }

    /// The list of `len` (at least one) elements whose first element is
    /// token `k` of the token index, holding no container (the walk marked
    /// it [`FLAT`]): each element is one token, then a `,` or the closer.
    /// Returns it (a new reference) and the token after its closer; `None`
    /// as for [`Builder::leaf`] (the list is released). A list whose first
    /// element is a literal goes to [`Builder::flat_literals`].
    ///
    /// # Safety
    /// As for [`Builder::leaf`]; the walk counted `len` elements there.
    #[inline(never)]
    unsafe fn flat_array(&mut self, len: u32, mut k: usize) -> Option<(*mut ffi::PyObject, usize)> {
        let (input, s) = (self.input, self.s);
        // (Only the literals' first bytes sort above `9`.)
        // SAFETY: the list's first element is token `k`, and every token
        // is a byte of `input`.
        if unsafe { *input.get_unchecked(*s.get_unchecked(k) as usize) } > b'9' {
            // SAFETY: as this function's.
            return unsafe { self.flat_literals(len, k) };
        }
        // SAFETY: (whole block) the interpreter is attached; `list` is a
        // new list with room for `len` items, pushed in order, each once.
        // (`len >= 1`: a flat container is not empty.)
        unsafe {
            let lits = literals();
            let list = new_list_for(len as usize);
            if list.is_null() {
                return None;
            }
            for i in 0..len as ffi::Py_ssize_t {
                let Some(v) = self.leaf(input, s, k, &lits) else {
                    ffi::Py_DECREF(list);
                    return None;
                };
                list_push(list, i, v);
                k += 2; // the element and the `,` or closer after it
            }
            Some((list, k))
        }
    }

    /// [`Builder::flat_array`] for a list whose first element is a literal
    /// (or a bad scalar): its run of literals (`[true, null, ...]`) is
    /// filled by [`literal_run`], a loop of its own; the elements after it,
    /// if any, by [`Builder::leaf`]. Apart, so that the numbers' loop of
    /// `flat_array` stays as it was.
    ///
    /// # Safety
    /// As for [`Builder::flat_array`].
    #[inline(never)]
    unsafe fn flat_literals(
        &mut self,
        len: u32,
        mut k: usize,
    ) -> Option<(*mut ffi::PyObject, usize)> {
        let (input, s) = (self.input, self.s);
        // SAFETY: (whole block) the interpreter is attached; `list` is a
        // new list of `len` empty slots, filled in order, each once.
        unsafe {
            let lits = literals();
            let list = ffi::PyList_New(len as ffi::Py_ssize_t);
            if list.is_null() {
                return None;
            }
            let first = literal_run(input, &s[k..k + 2 * len as usize], list, 0, &lits);
            k += 2 * first as usize;
            for i in first..len as ffi::Py_ssize_t {
                let Some(v) = self.leaf(input, s, k, &lits) else {
                    ffi::Py_DECREF(list);
                    return None;
                };
                list_set(list, i, v);
                k += 2; // the element and the `,` or closer after it
            }
            Some((list, k))
        }
    }

    /// [`Builder::flat_array`] for an object of `len` (at least one)
    /// members whose first key is token `k`: each member is a key, a
    /// colon, one token, then a `,` or the closer.
    ///
    /// # Safety
    /// As for [`Builder::flat_array`].
    #[inline(never)]
    unsafe fn flat_object(
        &mut self,
        len: u32,
        mut k: usize,
    ) -> Option<(*mut ffi::PyObject, usize)> {
        let (input, s) = (self.input, self.s);
        // SAFETY: (whole block) the interpreter is attached; `dict`, `key`
        // and `v` are owned references (`dict_set` steals none).
        unsafe {
            let lits = literals();
            let dict = new_dict(len);
            if dict.is_null() {
                return None;
            }
            for _ in 0..len {
                let key = self.key(k);
                if key.is_null() {
                    ffi::Py_DECREF(dict);
                    return None;
                }
                let Some(v) = self.leaf(input, s, k + 2, &lits) else {
                    ffi::Py_DECREF(key);
                    ffi::Py_DECREF(dict);
                    return None;
                };
                let rc = dict_set(dict, key, v);
                ffi::Py_DECREF(key);
                ffi::Py_DECREF(v);
                if rc != 0 {
                    ffi::Py_DECREF(dict);
                    return None;
                }
                k += 4; // the key, the colon, the value, the `,` or closer
            }
            Some((dict, k))
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
        // SAFETY: the interpreter is attached (the singletons are read,
        // `number` makes objects).
        let (lit, end) = unsafe {
            match rest[0] {
                b't' if rest.starts_with(b"true") => (ffi::Py_True(), q + 4),
                b'f' if rest.starts_with(b"false") => (ffi::Py_False(), q + 5),
                b'n' if rest.starts_with(b"null") => (ffi::Py_None(), q + 4),
                b'-' | b'0'..=b'9' => return self.number(q, sk),
                _ => return self.bad(),
            }
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
                Number::Float(v) => new_float(v),
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
    /// The interpreter must be attached; the body was validated (so
    /// `start <= end <= input.len()`: [`string_body`] gives it).
    #[inline(always)]
    unsafe fn string(&mut self, start: usize, end: usize) -> Option<*mut ffi::PyObject> {
        debug_assert!(start <= end && end <= self.input.len());
        // SAFETY: in bounds, as the caller guarantees.
        let body = unsafe { self.input.get_unchecked(start..end) };
        let escaped = self.has_escape(start, end);
        // Version-specific builds: a body without escapes in an all-ASCII
        // input is one allocation and a copy (the full API exposes the
        // compact string layout), as is any short ASCII text
        // ([`short_ascii`]: no loop) and any other ASCII one; the rest is
        // counted, then decoded into a `str` of the right width
        // ([`new_str_census`]). Escaped bodies go to [`Builder::escaped_string`].
        #[cfg(not(feature = "abi3"))]
        {
            if escaped {
                // SAFETY: as the caller guarantees; `next_escape` is the
                // body's first escape (`has_escape`).
                let p = unsafe { self.escaped_string(start, end) };
                return (!p.is_null()).then_some(p);
            }
            // SAFETY: (whole block) the interpreter is attached; a
            // validated body is valid UTF-8, and ASCII in an ASCII input.
            unsafe {
                if !self.ascii {
                    if let Some(p) = utf8_text_str(body) {
                        return (!p.is_null()).then_some(p);
                    }
                }
                let p = ascii_text_str(body);
                (!p.is_null()).then_some(p)
            }
        }
        #[cfg(feature = "abi3")]
        {
            let text = if !escaped {
                body
            } else {
                unescape_validated(body, &mut self.scratch)
            };
            // SAFETY: validated bodies unescape to valid UTF-8; the pointer
            // and length describe a live slice.
            let p = unsafe {
                ffi::PyUnicode_FromStringAndSize(
                    text.as_ptr().cast(),
                    text.len() as ffi::Py_ssize_t,
                )
            };
            (!p.is_null()).then_some(p)
        }
    }

    /// The `str` of the string body `input[start..end]`, which holds an
    /// escape (a new reference, or null with an exception set). In an
    /// ASCII input, written straight from stage 1's escape offsets: a body
    /// whose escapes are all two bytes long (`\"`, `\/`, `\n`, ...; not
    /// `\u`) through [`Builder::ascii_escaped`] (a few instructions fewer
    /// per escape: twitter_timeline's URLs), any other through
    /// [`new_str_escapes`] (gsoc-2018's long texts, twitterescaped's `\u`
    /// runs). In a non-ASCII input, unescaped into the scratch buffer,
    /// then made as an unescaped body is (measured cheaper there than
    /// `new_str_escapes`' census of the raw body and decode run by run:
    /// twitter.json, the loads_many batch). Out of line: the string code
    /// inlined at every key and value stays a test and a call.
    ///
    /// # Safety
    /// The interpreter must be attached; the body was validated, and
    /// `next_escape` is the index of its first escape.
    #[cfg(not(feature = "abi3"))]
    #[inline(never)]
    unsafe fn escaped_string(&mut self, start: usize, end: usize) -> *mut ffi::PyObject {
        if !self.ascii {
            let text = unescape_validated(&self.input[start..end], &mut self.scratch);
            // SAFETY: the interpreter is attached; a validated body
            // unescapes to valid UTF-8.
            return unsafe { utf8_text_str(text).unwrap_or_else(|| ascii_text_str(text)) };
        }
        // SAFETY: as the caller guarantees.
        if let Some(p) = unsafe { self.ascii_escaped(start, end) } {
            return p;
        }
        let escapes = self.escapes.get(self.next_escape..).unwrap_or(&[]);
        // SAFETY: as the caller guarantees; `escapes` start at the body's
        // first escape, and the input is ASCII.
        unsafe { new_str_escapes(self.input, start, end, escapes, &mut self.scratch) }
    }

    /// The `str` of the string body `input[start..end]` (ASCII, with at
    /// least one escape, the first at `escapes[next_escape]`) when every
    /// escape in it is two bytes long (not `\u`): a new reference, or
    /// null with an exception set; `None` for a `\u` escape (the caller
    /// then writes it through [`new_str_escapes`]). Its length is the body's
    /// less one byte per escape, so the `str` is made at once and filled
    /// from the escape offsets stage 1 found: the plain runs between them
    /// copied, each escape's byte written (no search, no second copy, no
    /// ASCII check of the result: on amazon_cellphones.ndjson, titles with
    /// `\"`).
    ///
    /// # Safety
    /// The interpreter must be attached; the body was validated, and
    /// `next_escape` is the index of its first escape.
    #[cfg(not(feature = "abi3"))]
    #[inline(always)]
    unsafe fn ascii_escaped(&mut self, start: usize, end: usize) -> Option<*mut ffi::PyObject> {
        let input = self.input;
        let first = self.next_escape;
        let mut n = 0;
        for &e in self.escapes.get(first..)? {
            let e = e as usize;
            if e >= end {
                break;
            }
            if input.get(e + 1) == Some(&b'u') {
                return None;
            }
            n += 1;
        }
        let len = end - start - n;
        // SAFETY: the interpreter is attached.
        let p = unsafe { ffi::PyUnicode_New(len as ffi::Py_ssize_t, 127) };
        if p.is_null() {
            return Some(p);
        }
        // SAFETY: `p` is a new compact ASCII string of `len` bytes, which
        // no one else sees before we return it. The escapes are in order,
        // inside the body and two bytes each (validated; none overlaps the
        // next), so the runs and escaped bytes written add up to exactly
        // `len` bytes: every write stays inside its data.
        unsafe {
            let dst = ascii_data(p);
            let (mut from, mut o) = (start, 0);
            for &e in &self.escapes[first..first + n] {
                let e = e as usize;
                let run = &input[from..e];
                copy_short(run, dst.add(o));
                o += run.len();
                *dst.add(o) = match input[e + 1] {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'b' => 0x08,
                    b'f' => 0x0C,
                    // `"`, `\\`, `/`.
                    c => c,
                };
                o += 1;
                from = e + 2;
            }
            copy_short(&input[from..end], dst.add(o));
        }
        Some(p)
    }

    /// The key whose opening quote is structural `k` (a new reference, or
    /// null with an exception set).
    ///
    /// # Safety
    /// The interpreter must be attached.
    #[inline(always)]
    unsafe fn key(&mut self, k: usize) -> *mut ffi::PyObject {
        let input = self.input;
        // SAFETY: token `k` is a key's opening quote in an index built
        // strictly from `input` (the caller's contract).
        let Some((start, end)) = (unsafe { string_body(input, self.s, k) }) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `start <= end <= input.len()` (`string_body`).
        let body = unsafe { input.get_unchecked(start..end) };
        if body.len() > CACHE_KEY_MAX || self.cache.is_none() {
            // SAFETY: as in `string`.
            return unsafe { self.string(start, end) }.unwrap_or(std::ptr::null_mut());
        }
        let cache = match self.cache.as_deref_mut() {
            Some(c) => c,
            None => return std::ptr::null_mut(),
        };
        // First the slot of the key that followed the last key found, the
        // last time that one was found (see `key_cache`): keys come in the
        // same order in objects of one shape, and a key found there is not
        // hashed.
        let p = usize::from(cache.next[cache.last]);
        let slot = &cache.slots[p];
        if !slot.obj.is_null()
            && slot.tag as u8 as usize == body.len()
            && short_eq(&slot.key[..body.len()], body)
        {
            let obj = slot.obj;
            cache.last = p;
            // SAFETY: the cache owns a reference; we hand out a new one.
            unsafe { ffi::Py_INCREF(obj) };
            return obj;
        }
        let h = hash_key(body);
        let i = h as usize & (CACHE_SLOTS - 1);
        let t = tag(h, body.len());
        let slot = &cache.slots[i];
        if !slot.obj.is_null() && slot.tag == t && short_eq(&slot.key[..body.len()], body) {
            let obj = slot.obj;
            cache.follow(i);
            // SAFETY: the cache owns a reference; we hand out a new one.
            unsafe { ffi::Py_INCREF(obj) };
            return obj;
        }
        // The other slot of the pair (see `key_cache`): two keys of a
        // document whose hashes pick the same slot both stay cached.
        let alt = &cache.slots[i ^ 1];
        if !alt.obj.is_null() && alt.tag == t && short_eq(&alt.key[..body.len()], body) {
            let obj = alt.obj;
            cache.follow(i ^ 1);
            // SAFETY: the cache owns a reference; we hand out a new one.
            unsafe { ffi::Py_INCREF(obj) };
            return obj;
        }
        // SAFETY: as in `string`.
        let Some(obj) = (unsafe { self.string(start, end) }) else {
            return std::ptr::null_mut();
        };
        let cache = match self.cache.as_deref_mut() {
            Some(c) => c,
            None => return obj,
        };
        // A miss takes the first slot; the entry it held moves to the
        // other slot of the pair, whose entry is released. So the two
        // keys used last of those that pick this pair stay cached, even
        // when other keys took both slots before them.
        if !cache.slots[i].obj.is_null() {
            cache.slots.swap(i, i ^ 1);
        }
        let old = cache.slots[i].obj;
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
        // (Not `copy_from_slice`: a `memcpy` call per miss.)
        let dst = &mut slot.key[..body.len()];
        // SAFETY: `dst` is `body.len()` writable bytes of the slot, which
        // cannot overlap the input.
        unsafe { copy_short(body, dst.as_mut_ptr()) };
        slot.tag = t;
        slot.obj = obj;
        cache.follow(i);
        obj
    }

    /// A string value with body `input[start..end]`: through the value
    /// table of the cache when the builder shares short values
    /// (`SHARE`, see [`key_cache`](mod@super::key_cache)), else a
    /// new `str`.
    ///
    /// # Safety
    /// The interpreter must be attached; the body was validated (and lies
    /// in `input`, as for [`Builder::string`]).
    #[inline(always)]
    unsafe fn value_string(&mut self, start: usize, end: usize) -> Option<*mut ffi::PyObject> {
        if SHARE && end - start <= CACHE_VALUE_MAX && self.cache.is_some() {
            // SAFETY: as the caller guarantees; the body is short enough.
            let p = unsafe { self.cached_value(start, end) };
            return (!p.is_null()).then_some(p);
        }
        // SAFETY: as the caller guarantees.
        unsafe { self.string(start, end) }
    }

    /// The `str` of the string value body `input[start..end]` (at most
    /// `CACHE_VALUE_MAX` bytes) through the cache's value table (a new
    /// reference, or null with an exception set): the lookup of
    /// [`Builder::key`], in the other table. (Not shared with `key`: the
    /// key lookup of `loads` ran about 1% more instructions on twitter.json
    /// as one generic function.)
    ///
    /// # Safety
    /// The interpreter must be attached; the body was validated (and lies
    /// in `input`, as for [`Builder::string`]) and is at most
    /// `CACHE_KEY_MAX` bytes long.
    #[inline(always)]
    unsafe fn cached_value(&mut self, start: usize, end: usize) -> *mut ffi::PyObject {
        debug_assert!(start <= end && end <= self.input.len());
        // SAFETY: in bounds, as the caller guarantees.
        let body = unsafe { self.input.get_unchecked(start..end) };
        let h = hash_key(body);
        // (The callers checked that there is a cache.)
        let Some(cache) = self.cache.as_deref_mut() else {
            return std::ptr::null_mut();
        };
        let table = &cache.values;
        let i = h as usize & (CACHE_VALUE_SLOTS - 1);
        let t = tag(h, body.len());
        let slot = &table[i];
        if !slot.obj.is_null() && slot.tag == t && short_eq(&slot.key[..body.len()], body) {
            // SAFETY: the cache owns a reference; we hand out a new one.
            unsafe { ffi::Py_INCREF(slot.obj) };
            return slot.obj;
        }
        let old = slot.obj;
        // SAFETY: as the caller guarantees.
        let Some(obj) = (unsafe { self.string(start, end) }) else {
            return std::ptr::null_mut();
        };
        let Some(cache) = self.cache.as_deref_mut() else {
            return obj;
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
        let slot = &mut cache.values[i];
        // (Not `copy_from_slice`: a `memcpy` call per miss.)
        let dst = &mut slot.key[..body.len()];
        // SAFETY: `dst` is `body.len()` writable bytes of the slot, which
        // cannot overlap the input.
        unsafe { copy_short(body, dst.as_mut_ptr()) };
        slot.tag = t;
        slot.obj = obj;
        obj
    }
}

/// The run of literal elements of a flat array from element `i` on:
/// `toks` are its element tokens, each followed by its `,` or closer. Each
/// literal whose first 8 bytes can be read, tested from one word
/// ([`literal_word`]), is stored into its slot of `list` (a new reference
/// to its singleton in `lits`). Returns the first element that is not
/// such a literal (or the length). Out of line, so that the loop keeps its
/// pointers in registers (inside [`Builder::flat_array`], with the leaf's
/// code around it, it spilled them: ~50 Ir per element, here ~20).
///
/// # Safety
/// The interpreter must be attached; `list` is a list with a slot per
/// element of `toks`, those from `i` on empty; `lits` are [`literals`].
#[inline(never)]
unsafe fn literal_run(
    input: &[u8],
    toks: &[u32],
    list: *mut ffi::PyObject,
    i: ffi::Py_ssize_t,
    lits: &[*mut ffi::PyObject; 4],
) -> ffi::Py_ssize_t {
    let mut p = 2 * i as usize;
    while p < toks.len() {
        let sk = toks[p] as usize;
        if sk + 8 > input.len() {
            break;
        }
        // SAFETY: `input` holds the 8 bytes from `sk` on.
        let w = u64::from_le(unsafe { input.as_ptr().add(sk).cast::<u64>().read_unaligned() });
        // `true` or `null` then a comma, the common element, with no
        // table load (what `literal_word` accepts for those words); the
        // rest through `literal_word`.
        const TRUE: u32 = u32::from_le_bytes(*b"true");
        const NULL: u32 = u32::from_le_bytes(*b"null");
        let head = w as u32;
        if !(((head == TRUE || head == NULL) && (w >> 32) as u8 == b',') || literal_word(w)) {
            break;
        }
        let lit = lits[usize::from(w as u8 >> 3 & 3)];
        // SAFETY: the interpreter is attached; slot `p / 2` of `list`
        // exists and is empty, and takes the new reference to `lit`.
        unsafe {
            ffi::Py_INCREF(lit);
            list_set(list, (p / 2) as ffi::Py_ssize_t, lit);
        }
        p += 2;
    }
    (p / 2) as ffi::Py_ssize_t
}

/// The singletons of the literals by bits 3 and 4 of their first byte
/// (`f` 0x66, `n` 0x6E, `t` 0x74: 0, 1, 2), which [`Builder::leaf`] picks
/// with no branch.
///
/// # Safety
/// The interpreter must be attached.
#[inline(always)]
unsafe fn literals() -> [*mut ffi::PyObject; 4] {
    // SAFETY: the interpreter is attached; the singletons are alive.
    unsafe {
        [
            ffi::Py_False(),
            ffi::Py_None(),
            ffi::Py_True(),
            ffi::Py_False(),
        ]
    }
}

/// The body `(start, end)` (between the quotes) of the string whose
/// opening quote is token `k` of `s`, or `None` when no closing quote
/// precedes the next token (see [`string_close`]). Usually the closing
/// quote is the byte just before the next token (a key before its colon,
/// a value before its `,` or closer): that byte is read without bounds
/// tests, the index vouching for both offsets; anything else goes through
/// `string_close`. (The checked reads cost about five instructions per
/// string, keys and values alike.)
///
/// # Safety
/// `s` is an index built strictly from `input` and token `k` an opening
/// quote in it (not the sentinel): token `k + 1` then exists, and its
/// offset is at most `input.len()`.
#[inline(always)]
unsafe fn string_body(input: &[u8], s: &[u32], k: usize) -> Option<(usize, usize)> {
    debug_assert!(k + 1 < s.len() && s[k + 1] as usize <= input.len());
    // SAFETY: token `k` is not the sentinel, so token `k + 1` exists (the
    // caller's contract).
    let (open, next) = unsafe {
        (
            *s.get_unchecked(k) as usize,
            *s.get_unchecked(k + 1) as usize,
        )
    };
    // SAFETY: `open + 1 < next <= input.len()`, so `next - 1` is a byte of
    // `input`.
    if next > open + 1 && unsafe { *input.get_unchecked(next - 1) } == b'"' {
        return Some((open + 1, next - 1));
    }
    string_close(input, s, k).map(|close| (open + 1, close))
}

/// The first byte of token `k` of the token index `s` over `input`, with
/// no bounds tests: the builder reads each value's first byte, and every
/// token but the sentinel is the offset of a byte of `input`.
///
/// # Safety
/// `s` is a token index built strictly from `input`, and token `k` is not
/// its sentinel (a value token: the builder's walk only reads those).
#[inline(always)]
unsafe fn token_byte(input: &[u8], s: &[u32], k: usize) -> u8 {
    debug_assert!(k + 1 < s.len() && (s[k] as usize) < input.len());
    // SAFETY: as the caller guarantees.
    unsafe { *input.get_unchecked(*s.get_unchecked(k) as usize) }
}

/// Whether only whitespace lies between a token's end and the structural
/// at `sk` (usually nothing at all).
#[inline(always)]
fn ends_at(input: &[u8], end: usize, sk: usize) -> bool {
    end == sk || skip_ws(input, end) == sk
}

/// An integer beyond i64 (a new reference, or `None` with an exception set).
#[cold]
fn big_number(py: Python<'_>, text: &str) -> Option<*mut ffi::PyObject> {
    big_int(py, text)
        .map(Py::into_ptr)
        .map_err(|e| e.restore(py))
        .ok()
}

/// The `str` of a string body's text (unescaped, valid UTF-8) in an input
/// that is not all ASCII: `Some` of a new reference (or of null with an
/// exception set) for a short ASCII text ([`short_ascii`]: no loop) or a
/// text beyond ASCII (counted and decoded, [`new_str_census`]); `None` for
/// a longer ASCII text, which the caller copies ([`ascii_text_str`]: one
/// copy shared with an ASCII input's bodies). The one tail of
/// [`Builder::string`] and [`Builder::escaped_string`].
///
/// # Safety
/// The interpreter must be attached; `text` is valid UTF-8.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
unsafe fn utf8_text_str(text: &[u8]) -> Option<*mut ffi::PyObject> {
    // SAFETY: as the caller guarantees.
    unsafe {
        if let Some(p) = short_ascii::<false>(text) {
            return Some(p);
        }
        (!text.is_ascii()).then(|| new_str_census(text))
    }
}

/// The `str` of an ASCII `text` (a new reference, or null with an
/// exception set): `PyUnicode_New(n, 127)` makes a compact ASCII string
/// whose data holds `n` bytes (plus the NUL it already wrote), which is
/// filled before anyone sees it.
///
/// # Safety
/// The interpreter must be attached; `text` is ASCII.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
unsafe fn ascii_text_str(text: &[u8]) -> *mut ffi::PyObject {
    // SAFETY: as the caller guarantees; `p` is a new compact ASCII string
    // of `text.len()` characters.
    unsafe {
        let p = ffi::PyUnicode_New(text.len() as ffi::Py_ssize_t, 127);
        if !p.is_null() {
            copy_short(text, ascii_data(p));
        }
        p
    }
}
