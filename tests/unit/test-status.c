/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "proto/proto.h"
#include "proto/status.h"
#include "test.h"

/*
 * Every scalar member, listed here by hand rather than taken from status.c's
 * tables: a member the tables leave out or misname fails the round trip.
 */
/* clang-format off */
#define MEMORY_PART(X, p)                                                                  \
	X(memory.parts.p.bytes) X(memory.parts.p.peak) X(memory.parts.p.share)             \
	X(memory.parts.p.evicted) X(memory.parts.p.evicted_bytes) X(memory.parts.p.refused)

#define U64_MEMBERS(X)                                                                     \
	X(uptime_ms) X(ring_pages)                                                         \
	X(tracking.records) X(tracking.lost) X(tracking.malformed)                         \
	X(processes.alive) X(processes.generations) X(processes.threads) X(processes.maps) \
	X(processes.proc_reads) X(processes.dropped_processes) X(processes.dropped_threads) \
	X(processes.dropped_maps) X(processes.roots) X(processes.roots_dropped)            \
	X(processes.roots_unknown) X(processes.bytes)                                      \
	X(symbols.binaries) X(symbols.binaries_loaded) X(symbols.binaries_unreadable)      \
	X(symbols.binaries_dropped) X(symbols.binaries_debug_file)                         \
	X(symbols.binaries_minidebuginfo) X(symbols.binaries_dwarf) X(symbols.dwarf_dropped) \
	X(symbols.dwarf_bytes) X(symbols.resolved) X(symbols.resolved_bytes)               \
	X(symbols.resolved_jobs) X(symbols.resolved_hits) X(symbols.resolved_waits)        \
	X(symbols.resolved_resets) X(symbols.kernel_symbols) X(symbols.kernel_reloads)     \
	X(symbols.dwarf_mapped) X(symbols.dwarf_evicted) X(symbols.dwarf_reread)           \
	X(symbols.inline_skipped) X(symbols.symbols_bytes) X(symbols.symbols_evicted)      \
	X(symbols.symbols_refused)                                                         \
	X(unwinding.binaries) X(unwinding.binaries_loaded) X(unwinding.binaries_without_cfi) \
	X(unwinding.binaries_evicted) X(unwinding.row_hits) X(unwinding.row_misses) X(unwinding.rows_libdw) \
	X(unwinding.rows_uncached) X(unwinding.rows_none) X(unwinding.bytes) X(unwinding.mapped)                  \
	X(stack_quality.fp.user_stacks) X(stack_quality.fp.complete)                       \
	X(stack_quality.fp.truncated) X(stack_quality.fp.failed) X(stack_quality.fp.fp_frames) \
	X(stack_quality.dwarf.user_stacks) X(stack_quality.dwarf.complete)                 \
	X(stack_quality.dwarf.truncated) X(stack_quality.dwarf.failed)                     \
	X(stack_quality.dwarf.fp_frames)                                                   \
	X(jit.maps) X(jit.maps_read) X(jit.bytes) X(jit.reads) X(jit.refused) X(jit.resets) \
	X(jit.budget_skipped) X(jit.size_limited) X(jit.deferred) X(jit.max_map_bytes)     \
	X(jit.held)                                                                        \
	X(loop.iterations) X(loop.longest_ms) X(loop.slow) X(loop.slow_ms)                 \
	X(loop.recent_longest_ms) X(loop.cpu_wait_ms) X(loop.realtime_demotions)           \
	X(loader.jobs) X(loader.queued) X(loader.busy_ms) X(loader.longest_job_ms)         \
	X(loader.longest_wait_ms)                                                          \
	X(memory.budget) X(memory.base) X(memory.charged) X(memory.charged_peak)           \
	X(memory.rss) X(memory.rss_peak) X(memory.relieved) X(memory.unrelieved)           \
	MEMORY_PART(X, window) MEMORY_PART(X, recordings) MEMORY_PART(X, waiting)          \
	MEMORY_PART(X, results) MEMORY_PART(X, processes) MEMORY_PART(X, jit)              \
	MEMORY_PART(X, rings)                                                              \
	MEMORY_PART(X, dwarf) MEMORY_PART(X, cfi) MEMORY_PART(X, symbols)                  \
	MEMORY_PART(X, names)                                                              \
	X(always_on.memory_max) X(always_on.slice_budget) X(always_on.bytes)               \
	X(always_on.slices) X(always_on.samples) X(always_on.folded_samples)               \
	X(always_on.unattributed_samples) X(always_on.total_samples)                       \
	X(always_on.total_folded_samples) X(always_on.total_folded_stacks)                 \
	X(always_on.total_unattributed_samples) X(always_on.compactions)                   \
	X(always_on.expired_slices) X(always_on.idle_samples)                              \
	X(always_on.unknown_process_samples) X(always_on.errors) X(always_on.memo_bytes)   \
	X(always_on.memo_resets) X(always_on.waiting) X(always_on.waited)                  \
	X(always_on.degraded) X(always_on.lost) X(always_on.throttled)                     \
	X(always_on.history.files) X(always_on.history.bytes) X(always_on.history.written) \
	X(always_on.history.write_errors) X(always_on.history.out_of_order)                \
	X(always_on.history.corrupt) X(always_on.history.future) X(always_on.history.pruned) \
	X(always_on.history.max_bytes) X(always_on.history.keep_seconds)                   \
	X(always_on.history.merged) X(always_on.history.merged_sources)                    \
	X(always_on.history.corrupt_dropped) X(always_on.history.leftovers)                \
	X(always_on.history.expired) X(always_on.history.compact_errors)                   \
	X(off_cpu.blocks) X(off_cpu.blocked_us) X(off_cpu.lost) X(off_cpu.stacks_not_taken) \
	X(off_cpu.user_dump_failed) X(off_cpu.switch_ins_unseen) X(off_cpu.stack_renewals) \
	X(off_cpu.stacks_lost) X(off_cpu.window.samples) X(off_cpu.window.bytes)           \
	X(server.clients) X(server.max_clients) X(server.clients_rejected)                 \
	X(server.clients_evicted) X(server.short_clients) X(server.max_short_clients)      \
	X(server.short_requests) X(server.requests) X(server.bad_requests) X(server.denied) \
	X(server.result_bytes) X(server.result_max_bytes) X(server.user_result_max_bytes)  \
	X(server.results_refused) X(server.recordings_active) X(server.max_recordings)     \
	X(server.recordings_started) X(server.recordings_completed)                        \
	X(server.recordings_aborted)

