//! The AVX-512 backend (AVX-512BW, VBMI, VBMI2, PCLMULQDQ: Ice Lake and Zen 4
//! onward): one 64-byte register per block, and compares that yield the
//! 64-bit masks directly.
//!
//! - Structurals: `VPERMB` looks each byte's low six bits up in a 64-entry
//!   table holding, at the low six bits of each structural character, that
//!   character (and elsewhere a byte that cannot match); one compare of the
//!   input with the looked-up bytes then marks exactly `{ } [ ] : ,`.
//! - Long strings: no compare per block (see [`Avx512::quiet`]): a nibble
//!   lookup XORed with the byte is zero exactly at `"` and `\`, and running
//!   minimums of those and of the bytes are compared once per four blocks.
//! - Offsets: `VPCOMPRESSB` packs the positions (0..64, one byte each) of
//!   the set bits to the front of a register; each group of sixteen is then
//!   widened to `u32`, offset by the block's position and stored whole.
//!   Most blocks need one such store. (This beat both the tzcnt loop and
//!   four `VPCOMPRESSD`s by about 1.5x on dense files.)

use core::arch::x86_64::*;

use super::block;
use super::vector::{Block64, EscapeMasks, Masks, TokenBlock};
use super::Scan;
use crate::error::Error;

/// Scans `input` into `out`.
///
/// # Safety
///
/// The CPU must support the features `crate::cpu::Features::avx512_scan` checks.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,pclmulqdq,popcnt,bmi1")]
pub(crate) unsafe fn scan(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    // SAFETY: this function's target features are Avx512's, and our caller
    // guarantees the CPU has them.
    unsafe { block::scan::<Avx512>(input, out) }
}

/// Scans `input` into `out`, also emitting the first byte of every scalar
/// token (see [`super::scan_tokens`]).
///
/// # Safety
///
/// The CPU must support the features `crate::cpu::Features::avx512_scan` checks.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,pclmulqdq,popcnt,bmi1")]
pub(crate) unsafe fn scan_tokens(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    // SAFETY: this function's target features are Avx512's, and our caller
    // guarantees the CPU has them.
    unsafe { block::scan_tokens::<Avx512>(input, out) }
}

/// The token scan for strict validation (see [`super::scan_tokens_valid`]).
///
/// # Safety
///
/// The CPU must support the features `crate::cpu::Features::avx512_scan` checks.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,pclmulqdq,popcnt,bmi1")]
pub(crate) unsafe fn scan_tokens_valid(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    // SAFETY: this function's target features are Avx512's, and our caller
    // guarantees the CPU has them.
    unsafe { block::scan_tokens_valid::<Avx512>(input, out) }
}

/// The token scan of `input`'s first line (see [`super::scan_tokens_line`]).
///
/// # Safety
///
/// The CPU must support the features `crate::cpu::Features::avx512_scan` checks.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,pclmulqdq,popcnt,bmi1")]
pub(crate) unsafe fn scan_tokens_line(
    input: &[u8],
    out: &mut Scan,
) -> Result<Option<usize>, Error> {
    // SAFETY: this function's target features are Avx512's, and our caller
    // guarantees the CPU has them.
    unsafe { block::scan_tokens_line::<Avx512>(input, out) }
}

/// [`TokenBlock::escapes_before`], out of line (once per document at
/// most, and only for one with an escape that is not plain).
///
/// # Safety
///
/// `to <= input.len()`; the CPU must support the features
/// `crate::cpu::Features::avx512_scan` checks.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,pclmulqdq,popcnt,bmi1")]
unsafe fn escapes_before(input: &[u8], to: usize, out: &mut Vec<u32>) {
    // SAFETY: forwarded from the caller; this function's target features
    // are Avx512's.
    unsafe { block::escape_starts::<Avx512>(input, to, out) }
}

/// A 64-byte block in one ZMM register.
#[derive(Clone, Copy)]
pub(crate) struct Avx512(pub(super) __m512i);

/// At index `c & 63` for each structural `c`, the character itself; at every
/// other index `i`, `i + 1`, whose low six bits differ from `i` so that no
/// byte can match it.
const STRUCTURAL_TABLE: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = (i as u8 + 1) & 63;
        i += 1;
    }
    let chars = *b"{}[]:,";
    let mut k = 0;
    while k < chars.len() {
        t[(chars[k] & 63) as usize] = chars[k];
        k += 1;
    }
    t
};

/// At index `c & 63` for each byte `c` that ends a scalar token
/// (whitespace, structurals and `"`: their low six bits are all distinct),
/// `c` itself; elsewhere a byte whose low six bits differ from the index,
/// as in [`STRUCTURAL_TABLE`].
const DELIMITER_TABLE: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = (i as u8 + 1) & 63;
        i += 1;
    }
    let chars = *b" \t\n\r{}[]:,\"";
    let mut k = 0;
    while k < chars.len() {
        assert!(
            t[(chars[k] & 63) as usize] != chars[k],
            "two delimiters share an index"
        );
        t[(chars[k] & 63) as usize] = chars[k];
        k += 1;
    }
    t
};

