/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The fgd control protocol (docs/PROTOCOL.md): over a Unix stream socket,
 * each message is one line of compact JSON ending in '\n' and carrying
 * "fgd": FG_PROTO_VERSION. A {"type":"data","length":N} message is followed
 * by exactly N raw bytes of result, so results stream in chunks and are
 * never JSON-escaped or held whole.
 *
 * This module is the only schema shared by the daemon and the CLI: the
 * incremental reader, request encoding and validation, and errno names.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/json.h"

#define FG_PROTO_VERSION 1
/* Longest request line the daemon accepts. */
#define FG_PROTO_MAX_REQUEST 65536
#define FG_PROTO_MAX_PIDS 256
#define FG_PROTO_MAX_TITLE 256
#define FG_PROTO_MAX_FREQUENCY 100000
/* A week: longer recordings are certainly a mistake. */
#define FG_PROTO_MAX_DURATION_MS (7ULL * 24 * 3600 * 1000)

/* ---- incremental reader ---- */

enum fg_proto_item_kind {
	FG_PROTO_NEED_MORE, /* feed more bytes */
	FG_PROTO_MESSAGE,   /* a JSON line */
	FG_PROTO_DATA,      /* raw bytes following a "data" message */
};

struct fg_proto_item {
	enum fg_proto_item_kind kind;
	const char *bytes; /* borrowed until the next reader call; a message is NUL-terminated */
	size_t len;
};

struct fg_proto_reader {
	char *buf; /* owned */
	size_t start, len, cap;
	size_t max_line;
	uint64_t data_left; /* raw bytes still owed by the current data message */
};

void fg_proto_reader_init(struct fg_proto_reader *r, size_t max_line);
void fg_proto_reader_done(struct fg_proto_reader *r);

/* Appends received bytes. 0 or -ENOMEM. */
int fg_proto_reader_feed(struct fg_proto_reader *r, const void *data, size_t len);

/*
 * Next complete item. After a MESSAGE that is a data header, call
 * fg_proto_reader_expect_data() so the following bytes come back as DATA
 * items (possibly in several pieces). Returns 0, or -EMSGSIZE for a line
 * longer than max_line.
 */
int fg_proto_reader_next(struct fg_proto_reader *r, struct fg_proto_item *ret);
void fg_proto_reader_expect_data(struct fg_proto_reader *r, uint64_t len);
/*
 * Whether bytes other than blanks were received and not returned yet: at the
 * end of the input, the start of a request without its newline.
 */
bool fg_proto_reader_pending(const struct fg_proto_reader *r);

/* ---- messages ---- */

/*
 * Serialises obj as one protocol line (compact JSON + '\n'). Returns a string
 * the caller frees with free(), or NULL on ENOMEM.
 */
char *fg_proto_format(struct json_object *obj);

/*
 * Parses a line into a JSON object and checks the version. Returns 0 and a
 * new reference in *ret (caller puts it with json_object_put()), -EBADMSG for
 * anything that is not a JSON object, -EPROTO for a missing or different
 * version.
 */
int fg_proto_parse(const char *line, size_t len, struct json_object **ret);

/* A new message object with the version and "type" (or "cmd") set. NULL on ENOMEM. */
struct json_object *fg_proto_new_message(const char *type);
struct json_object *fg_proto_new_request(const char *cmd);

/* Adds a member to a JSON object being built; errors surface as a missing member. */
static inline void fg_json_add_int(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

static inline void fg_json_add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static inline void fg_json_add_bool(struct json_object *o, const char *key, bool v)
{
	json_object_object_add(o, key, json_object_new_boolean(v));
}

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

/* Defaults for a record request: folded; kernel and JIT suffixes, inline frames and demangling on. */
void fg_record_request_init(struct fg_record_request *r);

/*
 * Validates a parsed message as a request. On -EINVAL, *ret_error (may be
 * NULL) points to a static description of what is wrong.
 */
int fg_proto_decode_request(struct json_object *msg, struct fg_request *ret,
			    const char **ret_error);
/* The inverse, for clients. NULL on ENOMEM. */
struct json_object *fg_proto_encode_request(const struct fg_request *req);

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

/* ---- errors ---- */

/* "ESRCH" for ESRCH; NULL for an errno this table lacks. */
const char *fg_errno_name(int err);
/* ESRCH for "ESRCH"; 0 if unknown. */
int fg_errno_from_name(const char *name);
