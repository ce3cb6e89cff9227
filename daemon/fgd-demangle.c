/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fgd-demangle.h"
#include "macro.h"

int fg_demangle(const char *name, char *buf, size_t size)
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
