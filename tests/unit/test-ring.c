/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "perf/ring.h"
#include "test.h"

#define PAGE 4096
#define DATA 256 /* small, so records wrap quickly */

/* A fake mmap: the control page followed by the data area, plus a producer. */
struct fake {
	uint8_t mem[PAGE + DATA] __attribute__((aligned(8)));
	struct fg_ring ring;
};

static struct perf_event_mmap_page *meta(struct fake *f)
{
	return (struct perf_event_mmap_page *)f->mem;
}

static void fake_init(struct fake *f, uint64_t start)
{
	memset(f->mem, 0, sizeof(f->mem));
	meta(f)->data_head = start;
	meta(f)->data_tail = start;
	ASSERT_OK(fg_ring_init(&f->ring, f->mem, PAGE, DATA));
}

/* Writes a record of `size` bytes whose payload bytes all equal `fill`. */
static void produce(struct fake *f, uint16_t size, uint8_t fill)
{
	uint8_t rec[1024];
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = size };
	uint64_t head = meta(f)->data_head;

	memset(rec, fill, size);
	memcpy(rec, &h, sizeof(h));
	for (uint16_t i = 0; i < size; i++)
		f->mem[PAGE + ((head + i) & (DATA - 1))] = rec[i];
	meta(f)->data_head = head + size;
}

static void expect_record(struct fake *f, uint16_t size, uint8_t fill)
{
	const struct perf_event_header *h;

	ASSERT_EQ(fg_ring_read_event(&f->ring, &h), 1);
	ASSERT_EQ(h->size, size);
	for (uint16_t i = sizeof(*h); i < size; i++)
		ASSERT_EQ(((const uint8_t *)h)[i], fill);
}

TEST(empty_ring_has_nothing)
{
	struct fake f;
	const struct perf_event_header *h;

	fake_init(&f, 0);
	fg_ring_read_init(&f.ring);
	ASSERT_EQ(fg_ring_read_event(&f.ring, &h), 0);
	fg_ring_done(&f.ring);
}

TEST(records_in_order_and_tail_published)
{
	struct fake f;
	const struct perf_event_header *h;

	fake_init(&f, 0);
	produce(&f, 16, 0xa1);
	produce(&f, 40, 0xb2);
	fg_ring_read_init(&f.ring);
	ASSERT_EQ(fg_ring_pending(&f.ring), 56);
	expect_record(&f, 16, 0xa1);
	expect_record(&f, 40, 0xb2);
	ASSERT_EQ(fg_ring_read_event(&f.ring, &h), 0);
	ASSERT_EQ(meta(&f)->data_tail, 0); /* not before read_done */
	fg_ring_read_done(&f.ring);
	ASSERT_EQ(meta(&f)->data_tail, 56);
	fg_ring_done(&f.ring);
}

TEST(snapshot_hides_later_records)
{
	struct fake f;
	const struct perf_event_header *h;

	fake_init(&f, 0);
	produce(&f, 16, 1);
	fg_ring_read_init(&f.ring);
	produce(&f, 16, 2);
	expect_record(&f, 16, 1);
	ASSERT_EQ(fg_ring_read_event(&f.ring, &h), 0);
	fg_ring_read_init(&f.ring);
	expect_record(&f, 16, 2);
	fg_ring_done(&f.ring);
}

TEST(record_wrapping_the_end_is_copied_whole)
{
	struct fake f;

	/* Start 24 bytes before the end so a 64-byte record wraps. */
	fake_init(&f, 10 * DATA - 24);
	produce(&f, 64, 0x5c);
	produce(&f, 24, 0x6d);
	fg_ring_read_init(&f.ring);
	expect_record(&f, 64, 0x5c);
	expect_record(&f, 24, 0x6d);
	fg_ring_read_done(&f.ring);
	ASSERT_U64_EQ(meta(&f)->data_tail, 10 * DATA - 24 + 88);
	fg_ring_done(&f.ring);
}

TEST(many_laps_around_the_ring)
{
	struct fake f;

	fake_init(&f, 0);
	for (int lap = 0; lap < 100; lap++) {
		uint16_t size = (uint16_t)(8 + 8 * (lap % 20));

		produce(&f, size, (uint8_t)lap);
		fg_ring_read_init(&f.ring);
		expect_record(&f, size, (uint8_t)lap);
		fg_ring_read_done(&f.ring);
	}
	fg_ring_done(&f.ring);
}

static void expect_corrupt(uint16_t bad_size)
{
	struct fake f;
	const struct perf_event_header *h;

	fake_init(&f, 0);
	produce(&f, 16, 7);
	fg_ring_read_init(&f.ring);
	expect_record(&f, 16, 7);
	produce(&f, 32, 8);
	/* Overwrite the second header's size with garbage. */
	memcpy(f.mem + PAGE + 16 + 6, &bad_size, 2);
	fg_ring_read_init(&f.ring);
	ASSERT_ERR(fg_ring_read_event(&f.ring, &h), -EBADMSG);
	ASSERT_EQ(fg_ring_read_event(&f.ring, &h), 0);
	fg_ring_read_done(&f.ring);
	ASSERT_EQ(meta(&f)->data_tail, 48); /* skipped to the head, not beyond */
	fg_ring_done(&f.ring);
}

TEST(corrupt_headers_skip_to_head)
{
	expect_corrupt(0);   /* smaller than a header */
	expect_corrupt(4);   /* smaller than a header */
	expect_corrupt(20);  /* not a multiple of 8 */
	expect_corrupt(512); /* more than was written */
}

TEST(head_beyond_ring_size_is_corrupt)
{
	struct fake f;
	const struct perf_event_header *h;

	fake_init(&f, 0);
	meta(&f)->data_head = DATA * 2;
	fg_ring_read_init(&f.ring);
	ASSERT_ERR(fg_ring_read_event(&f.ring, &h), -EBADMSG);
	fg_ring_done(&f.ring);
}

TEST(init_rejects_bad_sizes)
{
	static uint8_t mem[PAGE + DATA] __attribute__((aligned(8)));
	struct fg_ring r;

	ASSERT_ERR(fg_ring_init(&r, mem, PAGE, 100), -EINVAL);
	ASSERT_ERR(fg_ring_init(&r, mem, 3000, DATA), -EINVAL);
	/* The control page's own data_size wins and must agree. */
	((struct perf_event_mmap_page *)mem)->data_offset = PAGE;
	((struct perf_event_mmap_page *)mem)->data_size = 512;
	ASSERT_ERR(fg_ring_init(&r, mem, PAGE, DATA), -EINVAL);
	((struct perf_event_mmap_page *)mem)->data_size = DATA;
	ASSERT_OK(fg_ring_init(&r, mem, PAGE, DATA));
	fg_ring_done(&r);
}

TEST(misaligned_positions_are_corrupt)
{
	struct fake f;
	const struct perf_event_header *h;

	/* A tail 2 bytes before the end: reading a header there would run past the area. */
	fake_init(&f, DATA - 2);
	meta(&f)->data_head = DATA - 2 + 16;
	fg_ring_read_init(&f.ring);
	ASSERT_ERR(fg_ring_read_event(&f.ring, &h), -EBADMSG);
	fg_ring_done(&f.ring);
}
