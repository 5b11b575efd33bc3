//! Rust-level throughput of a strict parse plus one read, per backend.
//!
//! `cargo run --release --no-default-features --example parse_bench`
//!
//! For each file: strict `Document::parse` then one read of a late field
//! (twitter.json: `search_metadata.count`), in GB/s: the best and the
//! median of 21 rounds, timed with the thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID` on Linux, wall time elsewhere), so other
//! processes on a shared machine count less (the best round is the one
//! they disturbed least). Force a backend with
//! QJSON_BACKEND=scalar|avx2|avx512.
//!
//! `parse_bench FILE ITERS [lazy]` runs only the strict (or lazy) parse +
//! read of one file (`twitter.json`, or a path) `ITERS` times, for
//! `valgrind --tool=callgrind` (or interleaved A/B runs of two builds: it
//! prints the mean thread CPU time per parse).
//! `parse_bench --files PATH...` measures the given files (read: the root).

use qjson::{Document, Options};
use std::path::PathBuf;
use std::time::Instant;

#[path = "common/clock.rs"]
mod clock;
use clock::now;

/// GB/s of `f` over `bytes`: (best round, median round).
fn gbps(bytes: usize, mut f: impl FnMut()) -> (f64, f64) {
    // Calibrate to ~20 ms per round.
    let t = Instant::now();
    f();
    let once = t.elapsed().as_secs_f64().max(1e-7);
    let iters = ((0.02 / once) as usize).clamp(1, 100_000);
    let mut rounds: Vec<f64> = (0..21)
        .map(|_| {
            let t = now();
            for _ in 0..iters {
                f();
            }
            (now() - t) / iters as f64
        })
        .collect();
    rounds.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let rate = |t: f64| bytes as f64 / t / 1e9;
    (rate(rounds[0]), rate(rounds[rounds.len() / 2]))
}

const FILES: [(&str, &str); 4] = [
    ("twitter.json", "search_metadata.count"),
    ("citm_catalog.json", "venueNames"),
    ("canada.json", "type"),
    ("github_events.json", "[-1].id"),
];

fn parse_and_read(input: &[u8], opts: &Options, path: &str) {
    let document = Document::parse(input, opts).unwrap();
    let doc = document.doc();
    std::hint::black_box(doc.find(doc.root(), path).unwrap());
}

fn main() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/jsonexamples");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let one_file = args.len() <= 3 && args.first().is_some_and(|a| a != "--files");
    if let (true, [file, iters, mode @ ..]) = (one_file, &args[..]) {
        let (path, read) = FILES
            .iter()
            .find(|(f, _)| f == file)
            .map_or((PathBuf::from(file), ""), |(f, p)| (data.join(f), *p));
        let input = std::fs::read(&path).expect("input file");
        let opts = Options {
            lazy: mode.first().is_some_and(|m| m == "lazy"),
            ..Options::default()
        };
        let iters = iters.parse::<usize>().expect("ITERS");
        let t = now();
        for _ in 0..iters {
            parse_and_read(&input, &opts, read);
        }
        let ns = (now() - t) * 1e9 / iters.max(1) as f64;
        println!("{ns:.0} ns per parse (thread CPU)");
        return;
    }
    println!("backend: {}", qjson::scan::active_backend().name());
    println!("GB/s: best round / median round");
    let named: Vec<(PathBuf, String, &str)> = match args.split_first() {
        Some((flag, paths)) if flag == "--files" => paths
            .iter()
            .map(|p| {
                let name = PathBuf::from(p);
                let name = name
                    .file_name()
                    .map_or(p.clone(), |n| n.to_string_lossy().into());
                (PathBuf::from(p), name, "")
            })
            .collect(),
        _ => FILES
            .iter()
            .map(|(f, p)| (data.join(f), f.to_string(), *p))
            .collect(),
    };
    for (file, name, path) in named {
        let Ok(input) = std::fs::read(&file) else {
            println!("{name}: skipped ({} not found)", file.display());
            continue;
        };
        let opts = Options::default();
        let (best, median) = gbps(input.len(), || parse_and_read(&input, &opts, path));
        let lazy = Options { lazy: true, ..opts };
        let (lazy_best, lazy_median) = gbps(input.len(), || parse_and_read(&input, &lazy, path));
        let document = Document::parse(&input[..], &opts).unwrap();
        println!(
            "{name:>20}: strict parse + get {path:?}: {best:.2} / {median:.2} GB/s; \
             lazy: {lazy_best:.2} / {lazy_median:.2} GB/s; index {:.2}x input",
            document.index().heap_bytes() as f64 / input.len() as f64
        );
    }
}
