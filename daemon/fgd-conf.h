/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgd.conf(5): the keys of the [fgd] section and the built-in defaults, in
 * one table. Parsing is pure (no logging): problems go to the caller's
 * error function, with their line numbers, and the caller logs them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/conf.h"
#include "proto/proto.h"
#include "storage/compaction.h"

#define FGD_DEFAULT_FREQUENCY 99
#define FGD_DEFAULT_RING_PAGES 128 /* 512 KiB per CPU: about half a second at 999 Hz */
#define FGD_TRACK_RING_PAGES 64
/* Always-on sampling: the other issue-5 work measures and may retune this. */
#define FGD_DEFAULT_ALWAYS_ON_FREQUENCY 19
/*
 * MemoryMax=: fgd's memory budget, everything it holds (common/base/budget.h).
 * The default keeps a daemon recording a busy machine at 999 Hz under
 * 96 MiB of RSS (docs/PERFORMANCE.md); below the minimum, its own code,
 * kallsyms, process table and CFI row cache leave no room to name anything.
 */
#define FGD_DEFAULT_MEMORY_MAX (96ULL << 20)
#define FGD_MIN_MEMORY_MAX (32ULL << 20)
/* OffCpuMinBlockUSec=: as fgctl record --off-cpu's --min-block. */
#define FGD_DEFAULT_OFF_CPU_MIN_BLOCK_US 1
#define FGD_MAX_OFF_CPU_MIN_BLOCK_US 10000000
/*
 * OffCpuUserRate=: the blocks a second a non-root user's off-CPU (or
 * wall-clock) recording keeps at most; 0: no limit. The default is the
 * blocks fgd names in a few hundredths of a CPU second each second (DWARF
 * mode), as a user's sampling is held to 1000 Hz (docs/PERFORMANCE.md).
 */
#define FGD_DEFAULT_OFF_CPU_USER_RATE 10000
#define FGD_MAX_OFF_CPU_USER_RATE 10000000
/*
 * RealtimePriority=: the loop's SCHED_FIFO priority, the lowest by default:
 * above every thread at normal priority, below any other real-time one.
 */
#define FGD_DEFAULT_REALTIME_PRIORITY 1
/* systemd's StateDirectory=fgd is always under /var/lib. */
#define FGD_DEFAULT_STATE_DIRECTORY "/var/lib/fgd"
/* ReaderGroup='s default, when a group of that name exists (systemd/fgd.sysusers makes it). */
#define FGD_DEFAULT_READER_GROUP "fgd-readers"
#define FGD_MAX_CONFIG_FILE (64 * 1024)

/*
 * What fgd.conf(5) and the command line set; defaults in fgd-conf.c. SIGHUP
 * builds a new one and swaps it in (fgd.c's reload()), so nothing
 * may keep a pointer into it across loop iterations.
 */
struct fgd_config {
	const char *socket_path;  /* owned: fgd_config_done() frees it */
	const char *socket_group; /* owned; NULL: none */
	/*
	 * ReaderGroup=: its members may read every process's always-on data
	 * (fgd(8), "ACCESS CONTROL"). Owned; NULL: no reader role. reader_gid
	 * is what it names, looked up by fgd.c when the configuration is
	 * loaded (start and reload), not by the parser.
	 */
	const char *reader_group;
	gid_t reader_gid;
	uint32_t default_frequency;
	enum fg_call_graph call_graph; /* for requests that do not choose: FP or DWARF */
	uint32_t stack_dump;           /* DWARF mode's default dump size */
	size_t ring_pages;             /* per CPU, for sampling */
	size_t track_ring_pages;       /* per CPU, for tracking */

	/* Always-on sampling (docs/ARCHITECTURE.md, "Always-on"). */
	bool always_on;                /* AlwaysOn= */
	uint32_t always_on_frequency;  /* AlwaysOnFrequency=, Hz */
	uint32_t slice_seconds;        /* SliceSec= */
	uint32_t window_seconds;       /* WindowSec= */
	bool off_cpu;                  /* OffCpu=: always-on off-CPU too (BPF) */
	uint32_t off_cpu_min_block_us; /* OffCpuMinBlockUSec=: shorter blocks are not kept */
	uint32_t off_cpu_user_rate;    /* OffCpuUserRate=: a user's blocks/s; 0: any */
	uint64_t memory_max;           /* MemoryMax=, bytes: the whole daemon's memory budget */
	const char *state_directory;   /* owned; StateDirectory=: the on-disk history */
	uint64_t history_max;          /* HistoryMax=: bytes of history kept on disk */
	uint64_t jit_map_max;       /* JitMapMax=: a bigger /tmp/perf-PID.map is refused; 0: none */
	uint32_t realtime_priority; /* RealtimePriority=: the loop's SCHED_FIFO one; 0: normal */
	struct fg_compaction_policy history_policy; /* HistoryTiers=, HistoryKeepSec= */
};

/* Fills *ret with the defaults. 0 or -ENOMEM; *ret is then freed with fgd_config_done(). */
int fgd_config_init(struct fgd_config *ret);
/* A deep copy of src into *ret. 0 or -ENOMEM. */
int fgd_config_copy(const struct fgd_config *src, struct fgd_config *ret);
/* Frees the strings a config owns and zeroes it; accepts a zeroed config. */
void fgd_config_done(struct fgd_config *c);
/* Replaces the owned string *field with a copy of value (NULL: none). 0 or -ENOMEM. */
int fgd_config_set_string(const char **field, const char *value);

/*
 * Applies the assignments in text (len bytes) over *c. On any error *c is
 * left as it was and -EINVAL (or -ENOMEM) is returned; on_error has heard
 * of every problem.
 */
int fgd_config_parse(struct fgd_config *c, const char *text, size_t len, fg_conf_error_fn on_error,
		     void *ctx);

/*
 * What no single key can check: WindowSec= against SliceSec=, the history's
 * tiers against HistoryKeepSec=. 0, or -EINVAL with
 * err->message set (err->line is left alone).
 */
int fgd_config_check(const struct fgd_config *c, struct fg_conf_error *err);

/*
 * Reads a whole configuration file of at most FGD_MAX_CONFIG_FILE bytes.
 * *ret_text (caller frees with free()) is NUL-terminated. 0, -ENOENT if it
 * does not exist, -EFBIG, or another negative errno.
 */
int fgd_config_read_file(const char *path, char **ret_text, size_t *ret_len);
