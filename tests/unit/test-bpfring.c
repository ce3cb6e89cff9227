/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/bpf.h>
#include <string.h>

#include "perf/bpfring.h"
#include "test.h"

#define DATA 256 /* small, so records wrap quickly */

/*
 * A fake ring as the kernel maps it: the two positions, and the data area
 * followed by itself (every write goes to both copies).
 */
struct fake {
	uint64_t consumer, producer;
	uint8_t data[2 * DATA] __attribute__((aligned(8)));
	struct fg_bpfring ring;
};

static void fake_init(struct fake *f, uint64_t start)
{
	memset(f, 0, sizeof(*f));
	f->consumer = f->producer = start;
	ASSERT_OK(fg_bpfring_init(&f->ring, &f->consumer, &f->producer, f->data, DATA));
}

static void put(struct fake *f, uint64_t at, const void *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t off = (at + i) & (DATA - 1);

		f->data[off] = f->data[off + DATA] = ((const uint8_t *)src)[i];
	}
}

/*
 * Reserves a record of len sample bytes all equal to fill, with the header's
 * flags (BUSY while being written, DISCARD); returns where it starts.
 */
static uint64_t produce(struct fake *f, uint32_t len, uint8_t fill, uint32_t flags)
{
	uint8_t sample[DATA];
	uint32_t hdr[2] = { len | flags, 0 };
	uint64_t at = f->producer;

	memset(sample, fill, len);
	put(f, at, hdr, sizeof(hdr));
	put(f, at + BPF_RINGBUF_HDR_SZ, sample, len);
	f->producer = at + ((len + BPF_RINGBUF_HDR_SZ + 7) & ~7U);
	return at;
}

/* The record at at, reserved busy, is committed now. */
static void commit(struct fake *f, uint64_t at, uint32_t len)
{
	put(f, at, &len, sizeof(len));
}

static void expect_sample(struct fake *f, uint32_t len, uint8_t fill)
{
	const void *s;
	uint32_t n;

	ASSERT_EQ(fg_bpfring_read(&f->ring, &s, &n), 1);
	ASSERT_EQ(n, len);
	for (uint32_t i = 0; i < len; i++)
		ASSERT_EQ(((const uint8_t *)s)[i], fill);
}

static void expect_none(struct fake *f)
{
	const void *s;
	uint32_t n;

	ASSERT_EQ(fg_bpfring_read(&f->ring, &s, &n), 0);
}

TEST(an_empty_ring_has_nothing)
{
	struct fake f;

	fake_init(&f, 0);
	fg_bpfring_read_init(&f.ring);
	expect_none(&f);
	ASSERT_U64_EQ(fg_bpfring_pending(&f.ring), 0);
}

TEST(the_sizes_must_be_a_power_of_two)
{
	struct fake f;
	struct fg_bpfring r;

	memset(&f, 0, sizeof(f));
	ASSERT_ERR(fg_bpfring_init(&r, &f.consumer, &f.producer, f.data, 96), -EINVAL);
	ASSERT_ERR(fg_bpfring_init(&r, &f.consumer, &f.producer, f.data, 4), -EINVAL);
}

TEST(records_come_in_order_and_the_consumer_moves_at_read_done)
{
	struct fake f;

	fake_init(&f, 0);
	produce(&f, 12, 0xa1, 0);
	produce(&f, 40, 0xb2, 0);
	fg_bpfring_read_init(&f.ring);
	expect_sample(&f, 12, 0xa1);
	expect_sample(&f, 40, 0xb2);
	expect_none(&f);
	/* Nothing published yet: the kernel may not reuse the space while samples are borrowed. */
	ASSERT_U64_EQ(f.consumer, 0);
	fg_bpfring_read_done(&f.ring);
	ASSERT_U64_EQ(f.consumer, 24 + 48);
}

TEST(a_read_stops_at_its_snapshot)
{
	struct fake f;

	fake_init(&f, 0);
	produce(&f, 8, 1, 0);
	fg_bpfring_read_init(&f.ring);
	/* Written after the snapshot: the next round's, however fast the producer is. */
	produce(&f, 8, 2, 0);
	expect_sample(&f, 8, 1);
	expect_none(&f);
	fg_bpfring_read_done(&f.ring);
	fg_bpfring_read_init(&f.ring);
	expect_sample(&f, 8, 2);
	expect_none(&f);
}

TEST(a_caller_may_stop_early_and_go_on_later)
{
	struct fake f;

	fake_init(&f, 0);
	for (uint8_t i = 0; i < 4; i++)
		produce(&f, 16, i, 0);
	fg_bpfring_read_init(&f.ring);
	expect_sample(&f, 16, 0);
	fg_bpfring_read_done(&f.ring);
	/* What is left is pending, and the next read goes on from there. */
	ASSERT_U64_EQ(fg_bpfring_pending(&f.ring), 3 * 24);
	fg_bpfring_read_init(&f.ring);
	for (uint8_t i = 1; i < 4; i++)
		expect_sample(&f, 16, i);
	expect_none(&f);
	fg_bpfring_read_done(&f.ring);
	ASSERT_U64_EQ(f.consumer, 4 * 24);
}

TEST(a_record_that_wraps_the_end_reads_whole)
{
	struct fake f;

	/* 40 bytes before the end: a 64-byte record crosses it. */
	fake_init(&f, DATA - 40);
	produce(&f, 56, 0x5c, 0);
	fg_bpfring_read_init(&f.ring);
	expect_sample(&f, 56, 0x5c);
	expect_none(&f);
}

TEST(discarded_records_are_skipped)
{
	struct fake f;

	fake_init(&f, 0);
	produce(&f, 8, 1, 0);
	produce(&f, 8, 2, BPF_RINGBUF_DISCARD_BIT);
	produce(&f, 8, 3, 0);
	fg_bpfring_read_init(&f.ring);
	expect_sample(&f, 8, 1);
	expect_sample(&f, 8, 3);
	expect_none(&f);
}

TEST(a_record_being_written_holds_those_after_it)
{
	struct fake f;
	uint64_t busy;

	fake_init(&f, 0);
	produce(&f, 8, 1, 0);
	busy = produce(&f, 8, 2, BPF_RINGBUF_BUSY_BIT);
	produce(&f, 8, 3, 0);
	fg_bpfring_read_init(&f.ring);
	expect_sample(&f, 8, 1);
	expect_none(&f);
	fg_bpfring_read_done(&f.ring);
	ASSERT_U64_EQ(f.consumer, 16);
	commit(&f, busy, 8);
	fg_bpfring_read_init(&f.ring);
	expect_sample(&f, 8, 2);
	expect_sample(&f, 8, 3);
	expect_none(&f);
}

TEST(a_length_past_the_snapshot_skips_to_it)
{
	struct fake f;
	const void *s;
	uint32_t n;

	fake_init(&f, 0);
	produce(&f, 8, 1, 0);
	/* A header saying more than the producer has reserved. */
	put(&f, 0, &(uint32_t){ 200 }, sizeof(uint32_t));
	fg_bpfring_read_init(&f.ring);
	ASSERT_ERR(fg_bpfring_read(&f.ring, &s, &n), -EBADMSG);
	ASSERT_U64_EQ(fg_bpfring_pending(&f.ring), 0);
	expect_none(&f);
	/* So is a producer further ahead than the ring holds. */
	f.producer = 16 + 2 * DATA;
	fg_bpfring_read_init(&f.ring);
	ASSERT_ERR(fg_bpfring_read(&f.ring, &s, &n), -EBADMSG);
	expect_none(&f);
}
