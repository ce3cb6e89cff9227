/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The on-disk form of one history slice: what the whole machine ran during
 * [start, end), per process, as symbolized stacks with sample counts. Names
 * are stored, not addresses, so a slice stays readable after the binaries it
 * came from are upgraded or deleted. docs/HISTORY-FORMAT.md describes the
 * bytes; in short:
 *
 *   header   "FGDH", u16 version, u16 header size, u32 flags,
 *            u32 body length, u64 start and end (ns since the epoch),
 *            u32 sampling frequency (0: unknown; absent from the first
 *            files, whose header is 8 bytes shorter), u32 reserved
 *   body     varint-coded: the string table, the processes, the stacks,
 *            (version 2 on, flag 1) the samples' times: tick, (tick delta,
 *            stack, count)..., and (version 3, flag 2) the coverage: the
 *            stretches of the span fgd was sampling through, each with the
 *            samples it lost
 *   trailer  u32 CRC-32C of header and body
 *
 * Everything little-endian. A reader refuses a file whose checksum does not
 * match (a torn or corrupted write) with -EBADMSG, and a version it does not
 * know with -EPROTONOSUPPORT; every count and index is checked against what
 * the bytes can hold, so no input makes it read out of bounds or allocate
 * more than a small multiple of the file's size.
 *
 * Pure: no files, no logging (writing it to disk crash-safely is the
 * caller's part).
 */

#include "base/macro.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FG_SLICEFILE_VERSION 3
#define FG_SLICEFILE_MAX_DEPTH 1024 /* frames per stack */

/* One process of a slice. Strings may be NULL (unknown). */
struct fg_slicefile_process {
	int32_t pid;
	uint64_t start_time; /* ns since the epoch: with pid, tells pid reuse apart */
	uint32_t uid;
	const char *comm, *exe, *cgroup;
};

struct fg_slicefile_writer;

/* Caller frees *ret with fg_slicefile_writer__free(). 0 or -ENOMEM. */
int fg_slicefile_writer__new(uint64_t start_ns, uint64_t end_ns, struct fg_slicefile_writer **ret);
struct fg_slicefile_writer *fg_slicefile_writer__free(struct fg_slicefile_writer *w);

/* Adds a process (strings copied) and stores its index. 0, -ENOMEM or -E2BIG. */
int fg_slicefile_writer__add_process(struct fg_slicefile_writer *w,
				     const struct fg_slicefile_process *p, uint32_t *ret_index);

/*
 * Adds count samples of the stack frames[0..n) (root first, strings copied)
 * to process proc. 0, -EINVAL (no such process, no frames, too deep, zero
 * count), -ENOMEM or -E2BIG.
 */
int fg_slicefile_writer__add_stack(struct fg_slicefile_writer *w, uint32_t proc,
				   const char *const *frames, size_t n, uint64_t count);

/*
 * The file keeps its samples' times, in ticks of tick_ms: every sample of
 * the slice must then be given one (fg_slicefile_writer__add_time()), or
 * readers find the file inconsistent. 0 or -EINVAL (a tick of 0).
 */
int fg_slicefile_writer__set_times(struct fg_slicefile_writer *w, uint32_t tick_ms);
/*
 * How far a sample's time may lie outside its slice's span (a sample taken
 * before it and added after it began): readers refuse a file with times
 * further out.
 */
#define FG_SLICEFILE_TIME_SLACK_MS (24 * 3600 * 1000LL)

/*
 * count samples of stack (its index, in the order the stacks were added)
 * taken at time_ms (Unix ms; cut to the tick it is in: ticks are whole
 * multiples of the tick's length since the epoch, whatever the slice's
 * start). 0, -EINVAL (no times, no such stack, a count of 0), -ERANGE (a
 * time further than FG_SLICEFILE_TIME_SLACK_MS outside the slice) or
 * -ENOMEM.
 */
int fg_slicefile_writer__add_time(struct fg_slicefile_writer *w, uint32_t stack, int64_t time_ms,
				  uint64_t count);

/* The sampling frequency, in Hz, the counts were taken at; 0 (the default): unknown. */
void fg_slicefile_writer__set_frequency(struct fg_slicefile_writer *w, uint32_t hz);

/*
 * A stretch of a slice's span that fgd was sampling through, and the
 * samples it lost there (the kernel's lost records, and samples fgd could
 * not keep). Time in a slice's span outside its stretches is a gap: fgd was
 * not sampling (stopped, or its loop stalled), which is not idle time. A
 * slice fgd writes covers its span; a merged one its sources' stretches.
 */
struct fg_slicefile_span {
	uint64_t start_ns, end_ns; /* [start, end), within the slice's span */
	uint64_t lost;
};

/*
 * Adds a stretch the slice covers; stretches are added in time order and do
 * not overlap. A file given none has no coverage section: readers take it
 * as covering its span, losses unknown, as they take files written before
 * version 3. 0, -EINVAL (empty, out of the span, out of order) or -ENOMEM.
 */
int fg_slicefile_writer__add_coverage(struct fg_slicefile_writer *w,
				      const struct fg_slicefile_span *span);

/*
 * The file's bytes, borrowed until the writer is freed or written to again.
 * 0, -ENOMEM, or -E2BIG for a body past 4 GiB.
 */
int fg_slicefile_writer__finish(struct fg_slicefile_writer *w, const uint8_t **ret_data,
				size_t *ret_len);

struct fg_slicefile;

/*
 * Parses a file's bytes (not kept). Caller frees *ret with fg_slicefile__free().
 * Returns 0; -EBADMSG for a file that is not a slice, is truncated, fails its
 * checksum or is inconsistent (fg_slicefile_diagnose() says which);
 * -EPROTONOSUPPORT for a later version; -ENOMEM.
 */
int fg_slicefile__parse(const void *data, size_t len, struct fg_slicefile **ret);

/* Why bytes fg_slicefile__parse() refused with -EBADMSG are not a slice. */
enum fg_slicefile_damage {
	FG_SLICEFILE_NOT_SLICE,    /* no slice magic: another file, or random bytes */
	FG_SLICEFILE_TRUNCATED,    /* shorter than its header says */
	FG_SLICEFILE_BAD_CHECKSUM, /* whole, but its bytes changed: a flipped bit, a torn write */
	FG_SLICEFILE_MALFORMED,    /* its checksum matches, its contents do not add up */
};
/* The first check data fails; for bytes that parse, FG_SLICEFILE_MALFORMED. */
enum fg_slicefile_damage fg_slicefile_diagnose(const void *data, size_t len);
/* "not a slice file", "truncated", "bad checksum", "malformed": static strings. */
const char *fg_slicefile_damage_name(enum fg_slicefile_damage d);
struct fg_slicefile *fg_slicefile__free(struct fg_slicefile *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_slicefile *, fg_slicefile__free);

uint64_t fg_slicefile__start(const struct fg_slicefile *s);
/* The sampling frequency in Hz, or 0 if unknown (files written before it was stored, mixed merges). */
uint32_t fg_slicefile__frequency(const struct fg_slicefile *s);
uint64_t fg_slicefile__end(const struct fg_slicefile *s);
size_t fg_slicefile__n_processes(const struct fg_slicefile *s);
/* Borrowed until the slice is freed. */
const struct fg_slicefile_process *fg_slicefile__process(const struct fg_slicefile *s, size_t i);
size_t fg_slicefile__n_stacks(const struct fg_slicefile *s);

/* Stack i: its process index, its count, and its frames (borrowed; root first). */
struct fg_slicefile_stack {
	uint32_t proc;
	uint64_t count;
	size_t n;
	const uint32_t *frames; /* string ids: fg_slicefile__string() */
};
void fg_slicefile__stack(const struct fg_slicefile *s, size_t i, struct fg_slicefile_stack *ret);
/* Borrowed until the slice is freed. */
const char *fg_slicefile__string(const struct fg_slicefile *s, uint32_t id);

/*
 * The stretches the slice covers, in time order: a file without a coverage
 * section (before version 3) covers its whole span (none if it is empty) and
 * lost nothing it knew of; a merge of sources that lay outside its span covers none.
 */
size_t fg_slicefile__n_coverage(const struct fg_slicefile *s);
/* Stretch i; borrowed until the slice is freed. */
const struct fg_slicefile_span *fg_slicefile__coverage(const struct fg_slicefile *s, size_t i);

/* Samples of a stack in one tick: what a file with times holds, in time order. */
struct fg_slicefile_time {
	int64_t time_ms; /* the tick's start, Unix ms */
	uint32_t stack;
	uint64_t count;
};

/* The ticks' length in ms, or 0: the file keeps no times (version 1, or they were lost). */
uint32_t fg_slicefile__tick_ms(const struct fg_slicefile *s);
size_t fg_slicefile__n_times(const struct fg_slicefile *s);
/* Time i; borrowed until the slice is freed. */
const struct fg_slicefile_time *fg_slicefile__time(const struct fg_slicefile *s, size_t i);

/*
 * Compaction: the n slices merged into one covering [start_ns, end_ns), as a
 * writer the caller finishes and frees (fg_slicefile_writer__free()). A process
 * is the same across slices when its pid and start time are; a stack is the
 * same when its process and frames are, and their counts add up. The
 * merged file has its sources' frequency if they all have the same, else
 * none (0): counts taken at different rates are added as they are; and
 * their times if they all have them, at one tick, else none. Its coverage
 * is its sources' stretches, cut to [start_ns, end_ns): overlapping ones
 * united (their losses added), abutting ones without losses joined, so a
 * gap between sources stays a gap and a loss keeps its stretch. 0,
 * -ENOMEM or -E2BIG.
 */
int fg_slicefile_merge(const struct fg_slicefile *const *slices, size_t n, uint64_t start_ns,
		       uint64_t end_ns, struct fg_slicefile_writer **ret);

/* CRC-32C (Castagnoli) of data, continuing from crc (0 to start). */
uint32_t fg_crc32c(uint32_t crc, const void *data, size_t len);
