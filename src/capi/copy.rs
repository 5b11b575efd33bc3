//! A copy of input bytes into the Lua encoder's buffer, without `rep movsb`.
//!
//! The Lua encoder writes an edited document as copies of the input's
//! untouched spans between the values it encodes (`qjson.lua`'s plan
//! segments). glibc's `memcpy` copies blocks above a few KB with `rep
//! movsb`, which on AMD Zen 3 runs several times slower when the
//! destination sits a little after the source modulo a page (the
//! relative offset of the two buffers; an insertion shifts the rest of the
//! document by its length): a 100 KB Lua patch took 47 µs instead of 11 µs
//! (`GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=...` showed it), and
//! whether a run hit it depended on where the allocator and address
//! randomisation put the buffers.
//!
//! # Algorithm
//!
//! On x86-64, 64 bytes per step as four unaligned 16-byte SSE2 loads and
//! stores (SSE2 is part of x86-64: no detection), then the tail of fewer
//! than 64 bytes through `copy_nonoverlapping` (small: no `rep movsb`).
//! The loop's stores are vector intrinsics in a loop LLVM keeps (it is not
//! turned back into a `memcpy` call: `objdump` of the release build shows
//! the `movdqu` loop). Elsewhere, `copy_nonoverlapping`.

use std::ffi::c_char;

/// Copy `len` bytes from `src` to `dst`.
///
/// # Safety
/// `src` is readable and `dst` writable for `len` bytes (any pointers when
/// `len` is 0), and the two ranges do not overlap.
#[no_mangle]
pub unsafe extern "C" fn qjson_copy(dst: *mut c_char, src: *const c_char, len: usize) {
    if len == 0 {
        return;
    }
    let (mut d, mut s) = (dst.cast::<u8>(), src.cast::<u8>());
    let mut n = len;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
        while n >= 64 {
            // SAFETY: 64 bytes remain at both pointers (n >= 64, per the
            // contract); the loads and stores are unaligned ones; SSE2 is
            // in every x86-64 CPU.
            unsafe {
                let a = _mm_loadu_si128(s.cast::<__m128i>());
                let b = _mm_loadu_si128(s.add(16).cast::<__m128i>());
                let c = _mm_loadu_si128(s.add(32).cast::<__m128i>());
                let e = _mm_loadu_si128(s.add(48).cast::<__m128i>());
                _mm_storeu_si128(d.cast::<__m128i>(), a);
                _mm_storeu_si128(d.add(16).cast::<__m128i>(), b);
                _mm_storeu_si128(d.add(32).cast::<__m128i>(), c);
                _mm_storeu_si128(d.add(48).cast::<__m128i>(), e);
                s = s.add(64);
                d = d.add(64);
            }
            n -= 64;
        }
    }
    // SAFETY: `n` bytes remain at both pointers, which do not overlap (per
    // the contract).
    unsafe { std::ptr::copy_nonoverlapping(s, d, n) };
}

#[cfg(test)]
mod tests {
    use super::qjson_copy;

    #[test]
    fn copies_every_length_and_offset() {
        let src: Vec<u8> = (0..600u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in [0usize, 1, 15, 63, 64, 65, 127, 128, 200, 511] {
            for off in [0usize, 1, 7, 33] {
                let mut dst = vec![0u8; len + 70];
                // SAFETY: both ranges are inside their vectors and apart.
                unsafe {
                    qjson_copy(
                        dst.as_mut_ptr().add(off % 5).cast(),
                        src.as_ptr().add(off).cast(),
                        len,
                    )
                };
                assert_eq!(&dst[off % 5..off % 5 + len], &src[off..off + len]);
                assert!(dst[off % 5 + len..].iter().all(|&b| b == 0));
                assert!(dst[..off % 5].iter().all(|&b| b == 0));
            }
        }
    }
}
