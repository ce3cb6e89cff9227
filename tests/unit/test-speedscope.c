/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * speedscope files: every output is parsed back with json-c and held to
 * the file format's schema (the fields speedscope's importer reads, frame
 * indices in range, weights matching the end value), then each profile's
 * samples are written back as folded text and compared with what the model
 * held. The integration test (test_speedscope.py) has speedscope itself
 * open a real recording.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/outbuf.h"
#include "profile/folded.h"
#include "profile/speedscope.h"
#include "render/result.h"
#include "test.h"

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

static struct json_object *member(struct json_object *o, const char *key, enum json_type type)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fg_test_fail(__FILE__, __LINE__, "no \"%s\"", key);
	if (!json_object_is_type(v, type))
		fg_test_fail(__FILE__, __LINE__, "\"%s\" is a %s", key,
			     json_type_to_name(json_object_get_type(v)));
	return v;
}

static const char *member_str(struct json_object *o, const char *key)
{
	return json_object_get_string(member(o, key, json_type_string));
}

static double number(struct json_object *v)
{
	ASSERT_TRUE(json_object_is_type(v, json_type_int) ||
		    json_object_is_type(v, json_type_double));
	return json_object_get_double(v);
}

/* What speedscope's importer relies on, and what the file format's schema requires. */
static void check_file(struct json_object *file)
{
	struct json_object *frames =
		member(member(file, "shared", json_type_object), "frames", json_type_array);
	struct json_object *profiles = member(file, "profiles", json_type_array);
	size_t n_frames = json_object_array_length(frames);
	bool *used = calloc(n_frames + 1, sizeof(*used));

	ASSERT_TRUE(used);
	ASSERT_STREQ(member_str(file, "$schema"), SCHEMA);
	ASSERT_STREQ(member_str(file, "exporter"), "fgd");
	member(file, "name", json_type_string);
	ASSERT_EQ(json_object_get_int(member(file, "activeProfileIndex", json_type_int)), 0);
	ASSERT_TRUE(json_object_array_length(profiles) >= 1);
	for (size_t i = 0; i < n_frames; i++) {
		struct json_object *fr = json_object_array_get_idx(frames, i);

		ASSERT_TRUE(json_object_is_type(fr, json_type_object));
		member(fr, "name", json_type_string);
		/* One frame per distinct name. */
		for (size_t j = 0; j < i; j++)
			ASSERT_TRUE(strcmp(member_str(fr, "name"),
					   member_str(json_object_array_get_idx(frames, j),
						      "name")) != 0);
	}
	for (size_t p = 0; p < json_object_array_length(profiles); p++) {
		struct json_object *pr = json_object_array_get_idx(profiles, p);
		struct json_object *samples = member(pr, "samples", json_type_array);
		struct json_object *weights = member(pr, "weights", json_type_array);
		double total = 0;

		ASSERT_STREQ(member_str(pr, "type"), "sampled");
		member(pr, "name", json_type_string);
		ASSERT_TRUE(strcmp(member_str(pr, "unit"), "none") == 0 ||
			    strcmp(member_str(pr, "unit"), "microseconds") == 0);
		ASSERT_TRUE(number(member(pr, "startValue", json_type_int)) == 0);
		ASSERT_EQ(json_object_array_length(samples), json_object_array_length(weights));
		for (size_t s = 0; s < json_object_array_length(samples); s++) {
			struct json_object *st = json_object_array_get_idx(samples, s);

			ASSERT_TRUE(json_object_is_type(st, json_type_array));
			ASSERT_TRUE(json_object_array_length(st) >= 1);
			for (size_t k = 0; k < json_object_array_length(st); k++) {
				struct json_object *ix = json_object_array_get_idx(st, k);

				ASSERT_TRUE(json_object_is_type(ix, json_type_int));
				ASSERT_TRUE(json_object_get_int64(ix) >= 0 &&
					    (size_t)json_object_get_int64(ix) < n_frames);
				used[json_object_get_int64(ix)] = true;
			}
			ASSERT_TRUE(number(json_object_array_get_idx(weights, s)) > 0);
			total += number(json_object_array_get_idx(weights, s));
		}
		/* speedscope takes the profile's width from its end and start. */
		ASSERT_TRUE(fabs(number(json_object_object_get(pr, "endValue")) - total) <=
			    1e-6 * total);
	}
	/* Every frame in the table is used: the root frames that name profiles are not in it. */
	for (size_t i = 0; i < n_frames; i++)
		ASSERT_TRUE(used[i]);
	free(used);
}

