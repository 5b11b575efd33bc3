//! JSON string literals.
//!
//! # Algorithm
//!
//! Copy as you scan: room for the string, its quotes and one spare block
//! is reserved, then each block of input is stored to the output *before*
//! it is tested, and the output only advances over the block's clean
//! prefix. A clean string therefore costs one vector load, one store and
//! one test per block, with no `memcpy` call; the next block's address does
//! not depend on the test (a predicted branch), so loads run ahead. A byte
//! that needs escaping is written as its escape from `ESCAPE`, and the
//! scan resumes after it. By length:
//!
//! - under 16 bytes ([`write_str`]'s inline path, `copy_short`): two
//!   overlapping loads and stores of 8, 4 or 1 bytes and one test of
//!   both words (SSE2 on x86_64, SWAR elsewhere), read
//!   straight from the string (a padded stack copy would be re-read by a
//!   wider load than the writes that filled it: a store-forwarding stall);
//! - under 64 bytes ([`write_medium_str_raw`], used by `dumps`' container
//!   loops): 16-byte blocks tested together, the last one overlapping;
//! - otherwise (`write_str_general`): 64-byte blocks with AVX-512BW when
//!   the CPU has it (run-time detection; masked load for the tail, so no
//!   byte past the string is read), else 16-byte blocks whose last partial
//!   block is the string's last 16 bytes (the overlap rewrites identical
//!   bytes), or a word-load copy right after an escape.
//!
//! A byte needs escaping when it equals `"` or `\`, or when
//! `min(b, 0x1F) == b`: SSE2 on x86_64 (part of the baseline), an 8-byte
//! SWAR word elsewhere. Bytes >= 0x80 are never touched, so the output is
//! valid UTF-8 whenever the input is.

use super::Buf;

/// The escape of each byte that needs one: the second byte of a short escape
/// (`b'n'` for `\n`), `b'u'` for `\u00XX`, or 0 for bytes copied as they are.
/// The Lua encoder's table (`cjson.rs`) starts from this one.
pub(super) const ESCAPE_TABLE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0A] = b'n';
    t[0x0C] = b'f';
    t[0x0D] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// The table as a static (one copy in memory, read by the writers below).
static ESCAPE: [u8; 256] = ESCAPE_TABLE;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Append `s` as a JSON string literal, quotes included.
///
/// Strings under 16 bytes (most keys and many values) are read with two
/// overlapping loads straight from `s` and stored the same way (see
/// `copy_short`); longer ones, and short ones with a byte to escape, take
/// `write_str_general`: copy as you scan, 16 bytes per step, the output
/// advancing only over each block's clean prefix.
#[inline]
pub fn write_str<B: Buf + ?Sized>(out: &mut B, s: &[u8]) {
    if s.len() < BLOCK {
        out.reserve(SHORT_STR_MAX_LEN);
        let len = out.len();
        // SAFETY: `reserve` leaves room for the quotes and `n < 16` bytes;
        // `set_len` covers only bytes written.
        unsafe {
            let n = write_short_str_raw(out.as_mut_ptr().add(len), s);
            if n != 0 {
                out.set_len(len + n);
                return;
            }
        }
    }
    write_str_general(out, s);
}

/// Room [`write_short_str_raw`] may write: two quotes and 15 bytes.
pub const SHORT_STR_MAX_LEN: usize = BLOCK + 1;

/// Write `s` (under 16 bytes) as a JSON string literal at `dst` when no
/// byte of it needs an escape, and return its length (`s.len() + 2`);
/// return 0 otherwise (the bytes at `dst` are then garbage, not text).
///
/// # Safety
/// `s.len() < 16`, and `dst` must be writable for [`SHORT_STR_MAX_LEN`]
/// bytes.
#[inline(always)]
pub unsafe fn write_short_str_raw(dst: *mut u8, s: &[u8]) -> usize {
    let n = s.len();
    debug_assert!(n < BLOCK);
    // SAFETY: `n + 2 <= 17` bytes at `dst` (the contract); `copy_short`
    // reads `n` bytes of `s` and writes `n` bytes at `dst + 1`.
    unsafe {
        if copy_short(s.as_ptr(), n, dst.add(1)) {
            *dst = b'"';
            *dst.add(1 + n) = b'"';
            n + 2
        } else {
            0
        }
    }
}

/// Strings under this many bytes are written by [`write_medium_str_raw`].
pub const MEDIUM_STR: usize = 64;
/// Room [`write_medium_str_raw`] may write: two quotes and 63 bytes.
pub const MEDIUM_STR_MAX_LEN: usize = MEDIUM_STR + 1;

