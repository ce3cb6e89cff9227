/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The status schema as tables of members (proto/schema.h): each entry names
 * a member as the wire spells it, its JSON type and where it lives in struct
 * fg_status. The encoder writes the tables in order, which is the reply's
 * order; the decoder reads them back, so the two cannot drift apart.
 */
#include <errno.h>

#include "base/macro.h"
#include "proto/proto.h"
#include "proto/schema.h"
#include "proto/status.h"

_Static_assert(FG_STATUS_MAX_ARRAY == FG_SCHEMA_MAX_ARRAY, "status arrays are schema arrays");

#define T struct fg_status_cpu
const struct fg_schema_member fg_status_cpu_members[] = { M_U32(cpu),       M_U64(samples),
							  M_U64(lost),      M_U64(throttled),
							  M_U64(malformed), M_END };
#undef T

#define T struct fg_status_tracking
static const struct fg_schema_member tracking_members[] = { M_U64(records), M_U64(lost),
							    M_U64(malformed), M_END };
#undef T

#define T struct fg_status_processes
static const struct fg_schema_member processes_members[] = { M_U64(alive),
							     M_U64(generations),
							     M_U64(threads),
							     M_U64(maps),
							     M_U64(proc_reads),
							     M_U64(dropped_processes),
							     M_U64(dropped_threads),
							     M_U64(dropped_maps),
							     M_U64(roots),
							     M_U64(roots_dropped),
							     M_U64(roots_unknown),
							     M_U64(bytes),
							     M_END };
#undef T

#define T struct fg_status_symbols
static const struct fg_schema_member symbols_members[] = { M_U64(binaries),
							   M_U64(binaries_loaded),
							   M_U64(binaries_unreadable),
							   M_U64(binaries_dropped),
							   M_U64(binaries_debug_file),
							   M_U64(binaries_minidebuginfo),
							   M_U64(binaries_dwarf),
							   M_U64(dwarf_dropped),
							   M_U64(dwarf_bytes),
							   M_U64(dwarf_mapped),
							   M_U64(dwarf_evicted),
							   M_U64(dwarf_reread),
							   M_U64(inline_skipped),
							   M_U64(symbols_bytes),
							   M_U64(symbols_evicted),
							   M_U64(symbols_refused),
							   M_U64(resolved),
							   M_U64(resolved_bytes),
							   M_U64(resolved_jobs),
							   M_U64(resolved_hits),
							   M_U64(resolved_waits),
							   M_U64(resolved_resets),
							   M_U64(kernel_symbols),
							   M_U64(kernel_reloads),
							   M_BOOL(kernel_restricted),
							   M_END };
#undef T

#define T struct fg_status_unwinding
static const struct fg_schema_member unwinding_members[] = { M_U64(binaries),
							     M_U64(binaries_loaded),
							     M_U64(binaries_without_cfi),
							     M_U64(binaries_evicted),
							     M_U64(row_hits),
							     M_U64(row_misses),
							     M_U64(rows_libdw),
							     M_U64(rows_uncached),
							     M_U64(rows_none),
							     M_U64(bytes),
							     M_U64(mapped),
							     M_END };
#undef T

#define T struct fg_status_stack_quality
const struct fg_schema_member fg_status_stack_quality_members[] = { M_U64(user_stacks),
								    M_U64(complete),
								    M_U64(truncated),
								    M_U64(failed),
								    M_U64(fp_frames),
								    M_PCT("complete_pct", complete,
									  user_stacks),
								    M_END };
#undef T

#define T struct fg_status_stack_modes
static const struct fg_schema_member stack_modes_members[] = {
	M_OBJECT(fp, fg_status_stack_quality_members),
	M_OBJECT(dwarf, fg_status_stack_quality_members), M_END
};
#undef T

#define T struct fg_status_jit
static const struct fg_schema_member jit_members[] = {
	M_U64(maps),     M_U64(maps_read),     M_U64(bytes),          M_U64(reads),
	M_U64(refused),  M_U64(resets),        M_U64(budget_skipped), M_U64(size_limited),
	M_U64(deferred), M_U64(max_map_bytes), M_U64(held),           M_END
};
#undef T

