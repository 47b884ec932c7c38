#!/usr/bin/env bash
# The Debian package under a real systemd user manager: make deb and lintian, apt-get install, the files in
# the system's places (binaries that need no Swift toolchain), the user unit enabled for new sessions, the
# checks of systemd-service.sh (service-checks.sh) against the installed files, then apt-get remove (each
# user's schedule stays) and purge (nothing left). It installs system-wide, so it needs root; the machine
# is left as it was (the package and anything apt-get brought with it purged, processes stopped by PID).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
# shellcheck source=Tests/system/service-checks.sh
source Tests/system/service-checks.sh

if [ "$(id -u)" -ne 0 ]; then
    echo "skipped: the Debian package test installs it system-wide, which needs root"
    exit 0
fi
status=$(dpkg-query -W -f='${db:Status-Status}' chime 2>/dev/null || true)
if [ -n "$status" ] && [ "$status" != not-installed ]; then
    echo "skipped: a chime package is on this machine already ($status); the test would replace and purge it"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt_get() { apt-get -y -o DPkg::Lock::Timeout=300 "$@" >>"$root/apt.log" 2>&1; }
enablement=/etc/systemd/user/default.target.wants/chimed.service
installed=0
brought=()
cleanup() {
    stop_test_processes
    if [ $installed = 1 ]; then apt_get purge chime || true; fi
    if [ ${#brought[@]} -gt 0 ]; then apt_get purge "${brought[@]}" || true; fi
    rm -rf "$root"
}
package_owns_each_file() {
    local f
    for f in $(installed_files); do
        dpkg -S "$f" >/dev/null 2>&1 || { echo "not the package's: $f"; return 1; }
    done
}
# Every file dpkg listed for the package is gone, and so is every folder of its own.
nothing_left() {
    local f
    for f in "${package_files[@]}"; do
        if [ -e "$f" ] && { [ ! -d "$f" ] || [[ $f == */chime || $f == */chime/* ]]; }; then
            echo "left behind: $f"
            return 1
        fi
    done
}
setup_test_home deb-test
trap cleanup EXIT
started=$SECONDS
lap=$SECONDS
timings=()
timed() { timings+=("$1 $((SECONDS - lap)) s"); lap=$SECONDS; }

echo "== make deb"
make -s deb >"$root/deb.log" 2>&1 || { tail -40 "$root/deb.log"; exit 1; }
deb=$repo/.build-deb/chime_$(dpkg-parsechangelog -SVersion)_$(dpkg --print-architecture).deb
check "make deb built $(basename "$deb")" test -s "$deb"
timed "make deb"
lintian_status=0
lintian_out=$(lintian --fail-on error,warning "$deb" 2>&1) || lintian_status=$?
lintian_out=$(grep -v "running with root privileges" <<<"$lintian_out" || true)
check "lintian reports no errors or warnings" test "$lintian_status" -eq 0
if [ -n "$lintian_out" ]; then echo "$lintian_out"; fi
timed lintian

echo "== apt-get install ./$(basename "$deb")"
# What apt-get would bring along (dependencies not installed yet) is purged again at the end.
mapfile -t brought < <(apt-get install -s "$deb" 2>/dev/null | awk '/^Inst / && $2 != "chime" {print $2}')
installed=1
check "apt-get install ./$(basename "$deb")" apt_get install "$deb"
timed "apt-get install"
mapfile -t package_files < <(dpkg -L chime)
echo "installed size: $(dpkg-query -W -f='${Installed-Size}' chime) KiB; package: $(stat -c %s "$deb") bytes"
# Its size has its measured cause in docs/performance.md ("Targets"): 20.6 MB, kept from growing back (two
# programs with a runtime each made it 36.5 MB).
check "the package is at most 24 MB (docs/performance.md, Targets)" test "$(stat -c %s "$deb")" -le 24000000
layout_system
check_installed_files
check "the package owns each file" package_owns_each_file
for binary in /usr/bin/chimed /usr/bin/chime /usr/libexec/chime/chime-relay; do
    check "$binary needs no Swift toolchain (no /opt/swift in its dynamic section or libraries)" sh -c \
        "! readelf -d $binary | grep -q /opt/swift && ! env -u LD_LIBRARY_PATH ldd $binary | grep -Eq '/opt/swift|libswift|not found'"
done
check "the relay links neither Foundation nor ICU" sh -c \
    "! grep -aqE 'FoundationEssentials|icu_7|ucal_open' /usr/libexec/chime/chime-relay"
check "chime runs with an empty environment" sh -c 'env -i /usr/bin/chime --help >/dev/null'
check "the package depends on the libraries the binaries link" sh -c \
    "dpkg-query -W -f='\${Depends}' chime | grep -q libsystemd0 && dpkg-query -W -f='\${Depends}' chime | grep -q libdbus-1-3 && dpkg-query -W -f='\${Depends}' chime | grep -q libcanberra0"
check "the package recommends libcanberra's PulseAudio backend, through which chimed plays sounds" sh -c \
    "dpkg-query -W -f='\${Recommends}' chime | grep -q libcanberra-pulse"
check "the package enabled the user unit for new sessions ($enablement)" \
    test "$(readlink "$enablement")" = /usr/lib/systemd/user/chimed.service

enter_test_home
echo "== a new user manager"
check "the user manager runs" start_manager
check "the enabled chimed starts with a new user manager" until_true 20 prop_is ActiveState active
check "systemctl --user is-enabled chimed: enabled" test "$(systemctl --user is-enabled chimed)" = enabled
check "systemctl --user stop chimed" systemctl --user stop chimed
activation_checks
service_checks
timed "service checks"

echo "== apt-get remove chime"
stop_manager
check "apt-get remove chime" apt_get remove chime
check "remove took the files away" no_file_left
check "remove kept the user's schedule" test -f "$HOME/.local/state/chime/chime.sqlite"
check "remove kept the user's settings" test -f "$HOME/.config/chime/chime.toml"
# Debian keeps a removed package's enablement until purge (a reinstall keeps the admin's choice); the link
# then points at nothing, and a user manager has no chimed to start.
check "the enablement is a dangling link until purge" test -L "$enablement" -a ! -e "$enablement"
check "a new user manager runs" start_manager
check "it knows no chimed.service" prop_is LoadState not-found
stop_manager

echo "== apt-get purge chime"
check "apt-get purge chime" apt_get purge chime
installed=0
check "purge took the enablement away" test ! -L "$enablement"
check "purge left no state of deb-systemd-helper" sh -c '! find /etc/systemd/user /var/lib/systemd -name "chimed*" | grep -q .'
check "purge left no file or folder of the package" nothing_left
check "dpkg knows chime no more" test "$(dpkg-query -W -f='${db:Status-Status}' chime 2>/dev/null || echo not-installed)" = not-installed
check "purge kept the user's schedule" test -f "$HOME/.local/state/chime/chime.sqlite"
timed "remove and purge"
timings+=("total $((SECONDS - started)) s")
echo "timings: $(IFS=,; echo "${timings[*]}")"

summary deb