/// Write `s` (under [`MEDIUM_STR`] bytes) as a JSON string literal at
/// `dst` when no byte of it needs an escape, and return its length
/// (`s.len() + 2`); return 0 otherwise (the bytes at `dst` are then
/// garbage, not text). Under 16 bytes: `copy_short`; else 16-byte blocks
/// copied and tested together, the last one overlapping the one before.
///
/// # Safety
/// `s.len() < MEDIUM_STR`, and `dst` must be writable for
/// [`MEDIUM_STR_MAX_LEN`] bytes.
#[inline(always)]
pub unsafe fn write_medium_str_raw(dst: *mut u8, s: &[u8]) -> usize {
    let n = s.len();
    debug_assert!(n < MEDIUM_STR);
    if n < BLOCK {
        // SAFETY: per the contract.
        return unsafe { write_short_str_raw(dst, s) };
    }
    // SAFETY: `n >= 16`; every block read lies within `s[..n]` and every
    // block written within `dst[1..n + 1]`; the quotes at `0` and `n + 1`
    // are within the `n + 2 <= MEDIUM_STR_MAX_LEN` bytes of room.
    unsafe {
        let src = s.as_ptr();
        let out = dst.add(1);
        let mut m = copy_block_mask(src.add(n - BLOCK), out.add(n - BLOCK));
        let mut i = 0;
        while i + BLOCK < n {
            m |= copy_block_mask(src.add(i), out.add(i));
            i += BLOCK;
        }
        if m != 0 {
            return 0;
        }
        *dst = b'"';
        *dst.add(1 + n) = b'"';
    }
    n + 2
}

/// Copy `n < 16` bytes from `src` to `dst` with (at most two, overlapping)
/// loads and stores of a power-of-two width, no `memcpy` call and no
/// staging buffer (a padded stack copy would be re-read by a wider load
/// than the writes that filled it, which stalls store forwarding). Returns
/// whether none of the bytes needs an escape; the bytes are copied either
/// way.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` bytes, `n < 16`.
#[inline(always)]
unsafe fn copy_short(src: *const u8, n: usize, dst: *mut u8) -> bool {
    use std::ptr::{read_unaligned as rd, write_unaligned as wr};
    debug_assert!(n < BLOCK);
    // SAFETY: (whole block) every access is within `0..n` of `src` / `dst`
    // (per the contract): `n - 8 >= 0` when `n >= 8`, `n - 4 >= 0` when
    // `n >= 4`, `n / 2 < n` and `n - 1 >= 0` when `n >= 1`.
    unsafe {
        let w = if n >= 8 {
            let a = rd(src.cast::<u64>());
            let b = rd(src.add(n - 8).cast::<u64>());
            wr(dst.cast::<u64>(), a);
            wr(dst.add(n - 8).cast::<u64>(), b);
            return !needs_escape_words(a, b);
        } else if n >= 4 {
            let a = rd(src.cast::<u32>());
            let b = rd(src.add(n - 4).cast::<u32>());
            wr(dst.cast::<u32>(), a);
            wr(dst.add(n - 4).cast::<u32>(), b);
            a as u64 | (b as u64) << 32
        } else if n > 0 {
            let a = *src;
            let b = *src.add(n / 2);
            let c = *src.add(n - 1);
            *dst = a;
            *dst.add(n / 2) = b;
            *dst.add(n - 1) = c;
            // Pad with spaces (no escape) to a full word.
            a as u64 | (b as u64) << 8 | (c as u64) << 16 | 0x2020_2020_2000_0000
        } else {
            return true;
        };
        !needs_escape_words(w, w)
    }
}

/// Whether any byte of the words `a` and `b` needs an escape. On x86_64
/// the two words are tested together in one SSE2 register (as
/// [`copy_block_mask`] tests a block: about half the instructions of two
/// SWAR tests); elsewhere each with [`needs_escape_word`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn needs_escape_words(a: u64, b: u64) -> bool {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; register operations only.
    unsafe {
        let v = _mm_set_epi64x(b as i64, a as i64);
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let bslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        let ctrl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, bslash), ctrl)) != 0
    }
}

/// Whether any byte of the words `a` and `b` needs an escape.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn needs_escape_words(a: u64, b: u64) -> bool {
    needs_escape_word(a) || needs_escape_word(b)
}

