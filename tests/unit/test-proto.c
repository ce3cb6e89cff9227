/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "proto/proto.h"
#include "test.h"

static int decode_line(const char *line, struct fg_request *req, const char **err)
{
	struct json_object *msg;
	int r = fg_proto_parse(line, strlen(line), &msg);

	if (r < 0)
		return r;
	r = fg_proto_decode_request(msg, req, err);
	json_object_put(msg);
	return r;
}

/* req encoded, formatted as a line and decoded again into *back. */
static void round_trip(const struct fg_request *req, struct fg_request *back)
{
	struct json_object *obj = fg_proto_encode_request(req);
	const char *err = NULL;
	char *line;

	ASSERT_TRUE(obj);
	line = fg_proto_format(obj);
	json_object_put(obj);
	ASSERT_TRUE(line);
	line[strlen(line) - 1] = '\0';
	ASSERT_OK(decode_line(line, back, &err));
	free(line);
}

TEST(reader_splits_lines_across_feeds)
{
	struct fg_proto_reader r;
	struct fg_proto_item it;
	const char *in = "{\"a\":1}\n{\"b\":2}\n{\"c\"";

	fg_proto_reader_init(&r, 100);
	/* Byte by byte: items must come out whole regardless of chunking. */
	for (size_t i = 0; i < 9; i++)
		ASSERT_OK(fg_proto_reader_feed(&r, in + i, 1));
	ASSERT_OK(fg_proto_reader_next(&r, &it));
	ASSERT_EQ(it.kind, FG_PROTO_MESSAGE);
	ASSERT_STREQ(it.bytes, "{\"a\":1}");
	ASSERT_EQ(it.len, 7);
	ASSERT_OK(fg_proto_reader_next(&r, &it));
	ASSERT_EQ(it.kind, FG_PROTO_NEED_MORE);
	ASSERT_OK(fg_proto_reader_feed(&r, in + 9, strlen(in) - 9));
	ASSERT_OK(fg_proto_reader_next(&r, &it));
	ASSERT_STREQ(it.bytes, "{\"b\":2}");
	ASSERT_OK(fg_proto_reader_next(&r, &it));
	ASSERT_EQ(it.kind, FG_PROTO_NEED_MORE);
	fg_proto_reader_done(&r);
}

TEST(reader_data_payload_may_hold_newlines)
{
	struct fg_proto_reader r;
	struct fg_proto_item it;
	const char *head = "{\"type\":\"data\",\"length\":6}\n";
	const char *in = "{\"type\":\"data\",\"length\":6}\na\nb\nc\n{\"end\":1}\n";
	size_t first = strlen(head) + 4; /* the header and 4 of the 6 payload bytes */
	char got[16] = "";

	fg_proto_reader_init(&r, 100);
	ASSERT_OK(fg_proto_reader_feed(&r, in, first));
	ASSERT_OK(fg_proto_reader_next(&r, &it));
	ASSERT_EQ(it.kind, FG_PROTO_MESSAGE);
	fg_proto_reader_expect_data(&r, 6);
	ASSERT_OK(fg_proto_reader_next(&r, &it));
	ASSERT_EQ(it.kind, FG_PROTO_DATA);
	ASSERT_EQ(it.len, 4); /* only part has arrived */
	strncat(got, it.bytes, it.len);
	ASSERT_OK(fg_proto_reader_next(&r, &it));
	ASSERT_EQ(it.kind, FG_PROTO_NEED_MORE);
	ASSERT_OK(fg_proto_reader_feed(&r, in + first, strlen(in) - first));
	ASSERT_OK(fg_proto_reader_next(&r, &it));
	ASSERT_EQ(it.kind, FG_PROTO_DATA);
	ASSERT_EQ(it.len, 2);
	strncat(got, it.bytes, it.len);
	ASSERT_STREQ(got, "a\nb\nc\n");
	ASSERT_OK(fg_proto_reader_next(&r, &it));
	ASSERT_EQ(it.kind, FG_PROTO_MESSAGE);
	ASSERT_STREQ(it.bytes, "{\"end\":1}");
	fg_proto_reader_done(&r);
}

TEST(reader_refuses_overlong_line)
{
	struct fg_proto_reader r;
	struct fg_proto_item it;
	char big[200];

	memset(big, 'x', sizeof(big));
	fg_proto_reader_init(&r, 100);
	ASSERT_OK(fg_proto_reader_feed(&r, big, sizeof(big)));
	ASSERT_ERR(fg_proto_reader_next(&r, &it), -EMSGSIZE);
	fg_proto_reader_done(&r);
}

