//! Numbers and literals: RFC 8259 grammar, exact integers, correctly rounded
//! floats.
//!
//! # Algorithm
//!
//! The grammar `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` is checked by
//! one forward pass (`scan_number`) that stops at the first byte where the
//! grammar cannot continue; that byte (possibly one past the token) is the
//! error offset. Runs of digits are skipped eight at a time with a SWAR test
//! (a `u64` load: every byte has high nibble 3, and adding 6 keeps it 3), so
//! the long fractions of coordinate-heavy files cost a few steps per number.
//! Nothing allocates.
//!
//! Stage 2 validates every scalar with [`scalar_end`], on the whole input
//! (the next structural bounds every digit run, so no token slice is cut).
//! Its fast path covers the shapes nearly all numbers have, an integer or a
//! plain decimal under 32 bytes: SSE2 (a byte loop on other targets) builds
//! bit masks of the digits, dots and exponent letters of the next 32 bytes,
//! and the token's end is read off them with two `trailing_zeros`, no loop
//! and no data-dependent load.
//! Anything else (exponents, long tokens, errors) takes the grammar scan.
//!
//! [`parse_number`] reuses the pass. Integers (no fraction, no exponent) of
//! up to 18 digits always fit in an `i64` and are accumulated directly;
//! 19-20 digits use checked arithmetic; anything longer, or out of range, is
//! returned as its exact text ([`Number::BigInt`]) so no precision is lost
//! and no time is spent (linear in the length, never quadratic). Everything
//! else goes to `fast_float2`, which rounds correctly (Eisel-Lemire with a
//! big-decimal fallback) and turns overflow into an infinity, as Python's
//! `json` does (`1e400` is `inf`); `-0.0` keeps its sign, `-0` is `Int(0)`.
//!
//! `loads` reads each number once ([`parse_number_at`], [`plain_decimal`],
//! [`plain_long_decimal`]): the digits become a mantissa of up to 19 digits
//! as the grammar is checked, and a mantissa over a power of ten up to
//! 10^27 is rounded by `fraction_f64` (one exact `f64` division when both
//! are exact, else one 128-by-64-bit integer division with a sticky bit);
//! only longer mantissas and larger exponents reach `fast_float2`, which
//! then reads the digits again.
//!
//! Literals must be exactly `true`, `false` or `null`. A token that does not
//! start like a number (`-` or a digit) is `InvalidLiteral` at its first
//! byte, or after the literal it starts with (`truex` at the `x`); a token
//! that starts like a number is `InvalidNumber` where its longest valid
//! prefix ends ([`valid_prefix_len`]). Both are the offsets Python's `json`
//! reports.

use crate::error::{Error, ErrorKind, JsonType};

/// A decoded JSON number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number<'a> {
    /// An integer (no fraction, no exponent) that fits in i64.
    Int(i64),
    /// An integer beyond i64: its exact decimal text (e.g. `-123456789012345678901`).
    BigInt(&'a str),
    /// A number with a fraction or exponent, correctly rounded.
    Float(f64),
}

/// A mask with bits set in every byte of the 8 bytes at `t[at..]` that is
/// not an ASCII digit; exact up to and including the lowest such byte.
#[inline(always)]
fn non_digits(t: &[u8], at: usize) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut a = [0u8; 8];
    a.copy_from_slice(&t[at..at + 8]);
    let w = u64::from_le_bytes(a);
    // A byte is a digit iff its high nibble is 3 and stays 3 after adding 6.
    // A carry out of a non-digit byte can only corrupt the bytes above it,
    // never the lowest non-digit, which is all the callers use.
    let hi = w & (0xF0 * ONES);
    let plus6 = w.wrapping_add(6 * ONES) & (0xF0 * ONES);
    (hi ^ (0x30 * ONES)) | (plus6 ^ (0x30 * ONES))
}

/// The end of the run of ASCII digits starting at `i`.
#[inline(always)]
fn digits_end(t: &[u8], mut i: usize) -> usize {
    let n = t.len();
    while i + 8 <= n {
        let bad = non_digits(t, i);
        if bad != 0 {
            return i + (bad.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    if i == n {
        return n;
    }
    if n >= 8 {
        // The tail: load the last 8 bytes (overlapping what was already
        // checked) and drop the bytes before `i`.
        let bad = non_digits(t, n - 8) >> ((i + 8 - n) * 8);
        return if bad == 0 {
            n
        } else {
            i + (bad.trailing_zeros() / 8) as usize
        };
    }
    while i < n && t[i].is_ascii_digit() {
        i += 1;
    }
    i
}

/// The longest number starting at `t[start]`: `Ok((end, is_integer))` when
/// the grammar is complete where the scan stops (any byte may follow), or
/// `Err(at)` with the first bad byte when it is not (`-`, `1.`, `1e+`; `at`
/// may be `t.len()`).
#[inline(always)]
fn number_prefix(t: &[u8], start: usize) -> Result<(usize, bool), usize> {
    let n = t.len();
    let mut i = start + (t.get(start) == Some(&b'-')) as usize;
    match t.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits_end(t, i + 1),
        _ => return Err(i),
    }
    let mut integer = true;
    if i < n && t[i] == b'.' {
        i += 1;
        if !t.get(i).is_some_and(u8::is_ascii_digit) {
            return Err(i);
        }
        i = digits_end(t, i + 1);
        integer = false;
    }
    if i < n && t[i] | 0x20 == b'e' {
        i += 1;
        if matches!(t.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !t.get(i).is_some_and(u8::is_ascii_digit) {
            return Err(i);
        }
        i = digits_end(t, i + 1);
        integer = false;
    }
    Ok((i, integer))
}

/// Bit masks (bit `i` for byte `p + i`) of the bytes of `input[p..p + 32]`
/// that matter to a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NumberMasks {
    digits: u32,
    dots: u32,
    /// `e` or `E`.
    exps: u32,
}

/// [`NumberMasks`] of `input[p..p + 32]`, or `None` when fewer than 32 bytes
/// remain.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn number_masks(input: &[u8], p: usize) -> Option<NumberMasks> {
    use std::arch::x86_64::*;
    let chunk = input.get(p..p + 32)?;
    // SAFETY: `chunk` is 32 readable bytes and `loadu` has no alignment
    // requirement; SSE2 is part of the x86_64 baseline.
    unsafe {
        let half = |at: usize| {
            let v = _mm_loadu_si128(chunk.as_ptr().add(at).cast());
            // A digit is a byte b with (b - '0') as u8 <= 9.
            let d = _mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8));
            let digit = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
            let dot = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'.' as i8));
            let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let exp = _mm_cmpeq_epi8(lower, _mm_set1_epi8(b'e' as i8));
            let mask = |m| _mm_movemask_epi8(m) as u32 & 0xFFFF;
            (mask(digit), mask(dot), mask(exp))
        };
        let (lo, hi) = (half(0), half(16));
        Some(NumberMasks {
            digits: lo.0 | hi.0 << 16,
            dots: lo.1 | hi.1 << 16,
            exps: lo.2 | hi.2 << 16,
        })
    }
}

/// [`NumberMasks`] of `input[p..p + 32]`, or `None` when fewer than 32 bytes
/// remain.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn number_masks(input: &[u8], p: usize) -> Option<NumberMasks> {
    number_masks_portable(input, p)
}

/// [`number_masks`] without SIMD (the reference in tests).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn number_masks_portable(input: &[u8], p: usize) -> Option<NumberMasks> {
    let chunk = input.get(p..p + 32)?;
    let mut m = NumberMasks {
        digits: 0,
        dots: 0,
        exps: 0,
    };
    for (i, &b) in chunk.iter().enumerate() {
        m.digits |= (b.is_ascii_digit() as u32) << i;
        m.dots |= ((b == b'.') as u32) << i;
        m.exps |= ((b | 0x20 == b'e') as u32) << i;
    }
    Some(m)
}

