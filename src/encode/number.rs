//! Integer and float formatting.
//!
//! Integers are written in place, two digits at a time (the `itoa`
//! method). Floats use `zmij`: the shortest decimal that reads back as the same
//! `f64`, positional for magnitudes in `[1e-5, 1e16)` (always with a `.`:
//! `1.0`, `100.0`) and exponential outside it (`1e+16`, `1e-7`,
//! `1.5e+300`). That is byte for byte what orjson writes. Non-finite values
//! have no JSON form: the caller must reject them before calling
//! [`write_f64`].
//!
//! Measured facts about zmij (1.0.23), so they need not be rediscovered:
//! its SSE4.1 code (digit shuffles, the exponent table) is chosen with
//! `cfg(target_feature = "sse4.1")` when zmij itself is compiled, so a
//! `#[target_feature(enable = "sse4.1")]` wrapper here (runtime
//! multiversioning) cannot reach it: only a higher baseline for the whole
//! build could, which we do not want. Its positional forms move the digits
//! with variable-length `ptr::copy` / `ptr::write_bytes`, i.e. calls to
//! libc's `memmove` and `memset` (two per float in `(-1, 1)`): ~8% of
//! `dumps` time on marine_ik.json (`perf record`), the same share in
//! orjson's build, which uses the same code. So the build uses a fork,
//! vendor/zmij (MIT, its licence kept; a path dependency in Cargo.toml):
//! those forms with fixed-size moves, and a 42-byte buffer (24 in zmij) for
//! them; vendor/zmij/FORK.md says what changed.

use super::Buf;

/// Two ASCII digits for each value 0..100.
static PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Powers of ten, `10^0 ..= 10^19` (the decoder's table, kept in a static here).
static POW10: [u64; 20] = crate::decode::number::POW10_U64;

/// The number of decimal digits of `v` (1 for 0), without a loop: the bit
/// length times log10(2) (1233 / 4096) is the digit count or one more,
/// corrected with one table compare.
#[inline(always)]
fn digit_count(v: u64) -> usize {
    let v = v | 1;
    let bits = 64 - v.leading_zeros();
    let t = ((bits * 1233) >> 12) as usize;
    t + 1 - usize::from(v < POW10[t])
}

/// Room [`write_i64_raw`] may write: a sign and 20 digits.
pub const I64_MAX_LEN: usize = 21;
/// Room [`write_f64_raw`] may write (zmij's buffer).
pub const F64_MAX_LEN: usize = std::mem::size_of::<zmij::Buffer>();

/// Write the decimal form of `v` at `dst` and return its length: digits
/// written in place, four then two at a time from the right (no
/// intermediate buffer, no `memcpy` call).
///
/// # Safety
/// `dst` must be writable for 20 bytes.
#[inline(always)]
pub unsafe fn write_u64_raw(dst: *mut u8, v: u64) -> usize {
    let n = digit_count(v);
    // SAFETY: `n <= 20` bytes at `dst` (the contract); each store is below
    // `end <= n`, and `PAIRS` is read at even offsets below 200.
    unsafe {
        let mut end = n;
        let mut v = v;
        // Four digits per step (two independent pairs), then pairs.
        while v >= 10_000 {
            let four = (v % 10_000) as usize;
            v /= 10_000;
            end -= 4;
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(four / 100 * 2), dst.add(end), 2);
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(four % 100 * 2), dst.add(end + 2), 2);
        }
        while v >= 100 {
            let pair = (v % 100) as usize * 2;
            v /= 100;
            end -= 2;
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(pair), dst.add(end), 2);
        }
        if v >= 10 {
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(v as usize * 2), dst, 2);
        } else {
            *dst = b'0' + v as u8;
        }
    }
    n
}

/// Write the decimal form of `v` at `dst` and return its length.
///
/// # Safety
/// `dst` must be writable for [`I64_MAX_LEN`] bytes.
#[inline(always)]
pub unsafe fn write_i64_raw(dst: *mut u8, v: i64) -> usize {
    let neg = usize::from(v < 0);
    // SAFETY: the sign (when written) and at most 20 digits fit in 21 bytes.
    unsafe {
        *dst = b'-';
        neg + write_u64_raw(dst.add(neg), v.unsigned_abs())
    }
}

