/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "proto/meta.h"
#include "proto/proto.h"
#include "proto/status.h"
#include "test.h"

/*
 * A DWARF recording's and an always-on answer's metadata, in the bytes and
 * the member order fgd wrote before the schema (fgd-recording.c,
 * fgd-resolve.c, fgd-query.c, fgd-evset.c), "/" escaped as json-c does: the
 * encoder must give them back.
 */
static const char recording_reply[] =
	"{\"off_cpu\":{\"min_block_us\":1,\"blocks\":40,\"blocked_us\":900000,\"lost_threads\":0,"
	"\"lost_ring\":1,\"lost_late\":2,\"rate_limit\":0,\"rate_limited\":0,\"ring_bytes\":4194304,"
	"\"kernel_stack_failed\":3,\"user_stack_failed\":4,\"switch_ins_unseen\":5,"
	"\"stack_dump\":16384,\"user_dump_failed\":6},\"unit\":\"us\",\"event\":\"cpu-clock\","
	"\"wall\":true,\"frequency\":99,\"duration_ms\":2003,\"samples\":240,\"samples_seen\":300,"
	"\"other_processes\":60,\"other_threads\":0,\"lost\":3,\"throttled\":0,\"malformed\":0,"
	"\"dropped\":0,\"waited\":12,\"degraded\":1,\"stacks\":17,\"kernel_hidden\":false,"
	"\"memory_limited\":false,\"times_dropped\":0,\"since_ms\":1700000000000,"
	"\"until_ms\":1700000001000,\"call_graph\":\"dwarf\",\"stack_dump\":32768,"
	"\"stack_quality\":{\"user_stacks\":200,\"complete\":150,\"truncated\":40,\"failed\":10,"
	"\"fp_frames\":7,\"complete_pct\":75.0},\"inline\":true,\"demangle\":true,"
	"\"frames\":{\"named\":900,\"module_offset\":20,\"unknown\":3,\"inlined\":44},"
	"\"unreadable_binaries\":[{\"path\":\"\\/opt\\/x\\/lib.so\",\"error\":\"Permission denied\"}],"
	"\"unreadable_count\":1,\"jit_maps\":{\"refused\":[{\"pid\":42,\"path\":\"\\/tmp\\/perf-42.map\","
	"\"reason\":\"owner\",\"uid\":1000},{\"pid\":43,\"path\":\"\\/tmp\\/perf-43.map\","
	"\"reason\":\"too_large\",\"size\":300000000},{\"pid\":44,\"path\":\"\\/tmp\\/perf-44.map\","
	"\"reason\":\"unreadable\",\"error\":\"Input\\/output error\"}],\"maps\":2,\"entries\":100,"
	"\"malformed\":1,\"dropped\":0,\"frames\":30,\"refused_count\":3,\"budget_limited\":false,"
	"\"size_limited\":true,\"truncated\":false},\"cpus\":[{\"cpu\":0,\"samples\":150,\"lost\":3,"
	"\"throttled\":0,\"malformed\":0},{\"cpu\":3,\"samples\":150,\"lost\":0,\"throttled\":0,"
	"\"malformed\":0}],\"exited\":[1234]}";

static const char snapshot_reply[] =
	"{\"lost_samples\":5,\"gap_count\":2,\"gap_ms\":3000,\"gaps\":[{\"from_ms\":1700000000000,"
	"\"until_ms\":1700000002000},{\"from_ms\":1700000005000,\"until_ms\":1700000006000}],"
	"\"unreadable_slices\":1,\"unreadable\":[{\"from_ms\":1699999990000,"
	"\"until_ms\":1700000000000,\"reason\":\"corrupt\"}],\"source\":\"always-on\","
	"\"event\":\"cpu-clock\",\"frequency\":49,\"call_graph\":\"fp\",\"first_ms\":1699999990000,"
	"\"last_ms\":1700000010000,\"duration_ms\":20000,\"covered_ms\":16000,\"slices\":4,"
	"\"slice_seconds\":5,\"processes\":12,\"samples\":3000,\"folded_samples\":10,"
	"\"folded_stacks\":2,\"unattributed_samples\":1,\"other_rate_samples\":0,"
	"\"untimed_slices\":0,\"memory_max\":67108864,\"window_total_folded_samples\":10,"
	"\"kernel_hidden\":true}";

static struct json_object *parse(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	ASSERT_TRUE(o);
	return o;
}

/* obj's protocol line (fg_proto_format(), as fgd sends it) is text, byte for byte. */
static void assert_same_bytes(struct json_object *obj, const char *text)
{
	_cleanup_free_ char *line = fg_proto_format(obj);

	ASSERT_TRUE(line);
	if (strlen(line) != strlen(text) + 1 || memcmp(line, text, strlen(text)) != 0)
		fg_test_fail(__FILE__, __LINE__, "encoded\n%snot\n%s", line, text);
}

