//! JSON string bodies: unescaping and validation.
//!
//! A string body is the bytes between the quotes. Bodies without a backslash
//! decode to a borrowed `&str` (zero-copy); others are unescaped into an
//! owned `String`.
//!
//! # Algorithm
//!
//! [`decode_str`] makes one forward pass. A chunked search (64 bytes at a
//! time, written so the compiler vectorizes it) looks for the next *special*
//! byte: a backslash, a control byte (< 0x20) or, until the first one is
//! seen, a non-ASCII byte (>= 0x80). Printable ASCII is skipped at close to
//! memory bandwidth, and a body that is all printable ASCII is returned
//! borrowed without any further work.
//!
//! - The first non-ASCII byte triggers one UTF-8 validation (simdutf8) of the
//!   rest of the body; its result (and the offset of the first invalid byte)
//!   is remembered and the search continues looking only for backslashes and
//!   control bytes.
//! - A backslash starts an escape: the bytes since the last escape are copied
//!   into the output buffer (allocated on the first backslash, sized to the
//!   body), and the escape is decoded (`\uD8xx\uDCxx` pairs combine into one
//!   scalar value).
//! - A control byte is an error.
//!
//! UTF-8 is always validated when the body holds a non-ASCII byte, whatever
//! the caller says: the result is a `&str`, and these functions are safe to
//! call on any bytes. When several errors exist, the one at the smallest
//! offset is reported, as a left-to-right parser would.
//!
//! Error offsets (those of Python's `json`): `InvalidEscape` and
//! `LoneSurrogate` point at the backslash, `InvalidUnicodeEscape` (`\u`
//! without four hex digits) at its `u`, also in the second half of a
//! surrogate pair. Control bytes and invalid UTF-8 point at the offending
//! byte.
//!
//! [`unescape_validated`] is the fast path of eager decoding (`loads`),
//! for bodies strict validation has already checked: it unescapes into a
//! caller's reused buffer, copying plain runs 8 bytes a step and finding the
//! next backslash in each word with a SWAR test, with no checks left to do.
//!
//! [`body_eq`] compares a body with an unescaped key without allocating:
//! unescaping never makes a body longer, so a body shorter than the key, or
//! longer but without a backslash, cannot match; equal lengths match only
//! byte for byte; otherwise the body is unescaped on the fly and compared
//! piece by piece.

use crate::error::{Error, ErrorKind};
use std::borrow::Cow;

/// Value of an ASCII hex digit, or -1.
static HEX: [i8; 256] = {
    let mut t = [-1i8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as i8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as i8;
        t[b'A' as usize + i] = 10 + i as i8;
        i += 1;
    }
    t
};

/// The four hex digits at `b[at..at + 4]` as a number (`None` past the
/// end or for a non-digit).
#[inline]
pub(crate) fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let d = b.get(at..at + 4)?;
    let v = (HEX[d[0] as usize] as i32) << 12
        | (HEX[d[1] as usize] as i32) << 8
        | (HEX[d[2] as usize] as i32) << 4
        | HEX[d[3] as usize] as i32;
    // Any -1 (all bits set) makes the result negative.
    (v >= 0).then_some(v as u32)
}

/// Decode the escape sequence whose backslash is at `b[at]`: the character
/// and the number of bytes the escape spans (2, 6 or 12). Error offsets are
/// indices into `b`.
#[inline]
fn escape_at(b: &[u8], at: usize) -> Result<(char, usize), Error> {
    let c = match b.get(at + 1) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => return unicode_escape(b, at),
        _ => return Err(Error::new(ErrorKind::InvalidEscape, at)),
    };
    Ok((c, 2))
}

/// The `\uXXXX` escape at `b[at]`, joined with a following low surrogate
/// escape when it is a high surrogate.
fn unicode_escape(b: &[u8], at: usize) -> Result<(char, usize), Error> {
    let hi = hex4(b, at + 2).ok_or_else(|| Error::new(ErrorKind::InvalidUnicodeEscape, at + 1))?;
    match hi {
        0xD800..=0xDBFF => {
            if b.get(at + 6) != Some(&b'\\') || b.get(at + 7) != Some(&b'u') {
                return Err(Error::new(ErrorKind::LoneSurrogate, at));
            }
            let lo = hex4(b, at + 8)
                .ok_or_else(|| Error::new(ErrorKind::InvalidUnicodeEscape, at + 7))?;
            if !(0xDC00..=0xDFFF).contains(&lo) {
                return Err(Error::new(ErrorKind::LoneSurrogate, at));
            }
            let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
            // Always in U+10000..=U+10FFFF, so never None.
            let c = char::from_u32(cp).ok_or_else(|| Error::new(ErrorKind::LoneSurrogate, at))?;
            Ok((c, 12))
        }
        0xDC00..=0xDFFF => Err(Error::new(ErrorKind::LoneSurrogate, at)),
        // Not a surrogate, so always a valid scalar value.
        _ => Ok((char::from_u32(hi).unwrap_or('\u{fffd}'), 6)),
    }
}

/// Whether the escape whose backslash is at `input[at]` is a `\uXXXX` of a
/// character outside the surrogates (then it spans 6 bytes and is valid):
/// the common case of [`check_escape`], without building its result.
#[inline(always)]
pub fn is_plain_unicode_escape(input: &[u8], at: usize) -> bool {
    input.get(at + 1) == Some(&b'u')
        && hex4(input, at + 2).is_some_and(|cp| !(0xD800..=0xDFFF).contains(&cp))
}

