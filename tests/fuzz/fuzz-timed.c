/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timed profiles come from files a user names (fgctl heatmap --from timed)
 * and from fgd's replies: read the text form (or, when the first byte is
 * odd, perf script text with its times), then draw what was read as a
 * heat map, a range and the text form again.
 */
#include <errno.h>
#include <string.h>

#include "profile/folded.h"
#include "profile/lines.h"
#include "profile/perfscript.h"
#include "profile/timed.h"
#include "render/heatmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int discard(void *ctx, const void *buf, size_t len)
{
	*(size_t *)ctx += len;
	return 0;
}

static int feed_timed(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	int r = fg_timed__add_line(ctx, line, len);

	/* A malformed line, or one with a time out of range, is skipped as fgctl skips it. */
	return r == -EINVAL || r == -ERANGE ? 0 : r;
}

static int feed_perf(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	return fg_perfscript__feed(ctx, line, len, lineno);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags = size > 0 ? data[0] : 0;
	struct fg_heatmap_opts o = { .bucket_ms = 1 + (flags >> 1) * 4 };
	struct fg_timed *t = NULL;
	struct fg_perfscript *p = NULL;
	struct fg_heatmap *h = NULL;
	struct fg_folded *range = fg_folded__new();
	size_t cursor = 0, written = 0, n;
	int r;

	if (!range || fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &t) < 0)
		goto out;
	/* A small cap so that -E2BIG paths run too. */
	fg_folded__set_max_stacks(fg_timed__model(t), 64);
	if (flags & 1) {
		if (fg_perfscript__new_timed(t, NULL, &p) < 0)
			goto out;
		r = fg_lines_split((const char *)data, size, feed_perf, p);
		if (r >= 0)
			(void)fg_perfscript__finish(p);
	} else {
		(void)fg_lines_split((const char *)data, size, feed_timed, t);
	}
	if (fg_timed__sort(t) < 0)
		goto out;
	n = fg_timed__n_samples(t);
	if (n > 0) {
		const struct fg_timed_sample *v = fg_timed__samples(t);

		(void)fg_timed__range(t, v[0].time, v[n - 1].time + 1, NULL, NULL, range);
	}
	if (fg_heatmap__new(t, &o, &h) == 0)
		(void)fg_heatmap__json(h, discard, &written);
	while (fg_timed__emit(t, &cursor, discard, &written, 4096) == 0)
		;
out:
	fg_heatmap__free(h);
	fg_perfscript__free(p);
	fg_timed__free(t);
	fg_folded__free(range);
	return 0;
}
