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

#[cfg(not(feature = "abi3"))]
use crate::decode::string::{
    find_backslash, unescape_validated, validated_escape, validated_escape_swar,
};
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
/// A text of at most 16 bytes, all ASCII, takes [`short_ascii`] first
/// (inline: no call, no census).
///
/// # Safety
/// The interpreter must be attached; `text` is valid UTF-8.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
pub(crate) unsafe fn new_str_utf8(text: &[u8]) -> *mut ffi::PyObject {
    // SAFETY: as the caller guarantees.
    unsafe { short_ascii::<false>(text).unwrap_or_else(|| new_str_census(text)) }
}

/// [`new_str_utf8`] past its short ASCII case: the census, then the copy
/// or decode.
///
/// # Safety
/// The interpreter must be attached; `text` is valid UTF-8.
#[cfg(not(feature = "abi3"))]
#[inline(never)]
pub(crate) unsafe fn new_str_census(text: &[u8]) -> *mut ffi::PyObject {
    let (chars, maxchar, _) = census::<false>(text);
    // SAFETY: as the caller guarantees; the census is `text`'s.
    unsafe { new_str_counted(text, chars, maxchar) }
}

/// The ASCII `str` of `text` when it has at most 16 bytes, all ASCII (and,
/// with `BACKSLASH`, none a backslash: a JSON string body that needs no
/// unescaping): `Some` of a new reference, or of null with an exception
/// set; `None` for any other text, which then needs the [`census`].
///
/// The common short key or value costs no loop: two overlapping loads of
/// the widest size that fits (8 bytes from 8 on, 4 from 4, else the first,
/// middle and last byte), all inside `text`, are tested at once (the high
/// bit of every byte; with `BACKSLASH`, a zero byte of the words xor
/// `'\\'` in each: the bytes the short cases leave zero xor to `0x5C`,
/// never zero), and the same values are stored into the new string (the
/// second store ends at its end). No read past `text`: no padding needed.
///
/// # Safety
/// The interpreter must be attached.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
pub(crate) unsafe fn short_ascii<const BACKSLASH: bool>(text: &[u8]) -> Option<*mut ffi::PyObject> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let n = text.len();
    if n > 16 {
        return None;
    }
    let s = text.as_ptr();
    // SAFETY: every load is inside `text` (`n` bytes): the second of each
    // pair ends at `n`; the byte case reads indices below `n`.
    let (a, b) = unsafe {
        if n >= 8 {
            (
                s.cast::<u64>().read_unaligned(),
                s.add(n - 8).cast::<u64>().read_unaligned(),
            )
        } else if n >= 4 {
            (
                u64::from(s.cast::<u32>().read_unaligned()),
                u64::from(s.add(n - 4).cast::<u32>().read_unaligned()),
            )
        } else if n > 0 {
            let w = u64::from(*s) | u64::from(*s.add(n / 2)) << 8 | u64::from(*s.add(n - 1)) << 16;
            (w, w)
        } else {
            (0, 0)
        }
    };
    if (a | b) & HIGH != 0 {
        return None;
    }
    if BACKSLASH {
        let zero = |w: u64| {
            let x = w ^ (ONES * u64::from(b'\\'));
            x.wrapping_sub(ONES) & !x & HIGH
        };
        if zero(a) | zero(b) != 0 {
            return None;
        }
    }
    // SAFETY: the interpreter is attached.
    let p = unsafe { ffi::PyUnicode_New(n as ffi::Py_ssize_t, 127) };
    if p.is_null() {
        return Some(p);
    }
    // SAFETY: `p` is a new compact ASCII string of `n` bytes, seen by no
    // one else yet; every store lies inside its data (the second of each
    // pair ends at `n`), and stores the bytes of `text` at their places.
    unsafe {
        let d = ascii_data(p);
        if n >= 8 {
            d.cast::<u64>().write_unaligned(a);
            d.add(n - 8).cast::<u64>().write_unaligned(b);
        } else if n >= 4 {
            d.cast::<u32>().write_unaligned(a as u32);
            d.add(n - 4).cast::<u32>().write_unaligned(b as u32);
        } else if n > 0 {
            *d = a as u8;
            *d.add(n / 2) = (a >> 8) as u8;
            *d.add(n - 1) = (a >> 16) as u8;
        }
    }
    Some(p)
}

