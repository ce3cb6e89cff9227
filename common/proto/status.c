/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The status schema as tables of members: each entry names a member as the
 * wire spells it, its JSON type and where it lives in struct fg_status. The
 * encoder writes the tables in order, which is the reply's order; the
 * decoder reads them back, so the two cannot drift apart.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "proto/proto.h"
#include "proto/status.h"

enum kind {
	K_END,  /* ends a table */
	K_U64,  /* uint64_t */
	K_U32,  /* uint32_t */
	K_I64,  /* int64_t */
	K_BOOL, /* bool */
	K_STR,  /* const char *, borrowed; NULL: absent, not written */
	/* A double derived on the way out: 100 * the uint64_t at offset / the one at aux. */
	K_PCT,
	/* A nested object: the struct at offset, members in sub; there if the bool at aux is. */
	K_OBJECT,
	/* Objects: pointer at offset, size_t count at aux, elem_size bytes each, members in sub. */
	K_ARRAY,
	/* The members after it are written only when the bool at offset is true. */
	K_GATE,
};

#define NO_FLAG SIZE_MAX

struct member {
	const char *name;
	enum kind kind;
	size_t offset;
	size_t aux;
	const struct member *sub;
	size_t elem_size;
};

/* Every table defines T, the struct its offsets are into, before using these. */
#define U64(m)                                        \
	{                                             \
#m, K_U64, offsetof(T, m), 0, NULL, 0 \
	}
#define U32(m)                                        \
	{                                             \
#m, K_U32, offsetof(T, m), 0, NULL, 0 \
	}
#define I64(m)                                        \
	{                                             \
#m, K_I64, offsetof(T, m), 0, NULL, 0 \
	}
#define BOOL(m)                                        \
	{                                              \
#m, K_BOOL, offsetof(T, m), 0, NULL, 0 \
	}
#define STR(m)                                        \
	{                                             \
#m, K_STR, offsetof(T, m), 0, NULL, 0 \
	}
#define PCT(name, part, whole)                                              \
	{                                                                   \
		name, K_PCT, offsetof(T, part), offsetof(T, whole), NULL, 0 \
	}
#define OBJECT(m, members)                                        \
	{                                                         \
#m, K_OBJECT, offsetof(T, m), NO_FLAG, members, 0 \
	}
#define OPTIONAL(m, flag, members)                                          \
	{                                                                   \
#m, K_OBJECT, offsetof(T, m), offsetof(T, flag), members, 0 \
	}
#define ARRAY(m, count, type, members)                                                 \
	{                                                                              \
#m, K_ARRAY, offsetof(T, m), offsetof(T, count), members, sizeof(type) \
	}
#define GATE(flag)                                          \
	{                                                   \
		NULL, K_GATE, offsetof(T, flag), 0, NULL, 0 \
	}
#define END                                \
	{                                  \
		NULL, K_END, 0, 0, NULL, 0 \
	}

#define T struct fg_status_cpu
static const struct member cpu_members[] = { U32(cpu),       U64(samples),   U64(lost),
					     U64(throttled), U64(malformed), END };
#undef T

#define T struct fg_status_tracking
static const struct member tracking_members[] = { U64(records), U64(lost), U64(malformed), END };
#undef T

#define T struct fg_status_processes
static const struct member processes_members[] = { U64(alive),
						   U64(generations),
						   U64(threads),
						   U64(maps),
						   U64(proc_reads),
						   U64(dropped_processes),
						   U64(dropped_threads),
						   U64(dropped_maps),
						   U64(roots),
						   U64(roots_dropped),
						   U64(roots_unknown),
						   U64(bytes),
						   END };
#undef T

#define T struct fg_status_symbols
static const struct member symbols_members[] = { U64(binaries),
						 U64(binaries_loaded),
						 U64(binaries_unreadable),
						 U64(binaries_dropped),
						 U64(binaries_debug_file),
						 U64(binaries_minidebuginfo),
						 U64(binaries_dwarf),
						 U64(dwarf_dropped),
						 U64(dwarf_bytes),
						 U64(dwarf_mapped),
						 U64(dwarf_evicted),
						 U64(dwarf_reread),
						 U64(inline_skipped),
						 U64(symbols_bytes),
						 U64(symbols_evicted),
						 U64(symbols_refused),
						 U64(resolved),
						 U64(resolved_bytes),
						 U64(resolved_jobs),
						 U64(resolved_hits),
						 U64(resolved_waits),
						 U64(resolved_resets),
						 U64(kernel_symbols),
						 U64(kernel_reloads),
						 BOOL(kernel_restricted),
						 END };
#undef T

