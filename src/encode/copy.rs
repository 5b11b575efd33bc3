//! Copying a long run of bytes into an output buffer: the input ranges an
//! edited document's output is assembled from (`dumps` of an edited view
//! copies the original bytes around each edit, one range after another,
//! into the result).
//!
//! # Why not `memcpy`
//!
//! glibc copies a run of a few kilobytes or more with `rep movsb`, whose
//! speed depends on how source and destination are aligned relative to each
//! other: on the AMD EPYC (Zen, FSRM) this project is measured on, a 60 KB
//! copy takes 1.04 us when both are equally aligned modulo 64 and 1.14 us
//! otherwise (+10%). A range after an edit is almost never equally aligned
//! with its place in the output (the edit shifts it by its change in
//! length), so a patched 60 KB request paid ~0.1 us more to copy its bytes
//! than a passthrough of the same request.
//! These are earlier sessions' figures, and they hold only for runs that fit
//! in L1 with their copy: session 20 measured `rep movsb` faster than the
//! vector loop past ~16 KiB at every alignment (60 KB included), so only
//! runs of [`WIDE_MIN`] to [`WIDE_MAX`] take it (see "Why only up to 16 KiB").
//!
//! # Algorithm
//!
//! With AVX2 (the level `crate::cpu::kernels` gives the stage-2 walks, whose
//! features include it): the first 32 bytes are copied with one unaligned
//! load and store; then, from the first 32-byte boundary of the destination
//! on, 128 bytes per step as four unaligned loads and four aligned stores,
//! then 32 at a time; the last 32 bytes with one unaligned load and store
//! (overlapping bytes already written, with the same values). Aligned stores
//! never split a cache line, whatever the source's alignment: measured on
//! the same machine (an earlier session), 1.03-1.05 us for 60 KB at every
//! relative alignment, and 2-25% under glibc for aligned copies of 600 bytes
//! to 1 MB in cache; the hot-loop figures of session 20 below supersede those
//! past 16 KiB.
//! Runs shorter than [`WIDE_MIN`] (glibc copies them with its own vector
//! loop, not `rep movsb`: from 2,112 bytes on, its
//! `x86_rep_movsb_threshold` on this machine) or of [`WIDE_MAX`] or more,
//! and CPUs without AVX2, go to `memcpy`.
//!
//! # Why only up to 16 KiB
//!
//! The vector loop is bound by the core's store rate (one 32-byte store a
//! cycle); `rep movsb` on Zen 4 (FSRM) moves more per cycle once the copy
//! no longer fits in L1 (source and destination together past its 32 KiB).
//! Measured again in session 20 (a hot loop of one copy, best of five, all
//! three relative alignments alike): 16,000 bytes 0.09 us vector vs 0.10
//! `memcpy`; 24,000: 0.17 vs 0.15; 32,000: 0.32 vs 0.19; 100,000: 1.04 vs
//! 0.77; 500,000: 6.6 vs 5.8; 1,000,000: 17.3 vs 15.3. The dumps of a
//! patched 100 KB request, whose ~100 KB range went to the vector loop,
//! spent 0.94 us in it against the passthrough's 0.73 us in `memcpy` for
//! the same bytes (perf, LTO). So the vector loop only takes the runs that
//! fit in L1 with their copy, where it is the faster one.

/// Runs from this length on take the AVX2 copy.
pub const WIDE_MIN: usize = 2048;
/// Runs from this length on go to `memcpy` again (see "Why only up to
/// 16 KiB").
pub const WIDE_MAX: usize = 16 << 10;

