#!/usr/bin/env bash
# Builds the libFuzzer targets (with AddressSanitizer) and runs each briefly, or as long as asked.
#   bash scripts/fuzz.sh [SECONDS]          each target for SECONDS (default 10; CI runs the default)
#   bash scripts/fuzz.sh --runs N           each target for N executions (the full run: --runs 10000000),
#                                           in processes of 250000 executions each
#   FUZZ_SECONDS=600 / FUZZ_RUNS=N          the same through the environment
#   FUZZ_TARGETS="config dbus"              only these targets
# Targets: the rule parsers (rrule, oncalendar, phrase), the iCalendar reader (ical) and the TZif reader (tzif),
# pure ChimeCore built with swiftc; the TOML readers (config: chime.toml and group files through TOMLKit, which is
# C++), D-Bus message reading (dbus: DBusKit's demarshalling and chimed's record readers) and the binary encoding
# of stored definitions (definition); the last three build through SwiftPM in .build-fuzz-spm, where CHIME_FUZZ=1
# adds them to the package.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-10}
runs=${FUZZ_RUNS:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --runs=*) runs=${1#--runs=}; shift ;;
        [0-9]*) seconds=$1; shift ;;
        *) echo "usage: $0 [SECONDS] [--runs N]" >&2; exit 2 ;;
    esac
done
out=.build-fuzz
mkdir -p "$out"
core=Sources/ChimeCore
# The Swift runtime's crash reporter would run inside ASan's report and muddle it.
export SWIFT_BACKTRACE=enable=no
# Leak checking is off: TOMLKit never frees a parsed table, and LeakSanitizer takes values of Swift enums
# held by globals for leaks (their pointers carry the case in spare bits).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
options=(-detect_leaks=0 -print_final_stats=1)

# name, harness, the ChimeCore folders (and single files) it needs (the pure parsers: no package dependencies)
swiftc_targets=(
    "rrule Fuzz/RRuleFuzz.swift Shared WallClock ZoneRules SearchBudget.swift RRule"
    "oncalendar Fuzz/OnCalendarFuzz.swift Shared WallClock ZoneRules SearchBudget.swift OnCalendar"
    "phrase Fuzz/PhraseFuzz.swift Shared WallClock ZoneRules SearchBudget.swift OccurrenceOffset.swift TimeInput.swift RulePreview.swift DateBuilder Phrase RRule OnCalendar Explain Recurrence.swift"
    "ical Fuzz/ICalendarFuzz.swift Shared WallClock ZoneRules SearchBudget.swift RRule ICalendar"
    "tzif Fuzz/TZifFuzz.swift Shared WallClock ZoneRules"
)
# Seed folders of the swiftc targets that have some.
declare -A swiftc_seeds=([ical]=Tests/ChimeCoreTests/Fixtures/ics [tzif]=/usr/share/zoneinfo/Europe)
# name, seed folders
spm_targets=(
    "config config"
    "dbus Fuzz/corpus/dbus"
    "definition Fuzz/corpus/definition"
)

wanted() { [ -z "${FUZZ_TARGETS:-}" ] || [[ " $FUZZ_TARGETS " == *" $1 "* ]]; }

# Runs target $1 (binary $2) on its corpus and seed folders ($3…), for the time or the runs asked.
run_target() {
    local name=$1 binary=$2
    shift 2
    local corpus="$out/corpus-$name" log="$out/fuzz-$name.log"
    mkdir -p "$corpus"
    local status=0 total=0
    : >"$log"
    if [ -n "$runs" ]; then
        echo "== fuzz $name: running $runs executions"
        # In rounds of 250000: a round is a new process, so the memory TOMLKit leaks (a parsed table each
        # time, about 2 kB) is returned before libFuzzer's 2 GB limit stops the run.
        while [ "$total" -lt "$runs" ]; do
            local round=$((runs - total < 250000 ? runs - total : 250000))
            "$binary" "${options[@]}" -runs="$round" -artifact_prefix="$out/$name-" "$corpus" "$@" >>"$log" 2>&1 \
                || { status=$?; break; }
            total=$((total + round))
        done
    else
        echo "== fuzz $name: running ${seconds}s"
        "$binary" "${options[@]}" -max_total_time="$seconds" -artifact_prefix="$out/$name-" "$corpus" "$@" \
            >"$log" 2>&1 || status=$?
    fi
    grep -E "^(Done|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)" "$log" \
        | awk '/^stat::number_of_executed_units/ { n += $2; next } { print } END { print "executions: " n }' || true
    if [ "$status" -ne 0 ]; then
        tail -40 "$log" >&2
        echo "fuzz $name: crashed (exit $status); the input is in $out/$name-* and the log above" >&2
        exit 1
    fi
    # Without coverage counters libFuzzer only throws random bytes. SwiftPM builds are checked before they
    # run (see below); this checks every target by the counters libFuzzer reports. A long run is then
    # pointless and fails; a brief one still runs the seeds and random input, and says so.
    local counters
    counters=$(grep -m1 -o "([0-9]* inline 8-bit counters)" "$log" | grep -o "[0-9][0-9]*" | head -1 || true)
    if [ "${counters:-0}" -lt "$minimum_counters" ]; then
        echo "fuzz $name: only ${counters:-0} coverage counters (at least $minimum_counters expected): the build" \
            "is not instrumented; remove .build-fuzz-spm and run again with nothing else compiling" >&2
        if [ -n "$runs" ]; then exit 1; fi
    fi
}

