//! UTF-8 validation inside the token scan (simdjson's "lookup" algorithm,
//! Keiser and Lemire, "Validating UTF-8 In Less Than One Instruction Per
//! Byte", 2021), so that valid non-ASCII input needs no second pass.
//!
//! Every byte is judged with the three bytes before it (`prev1`, `prev2`,
//! `prev3`, taken across the block boundary from the previous block):
//!
//! 1. Three 16-entry nibble lookups (the high nibble of `prev1`, its low
//!    nibble, the high nibble of the byte) each give a set of error
//!    classes the pair (`prev1`, byte) may belong to; their AND is the set
//!    it does belong to ([`BYTE_1_HIGH`], [`BYTE_1_LOW`], [`BYTE_2_HIGH`]):
//!    too short (a lead not followed by a continuation), too long (a
//!    continuation after ASCII), overlong 2/3/4-byte forms, surrogates,
//!    code points above U+10FFFF, and two continuations in a row.
//! 2. Two continuations in a row are an error unless the byte is the
//!    third or fourth of a 3- or 4-byte sequence: `prev2 >= 0xE0` or
//!    `prev3 >= 0xF0` (two saturating subtractions put that in the top
//!    bit). The XOR of that bit with the class set is nonzero exactly at
//!    an error.
//! 3. A block whose last three bytes begin a sequence that does not fit
//!    (`b >= 0xC0` last, `>= 0xE0` second-to-last, `>= 0xF0`
//!    third-to-last: [`INCOMPLETE_MAX`]) is an error unless the next block
//!    continues it; so the next block, when it is ASCII, adds that mask to
//!    the errors, and the end of input does too.
//!
//! ASCII blocks (the common case) cost one test. A non-ASCII block is
//! checked against the last non-ASCII block before it, not the ASCII ones
//! in between: a block is only checked that way when the one before it was
//! ASCII or complete (else its incomplete mask already is an error), and
//! then the stale block's last bytes start no sequence, which the lookups
//! judge exactly as ASCII.
//!
//! Only the token scan runs it (`Scan::utf8_valid`): the backends with a
//! token scan implement it ([`super::vector::TokenBlock::utf8_errors`]).

/// Error classes (one bit each) of a pair of bytes.
const TOO_SHORT: u8 = 1 << 0;
const TOO_LONG: u8 = 1 << 1;
const OVERLONG_3: u8 = 1 << 2;
const TOO_LARGE: u8 = 1 << 3;
const SURROGATE: u8 = 1 << 4;
const OVERLONG_2: u8 = 1 << 5;
const TOO_LARGE_1000: u8 = 1 << 6;
const OVERLONG_4: u8 = 1 << 6;
const TWO_CONTS: u8 = 1 << 7;
/// The classes that do not depend on `prev1`'s low nibble.
const CARRY: u8 = TOO_SHORT | TOO_LONG | TWO_CONTS;

/// The classes `prev1` may begin, by its high nibble.
pub(crate) const BYTE_1_HIGH: [u8; 16] = [
    // 0_______: ASCII
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    // 10______: a continuation
    TWO_CONTS,
    TWO_CONTS,
    TWO_CONTS,
    TWO_CONTS,
    // 1100____: a 2-byte lead
    TOO_SHORT | OVERLONG_2,
    // 1101____: a 2-byte lead
    TOO_SHORT,
    // 1110____: a 3-byte lead
    TOO_SHORT | OVERLONG_3 | SURROGATE,
    // 1111____: a 4-byte lead (or more)
    TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
];

/// The classes `prev1` may begin, by its low nibble.
pub(crate) const BYTE_1_LOW: [u8; 16] = [
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,
    CARRY | OVERLONG_2,
    CARRY,
    CARRY,
    CARRY | TOO_LARGE,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
];

/// The classes the byte after `prev1` may complete, by its high nibble.
pub(crate) const BYTE_2_HIGH: [u8; 16] = [
    // 0_______: ASCII
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    // 1000____
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
    // 1001____
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
    // 101_____
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    // 11______: a lead
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
];

/// `prev2` minus this (saturating) has its top bit set exactly when
/// `prev2 >= 0xE0` (a 3- or 4-byte lead two bytes back).
pub(crate) const THIRD_BYTE: u8 = 0xE0 - 0x80;
/// `prev3` minus this (saturating) has its top bit set exactly when
/// `prev3 >= 0xF0` (a 4-byte lead three bytes back).
pub(crate) const FOURTH_BYTE: u8 = 0xF0 - 0x80;

/// The largest byte each of the last 64 positions of a block may hold
/// for no sequence to continue past it: any byte but in the last three
/// (a lead of a sequence longer than what is left). Subtracting it
/// (saturating) leaves nonzero bytes exactly where one begins.
pub(crate) const INCOMPLETE_MAX: [u8; 64] = {
    let mut t = [0xFFu8; 64];
    t[61] = 0xF0 - 1;
    t[62] = 0xE0 - 1;
    t[63] = 0xC0 - 1;
    t
};

/// The 16-byte table `t` repeated in both lanes of a 256-bit register's
/// worth of bytes (for `VPSHUFB`, which looks up within each lane).
pub(crate) const fn twice(t: [u8; 16]) -> [u8; 32] {
    let mut r = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        r[i] = t[i % 16];
        i += 1;
    }
    r
}
