//! Errors are data: a kind plus a byte offset, until the host edge (Python or
//! the C ABI) turns them into exceptions or error codes.
//!
//! [`Error`] is a syntax or validation error in the input (Python's
//! `JSONDecodeError`). [`AccessError`] is what a read by path can raise: a
//! decode error met lazily, a missing path, a malformed path, or a value of
//! the wrong type.

use std::fmt;

/// What went wrong while scanning, validating or decoding JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input holds nothing but whitespace.
    Empty,
    /// The input ended where more was required.
    UnexpectedEnd,
    /// A value (object, array, string, number, `true`, `false`, `null`) was expected.
    ExpectedValue,
    /// An object key (a string) was expected.
    ExpectedKey,
    /// A `:` was expected after an object key.
    ExpectedColon,
    /// A `,` or `}` was expected inside an object.
    ExpectedObjectCommaOrEnd,
    /// A `,` or `]` was expected inside an array.
    ExpectedArrayCommaOrEnd,
    /// Something other than whitespace follows the top-level value.
    TrailingContent,
    /// A number does not follow the RFC 8259 grammar.
    InvalidNumber,
    /// `true`, `false` or `null` misspelt, or a stray character.
    InvalidLiteral,
    /// A backslash escape that JSON does not define.
    InvalidEscape,
    /// `\u` not followed by four hex digits.
    InvalidUnicodeEscape,
    /// A `\uD800`-`\uDFFF` escape that is not part of a valid surrogate pair.
    LoneSurrogate,
    /// A raw control character (U+0000-U+001F) inside a string.
    ControlCharacter,
    /// The input is not valid UTF-8.
    InvalidUtf8,
    /// A string is not closed before the end of the input.
    UnterminatedString,
    /// A backslash outside any string.
    StrayBackslash,
    /// Containers nest deeper than `max_depth`.
    DepthExceeded,
    /// The input is larger than the index can address (u32 offsets).
    TooLarge,
    /// A host string (a Python `str`) holds a lone surrogate code point, so
    /// it has no UTF-8 form; the offset is the surrogate's in the string's
    /// UTF-8 form with surrogates encoded as three bytes each.
    SurrogateInStr,
    /// Invalid input whose first bytes say UTF-16 (a byte order mark, or a
    /// zero byte in every other position, as `json.detect_encoding` reads
    /// them); reported at offset 0.
    Utf16Input,
    /// The same for UTF-32.
    Utf32Input,
}

impl ErrorKind {
    /// A stable, human-readable message saying what was expected.
    pub fn message(self) -> &'static str {
        match self {
            ErrorKind::Empty => "Expecting value: empty input",
            ErrorKind::UnexpectedEnd => "Unexpected end of input",
            ErrorKind::ExpectedValue => "Expecting value",
            ErrorKind::ExpectedKey => "Expecting property name enclosed in double quotes",
            ErrorKind::ExpectedColon => "Expecting ':' delimiter",
            ErrorKind::ExpectedObjectCommaOrEnd => "Expecting ',' or '}' in object",
            ErrorKind::ExpectedArrayCommaOrEnd => "Expecting ',' or ']' in array",
            ErrorKind::TrailingContent => "Extra data after the top-level value",
            ErrorKind::InvalidNumber => "Invalid number",
            ErrorKind::InvalidLiteral => "Expecting value: invalid literal",
            ErrorKind::InvalidEscape => "Invalid \\escape in string",
            ErrorKind::InvalidUnicodeEscape => "Invalid \\uXXXX escape: expected 4 hex digits",
            ErrorKind::LoneSurrogate => "Invalid \\uXXXX escape: lone surrogate",
            ErrorKind::ControlCharacter => "Invalid control character in string",
            ErrorKind::InvalidUtf8 => "Invalid UTF-8",
            ErrorKind::UnterminatedString => "Unterminated string",
            ErrorKind::StrayBackslash => "Backslash outside a string",
            ErrorKind::DepthExceeded => "Maximum nesting depth exceeded",
            ErrorKind::TooLarge => "Input too large: qjson addresses at most 4 GiB - 1 bytes",
            ErrorKind::SurrogateInStr => "str is not valid UTF-8: surrogates not allowed",
            ErrorKind::Utf16Input => {
                "Input is UTF-16, not UTF-8: qjson reads UTF-8 only (decode the bytes and pass the str)"
            }
            ErrorKind::Utf32Input => {
                "Input is UTF-32, not UTF-8: qjson reads UTF-8 only (decode the bytes and pass the str)"
            }
        }
    }
}

/// A JSON syntax or validation error at a byte offset of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// Byte offset into the input where the problem was found.
    pub offset: usize,
}

impl Error {
    #[cold]
    #[inline(never)]
    pub fn new(kind: ErrorKind, offset: usize) -> Error {
        Error { kind, offset }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind.message(), self.offset)
    }
}

impl std::error::Error for Error {}

/// The JSON type of a value, as `Doc.type` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

impl JsonType {
    pub fn name(self) -> &'static str {
        match self {
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::String => "string",
            JsonType::Number => "number",
            JsonType::Bool => "bool",
            JsonType::Null => "null",
        }
    }
}

/// An error from a read by path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessError {
    /// The value at the path (or on the way to it) is malformed; only in lazy mode.
    Decode(Error),
    /// No value at this path. `at` is the byte offset in the path where
    /// resolution failed (the start of the segment that was not found).
    NotFound { at: usize },
    /// The path string itself is malformed.
    PathSyntax { at: usize, reason: &'static str },
    /// A typed getter met another type.
    Type {
        expected: &'static str,
        found: JsonType,
    },
}

impl From<Error> for AccessError {
    fn from(e: Error) -> Self {
        AccessError::Decode(e)
    }
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccessError::Decode(e) => e.fmt(f),
            AccessError::NotFound { at } => {
                write!(f, "path not found (segment at path offset {at})")
            }
            AccessError::PathSyntax { at, reason } => {
                write!(f, "invalid path: {reason} at path offset {at}")
            }
            AccessError::Type { expected, found } => {
                write!(f, "expected {expected}, found {}", found.name())
            }
        }
    }
}

impl std::error::Error for AccessError {}