#define U32_MEMBERS(X)                                                                     \
	X(pid) X(default_frequency) X(max_frequency) X(max_stack) X(stack_dump)            \
	X(always_on.frequency) X(always_on.slice_seconds) X(always_on.window_seconds)      \
	X(off_cpu.min_block_us) X(off_cpu.window.slice_seconds) X(loop.realtime_priority)

#define STR_MEMBERS(X)                                                                     \
	X(version) X(event) X(call_graph) X(socket) X(always_on.call_graph)                \
	X(always_on.history.directory) X(always_on.history.last_compact_error) X(off_cpu.why)
/* clang-format on */

/* Every member set, each scalar to a value of its own; the caller fg_status_done()s it. */
static void fill(struct fg_status *s)
{
	static const char *const strings[] = { "0.1.0",
					       "cycles",
					       "fp",
					       "/run/fgd/fgd.sock",
					       "dwarf",
					       "/var/lib/fgd/slices",
					       "Input/output error",
					       "no BTF" };
	uint64_t v = 1000;
	size_t i = 0;

	*s = (struct fg_status){};
#define SET(m) s->m = v++;
	U64_MEMBERS(SET)
	U32_MEMBERS(SET)
#undef SET
#define SET(m) s->m = strings[i++];
	STR_MEMBERS(SET)
#undef SET
	/* Past INT64_MAX, and below zero where the member is signed. */
	s->symbols.dwarf_bytes = UINT64_MAX;
	s->always_on.oldest_ms = -5;
	s->symbols.kernel_restricted = true;
	s->has_jit = s->has_loop = s->has_loader = s->has_memory = s->has_off_cpu = true;
	s->memory.pressure = true;
	s->always_on.enabled = s->always_on.has_history = true;
	s->off_cpu.always_on = s->off_cpu.window.enabled = true;

	s->n_cpus = 3;
	s->cpus = calloc(s->n_cpus, sizeof(*s->cpus));
	ASSERT_TRUE(s->cpus);
	for (size_t c = 0; c < s->n_cpus; c++, v += 4)
		s->cpus[c] = (struct fg_status_cpu){ (uint32_t)c * 2, v, v + 1, v + 2, v + 3 };
	s->n_recordings = 2;
	s->recordings = calloc(s->n_recordings, sizeof(*s->recordings));
	ASSERT_TRUE(s->recordings);
	for (size_t r = 0; r < s->n_recordings; r++, v += 4)
		s->recordings[r] = (struct fg_status_recording){ (uint32_t)(1000 + r), v, v + 1,
								 v + 2, v + 3 };
	s->always_on.history.n_tiers = 2;
	s->always_on.history.tiers = calloc(2, sizeof(*s->always_on.history.tiers));
	ASSERT_TRUE(s->always_on.history.tiers);
	s->always_on.history.tiers[0] = (struct fg_status_tier){ 3600, 60 };
	s->always_on.history.tiers[1] = (struct fg_status_tier){ 86400, 600 };
}

