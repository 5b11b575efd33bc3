#!/bin/sh
# Run every cargo-fuzz target of fuzz/ for a short time (default 12 s each,
# about 60 s in total for the five), one after the other. Exits non-zero on
# the first finding (the crashing input is left in fuzz/artifacts/<target>/).
#
#   scripts/fuzz-smoke.sh                 # 12 s per target
#   FUZZ_SECONDS=600 scripts/fuzz-smoke.sh  # a long run: 10 min per target
#   FUZZ_TARGETS="path capi" scripts/fuzz-smoke.sh
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). On a stable toolchain it runs
# with RUSTC_BOOTSTRAP=1 (cargo-fuzz passes nightly-only flags such as
# -Zsanitizer=address); see fuzz/README.md. Without cargo-fuzz the script says
# so and exits 0, so CI without it is not red. Set FUZZ_REQUIRED=1 to make a
# missing cargo-fuzz an error instead.
#
# Seeds: when ../shared/data (beside the checkout) holds JSONTestSuite and
# jsonexamples, their files seed the parse_diff corpus (copied into
# fuzz/corpus/, which git ignores).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_EACH=${FUZZ_SECONDS:-12}
TARGETS=${FUZZ_TARGETS:-"parse_diff path capi edit utf8"}
NICE=${FUZZ_NICE:-19}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz-smoke: cargo-fuzz is not installed (cargo install cargo-fuzz); skipping" >&2
    if [ "${FUZZ_REQUIRED:-0}" = 1 ]; then
        exit 1
    fi
    exit 0
fi

# cargo-fuzz needs nightly rustc flags; on stable, RUSTC_BOOTSTRAP=1 unlocks them.
if ! rustc --version | grep -q nightly; then
    export RUSTC_BOOTSTRAP=1
fi

cd "$ROOT/fuzz"

DATA="$ROOT/../shared/data"
if [ -d "$DATA/JSONTestSuite/test_parsing" ] && [ ! -d corpus/parse_diff ]; then
    mkdir -p corpus/parse_diff
    cp "$DATA"/JSONTestSuite/test_parsing/*.json corpus/parse_diff/ 2>/dev/null || true
    # Small jsonexamples files only (libFuzzer's default max_len is 4 KB).
    find "$DATA/jsonexamples" -name '*.json' -size -64k -exec cp {} corpus/parse_diff/ \; 2>/dev/null || true
fi

cargo fuzz build -O
# -timeout: an input that runs 30 s (wall) is a finding. 10 s was hit on a
# loaded machine by 500 nested arrays (the harness's own recursive checks
# under ASan at nice 19, not the parse: 114K instructions).
for t in $TARGETS; do
    mkdir -p "corpus/$t"
    echo "fuzz-smoke: $t for ${SECONDS_EACH}s"
    nice -n "$NICE" cargo fuzz run -O "$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_EACH" -print_final_stats=1 -timeout=30 -rss_limit_mb=4096
done
