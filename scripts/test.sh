#!/bin/sh
# Installs what is missing, builds fgd three ways and runs every test:
#   build/        the normal build: unit, integration and fuzz-corpus tests, and the
#                 tree's layout (scripts/check-format.sh: clang-format 14)
#   build-asan/   the same tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   build-fuzz/   clang + libFuzzer: each fuzz target fuzzes for FUZZ_SECONDS (default 30)
#   build-nobpf/  without BPF (-Dbpf=disabled): the unit tests, and off-CPU's error paths
# Ends with "N passed, N failed, N skipped". Needs root for the integration tests.
set -u
cd "$(dirname "$0")/.."
fuzz_seconds=${FUZZ_SECONDS:-30}

./scripts/install-deps.sh --tests || exit 1

setup() { # dir, options...
	dir=$1
	shift
	if [ -d "$dir" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi || { echo "test: meson setup $dir failed" >&2; exit 1; }
}

setup build
CC=gcc setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
CC=clang setup build-fuzz -Dfuzz=true -Dfuzz_seconds="$fuzz_seconds" \
	-Db_sanitize=address,undefined -Db_lundef=false
setup build-nobpf -Dbpf=disabled

for dir in build build-asan build-fuzz build-nobpf; do
	ninja -C "$dir" || { echo "test: the $dir build failed"; echo "0 passed, 1 failed"; exit 1; }
done

# Sanitizers abort on the first report, so a report is a failed test.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

# Tests write only in their temporary directories: what a run adds to the
# checkout (beside the build trees) is a failure of its own, named below.
stray_before=$(mktemp)
stray_after=$(mktemp)
trap 'rm -f "$stray_before" "$stray_after"' EXIT
untracked() { git status --porcelain --untracked-files=all 2>/dev/null | sed -n 's/^?? //p' | sort; }
untracked >"$stray_before"

meson test -C build --print-errorlogs
meson test -C build-asan --print-errorlogs --suite unit --suite integration --suite fuzz \
	--timeout-multiplier 3
meson test -C build-fuzz --print-errorlogs --suite fuzz
meson test -C build-nobpf --print-errorlogs --suite unit
meson test -C build-nobpf --print-errorlogs --suite integration --logbase testlog-integration offcpu

untracked >"$stray_after"
python3 - "$stray_before" "$stray_after" build build-asan build-fuzz build-nobpf <<'PY'
import glob, json, os, sys
passed = failed = skipped = 0
before, after = (set(open(p).read().split("\n")) - {""} for p in sys.argv[1:3])
stray = sorted(after - before)
if stray:
    failed += 1
    print(f"test: the tests left files in the checkout: {' '.join(stray[:10])}")
sys.argv[1:3] = []
for d in sys.argv[1:]:
    paths = sorted(glob.glob(os.path.join(d, "meson-logs", "testlog*.json")))
    if not paths:
        failed += 1
        print(f"test: no results from {d}")
        continue
    for line in (line for path in paths for line in open(path)):
        t = json.loads(line)
        result = t["result"]
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
            print(f"test: {d}: {t['name']}: {result}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
PY