/// Whether any byte of the 8-byte word `w` needs an escape: `"`, `\` or a
/// byte below 0x20. Exact (no false positives): with no byte below 0x20 the
/// subtraction borrows nowhere, and bytes >= 0x80 are masked by `!w`.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn needs_escape_word(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x80 * ONES;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    let ctrl = w.wrapping_sub(0x20 * ONES) & !w;
    (ctrl | zero(w ^ (b'"' as u64 * ONES)) | zero(w ^ (b'\\' as u64 * ONES))) & HIGH != 0
}

/// Strings at least this long take the AVX-512 path when the CPU has it.
const WIDE_MIN: usize = 64;

/// [`write_str`] for any string: 64-byte blocks with AVX-512BW when the
/// CPU has it and `QJSON_BACKEND` allows it (see [`crate::cpu`]; the build
/// targets baseline x86-64), else 16-byte blocks.
#[inline(never)]
fn write_str_general<B: Buf + ?Sized>(out: &mut B, s: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if s.len() >= WIDE_MIN && crate::cpu::kernels().avx512_escape {
        // SAFETY: `avx512_escape` is true only when the CPU has AVX-512F
        // and AVX-512BW (`cpu::Features::avx512_escape`).
        unsafe { write_str_avx512(out, s) };
        return;
    }
    write_str_blocks(out, s);
}

/// `write_str_general` with AVX-512BW: copy as you scan, 64 bytes per
/// step; the last partial block is read with a masked load (no bytes past
/// `s` are touched) and stored whole (room for it is reserved), and the
/// output advances only over the clean prefix of each block.
///
/// # Safety
/// The CPU must support AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn write_str_avx512<B: Buf + ?Sized>(out: &mut B, s: &[u8]) {
    use std::arch::x86_64::*;
    const W: usize = 64;
    let n = s.len();
    out.reserve(n + 2 + W);
    let mut dst = out.as_mut_ptr();
    let mut w = out.len();
    let mut i = 0;
    // SAFETY: (whole block) `out` has room for `n - i + 1 + W` bytes past
    // `w` (reserved above and renewed after each escape), so each 64-byte
    // store at `dst + w` and the closing quote fit; loads read `s[i..]`,
    // the last one masked to `n - i < 64` bytes (masked-off lanes are not
    // read); `set_len` covers only bytes written and checked.
    unsafe {
        let quote = _mm512_set1_epi8(b'"' as i8);
        let bslash = _mm512_set1_epi8(b'\\' as i8);
        let space = _mm512_set1_epi8(0x20);
        *dst.add(w) = b'"';
        w += 1;
        while i < n {
            let rem = n - i;
            let (v, valid) = if rem >= W {
                (_mm512_loadu_si512(s.as_ptr().add(i).cast()), u64::MAX)
            } else {
                let k = (1u64 << rem) - 1;
                (_mm512_maskz_loadu_epi8(k, s.as_ptr().add(i).cast()), k)
            };
            _mm512_storeu_si512(dst.add(w).cast(), v);
            let m = (_mm512_cmpeq_epi8_mask(v, quote)
                | _mm512_cmpeq_epi8_mask(v, bslash)
                | _mm512_cmplt_epu8_mask(v, space))
                & valid;
            if m == 0 {
                let step = rem.min(W);
                i += step;
                w += step;
                continue;
            }
            let clean = m.trailing_zeros() as usize;
            i += clean;
            w += clean;
            out.set_len(w);
            write_escape(out, s[i]);
            i += 1;
            out.reserve(n - i + 1 + W);
            dst = out.as_mut_ptr();
            w = out.len();
        }
        *dst.add(w) = b'"';
        out.set_len(w + 1);
    }
}

