//! Lexing helpers shared by the index (stage 2) and the readers: whitespace,
//! and where a string or a scalar token ends.
//!
//! JSON whitespace is four bytes (space, `\n`, `\r`, `\t`). Pretty-printed
//! documents have a newline and indentation in most gaps, compact ones none:
//! each helper tests the common one-byte cases directly and otherwise takes
//! 16 bytes per SSE2 step (a mask of the non-whitespace bytes, then a bit
//! scan). A string's end is found from the index, not by reading the string:
//! stage 1 guarantees that between a closing quote and the next structural
//! there is only whitespace (or garbage, which is an error), so stepping back
//! from the next structural lands on the quote ([`string_close`]).
//!
//! This module depends on nothing else in the crate, so the index and the
//! readers both use it without importing each other.

#[inline]
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// A bit mask of the bytes of `input[p..p + 16]` that are not whitespace
/// (bit `i` for byte `p + i`), or `None` when fewer than 16 bytes remain.
/// Pretty-printed JSON has a newline and indentation in most gaps: one step
/// covers both.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn non_ws16(input: &[u8], p: usize) -> Option<u32> {
    use std::arch::x86_64::*;
    let chunk = input.get(p..p + 16)?;
    // SAFETY: `chunk` is 16 readable bytes and `loadu` has no alignment
    // requirement; SSE2 is part of the x86_64 baseline, so every intrinsic
    // here is available.
    let ws = unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
        _mm_movemask_epi8(_mm_or_si128(
            _mm_or_si128(eq(b' '), eq(b'\n')),
            _mm_or_si128(eq(b'\r'), eq(b'\t')),
        ))
    };
    Some(!ws as u32 & 0xFFFF)
}

/// A bit mask of the bytes of `input[p..p + 16]` that are not whitespace
/// (bit `i` for byte `p + i`), or `None` when fewer than 16 bytes remain.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn non_ws16(input: &[u8], p: usize) -> Option<u32> {
    non_ws16_portable(input, p)
}

/// [`non_ws16`] without SIMD (the reference in tests).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn non_ws16_portable(input: &[u8], p: usize) -> Option<u32> {
    let chunk = input.get(p..p + 16)?;
    let mut m = 0u32;
    for (i, &b) in chunk.iter().enumerate() {
        m |= (!is_ws(b) as u32) << i;
    }
    Some(m)
}

/// The first non-whitespace byte at or after `p` (or `input.len()`), 16
/// bytes a step.
#[inline]
pub(crate) fn skip_ws(input: &[u8], mut p: usize) -> usize {
    // Compact JSON: most gaps are empty.
    match input.get(p) {
        Some(&b) if !is_ws(b) => return p,
        None => return p,
        _ => {}
    }
    // Pretty JSON's gap after a colon: one space (the 16-byte step costs
    // its constants' loads and a mask for it).
    if let Some(&b) = input.get(p + 1) {
        if !is_ws(b) {
            return p + 1;
        }
    }
    while let Some(m) = non_ws16(input, p) {
        if m != 0 {
            return p + m.trailing_zeros() as usize;
        }
        p += 16;
    }
    while p < input.len() && is_ws(input[p]) {
        p += 1;
    }
    p
}

/// The end (exclusive) of the token that ends before `end`, trailing
/// whitespace removed, 16 bytes a step.
#[inline]
pub(crate) fn trim_end(input: &[u8], start: usize, mut end: usize) -> usize {
    while end >= start + 16 {
        let Some(m) = non_ws16(input, end - 16) else {
            break;
        };
        if m != 0 {
            return end - (m.leading_zeros() - 16) as usize;
        }
        end -= 16;
    }
    while end > start && is_ws(input[end - 1]) {
        end -= 1;
    }
    end
}

/// The closing quote of the string whose opening quote is structural `k`.
///
/// Stage 1 guarantees there is no backslash and no unescaped quote outside
/// strings, so between a string's closing quote and the next structural
/// there is no `"` at all: stepping back from the next structural over
/// whitespace lands on the closing quote, or the input has garbage after the
/// string (`None`).
#[inline(always)]
pub(crate) fn string_close(input: &[u8], s: &[u32], k: usize) -> Option<usize> {
    let open = s[k] as usize;
    let next = s[k + 1] as usize;
    // Usually (keys, and values before `,`) the quote is right there.
    if next > open + 1 && input[next - 1] == b'"' {
        return Some(next - 1);
    }
    // Else, often, one space (`"key" : value`).
    if next > open + 2 && input[next - 1] == b' ' && input[next - 2] == b'"' {
        return Some(next - 2);
    }
    string_close_after_ws(input, open, next)
}

/// [`string_close`] when whitespace (or garbage) precedes the next structural.
#[inline(never)]
fn string_close_after_ws(input: &[u8], open: usize, next: usize) -> Option<usize> {
    let end = trim_end(input, open + 1, next);
    if end > open + 1 && input[end - 1] == b'"' {
        Some(end - 1)
    } else {
        None
    }
}

/// The first non-whitespace byte at or after `p`, knowing that a structural
/// sits at `next` (so the answer is at most `next`): most gaps are empty.
#[inline(always)]
pub(crate) fn gap_end(input: &[u8], p: usize, next: usize) -> usize {
    if p == next {
        return p;
    }
    // No whitespace at all (a scalar right after the structural), or one
    // space (after `:` in pretty-printed JSON).
    match input[p] {
        b'!'..=b'\xff' => return p,
        b' ' if input.get(p + 1).is_some_and(|&b| b > b' ') => return p + 1,
        _ => {}
    }
    skip_ws(input, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_masks_and_skips() {
        let bytes: Vec<u8> = (0..=255u8).collect();
        let mut seed = 7u32;
        for round in 0..2000 {
            // Mostly whitespace, some of everything else.
            let input: Vec<u8> = (0..48)
                .map(|_| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    let r = (seed >> 16) as usize;
                    if r.is_multiple_of(4) {
                        bytes[r % 256]
                    } else {
                        b" \n\r\t"[r % 4]
                    }
                })
                .collect();
            for p in 0..input.len() {
                assert_eq!(non_ws16(&input, p), non_ws16_portable(&input, p));
                let want = (p..input.len())
                    .find(|&i| !is_ws(input[i]))
                    .unwrap_or(input.len());
                assert_eq!(skip_ws(&input, p), want, "round {round} p {p}");
                for next in p..=input.len() {
                    if next == input.len() || !is_ws(input[next]) {
                        assert_eq!(gap_end(&input, p, next), want.min(next));
                    }
                }
                let mut end = input.len();
                while end > p && is_ws(input[end - 1]) {
                    end -= 1;
                }
                assert_eq!(trim_end(&input, p, input.len()), end);
            }
        }
    }
}
