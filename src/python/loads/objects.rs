//! The Python objects the builder makes, through the C API: strings
//! ([`new_str_utf8`]: counted, then decoded straight into a `str` of the
//! right width, both 8 bytes a step where they can; [`copy_short`] for
//! the bytes of ASCII ones), dicts presized to their member count
//! ([`new_dict`]) and filled with [`dict_set`], lists filled in place
//! ([`list_set`]).
//!
//! The string writer is shared with the lazy reads
//! ([`crate::python::convert`]): [`new_str_utf8`] for any valid UTF-8,
//! [`census`] with its backslash test for the bodies of a strictly
//! validated document, [`new_str_counted`] once the census is known.
//!
//! Version-specific builds use what the full API exposes (the compact
//! string layout, `_PyDict_NewPresized`, `_PyDict_SetItem_KnownHash`
//! before 3.13, `PyList_SET_ITEM`); the `abi3` build the stable calls.

use pyo3::ffi;

/// A `str` from valid UTF-8 `text` (a new reference, or null with an
/// exception set), built in place: one pass counts the characters and
/// finds the widest one ([`census`], 8 bytes a step), which gives the
/// exact width (CPython's strings must use the narrowest one: no lead byte
/// from 0xC4 on means every character is below 256, none from 0xF0 on
/// below 65536); then an ASCII text is copied ([`copy_short`]) and another
/// decoded into the string's data ([`decode_utf8`], runs of 8 ASCII bytes
/// a step). Never CPython's decoder, which would check the bytes again and
/// starts narrow and widens (and reallocates) at the first wider character.
///
/// # Safety
/// The interpreter must be attached.
#[cfg(not(feature = "abi3"))]
#[inline(never)]
pub(crate) unsafe fn new_str_utf8(text: &[u8]) -> *mut ffi::PyObject {
    let (chars, maxchar, _) = census::<false>(text);
    // SAFETY: as the caller guarantees; the census is `text`'s.
    unsafe { new_str_counted(text, chars, maxchar) }
}

/// A `str` of the valid UTF-8 `text` whose [`census`] is `chars`
/// characters, the widest needing `maxchar` (a new reference, or null with
/// an exception set). An ASCII text (`maxchar` 0x7F: then `chars` is its
/// length) is copied, any other decoded ([`decode_utf8`]).
///
/// # Safety
/// The interpreter must be attached; `(chars, maxchar)` is `text`'s census.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
pub(crate) unsafe fn new_str_counted(
    text: &[u8],
    chars: usize,
    maxchar: u32,
) -> *mut ffi::PyObject {
    // SAFETY: the interpreter is attached.
    let p = unsafe { ffi::PyUnicode_New(chars as ffi::Py_ssize_t, maxchar as ffi::Py_UCS4) };
    if p.is_null() {
        return p;
    }
    if maxchar == 0x7F {
        // SAFETY: `p` is a new compact ASCII string of `chars` bytes, which
        // is `text.len()` (no byte of `text` >= 0x80, as the census says);
        // no one else sees it before we return it.
        unsafe { copy_short(text, ascii_data(p)) };
        return p;
    }
    // SAFETY: `p` was made from the census, as the caller guarantees.
    unsafe { decode_into(p, text, chars, maxchar) };
    p
}

