//! Numbers and literals: RFC 8259 grammar, exact integers, correctly rounded
//! floats.

use crate::error::{Error, JsonType};

/// A decoded JSON number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number<'a> {
    /// An integer (no fraction, no exponent) that fits in i64.
    Int(i64),
    /// An integer beyond i64: its exact decimal text (e.g. `-123456789012345678901`).
    BigInt(&'a str),
    /// A number with a fraction or exponent, correctly rounded.
    Float(f64),
}

/// Check a scalar token (already trimmed of whitespace): a number, `true`,
/// `false` or `null`. Returns its type; the error offset is `base` plus the
/// position of the first bad byte.
pub fn check_scalar(text: &[u8], base: usize) -> Result<JsonType, Error> {
    let _ = (text, base);
    todo!("helper C")
}

/// Parse a number token (validated or not; invalid text is `InvalidNumber`).
pub fn parse_number(text: &[u8], base: usize) -> Result<Number<'_>, Error> {
    let _ = (text, base);
    todo!("helper C")
}
