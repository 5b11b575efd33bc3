//! The AVX2 backend (AVX2, PCLMULQDQ): two 32-byte registers per block,
//! masks through `VPMOVMSKB`.
//!
//! - Control bytes: a signed `0x20 > x` is true for `0x00..=0x1F` and for
//!   bytes >= 0x80; clearing the latter (`ANDN` with the input, whose sign
//!   bit marks them) leaves the control bytes.
//! - Structurals: `x | 0x20` maps `[`/`]` onto `{`/`}` and leaves `:` and
//!   `,` alone; a `VPSHUFB` of the input's low nibble into a 16-byte table
//!   holding `:`, `{`, `,`, `}` at nibbles A-D (and 0x80, which no `x | 0x20`
//!   equals, elsewhere) followed by one compare finds them. The only other
//!   bytes that fold onto `:` or `,` are the control bytes 0x1A and 0x0C,
//!   which the control mask removes. Bytes >= 0x80 look up 0 and never
//!   match.
//! - Long strings: a running minimum of the bytes (signed, so that the
//!   bytes from 0x80 up count as low, or unsigned once such bytes were
//!   seen) is tested against 0x20 once per call for the control bytes;
//!   `"` and `\` are the bytes equal to their `VPSHUFB` lookup by low
//!   nibble in a table holding them at nibbles 2 and C (one shuffle, one
//!   compare, one OR): four vector instructions per 32 bytes.
//! - The token scan classifies once for all it needs (structurals,
//!   delimiters, control bytes): two `VPSHUFB`s look up a class byte by the
//!   low and by the high nibble, and their AND has a bit per class that
//!   is a product of nibble sets (`,`; `:`; `[ ] { }`; space and `"`;
//!   `\t \n \r`; and, in the sign bit, every byte below 0x20, which
//!   `VPMOVMSKB` extracts without a test). See [`CLASS_COMMA`].

use core::arch::x86_64::*;

use super::block;
use super::vector::{Block64, Masks, TokenBlock};
use super::Scan;
use crate::error::Error;

/// Scans `input` into `out`.
///
/// # Safety
///
/// The CPU must support the features `crate::cpu::Features::avx2_scan` checks.
#[target_feature(enable = "avx2,pclmulqdq,popcnt,bmi1")]
pub(crate) unsafe fn scan(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    // SAFETY: this function's target features are Avx2's, and our caller
    // guarantees the CPU has them.
    unsafe { block::scan::<Avx2>(input, out) }
}

/// Scans `input` into `out`, also emitting the first byte of every scalar
/// token (see [`super::scan_tokens`]).
///
/// # Safety
///
/// The CPU must support the features `crate::cpu::Features::avx2_scan` checks.
#[target_feature(enable = "avx2,pclmulqdq,popcnt,bmi1")]
pub(crate) unsafe fn scan_tokens(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    // SAFETY: this function's target features are Avx2's, and our caller
    // guarantees the CPU has them.
    unsafe { block::scan_tokens::<Avx2>(input, out) }
}

/// The token scan of `input`'s first line (see [`super::scan_tokens_line`]).
///
/// # Safety
///
/// The CPU must support the features `crate::cpu::Features::avx2_scan` checks.
#[target_feature(enable = "avx2,pclmulqdq,popcnt,bmi1")]
pub(crate) unsafe fn scan_tokens_line(
    input: &[u8],
    out: &mut Scan,
) -> Result<Option<usize>, Error> {
    // SAFETY: this function's target features are Avx2's, and our caller
    // guarantees the CPU has them.
    unsafe { block::scan_tokens_line::<Avx2>(input, out) }
}

/// A 64-byte block in two YMM registers.
#[derive(Clone, Copy)]
pub(crate) struct Avx2(__m256i, __m256i);

/// `VPSHUFB` table for the structurals, indexed by the low nibble (see the
/// module docs), repeated for both 128-bit lanes.
const STRUCTURAL_TABLE: [u8; 32] = {
    let mut t = [0x80u8; 32];
    let mut lane = 0;
    while lane < 32 {
        t[lane + 0xA] = b':';
        t[lane + 0xB] = b'{';
        t[lane + 0xC] = b',';
        t[lane + 0xD] = b'}';
        lane += 16;
    }
    t
};

/// `VPSHUFB` table of the long-string test ([`Avx2::quiet`]), indexed by
/// the low nibble: `"` at nibble 2, `\` at nibble C, and 0x80 (which no
/// byte below 0x80 equals) elsewhere; bytes >= 0x80 look up 0, which they
/// do not equal either. So a byte equals its lookup exactly when it is
/// `"` or `\`. Repeated for both 128-bit lanes.
const QUIET_TABLE: [u8; 32] = {
    let mut t = [0x80u8; 32];
    let mut lane = 0;
    while lane < 32 {
        t[lane + 0x2] = b'"';
        t[lane + 0xC] = b'\\';
        lane += 16;
    }
    t
};

