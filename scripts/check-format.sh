#!/bin/sh
# Fails when clang-format would change any C file of the tree (.clang-format,
# the house style). The tree is formatted with Debian 12's clang-format 14;
# other versions lay out some constructs differently, so with one of those
# the check is skipped (exit 77) rather than failed.
# Usage: scripts/check-format.sh [--fix]
set -u
cd "$(dirname "$0")/.."

if ! command -v clang-format >/dev/null; then
	echo "check-format: clang-format is not installed (scripts/install-deps.sh --tests)"
	exit 77
fi
version=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$version" != 14 ]; then
	echo "check-format: clang-format $version, not 14: skipped"
	exit 77
fi
if [ -d .git ] || git rev-parse --git-dir >/dev/null 2>&1; then
	# New files too: they are checked before they are committed, not after.
	files=$(git ls-files --cached --others --exclude-standard '*.c' '*.h')
else
	files=$(find common daemon cli tests -name '*.[ch]' | sort)
fi
if [ "${1:-}" = "--fix" ]; then
	# shellcheck disable=SC2086
	exec clang-format -i $files
fi
# shellcheck disable=SC2086
report=$(clang-format --dry-run --Werror $files 2>&1) && exit 0
printf '%s\n' "$report" | head -n 200
echo "check-format: these files differ from .clang-format; scripts/check-format.sh --fix formats them"
exit 1