TEST(recording_reply_decodes)
{
	_cleanup_(json_object_putp) struct json_object *j = parse(recording_reply);
	_cleanup_(fg_recording_meta_done) struct fg_recording_meta m = {};

	ASSERT_OK(fg_recording_meta_from_json(j, &m));
	ASSERT_TRUE(m.has_off_cpu && m.off_cpu.lost_late == 2 && m.off_cpu.user_dump_failed == 6);
	ASSERT_STREQ(m.unit, "us");
	ASSERT_STREQ(m.event, "cpu-clock");
	ASSERT_TRUE(m.wall);
	ASSERT_EQ(m.frequency, 99);
	ASSERT_EQ(m.samples, 240);
	ASSERT_TRUE(m.ranged);
	ASSERT_EQ(m.until_ms, 1700000001000);
	ASSERT_TRUE(m.has_stack_dump);
	ASSERT_EQ(m.stack_dump, 32768);
	ASSERT_EQ(m.stack_quality.truncated, 40);
	ASSERT_TRUE(m.inline_frames && m.demangle);
	ASSERT_TRUE(m.resolve.has_frames);
	ASSERT_EQ(m.resolve.frames.inlined, 44);
	ASSERT_EQ(m.resolve.n_unreadable_binaries, 1);
	ASSERT_STREQ(m.resolve.unreadable_binaries[0].error, "Permission denied");
	ASSERT_EQ(m.resolve.jit_maps.n_refused, 3);
	ASSERT_TRUE(m.resolve.jit_maps.refused[0].has_uid);
	ASSERT_EQ(m.resolve.jit_maps.refused[0].uid, 1000);
	ASSERT_TRUE(!m.resolve.jit_maps.refused[0].has_size &&
		    !m.resolve.jit_maps.refused[0].error);
	ASSERT_EQ(m.resolve.jit_maps.refused[1].size, 300000000);
	ASSERT_STREQ(m.resolve.jit_maps.refused[2].error, "Input/output error");
	ASSERT_EQ(m.n_cpus, 2);
	ASSERT_EQ(m.cpus[1].cpu, 3);
	ASSERT_EQ(m.n_exited, 1);
	ASSERT_EQ(m.exited[0], 1234);
}

TEST(recording_reply_encodes_to_the_same_bytes)
{
	_cleanup_(json_object_putp) struct json_object *j = parse(recording_reply), *back = NULL;
	_cleanup_(fg_recording_meta_done) struct fg_recording_meta m = {};

	ASSERT_OK(fg_recording_meta_from_json(j, &m));
	back = fg_recording_meta_to_json(&m);
	ASSERT_TRUE(back);
	assert_same_bytes(back, recording_reply);
}

TEST(snapshot_reply_round_trips)
{
	_cleanup_(json_object_putp) struct json_object *j = parse(snapshot_reply), *back = NULL;
	_cleanup_(fg_snapshot_meta_done) struct fg_snapshot_meta m = {};

	ASSERT_OK(fg_snapshot_meta_from_json(j, &m));
	ASSERT_EQ(m.missing.gap_count, 2);
	ASSERT_EQ(m.missing.n_gaps, 2);
	ASSERT_TRUE(!m.missing.gaps[0].reason);
	ASSERT_STREQ(m.missing.unreadable[0].reason, "corrupt");
	ASSERT_TRUE(!m.unit && !m.has_top && m.kernel_hidden);
	ASSERT_EQ(m.first_ms, 1699999990000);
	ASSERT_EQ(m.memory_max, 67108864);
	back = fg_snapshot_meta_to_json(&m);
	ASSERT_TRUE(back);
	assert_same_bytes(back, snapshot_reply);
}

/* What is written only sometimes: off-CPU, wall, a range, DWARF's dump, top's drops. */
TEST(encoder_leaves_out_what_is_absent)
{
	struct fg_recording_meta r = { .event = "cycles", .frequency = 99 };
	struct fg_snapshot_meta s = { .has_top = true, .dropped_samples = 3 };
	_cleanup_(json_object_putp) struct json_object *jr = fg_recording_meta_to_json(&r);
	_cleanup_(json_object_putp) struct json_object *js = fg_snapshot_meta_to_json(&s);
	struct json_object *v;

	ASSERT_TRUE(jr && js);
	static const char *const absent[] = { "off_cpu",  "unit",       "wall",   "since_ms",
					      "until_ms", "stack_dump", "frames", "call_graph" };
	for (size_t i = 0; i < ELEMENTSOF(absent); i++)
		if (json_object_object_get_ex(jr, absent[i], &v))
			fg_test_fail(__FILE__, __LINE__, "%s written", absent[i]);
	ASSERT_TRUE(json_object_object_get_ex(jr, "exited", &v));
	ASSERT_EQ(json_object_array_length(v), 0);
	ASSERT_TRUE(json_object_object_get_ex(js, "dropped_samples", &v));
	ASSERT_EQ(json_object_get_int64(v), 3);
	ASSERT_TRUE(json_object_object_get_ex(js, "dropped_leaf_samples", &v));
}