/// The end of the number at `input[start]` for the common shapes, an
/// integer or a decimal fraction without exponent (`-?(0|[1-9][0-9]*)
/// (\.[0-9]+)?`) of under 32 bytes, read off bit masks with no loop and no
/// load that waits for them; `None` means "not this shape", and the caller
/// runs the full grammar. When it answers, it agrees with [`number_prefix`]:
/// the shapes are valid numbers and the scan stops at a byte that no number
/// continues with.
#[inline(always)]
fn short_number_end(input: &[u8], start: usize) -> Option<usize> {
    let m = number_masks(input, start)?;
    // Bits 32 and up are set: a run reaching them is cut off by the window.
    let non_digit = !(m.digits as u64);
    let i = (input[start] == b'-') as usize;
    let int_len = (non_digit >> i).trailing_zeros() as usize;
    if int_len == 0 || (int_len > 1 && input[start + i] == b'0') {
        return None;
    }
    let mut end = i + int_len;
    // (`end` may be 32: shift a u64.)
    if (m.dots as u64 >> end) & 1 != 0 {
        let frac_len = (non_digit >> (end + 1)).trailing_zeros() as usize;
        if frac_len == 0 {
            return None;
        }
        end += 1 + frac_len;
    }
    // `end` < 32 means the byte there is known, and it must not be `e`.
    if end >= 32 || (m.exps >> end) & 1 != 0 {
        return None;
    }
    Some(start + end)
}

/// Check the number grammar. Returns whether the number is an integer (no
/// fraction, no exponent), or the index of the first bad byte (which may be
/// `t.len()` when the token ends too early).
#[inline(always)]
fn scan_number(t: &[u8]) -> Result<bool, usize> {
    match number_prefix(t, 0)? {
        (end, integer) if end == t.len() => Ok(integer),
        (end, _) => Err(end),
    }
}

/// The end of the valid scalar token (number, `true`, `false`, `null`) that
/// starts at `input[start]`, or `None` if no valid token starts there. The
/// token is not required to end at a delimiter: the caller checks what
/// follows `end`. Used by stage 2 on the whole input, so digit runs are
/// bounded by the next structural rather than by a slice end.
#[inline(always)]
pub fn scalar_end(input: &[u8], start: usize) -> Option<usize> {
    let rest = &input[start..];
    let literal = |word: &[u8]| rest.starts_with(word).then_some(start + word.len());
    match rest.first()? {
        b'-' | b'0'..=b'9' => match short_number_end(input, start) {
            Some(end) => Some(end),
            None => number_prefix(input, start).ok().map(|(end, _)| end),
        },
        b't' => literal(b"true"),
        b'f' => literal(b"false"),
        b'n' => literal(b"null"),
        _ => None,
    }
}

/// The error for a token that is not a valid number. A number is reported
/// where its longest valid prefix ends (`1.e5` at the `.`, `-x` at the
/// `-`), the offset Python's `json` reports (its number pattern matches
/// that prefix, then it finds no `,` or end there).
#[cold]
#[inline(never)]
fn number_error(text: &[u8], base: usize, _at: usize) -> Error {
    match text.first() {
        Some(b'-' | b'0'..=b'9') => {
            Error::new(ErrorKind::InvalidNumber, base + valid_prefix_len(text))
        }
        // `truex`: json reads `true`, then fails at the `x`.
        Some(_) => match literal_prefix_len(text) {
            Some(n) => Error::new(ErrorKind::InvalidLiteral, base + n),
            None => Error::new(ErrorKind::InvalidLiteral, base),
        },
        None => Error::new(ErrorKind::ExpectedValue, base),
    }
}

/// The length of `true`, `false` or `null` when `t` starts with one of
/// them and goes on after it.
pub fn literal_prefix_len(t: &[u8]) -> Option<usize> {
    [&b"true"[..], b"false", b"null"]
        .into_iter()
        .find(|w| t.len() > w.len() && t.starts_with(w))
        .map(<[u8]>::len)
}

/// The length of the longest prefix of `t` that is a valid number
/// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, each optional part
/// taken only when complete), 0 when there is none.
pub fn valid_prefix_len(t: &[u8]) -> usize {
    let digit = |i: usize| t.get(i).is_some_and(u8::is_ascii_digit);
    let digits_from = |mut i: usize| {
        while digit(i) {
            i += 1;
        }
        i
    };
    let mut i = usize::from(t.first() == Some(&b'-'));
    match t.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits_from(i + 1),
        _ => return 0,
    }
    if t.get(i) == Some(&b'.') && digit(i + 1) {
        i = digits_from(i + 2);
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(t.get(i + 1), Some(b'+' | b'-')));
        if digit(i + 1 + sign) {
            i = digits_from(i + 2 + sign);
        }
    }
    i
}

/// Check a scalar token (already trimmed of whitespace): a number, `true`,
/// `false` or `null`. Returns its type; the error offset is `base` plus the
/// position of the first bad byte for numbers, `base` for bad literals.
#[inline]
pub fn check_scalar(text: &[u8], base: usize) -> Result<JsonType, Error> {
    match text.first() {
        Some(b'-' | b'0'..=b'9') => match scan_number(text) {
            Ok(_) => Ok(JsonType::Number),
            Err(at) => Err(number_error(text, base, at)),
        },
        Some(b't') if text == b"true" => Ok(JsonType::Bool),
        Some(b'f') if text == b"false" => Ok(JsonType::Bool),
        Some(b'n') if text == b"null" => Ok(JsonType::Null),
        _ => Err(number_error(text, base, 0)),
    }
}

/// Parse a number token (validated or not). Invalid text is the error
/// [`check_scalar`] would report: `InvalidNumber` at the first bad byte, or
/// `InvalidLiteral` at `base` when the text does not start like a number.
pub fn parse_number(text: &[u8], base: usize) -> Result<Number<'_>, Error> {
    match scan_number(text) {
        Ok(true) => Ok(parse_integer(text)),
        Ok(false) => match fast_float2::parse::<f64, _>(text) {
            Ok(v) => Ok(Number::Float(v)),
            // Unreachable: the grammar is a subset of what fast_float2 takes.
            Err(_) => Err(number_error(text, base, 0)),
        },
        Err(at) => Err(number_error(text, base, at)),
    }
}

