/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bytes become the data area of a perf ring; the fuzzer walks it the way
 * the daemon does and decodes every record with two event formats (fgd's
 * sampling event and its tracking event, plus user regs and stack).
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "perf/record.h"
#include "perf/ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PAGE 4096
#define DATA 65536

static const struct fg_record_fmt fmts[] = {
	{
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_CALLCHAIN,
		.sample_id_all = true,
	},
	{
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
			       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = 0xff0fff,
		.sample_id_all = true,
	},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *mem;
	struct perf_event_mmap_page *meta;
	struct fg_ring ring;

	if (size < 8 || size > DATA)
		return 0;
	if (!mem && !(mem = aligned_alloc(PAGE, PAGE + DATA)))
		abort();
	memset(mem, 0, PAGE);
	meta = (struct perf_event_mmap_page *)mem;
	/* First 8 bytes: where the producer started, so records wrap anywhere. */
	memcpy(&meta->data_tail, data, 8);
	meta->data_head = meta->data_tail + (size - 8);
	for (size_t i = 0; i < size - 8; i++)
		mem[PAGE + ((meta->data_tail + i) & (DATA - 1))] = data[8 + i];
	if (fg_ring_init(&ring, mem, PAGE, DATA) < 0)
		abort();
	fg_ring_read_init(&ring);
	for (;;) {
		const struct perf_event_header *h;
		struct fg_record rec;
		int r = fg_ring_read_event(&ring, &h);

		if (r <= 0)
			break;
		for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
			if (fg_record_parse(h, &fmts[i], &rec) == 0 &&
			    rec.type == PERF_RECORD_SAMPLE)
				for (uint64_t j = 0; j < rec.sample.nr; j++)
					(void)__atomic_load_n(&rec.sample.ips[j], __ATOMIC_RELAXED);
	}
	fg_ring_read_done(&ring);
	fg_ring_done(&ring);
	return 0;
}
