//! The small vocabulary every SIMD backend speaks.
//!
//! The block algorithm ([`super::block`]) is written once against [`Block64`]:
//! 64 bytes of input held in registers (one AVX-512 register, two AVX2
//! registers, four NEON registers) and the handful of operations stage 1
//! needs on them. Each instruction set implements the trait in its own file
//! with the cheapest instruction sequence it has; nothing else differs.

/// The bit masks of one 64-byte block: bit `i` describes byte `i`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Masks {
    /// `"`.
    pub quote: u64,
    /// `\`.
    pub backslash: u64,
    /// `{ } [ ] : ,`.
    pub structural: u64,
    /// Bytes below 0x20.
    pub control: u64,
}

/// 64 bytes of input in SIMD registers.
///
/// Every method may use instructions of the implementing backend's
/// instruction set. Callers must only call them from code compiled with
/// those target features enabled, on a CPU that supports them (the
/// dispatcher in [`super`] checks this once before handing out a backend).
pub(crate) trait Block64: Copy {
    /// Loads 64 bytes.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads of 64 bytes; the CPU must support the
    /// backend's features.
    unsafe fn load(ptr: *const u8) -> Self;

    /// Loads the `len` bytes at `ptr` (`len < 64`: the input's last,
    /// incomplete block) followed by spaces, which are neither structural
    /// nor string-relevant. The default copies them into a block of
    /// spaces.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads of `len` bytes; the CPU must support
    /// the backend's features.
    #[inline(always)]
    unsafe fn load_tail(ptr: *const u8, len: usize) -> Self {
        let mut buf = [b' '; 64];
        // SAFETY: the caller guarantees `len` (< 64) readable bytes at
        // `ptr`; `buf` holds 64 bytes and is a separate array.
        unsafe {
            std::ptr::copy_nonoverlapping(ptr, buf.as_mut_ptr(), len.min(64));
            Self::load(buf.as_ptr())
        }
    }

    /// Classifies every byte of the block.
    ///
    /// # Safety
    ///
    /// The CPU must support the backend's features.
    unsafe fn classify(self) -> Masks;

    /// Accumulates "any byte >= 0x80": the result's [`Block64::any_high`]
    /// is true exactly when `self`'s or `other`'s is. (Its bytes are
    /// otherwise unspecified: a backend may fold `other`'s registers into
    /// one of the accumulator's, so the loop keeps fewer registers live.)
    ///
    /// # Safety
    ///
    /// The CPU must support the backend's features.
    unsafe fn or(self, other: Self) -> Self;

    /// Whether any byte has its top bit set.
    ///
    /// # Safety
    ///
    /// The CPU must support the backend's features.
    unsafe fn any_high(self) -> bool;

    /// Whether `N * 64` bytes at `ptr` hold no `"`, no `\`, no control byte
    /// and, when `ASCII`, no byte >= 0x80: a run of string content that
    /// needs no work at all. This is the hot loop for long strings, so each
    /// backend uses its shortest instruction sequence. `N` is 1, 4 or 8.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads of `N * 64` bytes; the CPU must support
    /// the backend's features.
    unsafe fn quiet<const N: usize, const ASCII: bool>(ptr: *const u8) -> bool;

    /// Prefix XOR: bit `i` of the result is the XOR of bits `0..=i` of
    /// `bits` (a carry-less multiplication by all ones).
    ///
    /// # Safety
    ///
    /// The CPU must support the backend's features.
    unsafe fn prefix_xor(bits: u64) -> u64;

    /// Writes `base + i` for every set bit `i` of `bits`, in increasing
    /// order, to `dst`; returns how many were written (the popcount).
    /// May write garbage past that count, up to [`super::block::SLACK`]
    /// entries in all.
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of `SLACK` `u32`s; the CPU must
    /// support the backend's features.
    #[inline(always)]
    unsafe fn write_offsets(dst: *mut u32, base: u32, bits: u64) -> usize {
        // SAFETY: forwarded from the caller.
        unsafe { write_offsets_tzcnt(dst, base, bits) }
    }
}

/// The portable bit-extraction loop: eight offsets at a time, unconditionally
/// (no branch per bit), then advance by the popcount.
///
/// The unconditional stores are volatile only to keep LLVM from
/// SLP-vectorizing the eight `tzcnt`s into a slower vector popcount sequence
/// (measured: about 5% slower on dense files with AVX2).
///
/// # Safety
///
/// `dst` must be valid for writes of 64 `u32`s (at most 64 are written).
#[inline(always)]
pub(crate) unsafe fn write_offsets_tzcnt(dst: *mut u32, base: u32, mut bits: u64) -> usize {
    let count = bits.count_ones() as usize;
    // SAFETY: the caller guarantees room for 64 entries, and at most 64 are
    // written (16 unconditionally, then one per remaining set bit).
    unsafe {
        for k in 0..8 {
            dst.add(k)
                .write_volatile(base.wrapping_add(bits.trailing_zeros()));
            bits &= bits.wrapping_sub(1);
        }
        if count > 8 {
            for k in 8..16 {
                dst.add(k)
                    .write_volatile(base.wrapping_add(bits.trailing_zeros()));
                bits &= bits.wrapping_sub(1);
            }
            let mut k = 16;
            while bits != 0 {
                dst.add(k).write(base.wrapping_add(bits.trailing_zeros()));
                bits &= bits.wrapping_sub(1);
                k += 1;
            }
        }
    }
    count
}