static void assert_equal(const struct fg_status *a, const struct fg_status *b)
{
#define EQ(m) ASSERT_U64_EQ(a->m, b->m);
	U64_MEMBERS(EQ)
	U32_MEMBERS(EQ)
#undef EQ
#define EQ(m) ASSERT_TRUE((!a->m && !b->m) || (a->m && b->m && strcmp(a->m, b->m) == 0));
	STR_MEMBERS(EQ)
#undef EQ
	ASSERT_EQ(a->always_on.oldest_ms, b->always_on.oldest_ms);
	ASSERT_EQ(a->symbols.kernel_restricted, b->symbols.kernel_restricted);
	ASSERT_EQ(a->has_jit, b->has_jit);
	ASSERT_EQ(a->has_loop, b->has_loop);
	ASSERT_EQ(a->has_loader, b->has_loader);
	ASSERT_EQ(a->has_memory, b->has_memory);
	ASSERT_EQ(a->has_off_cpu, b->has_off_cpu);
	ASSERT_EQ(a->off_cpu.available, b->off_cpu.available);
	ASSERT_EQ(a->off_cpu.always_on, b->off_cpu.always_on);
	ASSERT_EQ(a->off_cpu.window.enabled, b->off_cpu.window.enabled);
	ASSERT_EQ(a->memory.pressure, b->memory.pressure);
	ASSERT_EQ(a->always_on.enabled, b->always_on.enabled);
	ASSERT_EQ(a->always_on.has_history, b->always_on.has_history);
	ASSERT_EQ(a->n_cpus, b->n_cpus);
	for (size_t i = 0; i < a->n_cpus; i++) {
		ASSERT_EQ(a->cpus[i].cpu, b->cpus[i].cpu);
		ASSERT_U64_EQ(a->cpus[i].samples, b->cpus[i].samples);
		ASSERT_U64_EQ(a->cpus[i].lost, b->cpus[i].lost);
		ASSERT_U64_EQ(a->cpus[i].throttled, b->cpus[i].throttled);
		ASSERT_U64_EQ(a->cpus[i].malformed, b->cpus[i].malformed);
	}
	ASSERT_EQ(a->n_recordings, b->n_recordings);
	for (size_t i = 0; i < a->n_recordings; i++) {
		ASSERT_EQ(a->recordings[i].uid, b->recordings[i].uid);
		ASSERT_U64_EQ(a->recordings[i].elapsed_ms, b->recordings[i].elapsed_ms);
		ASSERT_U64_EQ(a->recordings[i].samples, b->recordings[i].samples);
		ASSERT_U64_EQ(a->recordings[i].lost, b->recordings[i].lost);
		ASSERT_U64_EQ(a->recordings[i].rate_limited, b->recordings[i].rate_limited);
	}
	ASSERT_EQ(a->always_on.history.n_tiers, b->always_on.history.n_tiers);
	for (size_t i = 0; i < a->always_on.history.n_tiers; i++) {
		ASSERT_U64_EQ(a->always_on.history.tiers[i].age_seconds,
			      b->always_on.history.tiers[i].age_seconds);
		ASSERT_U64_EQ(a->always_on.history.tiers[i].length_seconds,
			      b->always_on.history.tiers[i].length_seconds);
	}
}

/* Parses text as fgctl does (fg_proto_parse, so the version is checked too). */
static struct json_object *parse(const char *text)
{
	struct json_object *o = NULL;

	ASSERT_OK(fg_proto_parse(text, strlen(text), &o));
	return o;
}

static struct json_object *parse_any(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	ASSERT_TRUE(o);
	return o;
}

TEST(filled_status_round_trips)
{
	_cleanup_(fg_status_done) struct fg_status in = {};
	_cleanup_(json_object_putp) struct json_object *j = NULL;
	_cleanup_(fg_status_done) struct fg_status out = {};
	_cleanup_free_ char *line = NULL, *again = NULL;

	fill(&in);
	j = fg_status_to_json(&in);
	ASSERT_TRUE(j);
	/* Through the bytes on the wire, as fgctl gets them. */
	line = fg_proto_format(j);
	ASSERT_TRUE(line);
	json_object_put(j);
	j = parse(line);
	ASSERT_OK(fg_status_from_json(j, &out));
	assert_equal(&in, &out);

	/* And once more: what was decoded writes the same bytes. */
	{
		_cleanup_(json_object_putp) struct json_object *k = fg_status_to_json(&out);

		ASSERT_TRUE(k);
		again = fg_proto_format(k);
		ASSERT_STREQ(again, line);
	}
}

/*
 * A status reply of a real fgd 0.1.0 (cpu-clock, 2 CPUs, always-on with a
 * history, one recording running, the memory budget), as captured from its
 * socket, with the members fgd has written since (always_on's times_bytes
 * and untimed_slices) where it writes them.
 */
