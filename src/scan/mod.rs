//! Stage 1: the structural index.
//!
//! One pass over the input finds every structural character outside strings
//! (`{ } [ ] : ,`) and the opening quote of every string, and records their
//! byte offsets as `u32`s, followed by a sentinel equal to `input.len()`.
//! Closing quotes are not recorded: a string always ends right before the
//! next structural (after optional whitespace), so stage 2 finds it by
//! stepping back from there.
//!
//! The same pass also collects what strict validation needs without a second
//! read of string bytes:
//! - `escapes`: the offset of every backslash that begins an escape sequence
//!   (always inside a string; the validation scan leaves them out when it
//!   found them all plain);
//! - `first_control`: the first raw control byte (< 0x20) inside a string;
//! - `non_ascii`: whether any byte >= 0x80 occurs (only then does stage 2 run
//!   a UTF-8 validator over the input);
//! - `escapes_valid` (token scan only): whether every escape is certainly
//!   valid and no surrogate (then stage 2 need not look at the escapes).
//! - `utf8_valid` (AVX-512 token scan only): whether the input is certainly
//!   valid UTF-8 (then stage 2 runs no validator of its own).
//!
//! Semantics every backend must reproduce exactly (the scalar backend is the
//! oracle, and property tests compare every other backend against it):
//! - A backslash escapes the next byte wherever it occurs; an escaped `"` is
//!   not a quote. A backslash outside a string is an error
//!   (`StrayBackslash`, offset of the first such backslash).
//! - Unescaped quotes alternate open/close. If the input ends inside a
//!   string the result is `UnterminatedString` at the opening quote, unless a
//!   stray backslash was found first.
//! - A string spans from its opening quote (inclusive) to its closing quote
//!   (exclusive); `first_control` looks at bytes in that span.
//!
//! Backends: the portable scalar loop ([`scalar`]), and one block algorithm
//! (`block.rs`, simdjson's stage 1, explained there) written once against a
//! small vector trait (`vector.rs`: `Block64`) and instantiated per instruction
//! set: AVX-512 (BW, VBMI, VBMI2), AVX2 (both with PCLMULQDQ) and NEON (with
//! PMULL). The backend is [`crate::cpu`]'s level, chosen once for every
//! kernel (`QJSON_BACKEND=scalar|avx2|avx512|neon` forces it); the choice is
//! cached in a function pointer. [`scan_with`] runs a given backend, for
//! tests and benchmarks.

#![deny(unsafe_op_in_unsafe_fn)]

use crate::error::{Error, ErrorKind};
use std::sync::atomic::{AtomicPtr, Ordering};

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod block;
#[cfg(target_arch = "aarch64")]
mod neon;
pub mod scalar;
#[cfg(target_arch = "x86_64")]
mod utf8_avx512;
mod vector;

/// The output of stage 1. Reuse one across scans to keep its allocations.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Scan {
    /// Offsets of structurals outside strings and of opening quotes, then `input.len()`.
    pub structurals: Vec<u32>,
    /// Offsets of backslashes that begin an escape sequence (left empty
    /// by the validation scan, `scan_tokens_valid`, when `escapes_valid`).
    pub escapes: Vec<u32>,
    /// Offset of the first control byte (< 0x20) inside a string, if any.
    pub first_control: Option<u32>,
    /// Whether any byte >= 0x80 occurs anywhere in the input.
    pub non_ascii: bool,
    /// The token scan only (`scan_tokens`): every escape is a valid
    /// one-letter escape (`\" \\ \/ \b \f \n \r \t`) or a `\uXXXX` of a
    /// character outside the surrogates, so the escapes need no further
    /// check. `false` also means "not known" (and always so from [`scan`]).
    pub escapes_valid: bool,
    /// The token scan with the AVX-512 backend only: the bytes scanned (the
    /// whole input, or the line) are valid UTF-8, checked block by block in
    /// the scan (then stage 2 needs no pass of its own). `false` also
    /// means "not known" (other backends, [`scan`]); an input that is not
    /// valid leaves it `false`, and stage 2's exact check finds the error.
    pub utf8_valid: bool,
}

