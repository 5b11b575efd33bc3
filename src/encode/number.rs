//! Integer and float formatting.
//!
//! Integers are written in place, two digits at a time (the `itoa`
//! method). Floats use `zmij`: the shortest decimal that reads back as the same
//! `f64`, positional for magnitudes in `[1e-5, 1e16)` (always with a `.`:
//! `1.0`, `100.0`) and exponential outside it (`1e+16`, `1e-7`,
//! `1.5e+300`). That is byte for byte what orjson writes. Non-finite values
//! have no JSON form: the caller must reject them before calling
//! [`write_f64`].

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

/// The number of decimal digits of `v`.
#[inline(always)]
fn digit_count(v: u64) -> usize {
    let mut n = 1;
    let mut p = 10u64;
    while n < 20 && v >= p {
        n += 1;
        p = p.wrapping_mul(10);
    }
    n
}

/// Append the decimal form of `v`: digits written in place, two at a
/// time from the right, into room reserved once (no intermediate buffer,
/// no `memcpy` call).
#[inline]
pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    out.reserve(20);
    let n = digit_count(v);
    let len = out.len();
    // SAFETY: `reserve(20)` leaves room for the at most 20 digits; every
    // byte in `len..len + n` is written before `set_len` covers it.
    unsafe {
        let dst = out.as_mut_ptr().add(len);
        let mut end = n;
        let mut v = v;
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
        out.set_len(len + n);
    }
}

/// Append the decimal form of `v`.
#[inline]
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(out, v.unsigned_abs());
}

/// Append the shortest round-trip form of the finite float `v`.
#[inline]
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    debug_assert!(v.is_finite());
    const SIZE: usize = std::mem::size_of::<zmij::Buffer>();
    let mut b = zmij::Buffer::new();
    let base = (&b as *const zmij::Buffer).cast::<u8>();
    let s = b.format_finite(v).as_bytes();
    out.reserve(SIZE);
    let len = out.len();
    // SAFETY: `reserve(SIZE)` leaves room for the whole formatting buffer.
    // zmij writes its text at the start of the buffer, so one fixed-size
    // copy of the buffer (an untyped copy: bytes past the text may be
    // uninitialized, and `set_len` never covers them) moves the text with
    // no `memcpy` call; otherwise the text alone is copied.
    unsafe {
        let dst = out.as_mut_ptr().add(len);
        if s.as_ptr() == base {
            std::ptr::copy_nonoverlapping(base, dst, SIZE);
        } else {
            std::ptr::copy_nonoverlapping(s.as_ptr(), dst, s.len());
        }
        out.set_len(len + s.len());
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
