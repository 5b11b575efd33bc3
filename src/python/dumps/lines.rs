//! `dumps_many`: JSON Lines, every object of an iterable written into one
//! output buffer, each followed by `\n`.
//!
//! One [`Serializer`] serves the whole iterable: its output buffer is the
//! result (a `bytes` sized from the previous call's output, as for
//! `dumps`; see `out.rs`), so a document's bytes are written once, where
//! `dumps` per object and a join would write them twice and allocate a
//! `bytes` per object. Views pass through as in `dumps` (their untouched
//! parts copied from the input bytes), only into the shared buffer rather
//! than assembled as segments of their own.

#[cfg(not(feature = "abi3"))]
use super::out::{self, Out};
use super::serializer::Serializer;
#[cfg(not(feature = "abi3"))]
use crate::encode::Buf;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The output-size hint slot of `dumps_many` results (see `out::slot`):
/// one of their own, so a large stream does not size single documents.
#[cfg(not(feature = "abi3"))]
fn hint_slot() -> usize {
    out::slot(usize::MAX, usize::MAX)
}

/// `dumps(obj, **options) + b"\n"` of every object of `iterable`, as one
/// `bytes`.
#[pyfunction]
#[pyo3(signature = (iterable, *, indent = None, sort_keys = false, default = None))]
pub(crate) fn dumps_many<'py>(
    py: Python<'py>,
    iterable: &Bound<'py, PyAny>,
    indent: Option<isize>,
    sort_keys: bool,
    default: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    #[cfg(not(feature = "abi3"))]
    let out = Out::new(py, hint_slot())?;
    #[cfg(feature = "abi3")]
    let out = Vec::new();
    let mut ser = Serializer::new(py, out, indent, sort_keys, default);
    for obj in iterable.try_iter()? {
        let obj = obj?;
        if indent.is_some() {
            ser.value::<true>(obj.as_ptr())?;
        } else {
            ser.value::<false>(obj.as_ptr())?;
        }
        ser.out.push(b'\n');
    }
    #[cfg(not(feature = "abi3"))]
    return ser.out.finish(py);
    #[cfg(feature = "abi3")]
    return Ok(PyBytes::new(py, &ser.out));
}