/// Powers of ten that are exact in an `f64` (10^22 is the last one).
const EXACT_POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The value of eight ASCII digits loaded little-endian (first digit in
/// the low byte), combining pairs, then quads, then the halves.
#[inline(always)]
fn eight_digits(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let v = w.wrapping_sub(0x30 * ONES);
    // Each 16-bit lane: 10 * first + second.
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    // Each 32-bit lane: 100 * first pair + second pair.
    let v = (v.wrapping_mul(1 + (100 << 16)) >> 16) & 0x0000_FFFF_0000_FFFF;
    // 10^4 * first quad + second quad.
    v.wrapping_mul(1 + (10_000 << 32)) >> 32
}

/// Accumulates the digit run at `t[i..]` into `m` (wrapping: the caller
/// only trusts `m` when few enough digits were read); returns the run's end.
#[inline(always)]
fn accumulate_digits(t: &[u8], mut i: usize, m: &mut u64) -> usize {
    while i + 8 <= t.len() {
        let mut a = [0u8; 8];
        a.copy_from_slice(&t[i..i + 8]);
        let w = u64::from_le_bytes(a);
        let bad = non_digits(t, i);
        if bad == 0 {
            *m = m.wrapping_mul(100_000_000).wrapping_add(eight_digits(w));
            i += 8;
            continue;
        }
        let k = (bad.trailing_zeros() / 8) as usize;
        if k > 0 {
            // Keep the first k digits, shifted up so that zero bytes
            // (leading zeros) fill the front, and read them as eight.
            let shifted = w << (8 * (8 - k)) | (0x3030_3030_3030_3030 >> (8 * k));
            *m = m
                .wrapping_mul(POW10_U64[k])
                .wrapping_add(eight_digits(shifted));
        }
        return i + k;
    }
    while let Some(d) = t.get(i).filter(|d| d.is_ascii_digit()) {
        *m = m.wrapping_mul(10).wrapping_add((d - b'0') as u64);
        i += 1;
    }
    i
}

/// Parse the number that starts at `input[start]`, checking its grammar on
/// the way: `None` when no valid number starts there (the caller finds the
/// exact error elsewhere). Returns the number and its end: the first byte
/// no number continues with (the caller checks what follows).
///
/// One pass: the digits are accumulated while they are read (eight at a
/// time), integers of up to 18 digits come out directly, and decimals whose
/// digits fit in 2^53 with a power of ten up to 10^22 take one exact `f64`
/// multiplication or division (correctly rounded, as both operands are
/// exact). Everything else takes the same routes as [`parse_number`]
/// (without its grammar scan).
#[inline]
pub fn parse_number_at(input: &[u8], start: usize) -> Option<(Number<'_>, usize)> {
    let neg = input.get(start) == Some(&b'-');
    let int_start = start + neg as usize;
    let mut m = 0u64;
    let int_end = accumulate_digits(input, int_start, &mut m);
    let mut digits = int_end - int_start;
    // At least one digit, and no leading zero.
    if digits == 0 || (digits > 1 && input[int_start] == b'0') {
        return None;
    }
    let mut end = int_end;
    let mut exp10 = 0i64;
    let mut integer = true;
    if input.get(end) == Some(&b'.') {
        let frac_end = accumulate_digits(input, end + 1, &mut m);
        let frac = frac_end - end - 1;
        if frac == 0 {
            return None;
        }
        digits += frac;
        exp10 = -(frac as i64);
        end = frac_end;
        integer = false;
    }
    if input.get(end).is_some_and(|&b| b | 0x20 == b'e') {
        end += 1;
        let eneg = input.get(end) == Some(&b'-');
        end += matches!(input.get(end), Some(b'+' | b'-')) as usize;
        let exp_start = end;
        let mut e = 0i64;
        while let Some(d) = input.get(end).filter(|d| d.is_ascii_digit()) {
            if e < 100_000 {
                e = e * 10 + (d - b'0') as i64;
            }
            end += 1;
        }
        if end == exp_start {
            return None;
        }
        exp10 += if eneg { -e } else { e };
        integer = false;
    }
    if integer {
        if digits <= 18 {
            let v = m as i64;
            return Some((Number::Int(if neg { -v } else { v }), end));
        }
    } else if digits <= 19 && (-(MAX_POW5 as i64)..0).contains(&exp10) {
        let v = fraction_f64(m, (-exp10) as usize);
        return Some((Number::Float(if neg { -v } else { v }), end));
    } else if digits <= 19 && m <= 1 << 53 && (0..=22).contains(&exp10) {
        let v = m as f64 * EXACT_POW10[exp10 as usize];
        return Some((Number::Float(if neg { -v } else { v }), end));
    }
    let text = &input[start..end];
    if integer {
        return Some((parse_integer(text), end));
    }
    // The grammar is a subset of what fast_float2 accepts.
    fast_float2::parse(text)
        .ok()
        .map(|v| (Number::Float(v), end))
}

/// The largest `k` that `fraction_f64` takes: 5^27 < 2^63.
const MAX_POW5: usize = 27;

/// 5^k for k <= [`MAX_POW5`].
const POW5: [u64; MAX_POW5 + 1] = {
    let mut t = [1u64; MAX_POW5 + 1];
    let mut i = 1;
    while i <= MAX_POW5 {
        t[i] = t[i - 1] * 5;
        i += 1;
    }
    t
};

/// `5^k` shifted up to a top bit of 1, and `floor(2^127 / that)`, for
/// `k <=` [`MAX_POW5`] (entry 0 unused).
const POW5_NORM: [(u64, u64); MAX_POW5 + 1] = {
    let mut t = [(1u64 << 63, 1u64 << 63); MAX_POW5 + 1];
    let mut k = 1;
    while k <= MAX_POW5 {
        let d = POW5[k] << POW5[k].leading_zeros();
        t[k] = (d, ((1u128 << 127) / d as u128) as u64);
        k += 1;
    }
    t
};

/// `m / 10^k`, correctly rounded (`1 <= k <=` [`MAX_POW5`]).
///
/// When both `m` and `10^k` are exact in an `f64` (`m <= 2^53`, `k <= 22`)
/// one IEEE division is the correctly rounded quotient (Clinger's fast
/// path). Otherwise `m / 10^k = (m / 5^k) * 2^-k`, and `5^k` fits in 63
/// bits. With `m` and `5^k` each shifted up to a top bit of 1 (`mn`, `dn`),
/// the quotient `Q = mn * 2^63 / dn` lies in `(2^62, 2^64)`: 63 or 64 bits,
/// of which the `f64` keeps 53, so `Q`'s rounding is decided by its low
/// `L = 10 or 11` bits and whether it has a fraction.
///
/// `Q` is estimated with one 64x64-bit multiplication by the reciprocal
/// `R = floor(2^127 / dn)`: `q' = floor(mn * R / 2^64)` is `floor(Q)` or
/// one less (the reciprocal's error, below 1, times `mn / 2^64`, below 1).
/// Rounding to nearest changes only at midpoints (low bits `100..0`); when
/// none lies in `[q', q' + 2]`, every value there rounds alike, and so does
/// `q' | 1` (odd, so never a midpoint itself), which `as f64` (correctly
/// rounded) converts. Otherwise (about 3 in 1024) one exact 128-by-64-bit
/// division gives `floor(Q)`, with the lowest bit set when the remainder is
/// not zero (a sticky bit, far below the kept bits) so that `as f64`
/// rounds exactly as `Q` would. The power of two that remains is applied
/// exactly (the result is far from the subnormal range). This is the case
/// of the 17-digit fractions of coordinate data, which Clinger's path
/// cannot take.
#[inline(always)]
fn fraction_f64(m: u64, k: usize) -> f64 {
    if m <= 1 << 53 && k <= 22 {
        return m as f64 / EXACT_POW10[k];
    }
    if m == 0 {
        return 0.0;
    }
    let (dn, recip) = POW5_NORM[k];
    let lm = m.leading_zeros();
    let mn = m << lm;
    let estimate = ((mn as u128 * recip as u128) >> 64) as u64;
    let half = 1u64 << (9 + (estimate >> 63));
    let low = estimate & (2 * half - 1);
    let q = if low.wrapping_sub(half - 2) > 2 {
        estimate | 1
    } else {
        exact_quotient(mn, dn)
    };
    // value = Q * 2^(ld - lm - 63 - k), with -154 < exponent < 0.
    let ld = POW5[k].leading_zeros();
    let e = ld as i64 - lm as i64 - 63 - k as i64;
    let scale = f64::from_bits(((1023 + e) as u64) << 52);
    q as f64 * scale
}

/// `floor(mn * 2^63 / dn)` with its lowest bit set when the division is
/// not exact (`mn, dn >= 2^63`: the quotient fits in 64 bits).
#[cold]
#[inline(never)]
fn exact_quotient(mn: u64, dn: u64) -> u64 {
    let n = (mn as u128) << 63;
    let q = (n / dn as u128) as u64;
    q | !n.is_multiple_of(dn as u128) as u64
}

/// 10^k for k < 20 (10^19 < 2^64).
pub(crate) const POW10_U64: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// The value of the `n` (0..=19) ASCII digits at `chunk[at..]` (`at + n <=
/// 24`), read eight at a time.
#[inline(always)]
fn digits_value(chunk: &[u8; 32], mut at: usize, mut n: usize) -> u64 {
    let mut v = 0;
    while n > 0 {
        let run = n.min(8);
        v = v * POW10_U64[run] + digit_run(chunk, at, run);
        at += run;
        n -= run;
    }
    v
}

/// The number that is exactly `input[p..q]`, when it is a plain decimal
/// fraction (`-?(0|[1-9][0-9]*)\.[0-9]+`) of at most 19 digits, or an
/// integer (`-?(0|[1-9][0-9]*)`) of at most 19 digits within `i64`, with 32
/// bytes readable from `p`: the longer fractions [`plain_decimal`] leaves
/// (17 significant digits in canada.json) and the longer integers (the
/// 18-digit ids of twitter.json). `None` means "not known": the caller
/// takes [`parse_number_at`], which gives the same value whenever this
/// answers.
///
/// One read: the digit and dot masks of the 32 bytes check the grammar,
/// the digits on either side of the dot are converted eight at a time into
/// one mantissa, and `fraction_f64` divides it by the power of ten (an
/// integer's mantissa, below 10^19 < 2^64, is its value: in range when at
/// most `i64::MAX`, or `2^63` for a negative one).
#[inline(always)]
pub fn plain_long_decimal(input: &[u8], p: usize, q: usize) -> Option<Number<'static>> {
    let chunk = input.get(p..)?.first_chunk::<32>()?;
    let len = q.wrapping_sub(p);
    // `-`, 19 digits and the dot.
    if len.wrapping_sub(1) >= 21 {
        return None;
    }
    let masks = number_masks(input, p)?;
    let neg = (chunk[0] == b'-') as usize;
    let token = (1u32 << len) - 1;
    // Every byte but a leading `-` and one `.` is a digit.
    let others = token & !masks.digits & !(neg as u32);
    if others == 0 {
        return long_int(chunk, neg, len - neg);
    }
    if others & (others - 1) != 0 || others & masks.dots == 0 {
        return None;
    }
    let dot = others.trailing_zeros() as usize;
    // Digits on both sides, no leading zero.
    if dot <= neg || dot + 1 >= len || (chunk[neg] == b'0' && dot > neg + 1) {
        return None;
    }
    let (int, frac) = (dot - neg, len - dot - 1);
    if int + frac > 19 {
        return None;
    }
    // (The coordinates of canada.json: 17 digits, 15 after the dot.)
    let m = if len >= 17 && frac <= 15 {
        long_mantissa(chunk, neg, dot, len)
    } else {
        digits_value(chunk, neg, int) * POW10_U64[frac] + digits_value(chunk, dot + 1, frac)
    };
    let v = fraction_f64(m, frac);
    Some(Number::Float(if neg == 1 { -v } else { v }))
}