#define T struct fg_status_loop
static const struct fg_schema_member loop_members[] = {
	M_U64(iterations),        M_U64(longest_ms),         M_U64(slow),
	M_U64(slow_ms),           M_U64(recent_longest_ms),  M_U64(cpu_wait_ms),
	M_U32(realtime_priority), M_U64(realtime_demotions), M_END
};
#undef T

#define T struct fg_status_loader
static const struct fg_schema_member loader_members[] = {
	M_U64(jobs),           M_U64(queued),          M_U64(busy_ms),
	M_U64(longest_job_ms), M_U64(longest_wait_ms), M_END
};
#undef T

#define T struct fg_status_memory_part
static const struct fg_schema_member memory_part_members[] = {
	M_U64(bytes),         M_U64(peak),    M_U64(share), M_U64(evicted),
	M_U64(evicted_bytes), M_U64(refused), M_END
};
#undef T

/* The parts as common/base/budget.h names them, in its order: data first, then caches. */
#define T struct fg_status_memory_parts
static const struct fg_schema_member memory_parts_members[] = {
	M_OBJECT(window, memory_part_members),    M_OBJECT(recordings, memory_part_members),
	M_OBJECT(waiting, memory_part_members),   M_OBJECT(results, memory_part_members),
	M_OBJECT(processes, memory_part_members), M_OBJECT(jit, memory_part_members),
	M_OBJECT(rings, memory_part_members),     M_OBJECT(dwarf, memory_part_members),
	M_OBJECT(cfi, memory_part_members),       M_OBJECT(symbols, memory_part_members),
	M_OBJECT(names, memory_part_members),     M_END
};
#undef T

#define T struct fg_status_memory
static const struct fg_schema_member memory_members[] = { M_U64(budget),
							  M_U64(base),
							  M_U64(charged),
							  M_U64(charged_peak),
							  M_U64(rss),
							  M_U64(rss_peak),
							  M_BOOL(pressure),
							  M_U64(relieved),
							  M_U64(unrelieved),
							  M_OBJECT(parts, memory_parts_members),
							  M_END };
#undef T

#define T struct fg_status_tier
static const struct fg_schema_member tier_members[] = { M_U64(age_seconds), M_U64(length_seconds),
							M_END };
#undef T

#define T struct fg_status_history
static const struct fg_schema_member history_members[] = {
	M_STR(directory),
	M_U64(files),
	M_U64(bytes),
	M_U64(written),
	M_U64(write_errors),
	M_U64(out_of_order),
	M_U64(corrupt),
	M_U64(future),
	M_U64(pruned),
	M_U64(max_bytes),
	M_ARRAY(tiers, n_tiers, struct fg_status_tier, tier_members),
	M_U64(keep_seconds),
	M_U64(merged),
	M_U64(merged_sources),
	M_U64(corrupt_dropped),
	M_U64(leftovers),
	M_U64(expired),
	M_U64(compact_errors),
	M_STR(last_compact_error),
	M_END
};
#undef T

#define T struct fg_status_always_on
static const struct fg_schema_member always_on_members[] = {
	/* Sampling off, the reply says only that. */
	M_BOOL(enabled),
	M_GATE(enabled),
	M_U32(frequency),
	M_STR(call_graph),
	M_U32(slice_seconds),
	M_U32(window_seconds),
	M_U64(memory_max),
	M_U64(slice_budget),
	M_U64(bytes),
	M_U64(times_bytes),
	M_U64(untimed_slices),
	M_U64(slices),
	M_I64(oldest_ms),
	M_U64(samples),
	M_U64(folded_samples),
	M_U64(unattributed_samples),
	M_U64(total_samples),
	M_U64(total_folded_samples),
	M_U64(total_folded_stacks),
	M_U64(total_unattributed_samples),
	M_U64(compactions),
	M_U64(expired_slices),
	M_U64(idle_samples),
	M_U64(unknown_process_samples),
	M_U64(errors),
	M_U64(memo_bytes),
	M_U64(memo_resets),
	M_U64(waiting),
	M_U64(waited),
	M_U64(degraded),
	M_U64(lost),
	M_U64(throttled),
	M_OPTIONAL(history, has_history, history_members),
	M_END
};
#undef T

