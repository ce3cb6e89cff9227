/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/json.h"
#include "base/macro.h"
#include "profile/folded.h"
#include "render-test.h"
#include "render/flame-html.h"
#include "test.h"

#define DATA_OPEN "<script type=\"application/json\" id=\"fg-data\">"

static int emit_one(void *renderer, fg_write_fn fn, void *ctx, size_t budget)
{
	return fg_flame_html__emit(renderer, fn, ctx, budget);
}

/* Renders to m with the given budget; returns the number of emit calls. */
static size_t render_budget(const struct fg_folded *f, const struct fg_flame_opts *o, size_t budget,
			    struct membuf *m)
{
	_cleanup_(fg_flame_html__freep) struct fg_flame_html *h = NULL;

	ASSERT_OK(fg_flame_html__new(f, o, &h));
	return emit_all(emit_one, h, budget, m);
}

static void render(const struct fg_folded *f, const struct fg_flame_opts *o, struct membuf *m)
{
	render_budget(f, o, SIZE_MAX, m);
}

static size_t count_str_nocase(const char *hay, const char *needle)
{
	size_t n = 0, l = strlen(needle);

	for (const char *p = strcasestr(hay, needle); p; p = strcasestr(p + l, needle))
		n++;
	return n;
}

#define ASSERT_LACKS(hay, needle)                                                        \
	do {                                                                             \
		if (strstr((hay), (needle)))                                             \
			fg_test_fail(__FILE__, __LINE__, "output has \"%s\"", (needle)); \
	} while (0)

#define ASSERT_NEAR(a, b)                                                                        \
	do {                                                                                     \
		double _x = (a), _y = (b);                                                       \
		if (!(fabs(_x - _y) <= 1e-9 * MAX(1.0, fabs(_y))))                               \
			fg_test_fail(__FILE__, __LINE__, "%s == %s: %.17g != %.17g", #a, #b, _x, \
				     _y);                                                        \
	} while (0)

/*
 * The page's data: the text of the fg-data element, parsed. The element
 * must end at the first "</script" after it, which the escaping guarantees.
 */
static struct json_object *page_data(const char *page)
{
	const char *p = strstr(page, DATA_OPEN), *e;
	struct json_object *j;
	char *text;

	ASSERT_TRUE(p);
	p += strlen(DATA_OPEN);
	e = strcasestr(p, "</script");
	ASSERT_TRUE(e);
	text = strndup(p, (size_t)(e - p));
	ASSERT_TRUE(text);
	j = json_tokener_parse(text);
	free(text);
	if (!j)
		fg_test_fail(__FILE__, __LINE__, "the page's data is not JSON");
	return j;
}

static struct json_object *get(struct json_object *j, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(j, key, &v))
		fg_test_fail(__FILE__, __LINE__, "the data lacks \"%s\"", key);
	return v;
}

static bool has(struct json_object *j, const char *key)
{
	return json_object_object_get_ex(j, key, NULL);
}

static size_t arr_len(struct json_object *j, const char *key)
{
	struct json_object *a = get(j, key);

	ASSERT_TRUE(json_object_is_type(a, json_type_array));
	return json_object_array_length(a);
}

static double num_at(struct json_object *j, const char *key, size_t i)
{
	return json_object_get_double(json_object_array_get_idx(get(j, key), i));
}

static const char *name_at(struct json_object *j, size_t i)
{
	return json_object_get_string(json_object_array_get_idx(get(j, "names"), i));
}

/* The decoded frame i: its name, depth, start (from the gaps) and value. */
struct frame {
	const char *name;
	int depth;
	double start, value, other;
	size_t parent;
};

/* Decodes the frames as the page's script does. Caller frees. */
static struct frame *page_frames(struct json_object *j, size_t *ret_n)
{
	size_t n = arr_len(j, "name"), open[256], n_open = 0;
	double next[258] = {};
	struct frame *fr = calloc(MAX(n, (size_t)1), sizeof(*fr));