/// A `str` of the string body `body` of a strictly validated document
/// that holds a backslash (a new reference, or null with an exception
/// set), whose raw bytes' [`census`] is `(chars, maxchar)`: made without
/// an unescaped copy. The census of the text it unescapes to follows from
/// the raw one (every byte of an escape is ASCII, counted as one
/// character each): each escape ([`find_backslash`], 8 bytes a step, and
/// [`validated_escape`]) takes back all but one of its bytes and raises
/// `maxchar` to its character's width. The `str` is then made at its
/// final size and width and written once ([`write_ascii_unescaped`],
/// [`write_unescaped`]): the body is read three times (census, escapes,
/// writing), where unescaping into a buffer first read it, or its copy,
/// four. (The lazy reads' path; `loads`, whose escaped strings are mostly
/// ASCII, unescapes into its scratch buffer: measured cheaper there.)
///
/// # Safety
/// The interpreter must be attached; `body` is a validated string body
/// (valid UTF-8, every escape well formed) and `(chars, maxchar)` the
/// census of its bytes.
#[cfg(not(feature = "abi3"))]
#[inline(never)]
pub(crate) unsafe fn new_str_escaped(
    body: &[u8],
    chars: usize,
    maxchar: u32,
) -> *mut ffi::PyObject {
    let (chars, maxchar) = unescaped_census(body, chars, maxchar);
    // SAFETY: the interpreter is attached.
    let p = unsafe { ffi::PyUnicode_New(chars as ffi::Py_ssize_t, maxchar as ffi::Py_UCS4) };
    if p.is_null() {
        return p;
    }
    // SAFETY: `p` is a new compact string of `chars` characters whose
    // width `PyUnicode_New` chose from `maxchar` (1 byte up to 0xFF, 2 up
    // to 0xFFFF, else 4), seen by no one else yet; the slices cover exactly
    // its data, and every character written (the body's, its escapes') is
    // below `maxchar`'s width.
    unsafe {
        if maxchar == 0x7F {
            write_ascii_unescaped(body, ascii_data(p), chars);
            return p;
        }
        let data = ffi::PyUnicode_DATA(p);
        match maxchar {
            0xFF => write_unescaped(
                body,
                std::slice::from_raw_parts_mut(data.cast::<u8>(), chars),
            ),
            0xFFFF => write_unescaped(
                body,
                std::slice::from_raw_parts_mut(data.cast::<u16>(), chars),
            ),
            _ => write_unescaped(
                body,
                std::slice::from_raw_parts_mut(data.cast::<u32>(), chars),
            ),
        }
    }
    p
}

