/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "perf/ring.h"

/* Record sizes are a u16, so one scratch buffer this big holds any of them. */
#define MAX_RECORD_SIZE 65536

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

int fg_ring_init(struct fg_ring *r, void *base, size_t page_size, size_t data_size)
{
	struct perf_event_mmap_page *meta = base;
	uint64_t offset = page_size;

	if (!is_pow2(page_size) || !is_pow2(data_size))
		return -EINVAL;
	/* Kernels since 4.1 say where the data lives; older ones use page 1. */
	if (meta->data_offset && meta->data_size) {
		if (!is_pow2(meta->data_size) || meta->data_size != data_size)
			return -EINVAL;
		offset = meta->data_offset;
	}
	*r = (struct fg_ring){
		.meta = meta,
		.data = (const uint8_t *)base + offset,
		.mask = data_size - 1,
		.scratch = malloc(MAX_RECORD_SIZE),
	};
	if (!r->scratch)
		return -ENOMEM;
	r->tail = meta->data_tail;
	r->head = r->tail;
	return 0;
}

void fg_ring_done(struct fg_ring *r)
{
	free(r->scratch);
	*r = (struct fg_ring){};
}

void fg_ring_read_init(struct fg_ring *r)
{
	/* Pairs with the kernel's store of data_head after writing the records. */
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
}

int fg_ring_read_event(struct fg_ring *r, const struct perf_event_header **ret)
{
	uint64_t avail = r->head - r->tail;
	uint64_t off = r->tail & r->mask;
	uint64_t size = r->mask + 1;
	const struct perf_event_header *h;
	struct perf_event_header hdr;

	if (avail == 0)
		return 0;
	/* The kernel keeps both ends 8-aligned; anything else would let a header straddle the end. */
	if (avail < sizeof(hdr) || avail > size || (r->tail | r->head) % 8)
		goto corrupt;

	/* Records are 8-aligned and the area a multiple of 8: a header never wraps. */
	h = (const struct perf_event_header *)(r->data + off);
	memcpy(&hdr, h, sizeof(hdr));
	if (hdr.size < sizeof(hdr) || hdr.size % 8 || hdr.size > avail)
		goto corrupt;

	if (off + hdr.size > size) {
		uint64_t first = size - off;

		memcpy(r->scratch, r->data + off, first);
		memcpy(r->scratch + first, r->data, hdr.size - first);
		h = (const struct perf_event_header *)r->scratch;
	}
	r->tail += hdr.size;
	*ret = h;
	return 1;

corrupt:
	r->tail = r->head;
	return -EBADMSG;
}

void fg_ring_read_done(struct fg_ring *r)
{
	/* Our reads of the records must complete before the kernel may overwrite them. */
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}
