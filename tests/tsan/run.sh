#!/usr/bin/env bash
# make test-tsan: the tests in which several threads run, from a ThreadSanitizer build
# (-DNVDLA_TSAN=ON), at every instruction-set level this CPU has. The first report fails the run.
#
#   tests/tsan/run.sh <ThreadSanitizer build dir>
#
# A test that runs more than one thread has "Thread" in its name or is listed here.
set -euo pipefail

bin=$(cd "$1" && pwd)/bin

# The emulator suite: one layer on several threads (umd/emu/parallel.*) and the pool itself.
emu_tests=(
    '*Thread*'
    ConvFastPaths.ParallelForCoversTheRangeOnce
    ConvFp16Layers.FeatureLayersEqualTheReference
    '*GroupedKernel.RandomBlockDiagonalLayersMatchThePlainSumOnEveryLevel/*'
    'ProduceInOrder.*'
    'PrepareThenMake.*'
    'RunParts.*'
    'ConvFp16Band.*'
)
# The runtime suite, all of it: the emulator backend runs jobs on a worker thread, contexts run
# on threads of their own and the larger networks run their layers on several threads.
runtime_tests=('*')
# A test that races with another thread on purpose, reported by ThreadSanitizer: it polls
# memory the backend's worker writes (waiting would run the job on the waiting thread, which is
# not what it checks).
runtime_racy=(
    EmuBackend.WorkerRunsJobsNobodyWaitsFor
)

# Every name above must still match a test: a renamed test would otherwise drop out silently.
check_matches() {
    local program=$1 pattern
    shift
    for pattern in "$@"; do
        if [[ $("$program" --gtest_list_tests --gtest_filter="$pattern") != *$'\n  '* ]]; then
            echo "test-tsan: no test of $(basename "$program") matches $pattern" \
                 "(tests/tsan/run.sh)" >&2
            exit 1
        fi
    done
}
check_matches "$bin/nvdla_test_emu" "${emu_tests[@]}"
check_matches "$bin/nvdla_test_runtime" "${runtime_tests[@]}" "${runtime_racy[@]}"

join() {
    local IFS=:
    echo "$*"
}

# The levels umd/emu/isa.cpp finds on this CPU (NVDLA_EMU_ISA only lowers the level).
cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo) "
has() {
    local flag
    for flag; do [[ $cpu_flags == *" $flag "* ]] || return 1; done
}
levels=(scalar)
has avx2 fma && levels+=(avx2)
has avx512f avx512bw avx512dq avx512vl && levels+=(avx512)

export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
# Several threads by default on any machine (the tests that need more set their own count).
export NVDLA_EMU_THREADS=${NVDLA_EMU_THREADS:-3}
for level in "${levels[@]}"; do
    echo "== ThreadSanitizer: NVDLA_EMU_ISA=$level"
    NVDLA_EMU_ISA=$level "$bin/nvdla_test_emu" --gtest_brief=1 \
        --gtest_filter="$(join "${emu_tests[@]}")"
    NVDLA_EMU_ISA=$level "$bin/nvdla_test_runtime" --gtest_brief=1 \
        --gtest_filter="$(join "${runtime_tests[@]}")-$(join "${runtime_racy[@]}")"
done