/// Validate the escape sequence whose backslash is at `input[at]`. Returns the
/// number of bytes it spans: 2, 6, or 12 for a `\uD8xx\uDCxx` surrogate pair.
/// A lone surrogate is `LoneSurrogate`.
pub fn check_escape(input: &[u8], at: usize) -> Result<usize, Error> {
    escape_at(input, at).map(|(_, n)| n)
}

/// Whether `c` must stop the search: a backslash, a control byte, or (when
/// `ASCII` is set) a byte >= 0x80.
#[inline(always)]
fn is_special<const ASCII: bool>(c: u8) -> bool {
    if ASCII {
        // Printable ASCII is 0x20..=0x7F.
        c.wrapping_sub(0x20) > 0x5F || c == b'\\'
    } else {
        c < 0x20 || c == b'\\'
    }
}

/// Bits set in the bytes of `w` (little-endian) that are special (see
/// [`is_special`]); exact up to and including the lowest such byte. Classic
/// SWAR: a byte is below `c` when subtracting `c` borrows into its top bit
/// while its own top bit is clear; borrows only run upwards, so the lowest
/// flagged byte is always a true one.
#[inline(always)]
fn special_mask<const ASCII: bool>(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x80 * ONES;
    let control = w.wrapping_sub(0x20 * ONES) & !w & HIGH;
    let x = w ^ (b'\\' as u64 * ONES);
    let backslash = x.wrapping_sub(ONES) & !x & HIGH;
    let non_ascii = if ASCII { w & HIGH } else { 0 };
    control | backslash | non_ascii
}

/// The index of the first special byte (see [`is_special`]) at or after
/// `from`, or `b.len()`.
#[inline]
fn find_special<const ASCII: bool>(b: &[u8], from: usize) -> usize {
    const CHUNK: usize = 64;
    let mut i = from;
    // Whole chunks: an OR-reduction without early exit, which the compiler
    // turns into vector compares, so clean runs go at memory speed.
    while let Some(chunk) = b.get(i..i + CHUNK) {
        let mut hit = false;
        for &c in chunk {
            hit |= is_special::<ASCII>(c);
        }
        if hit {
            break;
        }
        i += CHUNK;
    }
    // Locate the hit (or scan the tail) eight bytes at a time.
    while let Some(w) = b.get(i..i + 8) {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        let m = special_mask::<ASCII>(u64::from_le_bytes(a));
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !is_special::<ASCII>(b[i]) {
        i += 1;
    }
    i
}

/// Decode a string body. `base` is the input offset of `raw[0]` and is added
/// to error offsets. Rejects raw control bytes, unknown escapes, bad `\u`
/// escapes, lone surrogates and invalid UTF-8.
///
/// UTF-8 is validated whenever the body holds a byte >= 0x80 (one simdutf8
/// pass; all-ASCII bodies cost nothing extra), whoever calls: the result is
/// a `&str`, and this safe function must be sound for any bytes. (It took
/// a `check_utf8` flag once, which a safe function cannot honour; a body
/// known to be valid UTF-8 goes to the unsafe [`decode_utf8_str`].)
#[inline]
pub fn decode_str(raw: &[u8], base: usize) -> Result<Cow<'_, str>, Error> {
    if is_short_plain(raw) {
        // SAFETY: every byte is ASCII (no byte >= 0x80), so valid UTF-8.
        return Ok(Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(raw) }));
    }
    // SAFETY: `CHECK` is on: nothing to guarantee.
    unsafe { decode_str_long::<true>(raw, base) }
}

/// Whether `raw` has at most 16 bytes, none of them special in the ASCII
/// sense of [`is_special`]: the common short value, which then needs no
/// further look. Two overlapping words (or halves) cover the bytes without
/// a loop; a special byte in either shows in its [`special_mask`].
#[inline(always)]
fn is_short_plain(raw: &[u8]) -> bool {
    let n = raw.len();
    let word = |i: usize| u64::from_le_bytes(raw[i..i + 8].try_into().expect("8 bytes"));
    let half = |i: usize| {
        u64::from(u32::from_le_bytes(
            raw[i..i + 4].try_into().expect("4 bytes"),
        ))
    };
    match n {
        0 => true,
        1..=3 => raw.iter().all(|&c| !is_special::<true>(c)),
        4..=7 => special_mask::<true>(half(0) | half(n - 4) << 32) == 0,
        8..=16 => special_mask::<true>(word(0)) | special_mask::<true>(word(n - 8)) == 0,
        _ => false,
    }
}

/// [`decode_str`] of a body known to be valid UTF-8 (a string of a
/// strictly validated document, whose whole input was checked): the same
/// result, escapes and control bytes checked alike, but a byte >= 0x80
/// starts no UTF-8 validation.
///
/// # Safety
/// `raw` is valid UTF-8.
#[inline]
pub unsafe fn decode_utf8_str(raw: &[u8], base: usize) -> Result<Cow<'_, str>, Error> {
    if is_short_plain(raw) {
        // SAFETY: every byte is ASCII (no byte >= 0x80), so valid UTF-8.
        return Ok(Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(raw) }));
    }
    // SAFETY: as the caller guarantees.
    unsafe { decode_str_long::<false>(raw, base) }
}

