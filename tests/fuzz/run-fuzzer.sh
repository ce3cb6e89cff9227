#!/bin/sh
# Runs one libFuzzer target for a bounded time: new inputs and any crash go
# under the build directory, the committed seeds are read only.
# usage: run-fuzzer.sh FUZZER SEEDS_DIR WORK_DIR SECONDS
set -eu
fuzzer=$1 seeds=$2 work=$3 seconds=$4
mkdir -p "$work/corpus"
# -error_exitcode: libFuzzer's own (77) is what meson takes for a skipped test.
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 \
	-artifact_prefix="$work/" -print_final_stats=1 "$work/corpus" "$seeds"
