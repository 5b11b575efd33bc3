//! Encoding JSON text: string escaping and number formatting, writing into
//! one growing `Vec<u8>`.
//!
//! - [`escape`]: a JSON string literal from UTF-8 text. Blocks of 16 bytes
//!   are copied and tested for `"`, `\` and control bytes in one step (SSE2
//!   on x86_64, a SWAR word elsewhere); only the bytes that need it are
//!   escaped, with the short forms (`\n`, `\"`, ...) where JSON has one and
//!   `\u00XX` otherwise. Everything else, DEL and non-ASCII included, is
//!   copied as it is, so valid UTF-8 in gives valid UTF-8 out.
//! - [`number`]: integers written in place two digits at a time, floats
//!   with `zmij` (shortest text that round-trips; the same text as orjson:
//!   `1.0`, `1e+16`, `1e-7`, `0.00001`, `-0.0`).
//!
//! The host layers (Python's `dumps`) decide what to write; this module only
//! knows bytes.

pub mod escape;
pub mod number;

pub use escape::write_str;
pub use number::{write_f64, write_i64, write_u64};
