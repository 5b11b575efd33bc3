//! Stage-1 throughput per backend: the structural scan alone, in GB/s
//! (median of rounds, input in cache, one `Scan` reused), next to a memcpy of
//! the same bytes.
//!
//! `cargo run --release --no-default-features --example scan_bench [filter]`
//!
//! Columns: memcpy of the input into a preallocated buffer; each available
//! backend reusing one `Scan`; the best backend with a new `Scan` per call
//! (as `Index::build` does).
//!
//! Inputs: twitter, citm_catalog and canada from
//! `../shared/data/jsonexamples` (skipped when absent) and a synthetic ~1 MB
//! chat-completion request (one short text part, one base64 image part).
//! Each input is placed 64-byte aligned and also at +16 (what malloc and
//! CPython hand out), since SIMD loads that straddle cache lines cost more.

use qjson::scan::{scan_with, Backend, Scan};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

/// Median seconds per call of `f`, calibrated to ~20 ms per round.
fn median_secs(mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    f();
    let once = t.elapsed().as_secs_f64().max(1e-7);
    let iters = ((0.02 / once) as usize).clamp(1, 1_000_000);
    for _ in 0..iters {
        f(); // warm up
    }
    let mut rounds: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed().as_secs_f64() / iters as f64
        })
        .collect();
    rounds.sort_by(|a, b| a.total_cmp(b));
    rounds[rounds.len() / 2]
}

/// A copy of `data` starting `offset` bytes past a 64-byte boundary. Returns
/// the backing buffer and the start index.
fn placed(data: &[u8], offset: usize) -> (Vec<u8>, usize) {
    let mut buf = vec![0u8; data.len() + 128];
    let start = (64 - buf.as_ptr() as usize % 64) % 64 + offset;
    buf[start..start + data.len()].copy_from_slice(data);
    (buf, start)
}

/// A chat-completion request of about `image_bytes` of base64 image data.
fn chat_payload(image_bytes: usize) -> Vec<u8> {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut b64 = Vec::with_capacity(image_bytes);
    while b64.len() < image_bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        b64.push(B64[(state >> 58) as usize]);
    }
    let text = "Describe this picture in detail: the objects, the colours, the light, \
                and anything unusual. Then say what time of day it probably is and why. \
                Keep the answer under two hundred words, use plain English, and do not \
                speculate beyond what is visible in the image itself, please. Thank you!";
    let mut v = Vec::with_capacity(image_bytes + 512);
    v.extend_from_slice(
        br#"{"model": "gpt-4o", "temperature": 0.7, "max_tokens": 512, "messages": [{"role": "user", "content": [{"type": "text", "text": ""#,
    );
    v.extend_from_slice(text.as_bytes());
    v.extend_from_slice(
        br#""}, {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,"#,
    );
    v.extend_from_slice(&b64);
    v.extend_from_slice(br#"", "detail": "high"}}]}]}"#);
    v
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/jsonexamples");
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for file in ["twitter.json", "citm_catalog.json", "canada.json"] {
        match std::fs::read(dir.join(file)) {
            Ok(data) => inputs.push((file.to_string(), data)),
            Err(_) => println!("{file}: skipped (not found under {})", dir.display()),
        }
    }
    inputs.push(("chat-1MB (synthetic)".to_string(), chat_payload(1 << 20)));

    let backends = Backend::available();
    print!("{:<22} {:>5} {:>9}", "input", "align", "memcpy");
    for b in &backends {
        print!(" {:>9}", b.name());
    }
    println!(" {:>9}   (GB/s; structurals)", "new Scan");
    for (name, data) in &inputs {
        if !name.contains(&filter) {
            continue;
        }
        for offset in [0usize, 16] {
            let (buf, start) = placed(data, offset);
            let input = &buf[start..start + data.len()];
            let gbps = |secs: f64| input.len() as f64 / secs / 1e9;

            let mut dst = vec![0u8; input.len()];
            let memcpy = gbps(median_secs(|| {
                dst.copy_from_slice(black_box(input));
                black_box(&mut dst);
            }));
            print!("{name:<22} {:>5} {memcpy:>9.2}", format!("+{offset}"));

            let mut structurals = 0;
            for &b in &backends {
                let mut scan = Scan::default();
                scan_with(b, input, &mut scan).unwrap().unwrap();
                structurals = scan.structurals.len();
                let secs = median_secs(|| {
                    scan_with(b, black_box(input), &mut scan).unwrap().unwrap();
                });
                print!(" {:>9.2}", gbps(secs));
            }
            // What `Index::build` pays: the best backend with a fresh `Scan`
            // (allocation and growth included).
            let secs = median_secs(|| {
                let mut scan = Scan::default();
                scan_with(backends[0], black_box(input), &mut scan)
                    .unwrap()
                    .unwrap();
                black_box(&scan);
            });
            println!(" {:>9.2}   {structurals}", gbps(secs));
        }
    }
}