/// The mantissa of the token `chunk[..len]`, `-?D.F` with its digits
/// checked by the caller, `17 <= len`, the dot at `dot` with at most 15
/// digits after it, and at most 19 digits in all: the digits read as one
/// integer, the dot left out.
///
/// The last 16 digits come from one 16-byte vector: the token's last 16
/// bytes, in which the bytes up to the dot are replaced by the bytes one
/// before them (which removes the dot; the first byte comes from a second
/// load, one byte earlier: `len >= 17`), and the bytes before the first
/// digit (the sign) are zeroed. Pairs, then fours, then eights of digits
/// are summed with multiply-adds (SSE2), and the one to three digits before
/// those 16 (all before the dot, since at most 15 follow it) are read as
/// a run.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn long_mantissa(chunk: &[u8; 32], neg: usize, dot: usize, len: usize) -> u64 {
    use std::arch::x86_64::*;
    debug_assert!((17..=21).contains(&len) && dot + 16 >= len && dot < len);
    let digits = len - 1 - neg;
    // SAFETY: `len - 17 >= 0` and `len <= 21`: both 16-byte loads lie in
    // the 32 bytes of `chunk`; `loadu` has no alignment requirement. SSE2
    // is part of the x86_64 baseline.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().add(len - 16).cast());
        let before = _mm_loadu_si128(chunk.as_ptr().add(len - 17).cast());
        let at = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        // The dot's index in `v` (0..=15): the bytes after it stay.
        let after = _mm_cmpgt_epi8(at, _mm_set1_epi8((dot + 16 - len) as i8));
        let x = _mm_or_si128(_mm_and_si128(after, v), _mm_andnot_si128(after, before));
        // Digit values; the bytes before the last 16 digits (a sign, when
        // there are fewer) become zeros.
        let first = 16 - digits.min(16) as i8;
        let keep = _mm_cmpgt_epi8(at, _mm_set1_epi8(first - 1));
        let d = _mm_and_si128(_mm_sub_epi8(x, _mm_set1_epi8(b'0' as i8)), keep);
        // Each 16-bit lane: its first byte (the higher digit) times 10
        // plus its second.
        let tens = _mm_mullo_epi16(_mm_and_si128(d, _mm_set1_epi16(0xFF)), _mm_set1_epi16(10));
        let pairs = _mm_add_epi16(tens, _mm_srli_epi16(d, 8));
        let fours = _mm_madd_epi16(pairs, _mm_set1_epi32(1 << 16 | 100));
        let fours = _mm_packs_epi32(fours, fours);
        let eights = _mm_madd_epi16(fours, _mm_set1_epi32(1 << 16 | 10_000));
        let both = _mm_cvtsi128_si64(eights) as u64;
        let low = (both & 0xFFFF_FFFF) * 100_000_000 + (both >> 32);
        if digits > 16 {
            digit_run(chunk, neg, digits - 16) * 10_000_000_000_000_000 + low
        } else {
            low
        }
    }
}

/// [`long_mantissa`] without SIMD: the digits on either side of the dot.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn long_mantissa(chunk: &[u8; 32], neg: usize, dot: usize, len: usize) -> u64 {
    let frac = len - dot - 1;
    digits_value(chunk, neg, dot - neg) * POW10_U64[frac] + digits_value(chunk, dot + 1, frac)
}

/// The integer of the `n` digits at `chunk[neg..]` (all digits, as the
/// caller's mask says), negative when `neg` is 1: `None` for no digit, a
/// leading zero, more than 19 digits, or a value beyond `i64`.
#[inline(always)]
fn long_int(chunk: &[u8; 32], neg: usize, n: usize) -> Option<Number<'static>> {
    if n.wrapping_sub(1) >= 19 || (chunk[neg] == b'0' && n > 1) {
        return None;
    }
    // At most 19 digits: below 10^19 < 2^64, no overflow.
    let m = digits_value(chunk, neg, n);
    signed(m, neg == 1).map(Number::Int)
}

/// `m`, negated when `neg`, when the result fits an `i64` (up to
/// `i64::MAX`, down to `i64::MIN`).
#[inline(always)]
pub fn signed(m: u64, neg: bool) -> Option<i64> {
    if neg {
        // `-(2^63)` is `i64::MIN`; `wrapping_neg` of its bits gives it.
        (m <= 1 << 63).then(|| (m as i64).wrapping_neg())
    } else {
        i64::try_from(m).ok()
    }
}

