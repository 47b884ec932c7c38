# shellcheck shell=bash
# Shared by systemd-service.sh (make install in a HOME) and deb-package.sh (the Debian package in /usr):
# the checks of chimed under a real systemd user manager, whatever installed it. Sourced, not run.
# The caller sets the install layout (layout_home or layout_system), then calls setup_test_home, and
# runs service_checks between its own install and removal steps.

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

# Where an install put each file. man pages may be compressed (.gz), as a package does.
layout_home() { # PREFIX
    bindir=$1/bin
    relaydir=$1/libexec/chime
    unitdir=$1/share/systemd/user
    dbusdir=$1/share/dbus-1/services
    ifacedir=$1/share/dbus-1/interfaces
    bashdir=$1/share/bash-completion/completions
    zshdir=$1/share/zsh/site-functions
    fishdir=$1/share/fish/vendor_completions.d
    mandir=$1/share/man/man1
    docdir=$1/share/doc/chime
}
layout_system() {
    bindir=/usr/bin
    relaydir=/usr/libexec/chime
    unitdir=/usr/lib/systemd/user
    dbusdir=/usr/share/dbus-1/services
    ifacedir=/usr/share/dbus-1/interfaces
    bashdir=/usr/share/bash-completion/completions
    zshdir=/usr/share/zsh/vendor-completions
    fishdir=/usr/share/fish/vendor_completions.d
    mandir=/usr/share/man/man1
    docdir=/usr/share/doc/chime
}
# Every file an install puts in place (one of each kind), by the layout.
installed_files() {
    echo "$bindir/chimed" "$bindir/chime" "$relaydir/chime-relay" "$unitdir/chimed.service" "$dbusdir/io.chime.Chime1.service" \
        "$ifacedir/io.chime.Chime1.xml" "$bashdir/chime" "$zshdir/_chime" "$fishdir/chime.fish" \
        "$docdir/README.md" "$docdir/examples/chime.toml"
}
man_page() { # NAME: the installed page, compressed or not
    local page
    for page in "$mandir/$1.1" "$mandir/$1.1.gz"; do
        [ -e "$page" ] && echo "$page" && return 0
    done
    return 1
}
all_files_in_place() {
    local f
    for f in $(installed_files); do
        [ -s "$f" ] || { echo "missing or empty: $f"; return 1; }
    done
    [ -x "$bindir/chimed" ] && [ -x "$bindir/chime" ] && [ -x "$relaydir/chime-relay" ] && man_page chime >/dev/null && man_page chimed >/dev/null
}
no_file_left() {
    local f
    for f in $(installed_files) "$mandir/chime.1" "$mandir/chime.1.gz" "$mandir/chimed.1" "$mandir/chimed.1.gz"; do
        [ ! -e "$f" ] || { echo "still there: $f"; return 1; }
    done
    [ ! -e "$docdir" ] || { echo "still there: $docdir"; return 1; }
    [ ! -e "$relaydir" ] || { echo "still there: $relaydir"; return 1; }
}
check_installed_files() {
    # The integration tests' controls (CHIMED_TEST_HOOKS and the rest) are compiled into debug builds only.
    check "the installed chimed has no test hooks" sh -c "! grep -aq CHIMED_TEST '$bindir/chimed'"
    check "install put the binaries, unit, activation file, interface, completions, man pages and docs in place" \
        all_files_in_place
    check "chimed is the chime program under its other name (a link)" \
        sh -c "[ \"\$(readlink '$bindir/chimed')\" = chime ] && [ -f '$bindir/chime' ] && [ ! -L '$bindir/chime' ]"
    check "the unit starts $bindir/chimed" grep -qx "ExecStart=$bindir/chimed" "$unitdir/chimed.service"
    check "the unit's documentation is there" \
        test -f "$(sed -n 's|^Documentation=file://||p' "$unitdir/chimed.service")"
    check "the activation file starts $bindir/chimed through systemd" \
        sh -c "grep -qx 'Exec=$bindir/chimed' '$dbusdir/io.chime.Chime1.service' &&
            grep -qx 'SystemdService=chimed.service' '$dbusdir/io.chime.Chime1.service'"
}

# A temporary HOME and runtime directory. Not under /tmp: the unit has PrivateTmp=yes, so chimed could not
# see a HOME or runtime directory there.
manager_pid=""
mock_pid=""
made_run_systemd=0
setup_test_home() { # NAME
    mkdir -p "$HOME/.cache"
    root=$(mktemp -d "$HOME/.cache/chime-$1.XXXXXX")
    fakehome=$root/home
    mkdir -p "$fakehome" "$root/run"
    chmod 700 "$root/run"
    # systemd --user starts only when sd_booted() holds.
    if [ ! -d /run/systemd/system ]; then
        mkdir -p /run/systemd/system && made_run_systemd=1
    fi
}
# Stops what the checks started, by PID.
stop_test_processes() {
    if [ -n "$mock_pid" ]; then kill "$mock_pid" 2>/dev/null || true; fi
    mock_pid=""
    if [ -n "$manager_pid" ]; then
        kill -TERM "$manager_pid" 2>/dev/null || true
        wait "$manager_pid" 2>/dev/null || true
    fi
    manager_pid=""
    if [ $made_run_systemd = 1 ]; then rmdir /run/systemd/system 2>/dev/null || true; fi
    made_run_systemd=0
}
# That, and the temporary HOME removed.
cleanup_test_home() {
    stop_test_processes
    rm -rf "$root"
}
# From here on the user's environment is the temporary one, with the layout's binaries first on PATH.
enter_test_home() {
    export HOME=$fakehome XDG_RUNTIME_DIR=$root/run
    unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME DBUS_SESSION_BUS_ADDRESS NOTIFY_SOCKET
    export PATH=$bindir:$PATH
    local verify_out
    verify_out=$(systemd-analyze --user verify "$unitdir/chimed.service" 2>&1) && verify_status=0 || verify_status=$?
    check "systemd-analyze --user verify is clean (exit status and output)" test "$verify_status" -eq 0 -a -z "$verify_out"
    if [ -n "$verify_out" ]; then echo "$verify_out"; fi
    # Test-only settings: chimed's stderr to a file (no journald here) and a short watchdog.
    mkdir -p "$HOME/.config/systemd/user/chimed.service.d"
    cat >"$HOME/.config/systemd/user/chimed.service.d/test.conf" <<CONF
[Service]
StandardError=append:$root/chimed.log
WatchdogSec=2s
RestartSec=3s
CONF
}

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
    wait "$manager_pid" 2>/dev/null || true
    manager_pid=""
}
prop() { systemctl --user show -P "$1" chimed.service; }
prop_is() { test "$(prop "$1")" = "$2"; }
chimed_stops() { count_in_log "chimed stopping"; }
count_in_log() { grep -c "$1" "$root/chimed.log" 2>/dev/null || true; }