/* text[0..len), the whole of it one JSON object, parsed and checked; frees text. */
static struct json_object *parse(char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *file;

	ASSERT_TRUE(tok);
	ASSERT_EQ(strlen(text), len);
	ASSERT_TRUE(len > 0 && text[len - 1] == '\n');
	file = json_tokener_parse_ex(tok, text, (int)len);
	ASSERT_TRUE(file && json_tokener_get_error(tok) == json_tokener_success);
	/* All of it, the final newline the whitespace json-c reads past. */
	ASSERT_EQ(json_tokener_get_parse_end(tok), len);
	json_tokener_free(tok);
	free(text);
	check_file(file);
	return file;
}

static struct json_object *convert(struct fg_folded *f, const struct fg_speedscope_meta *meta)
{
	char *text;
	size_t len;

	ASSERT_OK(fg_folded__sort(f));
	ASSERT_OK(fg_speedscope_from_model(f, meta, &text, &len));
	return parse(text, len);
}

static void add(struct fg_folded *f, const char *stack, double count)
{
	const uint32_t *ids;
	size_t n;

	ASSERT_OK(fg_folded__intern_stack(f, stack, strlen(stack), &ids, &n));
	ASSERT_OK(fg_folded__add(f, ids, n, count));
}

static struct json_object *profile(struct json_object *file, size_t i)
{
	struct json_object *profiles = member(file, "profiles", json_type_array);

	ASSERT_TRUE(i < json_object_array_length(profiles));
	return json_object_array_get_idx(profiles, i);
}

/*
 * Profile i's samples as folded text, in the file's order, its frames named
 * from the shared table: "a;b 3\n...". Caller frees.
 */
static char *folded(struct json_object *file, size_t i)
{
	struct json_object *frames =
		member(member(file, "shared", json_type_object), "frames", json_type_array);
	struct json_object *pr = profile(file, i);
	struct json_object *samples = member(pr, "samples", json_type_array);
	struct json_object *weights = member(pr, "weights", json_type_array);
	struct fg_outbuf b = {};

	for (size_t s = 0; s < json_object_array_length(samples); s++) {
		struct json_object *st = json_object_array_get_idx(samples, s);

		for (size_t k = 0; k < json_object_array_length(st); k++) {
			int ix = json_object_get_int(json_object_array_get_idx(st, k));

			if (k)
				fg_outbuf_puts(&b, ";");
			fg_outbuf_puts(&b, member_str(json_object_array_get_idx(frames, (size_t)ix),
						      "name"));
		}
		fg_outbuf_printf(&b, " %g\n", number(json_object_array_get_idx(weights, s)));
	}
	fg_outbuf_put(&b, "", 1);
	ASSERT_OK(b.err);
	return b.data;
}

static void assert_profile(struct json_object *file, size_t i, const char *name, const char *unit,
			   double end, const char *stacks)
{
	struct json_object *pr = profile(file, i);
	char *text = folded(file, i);

	ASSERT_STREQ(member_str(pr, "name"), name);
	ASSERT_STREQ(member_str(pr, "unit"), unit);
	ASSERT_TRUE(number(json_object_object_get(pr, "endValue")) == end);
	ASSERT_STREQ(text, stacks);
	free(text);
}

