#!/usr/bin/env bash
# Builds each rule parser's libFuzzer target (with AddressSanitizer) and runs it briefly.
#   bash scripts/fuzz.sh [SECONDS]     default 10 s per target; CI runs the default
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
out=.build-fuzz
mkdir -p "$out"
core=Sources/ChimeCore

# target name, harness, the ChimeCore folders it needs (the pure parsers: no package dependencies)
targets=(
    "rrule Fuzz/RRuleFuzz.swift Shared RRule"
    "oncalendar Fuzz/OnCalendarFuzz.swift Shared OnCalendar"
    "phrase Fuzz/PhraseFuzz.swift Shared WallClock DateBuilder Phrase"
)
for t in "${targets[@]}"; do
    read -r name harness folders <<<"$t"
    [ -f "$harness" ] || { echo "missing $harness" >&2; exit 1; }
    sources=()
    for f in $folders; do sources+=("$core/$f"/*.swift); done
    echo "== fuzz $name: building"
    swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name ChimeCore "${sources[@]}" "$harness" \
        -o "$out/fuzz-$name" 2> >(grep -v "ld.gold: warning\|__asan_report" >&2)
    echo "== fuzz $name: running ${seconds}s"
    mkdir -p "$out/corpus-$name"
    status=0
    "$out/fuzz-$name" -max_total_time="$seconds" -print_final_stats=1 "$out/corpus-$name" >"$out/fuzz-$name.log" 2>&1 \
        || status=$?
    grep -E "^(Done|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)" "$out/fuzz-$name.log" || true
    if [ "$status" -ne 0 ]; then
        tail -40 "$out/fuzz-$name.log" >&2
        echo "fuzz $name: crashed (exit $status); the input is in the log above" >&2
        exit 1
    fi
done
echo "fuzz: all targets ran ${seconds}s without a crash"
