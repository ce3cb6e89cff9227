/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Consumer side of a BPF ring buffer (BPF_MAP_TYPE_RINGBUF), in the shape of
 * common/perf/ring.h: read_init snapshots the producer position (load-acquire),
 * read walks the records up to that snapshot, read_done publishes the
 * consumer position (store-release) so the kernel may reuse the space.
 *
 * Why not libbpf's ring_buffer__consume(): it goes on for as long as the
 * producer keeps writing, so a program that writes faster than its records
 * are handled keeps the caller in it for ever (an off-CPU storm held fgd's
 * loop for 1.7 s at a time). A snapshot bounds a read by what the ring held
 * when it began, and the caller may stop before it (a time budget) and go
 * on at the next read.
 *
 * The kernel maps the data area twice in a row, so a record that wraps the
 * end reads whole: no copy. Pure: it works on any memory laid out like the
 * mmap, which is how the tests feed it synthesized rings.
 */

#include <stddef.h>
#include <stdint.h>

struct fg_bpfring {
	uint64_t *consumer;       /* borrowed: consumer_pos, the page the consumer writes */
	const uint64_t *producer; /* borrowed: producer_pos, the first page the kernel writes */
	const uint8_t *data;      /* borrowed: the data area, mapped twice in a row */
	uint64_t mask;            /* data area size - 1 */
	uint64_t head;            /* the producer position read_init saw */
	uint64_t tail;            /* the consumer position, published by read_done */
};

/*
 * Sets up r over a ring's pages (all borrowed until r is no longer used):
 * consumer, the consumer position's page; producer, the producer
 * position's; data, its data area of data_size bytes (a power of two)
 * followed by the same area again. 0, or -EINVAL if data_size is not a
 * power of two of at least 8.
 */
int fg_bpfring_init(struct fg_bpfring *r, uint64_t *consumer, const uint64_t *producer,
		    const void *data, size_t data_size);

/* Snapshots the producer position. Records committed later wait for the next round. */
void fg_bpfring_read_init(struct fg_bpfring *r);

/*
 * Stores the next committed record's sample in *ret (borrowed until
 * read_done: the kernel may reuse its space after that) and its length in
 * *ret_len, and returns 1. Returns 0 when the snapshot is exhausted, or at
 * a record still being written (those after it wait for it, as the
 * kernel's own consumers do). Discarded records are skipped. A header that
 * cannot be right (a length past the snapshot or the ring) means the ring
 * cannot be walked further: everything up to the snapshot is skipped and
 * -EBADMSG returned.
 */
int fg_bpfring_read(struct fg_bpfring *r, const void **ret, uint32_t *ret_len);

/* Publishes the consumer position to the kernel. */
void fg_bpfring_read_done(struct fg_bpfring *r);

/* Bytes committed or reserved but not yet consumed, as of the last snapshot. */
static inline uint64_t fg_bpfring_pending(const struct fg_bpfring *r)
{
	return r->head - r->tail;
}