/// A `str` of the string body `input[start..end]` of a strictly validated
/// ASCII document that holds escapes, whose backslashes stage 1 recorded:
/// `escapes` are the escape offsets from the body's first one on (those
/// past `end` belong to later strings). A new reference, or null with an
/// exception set. (The escaped strings of `loads` and `loads_many` in ASCII
/// input.)
///
/// The escapes are read once, at the offsets stage 1 found (no search
/// for backslashes): each one's character and length go to `scratch` (8
/// bytes per escape: offset, character, length), its width into
/// `maxchar`, and all but one of its bytes off the body's length (the
/// count of characters: the input is ASCII); a `\u` high surrogate spans
/// its low one, whose own offset is skipped. The `str` is then made at its
/// final size and width and written once: the runs between escapes copied
/// (an ASCII `str`) or widened ([`decode_utf8`]), each escape's character
/// from `scratch`. A body beyond ASCII with an escape every few bytes
/// goes to [`new_str_wide`] instead. Unescaping into a UTF-8 buffer first,
/// then checking and copying (or counting and decoding) that, read the
/// text three times, and encoded every `\uXXXX` as UTF-8 only to decode it
/// again (twitterescaped.json: 32k `\u` escapes; gsoc-2018.json: long
/// texts with a few).
///
/// # Safety
/// The interpreter must be attached; the input is ASCII and
/// `input[start..end]` a validated string body (every escape well
/// formed); `escapes` are stage 1's offsets of its escapes (every
/// backslash that starts one, in order, the first at or after `start`).
#[cfg(not(feature = "abi3"))]
#[inline(never)]
pub(crate) unsafe fn new_str_escapes(
    input: &[u8],
    start: usize,
    end: usize,
    escapes: &[u32],
    scratch: &mut Vec<u8>,
) -> *mut ffi::PyObject {
    // At most one escape per two bytes of the body, and no more than
    // stage 1 recorded from here on: 8 bytes each. (Sized by the escapes
    // too: a long body with one escape must not cost four times its
    // length in zeroed scratch. Grown, never cleared: every entry read
    // below was written first.)
    let need = ((end - start) / 2).min(escapes.len()) * 8 + 8;
    if scratch.len() < need {
        scratch.resize(need, 0);
    }
    let (mut k, mut shrink, mut bits, mut past) = (0usize, 0usize, 0u32, start);
    for &e in escapes {
        let e = e as usize;
        if e >= end {
            break;
        }
        if e < past {
            // The low half of a surrogate pair read with its high half.
            continue;
        }
        let (cp, len) = validated_escape_swar(input, e);
        // A body beyond ASCII with at least one escape per 16 bytes (the
        // `len / 16`-th escape from its first still inside it) goes to the
        // one-pass writer; long text with a few escapes stays here (its
        // runs decoded straight into the `str`, not widened and narrowed).
        if cp > 0x7F
            && escapes
                .get((end - start) / 16)
                .is_some_and(|&x| (x as usize) < end)
        {
            // SAFETY: as the caller guarantees.
            return unsafe { new_str_wide(input, start, end, escapes, scratch) };
        }
        shrink += len - 1;
        // The widths' bounds are powers of two: their OR says the widest.
        bits |= cp;
        past = e + len;
        let entry = e as u64 | u64::from(cp) << 32 | (len as u64) << 56;
        scratch[k..k + 8].copy_from_slice(&entry.to_le_bytes());
        k += 8;
    }
    let wide = width(bits);
    // (`saturating`: a body that was not validated gives a wrong count,
    // never an overflow; the writers' slices stay bounded.)
    let chars = (end - start).saturating_sub(shrink);
    let maxchar = wide;
    // SAFETY: the interpreter is attached.
    let p = unsafe { ffi::PyUnicode_New(chars as ffi::Py_ssize_t, maxchar as ffi::Py_UCS4) };
    if p.is_null() {
        return p;
    }
    let entries = scratch[..k].chunks_exact(8).map(|c| {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        (
            w as u32 as usize,
            (w >> 32) as u32 & 0xFF_FFFF,
            (w >> 56) as usize,
        )
    });
    // SAFETY: `p` is a new compact string of `chars` characters whose
    // width `PyUnicode_New` chose from `maxchar` (1 byte up to 0xFF, 2 up
    // to 0xFFFF, else 4), seen by no one else yet; the slices cover exactly
    // its data, and every character written (the runs', the escapes') is
    // at most `maxchar`. An ASCII string's runs are ASCII: copied.
    unsafe {
        if maxchar == 0x7F {
            let dst = std::slice::from_raw_parts_mut(ascii_data(p), chars);
            let (mut from, mut o) = (start, 0);
            for (e, cp, len) in entries {
                let run = &input[from..e];
                let out = &mut dst[o..o + run.len() + 1];
                copy_short(run, out.as_mut_ptr());
                out[run.len()] = cp as u8;
                o += run.len() + 1;
                from = e + len;
            }
            let run = &input[from..end];
            let out = &mut dst[o..o + run.len()];
            copy_short(run, out.as_mut_ptr());
            return p;
        }
        let data = ffi::PyUnicode_DATA(p);
        match maxchar {
            0xFF => write_escapes(
                input,
                start..end,
                entries,
                std::slice::from_raw_parts_mut(data.cast::<u8>(), chars),
            ),
            0xFFFF => write_escapes(
                input,
                start..end,
                entries,
                std::slice::from_raw_parts_mut(data.cast::<u16>(), chars),
            ),
            _ => write_escapes(
                input,
                start..end,
                entries,
                std::slice::from_raw_parts_mut(data.cast::<u32>(), chars),
            ),
        }
    }
    p
}