static const char captured_reply[] =
	"{\"fgd\":1,\"type\":\"status\",\"version\":\"0.1.0\",\"pid\":15980,\"uptime_ms\":12145,"
	"\"event\":\"cpu-clock\",\"default_frequency\":99,\"max_frequency\":100000,\"max_stack\":127,"
	"\"ring_pages\":128,\"call_graph\":\"dwarf\",\"stack_dump\":32768,"
	"\"socket\":\"\\/tmp\\/cap\\/fgd.sock\",\"cpus\":[{\"cpu\":0,\"samples\":0,\"lost\":0,"
	"\"throttled\":0,\"malformed\":0},{\"cpu\":1,\"samples\":0,\"lost\":0,\"throttled\":0,"
	"\"malformed\":0}],\"tracking\":{\"records\":11,\"lost\":0,\"malformed\":0},"
	"\"processes\":{\"alive\":65,\"generations\":68,\"threads\":83,\"maps\":98,\"proc_reads\":66,"
	"\"dropped_processes\":0,\"dropped_threads\":0,\"dropped_maps\":0,\"roots\":1,"
	"\"roots_dropped\":0,\"roots_unknown\":1,\"bytes\":26880},\"symbols\":{\"binaries\":41,"
	"\"binaries_loaded\":5,\"binaries_unreadable\":0,\"binaries_dropped\":0,"
	"\"binaries_debug_file\":1,\"binaries_minidebuginfo\":0,\"binaries_dwarf\":2,"
	"\"dwarf_dropped\":0,\"dwarf_bytes\":11525620,\"dwarf_mapped\":604953,\"dwarf_evicted\":0,"
	"\"dwarf_reread\":0,\"inline_skipped\":0,\"symbols_bytes\":5846714,\"symbols_evicted\":0,"
	"\"symbols_refused\":0,\"resolved\":33,\"resolved_bytes\":74264,\"resolved_jobs\":33,"
	"\"resolved_hits\":44,\"resolved_waits\":0,\"resolved_resets\":0,\"kernel_symbols\":121856,"
	"\"kernel_reloads\":1,\"kernel_restricted\":false},\"unwinding\":{\"binaries\":18,"
	"\"binaries_loaded\":18,\"binaries_without_cfi\":0,\"binaries_evicted\":0,\"row_hits\":81,"
	"\"row_misses\":50,\"rows_libdw\":3,\"rows_uncached\":0,\"rows_none\":0,\"bytes\":3490352,"
	"\"mapped\":663336},"
	"\"stack_quality\":{\"fp\":{\"user_stacks\":0,\"complete\":0,\"truncated\":0,\"failed\":0,"
	"\"fp_frames\":0,\"complete_pct\":0.0},\"dwarf\":{\"user_stacks\":10,\"complete\":10,"
	"\"truncated\":0,\"failed\":0,\"fp_frames\":0,\"complete_pct\":100.0}},\"jit\":{\"maps\":0,"
	"\"maps_read\":0,\"bytes\":0,\"reads\":0,\"refused\":0,\"resets\":0,\"budget_skipped\":0,"
	"\"size_limited\":0,\"deferred\":0,\"max_map_bytes\":268435456,\"held\":0},"
	"\"loop\":{\"iterations\":107,"
	"\"longest_ms\":10,\"slow\":0,\"slow_ms\":50,\"recent_longest_ms\":4,\"cpu_wait_ms\":3,"
	"\"realtime_priority\":1,\"realtime_demotions\":0},\"loader\":{\"jobs\":58,\"queued\":0,"
	"\"busy_ms\":85,\"longest_job_ms\":59,\"longest_wait_ms\":75},"
	"\"memory\":{\"budget\":100663296,\"base\":1117692,\"charged\":21116994,"
	"\"charged_peak\":21124584,\"rss\":21692416,\"rss_peak\":21962752,\"pressure\":false,"
	"\"relieved\":0,\"unrelieved\":0,\"parts\":{\"window\":{\"bytes\":3398,\"peak\":6084,"
	"\"share\":33554432,\"evicted\":0,\"evicted_bytes\":0,\"refused\":0},"
	"\"recordings\":{\"bytes\":149632,\"peak\":149632,\"share\":50331648,\"evicted\":0,"
	"\"evicted_bytes\":0,\"refused\":0},\"waiting\":{\"bytes\":0,\"peak\":16288,"
	"\"share\":12582912,\"evicted\":0,\"evicted_bytes\":0,\"refused\":0},"
	"\"results\":{\"bytes\":134,\"peak\":134,\"share\":33554432,\"evicted\":0,"
	"\"evicted_bytes\":0,\"refused\":0},\"processes\":{\"bytes\":26880,\"peak\":26880,"
	"\"share\":12582912,\"evicted\":0,\"evicted_bytes\":0,\"refused\":0},\"jit\":{\"bytes\":0,"
	"\"peak\":0,\"share\":12582912,\"evicted\":0,\"evicted_bytes\":0,\"refused\":0},"
	"\"rings\":{\"bytes\":4743168,\"peak\":4743168,\"share\":100663296,\"evicted\":0,"
	"\"evicted_bytes\":0,\"refused\":0},\"dwarf\":{\"bytes\":11525620,\"peak\":11525620,\"share\":50331648,\"evicted\":0,"
	"\"evicted_bytes\":0,\"refused\":0},\"cfi\":{\"bytes\":3490352,\"peak\":3490352,"
	"\"share\":25165824,\"evicted\":0,\"evicted_bytes\":0,\"refused\":0},"
	"\"symbols\":{\"bytes\":5846714,\"peak\":5846714,\"share\":50331648,\"evicted\":0,"
	"\"evicted_bytes\":0,\"refused\":0},\"names\":{\"bytes\":74264,\"peak\":74264,"
	"\"share\":12582912,\"evicted\":0,\"evicted_bytes\":0,\"refused\":0}}},"
	"\"always_on\":{\"enabled\":true,\"frequency\":19,\"call_graph\":\"dwarf\","
	"\"slice_seconds\":2,\"window_seconds\":900,\"memory_max\":33554432,\"slice_budget\":74235,"
	"\"bytes\":3398,\"times_bytes\":0,\"untimed_slices\":0,\"slices\":7,\"oldest_ms\":1795598987282,\"samples\":2,\"folded_samples\":0,"
	"\"unattributed_samples\":0,\"total_samples\":2,\"total_folded_samples\":0,"
	"\"total_folded_stacks\":0,\"total_unattributed_samples\":0,\"compactions\":0,"
	"\"expired_slices\":0,\"idle_samples\":225,\"unknown_process_samples\":0,\"errors\":0,"
	"\"memo_bytes\":71104,\"memo_resets\":0,\"waiting\":0,\"waited\":2,\"degraded\":0,\"lost\":0,"
	"\"throttled\":0,\"history\":{\"directory\":\"\\/tmp\\/cap\\/state\",\"files\":6,"
	"\"bytes\":898,\"written\":6,\"write_errors\":0,\"out_of_order\":0,\"corrupt\":0,"
	"\"future\":0,\"pruned\":0,\"max_bytes\":1073741824,\"tiers\":[{\"age_seconds\":3600,"
	"\"length_seconds\":60},{\"age_seconds\":86400,\"length_seconds\":600}],"
	"\"keep_seconds\":604800,\"merged\":0,\"merged_sources\":0,\"corrupt_dropped\":0,"
	"\"leftovers\":0,\"expired\":0,\"compact_errors\":0}},\"server\":{\"clients\":2,"
	"\"max_clients\":64,\"clients_rejected\":0,\"clients_evicted\":0,\"short_clients\":0,"
	"\"max_short_clients\":8,\"short_requests\":0,\"requests\":2,\"bad_requests\":0,\"denied\":0,"
	"\"result_bytes\":134,\"result_max_bytes\":268435456,\"user_result_max_bytes\":16777216,"
	"\"results_refused\":0,\"recordings_active\":1,\"max_recordings\":8,\"recordings_started\":1,"
	"\"recordings_completed\":0,\"recordings_aborted\":0},\"recordings\":[{\"uid\":0,"
	"\"elapsed_ms\":4991,\"samples\":497,\"lost\":0,\"rate_limited\":0}]}";

