#!/bin/sh
# The quickest look at fgd: installs what is missing, builds, starts fgd on a
# private socket, records the whole machine for a few seconds and writes an
# interactive flame graph. Needs root (perf_event_open for every CPU).
# The kernel's idle loop is left out of the picture (--no-idle), and a small
# program of fgd's tests runs beside the machine's own, so that even an idle
# machine's first graph shows code: fgtest-burn, whose hot_a does three times
# hot_b's work.
# Usage: scripts/demo.sh [OUTPUT.svg] [SECONDS]
set -eu
cd "$(dirname "$0")/.."
out=${1:-fgd-demo.svg}
seconds=${2:-5}

./scripts/install-deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null

dir=$(mktemp -d)
sock="$dir/fgd.sock"
./build/daemon/fgd --socket "$sock" >"$dir/fgd.log" 2>&1 &
fgd=$!
burn=
trap 'kill $burn "$fgd" 2>/dev/null; wait $burn "$fgd" 2>/dev/null; rm -rf "$dir"' EXIT INT TERM

# Ready when it answers on its socket.
tries=0
until ./build/cli/fgctl --socket "$sock" status >/dev/null 2>&1; do
	if ! kill -0 "$fgd" 2>/dev/null || [ $tries -ge 300 ]; then
		echo "demo: fgd did not start:" >&2
		cat "$dir/fgd.log" >&2
		exit 1
	fi
	tries=$((tries + 1))
	sleep 0.1
done

./build/tests/programs/fgtest-burn >/dev/null &
burn=$!
./build/cli/fgctl --socket "$sock" record -a -t "$seconds" -F 999 --no-idle -o "$out"
echo "demo: open $out in a browser: click to zoom, Ctrl-F to search"
echo "demo: the whole machine, idle time left out, with fgtest-burn running (main;hot_a and"
echo "      main;hot_b, 3:1); fgctl record -a without --no-idle shows the idle loop too"