TEST(parse_checks_json_and_version)
{
	struct json_object *o;

	ASSERT_ERR(fg_proto_parse("nonsense", 8, &o), -EBADMSG);
	ASSERT_ERR(fg_proto_parse("[1,2]", 5, &o), -EBADMSG);
	ASSERT_ERR(fg_proto_parse("{\"fgd\":1} trailing", 18, &o), -EBADMSG);
	ASSERT_ERR(fg_proto_parse("{\"fgd\":1", 8, &o), -EBADMSG);
	ASSERT_ERR(fg_proto_parse("{\"cmd\":\"status\"}", 16, &o), -EPROTO);
	ASSERT_ERR(fg_proto_parse("{\"fgd\":2}", 9, &o), -EPROTO);
	ASSERT_ERR(fg_proto_parse("{\"fgd\":\"1\"}", 11, &o), -EPROTO);
	ASSERT_OK(fg_proto_parse("{\"fgd\":1}", 9, &o));
	json_object_put(o);
}

TEST(record_request_round_trip)
{
	struct fg_request req = { .cmd = FG_CMD_RECORD }, back;
	struct json_object *obj;
	const char *err = NULL;
	char *line;

	fg_record_request_init(&req.record);
	req.record.pids[0] = 1234;
	req.record.pids[1] = 5678;
	req.record.n_pids = 2;
	req.record.duration_ms = 30000;
	req.record.frequency = 999;
	req.record.format = FG_FORMAT_SVG;
	req.record.with_pid = true;
	req.record.group_by = FG_GROUP_CGROUP_NAME;
	req.record.jit_suffix = false;
	strcpy(req.record.title, "a \"quoted\" <title>\n");
	obj = fg_proto_encode_request(&req);
	ASSERT_TRUE(obj);
	line = fg_proto_format(obj);
	json_object_put(obj);
	ASSERT_TRUE(line);
	ASSERT_TRUE(strchr(line, '\n') == line + strlen(line) - 1);
	line[strlen(line) - 1] = '\0';
	ASSERT_OK(decode_line(line, &back, &err));
	free(line);
	ASSERT_EQ(back.cmd, FG_CMD_RECORD);
	ASSERT_EQ(back.record.n_pids, 2);
	ASSERT_EQ(back.record.pids[1], 5678);
	ASSERT_EQ(back.record.duration_ms, 30000);
	ASSERT_EQ(back.record.frequency, 999);
	ASSERT_EQ(back.record.format, FG_FORMAT_SVG);
	ASSERT_TRUE(back.record.with_pid && !back.record.with_tid && back.record.kernel_suffix);
	ASSERT_TRUE(!back.record.jit_suffix);
	ASSERT_STREQ(back.record.title, req.record.title);
	/* Inline frames and demangling are on unless turned off. */
	ASSERT_TRUE(back.record.inline_frames && back.record.demangle);
	ASSERT_EQ(back.record.group_by, FG_GROUP_CGROUP_NAME);
}

/* Names come from processes: a message is UTF-8 whatever bytes they hold. */
TEST(messages_are_utf8)
{
	struct json_object *obj = fg_proto_new_message("top");
	char *line;

	ASSERT_TRUE(obj);
	fg_json_add_str(obj, "comm", "a\xff\xc3(\xc3\xa9\xef\xbf\xbd\xf0\x9f\x94\xa5\xe2\x82");
	line = fg_proto_format(obj);
	json_object_put(obj);
	ASSERT_TRUE(line);
	/* Each bad byte one U+FFFD; valid sequences, U+FFFD itself included, kept. */
	ASSERT_TRUE(strstr(line, "\"a\xef\xbf\xbd\xef\xbf\xbd(\xc3\xa9\xef\xbf\xbd\xf0\x9f\x94\xa5"
				 "\xef\xbf\xbd\xef\xbf\xbd\"") != NULL);
	for (size_t i = 0; line[i];) {
		uint32_t cp;
		size_t n = fg_utf8_next((const unsigned char *)line + i, strlen(line + i), &cp);

		/* Valid throughout: the only U+FFFD are whole three-byte ones. */
		ASSERT_TRUE(cp != 0xfffd || n == 3 || line[i] == '\n');
		i += n;
	}
	free(line);
}

TEST(inline_and_demangle_options)
{
	struct fg_request req = { .cmd = FG_CMD_RECORD }, back;
	const char *err = NULL;

	/* An older client sends neither: both default to on. */
	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"all\":true}", &back, &err));
	ASSERT_TRUE(back.record.inline_frames && back.record.demangle);
	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"inline\":false}", &back,
			      &err));
	ASSERT_TRUE(!back.record.inline_frames && back.record.demangle);

	fg_record_request_init(&req.record);
	req.record.all = true;
	req.record.demangle = false;
	round_trip(&req, &back);
	ASSERT_TRUE(back.record.inline_frames && !back.record.demangle);
}