#define T struct fg_status_unwinding
static const struct member unwinding_members[] = { U64(binaries),
						   U64(binaries_loaded),
						   U64(binaries_without_cfi),
						   U64(binaries_evicted),
						   U64(row_hits),
						   U64(row_misses),
						   U64(rows_libdw),
						   U64(rows_uncached),
						   U64(rows_none),
						   U64(bytes),
						   U64(mapped),
						   END };
#undef T

#define T struct fg_status_stack_quality
static const struct member stack_quality_members[] = { U64(user_stacks),
						       U64(complete),
						       U64(truncated),
						       U64(failed),
						       U64(fp_frames),
						       PCT("complete_pct", complete, user_stacks),
						       END };
#undef T

#define T struct fg_status_stack_modes
static const struct member stack_modes_members[] = { OBJECT(fp, stack_quality_members),
						     OBJECT(dwarf, stack_quality_members), END };
#undef T

#define T struct fg_status_jit
static const struct member jit_members[] = { U64(maps),           U64(maps_read),    U64(bytes),
					     U64(reads),          U64(refused),      U64(resets),
					     U64(budget_skipped), U64(size_limited), U64(deferred),
					     U64(max_map_bytes),  U64(held),         END };
#undef T

#define T struct fg_status_loop
static const struct member loop_members[] = {
	U64(iterations),        U64(longest_ms),         U64(slow),
	U64(slow_ms),           U64(recent_longest_ms),  U64(cpu_wait_ms),
	U32(realtime_priority), U64(realtime_demotions), END
};
#undef T

#define T struct fg_status_loader
static const struct member loader_members[] = {
	U64(jobs), U64(queued), U64(busy_ms), U64(longest_job_ms), U64(longest_wait_ms), END
};
#undef T

#define T struct fg_status_memory_part
static const struct member memory_part_members[] = { U64(bytes),   U64(peak),          U64(share),
						     U64(evicted), U64(evicted_bytes), U64(refused),
						     END };
#undef T

/* The parts as common/base/budget.h names them, in its order: data first, then caches. */
#define T struct fg_status_memory_parts
static const struct member memory_parts_members[] = {
	OBJECT(window, memory_part_members),    OBJECT(recordings, memory_part_members),
	OBJECT(waiting, memory_part_members),   OBJECT(results, memory_part_members),
	OBJECT(processes, memory_part_members), OBJECT(jit, memory_part_members),
	OBJECT(rings, memory_part_members),     OBJECT(dwarf, memory_part_members),
	OBJECT(cfi, memory_part_members),       OBJECT(symbols, memory_part_members),
	OBJECT(names, memory_part_members),     END
};
#undef T

#define T struct fg_status_memory
static const struct member memory_members[] = { U64(budget),
						U64(base),
						U64(charged),
						U64(charged_peak),
						U64(rss),
						U64(rss_peak),
						BOOL(pressure),
						U64(relieved),
						U64(unrelieved),
						OBJECT(parts, memory_parts_members),
						END };
#undef T

#define T struct fg_status_tier
static const struct member tier_members[] = { U64(age_seconds), U64(length_seconds), END };
#undef T

#define T struct fg_status_history
static const struct member history_members[] = { STR(directory),
						 U64(files),
						 U64(bytes),
						 U64(written),
						 U64(write_errors),
						 U64(out_of_order),
						 U64(corrupt),
						 U64(future),
						 U64(pruned),
						 U64(max_bytes),
						 ARRAY(tiers, n_tiers, struct fg_status_tier,
						       tier_members),
						 U64(keep_seconds),
						 U64(merged),
						 U64(merged_sources),
						 U64(corrupt_dropped),
						 U64(leftovers),
						 U64(expired),
						 U64(compact_errors),
						 STR(last_compact_error),
						 END };
#undef T

#define T struct fg_status_always_on
static const struct member always_on_members[] = {
	/* Sampling off, the reply says only that. */
	BOOL(enabled),
	GATE(enabled),
	U32(frequency),
	STR(call_graph),
	U32(slice_seconds),
	U32(window_seconds),
	U64(memory_max),
	U64(slice_budget),
	U64(bytes),
	U64(times_bytes),
	U64(untimed_slices),
	U64(slices),
	I64(oldest_ms),
	U64(samples),
	U64(folded_samples),
	U64(unattributed_samples),
	U64(total_samples),
	U64(total_folded_samples),
	U64(total_folded_stacks),
	U64(total_unattributed_samples),
	U64(compactions),
	U64(expired_slices),
	U64(idle_samples),
	U64(unknown_process_samples),
	U64(errors),
	U64(memo_bytes),
	U64(memo_resets),
	U64(waiting),
	U64(waited),
	U64(degraded),
	U64(lost),
	U64(throttled),
	OPTIONAL(history, has_history, history_members),
	END
};
#undef T

