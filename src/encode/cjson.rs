//! String literals as lua-cjson writes them (the Lua encoder's strings).
//!
//! lua-cjson escapes more than JSON requires: `"`, `\`, `/`, every byte
//! below 0x20 and DEL (0x7F). It uses the short forms `\"`, `\\`, `\/`,
//! `\b`, `\f`, `\n`, `\r`, `\t` and `\u00xx` (lowercase hex) for the rest;
//! bytes >= 0x80 are copied as they are (it does not check UTF-8).
//!
//! # Algorithm
//!
//! Copy as you scan, into room the caller reserved (at most
//! [`MAX_ESCAPE`] bytes out per byte in, so a block store never runs past
//! it): each 16-byte block of input is stored to the output *before* it is
//! tested (SSE2 on x86_64, two 8-byte SWAR words elsewhere), and the output
//! advances only over the block's clean prefix. The byte that needs an
//! escape is written from `ESCAPE`, and the scan resumes after it. The
//! last 8-15 bytes go as one 8-byte word and the last 0-7 byte by byte. A
//! clean string therefore costs one load, one store and one test per 16
//! bytes; the Lua side calls this once per string through LuaJIT's FFI,
//! writing straight into its `string.buffer`.

/// Output bytes per input byte at most (`\u00xx`).
pub const MAX_ESCAPE: usize = 6;

