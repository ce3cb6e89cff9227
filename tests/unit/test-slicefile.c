/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/slicefile.h"
#include "test.h"

/* A slice of two processes, one without an exe, three stacks sharing frames. */
static void build(struct fg_slicefile_writer **ret_w, const uint8_t **data, size_t *len)
{
	static const char *const a[] = { "_start", "__libc_start_main", "main", "hot_a" };
	static const char *const b[] = { "_start", "__libc_start_main", "main", "hot_b" };
	static const char *const k[] = { "do_syscall_64_[k]" };
	const struct fg_slicefile_process p1 = { 1234,   1700000000000000000ULL, 1000,
						 "burn", "/usr/bin/burn",        "/user.slice" };
	const struct fg_slicefile_process p2 = { 99, 5, 0, "kworker/0:1", NULL, "/" };
	struct fg_slicefile_writer *w;
	uint32_t i1, i2;

	ASSERT_OK(fg_slicefile_writer__new(1000, 2000, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p1, &i1));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p2, &i2));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, i1, a, 4, 750));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, i1, b, 4, 250));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, i2, k, 1, 3));
	ASSERT_EQ(fg_slicefile_writer__add_stack(w, 7, k, 1, 3), -EINVAL);
	ASSERT_EQ(fg_slicefile_writer__add_stack(w, i2, k, 0, 3), -EINVAL);
	ASSERT_EQ(fg_slicefile_writer__add_stack(w, i2, k, 1, 0), -EINVAL);
	/* Sampled through most of its span, with a gap, and losses in the second stretch. */
	ASSERT_OK(
		fg_slicefile_writer__add_coverage(w, &(struct fg_slicefile_span){ 1000, 1500, 0 }));
	ASSERT_OK(
		fg_slicefile_writer__add_coverage(w, &(struct fg_slicefile_span){ 1600, 2000, 7 }));
	ASSERT_OK(fg_slicefile_writer__finish(w, data, len));
	*ret_w = w;
}

TEST(round_trip)
{
	struct fg_slicefile_writer *w;
	struct fg_slicefile *s;
	struct fg_slicefile_stack st;
	const uint8_t *data;
	size_t len;

	build(&w, &data, &len);
	ASSERT_OK(fg_slicefile__parse(data, len, &s));
	ASSERT_U64_EQ(fg_slicefile__start(s), 1000);
	ASSERT_U64_EQ(fg_slicefile__end(s), 2000);
	ASSERT_EQ(fg_slicefile__n_processes(s), 2);
	ASSERT_EQ(fg_slicefile__process(s, 0)->pid, 1234);
	ASSERT_U64_EQ(fg_slicefile__process(s, 0)->start_time, 1700000000000000000ULL);
	ASSERT_EQ(fg_slicefile__process(s, 0)->uid, 1000);
	ASSERT_TRUE(strcmp(fg_slicefile__process(s, 0)->comm, "burn") == 0);
	ASSERT_TRUE(strcmp(fg_slicefile__process(s, 0)->exe, "/usr/bin/burn") == 0);
	ASSERT_TRUE(strcmp(fg_slicefile__process(s, 0)->cgroup, "/user.slice") == 0);
	ASSERT_TRUE(fg_slicefile__process(s, 1)->exe == NULL);
	ASSERT_EQ(fg_slicefile__n_stacks(s), 3);
	fg_slicefile__stack(s, 1, &st);
	ASSERT_EQ(st.proc, 0);
	ASSERT_U64_EQ(st.count, 250);
	ASSERT_EQ(st.n, 4);
	ASSERT_TRUE(strcmp(fg_slicefile__string(s, st.frames[0]), "_start") == 0);
	ASSERT_TRUE(strcmp(fg_slicefile__string(s, st.frames[3]), "hot_b") == 0);
	fg_slicefile__stack(s, 2, &st);
	ASSERT_EQ(st.proc, 1);
	ASSERT_TRUE(strcmp(fg_slicefile__string(s, st.frames[0]), "do_syscall_64_[k]") == 0);
	ASSERT_EQ(fg_slicefile__n_coverage(s), 2);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->start_ns, 1000);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->end_ns, 1500);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->lost, 0);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 1)->start_ns, 1600);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 1)->end_ns, 2000);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 1)->lost, 7);
	fg_slicefile__free(s);
	fg_slicefile_writer__free(w);
}

