/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The machine's processes, their executable mappings and their threads'
 * names: built from /proc at start and kept current by the tracking records
 * (FORK, COMM, MMAP2, EXIT).
 *
 * A pid's life is a chain of generations. Exec and pid reuse each start a
 * new one, and samples are matched to the generation that was alive at the
 * sample's timestamp. So a sample read after its process exec'd, exited or
 * had its pid recycled still resolves against the maps it ran with, and a
 * new process is never given an old one's maps. Ended generations are kept
 * for a grace period, then reaped.
 *
 * When a process is first seen (read from /proc, forked, or exec'd) the
 * table also captures what it cannot ask later, once the process has gone:
 * its filesystem root, where the paths of its mappings mean something
 * (fgd-root.h), and its cgroup. A child that is already gone takes its
 * parent's, an exec'd image that is gone its previous generation's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf/record.h"
#include "proto/status-types.h"
#include "resolver/fgd-process.h"
#include "symbols/fgd-root.h"
#include "symbols/fgd-symbols.h"

struct fg_proctab;
struct fg_jit;

/* sym is borrowed and must outlive the table. Caller frees *ret with fg_proctab__free(). */
int fg_proctab__new(struct fg_symbolizer *sym, struct fg_proctab **ret);
struct fg_proctab *fg_proctab__free(struct fg_proctab *t);

struct fg_budget;
/*
 * Charges the table (and its JIT maps, fgd-jit.h) to budget (common/base/budget.h;
 * borrowed until the table is freed, or set to NULL before). A process the
 * budget has no room for is dropped like one past the cap of generations,
 * and counted alike (dropped_processes).
 */
void fg_proctab__set_budget(struct fg_proctab *t, struct fg_budget *budget);

/* The JIT maps of the table's processes (fgd-jit.h). Borrowed until the table is freed. */
struct fg_jit *fg_proctab__jit(struct fg_proctab *t);

/* Reads every process in /proc. Processes that vanish meanwhile are skipped. */
int fg_proctab__scan(struct fg_proctab *t);

/* Applies one tracking record (other record types are ignored). */
void fg_proctab__handle(struct fg_proctab *t, const struct fg_record *rec);

/*
 * The generation of pid alive at time (CLOCK_MONOTONIC ns). If the pid was
 * never seen, it is read from /proc once (a process we missed the birth
 * of). NULL if it cannot be known. Borrowed until the next reap.
 */
struct fg_process *fg_proctab__find(struct fg_proctab *t, pid_t pid, uint64_t time);

/* The current generation of pid, without consulting /proc. Borrowed until the next reap. */
struct fg_process *fg_proctab__current(struct fg_proctab *t, pid_t pid);

/*
 * The live process pid, for a client's request: its current generation, read
 * from /proc if we have none. Unlike find(), it leaves nothing behind for a
 * pid that does not exist. Returns 0, or -ESRCH; for the id of a thread
 * rather than a process, also stores the thread's process in *ret_tgid.
 */
int fg_proctab__get_live(struct fg_proctab *t, pid_t pid, struct fg_process **ret, pid_t *ret_tgid);

/*
 * The thread's name at time (CLOCK_MONOTONIC ns), else the process's; never
 * NULL. A name set after the sample does not rename it.
 */
const char *fg_proctab__comm(struct fg_proctab *t, pid_t tid, const struct fg_process *proc,
			     uint64_t time);

/*
 * Who may profile the process, as ptrace would see it: its uid if its real,
 * effective, saved and filesystem uids are that one uid, its gids likewise
 * agree, it holds no effective capabilities and it is dumpable (its /proc
 * files are owned by it); else 0, root only. Read from /proc on first use per
 * generation (privileges change only at exec). -ESRCH if it is gone.
 */
int fg_process_owner(struct fg_process *p, uid_t *ret);

/*
 * When the process p belongs to started (its first generation's fork; exec
 * keeps it), in ns since the epoch, as /proc/PID/stat's starttime gives it:
 * whole clock ticks after the boot time of /proc/stat. The same process has
 * the same value in every run of fgd, so with the pid it names a process
 * across restarts. Read from /proc on first use per process, or worked out
 * from the fork record's time when the process is gone. -ESRCH if neither
 * is known (a process gone before we saw it), -ENODATA without a boot time.
 */
int fg_proctab__born(struct fg_proctab *t, struct fg_process *p, uint64_t *ret);

/* Frees generations and thread names that ended before now - grace_ns. */
void fg_proctab__reap(struct fg_proctab *t, uint64_t now, uint64_t grace_ns);

/* The table's part of status ("processes"), its roots' (fgd-root.h) included. */
void fg_proctab__stats(const struct fg_proctab *t, struct fg_status_processes *ret);

/* Inserts a mapping, trimming or splitting what it overlaps (exported for tests). */
int fg_process_add_map(struct fg_process *p, uint64_t start, uint64_t end, uint64_t pgoff,
		       struct fg_dso *dso);
