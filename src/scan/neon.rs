//! The NEON backend (AArch64 Advanced SIMD, PMULL): four 16-byte registers
//! per block.
//!
//! - Masks: NEON has no byte movemask; each compare result is ANDed with the
//!   bit weights 1, 2, 4, ... 128 and three rounds of pairwise adds (`ADDP`)
//!   fold four vectors into one `u64`.
//! - Structurals: as in the AVX2 backend, `x | 0x20` compared with a `TBL`
//!   lookup of the low nibble (`:`, `{`, `,`, `}` at nibbles A-D), minus the
//!   control bytes 0x0C and 0x1A that fold onto `,` and `:`.
//! - Long strings: `x ^ 2` maps the control bytes and `"` onto `0x00..=0x20`;
//!   one compare (signed to also catch bytes >= 0x80) plus one with `\`,
//!   ORed over the run and reduced with `UMAXV`.
//! - Prefix XOR: `PMULL` (the `aes` target feature).

use core::arch::aarch64::*;

use super::block;
use super::vector::{Block64, Masks};
use super::Scan;
use crate::error::Error;

/// Scans `input` into `out`.
///
/// # Safety
///
/// The CPU must support the features `crate::cpu::Features::neon_scan` checks.
#[target_feature(enable = "neon,aes")]
pub(crate) unsafe fn scan(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    // SAFETY: this function's target features are Neon's, and our caller
    // guarantees the CPU has them.
    unsafe { block::scan::<Neon>(input, out) }
}

/// A 64-byte block in four Q registers.
#[derive(Clone, Copy)]
pub(crate) struct Neon([uint8x16_t; 4]);

/// `TBL` table for the structurals, indexed by the low nibble.
const STRUCTURAL_TABLE: [u8; 16] = {
    let mut t = [0x80u8; 16];
    t[0xA] = b':';
    t[0xB] = b'{';
    t[0xC] = b',';
    t[0xD] = b'}';
    t
};

/// Bit weights for [`bitmask`].
const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];

/// The 64-bit mask of four compare results (bytes 0x00 or 0xFF).
///
/// # Safety
///
/// The CPU must support NEON.
#[inline(always)]
unsafe fn bitmask(m: [uint8x16_t; 4]) -> u64 {
    // SAFETY: the caller guarantees NEON; the weight load reads a static array.
    unsafe {
        let w = vld1q_u8(WEIGHTS.as_ptr());
        let a = vpaddq_u8(vandq_u8(m[0], w), vandq_u8(m[1], w));
        let b = vpaddq_u8(vandq_u8(m[2], w), vandq_u8(m[3], w));
        let ab = vpaddq_u8(a, b);
        let ab = vpaddq_u8(ab, ab);
        vgetq_lane_u64::<0>(vreinterpretq_u64_u8(ab))
    }
}

impl Block64 for Neon {
    #[inline(always)]
    unsafe fn load(ptr: *const u8) -> Self {
        // SAFETY: the caller guarantees 64 readable bytes and NEON.
        unsafe {
            Neon([
                vld1q_u8(ptr),
                vld1q_u8(ptr.add(16)),
                vld1q_u8(ptr.add(32)),
                vld1q_u8(ptr.add(48)),
            ])
        }
    }

    #[inline(always)]
    unsafe fn classify(self) -> Masks {
        // SAFETY: the caller guarantees NEON; the table load reads a static array.
        unsafe {
            let table = vld1q_u8(STRUCTURAL_TABLE.as_ptr());
            let quote = self.0.map(|v| vceqq_u8(v, vdupq_n_u8(b'"')));
            let backslash = self.0.map(|v| vceqq_u8(v, vdupq_n_u8(b'\\')));
            let control = self.0.map(|v| vcltq_u8(v, vdupq_n_u8(0x20)));
            let mut structural = self.0;
            for k in 0..4 {
                let v = self.0[k];
                let looked_up = vqtbl1q_u8(table, vandq_u8(v, vdupq_n_u8(0x0F)));
                let folded = vorrq_u8(v, vdupq_n_u8(0x20));
                structural[k] = vbicq_u8(vceqq_u8(folded, looked_up), control[k]);
            }
            Masks {
                quote: bitmask(quote),
                backslash: bitmask(backslash),
                structural: bitmask(structural),
                control: bitmask(control),
            }
        }
    }

    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        // SAFETY: the caller guarantees NEON.
        unsafe {
            Neon([
                vorrq_u8(self.0[0], other.0[0]),
                vorrq_u8(self.0[1], other.0[1]),
                vorrq_u8(self.0[2], other.0[2]),
                vorrq_u8(self.0[3], other.0[3]),
            ])
        }
    }

    #[inline(always)]
    unsafe fn any_high(self) -> bool {
        // SAFETY: the caller guarantees NEON.
        unsafe {
            let a = vorrq_u8(self.0[0], self.0[1]);
            let b = vorrq_u8(self.0[2], self.0[3]);
            vmaxvq_u8(vorrq_u8(a, b)) >= 0x80
        }
    }

    #[inline(always)]
    unsafe fn quiet<const N: usize, const ASCII: bool>(ptr: *const u8) -> bool {
        // SAFETY: the caller guarantees N * 64 readable bytes and NEON.
        unsafe {
            let mut special = vdupq_n_u8(0);
            for k in 0..4 * N {
                let v = vld1q_u8(ptr.add(16 * k));
                let t = veorq_u8(v, vdupq_n_u8(2));
                let low = if ASCII {
                    vcleq_s8(vreinterpretq_s8_u8(t), vdupq_n_s8(0x20))
                } else {
                    vcleq_u8(t, vdupq_n_u8(0x20))
                };
                let backslash = vceqq_u8(v, vdupq_n_u8(b'\\'));
                special = vorrq_u8(special, vorrq_u8(low, backslash));
            }
            vmaxvq_u8(special) == 0
        }
    }

    #[inline(always)]
    unsafe fn prefix_xor(bits: u64) -> u64 {
        // SAFETY: the caller guarantees PMULL (the `aes` feature).
        unsafe { pmull_all_ones(bits) }
    }
}

/// The low half of the carry-less product of `bits` and all ones.
///
/// # Safety
///
/// The CPU must support PMULL (the `aes` target feature).
#[target_feature(enable = "neon,aes")]
#[inline]
unsafe fn pmull_all_ones(bits: u64) -> u64 {
    vmull_p64(bits, u64::MAX) as u64
}