TEST(coverage_must_lie_in_the_span_in_order)
{
	struct fg_slicefile_writer *w;

	ASSERT_OK(fg_slicefile_writer__new(1000, 2000, &w));
	ASSERT_EQ(fg_slicefile_writer__add_coverage(w, &(struct fg_slicefile_span){ 900, 1500 }),
		  -EINVAL);
	ASSERT_EQ(fg_slicefile_writer__add_coverage(w, &(struct fg_slicefile_span){ 1500, 2001 }),
		  -EINVAL);
	ASSERT_EQ(fg_slicefile_writer__add_coverage(w, &(struct fg_slicefile_span){ 1500, 1500 }),
		  -EINVAL);
	ASSERT_OK(fg_slicefile_writer__add_coverage(w, &(struct fg_slicefile_span){ 1200, 1500 }));
	/* Overlapping the one before, or before it. */
	ASSERT_EQ(fg_slicefile_writer__add_coverage(w, &(struct fg_slicefile_span){ 1400, 1600 }),
		  -EINVAL);
	ASSERT_OK(fg_slicefile_writer__add_coverage(w, &(struct fg_slicefile_span){ 1500, 2000 }));
	fg_slicefile_writer__free(w);
}

/* data with its version set to v and its checksum made right again, in a copy (caller frees). */
static uint8_t *as_version(const uint8_t *data, size_t len, uint8_t v)
{
	uint8_t *copy = malloc(len);
	uint32_t crc;

	ASSERT_TRUE(copy);
	memcpy(copy, data, len);
	copy[4] = v;
	crc = fg_crc32c(0, copy, len - 4);
	for (int i = 0; i < 4; i++)
		copy[len - 4 + i] = (uint8_t)(crc >> (8 * i));
	return copy;
}

TEST(a_version_2_file_written_by_fgd_stays_readable)
{
	/* Written by fgd's version 2 writer (the fuzz corpus's), with times. */
	char path[4096];
	uint8_t buf[4096];
	struct fg_slicefile *s;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "%s/history/slice-v2.fgdh", fg_test_data_dir());
	f = fopen(path, "rbe");
	ASSERT_TRUE(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ASSERT_EQ(buf[4], 2);
	ASSERT_OK(fg_slicefile__parse(buf, len, &s));
	ASSERT_TRUE(fg_slicefile__n_stacks(s) > 0);
	ASSERT_TRUE(fg_slicefile__tick_ms(s) > 0);
	/* Before coverage was kept: its whole span, nothing known lost. */
	ASSERT_EQ(fg_slicefile__n_coverage(s), 1);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->start_ns, fg_slicefile__start(s));
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->end_ns, fg_slicefile__end(s));
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->lost, 0);
	fg_slicefile__free(s);
}

TEST(a_version_2_file_covers_its_span_and_may_not_carry_coverage)
{
	static const char *const frames[] = { "main" };
	const struct fg_slicefile_process p = { 1, 2, 0, "burn", NULL, NULL };
	struct fg_slicefile_writer *w;
	struct fg_slicefile *s;
	const uint8_t *data;
	uint8_t *v2;
	uint32_t idx;
	size_t len;

	/* Version 2's bytes are version 3's without the coverage section. */
	ASSERT_OK(fg_slicefile_writer__new(1000000, 9000000, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &idx));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, idx, frames, 1, 1));
	ASSERT_OK(fg_slicefile_writer__set_times(w, 10));
	ASSERT_OK(fg_slicefile_writer__add_time(w, 0, 5, 1));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	v2 = as_version(data, len, 2);
	ASSERT_OK(fg_slicefile__parse(v2, len, &s));
	ASSERT_EQ(fg_slicefile__n_coverage(s), 1);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->start_ns, 1000000);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->end_ns, 9000000);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->lost, 0);
	fg_slicefile__free(s);
	free(v2);
	/* Version 2 has no coverage flag: a file that says both is damaged. */
	ASSERT_OK(fg_slicefile_writer__add_coverage(w, &(struct fg_slicefile_span){ 1000000,
										    2000000 }));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	v2 = as_version(data, len, 2);
	ASSERT_EQ(fg_slicefile__parse(v2, len, &s), -EBADMSG);
	ASSERT_EQ(fg_slicefile_diagnose(v2, len), FG_SLICEFILE_MALFORMED);
	free(v2);
	fg_slicefile_writer__free(w);
}