/// [`new_str_escapes`] of a body with an escape beyond ASCII (`\u00e9`,
/// `\u65e5`: twitterescaped.json's text, an escape every six bytes):
/// one pass writes every character into `scratch`, one `u32` each (the runs
/// between escapes decoded, [`decode_utf8`]; each escape read once,
/// [`validated_escape_swar`]); the OR of the characters gives the width
/// (its bounds are powers of two), and the `str` is made at its final
/// size and filled by narrowing them (a loop the compiler vectorises).
/// Cheaper per escape than the two passes over recorded escapes, whose
/// runs are mostly empty here.
///
/// # Safety
/// As for [`new_str_escapes`].
#[cfg(not(feature = "abi3"))]
#[inline(never)]
unsafe fn new_str_wide(
    input: &[u8],
    start: usize,
    end: usize,
    escapes: &[u32],
    scratch: &mut Vec<u8>,
) -> *mut ffi::PyObject {
    // At most one character per byte, 4 bytes each, plus 3 for the
    // alignment. (Grown, never cleared: every unit read below was written
    // first.)
    let n = end - start;
    if scratch.len() < 4 * n + 3 {
        scratch.resize(4 * n + 3, 0);
    }
    // SAFETY: every bit pattern is a valid `u32`.
    let (_, units, _) = unsafe { scratch.align_to_mut::<u32>() };
    // The aligned middle of `4n + 3` bytes holds `n` units in practice,
    // but `align_to_mut` does not promise it: without them, the body is
    // unescaped and counted instead (the same `str`).
    let Some(out) = units.get_mut(..n) else {
        let text = unescape_validated(&input[start..end], scratch);
        // SAFETY: as the caller guarantees; a validated body unescapes to
        // valid UTF-8.
        return unsafe { new_str_census(text) };
    };
    let (mut j, mut from) = (0usize, start);
    for &e in escapes {
        let e = e as usize;
        if e >= end {
            break;
        }
        if e < from {
            // The low half of a surrogate pair read with its high half.
            continue;
        }
        if from < e {
            j += decode_utf8(&input[from..e], &mut out[j..]);
        }
        let (cp, len) = validated_escape_swar(input, e);
        out[j] = cp;
        j += 1;
        from = e + len;
    }
    if from < end {
        j += decode_utf8(&input[from..end], &mut out[j..]);
    }
    let text = &out[..j];
    let maxchar = width(text.iter().fold(0, |a, &c| a | c));
    // SAFETY: the interpreter is attached.
    let p = unsafe { ffi::PyUnicode_New(j as ffi::Py_ssize_t, maxchar as ffi::Py_UCS4) };
    if p.is_null() {
        return p;
    }
    // SAFETY: `p` is a new compact string of `j` characters whose width
    // `PyUnicode_New` chose from `maxchar` (1 byte up to 0xFF, 2 up to
    // 0xFFFF, else 4), seen by no one else yet; the slices cover exactly
    // its data, and every character of `text` fits that width.
    unsafe {
        let data = ffi::PyUnicode_DATA(p);
        match maxchar {
            0x7F | 0xFF => {
                let d = std::slice::from_raw_parts_mut(data.cast::<u8>(), j);
                for (d, &c) in d.iter_mut().zip(text) {
                    *d = c as u8;
                }
            }
            0xFFFF => {
                let d = std::slice::from_raw_parts_mut(data.cast::<u16>(), j);
                for (d, &c) in d.iter_mut().zip(text) {
                    *d = c as u16;
                }
            }
            _ => std::slice::from_raw_parts_mut(data.cast::<u32>(), j).copy_from_slice(text),
        }
    }
    p
}

/// [`new_str_escapes`]' writer for strings wider than ASCII: the runs of
/// `input[body]` between the escapes `entries` (offset, character,
/// length) decoded ([`decode_utf8`]), each escape's character stored.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn write_escapes<T: TryFrom<u32> + From<u8> + Copy>(
    input: &[u8],
    body: std::ops::Range<usize>,
    entries: impl Iterator<Item = (usize, u32, usize)>,
    out: &mut [T],
) {
    let (mut from, mut j) = (body.start, 0);
    for (e, cp, len) in entries {
        // (Escapes back to back, `\u65e5\u672c`, leave no run between.)
        if from < e {
            j += decode_utf8(&input[from..e], &mut out[j..]);
        }
        out[j] = T::try_from(cp).ok().expect("unit wide enough");
        j += 1;
        from = e + len;
    }
    decode_utf8(&input[from..body.end], &mut out[j..]);
}

