/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <libiberty/demangle.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "symbols/fgd-demangle.h"

/*
 * Where libiberty's output goes: out, up to its end. Demangling is only as
 * fast as its output is short, and a short name can stand for a huge one:
 * a substitution (S0_) repeats a type already named, so a type made of two
 * of the one before doubles at each level: 230 bytes of a crafted name
 * print as 4 GiB (c++filt took 19 s, and cplus_demangle() builds that
 * string in memory). So the output stops where it is cut anyway: once out
 * is full, the sink jumps back out of the demangler. libiberty's callback
 * interface allocates nothing (its tables are on the stack), so leaving it
 * that way leaks nothing (ASan's leak check over test-demangle agrees).
 */
struct sink {
	char out[FG_DEMANGLE_MAX_OUT];
	size_t len;
	jmp_buf full;
};

static void sink_write(const char *s, size_t n, void *opaque)
{
	struct sink *k = opaque;
	size_t room = sizeof(k->out) - k->len;

	/* The Rust demangler writes an empty identifier as (NULL, 0): found by fuzz-demangle. */
	if (n == 0)
		return;
	memcpy(k->out + k->len, s, MIN(n, room));
	k->len += MIN(n, room);
	if (n >= room)
		longjmp(k->full, 1);
}

/* name demangled into k->out, k->len bytes of it: true, or false if it is not a mangled name. */
static bool demangle_into(const char *name, struct sink *k)
{
	/*
	 * As cplus_demangle(DMGL_AUTO) does it: Rust first, as legacy Rust names
	 * are Itanium C++ names too, then C++. No DMGL_PARAMS: perf report's
	 * default form. No DMGL_VERBOSE, which would keep Rust's hashes.
	 */
	k->len = 0;
	if (setjmp(k->full) != 0)
		return true; /* full: the rest would be cut */
	if (rust_demangle_callback(name, DMGL_AUTO, sink_write, k))
		return true;
	/* A Rust attempt can fail after it wrote some. */
	k->len = 0;
	return cplus_demangle_v3_callback(name, DMGL_AUTO, sink_write, k);
}

static int demangle(const char *name, char *buf, size_t size)
{
	struct sink k;
	size_t len;

	/* Itanium C++ and Rust legacy start with _Z, Rust v0 with _R; C names never do. */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') || size == 0)
		return 0;
	if (strnlen(name, FG_DEMANGLE_MAX_IN + 1) > FG_DEMANGLE_MAX_IN)
		return 0;
	if (!demangle_into(name, &k) || k.len == 0)
		return 0;
	len = MIN(k.len, size - 1);
	memcpy(buf, k.out, len);
	buf[len] = '\0';
	return (int)len;
}

int fg_demangle(const char *name, char *buf, size_t size)
{
	static const char plt[] = "@plt";
	char stem[FG_DEMANGLE_MAX_IN + 1];
	size_t len = strnlen(name, FG_DEMANGLE_MAX_IN + 1);
	int n;

	/*
	 * A PLT entry (fgd-plt.h): the function demangled, then "@plt", as perf
	 * writes it. libiberty would take the suffix for a clone's, and drop it.
	 */
	if (len <= sizeof(plt) - 1 || len > FG_DEMANGLE_MAX_IN ||
	    strcmp(name + len - (sizeof(plt) - 1), plt) != 0)
		return demangle(name, buf, size);
	len -= sizeof(plt) - 1;
	memcpy(stem, name, len);
	stem[len] = '\0';
	n = demangle(stem, buf, size);
	if (n <= 0)
		return n;
	len = MIN(sizeof(plt) - 1, size - 1 - (size_t)n);
	memcpy(buf + n, plt, len);
	buf[(size_t)n + len] = '\0';
	return n + (int)len;
}
