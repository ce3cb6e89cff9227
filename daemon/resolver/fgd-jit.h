/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Names for JIT-compiled code, from the perf maps runtimes write
 * (/tmp/perf-PID.map: node --perf-basic-prof, jcmd PID Compiler.perfmap).
 *
 * Each process generation has at most one map state, created on the first
 * lookup of an address in its anonymous executable memory and freed with the
 * generation (fgd-proctab calls fg_jit__release()). The file is read
 * incrementally: the bytes consumed are remembered, and a lookup that misses
 * re-reads what the file gained since, at most every JIT_RETRY interval. A
 * file that shrank, was replaced or rewritten in place is read again from
 * its start, as a new map.
 *
 * Where. The process may live in other mount and pid namespaces: the file is
 * /proc/PID/root/tmp/perf-NSPID.map, NSPID being the process's pid in its
 * own namespace (the last field of NSpid: in /proc/PID/status).
 *
 * Trust. The names end up in profiles other users may read, so a map is read
 * only if /tmp is a directory and the map a regular file (neither a
 * symlink), opened without following links or blocking, and owned by root
 * or by the process's uid (its real, effective, saved and filesystem uids
 * all equal; a process with mixed uids gets root-owned maps only). Anything
 * else is refused for the generation's life, and the refusal is visible to
 * recordings through fg_jitmap__info(). Files are only opened for a
 * generation that is its pid's live, current one.
 *
 * Memory. Each map keeps at most FG_PERFMAP_MAX_ENTRIES entries and
 * FG_PERFMAP_MAX_NAME_BYTES of names; all maps together stop growing at a
 * cap, or when the daemon's memory budget has no room for them (reads past
 * it are skipped and counted).
 *
 * Time. Maps are read inside the sampling loop, and their size and content
 * are a user's to choose: a map bigger than the per-map limit is refused,
 * and all maps together are read at a bounded rate (a token bucket: a
 * refresh that finds it spent is put off, and counted), so no map, however
 * big or many, keeps the loop from draining the rings on time.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/perfmap.h"
#include "proto/status-types.h"

struct fg_process;

enum fg_jit_state {
	FG_JIT_ABSENT,  /* no map file, or not readable yet (see error) */
	FG_JIT_READING, /* trusted and being read */
	FG_JIT_REFUSED, /* failed a trust rule (see refusal); never read */
};

enum fg_jit_refusal {
	FG_JIT_TRUSTED,
	FG_JIT_SYMLINK,     /* the map, or /tmp, is a symbolic link */
	FG_JIT_NOT_REGULAR, /* a FIFO, device, socket or directory */
	FG_JIT_OWNER,       /* owned by neither root nor the process's uid */
	FG_JIT_TOO_LARGE,   /* bigger than the per-map limit (fg_jit__set_max_map()) */
};

/* JitMapMax='s default: a map of 2^20 node entries is about 100 MiB. */
#define FG_JIT_DEFAULT_MAX_MAP (256ULL << 20)

struct fg_jit;
struct fg_jitmap;

struct fg_jit_frame {
	const char *name; /* borrowed until the next lookup in the same map */
	uint64_t id;      /* unique for the daemon's life: one id, one name */
};

/* One map as a recording reports it. */
struct fg_jitmap_info {
	pid_t pid;
	const char *path; /* borrowed until the map is unreferenced */
	enum fg_jit_state state;
	enum fg_jit_refusal refusal;
	int error;           /* negative errno of the last failed open or read; 0 if none */
	uid_t file_uid;      /* for FG_JIT_OWNER */
	uint64_t file_size;  /* for FG_JIT_TOO_LARGE and size_limited: the size last seen */
	bool budget_limited; /* a read was skipped: all maps together are at their budget */
	bool size_limited;   /* grew past the per-map limit while read: read up to it only */
	struct fg_perfmap_stats stats; /* of the map as now read (zero while absent or refused) */
};

/* Caller frees *ret with fg_jit__free(), after every generation released its map. */
int fg_jit__new(struct fg_jit **ret);
struct fg_jit *fg_jit__free(struct fg_jit *j);

/*
 * The per-map size limit (JitMapMax=; 0: none). A map found bigger is
 * refused (FG_JIT_TOO_LARGE); one that grows past it while it is read keeps
 * what was read and reads no further (size_limited).
 */
void fg_jit__set_max_map(struct fg_jit *j, uint64_t bytes);

struct fg_budget;
/*
 * Charges the maps held to budget's JIT part (common/base/budget.h; borrowed
 * until j is freed, or set to NULL before): a read that would not fit is
 * skipped, like one past the maps' own cap, and counted alike.
 */
void fg_jit__set_budget(struct fg_jit *j, struct fg_budget *budget);

/*
 * The map state of generation p, created on first use (the file is not
 * touched until a lookup). Borrowed until p is freed; fg_jitmap__ref() keeps
 * it longer. NULL on ENOMEM.
 */
struct fg_jitmap *fg_jit__map(struct fg_jit *j, struct fg_process *p);

/*
 * Names addr, an address in p's anonymous executable memory (or in none of
 * its mappings), from p's map m. Returns 1 and fills *ret if an entry covers
 * addr, else 0. A miss may open or re-read the file, rate-limited, and only
 * while p is alive and its pid's current generation. The rate limit does not
 * hold a miss to a look at the file made before since (CLOCK_MONOTONIC ns;
 * a recording's start): the file is looked at again then, so what was
 * written before a recording began names its samples. 0 asks nothing more
 * than the rate limit.
 */
int fg_jitmap__lookup(struct fg_jit *j, struct fg_jitmap *m, struct fg_process *p, uint64_t addr,
		      uint64_t since, struct fg_jit_frame *ret);

struct fg_jitmap *fg_jitmap__ref(struct fg_jitmap *m);
struct fg_jitmap *fg_jitmap__unref(struct fg_jitmap *m);
void fg_jitmap__info(const struct fg_jitmap *m, struct fg_jitmap_info *ret);

/* Called when p's generation is freed: drops the parsed map and p's reference. */
void fg_jit__release(struct fg_jit *j, struct fg_process *p);

/* The JIT maps' part of status ("jit"), the per-map limit included. */
void fg_jit__stats(const struct fg_jit *j, struct fg_status_jit *ret);

/* "symlink", "not_regular", "owner", "too_large"; NULL for FG_JIT_TRUSTED. */
const char *fg_jit_refusal_name(enum fg_jit_refusal r);
