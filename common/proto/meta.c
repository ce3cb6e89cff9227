/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The metadata schemas as tables of members (proto/schema.h), in the order
 * fgd has always written them: the encoder writes the tables in order, the
 * decoder reads them back, so the two cannot drift apart.
 */
#include <errno.h>
#include <json-c/json.h>

#include "base/json.h"
#include "base/macro.h"
#include "proto/meta.h"
#include "proto/schema.h"
#include "proto/status.h"

#define T struct fg_meta_off_cpu
static const struct fg_schema_member off_cpu_members[] = { M_U32(min_block_us),
							   M_U64(blocks),
							   M_U64(blocked_us),
							   M_U64(lost_threads),
							   M_U64(lost_ring),
							   M_U64(lost_late),
							   M_U64(rate_limit),
							   M_U64(rate_limited),
							   M_U64(ring_bytes),
							   M_U64(kernel_stack_failed),
							   M_U64(user_stack_failed),
							   M_U64(switch_ins_unseen),
							   M_GATE(dwarf),
							   M_U64(stack_dump),
							   M_U64(user_dump_failed),
							   M_END };
#undef T

#define T struct fg_meta_frames
static const struct fg_schema_member frames_members[] = { M_U64(named), M_U64(module_offset),
							  M_U64(unknown), M_U64(inlined), M_END };
#undef T

#define T struct fg_meta_binary
static const struct fg_schema_member binary_members[] = { M_OWNED_STR(path), M_OWNED_STR(error),
							  M_END };
#undef T

#define T struct fg_meta_jit_refusal
static const struct fg_schema_member jit_refusal_members[] = { M_U32(pid),
							       M_OWNED_STR(path),
							       M_STR(reason),
							       M_IF(uid, FG_SCHEMA_U32, has_uid),
							       M_IF(size, FG_SCHEMA_U64, has_size),
							       M_OWNED_STR(error),
							       M_END };
#undef T

#define T struct fg_meta_jit_maps
static const struct fg_schema_member jit_maps_members[] = {
	M_ARRAY(refused, n_refused, struct fg_meta_jit_refusal, jit_refusal_members),
	M_U64(maps),
	M_U64(entries),
	M_U64(malformed),
	M_U64(dropped),
	M_U64(frames),
	M_U64(refused_count),
	M_BOOL(budget_limited),
	M_BOOL(size_limited),
	M_BOOL(truncated),
	M_END
};
#undef T

#define T struct fg_meta_resolve
static const struct fg_schema_member resolve_members[] = {
	M_OPTIONAL(frames, has_frames, frames_members),
	M_ARRAY(unreadable_binaries, n_unreadable_binaries, struct fg_meta_binary, binary_members),
	M_U64(unreadable_count), M_OBJECT(jit_maps, jit_maps_members), M_END
};
#undef T

#define T struct fg_recording_meta
static const struct fg_schema_member recording_members[] = {
	M_OPTIONAL(off_cpu, has_off_cpu, off_cpu_members),
	M_STR(unit),
	M_STR(event),
	M_IF(wall, FG_SCHEMA_BOOL, wall),
	M_U32(frequency),
	M_U64(duration_ms),
	M_U64(samples),
	M_U64(samples_seen),
	M_U64(other_processes),
	M_U64(other_threads),
	M_U64(lost),
	M_U64(throttled),
	M_U64(malformed),
	M_U64(dropped),
	M_U64(waited),
	M_U64(degraded),
	M_U64(stacks),
	M_BOOL(kernel_hidden),
	M_BOOL(memory_limited),
	M_U64(times_dropped),
	M_IF(since_ms, FG_SCHEMA_I64, ranged),
	M_IF(until_ms, FG_SCHEMA_I64, ranged),
	M_STR(call_graph),
	M_IF(stack_dump, FG_SCHEMA_U32, has_stack_dump),
	M_OBJECT(stack_quality, fg_status_stack_quality_members),
	M_NAMED("inline", inline_frames, FG_SCHEMA_BOOL),
	M_BOOL(demangle),
	M_INLINE(resolve, resolve_members),
	M_ARRAY(cpus, n_cpus, struct fg_status_cpu, fg_status_cpu_members),
	M_I64_ARRAY(exited, n_exited),
	M_END
};
#undef T

#define T struct fg_meta_span
static const struct fg_schema_member span_members[] = { M_I64(from_ms), M_I64(until_ms),
							M_STR(reason), M_END };
#undef T

#define T struct fg_meta_missing
static const struct fg_schema_member missing_members[] = {
	M_U64(lost_samples),
	M_U64(gap_count),
	M_I64(gap_ms),
	M_ARRAY(gaps, n_gaps, struct fg_meta_span, span_members),
	M_U64(unreadable_slices),
	M_ARRAY(unreadable, n_unreadable, struct fg_meta_span, span_members),
	M_END
};
#undef T

#define T struct fg_snapshot_meta
static const struct fg_schema_member snapshot_members[] = {
	M_INLINE(missing, missing_members),
	M_STR(source),
	M_STR(event),
	M_STR(unit),
	M_U32(frequency),
	M_STR(call_graph),
	M_I64(first_ms),
	M_I64(last_ms),
	M_I64(duration_ms),
	M_I64(covered_ms),
	M_U64(slices),
	M_U32(slice_seconds),
	M_U64(processes),
	M_U64(samples),
	M_U64(folded_samples),
	M_U64(folded_stacks),
	M_U64(unattributed_samples),
	M_U64(other_rate_samples),
	M_U64(untimed_slices),
	M_U64(memory_max),
	M_U64(window_total_folded_samples),
	M_BOOL(kernel_hidden),
	M_IF(dropped_samples, FG_SCHEMA_U64, has_top),
	M_IF(dropped_leaf_samples, FG_SCHEMA_U64, has_top),
	M_END
};
#undef T

void fg_meta_resolve_done(struct fg_meta_resolve *m)
{
	fg_schema_release(m, resolve_members);
	*m = (struct fg_meta_resolve){};
}

void fg_recording_meta_done(struct fg_recording_meta *m)
{
	fg_schema_release(m, recording_members);
	*m = (struct fg_recording_meta){};
}

void fg_snapshot_meta_done(struct fg_snapshot_meta *m)
{
	fg_schema_release(m, snapshot_members);
	*m = (struct fg_snapshot_meta){};
}

static struct json_object *to_json(const void *m, const struct fg_schema_member *t)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();

	if (!o || fg_schema_encode(o, m, t) < 0)
		return NULL;
	return TAKE_PTR(o);
}

struct json_object *fg_recording_meta_to_json(const struct fg_recording_meta *m)
{
	return to_json(m, recording_members);
}

struct json_object *fg_snapshot_meta_to_json(const struct fg_snapshot_meta *m)
{
	return to_json(m, snapshot_members);
}

/* Into a zeroed struct at ret, released by table t on failure. */
static int from_json(struct json_object *obj, void *ret, const struct fg_schema_member *t)
{
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return -EBADMSG;
	r = fg_schema_decode(obj, ret, t);
	if (r < 0)
		fg_schema_release(ret, t);
	return r;
}

int fg_recording_meta_from_json(struct json_object *obj, struct fg_recording_meta *ret)
{
	struct fg_recording_meta m = {};
	int r = from_json(obj, &m, recording_members);

	if (r >= 0)
		*ret = m;
	return r;
}

int fg_snapshot_meta_from_json(struct json_object *obj, struct fg_snapshot_meta *ret)
{
	struct fg_snapshot_meta m = {};
	int r = from_json(obj, &m, snapshot_members);

	if (r >= 0)
		*ret = m;
	return r;
}
