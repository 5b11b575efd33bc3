//! Pausing the cyclic garbage collector while a large document is built.
//!
//! No cyclic collection can free anything while the walk only adds
//! reachable objects, and each one our allocations trigger would walk the
//! half-built tree again: documents with at least [`GC_PAUSE_MIN`]
//! containers are built with the collector paused (when it was enabled).
//! Through the `gc` module, so the abi3-py39 build can do it too; the calls
//! cost well under 1% there. `loads_many` pauses it for a whole batch.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Documents with at least this many containers build with the cyclic
/// collector paused.
pub(super) const GC_PAUSE_MIN: usize = 1024;

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
