/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The metadata of a recording's and a snapshot's reply (docs/PROTOCOL.md,
 * "Metadata") as typed structs, with the one encoder fgd uses and the one
 * decoder fgctl uses: both walk the same member tables (meta.c, over
 * proto/schema.h), as status does. Compatibility is status's: a member an
 * older fgd lacks decodes to zero, false or NULL; members a newer one adds
 * are ignored; a member of the wrong type is refused.
 *
 * Members are named as on the wire; sub-structs are the parts the
 * components fill (the resolver's, the off-CPU source's, the queries'
 * missing data), nested objects where the wire nests them.
 *
 * Ownership: a const char * is borrowed. fgd points it at its own state
 * (static names, valid for the call that encodes it); a decoder points it
 * into the JSON object it read, valid until that object is put. A NULL
 * string is a member that is absent. Arrays and char * strings are owned by
 * the struct: freed by its _done() function.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/status-types.h"

/* "off_cpu" of an off-CPU or wall-clock recording: the off-CPU source's figures. */
struct fg_meta_off_cpu {
	uint32_t min_block_us;
	uint64_t blocks, blocked_us;
	uint64_t lost_threads, lost_ring, lost_late; /* blocks lost, by why */
	uint64_t rate_limit;                         /* blocks a second kept; 0: no limit */
	uint64_t rate_limited;                       /* blocks not kept past it */
	uint64_t ring_bytes;
	uint64_t kernel_stack_failed, user_stack_failed, switch_ins_unseen;
	bool dwarf; /* not on the wire: the two members after it are written in DWARF mode */
	uint64_t stack_dump, user_dump_failed;
};

/* "frames": how the frames of the samples were named. */
struct fg_meta_frames {
	uint64_t named, module_offset, unknown, inlined;
};

/* One of "unreadable_binaries": a binary whose frames stay module+offset. */
struct fg_meta_binary {
	char *path;  /* owned */
	char *error; /* owned */
};

/* One of "jit_maps"."refused": a JIT map not read, and why. */
struct fg_meta_jit_refusal {
	uint32_t pid;
	char *path;         /* owned */
	const char *reason; /* borrowed: a static name (fgd), or the JSON's (fgctl) */
	bool has_uid;       /* reason "owner": the file's owner */
	uint32_t uid;
	bool has_size; /* reason "too_large": its size */
	uint64_t size;
	char *error; /* owned; reason "unreadable": why; NULL otherwise */
};

/* "jit_maps": the JIT maps the resolver read, and those it refused. */
struct fg_meta_jit_maps {
	struct fg_meta_jit_refusal *refused; /* owned; the first of refused_count */
	size_t n_refused;
	uint64_t maps, entries, malformed, dropped, frames, refused_count;
	bool budget_limited, size_limited, truncated;
};

/* The resolver's part: members of the recording's metadata itself, not an object of their own. */
struct fg_meta_resolve {
	bool has_frames; /* always in fgd's; a client shows frames only when they are there */
	struct fg_meta_frames frames;
	struct fg_meta_binary *unreadable_binaries; /* owned; the first of unreadable_count */
	size_t n_unreadable_binaries;
	uint64_t unreadable_count;
	struct fg_meta_jit_maps jit_maps;
};

/* The metadata of a recording ("result" and "error" replies of record). */
struct fg_recording_meta {
	bool has_off_cpu; /* an off-CPU or wall-clock recording */
	struct fg_meta_off_cpu off_cpu;
	const char *unit; /* "us" when samples count µs blocked; NULL otherwise */
	const char *event;
	bool wall; /* written only when true */
	uint32_t frequency;
	uint64_t duration_ms, samples, samples_seen, other_processes, other_threads;
	uint64_t lost, throttled, malformed, dropped, waited, degraded, stacks;
	bool kernel_hidden, memory_limited;
	uint64_t times_dropped;
	bool ranged; /* --since/--until: the two members after it are written */
	int64_t since_ms, until_ms;
	const char *call_graph;
	bool has_stack_dump; /* DWARF mode */
	uint32_t stack_dump;
	struct fg_status_stack_quality stack_quality;
	bool inline_frames; /* "inline" on the wire, which C keeps for itself */
	bool demangle;
	struct fg_meta_resolve resolve;
	struct fg_status_cpu *cpus; /* owned */
	size_t n_cpus;
	int64_t *exited; /* owned: the targets that exited */
	size_t n_exited;
};

/* One of "gaps" (no reason) or "unreadable" (with its reason) of an always-on answer. */
struct fg_meta_span {
	int64_t from_ms, until_ms; /* Unix ms */
	const char *reason;        /* borrowed: a static name (fgd) or the JSON's (fgctl) */
};

/* What an always-on answer lacks of its period: the queries' part. */
struct fg_meta_missing {
	uint64_t lost_samples, gap_count;
	int64_t gap_ms;
	struct fg_meta_span *gaps; /* owned; the first of gap_count */
	size_t n_gaps;
	uint64_t unreadable_slices;
	struct fg_meta_span *unreadable; /* owned; the first of unreadable_slices */
	size_t n_unreadable;
};

/* The metadata of an always-on answer: snapshot's, heatmap's, top's and diff's. */
struct fg_snapshot_meta {
	struct fg_meta_missing missing;
	const char *source, *event;
	const char *unit; /* "us" for off-CPU; NULL otherwise */
	uint32_t frequency;
	const char *call_graph;
	int64_t first_ms, last_ms, duration_ms, covered_ms;
	uint64_t slices;
	uint32_t slice_seconds;
	uint64_t processes, samples, folded_samples, folded_stacks, unattributed_samples;
	uint64_t other_rate_samples, untimed_slices, memory_max, window_total_folded_samples;
	bool kernel_hidden;
	bool has_top; /* top's answer: the two members after it are written */
	uint64_t dropped_samples, dropped_leaf_samples;
};

struct json_object;

/* Free what m owns and zero it. Accept a zeroed or half-filled struct. */
void fg_recording_meta_done(struct fg_recording_meta *m);
void fg_snapshot_meta_done(struct fg_snapshot_meta *m);
void fg_meta_resolve_done(struct fg_meta_resolve *m);

/*
 * The metadata object (the "meta" of a reply), in the order of the struct.
 * m is borrowed for the call. Returns a new object the caller puts with
 * json_object_put(), or NULL on ENOMEM.
 */
struct json_object *fg_recording_meta_to_json(const struct fg_recording_meta *m);
struct json_object *fg_snapshot_meta_to_json(const struct fg_snapshot_meta *m);

/*
 * Reads a metadata object into *ret, which the caller releases with the
 * _done() function and whose borrowed strings point into obj (valid until
 * obj is put). Returns 0, -EBADMSG for obj not an object or a member of the
 * wrong type (proto/schema.h), or -ENOMEM. *ret is untouched on failure.
 */
int fg_recording_meta_from_json(struct json_object *obj, struct fg_recording_meta *ret);
int fg_snapshot_meta_from_json(struct json_object *obj, struct fg_snapshot_meta *ret);
