#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a while over its corpus; exits non-zero if
# any of them found a crash, a leak, a timeout or a sanitizer report.
#
#   tests/fuzz/run.sh <fuzz build dir> <seconds per target> [<shared dir>]
#
# Corpora: the committed seeds (tests/fuzz/corpus/<target>/) are copied into
# <build>/fuzz-run/corpus/<target>/, which keeps what the fuzzer finds from run to run. The
# regression loadables of <shared>/vectors/sw-regression/flatbufs are added to the loadable
# corpus, and their DLA tasks (nvdla_fuzz_seeds) to the validator's, at run time only.
# Reproducers of failures land in <build>/fuzz-run/artifacts/<target>/; rerun one with
#   <build>/bin/nvdla_fuzz_<target> <file>
set -euo pipefail

build=$(cd "$1" && pwd)
seconds=$2
shared=${3:-}
src=$(cd "$(dirname "$0")" && pwd)
bin=$build/bin
work=$build/fuzz-run

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

flatbufs=$shared/vectors/sw-regression/flatbufs
if [ -z "$shared" ] || [ ! -d "$flatbufs" ]; then
    echo "fuzz: $flatbufs is absent: the loadable and validator corpora start from the" \
         "committed seeds only"
    flatbufs=
fi

status=0
for target in image dla_validate loadable cpu_task onnx caffe trace; do
    corpus=$work/corpus/$target
    artifacts=$work/artifacts/$target
    log=$work/$target.log
    mkdir -p "$corpus" "$artifacts"
    cp -n "$src/corpus/$target/"* "$corpus/" 2>/dev/null || true
    # The importer's seeds: the small models of tests/onnx/models (operators and blocks).
    if [ "$target" = onnx ]; then
        for m in "$src"/../onnx/models/{op,block}_*/model.onnx; do
            cp -n "$m" "$corpus/$(basename "$(dirname "$m")").onnx"
        done
    fi
    if [ -n "$flatbufs" ]; then
        case $target in
            loadable) find "$flatbufs" -type f -exec cp -n {} "$corpus/" \; ;;
            dla_validate)
                # A failure here (the loadable parser itself) is reported by the loadable
                # fuzzer with a reproducer; the validator still runs from its other seeds.
                "$bin/nvdla_fuzz_seeds" "$flatbufs" "$corpus" >"$work/seeds.log" 2>&1 ||
                    echo "   warning: nvdla_fuzz_seeds failed (log: $work/seeds.log)" ;;
        esac
    fi
    echo "== fuzz $target: ${seconds} s from $(ls "$corpus" | wc -l) inputs"
    if "$bin/nvdla_fuzz_$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1; then
        grep -E '^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::new_units_added)' "$log" |
            sed 's/^/   /' || true
    else
        echo "FAIL: nvdla_fuzz_$target (log: $log; reproducers: $artifacts/)"
        grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==|Test unit written' "$log" | head -20 |
            sed 's/^/   /' || true
        status=1
    fi
done
exit $status