/// All 32 bytes equal to `b`.
///
/// # Safety
///
/// The CPU must support AVX.
#[inline(always)]
unsafe fn splat(b: u8) -> __m256i {
    // SAFETY: the caller guarantees AVX.
    unsafe { _mm256_set1_epi8(b as i8) }
}

/// The byte masks of one 32-byte half, as `u32` bit masks.
///
/// # Safety
///
/// The CPU must support AVX2.
#[inline(always)]
unsafe fn classify_half(v: __m256i, table: __m256i) -> [u32; 4] {
    // SAFETY: the caller guarantees AVX2.
    unsafe {
        let quote = _mm256_cmpeq_epi8(v, splat(b'"'));
        let backslash = _mm256_cmpeq_epi8(v, splat(b'\\'));
        let below_space_or_high = _mm256_cmpgt_epi8(splat(0x20), v);
        let control = _mm256_andnot_si256(v, below_space_or_high);
        let folded = _mm256_or_si256(v, splat(0x20));
        let looked_up = _mm256_shuffle_epi8(table, v);
        let structural =
            _mm256_andnot_si256(below_space_or_high, _mm256_cmpeq_epi8(folded, looked_up));
        [
            _mm256_movemask_epi8(quote) as u32,
            _mm256_movemask_epi8(backslash) as u32,
            _mm256_movemask_epi8(structural) as u32,
            _mm256_movemask_epi8(control) as u32,
        ]
    }
}

#[inline(always)]
fn join(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

impl Block64 for Avx2 {
    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        // SAFETY: the caller guarantees 64 readable bytes and AVX.
        unsafe {
            Avx2(
                _mm256_loadu_si256(ptr.cast()),
                _mm256_loadu_si256(ptr.add(32).cast()),
            )
        }
    }

    #[inline(always)]
    unsafe fn classify(self) -> Masks {
        // SAFETY: the caller guarantees AVX2; the table load reads the 32
        // bytes of a static array.
        unsafe {
            let table = _mm256_loadu_si256(STRUCTURAL_TABLE.as_ptr().cast());
            let [q0, b0, s0, c0] = classify_half(self.0, table);
            let [q1, b1, s1, c1] = classify_half(self.1, table);
            Masks {
                quote: join(q0, q1),
                backslash: join(b0, b1),
                structural: join(s0, s1),
                control: join(c0, c1),
            }
        }
    }

    /// Folds both of `other`'s halves into the first half and keeps the
    /// second as it was (zero when accumulating from a zero block): the
    /// stage-1 loop then keeps one accumulator register instead of two
    /// (with two, LLVM spilled a half of each block to the stack).
    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        // SAFETY: the caller guarantees AVX2.
        unsafe {
            Avx2(
                _mm256_or_si256(self.0, _mm256_or_si256(other.0, other.1)),
                self.1,
            )
        }
    }

    #[inline(always)]
    unsafe fn any_high(self) -> bool {
        // SAFETY: the caller guarantees AVX2.
        unsafe { _mm256_movemask_epi8(_mm256_or_si256(self.0, self.1)) != 0 }
    }

    /// Four vector instructions per 32 bytes (see the module docs): a
    /// running minimum of the bytes catches the control bytes (and, signed,
    /// the bytes >= 0x80), and a `VPSHUFB` of [`QUIET_TABLE`] compared with
    /// the input catches `"` and `\`; the minimum is tested once per call.
    /// (The compare-per-vector form took five, and the loop runs at the
    /// cache's bandwidth only when it issues about one vector per cycle.)
    #[inline(always)]
    unsafe fn quiet<const N: usize, const ASCII: bool>(ptr: *const u8) -> bool {
        // SAFETY: the caller guarantees N * 64 readable bytes and AVX2; the
        // table load reads the 32 bytes of a static array.
        unsafe {
            let table = _mm256_loadu_si256(QUIET_TABLE.as_ptr().cast());
            // (0x7F: above every byte that matters, in both orders.)
            let mut min = splat(0x7F);
            let mut special = _mm256_setzero_si256();
            for k in 0..2 * N {
                let v = _mm256_loadu_si256(ptr.add(32 * k).cast());
                min = if ASCII {
                    _mm256_min_epi8(min, v)
                } else {
                    _mm256_min_epu8(min, v)
                };
                let quote_or_backslash = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, v), v);
                special = _mm256_or_si256(special, quote_or_backslash);
            }
            // Control bytes (and, signed, bytes >= 0x80) are below 0x20;
            // with unsigned bytes, `min(m, 0x1F) == m` is `m <= 0x1F`.
            let low = if ASCII {
                _mm256_cmpgt_epi8(splat(0x20), min)
            } else {
                _mm256_cmpeq_epi8(_mm256_min_epu8(min, splat(0x1F)), min)
            };
            special = _mm256_or_si256(special, low);
            _mm256_testz_si256(special, special) != 0
        }
    }

    #[inline(always)]
    unsafe fn prefix_xor(bits: u64) -> u64 {
        // SAFETY: the caller guarantees PCLMULQDQ (and SSE2, implied).
        unsafe {
            let product =
                _mm_clmulepi64_si128(_mm_set_epi64x(0, bits as i64), _mm_set1_epi8(-1), 0);
            _mm_cvtsi128_si64(product) as u64
        }
    }
}

