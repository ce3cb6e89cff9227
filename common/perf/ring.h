/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Consumer side of a perf_event mmap ring buffer, after tools/lib/perf's
 * mmap.c: read_init snapshots data_head (load-acquire), read_event walks the
 * records up to that snapshot, read_done publishes data_tail (store-release)
 * so the kernel may reuse the space.
 *
 * A record that wraps the end of the data area is copied into a scratch
 * buffer; the pointer read_event returns is valid until the next call.
 *
 * Pure: it works on any memory laid out like the mmap, which is how the
 * tests feed it synthesized rings.
 */

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct fg_ring {
	struct perf_event_mmap_page *meta; /* borrowed: the control page */
	const uint8_t *data;               /* borrowed: the data area */
	uint64_t mask;                     /* data area size - 1 */
	uint64_t head;                     /* snapshot taken by read_init */
	uint64_t tail;                     /* consumer position, published by read_done */
	uint8_t *scratch;                  /* owned: copy of a wrapping record */
};

/*
 * Sets up r over an mmap of 1 + 2^n pages at base (borrowed until
 * fg_ring_done()). The data area is found through the control page's
 * data_offset/data_size, or follows the first page when those are zero.
 * Returns 0, -EINVAL if the sizes are not a power of two, or -ENOMEM.
 */
int fg_ring_init(struct fg_ring *r, void *base, size_t page_size, size_t data_size);
void fg_ring_done(struct fg_ring *r);

/* Snapshots the producer position. Records written later wait for the next round. */
void fg_ring_read_init(struct fg_ring *r);

/*
 * Stores the next record in *ret (borrowed until the next call or
 * read_done) and returns 1, or returns 0 when the snapshot is exhausted.
 * A header that cannot be right (size below 8, above what is there, or not
 * a multiple of 8) means the ring cannot be walked further: everything up
 * to the snapshot is skipped and -EBADMSG returned.
 */
int fg_ring_read_event(struct fg_ring *r, const struct perf_event_header **ret);

/* Publishes the consumer position to the kernel. */
void fg_ring_read_done(struct fg_ring *r);

/* Bytes written but not yet consumed, per the last snapshot. */
static inline uint64_t fg_ring_pending(const struct fg_ring *r)
{
	return r->head - r->tail;
}