TEST(damage_is_named)
{
	struct fg_slicefile_writer *w;
	const uint8_t *data;
	uint8_t *copy;
	size_t len;

	build(&w, &data, &len);
	copy = malloc(len + 1);
	ASSERT_TRUE(copy);
	ASSERT_EQ(fg_slicefile_diagnose(data, 3), FG_SLICEFILE_NOT_SLICE);
	ASSERT_EQ(fg_slicefile_diagnose("#!/bin/sh\nexit 0\n", 18), FG_SLICEFILE_NOT_SLICE);
	for (size_t n = 4; n < len; n++)
		ASSERT_EQ(fg_slicefile_diagnose(data, n), FG_SLICEFILE_TRUNCATED);
	memcpy(copy, data, len);
	copy[len / 2] ^= 0x10;
	ASSERT_EQ(fg_slicefile_diagnose(copy, len), FG_SLICEFILE_BAD_CHECKSUM);
	memcpy(copy, data, len);
	copy[len] = 0;
	ASSERT_EQ(fg_slicefile_diagnose(copy, len + 1), FG_SLICEFILE_BAD_CHECKSUM);
	ASSERT_TRUE(strcmp(fg_slicefile_damage_name(FG_SLICEFILE_TRUNCATED), "truncated") == 0);
	ASSERT_TRUE(strcmp(fg_slicefile_damage_name(FG_SLICEFILE_BAD_CHECKSUM), "bad checksum") ==
		    0);
	free(copy);
	fg_slicefile_writer__free(w);
}

TEST(shared_frames_are_stored_once)
{
	struct fg_slicefile_writer *w;
	const uint8_t *data;
	size_t len;

	build(&w, &data, &len);
	/* "__libc_start_main" is in two stacks, and once in the file. */
	const uint8_t *first = memmem(data, len, "__libc_start_main", 17);

	ASSERT_TRUE(first != NULL);
	ASSERT_TRUE(memmem(first + 17, len - (size_t)(first + 17 - data), "__libc_start_main",
			   17) == NULL);
	fg_slicefile_writer__free(w);
}

TEST(every_truncation_and_bit_flip_is_refused)
{
	struct fg_slicefile_writer *w;
	struct fg_slicefile *s = NULL;
	const uint8_t *data;
	uint8_t *copy;
	size_t len;

	build(&w, &data, &len);
	copy = malloc(len + 1);
	ASSERT_TRUE(copy);
	/* A torn write: any prefix. */
	for (size_t n = 0; n < len; n++)
		ASSERT_EQ(fg_slicefile__parse(data, n, &s), -EBADMSG);
	/* Trailing bytes. */
	memcpy(copy, data, len);
	copy[len] = 0;
	ASSERT_EQ(fg_slicefile__parse(copy, len + 1, &s), -EBADMSG);
	/* Any single flipped bit, anywhere. */
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			int r;

			memcpy(copy, data, len);
			copy[i] ^= (uint8_t)(1u << bit);
			r = fg_slicefile__parse(copy, len, &s);
			/* The version field flipped upward reads as a later version. */
			if (r != -EPROTONOSUPPORT)
				ASSERT_EQ(r, -EBADMSG);
		}
	ASSERT_TRUE(s == NULL);
	free(copy);
	fg_slicefile_writer__free(w);
}

TEST(a_later_version_is_named_as_such)
{
	struct fg_slicefile_writer *w;
	struct fg_slicefile *s;
	const uint8_t *data;
	uint8_t *copy;
	size_t len;
	uint32_t crc;

	build(&w, &data, &len);
	copy = malloc(len);
	ASSERT_TRUE(copy);
	memcpy(copy, data, len);
	copy[4] = FG_SLICEFILE_VERSION + 1;
	crc = fg_crc32c(0, copy, len - 4);
	memcpy(copy + len - 4, &crc, 4); /* little-endian host */
	ASSERT_EQ(fg_slicefile__parse(copy, len, &s), -EPROTONOSUPPORT);
	free(copy);
	fg_slicefile_writer__free(w);
}