TEST(captured_reply_decodes)
{
	_cleanup_(json_object_putp) struct json_object *j = parse(captured_reply);
	_cleanup_(fg_status_done) struct fg_status s = {};

	ASSERT_OK(fg_status_from_json(j, &s));
	ASSERT_STREQ(s.version, "0.1.0");
	ASSERT_EQ(s.pid, 15980);
	ASSERT_EQ(s.uptime_ms, 12145);
	ASSERT_STREQ(s.event, "cpu-clock");
	ASSERT_EQ(s.default_frequency, 99);
	ASSERT_EQ(s.max_frequency, 100000);
	ASSERT_EQ(s.max_stack, 127);
	ASSERT_EQ(s.ring_pages, 128);
	ASSERT_STREQ(s.call_graph, "dwarf");
	ASSERT_EQ(s.stack_dump, 32768);
	ASSERT_STREQ(s.socket, "/tmp/cap/fgd.sock");
	ASSERT_EQ(s.n_cpus, 2);
	ASSERT_EQ(s.cpus[1].cpu, 1);
	ASSERT_EQ(s.cpus[1].samples, 0);
	ASSERT_EQ(s.tracking.records, 11);
	ASSERT_EQ(s.processes.alive, 65);
	ASSERT_EQ(s.processes.maps, 98);
	ASSERT_EQ(s.processes.bytes, 26880);
	ASSERT_EQ(s.processes.roots_unknown, 1);
	ASSERT_EQ(s.symbols.binaries, 41);
	ASSERT_EQ(s.symbols.dwarf_bytes, 11525620);
	ASSERT_EQ(s.symbols.dwarf_mapped, 604953);
	ASSERT_EQ(s.symbols.symbols_bytes, 5846714);
	ASSERT_EQ(s.symbols.resolved_hits, 44);
	ASSERT_EQ(s.symbols.kernel_symbols, 121856);
	ASSERT_EQ(s.symbols.kernel_restricted, false);
	ASSERT_EQ(s.unwinding.row_misses, 50);
	ASSERT_EQ(s.unwinding.rows_libdw, 3);
	ASSERT_EQ(s.unwinding.bytes, 3490352);
	ASSERT_EQ(s.unwinding.mapped, 663336);
	ASSERT_EQ(s.stack_quality.fp.user_stacks, 0);
	ASSERT_EQ(s.stack_quality.dwarf.user_stacks, 10);
	ASSERT_EQ(s.stack_quality.dwarf.complete, 10);
	ASSERT_TRUE(s.has_jit && s.has_loop && s.has_loader);
	ASSERT_EQ(s.jit.maps, 0);
	ASSERT_EQ(s.jit.max_map_bytes, 268435456);
	ASSERT_EQ(s.loop.longest_ms, 10);
	ASSERT_EQ(s.loop.slow_ms, 50);
	ASSERT_EQ(s.loader.jobs, 58);
	ASSERT_EQ(s.loader.longest_wait_ms, 75);
	ASSERT_TRUE(s.has_memory);
	ASSERT_EQ(s.memory.budget, 100663296);
	ASSERT_EQ(s.memory.rss, 21692416);
	ASSERT_TRUE(!s.memory.pressure);
	ASSERT_EQ(s.memory.parts.window.share, 33554432);
	ASSERT_EQ(s.memory.parts.recordings.bytes, 149632);
	ASSERT_EQ(s.memory.parts.waiting.peak, 16288);
	ASSERT_EQ(s.memory.parts.rings.bytes, 4743168);
	ASSERT_EQ(s.memory.parts.dwarf.bytes, 11525620);
	ASSERT_EQ(s.memory.parts.names.bytes, 74264);
	ASSERT_TRUE(s.always_on.enabled);
	ASSERT_EQ(s.always_on.frequency, 19);
	ASSERT_STREQ(s.always_on.call_graph, "dwarf");
	ASSERT_EQ(s.always_on.window_seconds, 900);
	ASSERT_EQ(s.always_on.oldest_ms, 1795598987282);
	ASSERT_EQ(s.always_on.samples, 2);
	ASSERT_EQ(s.always_on.waited, 2);
	ASSERT_EQ(s.always_on.memory_max, 33554432);
	ASSERT_TRUE(s.always_on.has_history);
	ASSERT_STREQ(s.always_on.history.directory, "/tmp/cap/state");
	ASSERT_EQ(s.always_on.history.bytes, 898);
	ASSERT_EQ(s.always_on.history.max_bytes, 1073741824);
	ASSERT_EQ(s.always_on.history.n_tiers, 2);
	ASSERT_EQ(s.always_on.history.tiers[1].age_seconds, 86400);
	ASSERT_EQ(s.always_on.history.tiers[1].length_seconds, 600);
	ASSERT_EQ(s.always_on.history.keep_seconds, 604800);
	ASSERT_TRUE(!s.always_on.history.last_compact_error);
	ASSERT_EQ(s.server.clients, 2);
	ASSERT_EQ(s.server.result_bytes, 134);
	ASSERT_EQ(s.server.user_result_max_bytes, 16777216);
	ASSERT_EQ(s.server.recordings_active, 1);
	ASSERT_EQ(s.n_recordings, 1);
	ASSERT_EQ(s.recordings[0].uid, 0);
	ASSERT_EQ(s.recordings[0].elapsed_ms, 4991);
	ASSERT_EQ(s.recordings[0].samples, 497);
}

