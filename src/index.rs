//! Stage 2: grammar validation and the container table.
//!
//! (to be written)

use crate::error::Error;
use crate::scan::Scan;

/// Parse options.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Check only structure and depth; value errors surface when read.
    pub lazy: bool,
    /// Maximum container nesting; deeper input is `DepthExceeded`.
    pub max_depth: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { lazy: false, max_depth: 1024 }
    }
}

/// The structural index of one document. It does not hold the input: pair it
/// with the same bytes in a [`crate::Doc`].
#[derive(Debug)]
pub struct Index {
    pub(crate) scan: Scan,
    pub(crate) lazy: bool,
}

impl Index {
    /// Scan and (in strict mode) fully validate `input`.
    pub fn build(input: &[u8], opts: &Options) -> Result<Index, Error> {
        let _ = (input, opts);
        todo!()
    }

    /// Bytes of memory the index holds (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        todo!()
    }
}