TEST(crc32c_known_answer)
{
	/* The check value of CRC-32C (RFC 3720). */
	ASSERT_U64_EQ(fg_crc32c(0, "123456789", 9), 0xe3069283);
	ASSERT_U64_EQ(fg_crc32c(fg_crc32c(0, "1234", 4), "56789", 5), 0xe3069283);
}

TEST(an_empty_slice_is_a_slice)
{
	struct fg_slicefile_writer *w;
	struct fg_slicefile *s;
	const uint8_t *data;
	size_t len;

	ASSERT_OK(fg_slicefile_writer__new(5, 6, &w));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s));
	ASSERT_EQ(fg_slicefile__n_stacks(s), 0);
	ASSERT_EQ(fg_slicefile__n_processes(s), 0);
	fg_slicefile__free(s);
	fg_slicefile_writer__free(w);
}

/*
 * The kernel reports pid -1 for a task outside fgd's pid namespace; fgd
 * wrote such slices all along, and once could not read them back.
 */
TEST(a_process_with_pid_minus_one_reads_back)
{
	const struct fg_slicefile_process p = { -1, 0, 0, "[unknown]", NULL, NULL };
	const char *frames[] = { "do_idle_[k]" };
	struct fg_slicefile_writer *w;
	struct fg_slicefile *s;
	const uint8_t *data;
	uint32_t proc;
	size_t len;

	ASSERT_OK(fg_slicefile_writer__new(5, 6, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &proc));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, proc, frames, 1, 3));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s));
	ASSERT_EQ(fg_slicefile__process(s, 0)->pid, -1);
	ASSERT_STREQ(fg_slicefile__process(s, 0)->comm, "[unknown]");
	fg_slicefile__free(s);
	fg_slicefile_writer__free(w);
}

TEST(a_version_1_file_stays_readable)
{
	/* Written once, by hand from docs/HISTORY-FORMAT.md: history outlives fgd versions. */
	char path[4096];
	uint8_t buf[256];
	struct fg_slicefile *s;
	struct fg_slicefile_stack st;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "%s/history/slice-v1.fgdh", fg_test_data_dir());
	f = fopen(path, "rbe");
	ASSERT_TRUE(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ASSERT_OK(fg_slicefile__parse(buf, len, &s));
	ASSERT_U64_EQ(fg_slicefile__start(s), 1000);
	ASSERT_U64_EQ(fg_slicefile__end(s), 2000);
	ASSERT_EQ(fg_slicefile__n_processes(s), 1);
	ASSERT_EQ(fg_slicefile__process(s, 0)->pid, 1234);
	ASSERT_TRUE(strcmp(fg_slicefile__process(s, 0)->comm, "burn") == 0);
	ASSERT_TRUE(fg_slicefile__process(s, 0)->exe == NULL);
	ASSERT_EQ(fg_slicefile__n_stacks(s), 1);
	fg_slicefile__stack(s, 0, &st);
	ASSERT_U64_EQ(st.count, 7);
	ASSERT_EQ(st.n, 3);
	ASSERT_TRUE(strcmp(fg_slicefile__string(s, st.frames[0]), "_start") == 0);
	ASSERT_TRUE(strcmp(fg_slicefile__string(s, st.frames[2]), "hot_a") == 0);
	/* Its 32-byte header predates the frequency. */
	ASSERT_EQ(fg_slicefile__frequency(s), 0);
	fg_slicefile__free(s);
}

/* A slice of one stack sampled at hz, parsed back. */
static struct fg_slicefile *slice_at(uint64_t start, uint32_t hz)
{
	static const char *const frames[] = { "main", "hot" };
	const struct fg_slicefile_process p = { 1, 2, 0, "burn", NULL, NULL };
	struct fg_slicefile_writer *w;
	struct fg_slicefile *s;
	const uint8_t *data;
	uint32_t idx;
	size_t len;

