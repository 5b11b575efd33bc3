//! Decoding of scalar values found between structurals: strings (escapes,
//! surrogate pairs, UTF-8) and numbers (exact integers, correctly rounded
//! floats), plus the literal and number grammar checks used by strict
//! validation.

pub mod number;
pub mod string;

pub use number::Number;