# The swiftc targets are built two at a time (each compiler runs on one core), then run one after another.
build_swiftc() {
    local name=$1 harness=$2 folders=$3 sources=() f
    for f in $folders; do
        if [[ $f == *.swift ]]; then sources+=("$core/$f"); else sources+=("$core/$f"/*.swift); fi
    done
    local status=0
    swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name ChimeCore "${sources[@]}" "$harness" \
        -o "$out/fuzz-$name" >"$out/build-$name.log" 2>&1 || status=$?
    echo "$status" >"$out/build-$name.status"
}
built=()
for t in "${swiftc_targets[@]}"; do
    read -r name harness folders <<<"$t"
    wanted "$name" || continue
    [ -f "$harness" ] || { echo "missing $harness" >&2; exit 1; }
    echo "== fuzz $name: building"
    rm -f "$out/build-$name.status"
    build_swiftc "$name" "$harness" "$folders" &
    built+=("$name")
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
done
wait
for name in "${built[@]}"; do
    if [ "$(cat "$out/build-$name.status" 2>/dev/null)" != 0 ]; then
        grep -v "ld.gold: warning\|__asan_report" "$out/build-$name.log" | tail -40 >&2
        echo "fuzz $name: the build failed (the log above)" >&2
        exit 1
    fi
done
minimum_counters=1000
for name in "${built[@]}"; do
    # shellcheck disable=SC2086 # one seed folder, or none
    run_target "$name" "$out/fuzz-$name" ${swiftc_seeds[$name]:-}
done

# In one scratch folder, built from nothing (the packages come from the local cache), one product after the
# other with the same flags, so that the modules both need are compiled once.
# SwiftPM given `--sanitize fuzzer --sanitize address` compiles with only one of the two, chosen anew on
# each build (a set's order): half the builds had no coverage counters, the other half no AddressSanitizer.
# So `--sanitize fuzzer` (which also links libFuzzer's main) is given alone, and both sanitizers go to the
# compilers directly; each binary is still checked for coverage before it runs.
spm_build=.build-fuzz-spm
spm_cleaned=
for t in "${spm_targets[@]}"; do
    read -r name seeds <<<"$t"
    wanted "$name" || continue
    if [ -z "$spm_cleaned" ]; then
        rm -rf "$spm_build" .build-fuzz-spm-config .build-fuzz-spm-dbus
        spm_cleaned=1
    fi
    echo "== fuzz $name: building"
    CHIME_FUZZ=1 swift build -c release --scratch-path "$spm_build" --sanitize fuzzer \
        -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address \
        -Xcxx -fsanitize=fuzzer-no-link,address \
        --product "fuzz-$name" >"$out/build-$name.log" 2>&1 || { tail -40 "$out/build-$name.log" >&2; exit 1; }
    tail -1 "$out/build-$name.log"
    instrumented=$(nm "$spm_build/release/fuzz-$name" | grep -c "__sancov_gen_" || true)
    if [ "$instrumented" -lt 100 ]; then
        echo "fuzz $name: the build has no coverage instrumentation in its Swift code" >&2
        exit 1
    fi
    # Both hold tens of thousands of counters when their Swift code is instrumented, a few thousand when not.
    minimum_counters=20000
    # shellcheck disable=SC2086 # the seed folders are one word each
    run_target "$name" "$spm_build/release/fuzz-$name" $seeds
done
if [ -n "$runs" ]; then
    echo "fuzz: every target ran $runs executions without a crash"
else
    echo "fuzz: every target ran ${seconds}s without a crash"
fi