	ASSERT_TRUE(fr);
	ASSERT_EQ(arr_len(j, "depth"), n);
	ASSERT_EQ(arr_len(j, "gap"), n);
	ASSERT_EQ(arr_len(j, "value"), n);
	ASSERT_EQ(arr_len(j, "color"), n);
	for (size_t i = 0; i < n; i++) {
		int d = (int)num_at(j, "depth", i);

		ASSERT_TRUE(d >= 0 && d < 256);
		fr[i].name = name_at(j, (size_t)num_at(j, "name", i));
		ASSERT_TRUE(fr[i].name);
		fr[i].depth = d;
		fr[i].value = num_at(j, "value", i);
		fr[i].other = has(j, "other") ? num_at(j, "other", i) : fr[i].value;
		fr[i].start = next[d] + num_at(j, "gap", i);
		next[d] = fr[i].start + fr[i].value;
		next[d + 1] = fr[i].start;
		/* Pre-order: a frame is one deeper than the frame it follows, or closes some. */
		ASSERT_TRUE(i == 0 ? d == 0 : d >= 1 && (size_t)d <= n_open);
		n_open = (size_t)d;
		fr[i].parent = d > 0 ? open[d - 1] : SIZE_MAX;
		open[n_open++] = i;
		ASSERT_TRUE((size_t)num_at(j, "color", i) < arr_len(j, "colors"));
	}
	*ret_n = n;
	return fr;
}

/* The data of a page and the frame named path (";"-joined from the root's child), or NULL. */
static const struct frame *find_frame(const struct frame *fr, size_t n, const char *path)
{
	for (size_t i = 1; i < n; i++) {
		char buf[1024] = "";
		size_t chain[256], k = 0;

		for (size_t p = i; p != 0 && p != SIZE_MAX; p = fr[p].parent)
			chain[k++] = p;
		while (k > 0) {
			strcat(buf, fr[chain[--k]].name);
			if (k > 0)
				strcat(buf, ";");
		}
		if (strcmp(buf, path) == 0)
			return &fr[i];
	}
	return NULL;
}

/* The table row of function name: self and total; false if absent. */
static bool table_row(struct json_object *j, const char *name, double *self, double *total)
{
	size_t n = arr_len(j, "fn");

	ASSERT_EQ(arr_len(j, "fself"), n);
	ASSERT_EQ(arr_len(j, "ftotal"), n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(name_at(j, (size_t)num_at(j, "fn", i)), name) != 0)
			continue;
		*self = num_at(j, "fself", i);
		*total = num_at(j, "ftotal", i);
		return true;
	}
	return false;
}

static const char *const basic[] = {
	"main;init;parse_config 12",
	"main;init;load_plugins;dlopen 8",
	"main;run;process;compute;hot_a 120",
	"main;run;process;compute;hot_b 60",
	"main;run;process;compute 9",
	"main;run;process;io;read;sys_read_[k] 20",
	"main;run;idle 25",
	"main;shutdown 6",
	"main;shutdown;hot_c 4",
	/* Recursion: "rec" is in the stack twice, its samples count once in its total. */
	"main;rec;rec;leaf 7",
	"main;rec 3",
	NULL,
};

