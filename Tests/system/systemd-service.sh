#!/usr/bin/env bash
# chimed under a real systemd user manager, installed exactly as the README says:
# install, verify, D-Bus activation, readiness and status, a notification delivered, the watchdog
# restarting a hung chimed with nothing lost, reload, a manager restart (reboot-equivalent) keeping
# pending items, and uninstall. Everything runs in a temporary HOME and is stopped at the end.
# deb-package.sh runs the same checks (service-checks.sh) against the Debian package.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
# shellcheck source=Tests/system/service-checks.sh
source Tests/system/service-checks.sh

setup_test_home systemd-test
trap cleanup_test_home EXIT
layout_home "$fakehome/.local"

echo "== make install PREFIX=~/.local (HOME=$fakehome)"
make -s install PREFIX="$fakehome/.local" >"$root/install.log" 2>&1 || { cat "$root/install.log"; exit 1; }
check_installed_files
enter_test_home

echo "== a systemd user manager"
check "the user manager runs" start_manager
activation_checks
check "systemctl --user stop chimed" systemctl --user stop chimed

echo "== the README's commands"
check "systemctl --user daemon-reload" systemctl --user daemon-reload
check "systemctl --user enable --now chimed" systemctl --user enable --now chimed --quiet
service_checks

echo "== uninstall"
check "systemctl --user disable --now chimed" systemctl --user disable --now chimed --quiet
stop_manager
(cd "$repo" && make -s uninstall PREFIX="$HOME/.local" >/dev/null 2>&1)
check "uninstall removed what install put there" no_file_left
check "uninstall kept the schedule" test -f "$HOME/.local/state/chime/chime.sqlite"

summary systemd