/// Decode `text` into the new string `p` made by `PyUnicode_New(chars,
/// maxchar)` from `text`'s census. Out of line: the ASCII copy of
/// [`new_str_counted`] stays small.
///
/// # Safety
/// `p` is that new string, seen by no one else yet; `text` is valid UTF-8
/// and `(chars, maxchar)` its census.
#[cfg(not(feature = "abi3"))]
#[inline(never)]
unsafe fn decode_into(p: *mut ffi::PyObject, text: &[u8], chars: usize, maxchar: u32) {
    // SAFETY: `p` is a new compact string of `chars` characters whose
    // width `PyUnicode_New` chose from `maxchar` (1 byte up to 0xFF, 2 up to
    // 0xFFFF, else 4), so its data holds `chars` units of that width; no
    // one else sees it before our caller returns it. The slices cover
    // exactly that.
    unsafe {
        let data = ffi::PyUnicode_DATA(p);
        match maxchar {
            0x7F | 0xFF => decode_utf8(
                text,
                std::slice::from_raw_parts_mut(data.cast::<u8>(), chars),
            ),
            0xFFFF => decode_utf8(
                text,
                std::slice::from_raw_parts_mut(data.cast::<u16>(), chars),
            ),
            _ => decode_utf8(
                text,
                std::slice::from_raw_parts_mut(data.cast::<u32>(), chars),
            ),
        }
    }
}

/// The high bit of every byte of a word.
#[cfg(not(feature = "abi3"))]
const HIGH: u64 = 0x8080_8080_8080_8080;
/// The low seven bits of every byte of a word.
#[cfg(not(feature = "abi3"))]
const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// The number of characters of valid UTF-8 `text` and the `maxchar` to
/// give `PyUnicode_New` (0x7F, 0xFF, 0xFFFF or 0x10FFFF), 8 bytes a step
/// (SWAR): characters are the bytes that do not continue a sequence
/// (continuations are `10xxxxxx`: bit 7 set, bit 6 clear, which `w & !(w
/// << 1)` finds, bit 6 of each byte landing on its bit 7); a byte `b` with
/// bit 7 set is at least `0x80 + t` when its low seven bits plus `0x80 -
/// t` carry into bit 7 (no carry crosses bytes: the sum stays below
/// 0x100). Lead bytes from 0xC4 on start characters from U+0100, from 0xF0
/// on characters beyond U+FFFF.
///
/// With `BACKSLASH`, the third result says whether `text` holds a
/// backslash (a JSON string body that needs unescaping: the count is then
/// the escaped body's, of no use), found in the same words (a zero byte of
/// `w ^ '\\'*ONES`; a borrow only sets bits above a real zero byte, so
/// "any" is exact); without it, `false`.
///
/// The last `len % 8` bytes are one more word when `text` has at least 8
/// (the word ending at the end, its bytes already counted shifted out), or
/// two overlapping halves' distinct bytes from 4: no byte loop past length
/// 3 (most strings in JSON are short).
#[cfg(not(feature = "abi3"))]
#[inline(always)]
pub(crate) fn census<const BACKSLASH: bool>(text: &[u8]) -> (usize, u32, bool) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let (mut cont, mut any, mut ge_c4, mut ge_f0, mut bs) = (0usize, 0u64, 0u64, 0u64, 0u64);
    let mut look = |w: u64| {
        // An ASCII word (most of most texts) has nothing to count.
        if w & HIGH != 0 {
            let low = w & LOW7;
            // The flags, one per byte, summed by a multiply into the top
            // byte (at most 8: no carry), not `count_ones` (a dozen
            // instructions without the `popcnt` of a baseline build).
            let flags = (w & !(w << 1) & HIGH) >> 7;
            cont += (flags.wrapping_mul(ONES) >> 56) as usize;
            any |= w;
            ge_c4 |= w & low.wrapping_add(0x3C3C_3C3C_3C3C_3C3C);
            ge_f0 |= w & low.wrapping_add(0x1010_1010_1010_1010);
        }
        if BACKSLASH {
            let x = w ^ (ONES * u64::from(b'\\'));
            bs |= x.wrapping_sub(ONES) & !x & HIGH;
        }
    };
    let n = text.len();
    let word = |i: usize| u64::from_le_bytes(text[i..i + 8].try_into().expect("8 bytes"));
    let half = |i: usize| {
        u64::from(u32::from_le_bytes(
            text[i..i + 4].try_into().expect("4 bytes"),
        ))
    };
    let mut i = 0;
    while i + 8 <= n {
        look(word(i));
        i += 8;
    }
    let rest = n - i;
    if rest != 0 {
        // Zero bytes shifted in are ASCII, no continuation, no backslash.
        if n >= 8 {
            look(word(n - 8) >> (8 * (8 - rest)));
        } else if n >= 4 {
            look(half(0) | (half(n - 4) >> (8 * (8 - n))) << 32);
        } else {
            let mut w = 0;
            for (k, &b) in text.iter().enumerate() {
                w |= u64::from(b) << (8 * k);
            }
            look(w);
        }
    }
    let maxchar = if ge_f0 & HIGH != 0 {
        0x10FFFF
    } else if ge_c4 & HIGH != 0 {
        0xFFFF
    } else if any & HIGH != 0 {
        0xFF
    } else {
        0x7F
    };
    (n - cont, maxchar, bs != 0)
}