TEST(page_structure)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic, true);
	_cleanup_(membuf_done) struct membuf m = {};
	_cleanup_(json_object_putp) struct json_object *j = NULL;
	struct fg_flame_opts o;
	const char *info[] = { "event: cpu-clock", NULL };

	fg_flame_opts_init(&o);
	o.subtitle = "pid 42";
	o.info = info;
	render(f, &o, &m);
	ASSERT_TRUE(strncmp(m.data, "<!DOCTYPE html>\n", 16) == 0);
	ASSERT_TRUE(valid_utf8_xml(m.data, m.len));
	ASSERT_TRUE(strlen(m.data) == m.len);
	static const char *const ids[] = {
		"<h1 id=\"title\">Flame Graph</h1>",
		"<p id=\"subtitle\">pid 42</p>",
		"<p class=\"info\">event: cpu-clock</p>",
		"id=\"unzoom\"",
		"id=\"search\"",
		"id=\"ignorecase\"",
		"<canvas id=\"flame\">",
		"id=\"details\"",
		"id=\"matched\"",
		"id=\"filter\"",
		"<table id=\"table\">",
		"id=\"tablenote\"",
		"Content-Security-Policy",
	};
	for (size_t i = 0; i < ELEMENTSOF(ids); i++)
		ASSERT_CONTAINS(m.data, ids[i]);
	ASSERT_LACKS(m.data, "id=\"nosamples\"");
	/* Self-contained: nothing that loads from elsewhere. */
	ASSERT_LACKS(m.data, "src=");
	ASSERT_LACKS(m.data, "href=");
	ASSERT_LACKS(m.data, "http://");
	ASSERT_LACKS(m.data, "https://");
	ASSERT_LACKS(m.data, "@import");
	ASSERT_EQ(count_str_nocase(m.data, "<script"), 2);
	ASSERT_EQ(count_str_nocase(m.data, "</script"), 2);
	ASSERT_TRUE(strstr(m.data, "</html>\n") == m.data + m.len - 8);

	j = page_data(m.data);
	ASSERT_STREQ(json_object_get_string(get(get(j, "meta"), "countName")), "samples");
	ASSERT_EQ(json_object_get_int(get(get(j, "meta"), "width")), 1200);
	ASSERT_TRUE(!json_object_get_boolean(get(get(j, "meta"), "diff")));
	ASSERT_TRUE(!has(j, "other") && !has(j, "fselfOther") && !has(j, "ftotalOther"));
	/* Each display name once. */
	for (size_t a = 0; a < arr_len(j, "names"); a++)
		for (size_t b = a + 1; b < arr_len(j, "names"); b++)
			ASSERT_TRUE(strcmp(name_at(j, a), name_at(j, b)) != 0);
	ASSERT_STREQ(name_at(j, 0), "all");
}

/* Every frame and every table row, checked against sums over the folded lines. */
TEST(totals_match_the_model)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic, true);
	_cleanup_(membuf_done) struct membuf m = {};
	_cleanup_(json_object_putp) struct json_object *j = NULL;
	_cleanup_free_ struct frame *fr = NULL;
	size_t n;

	render(f, NULL, &m);
	j = page_data(m.data);
	fr = page_frames(j, &n);
	ASSERT_EQ(n, 20);
	ASSERT_STREQ(fr[0].name, "all");
	ASSERT_NEAR(fr[0].value, 274);
	ASSERT_NEAR(json_object_get_double(get(get(j, "meta"), "total")), 274);

	/* Each frame holds the samples of the lines through its path, and lies within its parent. */
	for (size_t i = 1; i < n; i++) {
		char path[1024] = "";
		size_t chain[64], k = 0;
		double want = 0;

		for (size_t p = i; p != 0; p = fr[p].parent)
			chain[k++] = p;
		while (k > 0) {
			strcat(path, fr[chain[--k]].name);
			if (k > 0)
				strcat(path, ";");
		}
		for (const char *const *l = basic; *l; l++) {
			const char *sp = strrchr(*l, ' ');
			char stack[1024];
			size_t pl = strlen(path);

			/* Annotations are not shown: compare with them stripped. */
			snprintf(stack, sizeof(stack), "%.*s", (int)(sp - *l), *l);
			for (char *a; (a = strstr(stack, "_[k]"));)
				memmove(a, a + 4, strlen(a + 4) + 1);
			if (strncmp(stack, path, pl) == 0 &&
			    (stack[pl] == '\0' || stack[pl] == ';'))
				want += atof(sp + 1);
		}
		if (!(fabs(fr[i].value - want) < 1e-9))
			fg_test_fail(__FILE__, __LINE__, "frame %s holds %g samples, the model %g",
				     path, fr[i].value, want);
		ASSERT_TRUE(fr[i].start >= fr[fr[i].parent].start);
		ASSERT_TRUE(fr[i].start + fr[i].value <=
			    fr[fr[i].parent].start + fr[fr[i].parent].value);
	}
	/* The parent's own samples come first in sorted order: compute starts at 9. */
	ASSERT_NEAR(find_frame(fr, n, "main;run;process;compute;hot_a")->start -
			    find_frame(fr, n, "main;run;process;compute")->start,
		    9);

	static const struct {
		const char *name;
		double self, total;
	} want[] = {
		{ "main", 0, 274 },    { "hot_a", 120, 120 },  { "compute", 9, 189 },
		{ "process", 0, 209 }, { "sys_read", 20, 20 }, { "shutdown", 6, 10 },
		{ "rec", 3, 10 },      { "leaf", 7, 7 },       { "idle", 25, 25 },
	};
	for (size_t i = 0; i < ELEMENTSOF(want); i++) {
		double self, total;

		if (!table_row(j, want[i].name, &self, &total))
			fg_test_fail(__FILE__, __LINE__, "no table row for %s", want[i].name);
		ASSERT_NEAR(self, want[i].self);
		ASSERT_NEAR(total, want[i].total);
	}
	/* Every function, the root not among them; ordered by total, then self. */
	ASSERT_EQ(arr_len(j, "fn"), 18);
	ASSERT_EQ(json_object_get_int(get(get(j, "meta"), "functions")), 18);
	for (size_t i = 0; i < arr_len(j, "fn"); i++) {
		ASSERT_TRUE(strcmp(name_at(j, (size_t)num_at(j, "fn", i)), "all") != 0);
		if (i > 0)
			ASSERT_TRUE(num_at(j, "ftotal", i) <= num_at(j, "ftotal", i - 1));
	}
}

