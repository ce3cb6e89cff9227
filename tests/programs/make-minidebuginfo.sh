#!/bin/sh
# Writes OUT: IN stripped of everything, with IN's symbol table in a
# MiniDebugInfo section (.gnu_debugdata: an xz-compressed ELF holding only
# .symtab), as Fedora's find-debuginfo makes them; also the compressed
# section alone as XZ_OUT (a seed for the fuzzer).
# usage: make-minidebuginfo.sh OBJCOPY XZ IN OUT XZ_OUT
set -eu
objcopy=$1 xz=$2 in=$3 out=$4 xz_out=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$objcopy" --only-keep-debug "$in" "$tmp/debug"
"$objcopy" --strip-debug --remove-section=.gdb_index --remove-section=.comment "$tmp/debug" "$tmp/mini"
"$xz" --format=xz --check=crc32 -c "$tmp/mini" >"$tmp/mini.xz"
"$objcopy" --strip-all "$in" "$tmp/stripped"
"$objcopy" --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/stripped" "$out"
cp "$tmp/mini.xz" "$xz_out"