	ASSERT_OK(fg_slicefile_writer__new(start, start + 10, &w));
	fg_slicefile_writer__set_frequency(w, hz);
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &idx));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, idx, frames, 2, 5));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s));
	fg_slicefile_writer__free(w);
	return s;
}

/* The merge of a and b, parsed back; a and b are freed. */
static struct fg_slicefile *merged(struct fg_slicefile *a, struct fg_slicefile *b)
{
	const struct fg_slicefile *in[] = { a, b };
	struct fg_slicefile_writer *w;
	struct fg_slicefile *s;
	const uint8_t *data;
	size_t len;

	ASSERT_OK(fg_slicefile_merge(in, 2, 0, 20, &w));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s));
	fg_slicefile_writer__free(w);
	fg_slicefile__free(a);
	fg_slicefile__free(b);
	return s;
}

TEST(the_sampling_frequency_is_kept_and_merges_keep_it_only_when_agreed)
{
	struct fg_slicefile *s = slice_at(0, 19);

	ASSERT_EQ(fg_slicefile__frequency(s), 19);
	fg_slicefile__free(s);
	s = merged(slice_at(0, 19), slice_at(10, 19));
	ASSERT_EQ(fg_slicefile__frequency(s), 19);
	fg_slicefile__free(s);
	/* Counts taken at 19 and 99 Hz: added as they are, at no one rate. */
	s = merged(slice_at(0, 19), slice_at(10, 99));
	ASSERT_EQ(fg_slicefile__frequency(s), 0);
	ASSERT_EQ(fg_slicefile__n_stacks(s), 1);
	fg_slicefile__free(s);
}

/* A slice of [start, start + 10) with the stacks given as "frame;frame count" per process. */
static struct fg_slicefile *make_slice(uint64_t start, const struct fg_slicefile_process *procs,
				       size_t n_procs, const char *const *stacks,
				       const uint32_t *stack_proc, size_t n_stacks)
{
	struct fg_slicefile_writer *w;
	struct fg_slicefile *s;
	const uint8_t *data;
	size_t len;

	ASSERT_OK(fg_slicefile_writer__new(start, start + 10, &w));
	for (size_t i = 0; i < n_procs; i++) {
		uint32_t idx;

		ASSERT_OK(fg_slicefile_writer__add_process(w, &procs[i], &idx));
	}
	for (size_t i = 0; i < n_stacks; i++) {
		char buf[256], *save = NULL;
		const char *frames[16];
		size_t n = 0;
		unsigned long count;
		char *sp;

		snprintf(buf, sizeof(buf), "%s", stacks[i]);
		sp = strrchr(buf, ' ');
		ASSERT_TRUE(sp);
		*sp = '\0';
		count = strtoul(sp + 1, NULL, 10);
		for (char *f = strtok_r(buf, ";", &save); f; f = strtok_r(NULL, ";", &save))
			frames[n++] = f;
		ASSERT_OK(fg_slicefile_writer__add_stack(w, stack_proc[i], frames, n, count));
	}
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s));
	fg_slicefile_writer__free(w);
	return s;
}

/* The count of stack `frames` of the process with pid and start time, or 0. */
static uint64_t count_of(const struct fg_slicefile *s, int32_t pid, uint64_t start_time,
			 const char *frames)
{
	uint64_t total = 0;

	for (size_t i = 0; i < fg_slicefile__n_stacks(s); i++) {
		const struct fg_slicefile_process *p;
		struct fg_slicefile_stack st;
		char buf[256] = "";

		fg_slicefile__stack(s, i, &st);
		p = fg_slicefile__process(s, st.proc);
		if (p->pid != pid || p->start_time != start_time)
			continue;
		for (size_t k = 0; k < st.n; k++) {
			if (k)
				strcat(buf, ";");
			strcat(buf, fg_slicefile__string(s, st.frames[k]));
		}
		if (strcmp(buf, frames) == 0)
			total += st.count;
	}
	return total;
}