TEST(hostile_names_are_escaped)
{
	static const char *const lines[] = {
		"main;</script><script>alert(1)</script> 5",
		"main;<!--x 4",
		"main;</SCRIPT >y 1",
		"main;say \"hi\" 'there' 3",
		"main;back\\slash\\\" 3",
		"main;line\xe2\x80\xa8sep\xe2\x80\xa9para 2",
		"main;bad\xff\xfe utf8\xc3 2",
		"main;ctl\001\037\177end 2",
		"main;caf\xc3\xa9_\xf0\x9f\x94\xa5 2",
		NULL,
	};
	static const char *const decoded[] = {
		"</script><script>alert(1)</script>",
		"<!--x",
		"</SCRIPT >y",
		"say \"hi\" 'there'",
		"back\\slash\\\"",
		"line\xe2\x80\xa8sep\xe2\x80\xa9para",
		"bad\xef\xbf\xbd\xef\xbf\xbd utf8\xef\xbf\xbd",
		"ctl\357\277\275\357\277\275\357\277\275end", /* octal: U+FFFD, then "end" */
		"caf\xc3\xa9_\xf0\x9f\x94\xa5",
	};
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(lines, true);
	_cleanup_(membuf_done) struct membuf m = {};
	_cleanup_(json_object_putp) struct json_object *j = NULL;
	const char *info[] = { "</script><!--\xe2\x80\xa8", NULL };
	struct fg_flame_opts o;

	fg_flame_opts_init(&o);
	o.title = "</script><script>alert(1)</script>";
	o.subtitle = "<!-- \"q\" 'a' & \xff";
	o.info = info;
	o.notes = "--> </script> <!--";
	o.count_name = "</script>\"\\";
	o.name_type = "<!--";
	o.font_type = "</script>";
	render(f, &o, &m);

	/* Exactly the page's own script elements and comment, nothing a name opened. */
	ASSERT_EQ(count_str_nocase(m.data, "<script"), 2);
	ASSERT_EQ(count_str_nocase(m.data, "</script"), 2);
	ASSERT_EQ(count_str(m.data, "<!--"), 1);
	ASSERT_LACKS(m.data, "\xe2\x80\xa8");
	ASSERT_LACKS(m.data, "\xe2\x80\xa9");
	ASSERT_TRUE(valid_utf8_xml(m.data, m.len));
	ASSERT_TRUE(strlen(m.data) == m.len);
	ASSERT_CONTAINS(
		m.data,
		"<h1 id=\"title\">&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</h1>");
	ASSERT_CONTAINS(
		m.data,
		"<p id=\"subtitle\">&lt;!-- &quot;q&quot; &#39;a&#39; &amp; \xef\xbf\xbd</p>");
	ASSERT_CONTAINS(m.data, "NOTES: --&gt; &lt;/script&gt; &lt;!--</div>");

	/* The data reads back to the names as the model has them, bad bytes as U+FFFD. */
	j = page_data(m.data);
	for (size_t i = 0; i < ELEMENTSOF(decoded); i++) {
		double self, total;

		if (!table_row(j, decoded[i], &self, &total))
			fg_test_fail(__FILE__, __LINE__, "name %zu does not read back", i);
		ASSERT_TRUE(self > 0 && self == total);
	}
	ASSERT_STREQ(json_object_get_string(get(get(j, "meta"), "title")), o.title);
	ASSERT_STREQ(json_object_get_string(get(get(j, "meta"), "countName")), o.count_name);
	ASSERT_STREQ(json_object_get_string(get(get(j, "meta"), "nameType")), "<!--");
	ASSERT_STREQ(json_object_get_string(get(get(j, "meta"), "fontType")), "</script>");
}

