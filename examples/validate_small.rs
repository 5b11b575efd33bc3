//! Rust-level time per call of `index::validate` on the small
//! jsonexamples files (ns per call and MB/s, median of rounds), and their
//! aggregate (total bytes / total time), as `benchmarks/corpus.py` counts it.
//!
//! `cargo run --release --no-default-features --example validate_small [filter] [count]`
//! (`count`: a fixed number of calls per file, untimed, for instruction
//! counts under valgrind).

use qjson::Options;
use std::path::PathBuf;
use std::time::Instant;

fn median_secs(mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    f();
    let once = t.elapsed().as_secs_f64().max(1e-8);
    let iters = ((0.005 / once) as usize).clamp(1, 1_000_000);
    let mut rounds: Vec<f64> = (0..21)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed().as_secs_f64() / iters as f64
        })
        .collect();
    rounds.sort_by(|a, b| a.partial_cmp(b).unwrap());
    rounds[rounds.len() / 2]
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let count = std::env::args().nth(2).is_some_and(|a| a == "count");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/jsonexamples/small");
    let opts = Options::default();
    let (mut bytes, mut total) = (0usize, 0f64);
    for name in [
        "adversarial.json",
        "demo.json",
        "flatadversarial.json",
        "repeat.json",
        "smalldemo.json",
        "truenull.json",
        "twitter_timeline.json",
    ] {
        if !name.contains(filter.as_str()) {
            continue;
        }
        let input = std::fs::read(dir.join(name)).expect("jsonexamples/small");
        if count {
            for _ in 0..1000 {
                qjson::index::validate(std::hint::black_box(&input), &opts).unwrap();
            }
            continue;
        }
        let v = median_secs(|| {
            qjson::index::validate(std::hint::black_box(&input), &opts).unwrap();
        });
        bytes += input.len();
        total += v;
        println!(
            "{name:24} {:8.0} ns {:7.0} MB/s",
            v * 1e9,
            input.len() as f64 / v / 1e6
        );
    }
    if !count {
        println!(
            "aggregate                {:8.0} ns {:7.0} MB/s",
            total * 1e9,
            bytes as f64 / total / 1e6
        );
    }
}
