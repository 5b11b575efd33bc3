//! UTF-8 validation: `qjson::scan::utf8_valid` (on an AVX-512 CPU, the
//! crate's own 64-byte-step validator, `src/scan/utf8_avx512.rs`; else
//! simdutf8) against `std::str::from_utf8`, the oracle.
//!
//! Each input is checked as given, and also placed inside padding so that
//! its bytes fall at arbitrary offsets around 64-byte block boundaries:
//! `prefix` bytes before it and `suffix` bytes after it, the padding byte
//! chosen by the fuzzer (ASCII, a continuation byte, a lead byte, or a
//! complete multi-byte character repeated), and the whole buffer read from
//! an arbitrary start within a 64-byte-aligned allocation (so unaligned
//! loads and the last partial block are both reached). Every prefix and
//! suffix of the padded buffer cut at a block boundary (and one byte to
//! either side of it) is checked too: a sequence split by the cut, or
//! continued across a block, must be judged as std judges it. Each is
//! also given, as it is and inside quotes, to the token scan, whose own
//! check (fused into its blocks on AVX-512) must agree where it scans.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use qjson::scan::{active_backend, scan_tokens_with, utf8_valid, Backend, Scan};

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    data: &'a [u8],
    /// Padding before `data` (taken modulo 200: up to 199 units, about three
    /// blocks of ASCII, twelve of 4-byte characters).
    prefix: u8,
    /// Padding after `data` (modulo 200).
    suffix: u8,
    /// Which padding (see `pad`).
    pad: u8,
    /// Start of the buffer within its aligned allocation (modulo 64).
    align: u8,
}

/// The padding unit: ASCII keeps the validity of what it surrounds; the
/// others make sequences cross into or out of the data.
fn pad(kind: u8) -> &'static [u8] {
    match kind % 6 {
        0 => b" ",
        1 => b"a",
        2 => "\u{e9}".as_bytes(),    // 2-byte sequence
        3 => "\u{20ac}".as_bytes(),  // 3-byte sequence
        4 => "\u{1f600}".as_bytes(), // 4-byte sequence
        _ => &[0x80],                // a lone continuation byte
    }
}

fn check(bytes: &[u8]) {
    let want = std::str::from_utf8(bytes).is_ok();
    let got = utf8_valid(bytes);
    assert_eq!(
        got,
        want,
        "utf8_valid disagrees with std on {} bytes: {:02x?}",
        bytes.len(),
        bytes
    );
    fused(bytes, want);
    let mut quoted = Vec::with_capacity(bytes.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(bytes);
    quoted.push(b'"');
    fused(&quoted, want);
}

/// The token scan's own check (the AVX-512 one fused into its blocks,
/// `Scan::utf8_valid`): when the scan succeeds, it says valid exactly
/// when std does (other backends never say valid).
fn fused(bytes: &[u8], want: bool) {
    let mut s = Scan::default();
    if let Some(Ok(())) = scan_tokens_with(active_backend(), bytes, &mut s) {
        if active_backend() == Backend::Avx512 {
            assert_eq!(s.utf8_valid, want, "token scan on {bytes:02x?}");
        } else {
            assert!(!s.utf8_valid);
        }
    }
}

fuzz_target!(|input: Input| {
    check(input.data);

    let unit = pad(input.pad);
    let mut body = Vec::new();
    for _ in 0..input.prefix % 200 {
        body.extend_from_slice(unit);
    }
    body.extend_from_slice(input.data);
    for _ in 0..input.suffix % 200 {
        body.extend_from_slice(unit);
    }

    // The body copied in at `align` bytes past a 64-byte boundary (a u8x64
    // block) of a spare buffer.
    let mut store = vec![0u8; body.len() + 128];
    let start = store.as_ptr().align_offset(64) + (input.align % 64) as usize;
    store[start..start + body.len()].copy_from_slice(&body);
    let buf = &store[start..start + body.len()];
    check(buf);

    // Cuts at block boundaries of the buffer (and one byte either side).
    let mut cut = 0usize;
    while cut <= buf.len() {
        for c in [cut.saturating_sub(1), cut, cut + 1] {
            if c <= buf.len() {
                check(&buf[..c]);
                check(&buf[c..]);
            }
        }
        cut += 64;
    }
});
