/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One generation of a process as the process table (fgd-proctab.h) keeps
 * it: its identity, its executable mappings and what was captured when it
 * was first seen. A type of its own so that the JIT maps (fgd-jit.h), which
 * hang off a generation, need not include the table, which owns them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fg_dso;
struct fg_jitmap;
struct fg_root;

#define FG_COMM_LEN 16
#define FG_TIME_ALIVE UINT64_MAX

struct fg_map {
	uint64_t start, end, pgoff;
	struct fg_dso *dso; /* owned reference */
};

struct fg_process {
	pid_t pid;
	uint64_t serial;     /* unique for the daemon's lifetime */
	uint64_t lineage;    /* serial of the generation that began this process (exec keeps it) */
	pid_t ppid;          /* the process that forked it (exec keeps it); 0: not seen */
	uint64_t start_time; /* CLOCK_MONOTONIC ns; 0 = before we started watching */
	uint64_t end_time;   /* exit or exec; FG_TIME_ALIVE while current */
	uint64_t scanned_at; /* when /proc was read for it; 0 if built from records */
	bool from_exec;      /* began when the previous generation exec'd */
	/* the process's start, ns since the epoch, as /proc tells it; see fg_proctab__born() */
	uint64_t born;
	bool owner_known;
	uid_t owner; /* see fg_process_owner() */
	char comm[FG_COMM_LEN];
	struct fg_root *root; /* owned reference: where its paths mean something; NULL: ours */
	char *cgroup;         /* owned: its cgroup v2 path; NULL if unknown */
	struct fg_map *maps;  /* owned; sorted by start, non-overlapping */
	size_t n_maps, cap_maps;
	struct fg_process *older; /* owned: the previous generation of this pid */
	struct fg_jitmap *jit;    /* owned reference: its JIT map (fgd-jit.h); NULL until needed */
};

/*
 * True if gen belongs to the process whose lineage is given: the same
 * process in the sense of `perf record -p`, which follows it through exec.
 * Lineages outlive the generations they were read from.
 */
static inline bool fg_process_is(const struct fg_process *gen, uint64_t lineage)
{
	return gen && gen->lineage == lineage;
}

/* The mapping containing addr, or NULL. */
static inline const struct fg_map *fg_process_find_map(const struct fg_process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}
