#!/usr/bin/env bash
# chimed under a real systemd user manager, installed exactly as the README says:
# install, verify, D-Bus activation, readiness and status, a notification delivered, the watchdog
# restarting a hung chimed with nothing lost, reload, a manager restart (reboot-equivalent) keeping
# pending items, and uninstall. Everything runs in a temporary HOME and is stopped at the end.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

passed=0
failed=0
check() {
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
        echo "ok - $what"
    else
        failed=$((failed + 1))
        echo "not ok - $what"
    fi
}
# Waits up to $1 seconds for a command to succeed (states that systemd has no event for here).
until_true() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ $SECONDS -ge "$deadline" ] && return 1
        sleep 0.1
    done
}

# Not under /tmp: the unit has PrivateTmp=yes, so chimed could not see a HOME or runtime directory there.
mkdir -p "$HOME/.cache"
root=$(mktemp -d "$HOME/.cache/chime-systemd-test.XXXXXX")
fakehome=$root/home
mkdir -p "$fakehome" "$root/run"
chmod 700 "$root/run"
manager_pid=""
mock_pid=""
made_run_systemd=0

cleanup() {
    [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null
    if [ -n "$manager_pid" ]; then
        kill -TERM "$manager_pid" 2>/dev/null
        wait "$manager_pid" 2>/dev/null
    fi
    [ $made_run_systemd = 1 ] && rmdir /run/systemd/system 2>/dev/null
    rm -rf "$root"
}
trap cleanup EXIT

# systemd --user starts only when sd_booted() holds.
if [ ! -d /run/systemd/system ]; then
    mkdir -p /run/systemd/system && made_run_systemd=1
fi

echo "== make install PREFIX=~/.local (HOME=$fakehome)"
make -s install PREFIX="$fakehome/.local" >"$root/install.log" 2>&1 || { cat "$root/install.log"; exit 1; }
unit=$fakehome/.local/share/systemd/user/chimed.service
# The integration tests' controls (CHIMED_TEST_HOOKS and the rest) are compiled into debug builds only.
check "the installed chimed has no test hooks" sh -c "! grep -aq CHIMED_TEST $fakehome/.local/bin/chimed"
check "install put the binaries, unit, activation file, interface and completions in place" \
    test -x "$fakehome/.local/bin/chimed" -a -x "$fakehome/.local/bin/chime" -a -f "$unit" \
    -a -f "$fakehome/.local/share/dbus-1/services/io.chime.Chime1.service" \
    -a -s "$fakehome/.local/share/dbus-1/interfaces/io.chime.Chime1.xml" \
    -a -s "$fakehome/.local/share/bash-completion/completions/chime" -a -s "$fakehome/.local/share/zsh/site-functions/_chime" \
    -a -s "$fakehome/.local/share/fish/vendor_completions.d/chime.fish" \
    -a -s "$fakehome/.local/share/doc/chime/examples/chime.toml"

# From here on the user's environment is the temporary one.
export HOME=$fakehome XDG_RUNTIME_DIR=$root/run
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME DBUS_SESSION_BUS_ADDRESS NOTIFY_SOCKET
export PATH=$HOME/.local/bin:$PATH

verify_out=$(systemd-analyze --user verify "$unit" 2>&1)
check "systemd-analyze --user verify is clean (exit status and output)" test $? -eq 0 -a -z "$verify_out"
[ -n "$verify_out" ] && echo "$verify_out"

# Test-only settings: chimed's stderr to a file (no journald here) and a short watchdog.
mkdir -p "$HOME/.config/systemd/user/chimed.service.d"
cat >"$HOME/.config/systemd/user/chimed.service.d/test.conf" <<CONF
[Service]
StandardError=append:$root/chimed.log
WatchdogSec=2s
RestartSec=3s
CONF

start_manager() {
    setsid /lib/systemd/systemd --user </dev/null >>"$root/manager.log" 2>&1 &
    manager_pid=$!
    export DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus
    until_true 20 sh -c 'systemctl --user is-system-running 2>/dev/null | grep -Eq "running|degraded"' || return 1
    # dbus-daemon finds activation files through XDG_DATA_HOME, else the passwd home (not $HOME):
    # tell it, before the first bus connection starts it, where this test's HOME keeps them.
    systemctl --user set-environment XDG_DATA_HOME="$HOME/.local/share"
}
stop_manager() {
    kill -TERM "$manager_pid"
    wait "$manager_pid" 2>/dev/null
    manager_pid=""
}
prop() { systemctl --user show -P "$1" chimed.service; }
prop_is() { test "$(prop "$1")" = "$2"; }

echo "== a systemd user manager"
check "the user manager runs" start_manager

check "chimed is not running before the first call" test "$(prop ActiveState)" = inactive
check "the first D-Bus call starts chimed (activation through systemd)" chime pending
# The call is answered once chimed owns the name; READY=1 follows when its watches on the bus are set
# up, and the manager handles it on its own time: the unit is "activating" until then.
check "chimed.service becomes active after that call" until_true 10 prop_is ActiveState active
systemctl --user stop chimed

echo "== the README's commands"
check "systemctl --user daemon-reload" systemctl --user daemon-reload
check "systemctl --user enable --now chimed" systemctl --user enable --now chimed --quiet
check "chimed.service is active" test "$(prop ActiveState)" = active
check "READY came after the name was owned: io.chime.Chime1 has an owner" \
    sh -c 'gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner io.chime.Chime1 | grep -q true'
check "StatusText says what chimed is doing" sh -c 'systemctl --user show -P StatusText chimed | grep -Eq "^[0-9]+ pending"'
check "the schedule lives in the state directory" test -f "$HOME/.local/state/chime/chime.sqlite"

echo "== a notification end to end"
/usr/bin/python3 -m dbusmock --template notification_daemon -l "$root/server.log" >/dev/null 2>&1 &
mock_pid=$!
check "a notification server is on the session bus" gdbus wait --session --timeout 10 org.freedesktop.Notifications
check "chime send --in 5s hi is accepted" chime send --in 5s hi
check "the server received hi" until_true 10 grep -q '"hi"' "$root/server.log"

echo "== the watchdog"
check "an item is scheduled for later" chime send --at "$(date -d '+2 hours' +%Y-%m-%dT%H:%M:%S)" "Survivor"
old_pid=$(prop MainPID)
# A hung chimed: frozen whole, so that no thread of it pings the watchdog. (The installed release build
# has no hook to hang it from inside.)
kill -STOP "$old_pid"
check "the watchdog kills a hung chimed" until_true 30 prop_is Result watchdog
check "systemd restarts it" until_true 30 sh -c \
    "[ \"\$(systemctl --user show -P MainPID chimed)\" != $old_pid ] && [ \"\$(systemctl --user show -P ActiveState chimed)\" = active ] && [ \"\$(systemctl --user show -P MainPID chimed)\" != 0 ]"
check "systemd counted the restart" test "$(prop NRestarts)" -ge 1
check "the pending item survived the restart" sh -c 'chime pending | grep -q Survivor'

echo "== reload and a manager restart"
mkdir -p "$HOME/.config/chime"
cp "$HOME/.local/share/doc/chime/examples/chime.toml" "$HOME/.config/chime/chime.toml"
sed -i 's/^level = "info"/level = "debug"/' "$HOME/.config/chime/chime.toml"
check "systemctl --user reload succeeds" systemctl --user reload chimed
check "the reload read the settings file" until_true 10 grep -q "reloaded the settings from $HOME/.config/chime/chime.toml" "$root/chimed.log"
check "chimed is still active after reload" test "$(prop ActiveState)" = active
stops_before=$(grep -c "chimed stopping" "$root/chimed.log")
stop_manager
check "the manager stopped chimed cleanly (SIGTERM, graceful shutdown)" \
    test "$(grep -c "chimed stopping" "$root/chimed.log")" -eq $((stops_before + 1))
check "the user manager runs again" start_manager
check "the enabled chimed starts with the manager" until_true 20 prop_is ActiveState active
check "pending items are still there after the restart" sh -c 'chime pending | grep -q Survivor'

echo "== uninstall"
systemctl --user disable --now chimed --quiet
stop_manager
(cd "$repo" && make -s uninstall PREFIX="$HOME/.local" >/dev/null 2>&1)
check "uninstall removed what install put there" test ! -e "$HOME/.local/bin/chimed" -a ! -e "$unit" \
    -a ! -e "$HOME/.local/share/doc/chime" \
    -a ! -e "$HOME/.local/share/dbus-1/services/io.chime.Chime1.service" -a ! -e "$HOME/.local/bin/chime" \
    -a ! -e "$HOME/.local/share/dbus-1/interfaces/io.chime.Chime1.xml"
check "uninstall kept the schedule" test -f "$HOME/.local/state/chime/chime.sqlite"

if [ $failed -gt 0 ]; then
    echo "--- chimed.log"; cat "$root/chimed.log" 2>/dev/null
    echo "--- manager.log"; tail -40 "$root/manager.log" 2>/dev/null
fi
echo "systemd: $passed passed, $failed failed"
[ $failed -eq 0 ]