TEST(a_profile_per_process_heaviest_first)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_speedscope_meta meta = { .unit = FG_SPEEDSCOPE_SAMPLES,
					   .roots = FG_SPEEDSCOPE_ROOTS_PROCESS,
					   .pid = true,
					   .name = "host: all CPUs" };
	struct json_object *file;

	ASSERT_TRUE(f);
	add(f, "my-app-12;main;work;do_syscall_64_[k]", 3);
	add(f, "my-app-12;main;idle", 2);
	add(f, "db-7;main;query", 9);
	/* Not in the comm-pid form: all of it is the name. */
	add(f, "odd-name;main", 1);
	/* A stack of its root frame alone: its own profile, the frame kept. */
	add(f, "[other processes]", 6);
	file = convert(f, &meta);

	ASSERT_STREQ(member_str(file, "name"), "host: all CPUs");
	ASSERT_EQ(json_object_array_length(member(file, "profiles", json_type_array)), 4);
	assert_profile(file, 0, "db (pid 7)", "none", 9, "main;query 9\n");
	assert_profile(file, 1, "[other processes]", "none", 6, "[other processes] 6\n");
	/* The model's sorted order: the flame graph's, idle before work. */
	assert_profile(file, 2, "my-app (pid 12)", "none", 5,
		       "main;idle 2\nmain;work;do_syscall_64_[k] 3\n");
	assert_profile(file, 3, "odd-name", "none", 1, "main 1\n");
	/* main once for all profiles, the process frames not at all. */
	ASSERT_EQ(json_object_array_length(member(member(file, "shared", json_type_object),
						  "frames", json_type_array)),
		  6);
	json_object_put(file);
	fg_folded__free(f);
}

TEST(cgroups_threads_and_microseconds)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_speedscope_meta meta = { .unit = FG_SPEEDSCOPE_MICROSECONDS,
					   .roots = FG_SPEEDSCOPE_ROOTS_CGROUP_PROCESS,
					   .pid = true,
					   .tid = true };
	struct json_object *file;

	ASSERT_TRUE(f);
	add(f, "/system.slice/x.service;x-7/9;main;poll", 1500.5);
	add(f, "/system.slice/x.service;x-7/10;main;read", 20);
	add(f, "/;swapper-0/0;cpu_idle_[k]", 700);
	/* A cgroup frame and one more: the cgroup names the profile, the rest stays. */
	add(f, "/user.slice;[unknown]", 3);
	add(f, "[other processes]", 1);
	file = convert(f, &meta);

	ASSERT_STREQ(member_str(file, "name"), "fgd");
	assert_profile(file, 0, "x (pid 7, tid 9) in /system.slice/x.service", "microseconds",
		       1500.5, "main;poll 1500.5\n");
	assert_profile(file, 1, "swapper (pid 0, tid 0) in /", "microseconds", 700,
		       "cpu_idle_[k] 700\n");
	assert_profile(file, 2, "x (pid 7, tid 10) in /system.slice/x.service", "microseconds", 20,
		       "main;read 20\n");
	assert_profile(file, 3, "/user.slice", "microseconds", 3, "[unknown] 3\n");
	assert_profile(file, 4, "[other processes]", "microseconds", 1, "[other processes] 1\n");
	json_object_put(file);
	fg_folded__free(f);
}

