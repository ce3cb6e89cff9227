/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "perf/record.h"
#include "perf/ring.h"
#include "test.h"

/* Builds records the way the kernel lays them out: u64 slots, 8-byte padding. */
struct builder {
	uint64_t buf[512];
	size_t len; /* bytes */
};

static void b_start(struct builder *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	memset(b, 0, sizeof(*b));
	memcpy(b->buf, &h, sizeof(h));
	b->len = 8;
}

static void b_u64(struct builder *b, uint64_t v)
{
	memcpy((uint8_t *)b->buf + b->len, &v, 8);
	b->len += 8;
}

static void b_u32x2(struct builder *b, uint32_t x, uint32_t y)
{
	b_u64(b, (uint64_t)y << 32 | x);
}

static void b_bytes(struct builder *b, const void *p, size_t n)
{
	memcpy((uint8_t *)b->buf + b->len, p, n);
	b->len += (n + 7) / 8 * 8;
}

static const struct perf_event_header *b_end(struct builder *b)
{
	struct perf_event_header *h = (struct perf_event_header *)b->buf;

	h->size = (uint16_t)b->len;
	return h;
}

/* The sample layout fgd asks the kernel for. */
static const struct fg_record_fmt fgd_fmt = {
	.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
		       PERF_SAMPLE_CALLCHAIN,
	.sample_id_all = true,
};

static void trailer(struct builder *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
		    uint64_t id)
{
	/* Trailer order: TID, TIME, CPU, IDENTIFIER (for fgd_fmt). */
	b_u32x2(b, pid, tid);
	b_u64(b, time);
	b_u32x2(b, cpu, 0);
	b_u64(b, id);
}