# With a user manager running and chimed stopped: the first call starts it.
activation_checks() {
    check "chimed is not running before the first call" prop_is ActiveState inactive
    check "the first D-Bus call starts chimed (activation through systemd)" chime pending
    # The call is answered once chimed owns the name; READY=1 follows when its watches on the bus are set
    # up, and the manager handles it on its own time: the unit is "activating" until then.
    check "chimed.service becomes active after that call" until_true 10 prop_is ActiveState active
}

# With chimed enabled and active under the user manager: readiness, a notification, the watchdog, reload
# and a manager restart. The manager runs again at the end.
# chimed's child chime-relay runs the program the install put in place.
relay_is_installed_one() {
    local relay
    relay=$(pgrep -P "$(prop MainPID)" -x chime-relay | head -1)
    [ -n "$relay" ] && [ "$(readlink "/proc/$relay/exe")" = "$relaydir/chime-relay" ]
}
service_checks() {
    check "chimed.service is active" prop_is ActiveState active
    check "READY came after the name was owned: io.chime.Chime1 has an owner" \
        sh -c 'gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner io.chime.Chime1 | grep -q true'
    check "StatusText says what chimed is doing" sh -c 'systemctl --user show -P StatusText chimed | grep -Eq "^[0-9]+ pending"'
    check "the schedule lives in the state directory" test -f "$HOME/.local/state/chime/chime.sqlite"
    check "the chime on PATH is the installed one" test "$(command -v chime)" = "$bindir/chime"

    echo "== a notification end to end"
    /usr/bin/python3 -m dbusmock --template notification_daemon -l "$root/server.log" >/dev/null 2>&1 &
    mock_pid=$!
    check "a notification server is on the session bus" gdbus wait --session --timeout 10 org.freedesktop.Notifications
    check "chime send --in 5s hi is accepted" chime send --in 5s hi
    check "the server received hi" until_true 10 grep -q '"hi"' "$root/server.log"
    check "chimed's notification relay is the installed $relaydir/chime-relay" relay_is_installed_one

    echo "== the watchdog"
    check "an item is scheduled for later" chime send --at "$(date -d '+2 hours' +%Y-%m-%dT%H:%M:%S)" "Survivor"
    local old_pid
    old_pid=$(prop MainPID || echo 0)
    # A hung chimed: frozen whole, so that no thread of it pings the watchdog. (The installed release build
    # has no hook to hang it from inside.) Never "kill 0": that would stop this script's process group.
    if [ "$old_pid" -gt 0 ]; then kill -STOP "$old_pid"; fi
    check "the watchdog kills a hung chimed" until_true 30 prop_is Result watchdog
    check "systemd restarts it" until_true 30 sh -c \
        "[ \"\$(systemctl --user show -P MainPID chimed)\" != $old_pid ] && [ \"\$(systemctl --user show -P ActiveState chimed)\" = active ] && [ \"\$(systemctl --user show -P MainPID chimed)\" != 0 ]"
    check "systemd counted the restart" test "$(prop NRestarts)" -ge 1
    check "the pending item survived the restart" sh -c 'chime pending | grep -q Survivor'

    echo "== reload and a manager restart"
    mkdir -p "$HOME/.config/chime"
    cp "$docdir/examples/chime.toml" "$HOME/.config/chime/chime.toml"
    sed -i 's/^level = "info"/level = "debug"/' "$HOME/.config/chime/chime.toml"
    check "systemctl --user reload succeeds" systemctl --user reload chimed
    check "the reload read the settings file" until_true 10 grep -q "reloaded the settings from $HOME/.config/chime/chime.toml" "$root/chimed.log"
    check "chimed is still active after reload" prop_is ActiveState active
    local stops_before
    stops_before=$(chimed_stops)
    stop_manager
    check "the manager stopped chimed cleanly (SIGTERM, graceful shutdown)" \
        test "$(chimed_stops)" -eq $((stops_before + 1))
    check "the user manager runs again" start_manager
    check "the enabled chimed starts with the manager" until_true 20 prop_is ActiveState active
    check "pending items are still there after the restart" sh -c 'chime pending | grep -q Survivor'
}

# The verdict, with the logs when something failed.
summary() { # NAME
    if [ $failed -gt 0 ]; then
        echo "--- chimed.log"
        cat "$root/chimed.log" 2>/dev/null || true
        echo "--- manager.log"
        tail -40 "$root/manager.log" 2>/dev/null || true
    fi
    echo "$1: $passed passed, $failed failed"
    [ $failed -eq 0 ]
}