/// [`decode_str`] past its short plain case; with `CHECK` false (the caller
/// then guarantees `raw` is valid UTF-8: see [`decode_utf8_str`]) without
/// the UTF-8 validation.
///
/// # Safety
/// Without `CHECK`, `raw` is valid UTF-8.
#[inline(never)]
unsafe fn decode_str_long<const CHECK: bool>(
    raw: &[u8],
    base: usize,
) -> Result<Cow<'_, str>, Error> {
    match decode_bytes::<CHECK>(raw) {
        // SAFETY: `decode_bytes` only returns `Ok` when the body is valid
        // UTF-8 (printable ASCII, or checked by simdutf8, or, without
        // `CHECK`, as the caller guarantees) and every escape
        // was written as the UTF-8 encoding of a `char`; copies between
        // escapes split the body only at ASCII backslashes, which never fall
        // inside a multi-byte sequence.
        Ok(Cow::Borrowed(b)) => Ok(Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(b) })),
        // SAFETY: as above.
        Ok(Cow::Owned(v)) => Ok(Cow::Owned(unsafe { String::from_utf8_unchecked(v) })),
        Err(e) => Err(Error::new(e.kind, base + e.offset)),
    }
}

/// [`decode_str`] without the final conversion; error offsets are indices
/// into `raw`. `Ok` guarantees the bytes are valid UTF-8 (with `CHECK`;
/// without it, `raw` must be).
fn decode_bytes<const CHECK: bool>(raw: &[u8]) -> Result<Cow<'_, [u8]>, Error> {
    let n = raw.len();
    let mut i = find_special::<true>(raw, 0);
    if i == n {
        return Ok(Cow::Borrowed(raw));
    }
    // The offset of the first invalid UTF-8 byte, once validated.
    let mut bad_utf8: Option<usize> = None;
    let mut validated = false;
    let mut out: Vec<u8> = Vec::new();
    let mut copied = 0; // raw[copied..i] is still to be copied into `out`
    let mut escaped = false;
    while i < n {
        let c = raw[i];
        if c >= 0x80 {
            // The fast validator first; the slower one only to locate an error.
            if CHECK && simdutf8::basic::from_utf8(&raw[i..]).is_err() {
                let up_to = simdutf8::compat::from_utf8(&raw[i..])
                    .err()
                    .map_or(0, |e| e.valid_up_to());
                bad_utf8 = Some(i + up_to);
            }
            validated = true;
        } else {
            if let Some(u) = bad_utf8.filter(|&u| u < i) {
                return Err(cold_utf8(u));
            }
            if c < 0x20 {
                return Err(Error::new(ErrorKind::ControlCharacter, i));
            }
            // A backslash.
            let (ch, len) = escape_at(raw, i)?;
            if !escaped {
                escaped = true;
                out.reserve_exact(n);
            }
            out.extend_from_slice(&raw[copied..i]);
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            i += len;
            copied = i;
        }
        i = if validated {
            find_special::<false>(raw, i)
        } else {
            find_special::<true>(raw, i)
        };
    }
    if let Some(u) = bad_utf8 {
        return Err(cold_utf8(u));
    }
    if !escaped {
        return Ok(Cow::Borrowed(raw));
    }
    out.extend_from_slice(&raw[copied..]);
    Ok(Cow::Owned(out))
}

#[cold]
fn cold_utf8(at: usize) -> Error {
    Error::new(ErrorKind::InvalidUtf8, at)
}

/// Whether the string body `raw` (possibly escaped) equals the unescaped key.
/// Exactly `decode_str(raw, ..) == Ok(key)`: a body that does not decode
/// equals nothing.
pub fn body_eq(raw: &[u8], key: &[u8]) -> bool {
    use std::cmp::Ordering;
    // Most keys differ in their first byte: reject those without a call.
    if let (Some(&r), Some(&k)) = (raw.first(), key.first()) {
        if r != k && r != b'\\' {
            return false;
        }
    }
    match raw.len().cmp(&key.len()) {
        // Unescaping never lengthens a body.
        Ordering::Less => false,
        // Equal lengths: any escape would make the decoded body shorter.
        Ordering::Equal => raw == key && matches!(decode_bytes::<true>(raw), Ok(Cow::Borrowed(_))),
        Ordering::Greater => {
            memchr::memchr(b'\\', raw).is_some()
                && escaped_eq(raw, key)
                && decode_bytes::<true>(raw).is_ok()
        }
    }
}

/// Compare an escaped body with `key`, unescaping on the fly. Does not check
/// control bytes or UTF-8 (the caller does, after a match).
fn escaped_eq(raw: &[u8], key: &[u8]) -> bool {
    let mut i = 0; // in raw
    let mut j = 0; // in key
    loop {
        let b = memchr::memchr(b'\\', &raw[i..]).map_or(raw.len(), |p| i + p);
        let seg = &raw[i..b];
        if key.len() - j < seg.len() || &key[j..j + seg.len()] != seg {
            return false;
        }
        j += seg.len();
        if b == raw.len() {
            return j == key.len();
        }
        let Ok((ch, len)) = escape_at(raw, b) else {
            return false;
        };
        let mut buf = [0u8; 4];
        let enc = ch.encode_utf8(&mut buf).as_bytes();
        if !key[j..].starts_with(enc) {
            return false;
        }
        j += enc.len();
        i = b + len;
    }
}

