//! Encoding JSON text: string escaping and number formatting, writing into
//! one growing buffer ([`Buf`]: a `Vec<u8>`, or a host's own, such as the
//! Python `bytes` object `dumps` returns).
//!
//! - [`escape`]: a JSON string literal from UTF-8 text. Blocks of 16 bytes
//!   are copied and tested for `"`, `\` and control bytes in one step (SSE2
//!   on x86_64, a SWAR word elsewhere); only the bytes that need it are
//!   escaped, with the short forms (`\n`, `\"`, ...) where JSON has one and
//!   `\u00XX` otherwise. Everything else, DEL and non-ASCII included, is
//!   copied as it is, so valid UTF-8 in gives valid UTF-8 out.
//! - [`number`]: integers written in place two digits at a time, floats
//!   with `zmij` (shortest text that round-trips; the same text as orjson:
//!   `1.0`, `1e+16`, `1e-7`, `0.00001`, `-0.0`).
//! - [`cjson`]: string literals as lua-cjson writes them (`/` and DEL
//!   escaped too), for the Lua encoder.
//! - [`copy`]: long runs of original bytes into the output (an edited
//!   document's untouched ranges), with stores aligned to the destination.
//!
//! The host layers (Python's `dumps`) decide what to write; this module only
//! knows bytes.

pub mod cjson;
pub mod copy;
pub mod escape;
pub mod number;

pub use escape::{
    write_medium_str_raw, write_short_str_raw, write_str, MEDIUM_STR, MEDIUM_STR_MAX_LEN,
    SHORT_STR_MAX_LEN,
};

/// A growable byte buffer the writers append to.
///
/// # Safety
/// The writers reserve room once per value and then store through
/// [`Buf::as_mut_ptr`] without further checks, so an implementation must
/// guarantee: `as_mut_ptr()` points to `len() + spare()` writable bytes
/// (until the next `grow` or `set_len`), the first `len()` of them
/// initialized; and after `grow(n)`, `spare() >= n`.
pub unsafe trait Buf {
    /// Bytes written.
    fn len(&self) -> usize;
    /// Whether nothing was written.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Room left past [`Buf::len`].
    fn spare(&self) -> usize;
    /// Make room for at least `additional` more bytes (the slow path of
    /// [`Buf::reserve`]).
    fn grow(&mut self, additional: usize);
    /// The start of the buffer (valid until the next growth).
    fn as_mut_ptr(&mut self) -> *mut u8;
    /// Set the number of bytes written.
    ///
    /// # Safety
    /// `len` must be within the capacity and every byte below it written.
    unsafe fn set_len(&mut self, len: usize);

    /// Make room for at least `additional` more bytes.
    #[inline(always)]
    fn reserve(&mut self, additional: usize) {
        if self.spare() < additional {
            self.grow(additional);
        }
    }

    /// Append one byte.
    #[inline(always)]
    fn push(&mut self, b: u8) {
        self.reserve(1);
        let len = self.len();
        // SAFETY: room for one byte was reserved; `set_len` covers it.
        unsafe {
            *self.as_mut_ptr().add(len) = b;
            self.set_len(len + 1);
        }
    }

    /// Append `s`.
    #[inline(always)]
    fn extend_from_slice(&mut self, s: &[u8]) {
        self.reserve(s.len());
        let len = self.len();
        // SAFETY: room for `s` was reserved (it cannot overlap the spare
        // capacity, which nothing else refers to); `set_len` covers it.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), self.as_mut_ptr().add(len), s.len());
            self.set_len(len + s.len());
        }
    }

    /// Append `n` copies of `b`.
    #[inline]
    fn fill(&mut self, b: u8, n: usize) {
        self.reserve(n);
        let len = self.len();
        // SAFETY: room for `n` bytes was reserved; `set_len` covers them.
        unsafe {
            std::ptr::write_bytes(self.as_mut_ptr().add(len), b, n);
            self.set_len(len + n);
        }
    }
}

// SAFETY: a Vec's pointer covers its capacity (`len + spare`), its first
// `len` bytes initialized; `reserve(n)` leaves `capacity - len >= n` (or
// aborts).
unsafe impl Buf for Vec<u8> {
    #[inline(always)]
    fn len(&self) -> usize {
        Vec::len(self)
    }
    #[inline(always)]
    fn spare(&self) -> usize {
        self.capacity() - Vec::len(self)
    }
    #[inline]
    fn grow(&mut self, additional: usize) {
        Vec::reserve(self, additional);
    }
    #[inline(always)]
    fn as_mut_ptr(&mut self) -> *mut u8 {
        Vec::as_mut_ptr(self)
    }
    #[inline(always)]
    unsafe fn set_len(&mut self, len: usize) {
        // SAFETY: per the trait's contract.
        unsafe { Vec::set_len(self, len) }
    }
}
pub use number::{
    write_f64, write_f64_raw, write_i64, write_i64_raw, write_u64, F64_MAX_LEN, I64_MAX_LEN,
};