TEST(merging_adds_counts_of_the_same_stack_of_the_same_process)
{
	const struct fg_slicefile_process a = { 10, 100, 0, "a", NULL, NULL },
					  b = { 20, 200, 0, "b", NULL, NULL },
					  a_reused = {
						  10, 999, 0, "a2", NULL, NULL
					  }; /* pid 10 again, later */
	const struct fg_slicefile_process p1[] = { a, b }, p2[] = { b, a, a_reused };
	const char *const s1[] = { "main;x 3", "main;y 1", "main;x 5" };
	const uint32_t s1p[] = { 0, 0, 1 };
	const char *const s2[] = { "main;x 2", "main;x 4", "main;x 7" };
	const uint32_t s2p[] = { 1, 0, 2 };
	struct fg_slicefile *in[2], *out;
	struct fg_slicefile_writer *w;
	const uint8_t *data;
	size_t len;

	in[0] = make_slice(0, p1, 2, s1, s1p, 3);
	in[1] = make_slice(10, p2, 3, s2, s2p, 3);
	ASSERT_OK(fg_slicefile_merge((const struct fg_slicefile *const *)in, 2, 0, 20, &w));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &out));
	ASSERT_U64_EQ(fg_slicefile__start(out), 0);
	ASSERT_U64_EQ(fg_slicefile__end(out), 20);
	ASSERT_EQ(fg_slicefile__n_processes(out), 3);
	ASSERT_EQ(fg_slicefile__n_stacks(out), 4);
	ASSERT_U64_EQ(count_of(out, 10, 100, "main;x"), 5);
	ASSERT_U64_EQ(count_of(out, 10, 100, "main;y"), 1);
	ASSERT_U64_EQ(count_of(out, 20, 200, "main;x"), 9);
	/* The same pid, another process: kept apart. */
	ASSERT_U64_EQ(count_of(out, 10, 999, "main;x"), 7);
	fg_slicefile__free(out);
	fg_slicefile_writer__free(w);
	fg_slicefile__free(in[0]);
	fg_slicefile__free(in[1]);
}

/*
 * Version 2's times: each sample at its tick (whole multiples of the tick
 * since the epoch, before the slice's start too), read back as written,
 * merged as their stacks merge; a file whose times do not add up to its
 * stacks is refused; a merge with a source without times has none.
 */