/// Copy `src` to `dst`.
///
/// # Safety
/// `dst` must be valid for writes of `src.len()` bytes and must not overlap
/// `src`.
#[inline]
pub unsafe fn copy_to(dst: *mut u8, src: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if (WIDE_MIN..WIDE_MAX).contains(&src.len()) && crate::cpu::kernels().avx2_walk {
        // SAFETY: `avx2_walk` is true only when the CPU has AVX2 (among
        // the walks' features, `cpu::Features::avx2_walk`); the caller's
        // contract is this function's, and `src.len() >= WIDE_MIN >= 32`.
        unsafe { copy_avx2(dst, src) };
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
}

/// [`copy_to`] with AVX2 (see the module docs).
///
/// # Safety
/// The CPU has AVX2; `src.len() >= 32`; `dst` valid for writes of
/// `src.len()` bytes, not overlapping `src`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn copy_avx2(dst: *mut u8, src: &[u8]) {
    use std::arch::x86_64::*;
    let n = src.len();
    debug_assert!(n >= 32);
    let (s, d) = (src.as_ptr(), dst);
    // SAFETY: every load reads `src[i..i + 32]` and every store
    // writes `dst[i..i + 32]` for offsets `i <= n - 32` only (the loop
    // conditions), all inside the two buffers of `n` bytes; `loadu` /
    // `storeu` need no alignment, and `store` is used only at `d + i` with
    // `d + i` a multiple of 32 (`i` starts at the first boundary and moves
    // by multiples of 32).
    unsafe {
        _mm256_storeu_si256(d.cast(), _mm256_loadu_si256(s.cast()));
        // The first 32-byte boundary of `dst` after its start (1..=32
        // bytes in: those bytes were just written).
        let mut i = 32 - (d as usize & 31);
        while i + 128 <= n {
            let a = _mm256_loadu_si256(s.add(i).cast());
            let b = _mm256_loadu_si256(s.add(i + 32).cast());
            let c = _mm256_loadu_si256(s.add(i + 64).cast());
            let e = _mm256_loadu_si256(s.add(i + 96).cast());
            _mm256_store_si256(d.add(i).cast(), a);
            _mm256_store_si256(d.add(i + 32).cast(), b);
            _mm256_store_si256(d.add(i + 64).cast(), c);
            _mm256_store_si256(d.add(i + 96).cast(), e);
            i += 128;
        }
        while i + 32 <= n {
            _mm256_store_si256(d.add(i).cast(), _mm256_loadu_si256(s.add(i).cast()));
            i += 32;
        }
        if i < n {
            _mm256_storeu_si256(
                d.add(n - 32).cast(),
                _mm256_loadu_si256(s.add(n - 32).cast()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length around the thresholds and the loops' steps, at every
    /// alignment of source and destination: the bytes copied and none
    /// beside them touched.
    #[test]
    fn copies_exactly_at_every_alignment() {
        let src: Vec<u8> = (0..WIDE_MAX + 300).map(|i| (i * 7 + 3) as u8).collect();
        let lens = (0..40).chain(WIDE_MIN - 2..WIDE_MIN + 260).chain([
            WIDE_MIN * 3 + 1,
            WIDE_MIN * 4,
            WIDE_MAX - 1,
            WIDE_MAX,
            WIDE_MAX + 1,
        ]);
        for n in lens {
            for so in [0, 1, 5, 31, 32, 33, 63] {
                for d_off in [0, 1, 17, 31, 32, 40] {
                    let mut dst = vec![0xAAu8; n + 64 + 8];
                    // SAFETY: `dst[d_off..d_off + n]` is inside `dst` (64
                    // bytes of slack), and `dst` and `src` are distinct.
                    unsafe { copy_to(dst.as_mut_ptr().add(d_off), &src[so..so + n]) };
                    assert_eq!(
                        &dst[d_off..d_off + n],
                        &src[so..so + n],
                        "n {n} so {so} d {d_off}"
                    );
                    assert!(dst[..d_off].iter().all(|&b| b == 0xAA));
                    assert!(dst[d_off + n..].iter().all(|&b| b == 0xAA));
                }
            }
        }
    }

    /// The AVX2 build itself, from 32 bytes on (below `WIDE_MIN` too).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_build_copies_exactly() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("skipped: this CPU has no AVX2");
            return;
        }
        let src: Vec<u8> = (0..1200).map(|i| (i * 13 + 1) as u8).collect();
        for n in (32..300).chain([511, 512, 1000, 1100]) {
            for so in [0, 3, 32, 47] {
                for d_off in [0, 1, 31, 32, 33] {
                    let mut dst = vec![0x55u8; n + 80];
                    // SAFETY: AVX2 is present (checked above); `n >= 32`;
                    // `dst[d_off..d_off + n]` is inside `dst`, distinct
                    // from `src`.
                    unsafe { copy_avx2(dst.as_mut_ptr().add(d_off), &src[so..so + n]) };
                    assert_eq!(
                        &dst[d_off..d_off + n],
                        &src[so..so + n],
                        "n {n} so {so} d {d_off}"
                    );
                    assert!(dst[..d_off].iter().all(|&b| b == 0x55));
                    assert!(dst[d_off + n..].iter().all(|&b| b == 0x55));
                }
            }
        }
    }
}
