#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages that building, testing and the demo need.
# Idempotent: does nothing when everything is already installed. `--list` prints the package names.
set -euo pipefail

packages=(
    # build
    pkg-config libdbus-1-dev libsystemd-dev libsqlite3-dev
    # notification sounds: libcanberra (build), the freedesktop sound theme it plays from, its PulseAudio
    # backend; the tests hear them from a PulseAudio null sink (pulseaudio) recorded with parec
    # (pulseaudio-utils, also pactl)
    libcanberra-dev sound-theme-freedesktop libcanberra-pulse pulseaudio pulseaudio-utils
    # a private bus, gdbus (an independent D-Bus peer in tests), dbus-monitor (docs examples)
    dbus-daemon dbus dbus-bin libglib2.0-bin
    # a headless notification server for the tests and the demo
    python3-dbusmock
    # a real notification server in the tests (dunst on a virtual X display, screenshots of it)
    dunst xvfb imagemagick
    # the other servers of the compatibility matrix (docs/servers.md): two on X, mako under headless sway;
    # clicks on their popups (xdotool) and screenshots of sway's screen (grim)
    xfce4-notifyd notification-daemon mako-notifier sway xdotool grim
    # KDE Plasma's shell on X with its activity manager (~0.9 GB installed with their dependencies)
    plasma-workspace plasma-desktop kactivitymanagerd
    # GNOME Shell, headless (its freedesktop notifications are a gjs service of their own), and dconf's
    # command (dconf compile) to give it per-app notification settings as a desktop stores them
    gnome-shell gjs dconf-cli
    # Flatpak's sandbox for the identity tests (AppIsolationTests, FlatpakProxyTests): bubblewrap, as
    # Flatpak runs apps, and the D-Bus proxy Flatpak puts between an app and the session bus; the app in
    # the sandbox is python3 with dbus-python and GLib's main loop
    bubblewrap xdg-dbus-proxy python3-dbus python3-gi
    # oracles for calendar rules (systemd-analyze comes with systemd)
    python3-dateutil systemd
    # chimed's user unit needs the session bus as a user service (dbus.socket)
    dbus-user-session
    # the Debian package: make deb (dpkg-buildpackage, debhelper) and its checks (lintian)
    debhelper dpkg-dev lintian
)

if [ "${1:-}" = --list ]; then
    echo "${packages[@]}"
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
echo "Installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

if ! command -v swift >/dev/null 2>&1; then
    echo "Swift 6.1 or later is needed and was not found on PATH; install a toolchain from swift.org" >&2
    exit 1
fi