TEST(group_by_defaults_to_process_and_is_named)
{
	struct fg_request back;
	const char *err = NULL;
	enum fg_group_by g;

	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"all\":true}", &back, &err));
	ASSERT_EQ(back.record.group_by, FG_GROUP_PROCESS);
	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"group_by\":\"cgroup\"}",
			      &back, &err));
	ASSERT_EQ(back.record.group_by, FG_GROUP_CGROUP);
	ASSERT_STREQ(fg_group_by_name(FG_GROUP_CGROUP_NAME), "cgroup-name");
	ASSERT_OK(fg_group_by_from_name("cgroup-name", &g));
	ASSERT_EQ(g, FG_GROUP_CGROUP_NAME);
	ASSERT_ERR(fg_group_by_from_name("container", &g), -EINVAL);
	ASSERT_TRUE(fg_group_by_name((enum fg_group_by)3) == NULL);
}

TEST(off_cpu_requests_round_trip)
{
	struct fg_request req = { .cmd = FG_CMD_RECORD }, back;
	const char *err = NULL;

	fg_record_request_init(&req.record);
	req.record.all = true;
	req.record.off_cpu = true;
	req.record.min_block_us = 250;
	round_trip(&req, &back);
	ASSERT_TRUE(back.record.off_cpu);
	ASSERT_EQ(back.record.min_block_us, 250);
	/* An on-CPU request says nothing of them: what older daemons know. */
	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"all\":true}", &back, &err));
	ASSERT_TRUE(!back.record.off_cpu);
	ASSERT_EQ(back.record.min_block_us, 0);
}

TEST(off_cpu_snapshots_round_trip)
{
	struct fg_request req = { .cmd = FG_CMD_SNAPSHOT, .query = { .uid = -1, .limit = 20 } },
			  back;
	const char *err = NULL;

	req.query.off_cpu = true;
	round_trip(&req, &back);
	ASSERT_EQ(back.cmd, FG_CMD_SNAPSHOT);
	ASSERT_TRUE(back.query.off_cpu);
	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"snapshot\"}", &back, &err));
	ASSERT_TRUE(!back.query.off_cpu);
	/* Top lists shares of CPU: it has no off-CPU form. */
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"top\",\"off_cpu\":true}", &back, &err),
		   -EINVAL);
	ASSERT_TRUE(err && strstr(err, "off_cpu"));
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"snapshot\",\"off_cpu\":1}", &back, &err),
		   -EINVAL);
}

TEST(snapshot_roots_and_export_formats_round_trip)
{
	struct fg_request req = { .cmd = FG_CMD_SNAPSHOT, .query = { .uid = -1, .limit = 20 } },
			  back;
	const char *err = NULL;

	req.query.group_by = FG_GROUP_CGROUP_NAME;
	req.query.with_pid = true;
	req.query.format = FG_FORMAT_PPROF;
	round_trip(&req, &back);
	ASSERT_EQ(back.query.group_by, FG_GROUP_CGROUP_NAME);
	ASSERT_TRUE(back.query.with_pid);
	ASSERT_EQ(back.query.format, FG_FORMAT_PPROF);
	req.query.format = FG_FORMAT_SPEEDSCOPE;
	round_trip(&req, &back);
	ASSERT_EQ(back.query.format, FG_FORMAT_SPEEDSCOPE);
	ASSERT_STREQ(fg_format_name(FG_FORMAT_PPROF), "pprof");
	/* Without them, the window's own form: what older daemons know. */
	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"snapshot\"}", &back, &err));
	ASSERT_EQ(back.query.group_by, FG_GROUP_PROCESS);
	ASSERT_TRUE(!back.query.with_pid);
	/* Top lists processes; a timed snapshot keeps the window's stacks. */
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"top\",\"group_by\":\"cgroup\"}", &back, &err),
		   -EINVAL);
	ASSERT_TRUE(err && strstr(err, "group_by"));
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"top\",\"with_pid\":true}", &back, &err),
		   -EINVAL);
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"snapshot\",\"format\":\"timed\","
			       "\"with_pid\":true}",
			       &back, &err),
		   -EINVAL);
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"snapshot\",\"with_pid\":1}", &back, &err),
		   -EINVAL);
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"snapshot\",\"group_by\":\"pod\"}", &back,
			       &err),
		   -EINVAL);
}