/// `write_str_general` with 16-byte blocks (SSE2, or SWAR words).
#[inline(never)]
fn write_str_blocks<B: Buf + ?Sized>(out: &mut B, s: &[u8]) {
    let n = s.len();
    out.reserve(n + 2 + BLOCK);
    let mut dst = out.as_mut_ptr();
    let mut w = out.len();
    // Where the current run of bytes copied without escapes started.
    let mut run = 0;
    let mut i = 0;
    // SAFETY: (whole block) `dst` is the buffer of `out`, which has room for
    // `n - i + 1 + BLOCK` bytes past `w` (reserved above and renewed after
    // each escape), so every 16-byte store at `dst + w` (or just below it)
    // fits; `s` is read only within `0..n` (or through the padded copy);
    // `set_len` covers only bytes written.
    unsafe {
        *dst.add(w) = b'"';
        w += 1;
        loop {
            // Whole blocks: the next address does not wait for this block's
            // test (a predicted branch), so the loads run ahead.
            while n - i >= BLOCK {
                let m = copy_block_mask(s.as_ptr().add(i), dst.add(w));
                if m != 0 {
                    break;
                }
                i += BLOCK;
                w += BLOCK;
            }
            let clean = if n - i >= BLOCK {
                copy_block(s.as_ptr().add(i), dst.add(w))
            } else if i == n {
                break;
            } else if n >= BLOCK && n - BLOCK >= run {
                // The last 16 bytes of `s`, stored where they belong: the
                // first `back` of them were already written (same bytes,
                // same places, no escape since) and are clean.
                let back = BLOCK - (n - i);
                copy_block(s.as_ptr().add(n - BLOCK), dst.add(w - back)) - back
            } else {
                // A short tail (short string, or right after an escape):
                // copied with overlapping word loads; on a hit, the clean
                // prefix is found byte by byte (under 16 bytes).
                let m = n - i;
                if copy_short(s.as_ptr().add(i), m, dst.add(w)) {
                    m
                } else {
                    s[i..]
                        .iter()
                        .take_while(|&&b| ESCAPE[b as usize] == 0)
                        .count()
                }
            };
            i += clean;
            w += clean;
            if clean == BLOCK {
                continue;
            }
            if i == n {
                break;
            }
            out.set_len(w);
            write_escape(out, s[i]);
            i += 1;
            run = i;
            out.reserve(n - i + 1 + BLOCK);
            dst = out.as_mut_ptr();
            w = out.len();
        }
        *dst.add(w) = b'"';
        out.set_len(w + 1);
    }
}

/// Bytes per step of [`copy_block`].
const BLOCK: usize = 16;

/// Copy 16 bytes from `src` to `dst` and return how many of them, from the
/// start, need no escape (16 when none does).
///
/// # Safety
/// `src` must be readable and `dst` writable for 16 bytes.
#[inline(always)]
unsafe fn copy_block(src: *const u8, dst: *mut u8) -> usize {
    // SAFETY: per the contract.
    let m = unsafe { copy_block_mask(src, dst) };
    (m | 1 << BLOCK).trailing_zeros() as usize
}

/// Copy 16 bytes from `src` to `dst` and return a mask with bit `j` set
/// when byte `j` needs an escape.
///
/// # Safety
/// `src` must be readable and `dst` writable for 16 bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn copy_block_mask(src: *const u8, dst: *mut u8) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: per the contract; unaligned loads and stores; SSE2 is part of
    // the x86_64 baseline.
    unsafe {
        let v = _mm_loadu_si128(src.cast());
        _mm_storeu_si128(dst.cast(), v);
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let bslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        let ctrl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, bslash), ctrl)) as u32
    }
}

/// Copy 16 bytes from `src` to `dst` and return a mask with bit `j` set
/// when byte `j` needs an escape (exact up to the lowest set bit).
///
/// # Safety
/// `src` must be readable and `dst` writable for 16 bytes.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn copy_block_mask(src: *const u8, dst: *mut u8) -> u32 {
    // SAFETY: per the contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, BLOCK) };
    // SAFETY: per the contract, `src` is readable for 16 bytes.
    let b = unsafe { std::slice::from_raw_parts(src, BLOCK) };
    match clean_prefix(b) {
        BLOCK => 0,
        c => 1 << c,
    }
}

/// Write the escape of byte `b` (one that needs escaping).
#[cold]
#[inline(never)]
fn write_escape<B: Buf + ?Sized>(out: &mut B, b: u8) {
    match ESCAPE[b as usize] {
        b'u' => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[(b >> 4) as usize],
            HEX[(b & 0xF) as usize],
        ]),
        e => out.extend_from_slice(&[b'\\', e]),
    }
}

/// Whether byte `b` must be escaped.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn needs_escape(b: u8) -> bool {
    ESCAPE[b as usize] != 0
}

