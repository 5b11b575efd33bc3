//! The Python edge (PyO3 only): `qjson._qjson`.
//!
//! - `input`: holding bytes / str / buffers without a copy
//! - `errors`: core errors to `JSONDecodeError`, `PathError`, `TypeError`
//! - `convert`: core values to Python objects
//! - `doc`: `parse`, `Doc`, `Cursor`
//! - `path`: `Path` (a compiled path) and the path argument of getters
//! - `batch`: `get_all` and `get_many`
//! - `view`: lazy `Object` / `Array` views with an edit overlay, `decode`,
//!   `materialize`, and the passthrough writer `dumps` uses
//! - `loads`: eager `loads` and `validate`
//! - `dumps`: `dumps`
//! - `patch`: `patch` (RFC 6902), `merge_patch` (RFC 7396), `incr`, `mul`
//! - `many`: `parse_many`, `open_many`, `loads_many` (many documents)
//! - `stack`: the stack headroom check of the walks that recurse per level
//! - `slots`: raw CPython entry points for the hottest reads and for
//!   `Object[key] = value` (version-specific builds), installed over PyO3's by
//!   `view::install_entries`, `view::install_assign` and `doc::install_entries`

mod batch;
mod convert;
mod doc;
mod dumps;
mod errors;
mod input;
mod loads;
mod many;
mod patch;
mod path;
mod share;
#[cfg(not(feature = "abi3"))]
mod slots;
mod stack;
mod view;

use pyo3::prelude::*;

/// The scan backend in use ("avx512", "avx2", "neon" or "scalar").
#[pyfunction]
fn backend() -> &'static str {
    crate::scan::active_backend().name()
}

// The unsafe code here (borrowed dict/list items in dumps, the key cache in
// loads, copying a bytearray) relies on the GIL: declare it for
// free-threaded builds too.
#[pymodule(gil_used = true)]
#[pyo3(name = "_qjson")]
fn qjson_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(doc::parse, m)?)?;
    m.add_function(wrap_pyfunction!(view::materialize, m)?)?;
    m.add_function(wrap_pyfunction!(view::decode, m)?)?;
    m.add_function(wrap_pyfunction!(view::_ever_edited, m)?)?;
    m.add_function(wrap_pyfunction!(backend, m)?)?;
    m.add_class::<doc::Doc>()?;
    m.add_class::<doc::Cursor>()?;
    m.add_class::<path::Path>()?;
    m.add_class::<view::Object>()?;
    m.add_class::<view::Array>()?;
    #[cfg(not(feature = "abi3"))]
    {
        view::install_entries(m.py())?;
        view::install_assign(m.py())?;
        doc::install_entries(m)?;
    }
    loads::register(m)?;
    dumps::register(m)?;
    patch::register(m)?;
    many::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