/* The encoder writes a real fgd's reply byte for byte: members, order, complete_pct's digits. */
TEST(captured_reply_encodes_to_the_same_bytes)
{
	_cleanup_(json_object_putp) struct json_object *j = parse(captured_reply), *back = NULL;
	_cleanup_(fg_status_done) struct fg_status s = {};
	_cleanup_free_ char *line = NULL;

	ASSERT_OK(fg_status_from_json(j, &s));
	back = fg_status_to_json(&s);
	ASSERT_TRUE(back);
	line = fg_proto_format(back);
	ASSERT_TRUE(line);
	ASSERT_EQ(strlen(line), strlen(captured_reply) + 1);
	ASSERT_TRUE(memcmp(line, captured_reply, strlen(captured_reply)) == 0);
	ASSERT_EQ(line[strlen(captured_reply)], '\n');
}

TEST(missing_members_read_as_zero)
{
	_cleanup_(json_object_putp) struct json_object *j =
		parse("{\"fgd\":1,\"type\":\"status\"}");
	_cleanup_(fg_status_done) struct fg_status s = {};
	struct fg_status zero = {};

	ASSERT_OK(fg_status_from_json(j, &s));
	assert_equal(&s, &zero);
	ASSERT_TRUE(!s.version && !s.socket && !s.cpus && !s.recordings);
	ASSERT_TRUE(!s.has_jit && !s.has_loop && !s.has_loader && !s.has_memory);
	ASSERT_TRUE(!s.always_on.enabled && !s.always_on.has_history);
}