/// Decode valid UTF-8 `text` into `out`, one unit per character; `out` has
/// exactly one unit per character and each unit type is wide enough for
/// every character (`TryFrom` cannot fail then; a malformed text would
/// panic on an index, never write out of bounds). Eight ASCII bytes in a
/// row (most of the text, in most non-ASCII strings) are widened at once:
/// they are eight characters, so `out` has room for them. Other characters
/// come in runs of one length (a CJK text is 3-byte sequences, Cyrillic or
/// Greek 2-byte ones): after a sequence of 2 or 3 bytes, the next lead byte
/// is tested for the same length first, without trying the 8-byte ASCII
/// step or the other lengths (twitter.json's strings: about 0.6x the
/// instructions of a loop that tried them for every character).
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn decode_utf8<T: TryFrom<u32> + From<u8> + Copy>(text: &[u8], out: &mut [T]) {
    let unit = |c: u32| T::try_from(c).ok().expect("unit wide enough");
    let (mut i, mut j) = (0, 0);
    while i < text.len() {
        if let Some(run) = text.get(i..i + 8) {
            let mut a = [0u8; 8];
            a.copy_from_slice(run);
            if u64::from_le_bytes(a) & HIGH == 0 {
                for (o, &b) in out[j..j + 8].iter_mut().zip(&a) {
                    *o = T::from(b);
                }
                i += 8;
                j += 8;
                continue;
            }
        }
        let b = text[i];
        if b < 0x80 {
            out[j] = T::from(b);
            i += 1;
            j += 1;
        } else if b < 0xE0 {
            // A run of 2-byte sequences (lead bytes 110xxxxx).
            while let Some(&[b0, b1]) = text.get(i..i + 2) {
                if b0 & 0xE0 != 0xC0 {
                    break;
                }
                out[j] = unit((b0 as u32 & 0x1F) << 6 | (b1 as u32 & 0x3F));
                i += 2;
                j += 1;
            }
        } else if b < 0xF0 {
            // A run of 3-byte sequences (lead bytes 1110xxxx).
            while let Some(&[b0, b1, b2]) = text.get(i..i + 3) {
                if b0 & 0xF0 != 0xE0 {
                    break;
                }
                out[j] =
                    unit((b0 as u32 & 0x0F) << 12 | (b1 as u32 & 0x3F) << 6 | (b2 as u32 & 0x3F));
                i += 3;
                j += 1;
            }
        } else {
            let s = &text[i..i + 4];
            out[j] = unit(
                (s[0] as u32 & 0x07) << 18
                    | (s[1] as u32 & 0x3F) << 12
                    | (s[2] as u32 & 0x3F) << 6
                    | (s[3] as u32 & 0x3F),
            );
            i += 4;
            j += 1;
        }
    }
}