TEST(odd_names_are_escaped)
{
	/* Names as framename.h leaves them: anything but control characters and ';'. */
	static const char *const names[] = {
		"say \"hi\"", "C:\\path\\x",     "ünïcödé→λ",      "<script>&amp</script>",
		"emoji 🔥",    "\u2028sep\u2029", "{\"json\":[1]}",
	};
	struct fg_folded *f = fg_folded__new();
	struct fg_speedscope_meta meta = { .unit = FG_SPEEDSCOPE_SAMPLES,
					   .roots = FG_SPEEDSCOPE_ROOTS_PROCESS,
					   .pid = true,
					   .name = "\"quoted\" \\ näme" };
	struct json_object *file, *frames;
	char stack[256], want[512] = "";

	ASSERT_TRUE(f);
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		snprintf(stack, sizeof(stack), "we\"ird\\äpp-5;main;%s", names[i]);
		add(f, stack, (double)(i + 1));
	}
	file = convert(f, &meta);
	ASSERT_STREQ(member_str(file, "name"), "\"quoted\" \\ näme");
	ASSERT_STREQ(member_str(profile(file, 0), "name"), "we\"ird\\äpp (pid 5)");
	frames = member(member(file, "shared", json_type_object), "frames", json_type_array);
	ASSERT_EQ(json_object_array_length(frames), ELEMENTSOF(names) + 1);
	/* Back byte for byte, in the model's sorted order. */
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		bool found = false;

		for (size_t k = 0; k < json_object_array_length(frames); k++)
			found |= strcmp(member_str(json_object_array_get_idx(frames, k), "name"),
					names[i]) == 0;
		ASSERT_TRUE(found);
	}
	{
		/* The folded text of the model, without its process frame, is the profile's. */
		const char *sorted[ELEMENTSOF(names)];
		size_t n = 0;
		char *got = folded(file, 0);
		struct fg_stack st;

		for (size_t i = 0; i < fg_folded__n_stacks(f); i++) {
			fg_folded__stack(f, i, &st);
			sorted[n++] = fg_folded__name(f, st.frames[2]);
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "main;%s %g\n",
				 sorted[n - 1], st.count);
		}
		ASSERT_STREQ(got, want);
		free(got);
	}
	json_object_put(file);
	fg_folded__free(f);
}

TEST(without_roots_every_frame_is_a_frame)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_speedscope_meta meta = { .unit = FG_SPEEDSCOPE_SAMPLES, .name = "in.folded" };
	struct json_object *file;

	ASSERT_TRUE(f);
	add(f, "prog-1;main;b", 2);
	add(f, "prog-1;main;a", 0.25);
	add(f, "java;Interp;Hot.m()_[j]", 5);
	file = convert(f, &meta);
	ASSERT_EQ(json_object_array_length(member(file, "profiles", json_type_array)), 1);
	/* Fractional counts as they are. */
	assert_profile(file, 0, "in.folded", "none", 7.25,
		       "java;Interp;Hot.m()_[j] 5\nprog-1;main;a 0.25\nprog-1;main;b 2\n");
	json_object_put(file);
	fg_folded__free(f);
}

TEST(a_sequence_keeps_its_order)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_speedscope_meta meta = { .unit = FG_SPEEDSCOPE_SAMPLES };
	struct json_object *file;

	ASSERT_TRUE(f);
	/* A flame chart's model: speedscope's Time Order view shows the same. */
	fg_folded__set_sequence(f);
	add(f, "main;z", 1);
	add(f, "main;a", 2);
	add(f, "main;z", 3);
	file = convert(f, &meta);
	assert_profile(file, 0, "fgd", "none", 6, "main;z 1\nmain;a 2\nmain;z 3\n");
	json_object_put(file);
	fg_folded__free(f);
}

TEST(same_model_same_bytes_ties_by_name)
{
	struct fg_speedscope_meta meta = { .unit = FG_SPEEDSCOPE_SAMPLES,
					   .roots = FG_SPEEDSCOPE_ROOTS_PROCESS };
	char *text[2];
	size_t len[2];
	struct json_object *file;

	for (int i = 0; i < 2; i++) {
		struct fg_folded *f = fg_folded__new();

		ASSERT_TRUE(f);
		/* Added in the other order the second time: the file is the same. */
		add(f, i ? "alpha;x" : "beta;y", 4);
		add(f, i ? "beta;y" : "alpha;x", 4);
		ASSERT_OK(fg_folded__sort(f));
		ASSERT_OK(fg_speedscope_from_model(f, &meta, &text[i], &len[i]));
		fg_folded__free(f);
	}
	ASSERT_EQ(len[0], len[1]);
	ASSERT_TRUE(memcmp(text[0], text[1], len[0]) == 0);
	free(text[1]);
	file = parse(text[0], len[0]);
	assert_profile(file, 0, "alpha", "none", 4, "x 4\n");
	assert_profile(file, 1, "beta", "none", 4, "y 4\n");
	json_object_put(file);
}