/// The integer written by all the bytes `input[start..end]` when it is an
/// optional `-` and 17 to 19 digits without a leading zero, within `i64`
/// (the 18-digit ids of twitter.json): the long integers a document's
/// short read ([`crate::Doc`]'s `short_int`, which reads up to 16 digits
/// itself) leaves. `None` for anything else (the caller's exact path
/// reads it then, overflow included).
///
/// Three little-endian words, no loop, every load inside `input`: the word
/// at the first digit shifted left so that only its first `n - 16` digits
/// stay (zero bytes, read as leading zero digits, come in below), and the
/// words of the middle and last eight digits. A word holds only digits
/// when no byte, xor `'0'`, exceeds 9.
#[inline(always)]
pub fn long_int_span(input: &[u8], start: usize, end: usize) -> Option<i64> {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const TOP: u64 = 0x8080_8080_8080_8080;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let neg = *input.get(start)? == b'-';
    let p = start + neg as usize;
    let n = end.checked_sub(p)?;
    if n.wrapping_sub(17) >= 3 || input.get(p) == Some(&b'0') {
        return None;
    }
    let word = |at: usize| {
        input
            .get(at..at + 8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")) ^ ZEROS)
    };
    let not_digits = |x: u64| (((x & LOW7) + 0x7676_7676_7676_7676) | x) & TOP;
    let top = word(p)? << (8 * (24 - n));
    let (mid, low) = (word(p + n - 16)?, word(p + n - 8)?);
    if not_digits(top) | not_digits(mid) | not_digits(low) != 0 {
        return None;
    }
    let m = eight_digit_values(top) * POW10_U64[16]
        + eight_digit_values(mid) * POW10_U64[8]
        + eight_digit_values(low);
    signed(m, neg)
}

/// An integer token that passed `scan_number`.
#[inline]
fn parse_integer(text: &[u8]) -> Number<'_> {
    let neg = text[0] == b'-';
    let digits = &text[neg as usize..];
    if digits.len() <= 18 {
        // < 10^18 < 2^63: no overflow possible.
        let mut v: i64 = 0;
        for &d in digits {
            v = v * 10 + (d - b'0') as i64;
        }
        return Number::Int(if neg { -v } else { v });
    }
    if digits.len() <= 20 {
        let mut v: u64 = 0;
        let mut ok = true;
        for &d in digits {
            match v
                .checked_mul(10)
                .and_then(|v| v.checked_add((d - b'0') as u64))
            {
                Some(x) => v = x,
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            if !neg && v <= i64::MAX as u64 {
                return Number::Int(v as i64);
            }
            if neg && v <= i64::MAX as u64 + 1 {
                return Number::Int((v as i64).wrapping_neg());
            }
        }
    }
    // `scan_number` accepted it, so it is ASCII `-` and digits.
    match std::str::from_utf8(text) {
        Ok(s) => Number::BigInt(s),
        Err(_) => unreachable!("validated number text is ASCII"),
    }
}

/// The number that is exactly `input[p..q]`, when it is a plain decimal
/// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?`) of at most 16 bytes, with at most 8
/// integer digits: the shape of nearly every number in coordinate and
/// measurement data. `None` means "not known" (other shapes, errors): the
/// caller takes [`parse_number_at`], which gives the same value whenever
/// this answers. Fewer than 32 bytes readable from `p` (a number near the
/// end of the input: in `loads_many`, where each line is its own input,
/// the last number of nearly every line) take `plain_decimal_near_end`.
///
/// Branch-light: one 16-byte digit mask checks the grammar; the integer
/// digits and the fraction digits are each loaded as one or two `u64`s,
/// shifted so that zero digits pad them in front, and converted eight at a
/// time; a decimal then takes the same exact division as in
/// [`parse_number_at`].
#[inline(always)]
pub fn plain_decimal(input: &[u8], p: usize, q: usize) -> Option<Number<'static>> {
    // One or two digits (counts, ratings, flags: the last numbers of most
    // lines of amazon_cellphones.ndjson) are read straight off the bytes.
    if q.wrapping_sub(p) <= 2 {
        if let Some(n) = small_int(input, p, q) {
            return Some(n);
        }
    }
    match input.get(p..).and_then(<[u8]>::first_chunk::<32>) {
        Some(chunk) => decimal_in_chunk(chunk, q.wrapping_sub(p)),
        None => plain_decimal_near_end(input, p, q),
    }
}

/// The integer that is exactly `input[p..q]` when it is one digit, or two
/// without a leading zero; `None` otherwise (other tokens, `q <= p`).
#[inline(always)]
fn small_int(input: &[u8], p: usize, q: usize) -> Option<Number<'static>> {
    let d0 = input.get(p)?.wrapping_sub(b'0');
    if d0 > 9 {
        return None;
    }
    if q == p + 1 {
        return Some(Number::Int(d0 as i64));
    }
    let d1 = input.get(p + 1)?.wrapping_sub(b'0');
    if q == p + 2 && d0 != 0 && d1 <= 9 {
        return Some(Number::Int((d0 * 10 + d1) as i64));
    }
    None
}

/// [`plain_decimal`] of a number with fewer than 32 bytes readable from
/// `p`: its bytes are copied into a zeroed 32-byte chunk (the masks ignore
/// every byte past the token, so the padding cannot change the answer).
#[inline(never)]
fn plain_decimal_near_end(input: &[u8], p: usize, q: usize) -> Option<Number<'static>> {
    let text = input.get(p..q)?;
    if text.len() > 16 {
        return None;
    }
    let mut chunk = [0u8; 32];
    chunk[..text.len()].copy_from_slice(text);
    decimal_in_chunk(&chunk, text.len())
}

/// [`plain_decimal`] of the `len`-byte token at the start of `chunk`.
#[inline(always)]
fn decimal_in_chunk(chunk: &[u8; 32], len: usize) -> Option<Number<'static>> {
    if len.wrapping_sub(1) >= 16 {
        return None;
    }
    let head = chunk.first_chunk::<16>()?;
    let neg = (head[0] == b'-') as usize;
    let token = (u32::MAX >> (32 - len)) & 0xFFFF;
    let digits = digit_mask16(head) & token;
    // Every byte but a leading `-` and at most one `.` is a digit; the
    // integer part is not empty and has no leading zero.
    let others = token & !digits & !(neg as u32);
    if len <= neg || (head[neg] == b'0' && (digits >> (neg + 1)) & 1 != 0) {
        return None;
    }
    // The integer part ends at the dot, or at the end of the token.
    let dot = if others == 0 {
        len
    } else {
        let dot = others.trailing_zeros() as usize;
        if others & (others - 1) != 0 || dot <= neg || dot + 1 >= len || head[dot] != b'.' {
            return None;
        }
        dot
    };
    let int = dot - neg;
    if int > 8 {
        return None;
    }
    let m = digit_run(chunk, neg, int);
    if dot == len {
        let v = m as i64;
        return Some(Number::Int(if neg == 1 { -v } else { v }));
    }
    // 1..=14 fraction digits, in one or two runs of at most eight.
    let frac = len - dot - 1;
    let first = frac.min(8);
    let mut f = digit_run(chunk, dot + 1, first);
    if frac > 8 {
        f = f * POW10_U64[frac - 8] + digit_run(chunk, dot + 9, frac - 8);
    }
    // At most 15 digits in all (16 bytes, one of them the dot): no overflow.
    let m = m * POW10_U64[frac] + f;
    if m > 1 << 53 {
        return None;
    }
    let v = m as f64 / EXACT_POW10[frac];
    Some(Number::Float(if neg == 1 { -v } else { v }))
}

/// The value of the `n` (1..=8) ASCII digits at `chunk[at..]` (`at + 8 <=
/// 32`): one load, shifted so that zero digits fill the front.
#[inline(always)]
fn digit_run(chunk: &[u8; 32], at: usize, n: usize) -> u64 {
    const LOW_NIBBLES: u64 = 0x0F0F_0F0F_0F0F_0F0F;
    let mut a = [0u8; 8];
    a.copy_from_slice(&chunk[at..at + 8]);
    // A digit's low nibble is its value; bytes past the run shift out.
    let v = (u64::from_le_bytes(a) & LOW_NIBBLES) << (8 * (8 - n));
    eight_digit_values(v)
}

/// [`eight_digits`] for bytes that already hold digit values (0..=9).
#[inline(always)]
fn eight_digit_values(v: u64) -> u64 {
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    let v = (v.wrapping_mul(1 + (100 << 16)) >> 16) & 0x0000_FFFF_0000_FFFF;
    v.wrapping_mul(1 + (10_000 << 32)) >> 32
}

/// The mask of the ASCII digits among 16 bytes (bit `i` for byte `i`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn digit_mask16(chunk: &[u8; 16]) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: `chunk` is 16 readable bytes and `loadu` has no alignment
    // requirement; SSE2 is part of the x86_64 baseline.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        // A digit is a byte b with (b - '0') as u8 <= 9.
        let d = _mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8));
        let digit = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
        _mm_movemask_epi8(digit) as u32 & 0xFFFF
    }
}

