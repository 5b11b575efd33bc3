//! Strict validation over the token index: the fast path of
//! [`super::validate`].
//!
//! [`scan::scan_tokens`] emits, besides the structurals and opening quotes,
//! the first byte of every scalar token. Every gap between two emitted
//! offsets is then whitespace, the inside of a string, or the rest of one
//! scalar token, so the grammar is a walk over the first bytes of the
//! tokens alone, with no gap to measure and no closing quote to find:
//! - a string is one token (`"`); a key is `"` followed by the token `:`;
//! - a scalar token is checked where it starts ([`scalar_end`]), and the
//!   byte where it ends must be one that ends a token (whitespace, a
//!   structural or `"`);
//! - each container kind has its own loop for "after a value", so an
//!   array's elements and an object's members each run through one short
//!   sequence of predictable branches.
//!
//! The answer is only "certainly valid" or "not known to be": the walk
//! gives up on any error, and also on nesting deeper than its inline stack,
//! and [`super::validate`] then runs the exact path, which finds the error
//! (and its offset) as before. Only acceptance has to be exact: the walk
//! accepts exactly the documents the strict grammar accepts, up to the
//! nesting limit.

use super::check_strings;
use crate::decode::number::scalar_end;
use crate::scan::{self, Scan};

/// Containers nested deeper than this are left to the exact path.
const STACK: usize = 256;

/// The bytes that may follow a scalar token: whitespace, structurals and
/// `"` (which opens a string, then rejected by the grammar).
static ENDS_TOKEN: [bool; 256] = {
    let mut t = [false; 256];
    let chars = *b" \t\n\r{}[]:,\"";
    let mut i = 0;
    while i < chars.len() {
        t[chars[i] as usize] = true;
        i += 1;
    }
    t
};

/// Whether `input` is certainly valid JSON (strict, nesting at most
/// `max_depth`); `false` means "run the exact check".
pub(super) fn valid(input: &[u8], max_depth: usize) -> bool {
    let mut scan = Scan::default();
    match scan::scan_tokens(input, &mut scan) {
        Some(Ok(())) => {}
        _ => return false,
    }
    if scan.first_control.is_some() {
        return false;
    }
    walk(input, &scan.structurals, max_depth)
        && check_strings(input, &scan.escapes, None, scan.non_ascii).is_ok()
}

/// The grammar walk, compiled for AVX2 when the CPU has it (as
/// [`super::walk`] is: the number masks take one vector step).
fn walk(input: &[u8], s: &[u32], max_depth: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() {
        /// # Safety
        ///
        /// The CPU must support AVX2, BMI1, BMI2, LZCNT and POPCNT.
        #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
        unsafe fn walk_avx2(input: &[u8], s: &[u32], max_depth: usize) -> bool {
            walk_impl(input, s, max_depth)
        }
        // SAFETY: `has_avx2` checked every feature `walk_avx2` enables.
        return unsafe { walk_avx2(input, s, max_depth) };
    }
    walk_impl(input, s, max_depth)
}

/// Whether a valid scalar token (number or literal) starts at `p` and ends
/// at a byte that ends tokens (or at the end of input).
#[inline(always)]
fn scalar_ok(input: &[u8], p: usize) -> bool {
    match scalar_end(input, p) {
        Some(e) => input.get(e).is_none_or(|&b| ENDS_TOKEN[b as usize]),
        None => false,
    }
}

/// The kinds of the enclosing container.
const TOP: u8 = 0;
const ARRAY: u8 = 1;
const OBJECT: u8 = 2;

#[inline(always)]
fn walk_impl(input: &[u8], s: &[u32], max_depth: usize) -> bool {
    let last = s.len() - 1;
    // The first byte of token `k`; `None` at the sentinel.
    let tok = |k: usize| input.get(s[k] as usize).copied();
    let max_depth = max_depth.min(STACK);
    let mut stack = [TOP; STACK];
    let mut depth = 0usize;
    let mut kind = TOP;
    let mut k = 0usize;
    'value: loop {
        // --- a value at token k ---
        match tok(k) {
            Some(b'"') => k += 1,
            Some(open @ (b'{' | b'[')) => {
                if depth >= max_depth {
                    return false;
                }
                stack[depth] = kind;
                depth += 1;
                k += 1;
                if open == b'{' {
                    kind = OBJECT;
                    match tok(k) {
                        Some(b'}') => {
                            k += 1;
                            depth -= 1;
                            kind = stack[depth];
                        }
                        Some(b'"') if tok(k + 1) == Some(b':') => {
                            k += 2;
                            continue 'value;
                        }
                        _ => return false,
                    }
                } else {
                    kind = ARRAY;
                    if tok(k) == Some(b']') {
                        k += 1;
                        depth -= 1;
                        kind = stack[depth];
                    } else {
                        continue 'value;
                    }
                }
            }
            Some(_) if scalar_ok(input, s[k] as usize) => k += 1,
            _ => return false,
        }
        // --- after a value: token k must continue or close `kind` ---
        loop {
            if kind == ARRAY {
                loop {
                    match tok(k) {
                        Some(b',') => {
                            k += 1;
                            // Elements that are strings or scalars stay here.
                            match tok(k) {
                                Some(b'"') => k += 1,
                                Some(b'{' | b'[') => continue 'value,
                                Some(_) if scalar_ok(input, s[k] as usize) => k += 1,
                                _ => return false,
                            }
                        }
                        Some(b']') => {
                            k += 1;
                            depth -= 1;
                            kind = stack[depth];
                            break;
                        }
                        _ => return false,
                    }
                }
            } else if kind == OBJECT {
                loop {
                    match tok(k) {
                        Some(b',') => {
                            if tok(k + 1) != Some(b'"') || tok(k + 2) != Some(b':') {
                                return false;
                            }
                            k += 3;
                            // Members whose values are strings or scalars
                            // stay here.
                            match tok(k) {
                                Some(b'"') => k += 1,
                                Some(b'{' | b'[') => continue 'value,
                                Some(_) if scalar_ok(input, s[k] as usize) => k += 1,
                                _ => return false,
                            }
                        }
                        Some(b'}') => {
                            k += 1;
                            depth -= 1;
                            kind = stack[depth];
                            break;
                        }
                        _ => return false,
                    }
                }
            } else {
                return k == last;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_files_are_valid() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/data/jsonexamples");
        for name in [
            "twitter.json",
            "citm_catalog.json",
            "canada.json",
            "marine_ik.json",
        ] {
            let input = std::fs::read(dir.join(name)).unwrap();
            let mut scan = Scan::default();
            assert!(
                matches!(scan::scan_tokens(&input, &mut scan), Some(Ok(()))),
                "{name}"
            );
            assert!(scan.first_control.is_none());
            assert!(walk(&input, &scan.structurals, 1024), "{name}");
            assert!(valid(&input, 1024), "{name}");
        }
    }
}
