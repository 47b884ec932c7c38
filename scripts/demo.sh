#!/usr/bin/env bash
# Sets everything up and shows chimed scheduling and delivering notifications, with no desktop needed:
# a private D-Bus session bus, chimed, the chime CLI, and a headless notification server
# (python-dbusmock) that records what it is sent. Everything it starts is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
echo "== building chimed, its relay and chime"
swift build --product chimed >/dev/null
swift build --product chime-relay >/dev/null
swift build --product chime >/dev/null
bin=$(swift build --show-bin-path)

work=$(mktemp -d /tmp/chime-demo.XXXXXX)
pids=()
cleanup() {
    # Newest first: the server and chimed stop before the bus they use.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[i]}" 2>/dev/null || true
        wait "${pids[i]}" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/services"
cat >"$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$work</listen>
  <servicedir>$work/services</servicedir>
  <policy context="default"><allow send_destination="*"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
dbus-daemon --config-file="$work/bus.conf" --nofork --print-address=3 3>"$work/address" 2>/dev/null &
pids+=($!)
until [ -s "$work/address" ]; do sleep 0.05; done
export DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$work/address")
echo "== a private session bus at $DBUS_SESSION_BUS_ADDRESS"

# Its own state, settings and group files, so the demo never touches your schedule.
mkdir -p "$work/groups"
cp config/groups/first-friday.toml config/groups/daily-quote.toml "$work/groups/"
"$bin/chimed" --state-dir "$work/state" --config "$work/chime.toml" --groups-dir "$work/groups" \
    2> >(sed -u 's/^/   chimed | /' >&2) &
pids+=($!)
gdbus wait --session --timeout 10 io.chime.Chime1
echo "== chimed owns io.chime.Chime1; no notification server is running yet"

echo '$ chime send --in 1s -u critical -A open="Open" "Hello" "World"'
"$bin/chime" send --in 1s -u critical -A open="Open" "Hello" "World"
echo '$ chime send --in 3s "Pizza Time" "Scheduled three seconds ahead"'
"$bin/chime" send --in 3s "Pizza Time" "Scheduled three seconds ahead"
echo '$ chime pending'
"$bin/chime" pending
sleep 2
echo "== 'Hello' came due with no server: chimed kept it (see its line above). Starting a notification server."
/usr/bin/python3 -m dbusmock --template notification_daemon \
    -p '{"capabilities": "actions body body-markup persistence"}' -l "$work/server.log" &
pids+=($!)
gdbus wait --session --timeout 10 org.freedesktop.Notifications
sleep 2.5
echo "== what the notification server received (app, replaces_id, icon, summary, body, actions, hints, timeout):"
sed 's/^/   server | /' "$work/server.log"
echo "== groups: two example files were in the groups folder at start; a third is written now"
cat >"$work/groups/ticks.toml" <<'TOML'
[[entry]]
id = "tick"
every = "every 2 seconds"
count = 3
summary = "Tick {n}"
template = true
TOML
sleep 7
echo '$ chime groups'
"$bin/chime" groups
echo '$ chime pending --next 2'
"$bin/chime" pending --next 2
echo '$ chime history --limit 8'
"$bin/chime" history --limit 8
echo "== what the server received since (the three ticks):"
tail -n 3 "$work/server.log" | sed 's/^/   server | /'
echo "== and a rule preview, no daemon needed:"
echo '$ chime next --every "every month on the first friday at 20:15" --count 3'
"$bin/chime" next --every "every month on the first friday at 20:15" --count 3