/// `VPSHUFB` tables for the delimiters (whitespace, structurals, `"`), as
/// simdjson classifies: the low-nibble table gives each byte the set of
/// high-nibble groups in which that low nibble is a delimiter, the
/// high-nibble table the byte's group, and a byte is a delimiter when the
/// two share a bit. Groups: bit 0 high nibble 0 (`\t \n \r`: low 9, A, D),
/// bit 1 high nibble 2 (space `"` `,`: low 0, 2, C), bit 2 high nibble 3
/// (`:`: low A), bit 3 high nibble 5 (`[ ]`: low B, D), bit 4 high nibble 7
/// (`{ }`: low B, D). Bytes >= 0x80 look up 0 in the low table.
const DELIM_LOW: [u8; 32] = {
    let mut t = [0u8; 32];
    let mut lane = 0;
    while lane < 32 {
        t[lane] = 0b00010;
        t[lane + 0x2] = 0b00010;
        t[lane + 0x9] = 0b00001;
        t[lane + 0xA] = 0b00101;
        t[lane + 0xB] = 0b11000;
        t[lane + 0xC] = 0b00010;
        t[lane + 0xD] = 0b11001;
        lane += 16;
    }
    t
};

/// See [`DELIM_LOW`].
const DELIM_HIGH: [u8; 32] = {
    let mut t = [0u8; 32];
    let mut lane = 0;
    while lane < 32 {
        t[lane] = 0b00001;
        t[lane + 0x2] = 0b00010;
        t[lane + 0x3] = 0b00100;
        t[lane + 0x5] = 0b01000;
        t[lane + 0x7] = 0b10000;
        lane += 16;
    }
    t
};

/// [`TokenBlock::delimiters`] of one 32-byte half. (A nibble
/// classification rather than `classify_half`'s compares: sharing those
/// let LLVM merge the two and rebuild the masks byte by byte with
/// `vpextrb` / `vpinsrb` in some builds, ~350 instead of ~150 instructions
/// per block.)
///
/// # Safety
///
/// The CPU must support AVX2.
#[inline(always)]
unsafe fn delimiters_half(v: __m256i, low: __m256i, high: __m256i) -> u32 {
    // SAFETY: the caller guarantees AVX2.
    unsafe {
        let lo = _mm256_shuffle_epi8(low, v);
        let nibbles = _mm256_and_si256(_mm256_srli_epi16::<4>(v), splat(0x0F));
        let hi = _mm256_shuffle_epi8(high, nibbles);
        let none = _mm256_cmpeq_epi8(_mm256_and_si256(lo, hi), _mm256_setzero_si256());
        !(_mm256_movemask_epi8(none) as u32)
    }
}

/// Byte classes of the token scan ([`Avx2::classify_tokens`]), one bit
/// each; a byte is in a class when the class's bit is set both in
/// [`CLASS_LOW`] at its low nibble and in [`CLASS_HIGH`] at its high nibble,
/// so each class is a product of a set of low and a set of high nibbles.
/// `,` (0x2C).
const CLASS_COMMA: u8 = 1 << 0;
/// `:` (0x3A).
const CLASS_COLON: u8 = 1 << 1;
/// `[ ] { }` (high nibble 5 or 7, low nibble B or D).
const CLASS_BRACKET: u8 = 1 << 2;
/// Space and `"` (high nibble 2, low nibble 0 or 2).
const CLASS_SPACE_QUOTE: u8 = 1 << 3;
/// `\t \n \r` (high nibble 0, low nibble 9, A or D).
const CLASS_WS: u8 = 1 << 4;
/// Control bytes 0x00-0x1F (high nibble 0 or 1): the sign bit, so that
/// `VPMOVMSKB` extracts the class with no test.
const CLASS_CONTROL: u8 = 1 << 7;
/// The structurals.
const CLASSES_STRUCTURAL: u8 = CLASS_COMMA | CLASS_COLON | CLASS_BRACKET;
/// The delimiters: structurals, whitespace and `"`.
const CLASSES_DELIMITER: u8 = CLASSES_STRUCTURAL | CLASS_SPACE_QUOTE | CLASS_WS;

