//! qjson: parse a big JSON body, read a few fields, pass the rest on.
//!
//! The data path:
//!
//! ```text
//! bytes -> scan (stage 1: structural index, SIMD)
//!       -> index (stage 2: grammar + matching closers, container table)
//!       -> document (input + index + child tables)
//!       -> doc / cursor / path (reads)  -> decode (strings, numbers)
//!                                       | edit (overlay of edits, written back
//!                                         with untouched bytes copied) -> encode
//!       -> edges: python/ (PyO3 glue: Doc, views, loads/dumps)
//!                 capi/   (C ABI, include/qjson.h) + python/qjson/qjson.lua (LuaJIT FFI)
//! ```
//!
//! `lex` holds the whitespace and string-end helpers that the index and the
//! reads share; `cpu` picks every SIMD kernel's build once per process.
//!
//! The core knows nothing of Python or Lua: `python/` holds the PyO3 glue
//! (feature `python`, on by default).
//!
//! ```
//! use qjson::{Document, Options};
//! let input = br#"{"model": "gpt-4o", "messages": [{"role": "user"}]}"#;
//! let document = Document::parse(&input[..], &Options::default()).unwrap();
//! let doc = document.doc();
//! assert_eq!(doc.get_str(doc.root(), "messages[0].role").unwrap(), "user");
//! ```

pub mod capi;
pub mod compact;
pub mod cpu;
pub mod decode;
pub mod doc;
pub mod document;
pub mod edit;
pub mod encode;
pub mod error;
pub mod index;
mod lex;
pub mod many;
pub mod patch;
pub mod path;
pub mod scan;

/// The randomized unit tests' generator: xorshift64 from `seed`, one value
/// per call (the tests take it modulo what they need).
#[cfg(test)]
pub(crate) fn test_rng(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

#[cfg(feature = "python")]
mod python;

pub use decode::Number;
pub use doc::{Cursor, DistinctItems, Doc, Value};
pub use document::Document;
pub use error::{AccessError, Error, ErrorKind, JsonType};
pub use index::{Index, Options};