/// `VPSHUFB` table of the long-string test ([`Avx512::quiet`]), indexed by
/// the low nibble: `"` at nibble 2, `\` at nibble C, and 0x80 (which no
/// byte below 0x80 equals) elsewhere; bytes >= 0x80 look up 0, which they
/// do not equal either. So a byte equals its lookup exactly when it is
/// `"` or `\`. (One 128-bit lane, broadcast to all four.)
const QUIET_TABLE: [u8; 16] = {
    let mut t = [0x80u8; 16];
    t[0x2] = b'"';
    t[0xC] = b'\\';
    t
};

/// All 64 bytes equal to `b`.
///
/// # Safety
///
/// The CPU must support AVX-512F.
#[inline(always)]
unsafe fn splat(b: u8) -> __m512i {
    // SAFETY: the caller guarantees AVX-512F.
    unsafe { _mm512_set1_epi8(b as i8) }
}

impl Block64 for Avx512 {
    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        // SAFETY: the caller guarantees 64 readable bytes and AVX-512F.
        unsafe { Avx512(_mm512_loadu_si512(ptr.cast())) }
    }

    /// One masked load: the bytes past `len` are not read (a masked-off
    /// byte cannot fault) and come from the spaces. Only when the 64-byte
    /// window stays on the page of `ptr`: masked-off bytes on the next page
    /// cost a microcode assist when that page is unmapped or not yet
    /// touched (measured on Zen 4: ~5 us per call, every call, on a 42 KB
    /// input at the top of the heap). Otherwise the bytes are copied into a
    /// block of spaces, as the other backends do.
    #[inline(always)]
    unsafe fn load_tail(ptr: *const u8, len: usize) -> Self {
        if (ptr as usize) % 4096 > 4096 - 64 {
            let mut buf = [b' '; 64];
            // SAFETY: the caller guarantees `len` (< 64) readable bytes at
            // `ptr`; `buf` is a separate 64-byte array; AVX-512BW.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, buf.as_mut_ptr(), len.min(64));
                return Self::load(buf.as_ptr());
            }
        }
        let keep = (1u64 << (len & 63)) - 1;
        // SAFETY: the caller guarantees `len` (< 64) readable bytes at
        // `ptr`, and only those are loaded (the mask selects bytes
        // `0..len`); AVX-512BW.
        unsafe { Avx512(_mm512_mask_loadu_epi8(splat(b' '), keep, ptr.cast())) }
    }

    #[inline(always)]
    unsafe fn classify(self) -> Masks {
        let v = self.0;
        // SAFETY: the caller guarantees AVX-512BW and VBMI; the table load
        // reads the 64 bytes of a static array.
        unsafe {
            let table = _mm512_loadu_si512(STRUCTURAL_TABLE.as_ptr().cast());
            Masks {
                quote: _mm512_cmpeq_epi8_mask(v, splat(b'"')),
                backslash: _mm512_cmpeq_epi8_mask(v, splat(b'\\')),
                structural: _mm512_cmpeq_epi8_mask(v, _mm512_permutexvar_epi8(v, table)),
                control: _mm512_cmplt_epu8_mask(v, splat(0x20)),
            }
        }
    }

    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        // SAFETY: the caller guarantees AVX-512F.
        unsafe { Avx512(_mm512_or_si512(self.0, other.0)) }
    }

    #[inline(always)]
    unsafe fn any_high(self) -> bool {
        // SAFETY: the caller guarantees AVX-512BW.
        unsafe { _mm512_movepi8_mask(self.0) != 0 }
    }

    /// No compare into a mask register per block: `VPSHUFB` looks each
    /// byte's low nibble up in [`QUIET_TABLE`] and `XOR`s the byte with
    /// it, which is zero exactly for `"` and `\`; the unsigned minimum of
    /// those and the (signed, for [`Block64::quiet`]'s `ASCII`) minimum of
    /// the bytes run over the `N` blocks, and two compares at the end say
    /// whether any byte was `"`, `\` or below 0x20 (or >= 0x80). On Zen 4
    /// (a 512-bit operation runs as two 256-bit halves) a compare into a
    /// mask register and a masked compare per block, chained through
    /// mask operations, skipped the chat ladder's base64 about 1.25x
    /// slower than the AVX2 backend (100 KB and 1 MB requests, interleaved
    /// medians); LLVM turns compares whose results are ORed into mask
    /// operations too, so the loop has none.
    #[inline(always)]
    unsafe fn quiet<const N: usize, const ASCII: bool>(ptr: *const u8) -> bool {
        // SAFETY: the caller guarantees N * 64 readable bytes and AVX-512BW.
        unsafe {
            let table = _mm512_broadcast_i32x4(_mm_loadu_si128(QUIET_TABLE.as_ptr().cast()));
            let mut special = splat(0xFF);
            let mut min = splat(0x7F);
            for k in 0..N {
                let v = _mm512_loadu_si512(ptr.add(64 * k).cast());
                let x = _mm512_xor_si512(_mm512_shuffle_epi8(table, v), v);
                special = _mm512_min_epu8(special, x);
                min = if ASCII {
                    _mm512_min_epi8(min, v)
                } else {
                    _mm512_min_epu8(min, v)
                };
            }
            let low = if ASCII {
                _mm512_cmplt_epi8_mask(min, splat(0x20))
            } else {
                _mm512_cmplt_epu8_mask(min, splat(0x20))
            };
            (_mm512_testn_epi8_mask(special, special) | low) == 0
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

    #[inline(always)]
    unsafe fn write_offsets(dst: *mut u32, base: u32, bits: u64) -> usize {
        // SAFETY: the caller guarantees room for SLACK (64) entries; the
        // stores cover at most 64. The caller guarantees AVX-512 VBMI2.
        unsafe {
            let iota = _mm512_loadu_si512(IOTA.as_ptr().cast());
            let packed = _mm512_maskz_compress_epi8(bits, iota);
            let base = _mm512_set1_epi32(base as i32);
            let count = bits.count_ones() as usize;
            let q0 = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(packed));
            _mm512_storeu_si512(dst.cast(), _mm512_add_epi32(q0, base));
            if count > 16 {
                let q1 = _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32::<1>(packed));
                _mm512_storeu_si512(dst.add(16).cast(), _mm512_add_epi32(q1, base));
                if count > 32 {
                    let q2 = _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32::<2>(packed));
                    _mm512_storeu_si512(dst.add(32).cast(), _mm512_add_epi32(q2, base));
                    if count > 48 {
                        let q3 = _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32::<3>(packed));
                        _mm512_storeu_si512(dst.add(48).cast(), _mm512_add_epi32(q3, base));
                    }
                }
            }
            count
        }
    }
}