TEST(times_read_back_at_their_ticks_and_merge_with_their_stacks)
{
	static const char *const a[] = { "main", "hot" };
	static const char *const b[] = { "main", "cold" };
	const struct fg_slicefile_process p = { 7, 1, 0, "app", NULL, NULL };
	/* Slices of 10 s from 1,700,000,000,005 ms: not on a tick. */
	const uint64_t t0 = 1700000000005ULL;
	struct fg_slicefile_writer *w, *m;
	struct fg_slicefile *s1, *s2, *s3, *merged;
	const struct fg_slicefile_time *t;
	struct fg_slicefile_stack st;
	const uint8_t *data;
	size_t len;
	uint32_t i;

	ASSERT_OK(fg_slicefile_writer__new(t0 * 1000000, (t0 + 10000) * 1000000, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &i));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, i, a, 2, 3));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, i, b, 2, 2));
	ASSERT_EQ(fg_slicefile_writer__add_time(w, 0, (int64_t)t0, 1), -EINVAL); /* no times yet */
	ASSERT_OK(fg_slicefile_writer__set_times(w, 10));
	ASSERT_OK(fg_slicefile_writer__add_time(w, 0, (int64_t)t0 + 1225, 1));
	ASSERT_OK(fg_slicefile_writer__add_time(w, 0, (int64_t)t0 + 1230, 1)); /* the same tick */
	ASSERT_OK(fg_slicefile_writer__add_time(w, 1, (int64_t)t0 - 7, 2)); /* before the start */
	ASSERT_OK(fg_slicefile_writer__add_time(w, 0, (int64_t)t0 + 9999, 1));
	ASSERT_EQ(fg_slicefile_writer__add_time(w, 2, (int64_t)t0, 1), -EINVAL);
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s1));
	ASSERT_EQ(fg_slicefile__tick_ms(s1), 10);
	ASSERT_EQ(fg_slicefile__n_times(s1), 3);
	t = fg_slicefile__time(s1, 0);
	ASSERT_EQ(t->time_ms, 1699999999990LL);
	ASSERT_EQ(t->stack, 1);
	ASSERT_U64_EQ(t->count, 2);
	t = fg_slicefile__time(s1, 1);
	ASSERT_EQ(t->time_ms, 1700000001230LL);
	ASSERT_U64_EQ(t->count, 2);
	ASSERT_EQ(fg_slicefile__time(s1, 2)->time_ms, 1700000010000LL);

	/* Times that do not add up to their stack's count: the file lies. */
	fg_slicefile_writer__free(w);
	ASSERT_OK(fg_slicefile_writer__new(t0 * 1000000, (t0 + 10000) * 1000000, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &i));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, i, a, 2, 3));
	ASSERT_OK(fg_slicefile_writer__set_times(w, 10));
	ASSERT_OK(fg_slicefile_writer__add_time(w, 0, (int64_t)t0, 2));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_EQ(fg_slicefile__parse(data, len, &s3), -EBADMSG);
	fg_slicefile_writer__free(w);

	/* The next slice: its "hot" merges with the first's, and so do its times. */
	ASSERT_OK(fg_slicefile_writer__new((t0 + 10000) * 1000000, (t0 + 20000) * 1000000, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &i));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, i, a, 2, 1));
	ASSERT_OK(fg_slicefile_writer__set_times(w, 10));
	ASSERT_OK(fg_slicefile_writer__add_time(w, 0, (int64_t)t0 + 15000, 1));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s2));
	fg_slicefile_writer__free(w);
	{
		const struct fg_slicefile *both[] = { s1, s2 };

		ASSERT_OK(fg_slicefile_merge(both, 2, t0 * 1000000, (t0 + 20000) * 1000000, &m));
	}
	ASSERT_OK(fg_slicefile_writer__finish(m, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &merged));
	ASSERT_EQ(fg_slicefile__n_stacks(merged), 2);
	ASSERT_EQ(fg_slicefile__n_times(merged), 4);
	t = fg_slicefile__time(merged, 3);
	ASSERT_EQ(t->time_ms, 1700000015000LL);
	fg_slicefile__stack(merged, t->stack, &st);
	ASSERT_TRUE(strcmp(fg_slicefile__string(merged, st.frames[1]), "hot") == 0);
	ASSERT_U64_EQ(st.count, 4);
	fg_slicefile__free(merged);
	fg_slicefile_writer__free(m);

	/* A source without times: the merged file has none. */
	ASSERT_OK(fg_slicefile_writer__new((t0 + 20000) * 1000000, (t0 + 30000) * 1000000, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &i));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, i, a, 2, 1));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s3));
	fg_slicefile_writer__free(w);
	{
		const struct fg_slicefile *three[] = { s1, s2, s3 };

		ASSERT_OK(fg_slicefile_merge(three, 3, t0 * 1000000, (t0 + 30000) * 1000000, &m));
	}
	ASSERT_OK(fg_slicefile_writer__finish(m, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &merged));
	ASSERT_EQ(fg_slicefile__tick_ms(merged), 0);
	ASSERT_EQ(fg_slicefile__n_times(merged), 0);
	fg_slicefile__free(merged);
	fg_slicefile_writer__free(m);
	fg_slicefile__free(s1);
	fg_slicefile__free(s2);
	fg_slicefile__free(s3);

	/* A day either side of the slice at most: the reader takes what the writer wrote. */
	ASSERT_OK(fg_slicefile_writer__new(t0 * 1000000, (t0 + 10000) * 1000000, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &i));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, i, a, 2, 2));
	ASSERT_OK(fg_slicefile_writer__set_times(w, 10));
	ASSERT_EQ(fg_slicefile_writer__add_time(w, 0, (int64_t)t0 - FG_SLICEFILE_TIME_SLACK_MS - 1,
						1),
		  -ERANGE);
	ASSERT_EQ(fg_slicefile_writer__add_time(w, 0,
						(int64_t)t0 + 10000 + FG_SLICEFILE_TIME_SLACK_MS +
							1,
						1),
		  -ERANGE);
	ASSERT_OK(fg_slicefile_writer__add_time(w, 0, (int64_t)t0 - FG_SLICEFILE_TIME_SLACK_MS, 1));
	ASSERT_OK(fg_slicefile_writer__add_time(w, 0,
						(int64_t)t0 + 10000 + FG_SLICEFILE_TIME_SLACK_MS,
						1));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s1));
	ASSERT_EQ(fg_slicefile__n_times(s1), 2);
	fg_slicefile__free(s1);
	fg_slicefile_writer__free(w);

	/* An idle slice with times: no samples, no times, and still version 2's section. */
	ASSERT_OK(fg_slicefile_writer__new(t0 * 1000000, (t0 + 10000) * 1000000, &w));
	ASSERT_OK(fg_slicefile_writer__set_times(w, 10));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s1));
	ASSERT_EQ(fg_slicefile__tick_ms(s1), 10);
	ASSERT_EQ(fg_slicefile__n_times(s1), 0);
	fg_slicefile__free(s1);
	fg_slicefile_writer__free(w);
}

