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
swift test --skip-build --filter DateBuilderPeerTests
TZ=Australia/Sydney swift test --skip-build --filter DateBuilderPeerTests
TZ=Asia/Kolkata swift test --skip-build --filter DateBuilderPeerTests

echo "== chimed as a systemd user service"
bash Tests/system/systemd-service.sh

echo "== the Debian package under systemd --user (make deb, install, the same checks, remove, purge)"
bash Tests/system/deb-package.sh

echo "== fuzzing the rule parsers briefly"
bash scripts/fuzz.sh 10

echo "== quick benchmarks against the recorded baseline"
bash scripts/bench --quick