/* An older fgd: no jit, loop, loader, memory or history; what it has is read as usual. */
TEST(older_reply_lacks_members)
{
	_cleanup_(json_object_putp) struct json_object *j = parse(captured_reply);
	_cleanup_(fg_status_done) struct fg_status s = {};
	struct json_object *ao;

	json_object_object_del(j, "jit");
	json_object_object_del(j, "loop");
	json_object_object_del(j, "loader");
	json_object_object_del(j, "memory");
	ASSERT_TRUE(json_object_object_get_ex(j, "always_on", &ao));
	json_object_object_del(ao, "history");
	json_object_object_del(ao, "waited");
	ASSERT_OK(fg_status_from_json(j, &s));
	ASSERT_TRUE(!s.has_jit && !s.has_loop && !s.has_loader && !s.has_memory &&
		    !s.always_on.has_history);
	ASSERT_EQ(s.jit.maps, 0);
	ASSERT_EQ(s.always_on.waited, 0);
	ASSERT_EQ(s.always_on.samples, 2);
	ASSERT_EQ(s.server.clients, 2);
	ASSERT_EQ(s.n_recordings, 1);
}

/* A newer fgd: members this version does not know, anywhere and of any type, are skipped. */
TEST(unknown_members_are_ignored)
{
	_cleanup_(json_object_putp) struct json_object *j = parse(
		"{\"fgd\":1,\"type\":\"status\",\"pid\":7,\"future\":[1,\"x\",null],\"gpu\":{\"a\":1},"
		"\"server\":{\"clients\":3,\"quotas\":\"soon\"},"
		"\"cpus\":[{\"cpu\":4,\"samples\":9,\"numa\":1.5}],"
		"\"always_on\":{\"enabled\":true,\"history\":{\"files\":2,\"tiers\":[{\"age_seconds\":1,"
		"\"kind\":\"x\"}],\"encryption\":false}}}");
	_cleanup_(fg_status_done) struct fg_status s = {};

	ASSERT_OK(fg_status_from_json(j, &s));
	ASSERT_EQ(s.pid, 7);
	ASSERT_EQ(s.server.clients, 3);
	ASSERT_EQ(s.n_cpus, 1);
	ASSERT_EQ(s.cpus[0].cpu, 4);
	ASSERT_EQ(s.cpus[0].samples, 9);
	ASSERT_TRUE(s.always_on.enabled && s.always_on.has_history);
	ASSERT_EQ(s.always_on.history.files, 2);
	ASSERT_EQ(s.always_on.history.n_tiers, 1);
	ASSERT_EQ(s.always_on.history.tiers[0].age_seconds, 1);
}

TEST(wrong_types_are_refused)
{
	static const char *const bad[] = {
		"[]",
		"\"status\"",
		"{\"pid\":\"1\"}",
		"{\"pid\":-1}",
		"{\"pid\":4294967296}",
		"{\"pid\":null}",
		"{\"uptime_ms\":1.5}",
		"{\"uptime_ms\":-1}",
		"{\"uptime_ms\":true}",
		"{\"version\":1}",
		"{\"version\":null}",
		"{\"cpus\":{}}",
		"{\"cpus\":[1]}",
		"{\"cpus\":[{\"cpu\":0},null]}",
		"{\"cpus\":[{\"cpu\":\"0\"}]}",
		"{\"tracking\":[]}",
		"{\"tracking\":{\"lost\":\"0\"}}",
		"{\"symbols\":{\"kernel_restricted\":1}}",
		"{\"stack_quality\":{\"fp\":{\"complete_pct\":\"100\"}}}",
		"{\"stack_quality\":{\"dwarf\":[]}}",
		"{\"jit\":null}",
		"{\"always_on\":{\"enabled\":\"yes\"}}",
		"{\"always_on\":{\"oldest_ms\":\"x\"}}",
		"{\"always_on\":{\"oldest_ms\":18446744073709551615}}",
		"{\"always_on\":{\"history\":{\"tiers\":[{\"age_seconds\":true}]}}}",
		"{\"always_on\":{\"history\":{\"last_compact_error\":5}}}",
		"{\"server\":{\"clients\":-3}}",
		"{\"recordings\":[{\"uid\":-1}]}",
	};

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_(json_object_putp) struct json_object *j = parse_any(bad[i]);
		struct fg_status s = { .pid = 99, .n_cpus = 5 };

		if (fg_status_from_json(j, &s) != -EBADMSG)
			fg_test_fail(__FILE__, __LINE__, "%s was not refused with EBADMSG", bad[i]);
		/* Untouched on failure. */
		ASSERT_EQ(s.pid, 99);
		ASSERT_EQ(s.n_cpus, 5);
		ASSERT_TRUE(!s.cpus);
	}
}

