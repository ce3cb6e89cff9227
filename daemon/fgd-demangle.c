/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fgd-demangle.h"
#include "macro.h"

static int demangle(const char *name, char *buf, size_t size)
{
	_cleanup_free_ char *out = NULL;
	size_t len;

	/* Itanium C++ and Rust legacy start with _Z, Rust v0 with _R; C names never do. */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') || size == 0)
		return 0;
	if (strnlen(name, FG_DEMANGLE_MAX_IN + 1) > FG_DEMANGLE_MAX_IN)
		return 0;
	/*
	 * DMGL_AUTO tries Rust, then Itanium C++. No DMGL_PARAMS: perf report's
	 * default form. No DMGL_VERBOSE, which would keep Rust's hashes.
	 * cplus_demangle returns NULL both for a name it cannot demangle and
	 * when out of memory; the mangled name is kept either way.
	 */
	out = cplus_demangle(name, DMGL_AUTO);
	if (!out)
		return 0;
	len = strlen(out);
	if (len == 0)
		return 0;
	len = MIN(len, size - 1);
	memcpy(buf, out, len);
	buf[len] = '\0';
	return (int)MIN(len, (size_t)INT32_MAX);
}

int fg_demangle(const char *name, char *buf, size_t size)
{
	static const char plt[] = "@plt";
	char stem[FG_DEMANGLE_MAX_IN + 1];
	size_t len = strnlen(name, FG_DEMANGLE_MAX_IN + 1);
	int n;

	/*
	 * A PLT entry (fgd-elf.h): the function demangled, then "@plt", as perf
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
