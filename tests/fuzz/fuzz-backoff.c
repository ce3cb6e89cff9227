/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl push waits as long as a server's Retry-After header asks, up to a
 * cap: the header's value comes from the network (the store, or anything
 * between). Every input must parse or be refused, never crash, and a wait
 * parsed is never below 0 or above the cap, whatever the clock says.
 */
#include <stdint.h>
#include <stdlib.h>

#include "proto/backoff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int64_t nows[] = { 1710074096000LL, 0, -1, INT64_MIN, INT64_MAX };
static const int64_t caps[] = { 300000, 0, INT64_MAX };

/* The input's own bytes as the random source: the jitter's arithmetic sees any draw. */
struct draws {
	const uint8_t *data;
	size_t size, pos;
};

static uint64_t next_draw(void *ctx)
{
	struct draws *d = ctx;
	uint64_t v = 0;

	for (int i = 0; i < 8 && d->size; i++, d->pos = (d->pos + 1) % d->size)
		v = v << 8 | d->data[d->pos];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct draws d = { .data = data, .size = size };
	struct fg_backoff b = { .first_ms = 1000, .max_ms = 60000 };

	for (size_t n = 0; n < sizeof(nows) / sizeof(nows[0]); n++)
		for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
			int64_t ms = -1;

			if (fg_retry_after_parse((const char *)data, size, nows[n], caps[c], &ms) ==
				    0 &&
			    (ms < 0 || ms > caps[c]))
				abort();
		}
	for (size_t i = 0; i < 70; i++) {
		int64_t ms = fg_backoff__next(&b, next_draw, &d);

		if (ms < 1 || ms > b.max_ms)
			abort();
	}
	return 0;
}
