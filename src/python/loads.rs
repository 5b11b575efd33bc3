//! `qjson.loads` and `qjson.validate`.
//!
//! # Algorithm
//!
//! Both accept and reject exactly what `parse` ([`Index::build`]) does, and
//! report the same error offsets. `validate` stops there. `loads` then
//! makes one left-to-right pass over an index and builds the Python objects
//! directly, with no intermediate tree ([`builder`]).
//!
//! The index is, when the CPU has a token scan (AVX-512, AVX2), the token
//! index of `validate`'s fast path (`index/tokens.rs`, `index/tokens/eager.rs`: stage 1 also marks
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
//!   closer (pop); in the token index, a container that holds no container
//!   (marked by the walk) is filled by a loop of its own, with no frame;
//! - object members go through `PyDict_SetItem` (or, for a key whose `str`
//!   hash is known, as every cached key's is, `_PyDict_SetItem_KnownHash`
//!   on version-specific builds before 3.13), so a repeated key keeps its
//!   first position and its last value, as `json.loads` does;
//! - keys of up to `CACHE_KEY_MAX` bytes go through a process-wide cache
//!   of `CACHE_SLOTS` `str` objects (direct-mapped on a hash of the raw
//!   key bytes), as orjson does: a repeated key costs no allocation, and its
//!   `str` hash is already computed when the dict needs it ([`key_cache`](mod@key_cache));
//!   `loads_many` also shares string values of up to 48 bytes through a
//!   second table of that cache (lines repeat the same short values);
//! - strings without a backslash are handed to `PyUnicode_FromStringAndSize`
//!   as they are (version-specific builds: an ASCII one is one
//!   `PyUnicode_New` and a copy); in an ASCII input, a string with
//!   escapes is written straight into its `str` from stage 1's escape
//!   offsets (the plain runs between them copied or widened, each escape
//!   read once: `objects::new_str_escapes`, or a `u32` buffer narrowed
//!   into the `str` when the escapes are dense and beyond ASCII); in
//!   others (and in the `abi3` build) it is unescaped (plain runs copied 8
//!   bytes a step, see
//!   [`unescape_validated`](crate::decode::string::unescape_validated))
//!   into a scratch buffer kept across calls first.
//!
//! - documents with at least `GC_PAUSE_MIN` containers are built with the
//!   cyclic garbage collector paused (when it was enabled): collections our
//!   own allocations would trigger can free nothing, but each would walk
//!   the half-built tree again ([`gc`]).
//!
//! Everything the walk reads was validated, so it does not re-check the
//! grammar; the only failures left are Python's (out of memory), after which
//! every object built so far is released.
//!
//! # Files
//!
//! This file holds the entry points (`loads`, `validate`, and
//! [`from_index`] for `loads_many`) and the choice of index. Then:
//!
//! - [`builder`]: the one pass that builds the objects;
//! - [`objects`]: the C-API constructors it uses (str, dict, list);
//! - [`key_cache`](mod@key_cache): the cache of key strings;
//! - [`spare`]: the builder's buffers kept between calls;
//! - [`gc`]: pausing the cyclic collector.
//!
//! String unescaping is core code: `crate::decode::string`.

mod builder;
mod gc;
mod key_cache;
pub(crate) mod objects;
mod spare;

use super::errors::decode_error;
use super::input::Input;
use crate::index::eager::LoadsIndex;
use crate::index::{Container, Index, Options};
use builder::{build, Builder};
pub(crate) use gc::gc_paused;
pub(crate) use key_cache::{key_cache, KeyCache};
use pyo3::ffi;
use pyo3::prelude::*;

/// Inputs at least this large are validated with the GIL released.
const DETACH_MIN: usize = 64 * 1024;

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
    let mut cache = key_cache();
    let p = match tokens {
        Some(t) => from_loads_index(py, bytes, t, cache.as_deref_mut(), false),
        None => {
            let (index, escapes) = index(py, &input, max_depth, false)?;
            from_index(py, bytes, &index, &escapes, cache.as_deref_mut(), false)
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
/// exception is set. `share_values`: short string values go through the
/// cache too (`loads_many`, see [`key_cache`](mod@key_cache)).
pub(crate) fn from_index(
    py: Python<'_>,
    bytes: &[u8],
    index: &Index,
    escapes: &[u32],
    cache: Option<&mut KeyCache>,
    share_values: bool,
) -> Result<*mut ffi::PyObject, bool> {
    let (s, lens, n) = (
        &index.structurals,
        &index.containers[..],
        index.containers.len(),
    );
    let ascii = !index.non_ascii;
    if share_values {
        let b = Builder::<[Container], false, true>::new(py, bytes, s, lens, escapes, ascii, cache);
        build(py, b, n)
    } else {
        let b =
            Builder::<[Container], false, false>::new(py, bytes, s, lens, escapes, ascii, cache);
        build(py, b, n)
    }
}

/// The Python objects of `bytes` from its token index (scalars unchecked:
/// `Err(true)` when one failed its check, `Err(false)` when a Python
/// exception is set). The index's buffers go back to the thread for reuse.
fn from_loads_index(
    py: Python<'_>,
    bytes: &[u8],
    t: LoadsIndex,
    cache: Option<&mut KeyCache>,
    share_values: bool,
) -> Result<*mut ffi::PyObject, bool> {
    let (s, lens, esc, ascii) = (&t.structurals, &t.lens[..], &t.escapes, !t.non_ascii);
    let p = if share_values {
        let b = Builder::<[u32], true, true>::new(py, bytes, s, lens, esc, ascii, cache);
        build(py, b, t.lens.len())
    } else {
        let b = Builder::<[u32], true, false>::new(py, bytes, s, lens, esc, ascii, cache);
        build(py, b, t.lens.len())
    };
    t.give_back();
    p
}

/// The fast path of `loads` alone, for one document of a stream
/// (`loads_many` tries it on each line): the token index, then the
/// builder. `None` when it does not answer (the input is not known to be
/// valid, a scalar failed its check, or the CPU has no token scan): the
/// caller then takes its exact path, which finds the error if there is
/// one. `Some(Err(()))` when a Python exception is set. `share_values` as
/// for [`from_index`].
pub(crate) fn from_tokens(
    py: Python<'_>,
    bytes: &[u8],
    max_depth: usize,
    cache: Option<&mut KeyCache>,
    share_values: bool,
) -> Option<Result<*mut ffi::PyObject, ()>> {
    let t = crate::index::eager::for_loads(bytes, max_depth)?;
    match from_loads_index(py, bytes, t, cache, share_values) {
        Ok(p) => Some(Ok(p)),
        Err(true) => None,
        Err(false) => Some(Err(())),
    }
}

/// The Python objects of one line's document from a window's token index
/// (`loads_many`, see [`LinesIndex`](crate::index::eager::LinesIndex)):
/// `Err(true)` when a scalar failed its check (the caller then takes its
/// exact path), `Err(false)` when a Python exception is set. Short string
/// values are shared (see [`from_index`]).
pub(crate) fn from_line(
    py: Python<'_>,
    t: &crate::index::eager::LineTokens<'_>,
    cache: Option<&mut KeyCache>,
) -> Result<*mut ffi::PyObject, bool> {
    let (s, lens, esc, ascii) = (t.structurals, t.lens, t.escapes, !t.non_ascii);
    let b = Builder::<[u32], true, true>::new(py, t.input, s, lens, esc, ascii, cache);
    build(py, b, lens.len())
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

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    Ok(())
}
