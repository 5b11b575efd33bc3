//! Rust-level throughput of strict `Index::build`, `index::validate` and its
//! exact path alone (`validate_exact`, no token walk) over
//! the 14 large jsonexamples files (MB/s, median of rounds), and the
//! aggregate (total bytes / total time), as `benchmarks/corpus.py` counts it.
//!
//! `cargo run --release --no-default-features --example stage2_bench [filter]`

use qjson::{Index, Options};
use std::path::PathBuf;
use std::time::Instant;

fn median_secs(mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    f();
    let once = t.elapsed().as_secs_f64().max(1e-7);
    let iters = ((0.01 / once) as usize).clamp(1, 100_000);
    let mut rounds: Vec<f64> = (0..11)
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
    // `count` mode: one validate per file, untimed (for
    // instruction counts under valgrind).
    let count = std::env::args().nth(2).is_some_and(|a| a == "count");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/jsonexamples");
    let opts = Options::default();
    if std::path::Path::new(&filter).is_file() {
        let input = std::fs::read(&filter).expect("readable");
        let v = median_secs(|| {
            qjson::index::validate(std::hint::black_box(&input), &opts).unwrap();
        });
        println!(
            "{filter}: validate {:7.0} MB/s",
            input.len() as f64 / v / 1e6
        );
        return;
    }
    let (mut bytes, mut t_build, mut t_exact, mut t_val) = (0usize, 0f64, 0f64, 0f64);
    for name in [
        "apache_builds.json",
        "canada.json",
        "citm_catalog.json",
        "github_events.json",
        "gsoc-2018.json",
        "instruments.json",
        "marine_ik.json",
        "mesh.json",
        "mesh.pretty.json",
        "numbers.json",
        "random.json",
        "twitter.json",
        "twitterescaped.json",
        "update-center.json",
    ] {
        if !name.contains(filter.as_str()) {
            continue;
        }
        let input = std::fs::read(dir.join(name)).expect("jsonexamples");
        if count {
            qjson::index::validate(std::hint::black_box(&input), &opts).unwrap();
            continue;
        }
        let b = median_secs(|| {
            std::hint::black_box(Index::build(&input, &opts).unwrap());
        });
        let x = median_secs(|| {
            qjson::index::validate_exact(std::hint::black_box(&input), &opts).unwrap();
        });
        let v = median_secs(|| {
            qjson::index::validate(std::hint::black_box(&input), &opts).unwrap();
        });
        let mb = |t: f64| input.len() as f64 / t / 1e6;
        println!(
            "{name:24} build {:7.0} MB/s  exact {:7.0} MB/s  validate {:7.0} MB/s  ({:.2}x)",
            mb(b),
            mb(x),
            mb(v),
            x / v
        );
        bytes += input.len();
        t_build += b;
        t_exact += x;
        t_val += v;
    }
    let mb = |t: f64| bytes as f64 / t / 1e6;
    println!(
        "{:24} build {:7.0} MB/s  exact {:7.0} MB/s  validate {:7.0} MB/s  ({:.2}x)",
        "AGGREGATE",
        mb(t_build),
        mb(t_exact),
        mb(t_val),
        t_exact / t_val
    );
}
