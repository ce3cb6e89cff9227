#!/bin/sh
# Installs, from Debian's archive, whatever fgd needs to build and test that
# is not installed yet. Needs root. Usage: scripts/install-deps.sh [--tests]
set -eu

# liblzma-dev (MiniDebugInfo) and zlib1g-dev (debuglink CRC32) come with libdw-dev; they are
# named because fgd links them itself (zlib also gzips pprof profiles). libiberty-dev: the C++ and Rust demangler.
# clang, bpftool and libbpf-dev build the off-CPU BPF program (daemon/sources/bpf/) and its skeleton.
# libcurl4-openssl-dev: fgctl push's HTTP client (TLS with OpenSSL).
build="meson ninja-build pkg-config gcc libc6-dev libelf-dev libdw-dev liblzma-dev zlib1g-dev libiberty-dev libbpf-dev clang bpftool libsystemd-dev libjson-c-dev libcurl4-openssl-dev"
# clang builds the frame-pointer workloads and the libFuzzer targets; chromium drives the
# browser tests; systemd gives systemd-analyze and systemd-socket-activate; setpriv/useradd run the access-control test as a second user. g++, binutils
# (objcopy) and xz-utils build the debug-info fixtures; libc6-dbg gives libc's static
# functions their names. clang-format checks the tree's layout (scripts/check-format.sh).
# golang-go is Go's own pprof, the judge of fgd's pprof profiles; zsh and fish parse
# their completion files; dpkg-dev, debhelper, fakeroot and lintian build and check the .deb.
tests="golang-go zsh fish dpkg-dev debhelper fakeroot lintian systemd clang clang-format libclang-rt-14-dev g++ binutils xz-utils libc6-dbg python3 chromium chromium-driver util-linux passwd procps"

want=$build
[ "${1:-}" = "--tests" ] && want="$build $tests"

missing=""
for pkg in $want; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
if [ -z "$missing" ]; then
	echo "install-deps: everything is installed"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing:$missing; run as root to install them" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