/* An older fgd: members missing read as zero, false or NULL; the rest as usual. */
TEST(older_reply_lacks_members)
{
	_cleanup_(json_object_putp) struct json_object *j = parse(recording_reply);
	_cleanup_(fg_recording_meta_done) struct fg_recording_meta m = {};
	_cleanup_(json_object_putp) struct json_object *empty = parse("{}");
	_cleanup_(fg_snapshot_meta_done) struct fg_snapshot_meta s = {};

	json_object_object_del(j, "frames");
	json_object_object_del(j, "jit_maps");
	json_object_object_del(j, "times_dropped");
	json_object_object_del(j, "exited");
	json_object_object_del(j, "wall");
	ASSERT_OK(fg_recording_meta_from_json(j, &m));
	ASSERT_TRUE(!m.resolve.has_frames && !m.wall && !m.exited);
	ASSERT_EQ(m.resolve.jit_maps.refused_count, 0);
	ASSERT_EQ(m.times_dropped, 0);
	ASSERT_EQ(m.samples, 240);
	ASSERT_OK(fg_snapshot_meta_from_json(empty, &s));
	ASSERT_TRUE(!s.source && !s.missing.gaps && s.samples == 0);
}

/* A newer fgd: members this version does not know, anywhere and of any type, are skipped. */
TEST(unknown_members_are_ignored)
{
	_cleanup_(json_object_putp) struct json_object *j = parse(
		"{\"samples\":7,\"future\":[1,\"x\",null],\"gpu\":{\"a\":1},"
		"\"off_cpu\":{\"blocks\":2,\"new\":\"x\"},\"jit_maps\":{\"refused\":[{\"pid\":1,"
		"\"why\":3}]},\"cpus\":[{\"cpu\":4,\"numa\":1.5}]}");
	_cleanup_(fg_recording_meta_done) struct fg_recording_meta m = {};

	ASSERT_OK(fg_recording_meta_from_json(j, &m));
	ASSERT_EQ(m.samples, 7);
	ASSERT_TRUE(m.has_off_cpu);
	ASSERT_EQ(m.off_cpu.blocks, 2);
	ASSERT_EQ(m.resolve.jit_maps.n_refused, 1);
	ASSERT_EQ(m.cpus[0].cpu, 4);
}

TEST(wrong_types_are_refused)
{
	static const char *const bad[] = {
		"[]",
		"{\"samples\":\"1\"}",
		"{\"samples\":-1}",
		"{\"frequency\":4294967296}",
		"{\"event\":1}",
		"{\"wall\":1}",
		"{\"since_ms\":1.5}",
		"{\"off_cpu\":[]}",
		"{\"frames\":{\"named\":null}}",
		"{\"stack_quality\":{\"complete_pct\":\"x\"}}",
		"{\"unreadable_binaries\":[{\"path\":2}]}",
		"{\"unreadable_binaries\":{}}",
		"{\"jit_maps\":{\"refused\":[{\"error\":false}]}}",
		"{\"cpus\":[1]}",
		"{\"exited\":[\"1\"]}",
		"{\"exited\":[18446744073709551615]}",
	};

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_(json_object_putp) struct json_object *j = parse(bad[i]);
		struct fg_recording_meta m = { .samples = 99 };

		if (fg_recording_meta_from_json(j, &m) != -EBADMSG)
			fg_test_fail(__FILE__, __LINE__, "%s was not refused with EBADMSG", bad[i]);
		/* Untouched on failure. */
		ASSERT_EQ(m.samples, 99);
		ASSERT_TRUE(!m.cpus);
	}
	static const char *const bad_snapshot[] = {
		"{\"gaps\":[{\"from_ms\":\"x\"}]}",
		"{\"unreadable\":[{\"reason\":1}]}",
		"{\"kernel_hidden\":0}",
		"{\"dropped_samples\":-2}",
	};
	for (size_t i = 0; i < ELEMENTSOF(bad_snapshot); i++) {
		_cleanup_(json_object_putp) struct json_object *j = parse(bad_snapshot[i]);
		struct fg_snapshot_meta s = {};

		if (fg_snapshot_meta_from_json(j, &s) != -EBADMSG)
			fg_test_fail(__FILE__, __LINE__, "%s was not refused", bad_snapshot[i]);
		ASSERT_TRUE(!s.missing.gaps);
	}
}

TEST(arrays_are_bounded)
{
	_cleanup_(json_object_putp) struct json_object *j = json_object_new_object();
	struct json_object *a = json_object_new_array();
	struct fg_recording_meta m = {};

	ASSERT_TRUE(j && a);
	for (size_t i = 0; i <= FG_STATUS_MAX_ARRAY; i++)
		json_object_array_add(a, json_object_new_int64((int64_t)i));
	json_object_object_add(j, "exited", a);
	ASSERT_EQ(fg_recording_meta_from_json(j, &m), -EBADMSG);
	ASSERT_TRUE(!m.exited);
}