/// The length of the longest prefix of `s` with no byte that must be escaped.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn clean_prefix(s: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x80 * ONES;
    // Bits set in the bytes of `w` that equal `c`, or are < 0x20; exact up to
    // and including the lowest flagged byte (borrows only run upwards).
    let has = |w: u64, c: u8| {
        let x = w ^ (c as u64 * ONES);
        x.wrapping_sub(ONES) & !x & HIGH
    };
    let mut i = 0;
    while let Some(chunk) = s.get(i..i + 8) {
        let mut a = [0u8; 8];
        a.copy_from_slice(chunk);
        let w = u64::from_le_bytes(a);
        let m = (w.wrapping_sub(0x20 * ONES) & !w & HIGH) | has(w, b'"') | has(w, b'\\');
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < s.len() && !needs_escape(s[i]) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, s.as_bytes());
        String::from_utf8(out).unwrap()
    }

    /// The reference: escape byte by byte.
    fn naive(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    #[test]
    fn escapes() {
        assert_eq!(esc(""), "\"\"");
        assert_eq!(esc("abc"), "\"abc\"");
        assert_eq!(
            esc("a\"b\\c\n\u{0}\u{1f}\u{7f}é😀/"),
            naive("a\"b\\c\n\u{0}\u{1f}\u{7f}é😀/")
        );
        assert_eq!(esc("\u{1}"), "\"\\u0001\"");
    }

    /// Both block paths (AVX-512 when the CPU has it, 16-byte blocks)
    /// against the reference, at every offset around the block borders.
    #[test]
    fn wide_and_narrow_paths() {
        let run = |s: &str| {
            let mut a = Vec::new();
            write_str_blocks(&mut a, s.as_bytes());
            assert_eq!(String::from_utf8(a).unwrap(), naive(s), "{s:?}");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx512bw") {
                let mut b = b"prefix".to_vec();
                // SAFETY: the CPU has AVX-512BW (checked).
                unsafe { write_str_avx512(&mut b, s.as_bytes()) };
                assert_eq!(
                    String::from_utf8(b[6..].to_vec()).unwrap(),
                    naive(s),
                    "{s:?}"
                );
            }
            assert_eq!(esc(s), naive(s));
        };
        for len in [63, 64, 65, 127, 128, 129, 200] {
            let clean: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            run(&clean);
            for at in 0..len {
                for b in ['"', '\\', '\n', '\u{1}', '\u{1f}', '\u{7f}', 'é'] {
                    let mut s: Vec<char> = clean.chars().collect();
                    s[at] = b;
                    let s: String = s.into_iter().collect();
                    run(&s);
                }
            }
        }
        run(&"\"".repeat(150));
        run(&("😀".repeat(40) + "\\" + &"x".repeat(70)));
    }

    /// The word tests (SSE2 and SWAR) against the table: each byte at
    /// each place of either word.
    #[test]
    fn word_tests() {
        for b in 0..=255u8 {
            let want = ESCAPE[b as usize] != 0;
            for at in 0..8 {
                let w =
                    u64::from_le_bytes([b'a'; 8]) & !(0xFF << (8 * at)) | (b as u64) << (8 * at);
                let clean = u64::from_le_bytes([b'a'; 8]);
                assert_eq!(needs_escape_word(w), want, "{b:#x} at {at}");
                assert_eq!(needs_escape_words(w, clean), want, "{b:#x} at {at}");
                assert_eq!(needs_escape_words(clean, w), want, "{b:#x} at {at}");
            }
        }
    }

    #[test]
    fn medium_raw() {
        for len in 0..MEDIUM_STR {
            let clean: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let mut buf = [0u8; MEDIUM_STR_MAX_LEN];
            // SAFETY: `len < MEDIUM_STR` and the buffer has the room.
            let n = unsafe { write_medium_str_raw(buf.as_mut_ptr(), clean.as_bytes()) };
            assert_eq!(&buf[..n], naive(&clean).as_bytes());
            for at in 0..len {
                for b in [b'"', b'\\', b'\n', 0u8, 0x1f] {
                    let mut s = clean.clone().into_bytes();
                    s[at] = b;
                    // SAFETY: as above.
                    let n = unsafe { write_medium_str_raw(buf.as_mut_ptr(), &s) };
                    assert_eq!(n, 0, "{s:?}");
                }
            }
        }
    }

    #[test]
    fn every_position_and_byte() {
        // Each special byte at every offset of strings up to 40 bytes long,
        // so both the 16-byte steps and the tail see it.
        for len in 0..40 {
            for at in 0..len {
                for b in (0u8..0x80).chain([0x7f]) {
                    let mut s: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                    s[at] = b;
                    let s = String::from_utf8(s).unwrap();
                    assert_eq!(esc(&s), naive(&s), "{s:?}");
                }
            }
        }
        let long = "é".repeat(50) + "\"" + &"x".repeat(33) + "\u{2028}";
        assert_eq!(esc(&long), naive(&long));
    }
}