/// Append the decimal form of `v`.
#[inline]
pub fn write_u64<B: Buf + ?Sized>(out: &mut B, v: u64) {
    out.reserve(20);
    let len = out.len();
    // SAFETY: `reserve(20)` leaves room for the digits; `set_len` covers
    // only the bytes written.
    unsafe {
        let n = write_u64_raw(out.as_mut_ptr().add(len), v);
        out.set_len(len + n);
    }
}

/// Append the decimal form of `v`.
#[inline]
pub fn write_i64<B: Buf + ?Sized>(out: &mut B, v: i64) {
    out.reserve(I64_MAX_LEN);
    let len = out.len();
    // SAFETY: as in `write_u64`, with room for the sign.
    unsafe {
        let n = write_i64_raw(out.as_mut_ptr().add(len), v);
        out.set_len(len + n);
    }
}

/// Write the shortest round-trip form of the finite float `v` at `dst` and
/// return its length. zmij writes straight there (its `Buffer` is a plain
/// byte array and its text starts at the buffer's start), so there
/// is no staging copy: a copy of the digits from a stack buffer would
/// re-read, with wider loads, bytes just written by narrower stores, which
/// stalls store forwarding.
///
/// # Safety
/// `dst` must be writable for [`F64_MAX_LEN`] bytes; `v` must be finite.
#[inline(always)]
pub unsafe fn write_f64_raw(dst: *mut u8, v: f64) -> usize {
    debug_assert!(v.is_finite());
    const _: () = assert!(std::mem::align_of::<zmij::Buffer>() == 1);
    // SAFETY: `dst` has room for a whole `zmij::Buffer`, an array of
    // `MaybeUninit<u8>` (alignment 1, any content valid), so a unique
    // reference to it over that room is sound. The returned text lies
    // inside the buffer; zmij 1.x returns it from the buffer's start, and
    // should a version not, `ptr::copy` (overlap allowed) moves it there,
    // within the same buffer.
    unsafe {
        let buf = &mut *dst.cast::<zmij::Buffer>();
        let s = buf.format_finite(v);
        let (p, n) = (s.as_ptr(), s.len());
        if p != dst.cast_const() {
            std::ptr::copy(p, dst, n);
        }
        n
    }
}