/// The escape of each byte: 0 for bytes copied as they are, the second byte
/// of a short escape (`b'n'` for `\n`), or `b'u'` for `\u00xx`.
static ESCAPE: [u8; 256] = {
    // qjson's own table, plus the two bytes lua-cjson also escapes.
    let mut t = super::escape::ESCAPE_TABLE;
    t[0x7F] = b'u';
    t[b'/' as usize] = b'/';
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Bytes per step of the block loop.
const BLOCK: usize = 16;

/// Write `s` escaped as lua-cjson does (no quotes) at `dst`; return the
/// number of bytes written.
///
/// # Safety
/// `dst` must be writable for `MAX_ESCAPE * s.len()` bytes and must not
/// overlap `s`.
pub unsafe fn write_escaped(dst: *mut u8, s: &[u8]) -> usize {
    use std::ptr::{read_unaligned as rd, write_unaligned as wr};
    let n = s.len();
    let src = s.as_ptr();
    let (mut i, mut o) = (0usize, 0usize);
    // SAFETY: (whole block) loads read `s[i..i + 16]` or `s[i..i + 8]`
    // only when that many bytes remain; `o <= MAX_ESCAPE * i` holds
    // throughout (each input byte gives 1..=6 output bytes), so a store of
    // `k <= n - i` bytes at `o` ends by `MAX_ESCAPE * i + k <=
    // MAX_ESCAPE * n`, within the room the contract gives.
    unsafe {
        while n - i >= BLOCK {
            let m = copy_block_mask(src.add(i), dst.add(o));
            if m == 0 {
                i += BLOCK;
                o += BLOCK;
                continue;
            }
            let clean = m.trailing_zeros() as usize;
            i += clean;
            o += clean;
            o += put_escape(dst.add(o), *src.add(i));
            i += 1;
        }
        while n - i >= 8 {
            let w = rd(src.add(i).cast::<u64>());
            wr(dst.add(o).cast::<u64>(), w);
            let m = escape_mask_word(w);
            if m == 0 {
                i += 8;
                o += 8;
                continue;
            }
            let clean = (m.trailing_zeros() / 8) as usize;
            i += clean;
            o += clean;
            o += put_escape(dst.add(o), *src.add(i));
            i += 1;
        }
        while i < n {
            let b = *src.add(i);
            if ESCAPE[b as usize] == 0 {
                *dst.add(o) = b;
                o += 1;
            } else {
                o += put_escape(dst.add(o), b);
            }
            i += 1;
        }
    }
    o
}

/// Write the escape of `b` (a byte that needs one) at `dst`; return its
/// length (2 or 6).
///
/// # Safety
/// `dst` must be writable for 6 bytes.
#[inline(always)]
unsafe fn put_escape(dst: *mut u8, b: u8) -> usize {
    let e = ESCAPE[b as usize];
    // SAFETY: per the contract, 6 bytes at `dst` are writable.
    unsafe {
        *dst = b'\\';
        *dst.add(1) = e;
        if e != b'u' {
            return 2;
        }
        *dst.add(2) = b'0';
        *dst.add(3) = b'0';
        *dst.add(4) = HEX[(b >> 4) as usize];
        *dst.add(5) = HEX[(b & 0xF) as usize];
    }
    6
}

/// The high bit of each byte of `w` that needs an escape, exact up to and
/// including the lowest one (borrows in the subtractions only run upwards,
/// from a byte that is itself flagged).
#[inline(always)]
fn escape_mask_word(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x80 * ONES;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    let ctrl = w.wrapping_sub(0x20 * ONES) & !w;
    (ctrl
        | zero(w ^ (b'"' as u64 * ONES))
        | zero(w ^ (b'\\' as u64 * ONES))
        | zero(w ^ (b'/' as u64 * ONES))
        | zero(w ^ (0x7F * ONES)))
        & HIGH
}

/// Copy 16 bytes from `src` to `dst` and return a mask with bit `j` set
/// when byte `j` needs an escape (exact up to the lowest set bit).
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
        let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
        let ctrl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
        let hit = _mm_or_si128(
            _mm_or_si128(eq(b'"'), eq(b'\\')),
            _mm_or_si128(_mm_or_si128(eq(b'/'), eq(0x7F)), ctrl),
        );
        _mm_movemask_epi8(hit) as u32
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
    use std::ptr::{read_unaligned as rd, write_unaligned as wr};
    // SAFETY: per the contract.
    unsafe {
        let a = rd(src.cast::<u64>());
        let b = rd(src.add(8).cast::<u64>());
        wr(dst.cast::<u64>(), a);
        wr(dst.add(8).cast::<u64>(), b);
        let (ma, mb) = (escape_mask_word(a), escape_mask_word(b));
        if ma != 0 {
            1 << (ma.trailing_zeros() / 8)
        } else if mb != 0 {
            1 << (8 + mb.trailing_zeros() / 8)
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; MAX_ESCAPE * s.len()];
        // SAFETY: `out` has the room the contract asks for.
        let n = unsafe { write_escaped(out.as_mut_ptr(), s) };
        out.truncate(n);
        out
    }

    /// The reference: lua-cjson's table, byte by byte.
    fn naive(s: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for &b in s {
            match b {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'/' => out.extend_from_slice(b"\\/"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0C => out.extend_from_slice(b"\\f"),
                0..=0x1F | 0x7F => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
                _ => out.push(b),
            }
        }
        out
    }

    #[test]
    fn every_byte() {
        for b in 0..=255u8 {
            assert_eq!(esc(&[b]), naive(&[b]), "byte {b:#x}");
        }
        assert_eq!(esc(b"a/b\"c\\\x7f\x01"), b"a\\/b\\\"c\\\\\\u007f\\u0001");
    }

    /// Every length up to 40 and a special byte at every offset of it (the
    /// block, word and byte paths, and their borders), plus long clean and
    /// all-special strings.
    #[test]
    fn every_offset() {
        let specials = [b'"', b'\\', b'/', 0, 0x1F, 0x7F, b'\n', 0x80, 0xFF, b'a'];
        for n in 0..40 {
            let base: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert_eq!(esc(&base), naive(&base));
            for at in 0..n {
                for &c in &specials {
                    let mut s = base.clone();
                    s[at] = c;
                    assert_eq!(esc(&s), naive(&s), "len {n} at {at} byte {c:#x}");
                    if at + 1 < n {
                        s[at + 1] = 0x7F;
                        assert_eq!(esc(&s), naive(&s), "len {n} at {at}+1 byte {c:#x}");
                    }
                }
            }
        }
        let all: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        assert_eq!(esc(&all), naive(&all));
        let slashes = vec![b'/'; 100];
        assert_eq!(esc(&slashes), naive(&slashes));
        let ctrl = vec![1u8; 100];
        assert_eq!(esc(&ctrl).len(), 600);
    }
}
