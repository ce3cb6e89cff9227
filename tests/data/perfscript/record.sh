#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Re-records the perf script excerpts in this directory (as root, perf 6.1,
# no hardware PMU, hence cpu-clock). Tests never run this: the text is
# committed so that the importer is tested against what perf really prints.
# Each excerpt keeps the first few samples of every thread, to stay small.
#
#   tests/data/perfscript/record.sh build/tests/programs/fgtest-perfscript
#
# perf 6.1 here sometimes aborts while writing build-ids ("assertion failed
# at util/build-id.c", then "stack smashing detected"); run it again.
# Recording with -B avoids that but loses the inlined frames.
set -eu
prog=${1:?usage: record.sh path/to/fgtest-perfscript}
out=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The first $1 samples (blank-line separated) of every comm.
keep() {
	awk -v n="$1" 'BEGIN { RS = ""; ORS = "\n\n" }
		{ split($0, l, "\n"); c = l[1]; sub(/ +[0-9].*/, "", c)
		  if (seen[c]++ < n) print }'
}

# --sample-cpu puts the [cpu] field in the default output.
perf record -q -F 499 -g --sample-cpu -e cpu-clock -o "$tmp/fp.data" "$prog" 0.5
perf script -i "$tmp/fp.data" | keep 4 >"$out/fp-default.txt"
perf script -i "$tmp/fp.data" -F comm,pid,tid,ip,sym,dso | keep 3 >"$out/fp-comm-pid-tid.txt"
perf script -i "$tmp/fp.data" -F comm,tid,time,event,ip,sym,dso,period | keep 3 \
	>"$out/fp-tid-time-period.txt"
perf script -i "$tmp/fp.data" -F comm,pid,tid,cpu,time,event,ip,sym,dso | keep 3 \
	>"$out/fp-pid-tid-cpu.txt"
# --header adds '#' comment lines the importer must skip.
perf script -i "$tmp/fp.data" --header | sed -n '1,12p' >"$out/fp-header.txt"
perf script -i "$tmp/fp.data" | keep 2 >>"$out/fp-header.txt"

# Without -g every sample is one line, comm right-aligned.
perf record -q -F 499 -e cpu-clock -o "$tmp/nog.data" "$prog" 0.2
perf script -i "$tmp/nog.data" | head -n 12 >"$out/nog-default.txt"

# Two events in one file.
perf record -q -F 499 -g -e cpu-clock -e task-clock -o "$tmp/multi.data" "$prog" 0.3
perf script -i "$tmp/multi.data" | keep 4 >"$out/multi-event.txt"

# DWARF unwinding is what makes perf 6.1 print inlined frames.
perf record -q -F 499 --call-graph dwarf,16384 -e cpu-clock -o "$tmp/dwarf.data" "$prog" 0.3
perf script -i "$tmp/dwarf.data" | keep 2 >"$out/dwarf-inline.txt"

