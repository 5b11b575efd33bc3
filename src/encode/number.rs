//! Integer and float formatting.
//!
//! Floats use `zmij`: the shortest decimal that reads back as the same
//! `f64`, positional for magnitudes in `[1e-5, 1e16)` (always with a `.`:
//! `1.0`, `100.0`) and exponential outside it (`1e+16`, `1e-7`,
//! `1.5e+300`). That is byte for byte what orjson writes. Non-finite values
//! have no JSON form: the caller must reject them before calling
//! [`write_f64`].

/// Append the decimal form of `v`.
#[inline]
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(v).as_bytes());
}

/// Append the decimal form of `v`.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(v).as_bytes());
}

/// Append the shortest round-trip form of the finite float `v`.
#[inline]
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    debug_assert!(v.is_finite());
    let mut b = zmij::Buffer::new();
    out.extend_from_slice(b.format_finite(v).as_bytes());
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
    }
}