TEST(one_side_of_the_frames_round_trips)
{
	struct fg_request req = { .cmd = FG_CMD_RECORD }, back;
	const char *err = NULL;
	enum fg_frames_side side;

	fg_record_request_init(&req.record);
	req.record.all = true;
	req.record.frames = FG_FRAMES_KERNEL;
	round_trip(&req, &back);
	ASSERT_EQ(back.record.frames, FG_FRAMES_KERNEL);
	req = (struct fg_request){ .cmd = FG_CMD_SNAPSHOT, .query = { .uid = -1, .limit = 20 } };
	req.query.frames = FG_FRAMES_USER;
	round_trip(&req, &back);
	ASSERT_EQ(back.query.frames, FG_FRAMES_USER);
	ASSERT_OK(fg_frames_side_from_name("kernel", &side));
	ASSERT_EQ(side, FG_FRAMES_KERNEL);
	ASSERT_STREQ(fg_frames_side_name(FG_FRAMES_ALL), "all");
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"frames\":\"both\"}",
			       &back, &err),
		   -EINVAL);
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"format\":\"timed\","
			       "\"frames\":\"user\"}",
			       &back, &err),
		   -EINVAL);
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"top\",\"frames\":\"user\"}", &back, &err),
		   -EINVAL);

	/* A command's recording: its pid and its children. */
	req = (struct fg_request){ .cmd = FG_CMD_RECORD };
	fg_record_request_init(&req.record);
	req.record.pids[0] = 42;
	req.record.n_pids = 1;
	req.record.children = true;
	round_trip(&req, &back);
	ASSERT_TRUE(back.record.children && back.record.pids[0] == 42);
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"children\":true}",
			       &back, &err),
		   -EINVAL);
}

TEST(jit_suffix_defaults_on)
{
	struct fg_request req;
	const char *err = NULL;

	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"pids\":[1]}", &req, &err));
	ASSERT_TRUE(req.record.jit_suffix && req.record.kernel_suffix);
	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"pids\":[1],\"jit_suffix\":false}",
			      &req, &err));
	ASSERT_TRUE(!req.record.jit_suffix && req.record.kernel_suffix);
	ASSERT_ERR(decode_line("{\"fgd\":1,\"cmd\":\"record\",\"pids\":[1],\"jit_suffix\":1}", &req,
			       &err),
		   -EINVAL);
	ASSERT_TRUE(err && strstr(err, "jit_suffix"));
}

TEST(invalid_requests_say_why)
{
	static const char *const bad[] = {
		"{\"fgd\":1}",
		"{\"fgd\":1,\"cmd\":42}",
		"{\"fgd\":1,\"cmd\":\"reboot\"}",
		"{\"fgd\":1,\"cmd\":\"record\"}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"pids\":[1]}",
		"{\"fgd\":1,\"cmd\":\"record\",\"pids\":[]}",
		"{\"fgd\":1,\"cmd\":\"record\",\"pids\":[0]}",
		"{\"fgd\":1,\"cmd\":\"record\",\"pids\":[-5]}",
		"{\"fgd\":1,\"cmd\":\"record\",\"pids\":[\"12\"]}",
		"{\"fgd\":1,\"cmd\":\"record\",\"pids\":12}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":1}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"frequency\":0}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"frequency\":100001}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"frequency\":99.5}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"duration_ms\":-1}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"duration_ms\":99999999999999999999}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"format\":\"png\"}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"title\":7}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"title\":\"a\\u0000b\"}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"with_tid\":\"yes\"}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"inline\":0}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"demangle\":\"no\"}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"group_by\":\"pod\"}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"group_by\":true}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"off_cpu\":1}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"min_block_us\":5}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"off_cpu\":true,\"min_block_us\":0}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"off_cpu\":true,\"frequency\":99}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"off_cpu\":true,\"wall\":true}",
		"{\"fgd\":1,\"cmd\":\"record\",\"all\":true,\"wall\":\"yes\"}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fg_request req;
		const char *err = NULL;

		if (decode_line(bad[i], &req, &err) != -EINVAL || !err)
			fg_test_fail(__FILE__, __LINE__, "accepted or no reason: %s", bad[i]);
	}
}

TEST(too_many_pids)
{
	char line[4096] = "{\"fgd\":1,\"cmd\":\"record\",\"pids\":[1";
	struct fg_request req;
	const char *err = NULL;

	for (int i = 0; i < FG_PROTO_MAX_PIDS; i++)
		strcat(line, ",2");
	strcat(line, "]}");
	ASSERT_ERR(decode_line(line, &req, &err), -EINVAL);
	ASSERT_TRUE(strstr(err, "too many"));
}

TEST(status_and_stop_and_errno_names)
{
	struct fg_request req;

	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"status\",\"future\":true}", &req, NULL));
	ASSERT_EQ(req.cmd, FG_CMD_STATUS);
	ASSERT_OK(decode_line("{\"fgd\":1,\"cmd\":\"stop\"}", &req, NULL));
	ASSERT_EQ(req.cmd, FG_CMD_STOP);
	ASSERT_STREQ(fg_errno_name(ESRCH), "ESRCH");
	ASSERT_EQ(fg_errno_from_name("EACCES"), EACCES);
	ASSERT_EQ(fg_errno_from_name("EWHATEVER"), 0);
	ASSERT_TRUE(fg_errno_name(4095) == NULL);
}
