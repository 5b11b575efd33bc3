//! Rust-level cost of the core reads: one key lookup, one value decode, one
//! wildcard read, in nanoseconds per operation (per matched element for the
//! wildcards).
//!
//! `cargo run --release --no-default-features --example lookup_bench`
//!
//! Cases:
//! - `field20`: `Doc::field(obj, "id")` on an object of 20 members with short
//!   keys (`k00` ...; `id` the 11th), the object of benchmarks/access.py,
//!   read again and again through a `Document` (so with its child tables);
//! - `field20_once`: the same read through a `Doc` without tables (each
//!   read walks the members, as the first read of an object does);
//! - `field8`: an 8-member object (below the table threshold), key the 5th;
//! - `value_int`, `value_str`: `Doc::value` of an int and of a short string;
//! - `get_all_*`: `Doc::find_all` of a wildcard path over twitter.json and
//!   github_events.json, per matched element.
//!
//! Timed with the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID` on Linux),
//! median of 21 rounds of ~10 ms, the loop's own cost included (a few
//! instructions). `lookup_bench CASE ITERS` runs only one case `ITERS`
//! times, for `valgrind --tool=callgrind` (instructions per operation =
//! total of the case's function / ITERS).

use qjson::{Cursor, Doc, Document, Options};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

#[path = "common/clock.rs"]
mod clock;
use clock::now;

/// Median nanoseconds per operation of `f`, which performs `ops` operations.
fn median_ns(ops: usize, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    f();
    let once = t.elapsed().as_secs_f64().max(1e-8);
    let iters = ((0.01 / once) as usize).clamp(1, 10_000_000);
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
    rounds[rounds.len() / 2] * 1e9 / ops as f64
}

/// An object of `n` members with short keys, `id` (an int) in the middle,
/// the others alternating short strings and ints (benchmarks/access.py).
fn wide(n: usize) -> Vec<u8> {
    let mut members = Vec::new();
    for i in 0..n - 1 {
        if i == (n - 1) / 2 + (n - 1) % 2 {
            members.push("\"id\":123456789".to_string());
        }
        members.push(if i % 2 == 1 {
            format!("\"k{i:02}\":{}", i * 7919)
        } else {
            format!("\"k{i:02}\":\"v{i}\"")
        });
    }
    format!("{{{}}}", members.join(",")).into_bytes()
}

/// A case: its name and a closure that runs it once, returning how many
/// operations that was.
type Case<'a> = (&'static str, Box<dyn FnMut() -> usize + 'a>);

/// A corpus document, when the file is there.
type Input = Option<Document<Vec<u8>>>;

fn main() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/jsonexamples");
    let opts = Options::default();
    let w20 = Document::parse(wide(20), &opts).unwrap();
    let w8 = Document::parse(wide(8), &opts).unwrap();
    let twitter = std::fs::read(data.join("twitter.json")).ok();
    let twitter = twitter.map(|t| Document::parse(t, &opts).unwrap());
    let events = std::fs::read(data.join("github_events.json")).ok();
    let events = events.map(|t| Document::parse(t, &opts).unwrap());

    let d20 = w20.doc();
    let r20 = d20.root();
    let untabled = Doc::new(d20.input(), d20.index());
    let d8 = w8.doc();
    let r8 = d8.root();
    let id20 = d20.field(r20, b"id").unwrap();
    let str20 = d20.field(r20, b"k02").unwrap();

    let mut cases: Vec<Case<'_>> = vec![
        (
            "field20",
            Box::new(move || {
                black_box(d20.field(black_box(r20), black_box(b"id")));
                1
            }),
        ),
        (
            "field20_once",
            Box::new(move || {
                black_box(untabled.field(black_box(r20), black_box(b"id")));
                1
            }),
        ),
        (
            "field8",
            Box::new(move || {
                black_box(d8.field(black_box(r8), black_box(b"id")));
                1
            }),
        ),
        (
            "value_int",
            Box::new(move || {
                black_box(d20.value(black_box(id20)).unwrap());
                1
            }),
        ),
        (
            "value_str",
            Box::new(move || {
                black_box(d20.value(black_box(str20)).unwrap());
                1
            }),
        ),
    ];
    let wildcards: [(&Input, &str, &str); 4] = [
        (&twitter, "get_all_tw_id", "statuses[*].id"),
        (
            &twitter,
            "get_all_tw_screen_name",
            "statuses[*].user.screen_name",
        ),
        (&events, "get_all_ev_login", "[*].actor.login"),
        (&events, "get_all_ev_id", "[*].id"),
    ];
    for (document, name, path) in wildcards {
        let Some(document) = document else {
            println!("{name}: skipped (input not found under {})", data.display());
            continue;
        };
        let d = document.doc();
        let root: Cursor = d.root();
        cases.push((
            name,
            Box::new(move || black_box(d.find_all(root, black_box(path)).unwrap()).len()),
        ));
    }

    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [case, iters] = &args[..] {
        let (_, f) = cases
            .iter_mut()
            .find(|(n, _)| n == case)
            .unwrap_or_else(|| panic!("no case {case}"));
        let mut ops = 0;
        for _ in 0..iters.parse::<usize>().expect("ITERS") {
            ops += f();
        }
        println!("{case}: {ops} operations");
        return;
    }
    println!("backend: {}", qjson::scan::active_backend().name());
    for (name, f) in &mut cases {
        let ops = f();
        let ns = median_ns(ops, || {
            f();
        });
        println!("{name:>24}: {ns:7.1} ns per op ({ops} ops per call)");
    }
}
