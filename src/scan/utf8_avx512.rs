//! UTF-8 validation with AVX-512 (BW): the whole-input check strict
//! validation runs when stage 1 saw a byte >= 0x80 ([`super::utf8_valid`]),
//! one 64-byte register per step where simdutf8 (AVX2 at best) takes two.
//!
//! The algorithm is the lookup one of Keiser and Lemire ("Validating UTF-8
//! in less than one instruction per byte", 2021), as simdjson and simdutf8
//! use it. Every error of UTF-8 shows in a pair of adjacent bytes, or in a
//! continuation byte that two or three bytes back a 3- or 4-byte lead does
//! (or does not) call for:
//! - each byte and the byte before it (`prev1`) look up three 16-entry
//!   tables, by the high nibble of `prev1`, its low nibble, and the high
//!   nibble of the byte; each entry is a set of error classes (too short,
//!   too long, overlong of 2, 3 or 4 bytes, surrogate, above U+10FFFF, two
//!   continuations), and the AND of the three is the set of classes that
//!   pair is in: nonzero is an error, except the class "two continuations";
//! - a continuation that follows a continuation (that class) is right
//!   exactly when the byte two back is a 3- or 4-byte lead, or the byte
//!   three back a 4-byte lead: saturating subtractions set the top bit of
//!   such positions, which is XORed with the class bit, so that both a
//!   missing and an unexpected continuation leave a bit set.
//!
//! The bytes before a block come from the previous block (`prev`: one
//! cross-lane permutation, then a per-lane byte alignment). A block of
//! ASCII only needs no check, but the block before it must not have ended
//! inside a sequence (`incomplete`: its last three bytes compared with the
//! smallest lead that needs more bytes than are left). The last partial
//! block is copied into a block of zeros, so a truncated sequence at the end
//! meets a zero byte (too short) and needs no special case.

use core::arch::x86_64::*;

/// The error classes of the lookup tables (one bit each; `TOO_LARGE_1000`
/// and `OVERLONG_4` share a bit: they never meet in one byte pair's tables).
const TOO_SHORT: u8 = 1 << 0;
const TOO_LONG: u8 = 1 << 1;
const OVERLONG_3: u8 = 1 << 2;
const TOO_LARGE: u8 = 1 << 3;
const SURROGATE: u8 = 1 << 4;
const OVERLONG_2: u8 = 1 << 5;
const TOO_LARGE_1000: u8 = 1 << 6;
const OVERLONG_4: u8 = 1 << 6;
const TWO_CONTS: u8 = 1 << 7;
/// The classes the low nibble of the first byte does not decide.
const CARRY: u8 = TOO_SHORT | TOO_LONG | TWO_CONTS;

/// By the high nibble of the first byte of a pair.
const BYTE_1_HIGH: [u8; 16] = [
    // 0xxx: ASCII, then a continuation is one too many.
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    // 10xx: a continuation.
    TWO_CONTS,
    TWO_CONTS,
    TWO_CONTS,
    TWO_CONTS,
    // 1100: a 2-byte lead (C0, C1 overlong).
    TOO_SHORT | OVERLONG_2,
    // 1101: a 2-byte lead.
    TOO_SHORT,
    // 1110: a 3-byte lead.
    TOO_SHORT | OVERLONG_3 | SURROGATE,
    // 1111: a 4-byte lead (or worse).
    TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
];