#define T struct fg_status_off_cpu
static const struct member off_cpu_members[] = {
	BOOL(available), STR(why),
	/* Always-on off-CPU off, the reply says only that. */
	BOOL(always_on), GATE(always_on), U32(min_block_us), U64(blocks), U64(blocked_us),
	U64(lost), U64(stacks_not_taken), U64(user_dump_failed), U64(switch_ins_unseen),
	U64(stack_renewals), U64(stacks_lost), OBJECT(window, always_on_members), END
};
#undef T

#define T struct fg_status_server
static const struct member server_members[] = { U64(clients),
						U64(max_clients),
						U64(clients_rejected),
						U64(clients_evicted),
						U64(short_clients),
						U64(max_short_clients),
						U64(short_requests),
						U64(requests),
						U64(bad_requests),
						U64(denied),
						U64(result_bytes),
						U64(result_max_bytes),
						U64(user_result_max_bytes),
						U64(results_refused),
						U64(recordings_active),
						U64(max_recordings),
						U64(recordings_started),
						U64(recordings_completed),
						U64(recordings_aborted),
						END };
#undef T

#define T struct fg_status_recording
static const struct member recording_members[] = { U32(uid),  U64(elapsed_ms),   U64(samples),
						   U64(lost), U64(rate_limited), END };
#undef T

#define T struct fg_status
static const struct member status_members[] = {
	STR(version),
	U32(pid),
	U64(uptime_ms),
	STR(event),
	U32(default_frequency),
	U32(max_frequency),
	U32(max_stack),
	U64(ring_pages),
	STR(call_graph),
	U32(stack_dump),
	STR(socket),
	ARRAY(cpus, n_cpus, struct fg_status_cpu, cpu_members),
	OBJECT(tracking, tracking_members),
	OBJECT(processes, processes_members),
	OBJECT(symbols, symbols_members),
	OBJECT(unwinding, unwinding_members),
	OBJECT(stack_quality, stack_modes_members),
	OPTIONAL(jit, has_jit, jit_members),
	OPTIONAL(loop, has_loop, loop_members),
	OPTIONAL(loader, has_loader, loader_members),
	OPTIONAL(memory, has_memory, memory_members),
	OPTIONAL(off_cpu, has_off_cpu, off_cpu_members),
	OBJECT(always_on, always_on_members),
	OBJECT(server, server_members),
	ARRAY(recordings, n_recordings, struct fg_status_recording, recording_members),
	END
};
#undef T

#define AT(base, off, type) ((type *)((char *)(base) + (off)))
#define AT_CONST(base, off, type) ((const type *)((const char *)(base) + (off)))

/* ---- releasing ---- */

static void release(void *base, const struct member *t)
{
	for (; t->kind != K_END; t++) {
		if (t->kind == K_OBJECT) {
			release(AT(base, t->offset, char), t->sub);
		} else if (t->kind == K_ARRAY) {
			char *elems = *AT(base, t->offset, char *);
			size_t n = *AT(base, t->aux, size_t);

			for (size_t i = 0; elems && i < n; i++)
				release(elems + i * t->elem_size, t->sub);
			free(elems);
		}
	}
}

void fg_status_done(struct fg_status *s)
{
	release(s, status_members);
	*s = (struct fg_status){};
}

/* ---- encoding ---- */

static int encode_members(struct json_object *o, const void *base, const struct member *t);

static struct json_object *encode_object(const void *base, const struct member *t)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();

	if (!o || encode_members(o, base, t) < 0)
		return NULL;
	return TAKE_PTR(o);
}

static struct json_object *encode_array(const struct member *t, const void *base)
{
	_cleanup_(json_object_putp) struct json_object *a = json_object_new_array();
	const char *elems = *AT_CONST(base, t->offset, char *);
	size_t n = *AT_CONST(base, t->aux, size_t);

	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = encode_object(elems + i * t->elem_size, t->sub);

		if (!e || json_object_array_add(a, e) < 0) {
			json_object_put(e);
			return NULL;
		}
	}
	return TAKE_PTR(a);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int encode_members(struct json_object *o, const void *base, const struct member *t)
{
	for (; t->kind != K_END; t++) {
		struct json_object *v = NULL;

		switch (t->kind) {
		case K_U64:
			v = json_object_new_uint64(*AT_CONST(base, t->offset, uint64_t));
			break;
		case K_U32:
			v = json_object_new_int64(*AT_CONST(base, t->offset, uint32_t));
			break;
		case K_I64:
			v = json_object_new_int64(*AT_CONST(base, t->offset, int64_t));
			break;
		case K_BOOL:
			v = json_object_new_boolean(*AT_CONST(base, t->offset, bool));
			break;
		case K_STR: {
			const char *s = *AT_CONST(base, t->offset, char *);

			if (!s)
				continue;
			v = json_object_new_string(s);
			break;
		}
		case K_PCT:
			v = json_object_new_double(share(*AT_CONST(base, t->offset, uint64_t),
							 *AT_CONST(base, t->aux, uint64_t)));
			break;
		case K_OBJECT:
			if (t->aux != NO_FLAG && !*AT_CONST(base, t->aux, bool))
				continue;
			v = encode_object(AT_CONST(base, t->offset, char), t->sub);
			break;
		case K_ARRAY:
			v = encode_array(t, base);
			break;
		case K_GATE:
			if (!*AT_CONST(base, t->offset, bool))
				return 0;
			continue;
		case K_END:
			break;
		}
		if (!v || json_object_object_add(o, t->name, v) < 0) {
			json_object_put(v);
			return -ENOMEM;
		}
	}
	return 0;
}