/// The byte a one-character escape stands for, by the character after the
/// backslash (`\n` -> 0x0A, `\"` -> `"`, ...), or 0 where there is none
/// (`u`, and every byte strict validation rejects after a backslash).
static SIMPLE_ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0C;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// Unescape a string body that has been validated (as strict validation
/// checks it: every escape well formed, surrogates paired) into `out`,
/// returning the result (the start of `out`). The fast path of eager
/// decoding; [`decode_str`] is the checking one. On a body that was not
/// validated the result is unspecified but memory-safe (never a panic
/// past the end: a missing hex digit reads as 0, a body ending in a lone
/// backslash keeps it). `out` is grown (never shrunk) to at least
/// `body.len() + 8` bytes: unescaping never lengthens a body (an escape of
/// 2, 6 or 12 bytes writes at most 1, 3 or 4), so every write, including
/// the 8-byte copies below, stays inside it, and a reused buffer needs no
/// clearing or zeroing.
///
/// Plain runs are copied 8 bytes a step (the whole word is written, then
/// the output advances only up to the first backslash in it, found with a
/// SWAR zero-byte test), so a string with an escape every few bytes (URLs
/// with `\/`) costs no search call per escape. The last partial word (the
/// final `n % 8` bytes, or fewer after an escape) is read in one load too:
/// the 8 bytes ending at the end of the body, shifted down (zeros come in
/// above, and a zero byte is never a backslash); a body shorter than 8
/// bytes goes byte by byte. The one-character escapes are one lookup in
/// `SIMPLE_ESCAPE`.
#[inline(never)]
pub fn unescape_validated<'o>(body: &[u8], out: &'o mut Vec<u8>) -> &'o [u8] {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    let n = body.len();
    if out.len() < n + 8 {
        out.resize(n + 8, 0);
    }
    let out = &mut out[..n + 8];
    let (mut i, mut o) = (0, 0);
    while i < n {
        if let Some(chunk) = body.get(i..i + 8) {
            out[o..o + 8].copy_from_slice(chunk);
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            let x = u64::from_le_bytes(w) ^ BACKSLASHES;
            // The lowest set bit marks the first zero byte of `x`, the
            // first backslash (bits above it may be false positives, never
            // below).
            let m = x.wrapping_sub(ONES) & !x & HIGH;
            if m == 0 {
                i += 8;
                o += 8;
                continue;
            }
            let p = (m.trailing_zeros() / 8) as usize;
            i += p;
            o += p;
        } else if let Some(last) = n.checked_sub(8).and_then(|at| body.get(at..)) {
            // The last `left` (1..=7) bytes in one word: the final 8 bytes
            // of the body shifted down past the `8 - left` already copied
            // (or escapes), zeros coming in above (never a backslash).
            let left = n - i;
            let mut w = [0u8; 8];
            w.copy_from_slice(last);
            let word = u64::from_le_bytes(w) >> (8 * (8 - left));
            // Written whole: `o <= i`, and `out` has 8 bytes past `n`.
            out[o..o + 8].copy_from_slice(&word.to_le_bytes());
            let x = word ^ BACKSLASHES;
            let m = x.wrapping_sub(ONES) & !x & HIGH;
            if m == 0 {
                o += left;
                break;
            }
            let p = (m.trailing_zeros() / 8) as usize;
            debug_assert!(p < left, "the zero padding holds no backslash");
            i += p;
            o += p;
        } else if body[i] != b'\\' {
            // A body shorter than one word: byte by byte (on the escaped
            // keys and values of a few bytes common in small documents,
            // cheaper than assembling a padded word after every escape).
            out[o] = body[i];
            i += 1;
            o += 1;
            continue;
        }
        // `body[i]` is a backslash; a validated body never ends in one, and
        // an unvalidated one that does keeps it (no panic, in any build:
        // the doc promises that for bodies that were not validated).
        let Some(&e) = body.get(i + 1) else {
            out[o] = b'\\';
            o += 1;
            break;
        };
        let c = SIMPLE_ESCAPE[e as usize];
        if c != 0 {
            out[o] = c;
            o += 1;
            i += 2;
            continue;
        }
        // `\uXXXX` (or, in a body that was not validated, a bad escape,
        // read as one all the same).
        let hi = valid_hex4(body, i + 2);
        let (cp, len) = if (0xD800..0xDC00).contains(&hi) {
            let lo = valid_hex4(body, i + 8);
            (
                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF),
                12,
            )
        } else {
            (hi, 6)
        };
        o += encode_utf8(cp, &mut out[o..o + 4]);
        i += len;
    }
    debug_assert!(o <= n, "unescaping never lengthens a body");
    &out[..o]
}

/// The index of the first backslash at or after `from` in `body`, or
/// `body.len()`: 8 bytes a step with the SWAR zero-byte test of
/// [`unescape_validated`] (a borrow only sets bits above a real zero byte,
/// so the lowest flagged byte is a backslash), the last few bytes one by
/// one. Inline and without a call: the escapes of JSON strings are a few
/// bytes apart (`http:\/\/t.co\/...`).
#[inline(always)]
pub fn find_backslash(body: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while let Some(chunk) = body.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ (ONES * b'\\' as u64);
        let m = x.wrapping_sub(ONES) & !x & HIGH;
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < body.len() && body[i] != b'\\' {
        i += 1;
    }
    i.min(body.len())
}

