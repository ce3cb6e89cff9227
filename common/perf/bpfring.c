/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/bpf.h>
#include <stdbool.h>

#include "perf/bpfring.h"

int fg_bpfring_init(struct fg_bpfring *r, uint64_t *consumer, const uint64_t *producer,
		    const void *data, size_t data_size)
{
	if (data_size < 8 || (data_size & (data_size - 1)))
		return -EINVAL;
	*r = (struct fg_bpfring){
		.consumer = consumer,
		.producer = producer,
		.data = data,
		.mask = data_size - 1,
	};
	r->tail = __atomic_load_n(consumer, __ATOMIC_RELAXED);
	r->head = r->tail;
	return 0;
}

void fg_bpfring_read_init(struct fg_bpfring *r)
{
	/* Pairs with the kernel's store of producer_pos once a record is reserved. */
	r->head = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
}

int fg_bpfring_read(struct fg_bpfring *r, const void **ret, uint32_t *ret_len)
{
	for (;;) {
		uint64_t avail = r->head - r->tail, total;
		const uint32_t *hdr;
		uint32_t len;
		bool discarded;

		if (avail == 0)
			return 0;
		/* The kernel keeps both ends 8-aligned, and never more ahead than the ring holds. */
		if (avail < BPF_RINGBUF_HDR_SZ || avail > r->mask + 1 || r->tail % 8)
			goto corrupt;
		/* The data area follows itself: a record that wraps the end reads whole. */
		hdr = (const uint32_t *)(r->data + (r->tail & r->mask));
		/* Pairs with the kernel's store of the length as it commits the record. */
		len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		if (len & BPF_RINGBUF_BUSY_BIT)
			return 0;
		discarded = len & BPF_RINGBUF_DISCARD_BIT;
		len &= ~BPF_RINGBUF_DISCARD_BIT;
		total = ((uint64_t)len + BPF_RINGBUF_HDR_SZ + 7) & ~7ULL;
		if (total > avail)
			goto corrupt;
		r->tail += total;
		if (discarded)
			continue;
		*ret = (const uint8_t *)hdr + BPF_RINGBUF_HDR_SZ;
		*ret_len = len;
		return 1;
	}

corrupt:
	r->tail = r->head;
	return -EBADMSG;
}

void fg_bpfring_read_done(struct fg_bpfring *r)
{
	/* Our reads of the records must complete before the kernel may overwrite them. */
	__atomic_store_n(r->consumer, r->tail, __ATOMIC_RELEASE);
}