/// [`digit_mask16`] without SIMD.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn digit_mask16(chunk: &[u8; 16]) -> u32 {
    chunk
        .iter()
        .enumerate()
        .fold(0, |m, (i, b)| m | (b.is_ascii_digit() as u32) << i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ErrorKind::*;

    #[test]
    fn scalars_and_literals() {
        let ok: &[(&[u8], JsonType)] = &[
            (b"0", JsonType::Number),
            (b"-0", JsonType::Number),
            (b"-0.0", JsonType::Number),
            (b"1.0e-5", JsonType::Number),
            (b"1E+5", JsonType::Number),
            (b"1e05", JsonType::Number),
            (b"0.000", JsonType::Number),
            (b"-123456789.123456789e-123", JsonType::Number),
            (b"1E400", JsonType::Number),
            (b"true", JsonType::Bool),
            (b"false", JsonType::Bool),
            (b"null", JsonType::Null),
        ];
        for &(t, want) in ok {
            assert_eq!(
                check_scalar(t, 10),
                Ok(want),
                "{:?}",
                String::from_utf8_lossy(t)
            );
        }
        let bad: &[(&[u8], ErrorKind, usize)] = &[
            (b"-", InvalidNumber, 0),
            (b"--1", InvalidNumber, 0),
            (b"+1", InvalidLiteral, 0),
            (b"1.", InvalidNumber, 1),
            (b".1", InvalidLiteral, 0),
            (b"1e", InvalidNumber, 1),
            (b"1e+", InvalidNumber, 1),
            (b"1E-", InvalidNumber, 1),
            (b"1e+-1", InvalidNumber, 1),
            (b"1.e5", InvalidNumber, 1),
            (b"01", InvalidNumber, 1),
            (b"-01", InvalidNumber, 2),
            (b"00", InvalidNumber, 1),
            (b"0x10", InvalidNumber, 1),
            (b"1.5.2", InvalidNumber, 3),
            (b"1e5.2", InvalidNumber, 3),
            (b"12345678901234567a", InvalidNumber, 17),
            (b"1.2345678901234567a", InvalidNumber, 18),
            (b"1e1234567890123x", InvalidNumber, 15),
            (b"-Infinity", InvalidNumber, 0),
            (b"NaN", InvalidLiteral, 0),
            (b"Infinity", InvalidLiteral, 0),
            (b"tru", InvalidLiteral, 0),
            (b"truee", InvalidLiteral, 4),
            (b"True", InvalidLiteral, 0),
            (b"nul", InvalidLiteral, 0),
            (b"fals", InvalidLiteral, 0),
            (b"\xef\xbb\xbf", InvalidLiteral, 0),
            (b"1true", InvalidNumber, 1),
            (b"", ExpectedValue, 0),
        ];
        for &(t, kind, at) in bad {
            assert_eq!(
                check_scalar(t, 10),
                Err(Error::new(kind, 10 + at)),
                "{:?}",
                String::from_utf8_lossy(t)
            );
            if kind != ExpectedValue
                && !t.starts_with(b"t")
                && !t.starts_with(b"f")
                && !t.starts_with(b"n")
            {
                assert_eq!(parse_number(t, 10), Err(Error::new(kind, 10 + at)));
            }
        }
    }

    #[test]
    fn scalar_end_agrees_with_the_grammar() {
        // Every token, followed by each kind of terminator, at every offset
        // from the input's end (so the 32-byte window is and is not there).
        let tokens = [
            "0",
            "-0",
            "7",
            "-7",
            "01",
            "-01",
            "00",
            "1.",
            "1.5",
            "-1.5e",
            "1e5",
            "1E+5",
            "1e-",
            "0.000",
            "-",
            "--1",
            "1.2.3",
            "123456789012345678901234567890",
            "1234567890123456789012345678901",
            "0.12345678901234567890123456789",
            "-65.613616999999977",
            "true",
            "false",
            "null",
            "tru",
            "nul",
            "x",
            "+1",
        ];
        for tok in tokens {
            for tail in ["", ",", " ", "]", "x", "1", ".", "e"] {
                for pad in [0, 1, 20, 40] {
                    let text = format!("{tok}{tail}{}", " ".repeat(pad));
                    let b = text.as_bytes();
                    let want = match b[0] {
                        b'-' | b'0'..=b'9' => number_prefix(b, 0).ok().map(|(e, _)| e),
                        _ => ["true", "false", "null"]
                            .iter()
                            .find(|w| text.starts_with(*w))
                            .map(|w| w.len()),
                    };
                    assert_eq!(scalar_end(b, 0), want, "{text:?}");
                    for p in 0..b.len() {
                        assert_eq!(number_masks(b, p), number_masks_portable(b, p));
                    }
                }
            }
        }
    }

    #[test]
    fn digit_runs_of_every_length_and_position() {
        for len in 1..40 {
            let digits = "7".repeat(len);
            for tail in ["", "x", ".5", "e3", "/", ":", "\u{ff}"] {
                let t = format!("1{digits}{tail}");
                let want = if tail.is_empty() || tail == ".5" || tail == "e3" {
                    Ok(t.len())
                } else {
                    Err(1 + len)
                };
                let got = scan_number(t.as_bytes()).map(|_| t.len());
                assert_eq!(got, want, "{t}");
            }
        }
    }

    #[test]
    fn integers() {
        let cases: &[(&str, Number<'_>)] = &[
            ("0", Number::Int(0)),
            ("-0", Number::Int(0)),
            ("7", Number::Int(7)),
            ("-12", Number::Int(-12)),
            ("999999999999999999", Number::Int(999_999_999_999_999_999)),
            ("9223372036854775807", Number::Int(i64::MAX)),
            ("-9223372036854775808", Number::Int(i64::MIN)),
            ("9223372036854775808", Number::BigInt("9223372036854775808")),
            (
                "-9223372036854775809",
                Number::BigInt("-9223372036854775809"),
            ),
            (
                "18446744073709551615",
                Number::BigInt("18446744073709551615"),
            ),
            (
                "18446744073709551616",
                Number::BigInt("18446744073709551616"),
            ),
            (
                "99999999999999999999",
                Number::BigInt("99999999999999999999"),
            ),
            (
                "-123456789012345678901234567890",
                Number::BigInt("-123456789012345678901234567890"),
            ),
        ];
        for &(t, want) in cases {
            assert_eq!(parse_number(t.as_bytes(), 0), Ok(want), "{t}");
        }
    }

    #[test]
    fn floats_are_correctly_rounded() {
        let cases: &[(&str, f64)] = &[
            ("0.0", 0.0),
            ("1.5e3", 1500.0),
            ("1.0e-5", 1.0e-5),
            ("0.1", 0.1),
            ("1e23", 1e23),
            ("2.2250738585072011e-308", 2.225_073_858_507_201e-308),
            ("4.9e-324", 5e-324),
            ("1.7976931348623157e308", f64::MAX),
            ("1E400", f64::INFINITY),
            ("-1e400", f64::NEG_INFINITY),
            ("1e-400", 0.0),
            ("9007199254740993.0", 9_007_199_254_740_992.0),
            ("0.30000000000000004", 0.300_000_000_000_000_04),
        ];
        for &(t, want) in cases {
            assert_eq!(
                parse_number(t.as_bytes(), 0),
                Ok(Number::Float(want)),
                "{t}"
            );
            assert_eq!(Ok(want), t.parse::<f64>(), "{t}");
        }
        match parse_number(b"-0.0", 0) {
            Ok(Number::Float(v)) => assert!(v == 0.0 && v.is_sign_negative()),
            other => panic!("{other:?}"),
        }
        match parse_number(b"-0e5", 0) {
            Ok(Number::Float(v)) => assert!(v == 0.0 && v.is_sign_negative()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parse_number_at_agrees_with_parse_number() {
        // Every shape around the fast paths' limits: digit counts across
        // the eight-byte chunks and the 18/19-digit and 2^53 bounds,
        // exponents around +-22, leading zeros, signs, and every terminator
        // (or none, at the input's end).
        let mut tokens: Vec<String> = Vec::new();
        let mut seed = 1u64;
        let mut rnd = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for int_len in 1..=22 {
            for frac_len in [0, 1, 2, 7, 8, 9, 15, 16, 17, 18, 19, 20, 25] {
                for exp in [
                    None,
                    Some(0),
                    Some(-22),
                    Some(22),
                    Some(-23),
                    Some(23),
                    Some(300),
                    Some(-330),
                ] {
                    let mut t = String::new();
                    if rnd(2) == 0 {
                        t.push('-');
                    }
                    for i in 0..int_len {
                        let d = if i == 0 { 1 + rnd(9) } else { rnd(10) };
                        t.push(char::from(b'0' + d as u8));
                    }
                    if int_len == 1 && rnd(3) == 0 {
                        t = t.replace(|c: char| c.is_ascii_digit(), "0");
                    }
                    if frac_len > 0 {
                        t.push('.');
                        for _ in 0..frac_len {
                            t.push(char::from(b'0' + rnd(10) as u8));
                        }
                    }
                    if let Some(e) = exp {
                        t.push_str(&format!("{}{e}", if rnd(2) == 0 { "e" } else { "E" }));
                    }
                    tokens.push(t);
                }
            }
        }
        for t in [
            "0",
            "-0",
            "-0.0",
            "0.0",
            "9007199254740992.5",
            "9007199254740993",
            "0.1",
            "9223372036854775807",
            "-9223372036854775808",
            "999999999999999999",
            "1000000000000000000",
            "-999999999999999999",
            "12345678.12345678",
            "0.000000000000000000001",
            "1e+5",
            "1E-0",
            "5e-324",
            "1e400",
        ] {
            tokens.push(t.to_string());
        }
        for tok in &tokens {
            for tail in ["", ",", "]", " ", "}\n"] {
                for pre in ["", "[", "[1,"] {
                    let text = format!("{pre}{tok}{tail}");
                    let at = pre.len();
                    let want = parse_number(tok.as_bytes(), at).unwrap();
                    let (got, end) = parse_number_at(text.as_bytes(), at).unwrap();
                    assert_eq!(end, at + tok.len(), "{text:?}");
                    match (got, want) {
                        (Number::Float(a), Number::Float(b)) => {
                            assert_eq!(a.to_bits(), b.to_bits(), "{text:?}")
                        }
                        (a, b) => assert_eq!(a, b, "{text:?}"),
                    }
                }
            }
        }
    }

    /// `plain_decimal` answers only for valid plain decimals that fill the
    /// token, with exactly `parse_number_at`'s value, and answers for every
    /// one of them up to 16 bytes (and 2^53 for decimals).
    #[test]
    fn plain_decimals_agree_with_parse_number_at() {
        let pieces: &[&[u8]] = &[b"-", b"0", b"1", b"9", b"5", b".", b"e", b"x", b" ", b"00"];
        let mut seed = 7u32;
        let mut answered = 0;
        for round in 0..400_000 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let mut r = seed;
            let mut tok = Vec::new();
            for _ in 0..1 + (r % 17) {
                r = r.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
                tok.extend_from_slice(pieces[(r >> 24) as usize % pieces.len()]);
            }
            if round % 3 == 0 {
                // Realistic values too.
                let v = (seed % 2_000_000) as f64 - 1e6;
                let prec = (r >> 8) as usize % 10;
                tok = format!("{:.prec$}", v / 10f64.powi((r % 9) as i32)).into_bytes();
            }
            // 32 bytes readable, or fewer (the near-end copy): a delimiter
            // and a short tail, or nothing after the token at all.
            let mut input = tok.clone();
            match round % 4 {
                0 | 1 => {
                    input.push(b',');
                    input.extend_from_slice(&[b' '; 40]);
                }
                2 => {
                    input.push(b']');
                    input.extend_from_slice(&b"\n       "[..(r >> 4) as usize % 8]);
                }
                _ => {}
            }
            let got = plain_decimal(&input, 0, tok.len());
            let text_ok = scan_number(&tok).is_ok();
            let want = parse_number_at(&input, 0).filter(|&(_, e)| e == tok.len());
            if let Some(n) = got {
                answered += 1;
                assert!(text_ok, "{:?}", String::from_utf8_lossy(&tok));
                let (w, _) = want.unwrap();
                match (n, w) {
                    (Number::Float(a), Number::Float(b)) => assert_eq!(
                        a.to_bits(),
                        b.to_bits(),
                        "{:?} {a} {b}",
                        String::from_utf8_lossy(&tok)
                    ),
                    (a, b) => assert_eq!(a, b),
                }
            } else {
                let plain = tok.iter().all(|b| b.is_ascii_digit() || b"-.".contains(b));
                let digits = tok.iter().filter(|b| b.is_ascii_digit()).count();
                let int = tok
                    .iter()
                    .take_while(|&&b| b != b'.')
                    .filter(|b| b.is_ascii_digit());
                let small = int.count() <= 8 && (!tok.contains(&b'.') || digits <= 15);
                assert!(
                    !(plain && text_ok && tok.len() <= 16 && small),
                    "missed {:?}",
                    String::from_utf8_lossy(&tok)
                );
            }
        }
        assert!(answered > 100_000, "{answered}");
    }

    /// `fraction_f64` is correctly rounded: it agrees with the standard
    /// library's parser on random mantissas of every length up to 19
    /// digits, on every power it takes, and on values one unit from the
    /// halfway points between two floats.
    #[test]
    fn fractions_are_correctly_rounded() {
        let mut rnd = crate::test_rng(0x9E37_79B9_7F4A_7C15);
        let check = |m: u64, k: usize| {
            let want: f64 = format!("{m}e-{k}").parse().unwrap();
            assert_eq!(fraction_f64(m, k).to_bits(), want.to_bits(), "{m}e-{k}");
        };
        for k in 1..=MAX_POW5 {
            for digits in 1..=19u32 {
                for _ in 0..300 {
                    let m = rnd() % 10u64.pow(digits);
                    check(m, k);
                }
            }
            for m in [0, 1, (1 << 53) - 1, 1 << 53, (1 << 53) + 1, u64::MAX / 2] {
                check(m, k);
            }
            check(9_999_999_999_999_999_999, k);
        }
        // Halfway points: for a float M * 2^E, the midpoint to the next one
        // is (2M + 1) * 2^(E - 1); times 10^k it is (2M + 1) * 5^k * 2^(k +
        // E - 1), whose integer part (exact when the shift drops only
        // zeros: a true tie) and its neighbours are decimals at, just below
        // and just above the midpoint.
        let mut ties = 0;
        for _ in 0..20_000 {
            let bits = 0x3E00_0000_0000_0000 + rnd() % 0x0900_0000_0000_0000;
            let mant = (bits & ((1 << 52) - 1)) | 1 << 52;
            let e = ((bits >> 52) & 0x7FF) as i64 - 1075;
            for (k, &p5) in POW5.iter().enumerate().skip(1) {
                let n = u128::from(2 * mant + 1) * u128::from(p5);
                let shift = -(k as i64 + e - 1);
                let m = match shift {
                    1..128 => n >> shift,
                    -63..=0 => n.saturating_mul(1 << -shift),
                    _ => continue,
                };
                if m == 0 || m >= 10u128.pow(19) {
                    continue;
                }
                ties += (shift <= 0) as usize;
                let m = m as u64;
                for d in 0..3 {
                    check(m - d.min(m), k);
                    check(m + d, k);
                }
            }
        }
        assert!(ties > 0);
    }

    /// The long integer readers at the edges of `i64` and of their digit
    /// counts, against `parse_number_at` (the exact path): every answer is
    /// its value, and every integer of 17 to 19 digits within `i64` is
    /// answered.
    #[test]
    fn long_ints_at_the_edges() {
        let mut cases: Vec<String> = vec![];
        for v in [
            i64::MAX,
            i64::MAX - 1,
            i64::MIN,
            i64::MIN + 1,
            10_i64.pow(16),
            10_i64.pow(16) - 1,
            10_i64.pow(17),
            10_i64.pow(18),
            10_i64.pow(18) - 1,
            505_874_924_095_815_681,
            -505_874_924_095_815_681,
            1_000_000_000_000_000_001,
        ] {
            cases.push(v.to_string());
            cases.push((-(v as i128)).to_string());
        }
        for t in [
            "9223372036854775808",
            "-9223372036854775809",
            "9999999999999999999",
            "-9999999999999999999",
            "10000000000000000000",
            "01234567890123456789",
            "012345678901234567",
            "-012345678901234567",
            "1234567890123456x8",
            "12345678901234567.5",
            "123456789012345678e1",
            "-",
            "1",
            "-0",
            "0",
        ] {
            cases.push(t.to_string());
        }
        for t in &cases {
            let tok = t.as_bytes();
            let digits = tok.iter().filter(|b| b.is_ascii_digit()).count();
            let want = parse_number_at(tok, 0).filter(|&(_, e)| e == tok.len());
            let want_int = match want {
                Some((Number::Int(v), _)) => Some(v),
                _ => None,
            };
            for tail in [&b""[..], b",", b"]          "] {
                let input = [tok, tail].concat();
                let got = long_int_span(&input, 0, tok.len());
                let d = t.strip_prefix('-').unwrap_or(t);
                let plain = !d.is_empty()
                    && d.bytes().all(|b| b.is_ascii_digit())
                    && !(d.len() > 1 && d.starts_with('0'));
                if plain && (17..=19).contains(&digits) {
                    assert_eq!(got, want_int, "{t}");
                } else {
                    assert_eq!(got, None, "{t}");
                }
                // Enough bytes readable: plain_long_decimal answers every
                // integer of at most 19 digits within i64.
                let mut padded = input.clone();
                padded.extend_from_slice(&[b' '; 40]);
                let got = plain_long_decimal(&padded, 0, tok.len());
                if let Some(n) = got {
                    assert_eq!(Some(n), want.map(|w| w.0), "{t}");
                } else if digits <= 19 && !t.contains('.') && !t.contains('e') {
                    assert!(want_int.is_none(), "missed {t}");
                }
            }
        }
        // In range at 19 digits, out of range one past, both signs.
        assert_eq!(long_int_span(b"9223372036854775807", 0, 19), Some(i64::MAX));
        assert_eq!(long_int_span(b"9223372036854775808", 0, 19), None);
        assert_eq!(
            long_int_span(b"-9223372036854775808", 0, 20),
            Some(i64::MIN)
        );
        assert_eq!(long_int_span(b"-9223372036854775809", 0, 20), None);
        assert_eq!(
            long_int_span(b"505874924095815681,", 0, 18),
            Some(505_874_924_095_815_681)
        );
        // A leading zero is never read (the scanner rejects it).
        assert_eq!(long_int_span(b"05874924095815681,", 0, 17), None);
    }

    /// `long_mantissa` reads every shape it is given (a sign or not, 17 to
    /// 21 bytes, 1 to 15 digits after the dot, at most 19 digits) as the
    /// digits' integer, whatever follows the token in the chunk.
    #[test]
    fn long_mantissas_are_the_digits() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize
        };
        for len in 17..=21usize {
            for neg in 0..2usize {
                for frac in 1..=15usize {
                    let digits = len - 1 - neg;
                    if digits > 19 || digits <= frac {
                        continue;
                    }
                    for _ in 0..200 {
                        let mut chunk = [0u8; 32];
                        for b in chunk.iter_mut() {
                            *b = b"0123456789,] e-."[next() % 16];
                        }
                        let mut want = 0u64;
                        for (i, b) in chunk[..len].iter_mut().enumerate() {
                            if i < neg {
                                *b = b'-';
                            } else if i == len - frac - 1 {
                                *b = b'.';
                            } else {
                                // (No leading zero, as the caller checks.)
                                let d = if i == neg {
                                    1 + next() % 9
                                } else {
                                    next() % 10
                                };
                                *b = b'0' + d as u8;
                                want = want * 10 + d as u64;
                            }
                        }
                        let dot = len - frac - 1;
                        assert_eq!(
                            long_mantissa(&chunk, neg, dot, len),
                            want,
                            "{:?}",
                            String::from_utf8_lossy(&chunk[..len])
                        );
                    }
                }
            }
        }
    }

    /// `plain_long_decimal` answers only for valid plain fractions of up to
    /// 19 digits, and then with `parse_number_at`'s value.
    #[test]
    fn plain_long_decimals_agree_with_parse_number_at() {
        let pieces: &[&[u8]] = &[
            b"-", b"0", b"1", b"9", b"5", b".", b"e", b"x", b"00", b"1234",
        ];
        let mut seed = 11u32;
        let mut answered = 0;
        for round in 0..300_000 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let mut r = seed;
            let mut tok = Vec::new();
            for _ in 0..1 + (r % 12) {
                r = r.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
                tok.extend_from_slice(pieces[(r >> 24) as usize % pieces.len()]);
            }
            if round % 2 == 0 {
                // Coordinate-like values: 15 to 20 significant digits.
                let v = f64::from_bits(u64::from(seed) << 20 | u64::from(r)) % 1e3;
                let prec = 12 + (r >> 8) as usize % 10;
                tok = format!("{v:.prec$}").into_bytes();
            }
            let mut input = tok.clone();
            input.push(b',');
            input.extend_from_slice(&[b' '; 40]);
            let got = plain_long_decimal(&input, 0, tok.len());
            let want = parse_number_at(&input, 0).filter(|&(_, e)| e == tok.len());
            let fraction = tok.contains(&b'.') && !tok.contains(&b'e');
            let digits = tok.iter().filter(|b| b.is_ascii_digit()).count();
            match got {
                Some(Number::Int(a)) => {
                    assert_eq!(
                        want.map(|w| w.0),
                        Some(Number::Int(a)),
                        "{:?}",
                        String::from_utf8_lossy(&tok)
                    );
                }
                Some(Number::Float(a)) => {
                    answered += 1;
                    let Some((Number::Float(b), _)) = want else {
                        panic!("{:?}", String::from_utf8_lossy(&tok))
                    };
                    assert_eq!(
                        a.to_bits(),
                        b.to_bits(),
                        "{:?}",
                        String::from_utf8_lossy(&tok)
                    );
                }
                Some(other) => panic!("{other:?}"),
                None => assert!(
                    want.is_none()
                        || (!fraction && !matches!(want, Some((Number::Int(_), _))))
                        || digits > 19,
                    "missed {:?}",
                    String::from_utf8_lossy(&tok)
                ),
            }
        }
        assert!(answered > 50_000, "{answered}");
    }

    #[test]
    fn parse_number_at_checks_the_grammar() {
        // Where the grammar fails inside the number, `None`; where the
        // number merely ends, the end (the caller checks what follows).
        for bad in [
            "-", "--1", "01", "-01", "00", "1.", "1.e5", "1e", "1e+", "1E-", "-x", ".5", "-.5",
        ] {
            for tail in ["", ",", " ", "]"] {
                let t = format!("{bad}{tail}");
                assert_eq!(parse_number_at(t.as_bytes(), 0), None, "{t:?}");
            }
        }
        for (t, end) in [
            ("1x", 1),
            ("0.5.2", 3),
            ("1e5.2", 3),
            ("12345678901234567a", 17),
            ("1true", 1),
            ("-0 ", 2),
        ] {
            assert_eq!(
                parse_number_at(t.as_bytes(), 0).map(|(_, e)| e),
                Some(end),
                "{t:?}"
            );
        }
    }

    #[test]
    fn huge_digit_strings_are_linear() {
        let big = "9".repeat(100_000);
        assert_eq!(check_scalar(big.as_bytes(), 0), Ok(JsonType::Number));
        assert_eq!(parse_number(big.as_bytes(), 0), Ok(Number::BigInt(&big)));
        let neg = format!("-{big}");
        assert_eq!(parse_number(neg.as_bytes(), 0), Ok(Number::BigInt(&neg)));
        // 0.999...9 (10^5 nines) rounds to 1.0.
        let frac = format!("0.{big}");
        assert_eq!(parse_number(frac.as_bytes(), 0), Ok(Number::Float(1.0)));
        // 1999...9 (10^5 + 1 digits) * 10^-100000 rounds to 2.0.
        let sci = format!("1{big}e-100000");
        assert_eq!(parse_number(sci.as_bytes(), 0), Ok(Number::Float(2.0)));
        let long_exp = format!("1e{big}");
        assert_eq!(
            parse_number(long_exp.as_bytes(), 0),
            Ok(Number::Float(f64::INFINITY))
        );
        let long_neg_exp = format!("1e-{big}");
        assert_eq!(
            parse_number(long_neg_exp.as_bytes(), 0),
            Ok(Number::Float(0.0))
        );
        let bad = format!("{big}x");
        assert_eq!(
            parse_number(bad.as_bytes(), 3),
            Err(Error::new(InvalidNumber, 100_003))
        );
    }
}