/* A slice of [start, end) with one sample and the given stretches, parsed back. */
static struct fg_slicefile *covering(uint64_t start, uint64_t end,
				     const struct fg_slicefile_span *spans, size_t n)
{
	static const char *const frames[] = { "main" };
	const struct fg_slicefile_process p = { 1, 2, 0, "burn", NULL, NULL };
	struct fg_slicefile_writer *w;
	struct fg_slicefile *s;
	const uint8_t *data;
	uint32_t idx;
	size_t len;

	ASSERT_OK(fg_slicefile_writer__new(start, end, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &idx));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, idx, frames, 1, 1));
	for (size_t i = 0; i < n; i++)
		ASSERT_OK(fg_slicefile_writer__add_coverage(w, &spans[i]));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s));
	fg_slicefile_writer__free(w);
	return s;
}

TEST(a_merge_keeps_its_sources_gaps_and_losses)
{
	const struct fg_slicefile_span b_spans[] = { { 10, 15, 0 } }, c_spans[] = { { 17, 20, 2 } },
				       d_spans[] = { { 20, 25, 0 } }, e_spans[] = { { 24, 30, 1 } };
	/* Without a section (as before version 3): its whole span. */
	struct fg_slicefile *in[] = {
		covering(0, 10, NULL, 0),
		covering(10, 15, b_spans, 1),
		covering(17, 20, c_spans, 1),
		covering(20, 25, d_spans, 1),
		/* Overlapping the one before (a clock set back): united, losses added. */
		covering(24, 30, e_spans, 1),
	};
	const struct fg_slicefile_span want[] = { { 0, 15, 0 }, { 17, 20, 2 }, { 20, 30, 1 } };
	struct fg_slicefile_writer *w;
	struct fg_slicefile *m;
	const uint8_t *data;
	size_t len;

	ASSERT_OK(fg_slicefile_merge((const struct fg_slicefile *const *)in, 5, 0, 30, &w));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &m));
	ASSERT_EQ(fg_slicefile__n_coverage(m), 3);
	for (size_t i = 0; i < 3; i++) {
		ASSERT_U64_EQ(fg_slicefile__coverage(m, i)->start_ns, want[i].start_ns);
		ASSERT_U64_EQ(fg_slicefile__coverage(m, i)->end_ns, want[i].end_ns);
		ASSERT_U64_EQ(fg_slicefile__coverage(m, i)->lost, want[i].lost);
	}
	fg_slicefile__free(m);
	fg_slicefile_writer__free(w);

	/* Cut to the merged span; sources wholly outside it leave it covering nothing. */
	ASSERT_OK(fg_slicefile_merge((const struct fg_slicefile *const *)in, 2, 12, 14, &w));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &m));
	ASSERT_EQ(fg_slicefile__n_coverage(m), 1);
	ASSERT_U64_EQ(fg_slicefile__coverage(m, 0)->start_ns, 12);
	ASSERT_U64_EQ(fg_slicefile__coverage(m, 0)->end_ns, 14);
	fg_slicefile__free(m);
	fg_slicefile_writer__free(w);
	ASSERT_OK(fg_slicefile_merge((const struct fg_slicefile *const *)in, 1, 40, 50, &w));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &m));
	ASSERT_EQ(fg_slicefile__n_coverage(m), 0);
	fg_slicefile__free(m);
	fg_slicefile_writer__free(w);
	for (size_t i = 0; i < 5; i++)
		fg_slicefile__free(in[i]);
}