/// See [`CLASS_COMMA`]. Bytes >= 0x80 look up 0 (`VPSHUFB` zeroes them).
const CLASS_LOW: [u8; 32] = {
    let mut t = [CLASS_CONTROL; 32];
    let mut lane = 0;
    while lane < 32 {
        t[lane] |= CLASS_SPACE_QUOTE;
        t[lane + 0x2] |= CLASS_SPACE_QUOTE;
        t[lane + 0x9] |= CLASS_WS;
        t[lane + 0xA] |= CLASS_WS | CLASS_COLON;
        t[lane + 0xB] |= CLASS_BRACKET;
        t[lane + 0xC] |= CLASS_COMMA;
        t[lane + 0xD] |= CLASS_WS | CLASS_BRACKET;
        lane += 16;
    }
    t
};

/// See [`CLASS_COMMA`].
const CLASS_HIGH: [u8; 32] = {
    let mut t = [0u8; 32];
    let mut lane = 0;
    while lane < 32 {
        t[lane] = CLASS_WS | CLASS_CONTROL;
        t[lane + 0x1] = CLASS_CONTROL;
        t[lane + 0x2] = CLASS_COMMA | CLASS_SPACE_QUOTE;
        t[lane + 0x3] = CLASS_COLON;
        t[lane + 0x5] = CLASS_BRACKET;
        t[lane + 0x7] = CLASS_BRACKET;
        lane += 16;
    }
    t
};

/// The token scan's masks of one 32-byte half, from one nibble lookup:
/// `[quote, backslash, not structural, control, not delimiter]`.
///
/// # Safety
///
/// The CPU must support AVX2.
#[inline(always)]
unsafe fn classify_tokens_half(v: __m256i, low: __m256i, high: __m256i) -> [u32; 5] {
    // SAFETY: the caller guarantees AVX2.
    unsafe {
        let nibbles = _mm256_and_si256(_mm256_srli_epi16::<4>(v), splat(0x0F));
        let classes = _mm256_and_si256(
            _mm256_shuffle_epi8(low, v),
            _mm256_shuffle_epi8(high, nibbles),
        );
        let zero = _mm256_setzero_si256();
        let none_of = |bits: u8| {
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(
                _mm256_and_si256(classes, splat(bits)),
                zero,
            )) as u32
        };
        [
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, splat(b'"'))) as u32,
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, splat(b'\\'))) as u32,
            none_of(CLASSES_STRUCTURAL),
            _mm256_movemask_epi8(classes) as u32,
            none_of(CLASSES_DELIMITER),
        ]
    }
}

impl TokenBlock for Avx2 {
    type Utf8 = super::vector::NoUtf8;

    /// One nibble lookup (two `VPSHUFB`) gives every class the token scan
    /// needs but `"` and `\` (see [`CLASS_COMMA`]): about 16 vector
    /// instructions per half instead of the 20 of `classify` and
    /// `delimiters` apart.
    #[inline(always)]
    unsafe fn classify_tokens(self) -> (Masks, u64) {
        // SAFETY: the caller guarantees AVX2; the table loads read the 32
        // bytes of static arrays.
        unsafe {
            let low = _mm256_loadu_si256(CLASS_LOW.as_ptr().cast());
            let high = _mm256_loadu_si256(CLASS_HIGH.as_ptr().cast());
            let [q0, b0, s0, c0, d0] = classify_tokens_half(self.0, low, high);
            let [q1, b1, s1, c1, d1] = classify_tokens_half(self.1, low, high);
            let masks = Masks {
                quote: join(q0, q1),
                backslash: join(b0, b1),
                structural: !join(s0, s1),
                control: join(c0, c1),
            };
            (masks, !join(d0, d1))
        }
    }

    #[inline(always)]
    unsafe fn delimiters(self) -> u64 {
        // SAFETY: the caller guarantees AVX2; the table loads read the 32
        // bytes of static arrays.
        unsafe {
            let low = _mm256_loadu_si256(DELIM_LOW.as_ptr().cast());
            let high = _mm256_loadu_si256(DELIM_HIGH.as_ptr().cast());
            join(
                delimiters_half(self.0, low, high),
                delimiters_half(self.1, low, high),
            )
        }
    }
}