#define T struct fg_status_off_cpu
static const struct fg_schema_member off_cpu_members[] = {
	M_BOOL(available), M_STR(why),
	/* Always-on off-CPU off, the reply says only that. */
	M_BOOL(always_on), M_GATE(always_on), M_U32(min_block_us), M_U64(blocks), M_U64(blocked_us),
	M_U64(lost), M_U64(stacks_not_taken), M_U64(user_dump_failed), M_U64(switch_ins_unseen),
	M_U64(stack_renewals), M_U64(stacks_lost), M_OBJECT(window, always_on_members), M_END
};
#undef T

#define T struct fg_status_server
static const struct fg_schema_member server_members[] = { M_U64(clients),
							  M_U64(max_clients),
							  M_U64(clients_rejected),
							  M_U64(clients_evicted),
							  M_U64(short_clients),
							  M_U64(max_short_clients),
							  M_U64(short_requests),
							  M_U64(requests),
							  M_U64(bad_requests),
							  M_U64(denied),
							  M_U64(result_bytes),
							  M_U64(result_max_bytes),
							  M_U64(user_result_max_bytes),
							  M_U64(results_refused),
							  M_U64(recordings_active),
							  M_U64(max_recordings),
							  M_U64(recordings_started),
							  M_U64(recordings_completed),
							  M_U64(recordings_aborted),
							  M_END };
#undef T

#define T struct fg_status_recording
static const struct fg_schema_member recording_members[] = { M_U32(uid),          M_U64(elapsed_ms),
							     M_U64(samples),      M_U64(lost),
							     M_U64(rate_limited), M_END };
#undef T

#define T struct fg_status
static const struct fg_schema_member status_members[] = {
	M_STR(version),
	M_U32(pid),
	M_U64(uptime_ms),
	M_STR(event),
	M_U32(default_frequency),
	M_U32(max_frequency),
	M_U32(max_stack),
	M_U64(ring_pages),
	M_STR(call_graph),
	M_U32(stack_dump),
	M_STR(socket),
	M_ARRAY(cpus, n_cpus, struct fg_status_cpu, fg_status_cpu_members),
	M_OBJECT(tracking, tracking_members),
	M_OBJECT(processes, processes_members),
	M_OBJECT(symbols, symbols_members),
	M_OBJECT(unwinding, unwinding_members),
	M_OBJECT(stack_quality, stack_modes_members),
	M_OPTIONAL(jit, has_jit, jit_members),
	M_OPTIONAL(loop, has_loop, loop_members),
	M_OPTIONAL(loader, has_loader, loader_members),
	M_OPTIONAL(memory, has_memory, memory_members),
	M_OPTIONAL(off_cpu, has_off_cpu, off_cpu_members),
	M_OBJECT(always_on, always_on_members),
	M_OBJECT(server, server_members),
	M_ARRAY(recordings, n_recordings, struct fg_status_recording, recording_members),
	M_END
};
#undef T

void fg_status_done(struct fg_status *s)
{
	fg_schema_release(s, status_members);
	*s = (struct fg_status){};
}

struct json_object *fg_status_to_json(const struct fg_status *s)
{
	_cleanup_(json_object_putp) struct json_object *m = fg_proto_new_message("status");

	if (!m || fg_schema_encode(m, s, status_members) < 0)
		return NULL;
	return TAKE_PTR(m);
}

int fg_status_from_json(struct json_object *obj, struct fg_status *ret)
{
	struct fg_status s = {};
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return -EBADMSG;
	r = fg_schema_decode(obj, &s, status_members);
	if (r < 0) {
		fg_status_done(&s);
		return r;
	}
	*ret = s;
	return 0;
}