TEST(deterministic)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic, true);
	_cleanup_(fg_folded__freep) struct fg_folded *g = NULL;
	_cleanup_(membuf_done) struct membuf a = {}, b = {}, c = {};
	static const char *const reversed[] = {
		"main;rec 3",
		"main;rec;rec;leaf 7",
		"main;shutdown;hot_c 4",
		"main;shutdown 6",
		"main;run;idle 25",
		"main;run;process;io;read;sys_read_[k] 20",
		"main;run;process;compute 9",
		"main;run;process;compute;hot_b 60",
		"main;run;process;compute;hot_a 120",
		"main;init;load_plugins;dlopen 8",
		"main;init;parse_config 12",
		NULL,
	};
	struct fg_flame_opts o;

	render(f, NULL, &a);
	render(f, NULL, &b);
	ASSERT_TRUE(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
	/* The same stacks added in another order: frames, colours and table come out alike. */
	g = model_new(reversed, true);
	fg_flame_opts_init(&o);
	render(g, &o, &c);
	{
		_cleanup_(json_object_putp) struct json_object *ja = page_data(a.data);
		_cleanup_(json_object_putp) struct json_object *jc = page_data(c.data);

		ASSERT_STREQ(json_object_to_json_string(get(ja, "value")),
			     json_object_to_json_string(get(jc, "value")));
		ASSERT_STREQ(json_object_to_json_string(get(ja, "colors")),
			     json_object_to_json_string(get(jc, "colors")));
		ASSERT_STREQ(json_object_to_json_string(get(ja, "ftotal")),
			     json_object_to_json_string(get(jc, "ftotal")));
	}
	membuf_done(&b);
	/* Random colours are deterministic for a seed. */
	o.random = true;
	o.seed = 7;
	membuf_done(&c);
	render(f, &o, &c);
	render(f, &o, &b);
	ASSERT_TRUE(c.len == b.len && memcmp(c.data, b.data, c.len) == 0);
}

TEST(streaming_in_small_budgets_gives_the_same_bytes)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic, true);
	_cleanup_(membuf_done) struct membuf whole = {};
	static const size_t budgets[] = { 0, 1, 7, 64, 1000, 4096, 65536 };

	render(f, NULL, &whole);
	for (size_t i = 0; i < ELEMENTSOF(budgets); i++) {
		_cleanup_(membuf_done) struct membuf m = {};
		size_t calls = render_budget(f, NULL, budgets[i], &m);

		ASSERT_TRUE(m.len == whole.len && memcmp(m.data, whole.data, whole.len) == 0);
		if (budgets[i] <= 1)
			ASSERT_TRUE(calls > 100); /* an array element at a time */
	}
}