/// By the low nibble of the first byte of a pair.
const BYTE_1_LOW: [u8; 16] = [
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

/// By the high nibble of the second byte of a pair.
const BYTE_2_HIGH: [u8; 16] = [
    // 0xxx: ASCII after a lead is too short.
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    // 1000
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
    // 1001
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
    // 101x
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    // 11xx: a lead after a lead is too short.
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
];

/// Per position of a block, the largest byte that can end it without
/// leaving a sequence open: any lead in the last byte, a 3- or 4-byte lead
/// in the one before, a 4-byte lead three from the end need more bytes.
const INCOMPLETE_MAX: [u8; 64] = {
    let mut t = [0xFF; 64];
    t[61] = 0xF0 - 1;
    t[62] = 0xE0 - 1;
    t[63] = 0xC0 - 1;
    t
};

/// A 16-entry table in each 128-bit lane.
///
/// # Safety
///
/// The CPU must support AVX-512F.
#[inline(always)]
unsafe fn table(t: &[u8; 16]) -> __m512i {
    // SAFETY: `t` is 16 readable bytes; the caller guarantees AVX-512F.
    unsafe { _mm512_broadcast_i32x4(_mm_loadu_si128(t.as_ptr().cast())) }
}

/// The bytes `N` (1 to 3) positions before each byte of `cur`, the first
/// `N` from the end of `prev`.
///
/// # Safety
///
/// The CPU must support AVX-512F and BW.
#[inline(always)]
unsafe fn before<const N: i32>(cur: __m512i, prev: __m512i) -> __m512i {
    // SAFETY: the caller guarantees AVX-512F and BW.
    unsafe {
        // Each lane of `shifted` is the lane before it in `prev ++ cur`:
        // `prev`'s last lane, then `cur`'s first three (quadwords 6, 7 of
        // `prev`, 0 to 5 of `cur`).
        let idx = _mm512_set_epi64(13, 12, 11, 10, 9, 8, 7, 6);
        let shifted = _mm512_permutex2var_epi64(prev, idx, cur);
        // Per lane: the last N bytes of the lane before, then this lane's.
        match N {
            1 => _mm512_alignr_epi8::<15>(cur, shifted),
            2 => _mm512_alignr_epi8::<14>(cur, shifted),
            _ => _mm512_alignr_epi8::<13>(cur, shifted),
        }
    }
}

/// The validator's state between blocks.
struct State {
    /// The previous block (zeros before the first).
    prev: __m512i,
    /// Nonzero where the previous block's last bytes leave a sequence open.
    incomplete: __m512i,
    /// Nonzero where an error was found so far.
    error: __m512i,
}

/// The high nibble of each byte.
///
/// # Safety
///
/// The CPU must support AVX-512F and BW.
#[inline(always)]
unsafe fn high(v: __m512i) -> __m512i {
    // SAFETY: the caller guarantees AVX-512F and BW.
    unsafe { _mm512_and_si512(_mm512_srli_epi16::<4>(v), _mm512_set1_epi8(0x0F)) }
}

impl State {
    /// Checks the block `cur`.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX-512F and BW.
    #[inline(always)]
    unsafe fn step(&mut self, cur: __m512i) {
        // SAFETY: the caller guarantees AVX-512F and BW; the table loads
        // read 16 bytes of static arrays.
        unsafe {
            if _mm512_movepi8_mask(cur) == 0 {
                // ASCII only: valid if the block before ended a sequence.
                self.error = _mm512_or_si512(self.error, self.incomplete);
            } else {
                let prev1 = before::<1>(cur, self.prev);
                let low = _mm512_and_si512(prev1, _mm512_set1_epi8(0x0F));
                let special = _mm512_and_si512(
                    _mm512_and_si512(
                        _mm512_shuffle_epi8(table(&BYTE_1_HIGH), high(prev1)),
                        _mm512_shuffle_epi8(table(&BYTE_1_LOW), low),
                    ),
                    _mm512_shuffle_epi8(table(&BYTE_2_HIGH), high(cur)),
                );
                // Top bit set two after a 3- or 4-byte lead, or three after
                // a 4-byte lead: where a continuation after a continuation
                // belongs.
                let third = _mm512_subs_epu8(
                    before::<2>(cur, self.prev),
                    _mm512_set1_epi8((0xE0u8 - 0x80) as i8),
                );
                let fourth = _mm512_subs_epu8(
                    before::<3>(cur, self.prev),
                    _mm512_set1_epi8((0xF0u8 - 0x80) as i8),
                );
                let must = _mm512_and_si512(
                    _mm512_or_si512(third, fourth),
                    _mm512_set1_epi8(0x80u8 as i8),
                );
                self.error = _mm512_or_si512(self.error, _mm512_xor_si512(must, special));
                let max = _mm512_loadu_si512(INCOMPLETE_MAX.as_ptr().cast());
                self.incomplete = _mm512_subs_epu8(cur, max);
            }
            self.prev = cur;
        }
    }
}

/// The validator fused into the AVX-512 token scan (see
/// [`super::vector::Utf8Check`]): the same [`State`] and step, on the
/// block the scan already holds in a register. A block of ASCII only
/// costs the test of its top bits and an OR of `incomplete`; long strings
/// the scan skips are stepped here block by block (unless the scan knows
/// them ASCII, before any byte >= 0x80: then the state has nothing
/// pending and stays as it is).
pub(crate) struct Fused(State);

impl super::vector::Utf8Check<super::avx512::Avx512> for Fused {
    #[inline(always)]
    unsafe fn new() -> Self {
        // SAFETY: the caller guarantees AVX-512F.
        unsafe {
            Fused(State {
                prev: _mm512_setzero_si512(),
                incomplete: _mm512_setzero_si512(),
                error: _mm512_setzero_si512(),
            })
        }
    }

    #[inline(always)]
    unsafe fn block(&mut self, block: super::avx512::Avx512, keep: u64) {
        // SAFETY: the caller guarantees AVX-512F and BW.
        unsafe {
            let cur = if keep == u64::MAX {
                block.0
            } else {
                // (The line scan's last block: the next line's bytes
                // become zeros, which end any sequence as the end does.)
                _mm512_maskz_mov_epi8(keep, block.0)
            };
            self.0.step(cur);
        }
    }

    #[inline(always)]
    unsafe fn skipped(&mut self, ptr: *const u8, from: usize, to: usize, ascii: bool) {
        if ascii {
            return;
        }
        let mut i = from;
        while i + 64 <= to {
            // SAFETY: the caller guarantees `to` readable bytes at `ptr`,
            // and AVX-512F and BW.
            unsafe { self.0.step(_mm512_loadu_si512(ptr.add(i).cast())) };
            i += 64;
        }
    }

    #[inline(always)]
    unsafe fn valid(&self) -> bool {
        // SAFETY: the caller guarantees AVX-512F and BW.
        unsafe {
            let error = _mm512_or_si512(self.0.error, self.0.incomplete);
            _mm512_test_epi8_mask(error, error) == 0
        }
    }
}

/// Whether `input` is valid UTF-8.
///
/// # Safety
///
/// The CPU must support AVX-512F and AVX-512BW.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn valid(input: &[u8]) -> bool {
    // SAFETY: every intrinsic below needs at most AVX-512F and BW, which
    // the caller guarantees; the loads are of 64 bytes within `input` (the
    // loop) or of a local 64-byte array (the tail).
    unsafe {
        let mut st = State {
            prev: _mm512_setzero_si512(),
            incomplete: _mm512_setzero_si512(),
            error: _mm512_setzero_si512(),
        };
        let mut chunks = input.chunks_exact(64);
        for c in &mut chunks {
            st.step(_mm512_loadu_si512(c.as_ptr().cast()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 64];
            buf[..rest.len()].copy_from_slice(rest);
            st.step(_mm512_loadu_si512(buf.as_ptr().cast()));
        }
        let error = _mm512_or_si512(st.error, st.incomplete);
        _mm512_test_epi8_mask(error, error) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::valid;

    /// Whether this CPU can run the validator; when it cannot, the test
    /// says so on stderr (shown with `--nocapture`) and checks nothing:
    /// the fuzz target `utf8` then exercises simdutf8 instead.
    fn runnable(test: &str) -> bool {
        let ok = is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw");
        if !ok {
            eprintln!("{test}: NOT RUN, this CPU has no AVX-512F/BW");
        }
        ok
    }

    fn check(b: &[u8]) {
        assert!(is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"));
        // SAFETY: the CPU has AVX-512F and BW (asserted above; the tests
        // call `runnable` first, so the assertion holds wherever they run).
        let got = unsafe { valid(b) };
        assert_eq!(got, std::str::from_utf8(b).is_ok(), "{b:02x?}");
    }

    /// Every sequence of one to four bytes whose first byte is a lead (or
    /// not), at offsets around the block boundaries, in ASCII and in
    /// multibyte surroundings, agrees with the standard library.
    #[test]
    fn agrees_with_std_on_short_sequences() {
        if !runnable("agrees_with_std_on_short_sequences") {
            return;
        }
        let mut seqs: Vec<Vec<u8>> = Vec::new();
        for a in 0x80..=0xFFu8 {
            seqs.push(vec![a]);
            for b in 0..=0xFFu8 {
                seqs.push(vec![a, b]);
            }
        }
        // Three and four bytes: every lead with continuation-ish bytes at
        // the class boundaries.
        let edges = [
            0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF,
            0xF0, 0xF4, 0xF5, 0xFF,
        ];
        let mut long: Vec<Vec<u8>> = Vec::new();
        for a in 0xC0..=0xFFu8 {
            for &b in &edges {
                for &c in &edges {
                    long.push(vec![a, b, c]);
                    for d in [0x7F, 0x80, 0xBF, 0xC0] {
                        long.push(vec![a, b, c, d]);
                    }
                }
            }
        }
        let short = seqs.iter().map(|s| (s, &[0usize, 62, 63, 127][..]));
        let long = long.iter().map(|s| (s, &[61usize, 63][..]));
        for (s, offsets) in short.chain(long) {
            for &at in offsets {
                for fill in [b'a', 0xC3] {
                    let mut v = vec![b'a'; at];
                    if fill == 0xC3 {
                        // Valid two-byte characters before the sequence.
                        for i in (0..at.saturating_sub(1)).step_by(2) {
                            v[i] = 0xC3;
                            v[i + 1] = 0xA9;
                        }
                    }
                    v.extend_from_slice(s);
                    check(&v);
                    v.extend_from_slice(b"xyz");
                    check(&v);
                }
            }
        }
    }

    /// Valid text of every width across block boundaries, then each byte
    /// of it changed to a few bad values.
    #[test]
    fn agrees_with_std_on_mixed_text() {
        if !runnable("agrees_with_std_on_mixed_text") {
            return;
        }
        let text = "aé€😀ßЮрий 中文 z".repeat(12);
        let b = text.as_bytes();
        for len in 0..b.len() {
            check(&b[..len]);
        }
        for i in 0..b.len() {
            for bad in [0x80, 0xBF, 0xC0, 0xE0, 0xED, 0xF0, 0xF4, 0xF8, 0xFF, b'x'] {
                let mut v = b.to_vec();
                v[i] = bad;
                check(&v);
            }
        }
    }
}