/// The character of the escape whose backslash is at `body[at]`, in a
/// validated body (as [`unescape_validated`] reads it), and the bytes the
/// escape spans (2, 6, or 12 for a surrogate pair). Escapes strict
/// validation rejects never reach here; on one all the same the result is
/// a code point (U+FFFD for a lone surrogate, 0 for a missing hex digit,
/// as [`unescape_validated`] writes them), never a panic, and the span
/// stays at least 2.
#[inline(always)]
pub fn validated_escape(body: &[u8], at: usize) -> (u32, usize) {
    match body.get(at + 1) {
        Some(b'u') => {
            let hi = valid_hex4(body, at + 2);
            if (0xD800..0xDC00).contains(&hi) {
                let lo = valid_hex4(body, at + 8);
                (
                    0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF),
                    12,
                )
            } else if (0xDC00..0xE000).contains(&hi) {
                (0xFFFD, 6)
            } else {
                (hi, 6)
            }
        }
        Some(b'n') => (0x0A, 2),
        Some(b't') => (0x09, 2),
        Some(b'r') => (0x0D, 2),
        Some(b'b') => (0x08, 2),
        Some(b'f') => (0x0C, 2),
        // `"`, `\\`, `/`.
        Some(&c) => (u32::from(c), 2),
        None => (0, 2),
    }
}

/// [`validated_escape`] with the four hex digits of a `\uXXXX` read as one
/// little-endian word (SWAR): a digit's value is its low nibble, plus 9
/// for a letter (`a`-`f`, `A`-`F`: bit 6 set), no table. Only for
/// validated bodies: on digits that are not hex the code point is some
/// value below 0x10000 (never a panic); a missing digit reads as 0, a
/// lone low surrogate as U+FFFD, as in [`validated_escape`].
#[inline(always)]
pub fn validated_escape_swar(body: &[u8], at: usize) -> (u32, usize) {
    let hex = |at: usize| {
        body.get(at..at + 4).map_or(0, |d| {
            let w = u32::from_le_bytes(d.try_into().expect("4 bytes"));
            // Digit `k`'s value in byte `k` (the first digit lowest).
            let n = (w & 0x0F0F_0F0F) + ((w >> 6) & 0x0101_0101) * 9;
            // Pairs packed into bytes 0 and 2 (first digit high), then
            // joined: `d0 d1` high, `d2 d3` low.
            let x = (n << 4 | n >> 8) & 0x00FF_00FF;
            (x & 0xFF) << 8 | x >> 16
        })
    };
    match body.get(at + 1) {
        Some(b'u') => {
            let hi = hex(at + 2);
            if hi & 0xF800 != 0xD800 {
                (hi, 6)
            } else if hi < 0xDC00 {
                let lo = hex(at + 8);
                (
                    0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF),
                    12,
                )
            } else {
                (0xFFFD, 6)
            }
        }
        Some(&c) => (u32::from(SIMPLE_ESCAPE[c as usize]), 2),
        None => (0, 2),
    }
}

/// Write the UTF-8 form of code point `cp` (a validated escape: never a
/// lone surrogate; U+FFFD stands in for one all the same) to the start of
/// `out`; its length.
#[inline(always)]
fn encode_utf8(cp: u32, out: &mut [u8]) -> usize {
    if cp < 0x80 {
        out[0] = cp as u8;
        1
    } else if cp < 0x800 {
        out[0] = 0xC0 | (cp >> 6) as u8;
        out[1] = 0x80 | (cp & 0x3F) as u8;
        2
    } else if cp < 0x10000 {
        let cp = if (0xD800..0xE000).contains(&cp) {
            0xFFFD
        } else {
            cp
        };
        out[0] = 0xE0 | (cp >> 12) as u8;
        out[1] = 0x80 | ((cp >> 6) & 0x3F) as u8;
        out[2] = 0x80 | (cp & 0x3F) as u8;
        3
    } else {
        out[0] = 0xF0 | (cp >> 18) as u8;
        out[1] = 0x80 | ((cp >> 12) & 0x3F) as u8;
        out[2] = 0x80 | ((cp >> 6) & 0x3F) as u8;
        out[3] = 0x80 | (cp & 0x3F) as u8;
        4
    }
}

