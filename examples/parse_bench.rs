//! Rust-level throughput of a strict parse plus one read, per backend.
//!
//! `cargo run --release --no-default-features --example parse_bench`
//!
//! For each file: strict `Index::build` then one read of a late field
//! (twitter.json: `search_metadata.count`), in GB/s (median of rounds).
//! Force a backend with QJSON_BACKEND=scalar|avx2|avx512.

use qjson::{Doc, Index, Options};
use std::path::PathBuf;
use std::time::Instant;

fn median_gbps(bytes: usize, mut f: impl FnMut()) -> f64 {
    // Calibrate to ~20 ms per round.
    let t = Instant::now();
    f();
    let once = t.elapsed().as_secs_f64().max(1e-7);
    let iters = ((0.02 / once) as usize).clamp(1, 100_000);
    let mut rounds: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed().as_secs_f64() / iters as f64
        })
        .collect();
    rounds.sort_by(|a, b| a.partial_cmp(b).unwrap());
    bytes as f64 / rounds[rounds.len() / 2] / 1e9
}

fn main() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/jsonexamples");
    println!("backend: {}", qjson::scan::active_backend().name());
    for (file, path) in [
        ("twitter.json", "search_metadata.count"),
        ("citm_catalog.json", "venueNames"),
        ("canada.json", "type"),
        ("github_events.json", "[-1].id"),
    ] {
        let Ok(input) = std::fs::read(data.join(file)) else {
            println!("{file}: skipped (not found under {})", data.display());
            continue;
        };
        let opts = Options::default();
        let gbps = median_gbps(input.len(), || {
            let index = Index::build(&input, &opts).unwrap();
            let doc = Doc::new(&input, &index);
            std::hint::black_box(doc.find(doc.root(), path).unwrap());
        });
        let lazy = Options { lazy: true, ..opts };
        let lazy_gbps = median_gbps(input.len(), || {
            let index = Index::build(&input, &lazy).unwrap();
            let doc = Doc::new(&input, &index);
            std::hint::black_box(doc.find(doc.root(), path).unwrap());
        });
        let index = Index::build(&input, &opts).unwrap();
        println!(
            "{file:>20}: strict parse + get {path}: {gbps:.2} GB/s; lazy: {lazy_gbps:.2} GB/s; index {:.2}x input",
            index.heap_bytes() as f64 / input.len() as f64
        );
    }
}