TEST(sink_error_is_returned_and_the_write_can_be_retried)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic, true);
	_cleanup_(fg_flame_html__freep) struct fg_flame_html *h = NULL;
	_cleanup_(membuf_done) struct membuf whole = {}, m = {};
	int r;

	render(f, NULL, &whole);
	ASSERT_OK(fg_flame_html__new(f, NULL, &h));
	ASSERT_EQ(fg_flame_html__emit(h, membuf_write, &m, 100), 0);
	m.fail = -EPIPE;
	ASSERT_ERR(fg_flame_html__emit(h, membuf_write, &m, 100), -EPIPE);
	m.fail = 0;
	do
		r = fg_flame_html__emit(h, membuf_write, &m, 100);
	while (r == 0);
	ASSERT_EQ(r, 1);
	ASSERT_TRUE(m.len == whole.len && memcmp(m.data, whole.data, whole.len) == 0);
}

TEST(empty_model)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = fg_folded__new();
	_cleanup_(membuf_done) struct membuf m = {};
	_cleanup_(json_object_putp) struct json_object *j = NULL;
	_cleanup_(fg_flame_html__freep) struct fg_flame_html *h = NULL;

	ASSERT_TRUE(f);
	ASSERT_OK(fg_folded__sort(f));
	render(f, NULL, &m);
	ASSERT_CONTAINS(m.data, "<p id=\"nosamples\">No samples</p>");
	j = page_data(m.data);
	ASSERT_EQ(arr_len(j, "name"), 0);
	ASSERT_EQ(arr_len(j, "names"), 0);
	ASSERT_EQ(arr_len(j, "fn"), 0);
	ASSERT_EQ(arr_len(j, "colors"), 0);
	ASSERT_EQ(json_object_get_int(get(get(j, "meta"), "total")), 0);
	ASSERT_OK(fg_flame_html__new(f, NULL, &h));
	ASSERT_EQ(fg_flame_html__n_frames(h), 0);
}

TEST(differential)
{
	static const char *const lines[] = {
		"main;grow 10 30",
		"main;shrink 30 10",
		"main;same 20 20",
		NULL,
	};
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(lines, true);
	_cleanup_(membuf_done) struct membuf m = {}, neg = {};
	_cleanup_(json_object_putp) struct json_object *j = NULL, *jn = NULL;
	_cleanup_free_ struct frame *fr = NULL, *fn = NULL;
	struct fg_flame_opts o;
	double self, total;
	size_t n;

	render(f, NULL, &m);
	j = page_data(m.data);
	ASSERT_TRUE(json_object_get_boolean(get(get(j, "meta"), "diff")));
	ASSERT_TRUE(!json_object_get_boolean(get(get(j, "meta"), "otherIsAfter")));
	ASSERT_CONTAINS(m.data, "<h1 id=\"title\">Differential Flame Graph</h1>");
	fr = page_frames(j, &n);
	ASSERT_EQ(n, 5);
	ASSERT_NEAR(find_frame(fr, n, "main;grow")->value, 30);
	ASSERT_NEAR(find_frame(fr, n, "main;grow")->other, 10);
	ASSERT_NEAR(find_frame(fr, n, "main;shrink")->value, 10);
	ASSERT_NEAR(find_frame(fr, n, "main;shrink")->other, 30);
	ASSERT_TRUE(table_row(j, "grow", &self, &total));
	ASSERT_NEAR(self, 30);
	ASSERT_EQ(arr_len(j, "fselfOther"), arr_len(j, "fn"));
	ASSERT_EQ(arr_len(j, "ftotalOther"), arr_len(j, "fn"));
	/* Red for growth, blue for decline, white for no change. */
	for (size_t i = 0; i < n; i++) {
		uint32_t c = (uint32_t)num_at(j, "colors", (size_t)num_at(j, "color", i));
		int r = c >> 16, b = c & 0xff;

		if (strcmp(fr[i].name, "grow") == 0)
			ASSERT_TRUE(r > b);
		else if (strcmp(fr[i].name, "shrink") == 0)
			ASSERT_TRUE(b > r);
		else if (strcmp(fr[i].name, "same") == 0)
			ASSERT_TRUE(r == b);
	}

	/* --negate: widths from the before profile, the other one is "after". */
	fg_flame_opts_init(&o);
	o.negate = true;
	render(f, &o, &neg);
	jn = page_data(neg.data);
	ASSERT_TRUE(json_object_get_boolean(get(get(jn, "meta"), "otherIsAfter")));
	fn = page_frames(jn, &n);
	ASSERT_NEAR(find_frame(fn, n, "main;grow")->value, 10);
	ASSERT_NEAR(find_frame(fn, n, "main;grow")->other, 30);
	ASSERT_TRUE(table_row(jn, "shrink", &self, &total));
	ASSERT_NEAR(total, 30);
}

