/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * JIT symbol maps: the /tmp/perf-PID.map files that runtimes write for perf
 * (node --perf-basic-prof, jcmd PID Compiler.perfmap, LuaJIT, .NET, ...).
 *
 * Format, as producers really write it: one "START SIZE name" per line.
 * START and SIZE are hex, with or without "0x" (jcmd writes it, node does
 * not), separated by spaces or tabs; the name is the rest of the line and
 * may hold spaces ("LazyCompile:*hot /srv/app.js:3"). A trailing CR is
 * dropped, empty lines are ignored.
 *
 * Incremental. A runtime appends to its map for its whole life, so the
 * parser takes the file in appended chunks of any size. A line is parsed
 * only once its '\n' arrives: a file cut mid-line gives no entry for that
 * line until the rest is fed.
 *
 * Overlaps. Code is freed and its memory reused, so a later entry may cover
 * an earlier one, wholly or in part. A lookup returns the latest entry
 * covering the address, as perf does.
 *
 * Hostile input. Malformed lines are skipped and counted, and parsing goes on
 * with the next line: non-hex or missing fields, hex of more than 64 bits, a
 * zero SIZE, START + SIZE past the top of the address space, an empty name,
 * a NUL byte anywhere in the line, and lines longer than the limit (which are
 * never buffered whole). Entries past the entry or name-byte limits are
 * dropped and counted.
 *
 * Lookups and appends. Entries are appended to a log; a lookup first folds
 * entries appended since the last lookup into a sorted array of disjoint
 * segments (sorting only the new ones, then one merge pass over the array),
 * then binary-searches it. So a run of appends costs one fold, and lookups
 * between appends cost O(log n).
 */

#include "base/macro.h"
#include <stddef.h>
#include <stdint.h>

/* Defaults, sized for a long-lived node process and a big Java code cache. */
#define FG_PERFMAP_MAX_LINE 4096
#define FG_PERFMAP_MAX_ENTRIES (UINT32_C(1) << 20)
#define FG_PERFMAP_MAX_NAME_BYTES (UINT32_C(64) << 20)

struct fg_perfmap_limits {
	size_t max_line;         /* longest line kept, without its '\n' */
	uint32_t max_entries;    /* entries kept, ever: later ones are dropped */
	uint32_t max_name_bytes; /* bytes of names kept, ever */
};

struct fg_perfmap_stats {
	uint64_t bytes;     /* fed */
	uint64_t lines;     /* complete lines seen, empty ones included */
	uint64_t entries;   /* kept */
	uint64_t malformed; /* lines skipped as malformed or too long */
	uint64_t dropped;   /* well-formed entries refused at a limit */
	uint64_t segments;  /* disjoint ranges the lookup index holds */
};

struct fg_perfmap;

/* limits NULL: the defaults above. Caller frees *ret with fg_perfmap__free(). 0 or -ENOMEM. */
int fg_perfmap__new(const struct fg_perfmap_limits *limits, struct fg_perfmap **ret);
struct fg_perfmap *fg_perfmap__free(struct fg_perfmap *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_perfmap *, fg_perfmap__free);

/*
 * Appends the next len bytes of the file. An incomplete last line is kept
 * (up to the line limit) until a later call completes it. Returns 0 or
 * -ENOMEM; on -ENOMEM the line being parsed is lost and counted as dropped.
 */
int fg_perfmap__feed(struct fg_perfmap *m, const void *data, size_t len);

/*
 * The entry covering addr: the latest one fed if several do. Returns its
 * index (0 for the first entry kept, in file order), or -ENOENT. Entries fed
 * since the previous lookup are indexed first; if that fails for want of
 * memory, they are searched one by one instead, so a lookup is never wrong.
 */
int64_t fg_perfmap__lookup(struct fg_perfmap *m, uint64_t addr);

/* Entry idx's name, NUL-terminated. Borrowed until the next feed or free. */
const char *fg_perfmap__name(const struct fg_perfmap *m, uint32_t idx);
/* Entry idx's range [start, end). */
void fg_perfmap__range(const struct fg_perfmap *m, uint32_t idx, uint64_t *ret_start,
		       uint64_t *ret_end);

void fg_perfmap__stats(const struct fg_perfmap *m, struct fg_perfmap_stats *ret);
/* Bytes the map holds, for memory budgets. */
size_t fg_perfmap__bytes(const struct fg_perfmap *m);