static const struct perf_event_header *build_sample(struct builder *b, uint64_t nr)
{
	b_start(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	b_u64(b, 77);           /* identifier */
	b_u64(b, 0x401234);     /* ip */
	b_u32x2(b, 1000, 1001); /* pid, tid */
	b_u64(b, 123456789);    /* time */
	b_u32x2(b, 1, 0);       /* cpu, res */
	b_u64(b, 10101);        /* period */
	b_u64(b, nr);           /* callchain */
	for (uint64_t i = 0; i < nr; i++)
		b_u64(b, i == 0 ? PERF_CONTEXT_USER : 0x401000 + i);
	return b_end(b);
}

TEST(sample_round_trip)
{
	struct builder b;
	struct fg_record rec;

	ASSERT_OK(fg_record_parse(build_sample(&b, 4), &fgd_fmt, &rec));
	ASSERT_EQ(rec.type, PERF_RECORD_SAMPLE);
	ASSERT_EQ(rec.sample.sid.id, 77);
	ASSERT_U64_EQ(rec.sample.ip, 0x401234);
	ASSERT_EQ(rec.sample.sid.pid, 1000);
	ASSERT_EQ(rec.sample.sid.tid, 1001);
	ASSERT_EQ(rec.sample.sid.time, 123456789);
	ASSERT_EQ(rec.sample.sid.cpu, 1);
	ASSERT_EQ(rec.sample.period, 10101);
	ASSERT_EQ(rec.sample.nr, 4);
	ASSERT_U64_EQ(rec.sample.ips[0], PERF_CONTEXT_USER);
	ASSERT_U64_EQ(rec.sample.ips[3], 0x401003);
	ASSERT_EQ(rec.sid.pid, 1000); /* samples fill the common sid too */
}

TEST(sample_truncated_anywhere_is_refused)
{
	struct builder b;
	struct fg_record rec;
	const struct perf_event_header *h = build_sample(&b, 6);
	uint16_t full = h->size;

	/* Every shorter size, header included, must fail cleanly. */
	for (uint16_t size = 8; size < full; size += 8) {
		((struct perf_event_header *)b.buf)->size = size;
		ASSERT_ERR(fg_record_parse(h, &fgd_fmt, &rec), -EFAULT);
	}
	((struct perf_event_header *)b.buf)->size = 4;
	ASSERT_ERR(fg_record_parse(h, &fgd_fmt, &rec), -EFAULT);
}

TEST(callchain_length_past_the_record)
{
	struct builder b;
	struct fg_record rec;

	build_sample(&b, 2);
	/* nr is the 7th u64 after the header; make it claim far more than is there. */
	b.buf[7] = UINT64_MAX / 4;
	ASSERT_ERR(fg_record_parse(b_end(&b), &fgd_fmt, &rec), -EFAULT);
	b.buf[7] = 3;
	ASSERT_ERR(fg_record_parse(b_end(&b), &fgd_fmt, &rec), -EFAULT);
}

TEST(unsupported_sample_type_and_misalignment)
{
	struct builder b;
	struct fg_record rec;
	struct fg_record_fmt fmt = fgd_fmt;
	const struct perf_event_header *h = build_sample(&b, 1);
	uint64_t shifted[64];

	fmt.sample_type |= PERF_SAMPLE_BRANCH_STACK;
	ASSERT_ERR(fg_record_parse(h, &fmt, &rec), -EINVAL);
	memcpy((uint8_t *)shifted + 4, b.buf, b.len);
	ASSERT_ERR(fg_record_parse((const struct perf_event_header *)((uint8_t *)shifted + 4),
				   &fgd_fmt, &rec),
		   -EINVAL);
}

TEST(user_regs_and_stack)
{
	struct builder b;
	struct fg_record rec;
	struct fg_record_fmt fmt = {
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = 0x7, /* three registers */
	};
	uint8_t stack[32];

	memset(stack, 0xee, sizeof(stack));
	b_start(&b, PERF_RECORD_SAMPLE, 0);
	b_u32x2(&b, 5, 6);
	b_u64(&b, PERF_SAMPLE_REGS_ABI_64);
	b_u64(&b, 11);
	b_u64(&b, 22);
	b_u64(&b, 33);
	b_u64(&b, sizeof(stack));
	b_bytes(&b, stack, sizeof(stack));
	b_u64(&b, 24); /* dyn_size: only 24 bytes were really copied */
	ASSERT_OK(fg_record_parse(b_end(&b), &fmt, &rec));
	ASSERT_EQ(rec.sample.regs_abi, PERF_SAMPLE_REGS_ABI_64);
	ASSERT_EQ(rec.sample.n_regs, 3);
	ASSERT_EQ(rec.sample.regs[2], 33);
	ASSERT_EQ(rec.sample.stack_size, 24);
	ASSERT_EQ(rec.sample.stack[23], 0xee);

	/* dyn_size larger than the dump is impossible. */
	b.buf[b.len / 8 - 1] = 40;
	ASSERT_ERR(fg_record_parse(b_end(&b), &fmt, &rec), -EINVAL);

	/* ABI_NONE: no registers follow (a kernel thread). */
	b_start(&b, PERF_RECORD_SAMPLE, 0);
	b_u32x2(&b, 5, 6);
	b_u64(&b, PERF_SAMPLE_REGS_ABI_NONE);
	b_u64(&b, 0); /* stack size 0: no data, no dyn_size */
	ASSERT_OK(fg_record_parse(b_end(&b), &fmt, &rec));
	ASSERT_EQ(rec.sample.n_regs, 0);
	ASSERT_TRUE(rec.sample.stack == NULL);
}

TEST(mmap2_with_inode_and_with_build_id)
{
	struct builder b;
	struct fg_record rec;
	uint8_t id[24] = { 20, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef };
	const char path[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";

	b_start(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	b_u32x2(&b, 42, 42);
	b_u64(&b, 0x7f0000000000);
	b_u64(&b, 0x1000);
	b_u64(&b, 0x28000);
	b_u32x2(&b, 8, 1); /* maj, min */
	b_u64(&b, 123456); /* ino */
	b_u64(&b, 9);      /* ino_generation */
	b_u32x2(&b, 5, 2); /* prot, flags */
	b_bytes(&b, path, sizeof(path));
	trailer(&b, 42, 42, 999, 0, 5);
	ASSERT_OK(fg_record_parse(b_end(&b), &fgd_fmt, &rec));
	ASSERT_EQ(rec.mmap2.pid, 42);
	ASSERT_U64_EQ(rec.mmap2.addr, 0x7f0000000000);
	ASSERT_EQ(rec.mmap2.pgoff, 0x28000);
	ASSERT_TRUE(!rec.mmap2.has_build_id);
	ASSERT_EQ(rec.mmap2.maj, 8);
	ASSERT_EQ(rec.mmap2.min, 1);
	ASSERT_EQ(rec.mmap2.ino, 123456);
	ASSERT_EQ(rec.mmap2.prot, 5);
	ASSERT_STREQ(rec.mmap2.filename, path);
	ASSERT_EQ(rec.sid.time, 999);
	ASSERT_EQ(rec.sid.id, 5);

	b_start(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	b_u32x2(&b, 42, 42);
	b_u64(&b, 0x1000);
	b_u64(&b, 0x1000);
	b_u64(&b, 0);
	b_bytes(&b, id, sizeof(id));
	b_u32x2(&b, 5, 2);
	b_bytes(&b, "/bin/x", 7);
	trailer(&b, 42, 42, 1000, 0, 5);
	ASSERT_OK(fg_record_parse(b_end(&b), &fgd_fmt, &rec));
	ASSERT_TRUE(rec.mmap2.has_build_id);
	ASSERT_EQ(rec.mmap2.build_id_size, 20);
	ASSERT_EQ(rec.mmap2.build_id[0], 0xde);
	ASSERT_STREQ(rec.mmap2.filename, "/bin/x");

	/* A build-id longer than the field is impossible. */
	((uint8_t *)b.buf)[8 + 32] = 21;
	ASSERT_ERR(fg_record_parse(b_end(&b), &fgd_fmt, &rec), -EINVAL);
}

TEST(string_without_nul_is_refused)
{
	struct builder b;
	struct fg_record rec;

	b_start(&b, PERF_RECORD_COMM, 0);
	b_u32x2(&b, 1, 1);
	b_bytes(&b, "abcdefgh", 8); /* no NUL before the trailer */
	trailer(&b, 1, 1, 5, 0, 0);
	ASSERT_ERR(fg_record_parse(b_end(&b), &fgd_fmt, &rec), -EFAULT);
}

TEST(comm_exec_fork_exit_lost_throttle)
{
	struct builder b;
	struct fg_record rec;

	b_start(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	b_u32x2(&b, 7, 8);
	b_bytes(&b, "burn", 5);
	trailer(&b, 7, 8, 50, 1, 0);
	ASSERT_OK(fg_record_parse(b_end(&b), &fgd_fmt, &rec));
	ASSERT_TRUE(rec.comm.exec);
	ASSERT_EQ(rec.comm.tid, 8);
	ASSERT_STREQ(rec.comm.comm, "burn");
	ASSERT_EQ(rec.sid.cpu, 1);

	b_start(&b, PERF_RECORD_FORK, 0);
	b_u32x2(&b, 10, 9);
	b_u32x2(&b, 11, 9);
	b_u64(&b, 4242);
	trailer(&b, 10, 11, 4242, 0, 0);
	ASSERT_OK(fg_record_parse(b_end(&b), &fgd_fmt, &rec));
	ASSERT_EQ(rec.type, PERF_RECORD_FORK);
	ASSERT_EQ(rec.task.pid, 10);
	ASSERT_EQ(rec.task.ppid, 9);
	ASSERT_EQ(rec.task.tid, 11);
	ASSERT_EQ(rec.task.ptid, 9);
	ASSERT_EQ(rec.task.time, 4242);

	b_start(&b, PERF_RECORD_LOST, 0);
	b_u64(&b, 3);
	b_u64(&b, 17);
	trailer(&b, 0, 0, 1, 0, 0);
	ASSERT_OK(fg_record_parse(b_end(&b), &fgd_fmt, &rec));
	ASSERT_EQ(rec.lost, 17);

	b_start(&b, PERF_RECORD_THROTTLE, 0);
	b_u64(&b, 555);
	b_u64(&b, 1);
	b_u64(&b, 1);
	trailer(&b, 0, 0, 555, 1, 0);
	ASSERT_OK(fg_record_parse(b_end(&b), &fgd_fmt, &rec));
	ASSERT_EQ(rec.throttle_time, 555);

	/* Unknown types decode to their header and trailer only. */
	b_start(&b, 9999, 0);
	b_u64(&b, 1);
	trailer(&b, 3, 4, 77, 0, 0);
	ASSERT_OK(fg_record_parse(b_end(&b), &fgd_fmt, &rec));
	ASSERT_EQ(rec.type, 9999);
	ASSERT_EQ(rec.sid.time, 77);
}

TEST(trailer_cannot_overlap_body)
{
	struct builder b;
	struct fg_record rec;

	/* A FORK record missing its body: the trailer fits, the body does not. */
	b_start(&b, PERF_RECORD_FORK, 0);
	trailer(&b, 1, 1, 1, 0, 0);
	ASSERT_ERR(fg_record_parse(b_end(&b), &fgd_fmt, &rec), -EFAULT);
	/* Shorter than the trailer itself. */
	b_start(&b, PERF_RECORD_EXIT, 0);
	b_u64(&b, 0);
	ASSERT_ERR(fg_record_parse(b_end(&b), &fgd_fmt, &rec), -EFAULT);
}

TEST(garbage_never_reads_out_of_bounds)
{
	/* Random bytes of every length; run under ASan this proves the bounds. */
	uint64_t buf[64];
	struct fg_record rec;
	unsigned seed = 1;

	for (int iter = 0; iter < 20000; iter++) {
		struct perf_event_header *h = (struct perf_event_header *)buf;
		uint16_t size = (uint16_t)(8 * (1 + rand_r(&seed) % 63));
		uint64_t *copy;

		for (size_t i = 0; i < sizeof(buf) / sizeof(buf[0]); i++)
			buf[i] = (uint64_t)rand_r(&seed) << 33 ^ (uint64_t)rand_r(&seed);
		h->size = size;
		h->type = (uint32_t)(rand_r(&seed) % 20);
		/* An exact-size heap copy so ASan sees any overrun. */
		copy = malloc(size);
		ASSERT_TRUE(copy);
		memcpy(copy, buf, size);
		(void)fg_record_parse((struct perf_event_header *)copy, &fgd_fmt, &rec);
		free(copy);
	}
}

/* Walks a ring captured from this kernel by tests/fuzz/tools/capture-ring.c. */
struct captured {
	unsigned records, failures, samples, chains, forks, exits, exec_comms, mmaps_with_id;
};

static void walk_captured(const char *name, const struct fg_record_fmt *fmt, struct captured *c)
{
	static uint8_t mem[4096 + 65536] __attribute__((aligned(4096)));
	struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *)mem;
	const struct perf_event_header *h;
	struct fg_ring ring;
	char path[4096];
	size_t n;
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/%s", fg_test_data_dir(), name);
	f = fopen(path, "re");
	ASSERT_TRUE(f);
	memset(mem, 0, sizeof(mem));
	ASSERT_EQ(fread(mem + 4096, 1, 8, f), 8); /* the start offset, 0 */
	n = fread(mem + 4096, 1, 65536, f);
	fclose(f);
	meta->data_head = n;
	ASSERT_OK(fg_ring_init(&ring, mem, 4096, 65536));
	fg_ring_read_init(&ring);
	memset(c, 0, sizeof(*c));
	while ((r = fg_ring_read_event(&ring, &h)) == 1) {
		struct fg_record rec;

		c->records++;
		if (fg_record_parse(h, fmt, &rec) < 0) {
			c->failures++;
			continue;
		}
		c->samples += rec.type == PERF_RECORD_SAMPLE;
		c->chains += rec.type == PERF_RECORD_SAMPLE && rec.sample.nr > 1 &&
			     rec.sample.ips[0] >= (uint64_t)PERF_CONTEXT_MAX;
		c->forks += rec.type == PERF_RECORD_FORK;
		c->exits += rec.type == PERF_RECORD_EXIT;
		c->exec_comms += rec.type == PERF_RECORD_COMM && rec.comm.exec;
		c->mmaps_with_id += rec.type == PERF_RECORD_MMAP2 && rec.mmap2.has_build_id &&
				    rec.mmap2.filename[0] == '/';
	}
	ASSERT_EQ(r, 0);
	fg_ring_done(&ring);
}

TEST(recorded_tracking_ring_decodes_whole)
{
	static const struct fg_record_fmt track = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU,
		.sample_id_all = true,
	};
	struct captured c;

	walk_captured("ring-track.bin", &track, &c);
	ASSERT_TRUE(c.records > 10);
	ASSERT_EQ(c.failures, 0);
	ASSERT_TRUE(c.forks >= 1);
	ASSERT_TRUE(c.exits >= 1);
	ASSERT_TRUE(c.exec_comms >= 1);
	ASSERT_TRUE(c.mmaps_with_id >= 1);
}

TEST(recorded_sampling_ring_decodes_whole)
{
	struct captured c;

	walk_captured("ring-sample.bin", &fgd_fmt, &c);
	ASSERT_TRUE(c.samples > 10);
	ASSERT_EQ(c.failures, 0);
	ASSERT_EQ(c.chains, c.samples); /* every callchain starts with a context marker */
}