/// The data of `p`, a new compact ASCII `str` (as `PyUnicode_New(n, 127)`
/// makes one): its characters follow its header (`PyASCIIObject`), as
/// CPython's `_PyUnicode_COMPACT_DATA` says. `PyUnicode_DATA` tests the
/// kind first (and is a function call from 3.14 on).
///
/// # Safety
/// `p` is a compact ASCII `str`.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
pub(crate) unsafe fn ascii_data(p: *mut ffi::PyObject) -> *mut u8 {
    // SAFETY: as the caller guarantees, the data lies just past the header.
    unsafe { p.cast::<ffi::PyASCIIObject>().add(1).cast::<u8>() }
}

/// Copy `src` to `dst` (non-overlapping, `src.len()` bytes writable at
/// `dst`): up to 16 bytes with two overlapping loads and stores of the
/// widest size that fits (no `memcpy` call: most strings in JSON are short,
/// and the call's dispatch costs more than their copy), longer ones with
/// `copy_nonoverlapping`.
///
/// # Safety
/// `dst` is valid for `src.len()` bytes of writes and does not overlap
/// `src`.
#[inline(always)]
pub(crate) unsafe fn copy_short(src: &[u8], dst: *mut u8) {
    let n = src.len();
    let s = src.as_ptr();
    // SAFETY: every read is inside `src` (the second load of each pair
    // ends at `n`), every write inside `dst[..n]`, as the caller guarantees.
    unsafe {
        if n > 16 {
            std::ptr::copy_nonoverlapping(s, dst, n);
        } else if n >= 8 {
            let a = s.cast::<u64>().read_unaligned();
            let b = s.add(n - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(a);
            dst.add(n - 8).cast::<u64>().write_unaligned(b);
        } else if n >= 4 {
            let a = s.cast::<u32>().read_unaligned();
            let b = s.add(n - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(a);
            dst.add(n - 4).cast::<u32>().write_unaligned(b);
        } else {
            for i in 0..n {
                *dst.add(i) = *s.add(i);
            }
        }
    }
}

/// A new dict with room for `len` members without resizing (version-specific
/// builds: `_PyDict_NewPresized`, which CPython exports for this purpose
/// and orjson and Cython use too; the stable ABI has only `PyDict_New`).
///
/// # Safety
/// The interpreter must be attached.
#[inline(always)]
pub(super) unsafe fn new_dict(len: u32) -> *mut ffi::PyObject {
    #[cfg(not(feature = "abi3"))]
    {
        extern "C" {
            fn _PyDict_NewPresized(minused: ffi::Py_ssize_t) -> *mut ffi::PyObject;
        }
        // Up to 5 members fit the smallest table anyway.
        if len > 5 {
            // SAFETY: the interpreter is attached (our caller's contract).
            return unsafe { _PyDict_NewPresized(len as ffi::Py_ssize_t) };
        }
    }
    let _ = len;
    // SAFETY: the interpreter is attached (our caller's contract).
    unsafe { ffi::PyDict_New() }
}

/// `dict[key] = v` (neither reference stolen), like `PyDict_SetItem`. On
/// version-specific builds before 3.13, a key whose `str` hash is already
/// computed (every key from the cache) goes to `_PyDict_SetItem_KnownHash`
/// with that hash, which skips `PyDict_SetItem`'s type checks and hash
/// lookup (CPython exports it for this purpose; orjson uses it too).
///
/// # Safety
/// The interpreter must be attached; `dict` is a dict and `key` an exact
/// `str` (loads only makes those).
#[inline(always)]
pub(super) unsafe fn dict_set(
    dict: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
    v: *mut ffi::PyObject,
) -> std::os::raw::c_int {
    #[cfg(not(any(feature = "abi3", Py_3_13)))]
    {
        extern "C" {
            fn _PyDict_SetItem_KnownHash(
                mp: *mut ffi::PyObject,
                key: *mut ffi::PyObject,
                item: *mut ffi::PyObject,
                hash: ffi::Py_hash_t,
            ) -> std::os::raw::c_int;
        }
        // SAFETY: `key` is a live exact `str`, so it has the compact
        // string header, whose `hash` is -1 until computed.
        let h = unsafe { (*key.cast::<ffi::PyASCIIObject>()).hash };
        if h != -1 {
            // SAFETY: as the caller guarantees; `h` is `key`'s own hash.
            return unsafe { _PyDict_SetItem_KnownHash(dict, key, v, h) };
        }
    }
    // SAFETY: as the caller guarantees.
    unsafe { ffi::PyDict_SetItem(dict, key, v) }
}

/// Store `v` (stolen) into the empty slot `i` of the fresh list `list`.
///
/// # Safety
/// The interpreter must be attached; `list` is a list whose slot `i` is in
/// range and still empty (NULL), as `PyList_New` leaves it.
#[inline(always)]
pub(super) unsafe fn list_set(list: *mut ffi::PyObject, i: ffi::Py_ssize_t, v: *mut ffi::PyObject) {
    // SAFETY: as the caller guarantees; the full API's macro writes the
    // slot directly (no type or range check, no old item to release).
    #[cfg(not(feature = "abi3"))]
    unsafe {
        ffi::PyList_SET_ITEM(list, i, v)
    }
    // SAFETY: as the caller guarantees.
    #[cfg(feature = "abi3")]
    unsafe {
        ffi::PyList_SetItem(list, i, v);
    }
}

#[cfg(all(test, not(feature = "abi3")))]
mod tests {
    use super::{census, decode_utf8};

    /// The census of every short length (the tail words) and of a
    /// backslash at every place, against a byte loop.
    #[test]
    fn census_tails_and_backslashes() {
        for n in 0..=24 {
            for at in 0..n {
                for c in [b'a', b'\\', 0x80, 0xC3, 0xE2, 0xF0] {
                    let mut t = vec![b'x'; n];
                    t[at] = c;
                    let cont = t.iter().filter(|&&b| b & 0xC0 == 0x80).count();
                    let max = *t.iter().max().unwrap_or(&0);
                    let want = match max {
                        0..=0x7F => 0x7F,
                        0x80..=0xC3 => 0xFF,
                        0xC4..=0xEF => 0xFFFF,
                        _ => 0x10FFFF,
                    };
                    let bs = t.contains(&b'\\');
                    assert_eq!(census::<true>(&t), (n - cont, want, bs), "{t:?}");
                    assert_eq!(census::<false>(&t), (n - cont, want, false), "{t:?}");
                }
            }
        }
    }

    /// Texts around every width boundary and word edge, against a count
    /// and decode by `str`'s own methods.
    #[test]
    fn census_and_decode_match_chars() {
        let pieces = [
            "a",
            "é",
            "ÿ",
            "Ā",
            "߿",
            "ࠀ",
            "中",
            "\u{ffff}",
            "😀",
            "\u{10ffff}",
            "abcdefgh",
            "日本語のテキスト",
            "Привет мир",
            "αβγ中文😀é",
        ];
        for (i, p) in pieces.iter().enumerate() {
            for q in &pieces[i..] {
                for pad in 0..10 {
                    let t = format!("{}{}{}{}", "x".repeat(pad), p, "y".repeat(9 - pad), q);
                    let max = t.chars().map(u32::from).max().unwrap_or(0);
                    let want = match max {
                        0..=0x7F => 0x7F,
                        0x80..=0xFF => 0xFF,
                        0x100..=0xFFFF => 0xFFFF,
                        _ => 0x10FFFF,
                    };
                    assert_eq!(
                        census::<true>(t.as_bytes()),
                        (t.chars().count(), want, false),
                        "{t:?}"
                    );
                    let mut out = vec![0u32; t.chars().count()];
                    decode_utf8(t.as_bytes(), &mut out);
                    assert_eq!(out, t.chars().map(u32::from).collect::<Vec<_>>(), "{t:?}");
                }
            }
        }
    }
}
