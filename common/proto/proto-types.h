/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The protocol's types without its codec: limits, requests, output formats,
 * call-graph modes, grouping and their names. For code that holds a request
 * or a mode on the per-sample path and must not pull in json-c; the codec
 * that reads and writes them is proto/proto.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FG_PROTO_VERSION 1
/* Longest request line the daemon accepts. */
#define FG_PROTO_MAX_REQUEST 65536
#define FG_PROTO_MAX_PIDS 256
#define FG_PROTO_MAX_TITLE 256
#define FG_PROTO_MAX_FREQUENCY 100000
/* A week: longer recordings are certainly a mistake. */
#define FG_PROTO_MAX_DURATION_MS (7ULL * 24 * 3600 * 1000)

/* ---- requests ---- */

enum fg_cmd {
	FG_CMD_STATUS,
	FG_CMD_RECORD,
	FG_CMD_STOP,
	FG_CMD_SNAPSHOT, /* the always-on window, as a profile */
	FG_CMD_TOP,      /* the always-on window, processes by CPU share */
};

enum fg_format {
	FG_FORMAT_FOLDED,
	FG_FORMAT_SVG,
	FG_FORMAT_HTML,
	FG_FORMAT_TIMED, /* every sample with its time (common/profile/timed.h): recordings */
	FG_FORMAT_PPROF, /* pprof's profile.proto, gzipped (common/profile/pprof-model.h) */
	FG_FORMAT_SPEEDSCOPE, /* speedscope's JSON file, a profile per process (common/profile/speedscope.h) */
};

/* How user stacks are walked (docs/PERFORMANCE.md says which to pick). */
enum fg_call_graph {
	FG_CALL_GRAPH_DEFAULT, /* the daemon's configured mode */
	FG_CALL_GRAPH_FP,      /* the kernel follows frame pointers */
	FG_CALL_GRAPH_DWARF,   /* the daemon unwinds a copy of the stack with DWARF CFI */
};

/* Bytes of user stack copied per sample in dwarf mode: a multiple of 8. */
#define FG_PROTO_DEFAULT_STACK_DUMP 32768
#define FG_PROTO_MAX_STACK_DUMP 65528

/* What the root of every stack is, above the process name (docs/PROTOCOL.md). */
enum fg_group_by {
	FG_GROUP_PROCESS,     /* nothing: the process name is the root */
	FG_GROUP_CGROUP,      /* the process's cgroup v2 path, e.g. /system.slice/x.service */
	FG_GROUP_CGROUP_NAME, /* its last component, e.g. x.service */
};

/* Which frames a profile keeps below its root frames (fgctl's -u and -k). */
enum fg_frames_side {
	FG_FRAMES_ALL,
	FG_FRAMES_USER,   /* kernel frames dropped */
	FG_FRAMES_KERNEL, /* user frames dropped */
};

/* "all", "user" or "kernel"; NULL for a value out of range. */
const char *fg_frames_side_name(enum fg_frames_side s);
/* 0 and the side, or -EINVAL. */
int fg_frames_side_from_name(const char *name, enum fg_frames_side *ret);

/* The longest CPU list a recording takes, as text ("0-3,8,10-11"). */
#define FG_PROTO_MAX_CPUS 256

struct fg_record_request {
	bool all;
	pid_t pids[FG_PROTO_MAX_PIDS];
	size_t n_pids;
	uint64_t duration_ms; /* 0: until stopped */
	uint32_t frequency;   /* Hz; 0: the daemon's default */
	enum fg_format format;
	char title[FG_PROTO_MAX_TITLE]; /* empty: a default */
	bool kernel_suffix;             /* "_[k]" on kernel frames */
	bool jit_suffix;                /* "_[j]" on frames named from a JIT map */
	bool with_pid, with_tid;
	bool inline_frames; /* inlined functions as frames of their own (DWARF) */
	bool demangle;      /* C++ and Rust names demangled */
	enum fg_call_graph call_graph;
	uint32_t stack_dump; /* dwarf mode's dump size; 0: the daemon's default */
	enum fg_group_by group_by;
	bool off_cpu;          /* blocked time by stack (BPF) rather than on-CPU samples */
	bool wall;             /* on-CPU samples and off-CPU blocks, both in µs: wall-clock time */
	uint32_t min_block_us; /* off-CPU: shorter blocks are left out; 0: the default, 1 */
	/* Only the samples taken in [since_ms, until_ms), Unix ms; 0: from the start, to the end. */
	int64_t since_ms, until_ms;
	enum fg_frames_side frames;   /* user or kernel frames only; not with the timed format */
	bool children;                /* the pids' descendants too: the processes they start */
	char cpus[FG_PROTO_MAX_CPUS]; /* the CPUs to sample, "0-3,8"; empty: every online one */
	/* Only these threads of the pids' processes; none: every thread. */
	pid_t tids[FG_PROTO_MAX_PIDS];
	size_t n_tids;
};

#define FG_PROTO_MAX_MIN_BLOCK_US 1000000000
#define FG_PROTO_MAX_SELECTOR 1024
#define FG_PROTO_MAX_TOP 1000

/* A query of the always-on window (docs/PROTOCOL.md). */
struct fg_query_request {
	int64_t since_ms;                       /* Unix ms, >= 0 */
	int64_t until_ms;                       /* Unix ms; 0: now */
	pid_t pid;                              /* 0: any */
	int64_t uid;                            /* -1: any */
	char comm[FG_PROTO_MAX_SELECTOR + 1];   /* regex; empty: any */
	char cgroup[FG_PROTO_MAX_SELECTOR + 1]; /* empty: any */
	char exe[FG_PROTO_MAX_SELECTOR + 1];    /* empty: any */
	enum fg_format format;
	char title[FG_PROTO_MAX_TITLE];
	uint32_t limit;             /* top: processes listed, 1 to FG_PROTO_MAX_TOP (default 20) */
	bool off_cpu;               /* snapshot: of always-on off-CPU's blocked time (OffCpu=) */
	enum fg_group_by group_by;  /* snapshot: a cgroup frame above each process, as record's */
	bool with_pid;              /* snapshot: "comm-pid" process frames, as record's */
	enum fg_frames_side frames; /* snapshot: user or kernel frames only, as record's */
};

struct fg_request {
	enum fg_cmd cmd;
	struct fg_record_request record; /* for FG_CMD_RECORD */
	struct fg_query_request query;   /* for FG_CMD_SNAPSHOT and FG_CMD_TOP */
};

const char *fg_format_name(enum fg_format f);
/* 0 and the format, or -EINVAL. */
int fg_format_from_name(const char *name, enum fg_format *ret);

/* "fp" or "dwarf" ("default" for FG_CALL_GRAPH_DEFAULT). */
const char *fg_call_graph_name(enum fg_call_graph g);
/* 0 and the mode ("fp" or "dwarf"), or -EINVAL. */
int fg_call_graph_from_name(const char *name, enum fg_call_graph *ret);
/* 0 if n is a valid dump size (a multiple of 8 from 8 to FG_PROTO_MAX_STACK_DUMP), else -EINVAL. */
int fg_stack_dump_check(uint64_t n);
/* "process", "cgroup" or "cgroup-name"; NULL for a value out of range. */
const char *fg_group_by_name(enum fg_group_by g);
/* 0 and the grouping, or -EINVAL. */
int fg_group_by_from_name(const char *name, enum fg_group_by *ret);