/// Append the shortest round-trip form of the finite float `v`.
#[inline]
pub fn write_f64<B: Buf + ?Sized>(out: &mut B, v: f64) {
    out.reserve(F64_MAX_LEN);
    let len = out.len();
    // SAFETY: `reserve` leaves room for zmij's buffer; `set_len` covers only
    // the text written.
    unsafe {
        let n = write_f64_raw(out.as_mut_ptr().add(len), v);
        out.set_len(len + n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_like_orjson() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1e-5, "0.00001"),
            (1e-7, "1e-7"),
            (1.5e300, "1.5e+300"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (123456789012345680.0, "1.2345678901234568e+17"),
        ];
        for &(v, s) in cases {
            assert_eq!(f(v), s, "{v:?}");
            assert_eq!(f(v).parse::<f64>().unwrap().to_bits(), v.to_bits());
        }
    }

    /// orjson's text for finite `v`, from std's shortest round-trip digits
    /// (`{:e}`): positional for decimal exponents -5..=15 (always with a
    /// `.`), else `d.ddde+X` / `d.ddde-X`.
    fn reference(v: f64) -> String {
        let e = format!("{:e}", v.abs());
        let (mant, exp) = e.split_once('e').unwrap();
        let exp: i32 = exp.parse().unwrap();
        let digits: String = mant.chars().filter(|c| *c != '.').collect();
        let sign = if v.is_sign_negative() { "-" } else { "" };
        if v == 0.0 {
            return format!("{sign}0.0");
        }
        let n = digits.len() as i32;
        let body = if (-5..=15).contains(&exp) {
            if exp >= n - 1 {
                format!("{digits}{}.0", "0".repeat((exp - (n - 1)) as usize))
            } else if exp >= 0 {
                let (a, b) = digits.split_at(exp as usize + 1);
                format!("{a}.{b}")
            } else {
                format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
            }
        } else {
            let frac = if n > 1 {
                format!(".{}", &digits[1..])
            } else {
                String::new()
            };
            let es = if exp < 0 { "-" } else { "+" };
            format!("{}{frac}e{es}{}", &digits[..1], exp.abs())
        };
        format!("{sign}{body}")
    }

    /// `f(v)` is the reference text, or (an exact tie between two
    /// shortest candidates, which std and zmij break differently:
    /// 1500000000000000.25) the same text but its last digit, one away,
    /// and reads back as `v`.
    fn assert_matches_reference(v: f64) {
        let (got, want) = (f(v), reference(v));
        if got == want {
            return;
        }
        let (g, w) = (got.as_bytes(), want.as_bytes());
        let n = g.len();
        assert!(
            n == w.len()
                && g[..n - 1] == w[..n - 1]
                && g[n - 1].abs_diff(w[n - 1]) == 1
                && got.parse::<f64>().unwrap().to_bits() == v.to_bits(),
            "{v:?}: {got} vs {want}"
        );
    }

    /// The positional forms (vendor/zmij's fixed-size moves) against the
    /// reference: every digit count 1..=17 at every decimal exponent
    /// -7..=17, both signs, and values next to them.
    #[test]
    fn positional_forms_match_reference() {
        let mut seeds = vec![
            1.0,
            9.0,
            1.5,
            0.1,
            0.3,
            2.0f64.sqrt(),
            1.0 / 3.0,
            123456789.0,
        ];
        let mut x = 1.0f64;
        for d in 1..=17 {
            x = x * 10.0 + (d % 9 + 1) as f64;
            seeds.push(x / 10f64.powi(d));
        }
        for &s in &seeds {
            for e in -8..=18 {
                let base = s * 10f64.powi(e);
                for v in [
                    base,
                    f64::from_bits(base.to_bits() + 1),
                    f64::from_bits(base.to_bits() - 1),
                ] {
                    for v in [v, -v] {
                        assert_matches_reference(v);
                    }
                }
            }
        }
        // The widest forms: 17 digits, 16 leading or trailing zeros.
        for v in [
            1e15,
            1e-5,
            9.999999999999998e14,
            1.2345678901234567e-5,
            123456789012345.67,
        ] {
            assert_matches_reference(v);
        }
    }

    proptest::proptest! {
        #[test]
        fn any_float_matches_reference(bits in proptest::prelude::any::<u64>()) {
            let v = f64::from_bits(bits);
            if v.is_finite() {
                assert_matches_reference(v);
            }
        }

        #[test]
        fn positional_floats_match_reference(m in 1u64..(1 << 53), e in -22i32..=16) {
            let v = m as f64 * 10f64.powi(e);
            if v < 1e16 {
                assert_matches_reference(v);
            }
        }
    }

    #[test]
    fn digit_counts() {
        assert_eq!(digit_count(0), 1);
        for (d, &p) in POW10.iter().enumerate().skip(1) {
            assert_eq!(digit_count(p - 1), d, "{}", p - 1);
            assert_eq!(digit_count(p), d + 1, "{p}");
        }
        assert_eq!(digit_count(u64::MAX), 20);
        for v in (0..64).map(|b| 1u64 << b) {
            assert_eq!(digit_count(v), v.to_string().len());
        }
    }

    #[test]
    fn integers() {
        let mut out = Vec::new();
        write_i64(&mut out, i64::MIN);
        out.push(b',');
        write_u64(&mut out, u64::MAX);
        assert_eq!(out, b"-9223372036854775808,18446744073709551615");
        for v in [
            0u64,
            1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            12345,
            1 << 53,
            10u64.pow(19) - 1,
            10u64.pow(19),
        ] {
            for w in [v, v.saturating_sub(1), v.saturating_add(1)] {
                let mut out = Vec::new();
                write_u64(&mut out, w);
                assert_eq!(out, w.to_string().as_bytes());
                let mut out = Vec::new();
                write_i64(&mut out, -(w.min(i64::MAX as u64) as i64));
                assert_eq!(
                    out,
                    (-(w.min(i64::MAX as u64) as i64)).to_string().as_bytes()
                );
            }
        }
    }
}