TEST(edges_of_ranges_are_accepted)
{
	_cleanup_(json_object_putp) struct json_object *j =
		parse_any("{\"pid\":4294967295,\"uptime_ms\":18446744073709551615,"
			  "\"always_on\":{\"oldest_ms\":-9223372036854775808},"
			  "\"stack_quality\":{\"fp\":{\"complete_pct\":100}}}");
	_cleanup_(fg_status_done) struct fg_status s = {};

	ASSERT_OK(fg_status_from_json(j, &s));
	ASSERT_U64_EQ(s.pid, UINT32_MAX);
	ASSERT_U64_EQ(s.uptime_ms, UINT64_MAX);
	ASSERT_EQ(s.always_on.oldest_ms, INT64_MIN);
}

TEST(arrays_are_bounded)
{
	_cleanup_(json_object_putp) struct json_object *j = json_object_new_object();
	struct json_object *cpus = json_object_new_array();
	struct fg_status s = {};

	ASSERT_TRUE(j && cpus);
	json_object_object_add(j, "cpus", cpus);
	for (size_t i = 0; i <= FG_STATUS_MAX_ARRAY; i++)
		ASSERT_OK(json_object_array_add(cpus, json_object_new_object()));
	ASSERT_ERR(fg_status_from_json(j, &s), -EBADMSG);
	ASSERT_TRUE(!s.cpus);
	/* One fewer fits. */
	json_object_array_del_idx(cpus, 0, 1);
	ASSERT_OK(fg_status_from_json(j, &s));
	ASSERT_EQ(s.n_cpus, FG_STATUS_MAX_ARRAY);
	fg_status_done(&s);
}

/* What the encoder leaves out: parts flagged absent, NULL strings, a disabled sampler's figures. */
TEST(encoder_leaves_out_what_is_absent)
{
	_cleanup_(fg_status_done) struct fg_status s = {};
	_cleanup_(json_object_putp) struct json_object *j = NULL;
	_cleanup_free_ char *line = NULL;
	struct json_object *v;

	fill(&s);
	s.has_jit = s.has_loader = false;
	s.version = NULL;
	s.always_on.enabled = false;
	j = fg_status_to_json(&s);
	ASSERT_TRUE(j);
	ASSERT_TRUE(!json_object_object_get_ex(j, "jit", NULL));
	ASSERT_TRUE(!json_object_object_get_ex(j, "loader", NULL));
	ASSERT_TRUE(json_object_object_get_ex(j, "loop", NULL));
	ASSERT_TRUE(!json_object_object_get_ex(j, "version", NULL));
	ASSERT_TRUE(json_object_object_get_ex(j, "always_on", &v));
	line = fg_proto_format(v);
	ASSERT_STREQ(line, "{\"enabled\":false}\n");
	free(TAKE_PTR(line));

	/* Enabled without a history, and a history without a failed compaction. */
	s.always_on.enabled = true;
	s.always_on.has_history = false;
	json_object_put(j);
	j = fg_status_to_json(&s);
	ASSERT_TRUE(j && json_object_object_get_ex(j, "always_on", &v));
	ASSERT_TRUE(!json_object_object_get_ex(v, "history", NULL));
	ASSERT_TRUE(json_object_object_get_ex(v, "throttled", NULL));
	s.always_on.has_history = true;
	s.always_on.history.last_compact_error = NULL;
	json_object_put(j);
	j = fg_status_to_json(&s);
	ASSERT_TRUE(j && json_object_object_get_ex(j, "always_on", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "history", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "compact_errors", NULL));
	ASSERT_TRUE(!json_object_object_get_ex(v, "last_compact_error", NULL));
}

/* complete_pct is derived from the counts, as in every recording's metadata. */
TEST(complete_pct_is_derived)
{
	_cleanup_(json_object_putp) struct json_object *j = NULL;
	struct fg_status s = {};
	struct json_object *q, *v;

	s.stack_quality.dwarf = (struct fg_status_stack_quality){ .user_stacks = 3, .complete = 2 };
	j = fg_status_to_json(&s);
	ASSERT_TRUE(j);
	ASSERT_TRUE(json_object_object_get_ex(j, "stack_quality", &q));
	ASSERT_TRUE(json_object_object_get_ex(q, "dwarf", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "complete_pct", &v));
	ASSERT_TRUE(json_object_get_double(v) > 66.66 && json_object_get_double(v) < 66.67);
	ASSERT_TRUE(json_object_object_get_ex(q, "fp", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "complete_pct", &v));
	ASSERT_TRUE(json_object_get_double(v) == 0.0);
}