TEST(bad_input_is_rejected)
{
	static const char *const backwards[] = { "b;x 1", "a;x 1", NULL };
	_cleanup_(fg_folded__freep) struct fg_folded *unsorted = model_new(backwards, false);
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic, true);
	_cleanup_(fg_folded__freep) struct fg_folded *seq = fg_folded__new();
	struct fg_flame_html *h = NULL;
	struct fg_flame_opts o;

	ASSERT_ERR(fg_flame_html__new(unsorted, NULL, &h), -EINVAL);
	ASSERT_ERR(fg_flame_html__new(NULL, NULL, &h), -EINVAL);
	fg_flame_opts_init(&o);
	o.width = 5;
	ASSERT_ERR(fg_flame_html__new(f, &o, &h), -EINVAL);
	fg_flame_opts_init(&o);
	o.min_width = -1;
	ASSERT_ERR(fg_flame_html__new(f, &o, &h), -EINVAL);
	fg_flame_opts_init(&o);
	o.flamechart = true; /* the model is not a sequence */
	ASSERT_ERR(fg_flame_html__new(f, &o, &h), -EINVAL);
	ASSERT_TRUE(!h);

	/* A sequence with flamechart renders, in the order of addition. */
	ASSERT_TRUE(seq);
	fg_folded__set_sequence(seq);
	ASSERT_EQ(fg_folded__add_line(seq, "b 1", 3), 1);
	ASSERT_EQ(fg_folded__add_line(seq, "a 2", 3), 1);
	ASSERT_OK(fg_folded__sort(seq));
	ASSERT_OK(fg_flame_html__new(seq, &o, &h));
	ASSERT_EQ(fg_flame_html__n_frames(h), 3);
	h = fg_flame_html__free(h);
}

/* The page keeps far narrower frames than the SVG: down to 1/100 of its min_width. */
TEST(detail_kept)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = fg_folded__new();
	_cleanup_(fg_flame_html__freep) struct fg_flame_html *h = NULL;
	_cleanup_(membuf_done) struct membuf m = {};
	_cleanup_(json_object_putp) struct json_object *j = NULL;
	_cleanup_free_ struct frame *fr = NULL;
	size_t n;

	/* 0.1 px at 1180 px is 1/11,800 of the total; the page keeps 1/1,180,000. */
	ASSERT_TRUE(f);
	ASSERT_EQ(fg_folded__add_line(f, "main;big 3000000", 16), 1);
	ASSERT_EQ(fg_folded__add_line(f, "main;small 10", 13), 1); /* 1/300,000: kept */
	ASSERT_EQ(fg_folded__add_line(f, "main;tiny 1", 11), 1);   /* 1/3,000,000: elided */
	ASSERT_OK(fg_folded__sort(f));
	ASSERT_OK(fg_flame_html__new(f, NULL, &h));
	ASSERT_EQ(fg_flame_html__n_frames(h), 4);
	ASSERT_EQ(fg_flame_html__n_elided(h), 1);
	render(f, NULL, &m);
	j = page_data(m.data);
	fr = page_frames(j, &n);
	ASSERT_TRUE(find_frame(fr, n, "main;small"));
	ASSERT_TRUE(!find_frame(fr, n, "main;tiny"));
	/* The table is exact all the same. */
	{
		double self, total;

		ASSERT_TRUE(table_row(j, "tiny", &self, &total));
		ASSERT_NEAR(total, 1);
	}
}

