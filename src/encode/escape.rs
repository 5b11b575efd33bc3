//! JSON string literals.
//!
//! # Algorithm
//!
//! [`write_str`] reserves room for the clean case (the text plus two
//! quotes), then alternates two steps: [`clean_prefix`] finds the next byte
//! that must be escaped (`"`, `\` or a control byte < 0x20) and the run
//! before it is copied with one `extend_from_slice`; that byte is written as
//! its escape from [`ESCAPE`]. On x86_64 the search tests 16 bytes per step
//! with SSE2 (part of the baseline, so no runtime detection): a byte needs
//! escaping when it equals `"` or `\`, or when `min(b, 0x1F) == b`. Other
//! targets test 8 bytes per step with SWAR arithmetic. Bytes >= 0x80 are
//! never touched, so the output is valid UTF-8 whenever the input is.

/// The escape of each byte that needs one: the second byte of a short escape
/// (`b'n'` for `\n`), `b'u'` for `\u00XX`, or 0 for bytes copied as they are.
static ESCAPE: [u8; 256] = {
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

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Append `s` as a JSON string literal, quotes included.
#[inline]
pub fn write_str(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() < 16 && write_short_clean(out, s) {
        return;
    }
    write_str_general(out, s);
}

/// Short strings (most keys and many values): pad a copy to 16 bytes with
/// spaces (which need no escape), test it in one step, and when nothing
/// needs escaping write it with one 16-byte copy. Returns false (and writes
/// nothing) when some byte needs escaping.
#[inline(always)]
fn write_short_clean(out: &mut Vec<u8>, s: &[u8]) -> bool {
    debug_assert!(s.len() < 16);
    let mut buf = [b' '; 16];
    buf[..s.len()].copy_from_slice(s);
    if clean_prefix(&buf) < s.len() {
        return false;
    }
    out.reserve(18);
    let len = out.len();
    // SAFETY: `reserve(18)` leaves room for the quote, 16 bytes and (at
    // `1 + s.len() <= 16`) the closing quote; `set_len` covers only bytes
    // written here, the last of them being the closing quote.
    unsafe {
        let dst = out.as_mut_ptr().add(len);
        *dst = b'"';
        std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(1), 16);
        *dst.add(1 + s.len()) = b'"';
        out.set_len(len + s.len() + 2);
    }
    true
}

/// [`write_str`] for any string.
fn write_str_general(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    let mut start = 0;
    loop {
        let i = start + clean_prefix(&s[start..]);
        out.extend_from_slice(&s[start..i]);
        if i == s.len() {
            break;
        }
        write_escape(out, s[i]);
        start = i + 1;
    }
    out.push(b'"');
}

/// Write the escape of byte `b` (one that needs escaping).
#[cold]
#[inline(never)]
fn write_escape(out: &mut Vec<u8>, b: u8) {
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
#[inline(always)]
fn needs_escape(b: u8) -> bool {
    ESCAPE[b as usize] != 0
}

/// The length of the longest prefix of `s` with no byte that must be escaped.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn clean_prefix(s: &[u8]) -> usize {
    use std::arch::x86_64::*;
    let mut i = 0;
    while i + 16 <= s.len() {
        // SAFETY: `s[i..i + 16]` is in bounds (checked above) and `loadu`
        // has no alignment requirement; SSE2 is part of the x86_64 baseline.
        let m = unsafe {
            let v = _mm_loadu_si128(s.as_ptr().add(i).cast());
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let bslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            let ctrl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, bslash), ctrl))
        };
        if m != 0 {
            return i + m.trailing_zeros() as usize;
        }
        i += 16;
    }
    while i < s.len() && !needs_escape(s[i]) {
        i += 1;
    }
    i
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
