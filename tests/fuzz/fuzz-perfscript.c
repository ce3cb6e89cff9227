/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf script text comes from any perf version and any file a user names:
 * fold it with options taken from the first byte, then sort and re-emit.
 */
#include <string.h>

#include "profile/folded.h"
#include "profile/lines.h"
#include "profile/perfscript.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int discard(void *ctx, const void *buf, size_t len)
{
	*(size_t *)ctx += len;
	return 0;
}

static int feed(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	return fg_perfscript__feed(ctx, line, len, lineno);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_perfscript *p = NULL;
	struct fg_perfscript_opts opts = {};
	struct fg_perfscript_stats st;
	size_t cursor = 0, written = 0;
	uint8_t flags = size > 0 ? data[0] : 0;

	if (!f)
		return 0;
	opts.pid = flags & 1;
	opts.tid = flags & 2;
	opts.annotate_kernel = flags & 4;
	opts.annotate_jit = flags & 8;
	opts.addrs = flags & 16;
	opts.no_inline = flags & 32;
	opts.count_samples = flags & 64;
	opts.event_filter = flags & 128 ? "task-clock" : NULL;
	/* A small cap so that -E2BIG paths run too. */
	fg_folded__set_max_stacks(f, 64);
	if (fg_perfscript__new(f, &opts, &p) == 0) {
		if (fg_lines_split((const char *)data, size, feed, p) >= 0)
			(void)fg_perfscript__finish(p);
		fg_perfscript__stats(p, &st);
		if (fg_folded__sort(f) == 0)
			while (fg_folded__emit(f, &cursor, discard, &written, 4096) == 0)
				;
	}
	fg_perfscript__free(p);
	fg_folded__free(f);
	return 0;
}
