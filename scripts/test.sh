#!/usr/bin/env bash
# Sets everything up and runs every test: formatting, unit, bus integration, differential and fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

echo "== swift format lint"
swift format lint --strict --recursive Sources Tests Examples Benchmarks Package.swift

echo "== build"
swift build --build-tests

echo "== tests"
# One at a time: the delivery tests measure lateness in milliseconds, and a 2-core machine busy
# with other suites would measure the machine instead of chimed.
swift test --skip-build --no-parallel --skip DateBuilderPeerTests

echo "== DateBuilder's own tests, in the machine's zone, south of the equator and at a half-hour offset"
# Tests/DateBuilderPeerTests: the zone is set from outside because the file is DateBuilder's, unchanged.
# Each run must have run the file's tests: a filter that matched nothing would pass.
peer_tests() {
    local output
    output=$(swift test --skip-build --filter DateBuilderPeerTests 2>&1) || { echo "$output"; return 1; }
    grep -m1 -E "Executed [1-9][0-9]* tests?, with 0 failures" <<<"$output" \
        || { echo "$output"; echo "DateBuilderPeerTests ran no test (TZ=${TZ:-})"; return 1; }
}
peer_tests
TZ=Australia/Sydney peer_tests
TZ=Asia/Kolkata peer_tests

echo "== chimed as a systemd user service"
bash Tests/system/systemd-service.sh

echo "== the Debian package under systemd --user (make deb, install, the same checks, remove, purge)"
bash Tests/system/deb-package.sh

echo "== fuzzing the rule parsers briefly"
bash scripts/fuzz.sh 10

echo "== quick benchmarks against the recorded baseline"
bash scripts/bench --quick