/// The census of the text the validated string body `body` unescapes to,
/// from its bytes' census `(chars, maxchar)` (see [`new_str_escaped`]).
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn unescaped_census(body: &[u8], mut chars: usize, mut maxchar: u32) -> (usize, u32) {
    let mut i = find_backslash(body, 0);
    while i < body.len() {
        let (cp, len) = validated_escape(body, i);
        // (`saturating`: a body that was not validated gives a wrong
        // count, never an overflow; the writer's slices stay bounded.)
        chars = chars.saturating_sub(len - 1);
        maxchar = maxchar.max(width(cp));
        i = find_backslash(body, i + len);
    }
    (chars, maxchar)
}

/// [`write_unescaped`] of a body that unescapes to ASCII, into the
/// `chars` bytes at `dst`: the runs between escapes copied whole
/// ([`copy_short`]), each escape written as its byte.
///
/// # Safety
/// `dst` is valid for `chars` bytes of writes, `body` a validated body
/// whose unescaped text is ASCII and `chars` bytes long.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
unsafe fn write_ascii_unescaped(body: &[u8], dst: *mut u8, chars: usize) {
    let (mut i, mut o) = (0, 0);
    loop {
        let b = find_backslash(body, i);
        let run = &body[i..b];
        if o + run.len() > chars {
            return;
        }
        // SAFETY: `dst[o..o + run.len()]` is inside the `chars` bytes
        // (checked just above), and cannot overlap the input.
        unsafe { copy_short(run, dst.add(o)) };
        o += run.len();
        if b >= body.len() || o >= chars {
            return;
        }
        let (cp, len) = validated_escape(body, b);
        // SAFETY: `o < chars`, as just checked.
        unsafe { *dst.add(o) = cp as u8 };
        o += 1;
        i = b + len;
        if i >= body.len() {
            return;
        }
    }
}

/// The `maxchar` `PyUnicode_New` needs for the code point `cp`.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn width(cp: u32) -> u32 {
    match cp {
        0..=0x7F => 0x7F,
        0x80..=0xFF => 0xFF,
        0x100..=0xFFFF => 0xFFFF,
        _ => 0x10FFFF,
    }
}

/// Write what the validated string body `body` unescapes to into `out`,
/// one unit per character (`out` has exactly one unit per character, and
/// each unit type is wide enough for all of them, as for [`decode_utf8`]):
/// the runs between escapes are decoded ([`decode_utf8`]), each escape
/// written as its one character.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn write_unescaped<T: TryFrom<u32> + From<u8> + Copy>(body: &[u8], out: &mut [T]) {
    let (mut i, mut j) = (0, 0);
    loop {
        let b = find_backslash(body, i);
        j += decode_utf8(&body[i..b], &mut out[j..]);
        if b >= body.len() {
            return;
        }
        let (cp, len) = validated_escape(body, b);
        out[j] = T::try_from(cp).ok().expect("unit wide enough");
        j += 1;
        i = b + len;
        if i >= body.len() {
            return;
        }
    }
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
        };
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