/// What the token scan (stage 1 for validation, see [`super::scan_tokens`])
/// needs beyond [`Block64`]: which bytes can be part of a scalar token
/// (number or literal).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (x86 backends only)
pub(crate) trait TokenBlock: Block64 {
    /// The UTF-8 check the token scan runs on its blocks ([`NoUtf8`]:
    /// none, stage 2 runs its own pass; AVX-512: the validator of
    /// `utf8_avx512.rs`).
    type Utf8: Utf8Check<Self>;

    /// The mask of the bytes that end a scalar token: JSON whitespace
    /// (space, `\t`, `\n`, `\r`), the structurals `{ } [ ] : ,` and `"`.
    /// Computed in the vector domain, with one mask extraction: combining
    /// the masks of [`Block64::classify`] with a separate whitespace mask
    /// made LLVM scalarize the AVX2 block byte by byte.
    ///
    /// # Safety
    ///
    /// The CPU must support the backend's features.
    unsafe fn delimiters(self) -> u64;

    /// [`Block64::classify`] and [`TokenBlock::delimiters`] of the same
    /// block at once, for backends that derive both from one lookup. The
    /// default computes them separately.
    ///
    /// # Safety
    ///
    /// The CPU must support the backend's features.
    #[inline(always)]
    unsafe fn classify_tokens(self) -> (Masks, u64) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.classify(), self.delimiters()) }
    }

    /// Whether stage 1 checks escapes with [`TokenBlock::escape_classes`]
    /// (see `block.rs`). Only AVX-512 does: on AVX2 (about 50 compares per
    /// block) it measured slower than stage 2's loop over the escapes
    /// (twitter_timeline 13.7 -> 14.1 us).
    const CHECKS_ESCAPES: bool = false;

    /// The offsets of the backslashes of `input[..to]` that begin an
    /// escape, appended to `out` (`block::escape_starts`): the cold pass of
    /// the validation scan, which writes no escapes itself. Called only
    /// when [`TokenBlock::CHECKS_ESCAPES`]; the default (for backends
    /// without the check) goes byte by byte: a backslash begins an escape,
    /// and the byte after it is escaped.
    ///
    /// # Safety
    ///
    /// `to <= input.len()`; the CPU must support the backend's features.
    unsafe fn escapes_before(input: &[u8], to: usize, out: &mut Vec<u32>) {
        let mut i = 0;
        while i < to {
            if input[i] == b'\\' {
                out.push(i as u32);
                i += 2;
            } else {
                i += 1;
            }
        }
    }

    /// The byte classes the escape check of the token scan needs (see
    /// [`EscapeMasks`]). Called only when [`TokenBlock::CHECKS_ESCAPES`],
    /// for blocks that hold an escaped byte or the hex digits of a `\u`
    /// escape. The default knows no class, so that every escape would be
    /// left to stage 2.
    ///
    /// # Safety
    ///
    /// The CPU must support the backend's features.
    #[inline(always)]
    unsafe fn escape_classes(self) -> EscapeMasks {
        EscapeMasks {
            one: 0,
            u: 0,
            hex: 0,
            d: 0,
            upper8: 0,
        }
    }
}

/// Byte classes for checking escapes in stage 1: bit `i` describes byte `i`.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (x86 backends only)
pub(crate) struct EscapeMasks {
    /// The letters of the one-letter escapes: `" \ / b f n r t`.
    pub one: u64,
    /// `u`.
    pub u: u64,
    /// Hex digits: `0-9 a-f A-F`.
    pub hex: u64,
    /// `d` or `D` (the first digit of a surrogate).
    pub d: u64,
    /// `8-9 a-f A-F` (the second digit of a surrogate).
    pub upper8: u64,
}

/// A UTF-8 validator fused into the token scan: fed every block the scan
/// reads, in order, and the blocks it skips inside long strings, so that
/// stage 2 needs no second pass over the input (see `Scan::utf8_valid`).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (x86 backends only)
pub(crate) trait Utf8Check<B>: Sized {
    /// The state before the first block.
    ///
    /// # Safety
    ///
    /// The CPU must support the backend's features.
    unsafe fn new() -> Self;

    /// Checks the next block, of which only the bytes in `keep` are the
    /// input's (the line scan's last block; the others count as ASCII).
    ///
    /// # Safety
    ///
    /// The CPU must support the backend's features.
    unsafe fn block(&mut self, block: B, keep: u64);

    /// Checks the whole blocks `ptr[from..to]` (skipped by the scan inside
    /// a long string, right after the last block given to
    /// [`Utf8Check::block`]); `ascii` if the scan knows them all ASCII.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads of `to` bytes; the CPU must support
    /// the backend's features.
    unsafe fn skipped(&mut self, ptr: *const u8, from: usize, to: usize, ascii: bool);

    /// Whether every byte seen was valid UTF-8 and no sequence is left
    /// open at the end (`false` also means "not checked").
    ///
    /// # Safety
    ///
    /// The CPU must support the backend's features.
    unsafe fn valid(&self) -> bool;
}

/// No UTF-8 check in stage 1.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // (x86 backends only)
pub(crate) struct NoUtf8;

impl<B> Utf8Check<B> for NoUtf8 {
    #[inline(always)]
    unsafe fn new() -> Self {
        NoUtf8
    }

    #[inline(always)]
    unsafe fn block(&mut self, _: B, _: u64) {}

    #[inline(always)]
    unsafe fn skipped(&mut self, _: *const u8, _: usize, _: usize, _: bool) {}

    #[inline(always)]
    unsafe fn valid(&self) -> bool {
        false
    }
}