impl TokenBlock for Avx512 {
    type Utf8 = super::utf8_avx512::Fused;

    const CHECKS_ESCAPES: bool = true;

    #[inline(always)]
    unsafe fn escapes_before(input: &[u8], to: usize, out: &mut Vec<u32>) {
        // SAFETY: forwarded from the caller.
        unsafe { escapes_before(input, to, out) }
    }

    #[inline(always)]
    unsafe fn delimiters(self) -> u64 {
        // SAFETY: the caller guarantees AVX-512BW and VBMI; the table load
        // reads the 64 bytes of a static array.
        unsafe {
            let table = _mm512_loadu_si512(DELIMITER_TABLE.as_ptr().cast());
            _mm512_cmpeq_epi8_mask(self.0, _mm512_permutexvar_epi8(self.0, table))
        }
    }

    /// One two-table `VPERMI2B` looks up each ASCII byte's classes (a bit
    /// per class, [`ESCAPE_TABLE`]); bytes >= 0x80 get none; one test per
    /// class extracts its mask.
    #[inline(always)]
    unsafe fn escape_classes(self) -> EscapeMasks {
        // SAFETY: the caller guarantees AVX-512BW and VBMI; the table loads
        // read the 128 bytes of a static array.
        unsafe {
            let lo = _mm512_loadu_si512(ESCAPE_TABLE.as_ptr().cast());
            let hi = _mm512_loadu_si512(ESCAPE_TABLE.as_ptr().add(64).cast());
            let ascii = !_mm512_movepi8_mask(self.0);
            let cls = _mm512_maskz_permutex2var_epi8(ascii, lo, self.0, hi);
            let class = |bit: u8| _mm512_test_epi8_mask(cls, splat(bit));
            EscapeMasks {
                one: class(ESC_ONE),
                u: class(ESC_U),
                hex: class(ESC_HEX),
                d: class(ESC_D),
                upper8: class(ESC_UPPER8),
            }
        }
    }
}

/// Class bits of [`ESCAPE_TABLE`] (see [`EscapeMasks`]).
const ESC_ONE: u8 = 1;
const ESC_U: u8 = 2;
const ESC_HEX: u8 = 4;
const ESC_D: u8 = 8;
const ESC_UPPER8: u8 = 16;

/// The escape classes of each ASCII byte.
static ESCAPE_TABLE: [u8; 128] = {
    let mut t = [0u8; 128];
    let one = *b"\"\\/bfnrt";
    let mut i = 0;
    while i < one.len() {
        t[one[i] as usize] |= ESC_ONE;
        i += 1;
    }
    t[b'u' as usize] |= ESC_U;
    let hex = *b"0123456789abcdefABCDEF";
    let mut i = 0;
    while i < hex.len() {
        t[hex[i] as usize] |= ESC_HEX;
        if i >= 8 {
            t[hex[i] as usize] |= ESC_UPPER8;
        }
        i += 1;
    }
    t[b'd' as usize] |= ESC_D;
    t[b'D' as usize] |= ESC_D;
    t
};

/// The bytes 0, 1, ..., 63.
const IOTA: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = i as u8;
        i += 1;
    }
    t
};