struct json_object *fg_status_to_json(const struct fg_status *s)
{
	_cleanup_(json_object_putp) struct json_object *m = fg_proto_new_message("status");

	if (!m || encode_members(m, s, status_members) < 0)
		return NULL;
	return TAKE_PTR(m);
}

/* ---- decoding ---- */

/* An integer from 0 to max. json-c keeps values past INT64_MAX as unsigned. */
static int read_unsigned(struct json_object *v, uint64_t max, uint64_t *ret)
{
	uint64_t u;

	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return -EBADMSG;
	u = json_object_get_uint64(v);
	if (u > max)
		return -EBADMSG;
	*ret = u;
	return 0;
}

/* get_int64 clamps an unsigned value past INT64_MAX to INT64_MAX: refused, not clamped. */
static int read_signed(struct json_object *v, int64_t *ret)
{
	int64_t i;

	if (!json_object_is_type(v, json_type_int))
		return -EBADMSG;
	i = json_object_get_int64(v);
	if (i == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
		return -EBADMSG;
	*ret = i;
	return 0;
}

static int decode_members(struct json_object *o, void *base, const struct member *t);

static int decode_array(struct json_object *v, void *base, const struct member *t)
{
	size_t n;
	char *elems;

	if (!json_object_is_type(v, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(v);
	if (n > FG_STATUS_MAX_ARRAY)
		return -EBADMSG;
	elems = calloc(MAX(n, (size_t)1), t->elem_size);
	if (!elems)
		return -ENOMEM;
	/* Stored at once: fg_status_done() frees it and what its elements hold if one fails. */
	*AT(base, t->offset, char *) = elems;
	*AT(base, t->aux, size_t) = n;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		int r;

		if (!json_object_is_type(e, json_type_object))
			return -EBADMSG;
		r = decode_members(e, elems + i * t->elem_size, t->sub);
		if (r < 0)
			return r;
	}
	return 0;
}

static int decode_members(struct json_object *o, void *base, const struct member *t)
{
	for (; t->kind != K_END; t++) {
		struct json_object *v;
		uint64_t u;
		int r = 0;

		/* Absent: left zero. The gate only says what is written. */
		if (t->kind == K_GATE || !json_object_object_get_ex(o, t->name, &v))
			continue;
		switch (t->kind) {
		case K_U64:
			r = read_unsigned(v, UINT64_MAX, AT(base, t->offset, uint64_t));
			break;
		case K_U32:
			r = read_unsigned(v, UINT32_MAX, &u);
			if (r >= 0)
				*AT(base, t->offset, uint32_t) = (uint32_t)u;
			break;
		case K_I64:
			r = read_signed(v, AT(base, t->offset, int64_t));
			break;
		case K_BOOL:
			if (!json_object_is_type(v, json_type_boolean))
				return -EBADMSG;
			*AT(base, t->offset, bool) = json_object_get_boolean(v);
			break;
		case K_STR:
			if (!json_object_is_type(v, json_type_string))
				return -EBADMSG;
			*AT(base, t->offset, const char *) = json_object_get_string(v);
			break;
		case K_PCT:
			/* Derived from the counts, which the struct holds: only its type is checked. */
			if (!json_object_is_type(v, json_type_double) &&
			    !json_object_is_type(v, json_type_int))
				return -EBADMSG;
			break;
		case K_OBJECT:
			if (!json_object_is_type(v, json_type_object))
				return -EBADMSG;
			if (t->aux != NO_FLAG)
				*AT(base, t->aux, bool) = true;
			r = decode_members(v, AT(base, t->offset, char), t->sub);
			break;
		case K_ARRAY:
			r = decode_array(v, base, t);
			break;
		case K_GATE:
		case K_END:
			break;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int fg_status_from_json(struct json_object *obj, struct fg_status *ret)
{
	struct fg_status s = {};
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return -EBADMSG;
	r = decode_members(obj, &s, status_members);
	if (r < 0) {
		fg_status_done(&s);
		return r;
	}
	*ret = s;
	return 0;
}