/*
 * 200,000 distinct stacks: the frame cap holds, the widest frames are the
 * ones kept, and the page stays a few megabytes.
 */
/* The page keeps what it shows: it streams the same bytes after its model is gone. */
TEST(the_page_outlives_its_model)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic, true);
	_cleanup_(membuf_done) struct membuf whole = {}, m = {};
	_cleanup_(fg_flame_html__freep) struct fg_flame_html *h = NULL;
	struct fg_folded *g = model_new(basic, true);

	render(f, NULL, &whole);
	ASSERT_OK(fg_flame_html__new(g, NULL, &h));
	fg_folded__free(g);
	emit_all(emit_one, h, 4096, &m);
	ASSERT_TRUE(m.len == whole.len && memcmp(m.data, whole.data, whole.len) == 0);
}

TEST(large_profile_is_bounded)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = fg_folded__new();
	_cleanup_(fg_flame_html__freep) struct fg_flame_html *h = NULL;
	_cleanup_(membuf_done) struct membuf m = {};
	_cleanup_(json_object_putp) struct json_object *j = NULL;
	_cleanup_free_ struct frame *fr = NULL;
	uint64_t rng = 42;
	char line[256];
	size_t n;

	ASSERT_TRUE(f);
	for (int i = 0; i < 200000; i++) {
		int len = snprintf(line, sizeof(line), "main;mod_%d;fn_%d;sub_%d;leaf_%d %d",
				   i % 13, i % 997, i % 4999, i, 1 + (int)((rng >> 33) % 50));

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		ASSERT_EQ(fg_folded__add_line(f, line, (size_t)len), 1);
	}
	ASSERT_OK(fg_folded__sort(f));
	{
		/* What fgd holds while it streams a page is counted as the heap it takes. */
		size_t before = heap_in_use();

		ASSERT_OK(fg_flame_html__new(f, NULL, &h));
		ASSERT_BYTES_MATCH(fg_flame_html__bytes(h), before, heap_in_use());
		ASSERT_TRUE(fg_flame_html__bytes(h) > fg_flame_html__n_frames(h) * 64);
	}
	ASSERT_TRUE(fg_flame_html__n_frames(h) <= 200000);
	ASSERT_TRUE(fg_flame_html__n_frames(h) > 150000);
	ASSERT_TRUE(fg_flame_html__n_elided(h) > 0);
	render_budget(f, NULL, 64 * 1024, &m);
	fprintf(stderr, "  200,000 stacks: %zu frames kept, %zu elided, %zu bytes\n",
		fg_flame_html__n_frames(h), fg_flame_html__n_elided(h), m.len);
	ASSERT_TRUE(m.len < 8 * 1024 * 1024);
	j = page_data(m.data);
	fr = page_frames(j, &n);
	ASSERT_EQ(n, fg_flame_html__n_frames(h));
	/* The widest frames are the ones kept: all 13 "mod_*" and 997 "fn_*" frames. */
	{
		size_t at[5] = {};
		double narrowest_kept = INFINITY;

		for (size_t i = 0; i < n; i++) {
			at[MIN(fr[i].depth, 4)]++;
			narrowest_kept = MIN(narrowest_kept, fr[i].value);
		}
		ASSERT_EQ(at[2], 13);
		ASSERT_EQ(at[3], 13 * 997);
		ASSERT_TRUE(narrowest_kept > 1);
	}
	/* The table: the top 2000 by self and by total, out of every function there is. */
	ASSERT_TRUE(arr_len(j, "fn") >= 2000 && arr_len(j, "fn") <= 4000);
	ASSERT_EQ(json_object_get_int(get(get(j, "meta"), "functions")),
		  1 + 13 + 997 + 4999 + 200000);
}
