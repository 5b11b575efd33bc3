//! The scalar backend: one byte at a time. Portable, simple, and the oracle
//! that every SIMD backend is tested against. See the module docs of
//! `scan` for the exact semantics.

use super::Scan;
use crate::error::{Error, ErrorKind};

pub fn scan(input: &[u8], out: &mut Scan) -> Result<(), Error> {
    out.clear();
    let mut in_string = false;
    let mut open_quote = 0usize;
    let mut i = 0usize;
    let n = input.len();
    while i < n {
        let b = input[i];
        if b >= 0x80 {
            out.non_ascii = true;
        }
        if in_string {
            match b {
                b'"' => in_string = false,
                b'\\' => {
                    out.escapes.push(i as u32);
                    // The escaped byte can be anything, including `"` or `\`.
                    if i + 1 < n {
                        let e = input[i + 1];
                        if e >= 0x80 {
                            out.non_ascii = true;
                        }
                        if e < 0x20 && out.first_control.is_none() {
                            out.first_control = Some((i + 1) as u32);
                        }
                    }
                    i += 1;
                }
                0x00..=0x1f if out.first_control.is_none() => {
                    out.first_control = Some(i as u32);
                }
                _ => {}
            }
        } else {
            match b {
                b'{' | b'}' | b'[' | b']' | b':' | b',' => out.structurals.push(i as u32),
                b'"' => {
                    out.structurals.push(i as u32);
                    in_string = true;
                    open_quote = i;
                }
                b'\\' => return Err(Error::new(ErrorKind::StrayBackslash, i)),
                _ => {}
            }
        }
        i += 1;
    }
    if in_string {
        return Err(Error::new(ErrorKind::UnterminatedString, open_quote));
    }
    out.structurals.push(n as u32);
    Ok(())
}