/// The value of the four hex digits at `b[at..at + 4]` (0 past the end or
/// for a non-digit: validated input always has them), through the
/// decoder's table.
#[inline(always)]
fn valid_hex4(b: &[u8], at: usize) -> u32 {
    hex4(b, at).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ErrorKind::*;

    /// The two-word test against a byte loop: every length to 20, every
    /// byte value at every position.
    #[test]
    fn is_short_plain_agrees_with_a_byte_loop() {
        for n in 0..=20 {
            let mut b = vec![b'a'; n];
            for at in 0..n {
                for c in 0..=255u8 {
                    b[at] = c;
                    let slow = n <= 16 && b.iter().all(|&c| !is_special::<true>(c));
                    assert_eq!(super::is_short_plain(&b), slow, "{n} {at} {c}");
                }
                b[at] = b'a';
            }
        }
    }

    /// The SWAR `\u` reading agrees with the table one on every code
    /// unit, in both letter cases, alone and as surrogate pairs, and on
    /// every one-character escape; a body cut short reads no digit.
    #[test]
    fn validated_escape_swar_agrees() {
        for u in 0..=0xFFFFu32 {
            for text in [format!("\\u{u:04x}"), format!("\\u{u:04X}")] {
                let b = text.as_bytes();
                if (0xD800..0xDC00).contains(&u) {
                    let pair = format!("{text}\\u{:04x}", 0xDC00 + (u & 0x3FF));
                    let p = pair.as_bytes();
                    assert_eq!(
                        validated_escape_swar(p, 0),
                        validated_escape(p, 0),
                        "{pair}"
                    );
                } else {
                    assert_eq!(
                        validated_escape_swar(b, 0),
                        validated_escape(b, 0),
                        "{text}"
                    );
                }
            }
        }
        for c in *b"\"\\/bfnrt" {
            let b = [b'\\', c];
            assert_eq!(validated_escape_swar(&b, 0), validated_escape(&b, 0));
        }
        assert_eq!(validated_escape_swar(b"\\u12", 0), (0, 6));
        assert_eq!(validated_escape_swar(b"\\", 0), (0, 2));
    }

    /// `decode_str`, and for valid UTF-8 the same answer from
    /// `decode_utf8_str`.
    fn dec(raw: &[u8]) -> Result<Cow<'_, str>, (ErrorKind, usize)> {
        let checked = decode_str(raw, 100).map_err(|e| (e.kind, e.offset - 100));
        if std::str::from_utf8(raw).is_ok() {
            // SAFETY: just checked.
            let trusted =
                unsafe { decode_utf8_str(raw, 100) }.map_err(|e| (e.kind, e.offset - 100));
            assert_eq!(trusted, checked, "{raw:?}");
        }
        checked
    }

    #[test]
    fn plain_bodies_are_borrowed() {
        for raw in [&b""[..], b"abc", b"a b/c'~\x7f", "é😀 ü".as_bytes()] {
            let s = dec(raw).unwrap();
            assert!(matches!(s, Cow::Borrowed(_)), "{raw:?}");
            assert_eq!(s.as_bytes(), raw);
        }
        // Long bodies go through the chunked search.
        let long = "x".repeat(1000) + "é" + &"y".repeat(200);
        assert!(matches!(dec(long.as_bytes()).unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn every_escape() {
        let cases: &[(&[u8], &str)] = &[
            (br#"\""#, "\""),
            (br#"\\"#, "\\"),
            (br#"\/"#, "/"),
            (br#"\b"#, "\u{8}"),
            (br#"\f"#, "\u{c}"),
            (br#"\n"#, "\n"),
            (br#"\r"#, "\r"),
            (br#"\t"#, "\t"),
            (br#"\u0000"#, "\0"),
            (br#"\u0041\u00e9\u20AC"#, "Aé€"),
            (br#"\uFFFF"#, "\u{ffff}"),
            (br#"\ud83d\ude00"#, "😀"),
            (br#"\uD800\uDC00"#, "\u{10000}"),
            (br#"\uDBFF\uDFFF"#, "\u{10ffff}"),
            (br#"a\nb\tc"#, "a\nb\tc"),
            ("é\\n😀\\u00e9x".as_bytes(), "é\n😀éx"),
            (br#"\\u0041"#, "\\u0041"),
        ];
        for &(raw, want) in cases {
            let got = dec(raw).unwrap();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(raw));
            assert!(matches!(got, Cow::Owned(_)));
        }
    }

    #[test]
    fn errors_with_offsets() {
        let cases: &[(&[u8], ErrorKind, usize)] = &[
            (br#"ab\x"#, InvalidEscape, 2),
            (br#"\"#, InvalidEscape, 0),
            (br#"\'"#, InvalidEscape, 0),
            (b"\\\xc3\xa9", InvalidEscape, 0),
            (br#"x\u12"#, InvalidUnicodeEscape, 2),
            (br#"\u12g4"#, InvalidUnicodeEscape, 1),
            (br#"\U0041"#, InvalidEscape, 0),
            (br#"\ud800"#, LoneSurrogate, 0),
            (br#"a\ud800b"#, LoneSurrogate, 1),
            (br#"\ud800\n"#, LoneSurrogate, 0),
            (br#"\ud800\u0041"#, LoneSurrogate, 0),
            (br#"\ud800\ud800"#, LoneSurrogate, 0),
            (br#"\udc00"#, LoneSurrogate, 0),
            (br#"\ude00\ud83d"#, LoneSurrogate, 0),
            (br#"\ud800\uzzzz"#, InvalidUnicodeEscape, 7),
            (b"a\x01", ControlCharacter, 1),
            (b"\x00", ControlCharacter, 0),
            (b"ab\x1f\\x", ControlCharacter, 2),
            (b"\xc3\xa9\n", ControlCharacter, 2),
            // Invalid UTF-8: stray continuation, overlong, encoded
            // surrogate, truncated, above U+10FFFF, bytes never valid.
            (b"a\x80", InvalidUtf8, 1),
            (b"ab\xc0\xaf", InvalidUtf8, 2),
            (b"\xc1\xbf", InvalidUtf8, 0),
            (b"\xe0\x80\xaf", InvalidUtf8, 0),
            (b"\xf0\x80\x80\xaf", InvalidUtf8, 0),
            (b"\xed\xa0\x80", InvalidUtf8, 0),
            (b"x\xed\xbf\xbf", InvalidUtf8, 1),
            (b"\xe2\x82", InvalidUtf8, 0),
            (b"\xf0\x9f\x98", InvalidUtf8, 0),
            (b"\xe2\x82x", InvalidUtf8, 0),
            (b"\xf4\x90\x80\x80", InvalidUtf8, 0),
            (b"\xf5\x80\x80\x80", InvalidUtf8, 0),
            (b"\xff", InvalidUtf8, 0),
            (b"\xfe", InvalidUtf8, 0),
            // The smallest offset wins.
            (b"\xff\\x", InvalidUtf8, 0),
            (b"\\x\xff", InvalidEscape, 0),
            (b"\xc3\xa9\\x\xff", InvalidEscape, 2),
            (b"\xc3\xa9\xff\\x", InvalidUtf8, 2),
            (b"\xc3\xa9\xff\x01", InvalidUtf8, 2),
            (b"\xc3\xa9\x01\xff", ControlCharacter, 2),
        ];
        for &(raw, kind, at) in cases {
            assert_eq!(
                dec(raw),
                Err((kind, at)),
                "{:?}",
                String::from_utf8_lossy(raw)
            );
            // Also when the problem sits after a long clean prefix.
            let mut long = b"p".repeat(150);
            long.extend_from_slice(raw);
            assert_eq!(dec(&long), Err((kind, at + 150)));
        }
    }

    #[test]
    fn find_special_agrees_with_a_byte_loop() {
        for len in [0usize, 1, 7, 8, 9, 63, 64, 65, 130] {
            for at in 0..len {
                for c in 0..=255u8 {
                    let mut b = vec![b'a'; len];
                    b[at] = c;
                    // A second special later must not hide the first one.
                    if at + 1 < len {
                        b[at + 1] = 0x01;
                    }
                    for from in [0, at / 2, at] {
                        let naive = |ascii: bool| {
                            (from..len)
                                .find(|&i| b[i] < 0x20 || b[i] == b'\\' || (ascii && b[i] >= 0x80))
                                .unwrap_or(len)
                        };
                        assert_eq!(find_special::<true>(&b, from), naive(true));
                        assert_eq!(find_special::<false>(&b, from), naive(false));
                    }
                }
            }
        }
    }

    #[test]
    fn utf8_is_checked() {
        assert_eq!(decode_str(b"\xff", 7).unwrap_err().offset, 7);
        assert_eq!(decode_str(b"ab\\n\xc3", 7).unwrap_err().offset, 11);
        assert_eq!(decode_str("é".as_bytes(), 0).unwrap(), "é");
    }

    #[test]
    fn check_escape_spans() {
        let input = br#""\n\u0041\ud83d\ude00\ud800x\q""#;
        assert_eq!(check_escape(input, 1), Ok(2));
        assert_eq!(check_escape(input, 3), Ok(6));
        assert_eq!(check_escape(input, 9), Ok(12));
        assert_eq!(check_escape(input, 21), Err(Error::new(LoneSurrogate, 21)));
        assert_eq!(check_escape(input, 28), Err(Error::new(InvalidEscape, 28)));
        // Truncated at the end of the input.
        assert_eq!(
            check_escape(b"\\u00", 0),
            Err(Error::new(InvalidUnicodeEscape, 1))
        );
        assert_eq!(
            check_escape(br"\ud800\u12x", 0),
            Err(Error::new(InvalidUnicodeEscape, 7))
        );
        assert_eq!(check_escape(b"\\", 0), Err(Error::new(InvalidEscape, 0)));
    }

    #[test]
    fn body_eq_matches_decode() {
        let cases: &[(&[u8], &[u8], bool)] = &[
            (b"", b"", true),
            (b"abc", b"abc", true),
            (b"abc", b"abd", false),
            (b"abc", b"ab", false),
            (b"ab", b"abc", false),
            (br#"\u0061"#, b"a", true),
            (br#"\u0061x"#, b"ax", true),
            (br#"x\u0061"#, b"xa", true),
            (br#"\u0061"#, b"b", false),
            (br#"\u0061"#, br#"\u0061"#, false),
            (br#"a\\b"#, br#"a\b"#, true),
            (br#"a\\b"#, br#"a\\b"#, false),
            (br#"q\"k"#, br#"q"k"#, true),
            (br#"\ud83d\ude00!"#, "😀!".as_bytes(), true),
            (br#"\ud83d\ude00"#, "😁".as_bytes(), false),
            (br#"\u00e9"#, "é".as_bytes(), true),
            (br#"\u00e9"#, b"\xc3", false),
            (br#"\ud800xxxx"#, b"x", false),
            (br#"\x"#, b"x", false),
            (b"a\x01", b"a\x01", false),
            (b"\\n\x01", b"\n\x01", false),
            (b"\xff", b"\xff", false),
            (b"\\n\xff", b"\n\xff", false),
        ];
        for &(raw, key, want) in cases {
            assert_eq!(body_eq(raw, key), want, "{raw:?} vs {key:?}");
            let by_decode = decode_str(raw, 0).is_ok_and(|s| s.as_bytes() == key);
            assert_eq!(by_decode, want, "decode of {raw:?}");
        }
    }

    #[test]
    fn unescapes() {
        let mut out = Vec::new();
        let got = unescape_validated(br#"a\"b\\c\/d\n\t\r\b\f\u00e9\ud83d\ude00x"#, &mut out);
        assert_eq!(got, "a\"b\\c/d\n\t\r\u{8}\u{c}é😀x".as_bytes());
    }

    /// The last partial word (read in one load, shifted; byte by byte in
    /// a body shorter than a word):
    /// bodies of every length to 40 whose final `n % 8` bytes hold an
    /// escape at every position, including one escape ending the body and
    /// an escape straddling the last full word, in dirty and fresh buffers.
    #[test]
    fn unescapes_escapes_in_the_last_partial_word() {
        let escapes: [(&str, &str); 6] = [
            (r"\n", "\n"),
            (r"\/", "/"),
            (r#"\""#, "\""),
            (r"\\", "\\"),
            (r"\u00e9", "é"),
            (r"\ud83d\ude00", "😀"),
        ];
        let mut dirty = vec![b'\\'; 100];
        for n in 0..40 {
            for (e, want) in escapes {
                if e.len() > n {
                    continue;
                }
                for at in 0..=n - e.len() {
                    // `n` bytes: `at` plain ones, the escape, plain ones.
                    let post = n - at - e.len();
                    let body = format!("{}{e}{}", "a".repeat(at), "b".repeat(post));
                    let expect = format!("{}{want}{}", "a".repeat(at), "b".repeat(post));
                    assert_eq!(body.len(), n);
                    let got = unescape_validated(body.as_bytes(), &mut dirty);
                    assert_eq!(got, expect.as_bytes(), "{body}");
                    let got = unescape_validated(body.as_bytes(), &mut Vec::new()).to_vec();
                    assert_eq!(got, expect.as_bytes(), "{body}");
                    // Two escapes, the second ending the body.
                    let body = format!("{body}{e}");
                    let expect = format!("{expect}{want}");
                    let got = unescape_validated(body.as_bytes(), &mut dirty);
                    assert_eq!(got, expect.as_bytes(), "{body}");
                }
            }
        }
    }

    /// Bodies strict validation rejects come out unspecified but without a
    /// panic or a read past the end (a missing hex digit reads as 0).
    #[test]
    fn unescape_of_unvalidated_bodies_does_not_panic() {
        let mut out = Vec::new();
        for body in [
            r"\u",
            r"\u1",
            r"ab\u12",
            r"\ud800",
            r"\ud800\u",
            r"\x",
            r"abcdefg\q",
            "\\",
            "ab\\",
            "abcdefgh\\",
            "abcdefghijklmno\\",
        ] {
            let got = unescape_validated(body.as_bytes(), &mut out).len();
            assert!(got <= body.len(), "{body}");
        }
        // A lone backslash at the end is kept, before and after a full word.
        for body in ["\\", "ab\\", "abcdefgh\\", "abcdefghijklmno\\"] {
            assert_eq!(
                unescape_validated(body.as_bytes(), &mut out),
                body.as_bytes()
            );
        }
    }

    /// Every escape at every offset around the 8-byte steps, in a reused
    /// (dirty, longer) buffer and a fresh one, against a plain decoder.
    /// Runs of escapes (one-character and `\u`, mixed, and `\\` whose
    /// second backslash starts nothing) crossing the 8-byte words at
    /// every offset, with plain bytes or the end of the body after them,
    /// against the checking decoder.
    #[test]
    fn unescapes_escape_runs_across_words() {
        let escapes = [
            r"\/",
            r"\\",
            r"\u00e9",
            r#"\""#,
            r"\n",
            r"\ud83d\ude00",
            r"\u0041",
            r"\t",
        ];
        let mut dirty = vec![b'\\'; 400];
        for pre in 0..34 {
            for run in 1..14 {
                for first in 0..escapes.len() {
                    for post in [0, 1, 2, 7, 15, 16, 17] {
                        let mut body = "p".repeat(pre);
                        for k in 0..run {
                            body.push_str(escapes[(first + k * 3) % escapes.len()]);
                            // Every other escape touches the next one.
                            if k % 2 == 1 {
                                body.push('/');
                            }
                        }
                        body.push_str(&"q]".repeat(post).as_str()[..post]);
                        let expect = decode_str(body.as_bytes(), 0).unwrap();
                        let got = unescape_validated(body.as_bytes(), &mut dirty);
                        assert_eq!(got, expect.as_bytes(), "{body}");
                        let got = unescape_validated(body.as_bytes(), &mut Vec::new()).to_vec();
                        assert_eq!(got, expect.as_bytes(), "{body}");
                    }
                }
            }
        }
    }

    #[test]
    fn unescapes_at_every_offset() {
        let escapes: [(&str, &str); 12] = [
            (r"\/", "/"),
            (r"\\", "\\"),
            (r#"\""#, "\""),
            (r"\n", "\n"),
            (r"\b", "\u{8}"),
            (r"\u0041", "A"),
            (r"\u00E9", "é"),
            (r"\u07ff", "\u{7ff}"),
            (r"\u30c0", "ダ"),
            (r"\uFFFF", "\u{ffff}"),
            (r"\ud83d\ude00", "😀"),
            (r"\uDBFF\uDFFF", "\u{10ffff}"),
        ];
        let mut dirty = vec![0xAAu8; 300];
        for pre in 0..20 {
            for post in 0..12 {
                for (e, want) in escapes {
                    for (e2, want2) in [("", ""), (r"\t", "\t"), (r"\u00e9", "é")] {
                        let body = format!("{}{e}{e2}{}é{e}", "x".repeat(pre), "y".repeat(post));
                        let expect = format!(
                            "{}{want}{want2}{}é{want}",
                            "x".repeat(pre),
                            "y".repeat(post)
                        );
                        let got = unescape_validated(body.as_bytes(), &mut dirty);
                        assert_eq!(got, expect.as_bytes(), "{body}");
                        let mut fresh = Vec::new();
                        let got = unescape_validated(body.as_bytes(), &mut fresh);
                        assert_eq!(got, expect.as_bytes(), "{body}");
                        // The checking decoder agrees.
                        let checked = decode_str(body.as_bytes(), 0).unwrap();
                        assert_eq!(checked.as_bytes(), got, "{body}");
                    }
                }
            }
        }
    }
}