impl Scan {
    pub fn clear(&mut self) {
        self.structurals.clear();
        self.escapes.clear();
        self.first_control = None;
        self.non_ascii = false;
        self.escapes_valid = false;
        self.utf8_valid = false;
    }
}

pub use crate::cpu::Backend;

/// The entry point of `backend`'s scan, if it is compiled for this target.
/// Calling it is only sound when the backend is [`Backend::available`].
fn scan_fn(backend: Backend) -> Option<ScanFn> {
    match backend {
        Backend::Scalar => Some(scalar_scan as ScanFn),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => Some(avx512::scan as ScanFn),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => Some(avx2::scan as ScanFn),
        #[cfg(target_arch = "aarch64")]
        Backend::Neon => Some(neon::scan as ScanFn),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}
/// A backend's entry point.
///
/// # Safety
///
/// Only call it when the CPU supports the backend (see [`Backend::available`]).
type ScanFn = unsafe fn(&[u8], &mut Scan) -> Result<(), Error>;

/// The scalar backend with the [`ScanFn`] signature.
///
/// # Safety
///
/// Always safe to call; `unsafe` only to match [`ScanFn`].
unsafe fn scalar_scan(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    scalar::scan(input, out)
}

static ACTIVE: AtomicPtr<()> = AtomicPtr::new(detect_and_scan as *mut ());

/// The backend chosen for this process (detected once, or forced by
/// `QJSON_BACKEND`; see [`crate::cpu`]).
pub fn active_backend() -> Backend {
    crate::cpu::kernels().backend
}

/// The first value of [`ACTIVE`]: picks the backend, caches its entry point
/// and runs it.
///
/// # Safety
///
/// Always safe to call; `unsafe` only to match [`ScanFn`].
unsafe fn detect_and_scan(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    let f = scan_fn(active_backend()).unwrap_or(scalar_scan as ScanFn);
    ACTIVE.store(f as *mut (), Ordering::Relaxed);
    // SAFETY: `active_backend` only returns backends in
    // `Backend::available()`, which this CPU supports.
    unsafe { f(input, out) }
}

/// Scan `input` with the active backend, replacing the contents of `out`.
pub fn scan(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    check_len(input)?;
    let p = ACTIVE.load(Ordering::Relaxed);
    // SAFETY: ACTIVE only ever holds `detect_and_scan` or a `ScanFn` stored by
    // it, and every such pointer was cast from a function of type `ScanFn`.
    let f: ScanFn = unsafe { std::mem::transmute::<*mut (), ScanFn>(p) };
    // SAFETY: that function is `detect_and_scan` or the entry point of a
    // backend this CPU supports (chosen from `Backend::available()`).
    unsafe { f(input, out) }
}

/// Whether `input` is valid UTF-8 (the check strict validation runs over
/// an input with a byte >= 0x80): with the AVX-512 backend, its own
/// validator (`utf8_avx512.rs`: 64 bytes a step); else simdutf8's.
/// Public for the fuzz target `utf8`, which compares it with
/// `std::str::from_utf8`.
pub fn utf8_valid(input: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if matches!(active_backend(), Backend::Avx512) {
        // SAFETY: `active_backend` returns the AVX-512 backend only when
        // the CPU has its features, AVX-512F and BW among them.
        return unsafe { utf8_avx512::valid(input) };
    }
    simdutf8::basic::from_utf8(input).is_ok()
}

/// The token scan, for validation: [`scan`], plus the offset of the first
/// byte of every scalar token (a maximal run of bytes outside strings that
/// are not whitespace, structural or `"`), in order among the others. Then
/// every gap between two emitted offsets is whitespace, or the inside of a
/// string (from an opening quote up to its closing quote), or the rest of a
/// scalar token. `None` when the active backend has no token scan (it
/// exists for AVX-512 and AVX2); the caller then uses [`scan`].
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
pub(crate) fn scan_tokens(input: &[u8], out: &mut Scan) -> Option<Result<(), Error>> {
    if let Err(e) = check_len(input) {
        return Some(Err(e));
    }
    match active_backend() {
        // SAFETY: `active_backend` only returns backends this CPU supports.
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => Some(unsafe { avx512::scan_tokens(input, out) }),
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => Some(unsafe { avx2::scan_tokens(input, out) }),
        _ => None,
    }
}

/// [`scan_tokens`] for strict validation alone: `out.escapes` may be left
/// empty when `out.escapes_valid` (no escape needs a look); it holds every
/// escape otherwise, as after [`scan_tokens`]. With the AVX-512 backend
/// (which checks the escapes in the scan) the escapes' offsets are then
/// found only when some escape is not plain, after the scan; the AVX2
/// backend runs [`scan_tokens`].
pub(crate) fn scan_tokens_valid(input: &[u8], out: &mut Scan) -> Option<Result<(), Error>> {
    #[cfg(target_arch = "x86_64")]
    if active_backend() == Backend::Avx512 {
        if let Err(e) = check_len(input) {
            return Some(Err(e));
        }
        // SAFETY: `active_backend` only returns backends this CPU supports.
        return Some(unsafe { avx512::scan_tokens_valid(input, out) });
    }
    scan_tokens(input, out)
}

/// [`scan_tokens`] of the first line of `input` (for a stream of one
/// document per line): the scan stops at the first newline outside strings
/// instead of a separate search for it. `Some(Ok(Some(p)))`: `input[p]` is
/// that newline and `out` holds the tokens of `input[..p]`, then `p`;
/// `Some(Ok(None))`: no newline outside strings (`out` as [`scan_tokens`]
/// leaves it for the whole input); `Some(Err(_))`: stage 1 failed before
/// the newline, or found a control byte inside a string there (an error
/// `UnterminatedString` only at the input's end, when there is no such
/// newline); `None` as for [`scan_tokens`]. (`out.non_ascii` may also
/// count the bytes after the newline in its 64-byte block.)
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
pub(crate) fn scan_tokens_line(
    input: &[u8],
    out: &mut Scan,
) -> Option<Result<Option<usize>, Error>> {
    if let Err(e) = check_len(input) {
        return Some(Err(e));
    }
    match active_backend() {
        // SAFETY: `active_backend` only returns backends this CPU supports.
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => Some(unsafe { avx512::scan_tokens_line(input, out) }),
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => Some(unsafe { avx2::scan_tokens_line(input, out) }),
        _ => None,
    }
}

/// `scan_tokens_line` with a given backend (for tests). `None` if this
/// CPU cannot run it, or the backend has no token scan.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
pub fn scan_tokens_line_with(
    backend: Backend,
    input: &[u8],
    out: &mut Scan,
) -> Option<Result<Option<usize>, Error>> {
    if !Backend::available().contains(&backend) {
        return None;
    }
    check_len(input).ok()?;
    match backend {
        // SAFETY: the backend is available on this CPU (checked above).
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => Some(unsafe { avx512::scan_tokens_line(input, out) }),
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => Some(unsafe { avx2::scan_tokens_line(input, out) }),
        _ => None,
    }
}

/// `scan_tokens` with a given backend (for tests). `None` if this CPU
/// cannot run it, or the backend has no token scan.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
pub fn scan_tokens_with(
    backend: Backend,
    input: &[u8],
    out: &mut Scan,
) -> Option<Result<(), Error>> {
    if !Backend::available().contains(&backend) {
        return None;
    }
    check_len(input).ok()?;
    match backend {
        // SAFETY: the backend is available on this CPU (checked above).
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => Some(unsafe { avx512::scan_tokens(input, out) }),
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => Some(unsafe { avx2::scan_tokens(input, out) }),
        _ => None,
    }
}

/// Scan with a given backend (for tests and benchmarks). `None` if this CPU
/// cannot run it.
pub fn scan_with(backend: Backend, input: &[u8], out: &mut Scan) -> Option<Result<(), Error>> {
    if !Backend::available().contains(&backend) {
        return None;
    }
    let f = scan_fn(backend)?;
    // SAFETY: the backend is available on this CPU (checked above).
    Some(check_len(input).and_then(|()| unsafe { f(input, out) }))
}

#[inline]
fn check_len(input: &[u8]) -> Result<(), Error> {
    if input.len() >= u32::MAX as usize {
        return Err(Error::new(ErrorKind::TooLarge, u32::MAX as usize));
    }
    Ok(())
}