/// Decode valid UTF-8 `text` into `out`, one unit per character, and
/// return how many were written; `out` has at least one unit per
/// character and each unit type is wide enough for every character (`TryFrom` cannot fail then).
/// Only for valid UTF-8 (every caller passes checked text): a malformed
/// text never writes out of bounds nor loops (where it cannot move on, a
/// stray continuation byte or a sequence cut by the end, it panics), but
/// may give wrong characters. Eight ASCII bytes in a
/// row (most of the text, in most non-ASCII strings) are widened at once:
/// they are eight characters, so `out` has room for them. Other characters
/// come in runs of one length (a CJK text is 3-byte sequences, Cyrillic or
/// Greek 2-byte ones): after a sequence of 2 or 3 bytes, the next lead byte
/// is tested for the same length first, without trying the 8-byte ASCII
/// step or the other lengths (twitter.json's strings: about 0.6x the
/// instructions of a loop that tried them for every character).
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn decode_utf8<T: TryFrom<u32> + From<u8> + Copy>(text: &[u8], out: &mut [T]) -> usize {
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
            // A run of 2-byte sequences (lead bytes 110xxxxx): four at
            // once while 8 bytes are four of them (each little-endian pair
            // `b0 | b1 << 8` matches `110xxxxx 10yyyyyy` under the mask
            // 0xC0E0), the characters `(b0 & 0x1F) << 6 | (b1 & 0x3F)`
            // made in the four 16-bit lanes of one word (Cyrillic, Greek:
            // repeat.json's names), then one at a time.
            let at = i;
            while let Some(run) = text.get(i..i + 8) {
                let mut a = [0u8; 8];
                a.copy_from_slice(run);
                let w = u64::from_le_bytes(a);
                if w & 0xC0E0_C0E0_C0E0_C0E0 != 0x80C0_80C0_80C0_80C0 {
                    break;
                }
                let lanes = (w & 0x001F_001F_001F_001F) << 6 | (w >> 8) & 0x003F_003F_003F_003F;
                let o: &mut [T; 4] = (&mut out[j..j + 4]).try_into().expect("4 units");
                for (k, o) in o.iter_mut().enumerate() {
                    *o = unit((lanes >> (16 * k)) as u32 & 0xFFFF);
                }
                i += 8;
                j += 4;
            }
            while let Some(&[b0, b1]) = text.get(i..i + 2) {
                if b0 & 0xE0 != 0xC0 {
                    break;
                }
                out[j] = unit((b0 as u32 & 0x1F) << 6 | (b1 as u32 & 0x3F));
                i += 2;
                j += 1;
            }
            // Valid text always moves on here; a stray continuation byte
            // or a lead byte cut by the end (text wrongly passed as valid)
            // would loop forever: fail loudly instead.
            assert!(i > at, "decode_utf8: not UTF-8 at byte {at}");
        } else if b < 0xF0 {
            // A run of 3-byte sequences (lead bytes 1110xxxx).
            let at = i;
            while let Some(&[b0, b1, b2]) = text.get(i..i + 3) {
                if b0 & 0xF0 != 0xE0 {
                    break;
                }
                out[j] =
                    unit((b0 as u32 & 0x0F) << 12 | (b1 as u32 & 0x3F) << 6 | (b2 as u32 & 0x3F));
                i += 3;
                j += 1;
            }
            assert!(i > at, "decode_utf8: not UTF-8 at byte {at}");
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
    j
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
    use super::{census, decode_utf8, unescaped_census};

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

    /// Escaped bodies of every kind, at every offset around the word
    /// steps and width boundaries: the census of the unescaped text and
    /// the text written in place agree with the checking decoder.
    #[test]
    fn unescaped_census_and_writer() {
        let escapes = [
            r"\/",
            r"\\",
            r#"\""#,
            r"\n",
            r"\b",
            r"\f",
            r"\r",
            r"\t",
            r"\u0041",
            r"\u00e9",
            r"\u00FF",
            r"\u0100",
            r"\u07ff",
            r"\u30c0",
            r"\uFFFF",
            r"\ud83d\ude00",
            r"\uDBFF\uDFFF",
            r"\u0000",
        ];
        let plain = ["", "x", "é", "中", "😀", "abcdefghij"];
        for pre in 0..18 {
            for e in escapes {
                for e2 in ["", r"\t", r"\u00e9", r"\ud83d\ude00"] {
                    for p in plain {
                        for tail in ["", "y", "yyyyyyyyy"] {
                            let body = format!("{}{p}{e}{e2}{tail}", "x".repeat(pre));
                            let want = crate::decode::string::decode_str(body.as_bytes(), 0)
                                .expect("valid escapes");
                            let (c, m, bs) = census::<true>(body.as_bytes());
                            assert!(bs);
                            let (chars, maxchar) = unescaped_census(body.as_bytes(), c, m);
                            let max = want.chars().map(u32::from).max().unwrap_or(0);
                            assert_eq!(chars, want.chars().count(), "{body}");
                            assert_eq!(maxchar, super::width(max), "{body}");
                            let mut out = vec![0u32; chars];
                            super::write_unescaped(body.as_bytes(), &mut out);
                            let got: Vec<u32> = want.chars().map(u32::from).collect();
                            assert_eq!(out, got, "{body}");
                            if maxchar == 0x7F {
                                let mut ascii = vec![0u8; chars];
                                // SAFETY: `ascii` holds `chars` bytes.
                                unsafe {
                                    super::write_ascii_unescaped(
                                        body.as_bytes(),
                                        ascii.as_mut_ptr(),
                                        chars,
                                    )
                                };
                                assert!(ascii.iter().map(|&b| u32::from(b)).eq(got.clone()));
                            }
                            if maxchar <= 0xFF {
                                let mut out8 = vec![0u8; chars];
                                super::write_unescaped(body.as_bytes(), &mut out8);
                                assert!(out8.iter().map(|&b| u32::from(b)).eq(got), "{body}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Bytes that are not UTF-8 (a caller's mistake: `decode_utf8` takes
    /// validated text) never make it loop: where it cannot move on (a
    /// stray continuation byte, a sequence cut short by the end) it
    /// panics. Each runs on its own thread, so a loop fails the test
    /// instead of hanging it.
    #[test]
    fn decode_utf8_fails_loudly_on_invalid_bytes() {
        // (bytes, whether it panics; a lead byte before ASCII reads on)
        let cases: [(&[u8], bool); 8] = [
            (b"a\x80b", true),
            (b"abcdefgh\x80abcdefgh", true),
            (b"\xC3a", false),
            (b"\xBF", true),
            (b"ab\xC3", true),
            (b"\xC3", true),
            (b"x\xE2\x82", true),
            (b"\xE2", true),
        ];
        for (t, cut) in cases {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let got = std::panic::catch_unwind(|| {
                    let mut out = vec![0u32; t.len() + 8];
                    decode_utf8(t, &mut out)
                });
                let _ = tx.send(got.is_err());
            });
            let panicked = rx
                .recv_timeout(std::time::Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("decode_utf8 did not return on {t:?}"));
            assert_eq!(panicked, cut, "{t:?}");
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
            "ÀÉÎÕÜàéîõüÿ",
            "ЖжЖжЖжЖжЖ",
            "Юрий Титов",
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
                    // The narrower units, where they fit (as `decode_into`
                    // picks them).
                    if max <= 0xFFFF {
                        let mut out = vec![0u16; t.chars().count()];
                        decode_utf8(t.as_bytes(), &mut out);
                        let want: Vec<u16> = t.chars().map(|c| u32::from(c) as u16).collect();
                        assert_eq!(out, want, "{t:?}");
                    }
                    if max <= 0xFF {
                        let mut out = vec![0u8; t.chars().count()];
                        decode_utf8(t.as_bytes(), &mut out);
                        let want: Vec<u8> = t.chars().map(|c| u32::from(c) as u8).collect();
                        assert_eq!(out, want, "{t:?}");
                    }
                }
            }
        }
    }
}

/// A new list with room for `len` (at least 1) items and none yet, to be
/// filled in order by [`list_push`] (a new reference, or null with an
/// exception set).
///
/// `PyList_New(len)` zeroes its item array (`PyMem_Calloc`: a `memset`
/// call and calloc's own path, ~60 instructions for the two-element
/// coordinate pairs of canada.json); here the list is made empty (no item
/// array) and given an uninitialised array from `PyMem_Malloc`, the
/// allocator `list_dealloc` frees it with, of `len` slots (`allocated`).
/// Its size counts the items written so far, so the list is always valid:
/// the collector's traversal and `list_dealloc` (after an error mid-fill)
/// see only written slots. Free-threaded builds lay the array out with a
/// header of their own and take `PyList_New`; so does the `abi3` build.
///
/// # Safety
/// The interpreter must be attached; `len >= 1`.
#[inline(always)]
pub(super) unsafe fn new_list_for(len: usize) -> *mut ffi::PyObject {
    #[cfg(not(any(feature = "abi3", Py_GIL_DISABLED)))]
    // SAFETY: the interpreter is attached; `list` is a new, empty exact
    // list (size 0, no item array), so its `PyListObject` fields are ours
    // to set: the array is from the allocator `list_dealloc` frees with,
    // and `allocated` is its capacity, as `list_resize` keeps it.
    unsafe {
        let list = ffi::PyList_New(0);
        if list.is_null() {
            return list;
        }
        let items = ffi::PyMem_Malloc(len * std::mem::size_of::<*mut ffi::PyObject>());
        if items.is_null() {
            ffi::Py_DECREF(list);
            return ffi::PyErr_NoMemory();
        }
        let l = list.cast::<ffi::PyListObject>();
        (*l).ob_item = items.cast();
        (*l).allocated = len as ffi::Py_ssize_t;
        list
    }
    // SAFETY: the interpreter is attached.
    #[cfg(any(feature = "abi3", Py_GIL_DISABLED))]
    unsafe {
        ffi::PyList_New(len as ffi::Py_ssize_t)
    }
}

/// Store `v` (stolen) as item `i` of a list from [`new_list_for`] that
/// holds `i` items: the list then holds `i + 1`.
///
/// # Safety
/// The interpreter must be attached; `list` came from `new_list_for(len)`
/// with `i < len`, and items `0..i` were pushed, in order.
#[inline(always)]
pub(super) unsafe fn list_push(
    list: *mut ffi::PyObject,
    i: ffi::Py_ssize_t,
    v: *mut ffi::PyObject,
) {
    #[cfg(not(any(feature = "abi3", Py_GIL_DISABLED)))]
    // SAFETY: slot `i` is inside the array of `allocated` slots (`i <
    // len`); the size grows to cover it once it holds `v`.
    unsafe {
        ffi::PyList_SET_ITEM(list, i, v);
        (*list.cast::<ffi::PyVarObject>()).ob_size = i + 1;
    }
    // SAFETY: as the caller guarantees: `PyList_New(len)` left slot `i`
    // empty and in range.
    #[cfg(any(feature = "abi3", Py_GIL_DISABLED))]
    unsafe {
        list_set(list, i, v)
    }
}

/// A new `float` of `v` (a new reference, or null with an exception set).
///
/// In a `loads` the float free list is soon empty (every float made
/// stays alive), so `PyFloat_FromDouble` takes `PyObject_Malloc` and then
/// `_Py_NewReference`, a call of its own: ~30 instructions per number
/// around the allocation, a sixth of a coordinate's cost in canada.json.
/// Up to 3.12, in release builds of the interpreter, `PyFloat_FromDouble`
/// of fresh memory amounts to that allocation (which tracemalloc traces)
/// and a header of reference count 1 and type `float`, written here in
/// one store of the whole object. From 3.13 `_Py_NewReference` also
/// reports to the reference tracer (`PyRefTracer`), debug builds count
/// references, free-threaded ones lay the header out differently: those
/// and `abi3` call `PyFloat_FromDouble`, and so does Windows, where
/// pyo3's build configuration cannot tell a debug interpreter (python_d)
/// before 3.13.
///
/// # Safety
/// The interpreter must be attached.
#[inline(always)]
pub(super) unsafe fn new_float(v: f64) -> *mut ffi::PyObject {
    #[cfg(not(any(
        feature = "abi3",
        Py_3_13,
        Py_GIL_DISABLED,
        PyPy,
        GraalPy,
        py_sys_config = "Py_REF_DEBUG",
        py_sys_config = "Py_TRACE_REFS",
        windows
    )))]
    // SAFETY: the interpreter is attached; `p`, when not null, is a fresh
    // block from the object allocator (`float_dealloc` gives it back
    // there, or to the free list) of the size of a float, initialised
    // whole by one write before anyone sees it.
    unsafe {
        let p = ffi::PyObject_Malloc(std::mem::size_of::<ffi::PyFloatObject>())
            .cast::<ffi::PyFloatObject>();
        if p.is_null() {
            return ffi::PyErr_NoMemory();
        }
        p.write(ffi::PyFloatObject {
            ob_base: ffi::PyObject {
                ob_type: std::ptr::addr_of_mut!(ffi::PyFloat_Type),
                ..ffi::PyObject_HEAD_INIT
            },
            ob_fval: v,
        });
        p.cast()
    }
    #[cfg(any(
        feature = "abi3",
        Py_3_13,
        Py_GIL_DISABLED,
        PyPy,
        GraalPy,
        py_sys_config = "Py_REF_DEBUG",
        py_sys_config = "Py_TRACE_REFS",
        windows
    ))]
    // SAFETY: the interpreter is attached.
    unsafe {
        ffi::PyFloat_FromDouble(v)
    }
}
