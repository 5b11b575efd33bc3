//! JSON string bodies: unescaping and validation.
//!
//! A string body is the bytes between the quotes. Bodies without a backslash
//! decode to a borrowed `&str` (zero-copy); others are unescaped into an
//! owned `String`.

use crate::error::Error;
use std::borrow::Cow;

/// Decode a string body. `base` is the input offset of `raw[0]` and is added
/// to error offsets. Rejects raw control bytes, unknown escapes, bad `\u`
/// escapes, lone surrogates; checks UTF-8 when `check_utf8`.
pub fn decode_str(raw: &[u8], base: usize, check_utf8: bool) -> Result<Cow<'_, str>, Error> {
    let _ = (raw, base, check_utf8);
    todo!("helper C")
}

/// Validate the escape sequence whose backslash is at `input[at]`. Returns the
/// number of bytes it spans: 2, 6, or 12 for a `\uD8xx\uDCxx` surrogate pair.
/// A lone surrogate is `LoneSurrogate`.
pub fn check_escape(input: &[u8], at: usize) -> Result<usize, Error> {
    let _ = (input, at);
    todo!("helper C")
}

/// Whether the string body `raw` (possibly escaped) equals the unescaped key.
pub fn body_eq(raw: &[u8], key: &[u8]) -> bool {
    let _ = (raw, key);
    todo!("helper C")
}