TEST(an_empty_model_is_one_empty_profile)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_speedscope_meta meta = { .unit = FG_SPEEDSCOPE_MICROSECONDS,
					   .roots = FG_SPEEDSCOPE_ROOTS_PROCESS,
					   .name = "nothing" };
	struct json_object *file;

	ASSERT_TRUE(f);
	file = convert(f, &meta);
	assert_profile(file, 0, "nothing", "microseconds", 0, "");
	json_object_put(file);
	fg_folded__free(f);
}

TEST(differential_is_refused)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_speedscope_meta meta = { .unit = FG_SPEEDSCOPE_SAMPLES };
	char *text = NULL;
	size_t len = 7;

	ASSERT_TRUE(f);
	ASSERT_OK(fg_folded__add_line(f, "a;b 1 2", 7));
	ASSERT_OK(fg_folded__sort(f));
	ASSERT_ERR(fg_speedscope_from_model(f, &meta, &text, &len), -EINVAL);
	/* Output parameters are untouched on failure. */
	ASSERT_TRUE(!text);
	ASSERT_EQ(len, 7);
	fg_folded__free(f);
}

/* ---- through common/render/result, as fgd sends it ---- */

struct sink {
	char *data;
	size_t len, chunks;
};

static int collect(void *ctx, const void *buf, size_t len)
{
	struct sink *s = ctx;
	char *p = realloc(s->data, s->len + len + 1);

	if (!p)
		return -ENOMEM;
	memcpy(p + s->len, buf, len);
	s->len += len;
	s->chunks++;
	p[s->len] = '\0';
	s->data = p;
	return 0;
}

#define N_COLD 300

static struct fg_folded *recording(void)
{
	struct fg_folded *f = fg_folded__new();
	char stack[64];

	ASSERT_TRUE(f);
	/* Unsorted, as a recording's model is: the result sorts it. */
	add(f, "burn-42;main;hot_a", 7500);
	add(f, "burn-42;main;read;entry_SYSCALL_64_[k];ksys_read_[k]", 10);
	add(f, "burn-42;main;hot_b", 2500);
	/* Enough frames for a file of several chunks. */
	for (int i = N_COLD - 1; i >= 0; i--) {
		snprintf(stack, sizeof(stack), "burn-42;main;cold_%03d", i);
		add(f, stack, 1);
	}
	return f;
}

TEST(a_result_streams_the_file_with_the_view_applied)
{
	struct fg_speedscope_meta meta = { .unit = FG_SPEEDSCOPE_SAMPLES,
					   .roots = FG_SPEEDSCOPE_ROOTS_PROCESS,
					   .pid = true,
					   .name = "rec" };
	struct fg_result_opts o = { .format = FG_FORMAT_SPEEDSCOPE, .speedscope = &meta };
	struct fg_result *r = NULL;
	struct sink s = {};
	struct fg_outbuf want = {};
	struct json_object *file;
	int e;

	/* A user the kernel would not show kernel symbols: one "[kernel]" frame instead. */
	fg_view_init(&o.view, 1000, 2);
	ASSERT_OK(fg_result__new(recording(), &o, &r));
	ASSERT_EQ(fg_result__n_stacks(r), N_COLD + 3);
	/* Small budgets: the file comes in many pieces, as fgd streams it. */
	while ((e = fg_result__emit(r, collect, &s, 1)) == 0)
		;
	ASSERT_EQ(e, 1);
	ASSERT_TRUE(s.chunks > 1);
	fg_result__free(r);
	file = parse(s.data, s.len);
	for (int i = 0; i < N_COLD; i++)
		fg_outbuf_printf(&want, "main;cold_%03d 1\n", i);
	fg_outbuf_puts(&want, "main;hot_a 7500\nmain;hot_b 2500\nmain;read;[kernel] 10\n");
	fg_outbuf_put(&want, "", 1);
	ASSERT_OK(want.err);
	assert_profile(file, 0, "burn (pid 42)", "none", 10010 + N_COLD, want.data);
	fg_outbuf_done(&want);
	json_object_put(file);

	/* Without what it needs to know of the counts, no file: the model is freed. */
	o.speedscope = NULL;
	ASSERT_ERR(fg_result__new(recording(), &o, &r), -EINVAL);
}
