/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "profile/folded.h"
#include "render-test.h"
#include "render/flame.h"
#include "test.h"

static int emit_one(void *renderer, fg_write_fn fn, void *ctx, size_t budget)
{
	return fg_flame__emit(renderer, fn, ctx, budget);
}

/* Renders to m with the given budget; returns the number of emit calls. */
static size_t render_budget(const struct fg_folded *f, const struct fg_flame_opts *o, size_t budget,
			    struct membuf *m)
{
	_cleanup_(fg_flame__freep) struct fg_flame *fl = NULL;

	ASSERT_OK(fg_flame__new(f, o, &fl));
	return emit_all(emit_one, fl, budget, m);
}

static void render(const struct fg_folded *f, const struct fg_flame_opts *o, struct membuf *m)
{
	render_budget(f, o, SIZE_MAX, m);
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == ':' || c == '.';
}

/* Checks that text between '&' and ';' is a predefined or numeric entity. */
static bool valid_entity(const char *p, const char *end)
{
	static const char *const known[] = { "amp", "lt", "gt", "quot", "apos" };
	const char *semi = memchr(p, ';', (size_t)(end - p));
	size_t l;

	if (!semi)
		return false;
	l = (size_t)(semi - p - 1);
	if (l > 1 && p[1] == '#')
		return true;
	for (size_t i = 0; i < ELEMENTSOF(known); i++)
		if (strlen(known[i]) == l && memcmp(p + 1, known[i], l) == 0)
			return true;
	return false;
}

/*
 * A small well-formedness checker: elements nest and close by name, there is
 * exactly one root element, attribute values are quoted and hold no '<', and
 * '&' only starts an entity. A <script> or <style> element's text holds no
 * '<' and no '&' at all: it reads the same to an HTML parser, inline in a
 * page, as to an XML one, with no CDATA section. Returns NULL or a
 * description of the problem.
 */
static const char *xml_problem(const char *s, size_t len)
{
	const char *p = s, *end = s + len;
	const char *stack[64];
	size_t stack_len[64], depth = 0, roots = 0;

	if (!valid_utf8_xml(s, len))
		return "invalid UTF-8 or control character";
	while (p < end) {
		if (*p == '&') {
			if (!valid_entity(p, end))
				return "bare '&'";
			p++;
			continue;
		}
		if (*p == '>')
			return "bare '>' in text"; /* legal XML, but the renderer escapes it */
		if (*p != '<') {
			if (depth == 0 && *p != '\n' && *p != ' ')
				return "text outside the root";
			p++;
			continue;
		}
		if (strncmp(p, "<?", 2) == 0) {
			p = strstr(p, "?>");
			if (!p)
				return "unterminated <?";
			p += 2;
		} else if (strncmp(p, "<!--", 4) == 0) {
			p = strstr(p, "-->");
			if (!p)
				return "unterminated comment";
			p += 3;
		} else if (strncmp(p, "<![CDATA[", 9) == 0) {
			if (depth == 0)
				return "CDATA outside the root";
			p = strstr(p, "]]>");
			if (!p)
				return "unterminated CDATA";
			p += 3;
		} else if (p[1] == '/') {
			const char *n = p + 2;
			size_t l = 0;

			while (n + l < end && is_name_char(n[l]))
				l++;
			if (depth == 0 || stack_len[depth - 1] != l ||
			    memcmp(stack[depth - 1], n, l) != 0)
				return "mismatched end tag";
			depth--;
			if (n + l >= end || n[l] != '>')
				return "bad end tag";
			p = n + l + 1;
		} else {
			const char *n = p + 1;
			size_t l = 0;

			while (n + l < end && is_name_char(n[l]))
				l++;
			if (l == 0)
				return "bad start tag";
			p = n + l;
			for (;;) {
				if (p >= end)
					return "unterminated start tag";
				if (*p == '"' || *p == '\'') {
					const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));

					if (!q)
						return "unterminated attribute";
					if (memchr(p + 1, '<', (size_t)(q - p - 1)))
						return "'<' in an attribute";
					for (const char *a = p + 1; a < q; a++)
						if (*a == '&' && !valid_entity(a, q + 1))
							return "bare '&' in an attribute";
					p = q + 1;
				} else if (*p == '<') {
					return "'<' inside a tag";
				} else if (*p == '>' || strncmp(p, "/>", 2) == 0) {
					break;
				} else {
					p++;
				}
			}
			if (depth == 0 && ++roots > 1)
				return "more than one root element";
			if (*p == '>' && ((l == 6 && memcmp(n, "script", 6) == 0) ||
					  (l == 5 && memcmp(n, "style", 5) == 0))) {
				/* Its text, up to its end tag: '>' may be there, '<' and '&' not. */
				const char *close = l == 6 ? "</script>" : "</style>";
				const char *e = strstr(p + 1, close);

				if (!e)
					return "unterminated script or style";
				for (const char *c = p + 1; c < e; c++)
					if (*c == '<' || *c == '&')
						return "'<' or '&' in a script or style";
				p = e + strlen(close);
			} else if (*p == '>') {
				if (depth == ELEMENTSOF(stack))
					return "too deep";
				stack[depth] = n;
				stack_len[depth++] = l;
				p++;
			} else {
				p += 2;
			}
		}
	}
	if (depth != 0)
		return "unclosed element";
	if (roots != 1)
		return "no root element";
	return NULL;
}

#define ASSERT_WELL_FORMED(m)                                                          \
	do {                                                                           \
		const char *_why = xml_problem((m)->data, (m)->len);                   \
		if (_why)                                                              \
			fg_test_fail(__FILE__, __LINE__, "not well-formed: %s", _why); \
	} while (0)

#define ASSERT_LACKS(hay, needle)                                                        \
	do {                                                                             \
		if (strstr((hay), (needle)))                                             \
			fg_test_fail(__FILE__, __LINE__, "output has \"%s\"", (needle)); \
	} while (0)

/* The rect of the frame whose title starts with title_prefix; false if absent. */
static bool frame_rect(const char *svg, const char *title_prefix, double *x, double *w, int rgb[3])
{
	char needle[512];
	const char *p, *rect;

	snprintf(needle, sizeof(needle), "<g class=\"func_g\"><title>%s", title_prefix);
	p = strstr(svg, needle);
	if (!p)
		return false;
	rect = strstr(p, "<rect ");
	ASSERT_TRUE(rect);
	ASSERT_EQ(
		sscanf(rect,
		       "<rect x=\"%lf\" y=\"%*f\" width=\"%lf\" height=\"%*f\" fill=\"rgb(%d,%d,%d)\"",
		       x, w, &rgb[0], &rgb[1], &rgb[2]),
		5);
	return true;
}

/* The label of the frame whose title starts with title_prefix, into buf. */
static void frame_label(const char *svg, const char *title_prefix, char *buf, size_t size)
{
	char needle[512];
	const char *p, *t, *e;

	snprintf(needle, sizeof(needle), "<g class=\"func_g\"><title>%s", title_prefix);
	p = strstr(svg, needle);
	ASSERT_TRUE(p);
	t = strstr(p, "<text ");
	ASSERT_TRUE(t);
	t = strchr(t, '>') + 1;
	e = strstr(t, "</text>");
	ASSERT_TRUE(e && (size_t)(e - t) < size);
	memcpy(buf, t, (size_t)(e - t));
	buf[e - t] = '\0';
}

static double svg_height(const char *svg)
{
	const char *p = strstr(svg, "<svg ");
	double h;

	ASSERT_TRUE(p);
	p = strstr(p, " height=\"");
	ASSERT_TRUE(p);
	ASSERT_EQ(sscanf(p, " height=\"%lf\"", &h), 1);
	return h;
}

static const char *const basic_lines[] = {
	"main;run;hot_a 1234", "main;run;hot_b 500", "main;run 66", "main;init 200", NULL,
};

TEST(well_formed_and_structure)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic_lines, true);
	_cleanup_(membuf_done) struct membuf m = {};
	struct fg_flame_opts o;

	fg_flame_opts_init(&o);
	o.title = "My Graph";
	render(f, &o, &m);

	ASSERT_WELL_FORMED(&m);
	ASSERT_TRUE(strncmp(m.data, "<?xml ", 6) == 0);
	ASSERT_TRUE(m.len > 7 && strcmp(m.data + m.len - 7, "</svg>\n") == 0);
	ASSERT_EQ(count_str(m.data, "<svg"), 1);
	ASSERT_EQ(count_str(m.data, "</svg>"), 1);
	ASSERT_EQ(count_str(m.data, "<g ") + count_str(m.data, "<g>"), count_str(m.data, "</g>"));
	/* One group per frame: all, main, run, hot_a, hot_b, init. */
	ASSERT_EQ(count_str(m.data, "<g class=\"func_g\">"), 6);
	ASSERT_EQ(count_str(m.data, "<title>"), 6);
	ASSERT_CONTAINS(m.data, ">My Graph</text>");
	/* The controls and lines the script and the browser test find by id. */
	ASSERT_CONTAINS(m.data, "<text id=\"unzoom\" class=\"hide\"");
	ASSERT_CONTAINS(m.data, ">Reset Zoom</text>");
	ASSERT_CONTAINS(m.data, "<text id=\"search\"");
	ASSERT_CONTAINS(m.data, "<text id=\"matched\"");
	ASSERT_CONTAINS(m.data, "<text id=\"details\"");
	ASSERT_CONTAINS(m.data, "data-name-type=\"Function:\"");
	ASSERT_CONTAINS(m.data, "<g id=\"frames\">");
	ASSERT_CONTAINS(m.data, "width=\"1200\"");
	/* Self-contained: nothing fetched from outside. */
	ASSERT_LACKS(m.data, "href");
	ASSERT_LACKS(m.data, "<!DOCTYPE");
	/* No CDATA section (blog engines strip them): the script and style need none. */
	ASSERT_EQ(count_str(m.data, "<![CDATA["), 0);
	ASSERT_EQ(count_str(m.data, "]]>"), 0);
}

TEST(tooltips_and_geometry)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic_lines, true);
	_cleanup_(membuf_done) struct membuf m = {};
	double x, w, x2, w2;
	int rgb[3];

	render(f, NULL, &m);
	/* Total 2000: hot_a 1234, hot_b 500, run self 66, init 200. */
	ASSERT_CONTAINS(m.data, "<title>all (2,000 samples, 100.00%)</title>");
	ASSERT_CONTAINS(m.data, "<title>main (2,000 samples, 100.00%)</title>");
	ASSERT_CONTAINS(m.data, "<title>run (1,800 samples, 90.00%)</title>");
	ASSERT_CONTAINS(m.data, "<title>hot_a (1,234 samples, 61.70%)</title>");
	ASSERT_CONTAINS(m.data, "<title>hot_b (500 samples, 25.00%)</title>");
	ASSERT_CONTAINS(m.data, "<title>init (200 samples, 10.00%)</title>");

	/* Root spans the full width less xpad; children in byte order: init left of run. */
	ASSERT_TRUE(frame_rect(m.data, "all ", &x, &w, rgb));
	ASSERT_TRUE(fabs(x - 10) < 1e-9 && fabs(w - 1180) < 1e-9);
	ASSERT_TRUE(frame_rect(m.data, "init ", &x, &w, rgb));
	ASSERT_TRUE(fabs(x - 10) < 1e-9 && fabs(w - 118) < 1e-9);
	ASSERT_TRUE(frame_rect(m.data, "run ", &x, &w, rgb));
	ASSERT_TRUE(fabs(x - 128) < 1e-9 && fabs(w - 1062) < 1e-9);
	/*
	 * "main;run" sorts before "main;run;hot_a", so run's self time (66) is
	 * on the left, as flamegraph.pl lays out sorted input; hot_b follows hot_a.
	 */
	ASSERT_TRUE(frame_rect(m.data, "hot_a ", &x, &w, rgb));
	ASSERT_TRUE(fabs(x - (128 + 66 * 0.59)) < 0.006 && fabs(w - 1234 * 0.59) < 0.006);
	ASSERT_TRUE(frame_rect(m.data, "hot_b ", &x2, &w2, rgb));
	ASSERT_TRUE(fabs(x2 - 895) < 0.006 && fabs(w2 - 295) < 0.006);
	/* Frames are written in pre-order, the order the script rebuilds the tree from. */
	ASSERT_TRUE(strstr(m.data, "<title>all ") < strstr(m.data, "<title>main "));
	ASSERT_TRUE(strstr(m.data, "<title>main ") < strstr(m.data, "<title>init "));
	ASSERT_TRUE(strstr(m.data, "<title>init ") < strstr(m.data, "<title>run "));
	ASSERT_TRUE(strstr(m.data, "<title>run ") < strstr(m.data, "<title>hot_a "));
	ASSERT_TRUE(strstr(m.data, "<title>hot_a ") < strstr(m.data, "<title>hot_b "));
}

TEST(options_show_up)
{
	static const char *const lines[] = { "a;b 3", "a;c 1.5", NULL };
	static const char *const info[] = {
		"event: cpu-clock  frequency: 99 Hz  duration: 30.0 s  samples: 5940  lost: 0",
		"host: <box> & \"more\"",
		NULL,
	};
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(lines, true);
	_cleanup_(membuf_done) struct membuf plain = {}, m = {};
	struct fg_flame_opts o;

	fg_flame_opts_init(&o);
	render(f, &o, &plain);

	o.title = "CPU <profile>";
	o.subtitle = "pid 42 & friends";
	o.info = info;
	o.count_name = "events";
	o.name_type = "Symbol:";
	o.font_type = "Dejavu \"Sans\"";
	render(f, &o, &m);
	ASSERT_WELL_FORMED(&m);
	ASSERT_CONTAINS(m.data, ">CPU &lt;profile&gt;</text>");
	ASSERT_CONTAINS(m.data, "<text id=\"subtitle\"");
	ASSERT_CONTAINS(m.data, ">pid 42 &amp; friends</text>");
	ASSERT_CONTAINS(
		m.data,
		">event: cpu-clock  frequency: 99 Hz  duration: 30.0 s  samples: 5940  lost: 0</text>");
	ASSERT_CONTAINS(m.data, ">host: &lt;box&gt; &amp; &quot;more&quot;</text>");
	ASSERT_EQ(count_str(m.data, "class=\"info\""), 2);
	ASSERT_CONTAINS(m.data, "font-family=\"Dejavu &quot;Sans&quot;\"");
	ASSERT_CONTAINS(m.data, "data-name-type=\"Symbol:\"");
	ASSERT_CONTAINS(m.data, "data-count-name=\"events\"");
	/* Fractional counts keep two decimals. */
	ASSERT_CONTAINS(m.data, "<title>c (1.50 events, 33.33%)</title>");
	ASSERT_CONTAINS(m.data, "<title>all (4.50 events, 100.00%)</title>");
	/* The header grew by the subtitle and info lines, the frames did not move up. */
	ASSERT_TRUE(svg_height(m.data) > svg_height(plain.data) + 2 * 12);
	ASSERT_LACKS(plain.data, "class=\"info\"");
	ASSERT_LACKS(plain.data, "id=\"subtitle\"");
}

TEST(escaping)
{
	static const char *const lines[] = {
		"main;std::vector<int>::push_back 5",
		"main;operator<<(std::ostream&, Foo const&) 4",
		"main;say \"hi\" 'there' 3",
		"main;x]]>y</script> 2",
		"main;caf\xc3\xa9_\xe6\x97\xa5\xe6\x9c\xac_\xf0\x9f\x94\xa5 2",
		"main;ctl\x01\x1f\x7f"
		"end 2",
		"main;bad\xff\xfe\xc3(\xed\xa0\x80z 2",
		NULL,
	};
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(lines, true);
	_cleanup_(membuf_done) struct membuf m = {};

	render(f, NULL, &m);
	ASSERT_WELL_FORMED(&m);
	ASSERT_CONTAINS(m.data, "<title>std::vector&lt;int&gt;::push_back (5 samples");
	ASSERT_CONTAINS(m.data, ">std::vector&lt;int&gt;::push_back</text>");
	ASSERT_CONTAINS(m.data,
			"<title>operator&lt;&lt;(std::ostream&amp;, Foo const&amp;) (4 samples");
	ASSERT_CONTAINS(m.data, "<title>say &quot;hi&quot; &#39;there&#39; (3 samples");
	ASSERT_CONTAINS(m.data, "<title>x]]&gt;y&lt;/script&gt; (2 samples");
	ASSERT_LACKS(m.data, "<int>");
	ASSERT_LACKS(m.data, "y</script>");
	/* Valid UTF-8 passes through untouched. */
	ASSERT_CONTAINS(m.data,
			"<title>caf\xc3\xa9_\xe6\x97\xa5\xe6\x9c\xac_\xf0\x9f\x94\xa5 (2 samples");
	/* Controls and invalid bytes become U+FFFD, one per byte. */
	ASSERT_CONTAINS(m.data, "<title>ctl\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				"end (2 samples");
	ASSERT_CONTAINS(m.data, "<title>bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd("
				"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz (2 samples");
}

TEST(labels_truncate_on_characters)
{
	/* 1180 px over 100 samples: 11.8 px per sample, 7.08 px per character at 12 px. */
	static const char *const lines[] = {
		"\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4 4",
		"abcdefghijklmnop 5",
		"short 2",
		"x 1",
		"zz 90",
		NULL,
	};
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(lines, true);
	_cleanup_(membuf_done) struct membuf m = {};
	char label[256];

	render(f, NULL, &m);
	ASSERT_WELL_FORMED(&m);
	/* 47.2 px: 6 characters fit, so 4 of the name (not 4 bytes) and "..". */
	frame_label(m.data, "\xc3\xa4\xc3\xa4", label, sizeof(label));
	ASSERT_STREQ(label, "\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4..");
	/* 59 px: 8 characters. */
	frame_label(m.data, "abcdefghijklmnop ", label, sizeof(label));
	ASSERT_STREQ(label, "abcdef..");
	/* 23.6 px: 3 characters, and "short" needs 5. */
	frame_label(m.data, "short ", label, sizeof(label));
	ASSERT_STREQ(label, "s..");
	/* 11.8 px: no room for any label. */
	frame_label(m.data, "x ", label, sizeof(label));
	ASSERT_STREQ(label, "");
	frame_label(m.data, "zz ", label, sizeof(label));
	ASSERT_STREQ(label, "zz");
}

TEST(narrow_frames_are_elided)
{
	/* 1180 px over 100001 samples: "tiny" is 0.0118 px wide. */
	static const char *const lines[] = {
		"main;big 100000",
		"main;tiny;deeper;deepest;bottom 1",
		NULL,
	};
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(lines, true);
	_cleanup_(membuf_done) struct membuf m = {}, all = {}, wide = {};
	struct fg_flame_opts o;

	render(f, NULL, &m);
	ASSERT_WELL_FORMED(&m);
	ASSERT_CONTAINS(m.data, "<title>big (100,000 samples, 100.00%)</title>");
	ASSERT_LACKS(m.data, "tiny");
	ASSERT_LACKS(m.data, "deepest");
	ASSERT_EQ(count_str(m.data, "<g class=\"func_g\">"), 3);

	/* With no minimum every frame is drawn, and the deeper stack makes the image taller. */
	fg_flame_opts_init(&o);
	o.min_width = 0;
	render(f, &o, &all);
	ASSERT_WELL_FORMED(&all);
	ASSERT_CONTAINS(all.data, "<title>tiny (1 samples, 0.00%)</title>");
	ASSERT_CONTAINS(all.data, "<title>bottom (1 samples, 0.00%)</title>");
	ASSERT_EQ(count_str(all.data, "<g class=\"func_g\">"), 7);
	/* Height follows the deepest emitted frame: bottom is 3 levels above big, 16 px each. */
	ASSERT_TRUE(fabs(svg_height(all.data) - svg_height(m.data) - 3 * 16) < 1e-9);

	/* A frame exactly min_width wide is kept. */
	o.min_width = 1180.0 / 100001.0;
	render(f, &o, &wide);
	ASSERT_CONTAINS(wide.data, "<title>tiny ");
	ASSERT_TRUE(m.len < all.len);
}

static bool parse_fill_after(const char *p, int rgb[3])
{
	p = strstr(p, "fill=\"rgb(");
	return p && sscanf(p, "fill=\"rgb(%d,%d,%d)\"", &rgb[0], &rgb[1], &rgb[2]) == 3;
}

static bool in_kernel_band(const int rgb[3])
{
	return rgb[0] >= 245 && rgb[0] <= 255 && rgb[2] >= 95 && rgb[2] <= 125 &&
	       rgb[1] - rgb[2] >= 70 && rgb[1] - rgb[2] <= 80;
}

TEST(colours)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = fg_folded__new();
	_cleanup_(membuf_done) struct membuf m = {}, again = {};
	size_t n_user = 0, n_kernel = 0, n_jit = 0, distinct = 0;
	int prev[3] = { -1, -1, -1 };
	char line[128];

	ASSERT_TRUE(f);
	for (int i = 0; i < 100; i++) {
		snprintf(line, sizeof(line), "main;user_fn_%d 10", i);
		ASSERT_EQ(fg_folded__add_line(f, line, strlen(line)), 1);
		snprintf(line, sizeof(line), "main;sys_%d_[k] 10", i);
		ASSERT_EQ(fg_folded__add_line(f, line, strlen(line)), 1);
		snprintf(line, sizeof(line), "main;Lcom/Foo::bar%d_[j] 10", i);
		ASSERT_EQ(fg_folded__add_line(f, line, strlen(line)), 1);
	}
	ASSERT_OK(fg_folded__sort(f));
	render(f, NULL, &m);

	for (const char *p = strstr(m.data, "<g class=\"func_g\"><title>"); p;
	     p = strstr(p + 1, "<g class=\"func_g\"><title>")) {
		const char *name = p + strlen("<g class=\"func_g\"><title>");
		const char *paren = strstr(name, " (");
		int rgb[3];

		ASSERT_TRUE(paren && parse_fill_after(p, rgb));
		/* The annotation colours the frame but is not shown, as in flamegraph.pl. */
		ASSERT_TRUE(memmem(name, (size_t)(paren - name), "_[", 2) == NULL);
		if (strncmp(name, "sys_", 4) == 0) {
			ASSERT_TRUE(in_kernel_band(rgb));
			n_kernel++;
		} else if (strncmp(name, "Lcom/", 5) == 0) {
			/* Green: g dominates. */
			ASSERT_TRUE(rgb[1] >= 165 && rgb[0] <= 110 && rgb[2] <= 110);
			n_jit++;
		} else {
			/* Hot: red high, blue low, never in the kernel band. */
			ASSERT_TRUE(rgb[0] >= 205 && rgb[1] <= 230 && rgb[2] <= 55);
			ASSERT_TRUE(!in_kernel_band(rgb));
			n_user++;
		}
		if (memcmp(rgb, prev, sizeof(prev)) != 0)
			distinct++;
		memcpy(prev, rgb, sizeof(prev));
	}
	ASSERT_EQ(n_kernel, 100);
	ASSERT_EQ(n_jit, 100);
	ASSERT_EQ(n_user, 102); /* plus all and main */
	/* Colours vary with the name, they are not one flat colour per class. */
	ASSERT_TRUE(distinct > 250);

	/* The colour depends on the name only, not on where or in which graph it appears. */
	{
		static const char *const lines[] = { "other;user_fn_7 1", "sys_3_[k] 5", NULL };
		_cleanup_(fg_folded__freep) struct fg_folded *g = model_new(lines, true);
		int a[3], b[3];

		render(g, NULL, &again);
		ASSERT_TRUE(parse_fill_after(strstr(m.data, "<title>user_fn_7 ("), a));
		ASSERT_TRUE(parse_fill_after(strstr(again.data, "<title>user_fn_7 ("), b));
		ASSERT_TRUE(memcmp(a, b, sizeof(a)) == 0);
		ASSERT_TRUE(parse_fill_after(strstr(m.data, "<title>sys_3 ("), a));
		ASSERT_TRUE(parse_fill_after(strstr(again.data, "<title>sys_3 ("), b));
		ASSERT_TRUE(memcmp(a, b, sizeof(a)) == 0);
	}
}

TEST(deterministic)
{
	static const char *const fwd[] = {
		"a;b;c 3", "a;b 2", "a;d 7", "x;y 1", "a;b;e_[k] 4", NULL,
	};
	static const char *const rev[] = {
		"a;b;e_[k] 4", "x;y 1", "a;d 7", "a;b 2", "a;b;c 3", NULL,
	};
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(fwd, true);
	_cleanup_(fg_folded__freep) struct fg_folded *g = model_new(rev, true);
	_cleanup_(membuf_done) struct membuf m1 = {}, m2 = {}, m3 = {};

	render(f, NULL, &m1);
	render(f, NULL, &m2);
	ASSERT_EQ(m1.len, m2.len);
	ASSERT_TRUE(memcmp(m1.data, m2.data, m1.len) == 0);
	/* The same stacks added in another order sort to the same bytes. */
	render(g, NULL, &m3);
	ASSERT_EQ(m1.len, m3.len);
	ASSERT_TRUE(memcmp(m1.data, m3.data, m1.len) == 0);
}

TEST(streaming_matches_one_shot)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic_lines, true);
	_cleanup_(membuf_done) struct membuf whole = {}, tiny = {}, mid = {}, zero = {};
	size_t calls;

	calls = render_budget(f, NULL, SIZE_MAX, &whole);
	ASSERT_EQ(calls, 1);
	ASSERT_EQ(whole.calls, 1);

	/* One byte at a time: every item is its own chunk. */
	calls = render_budget(f, NULL, 1, &tiny);
	ASSERT_EQ(tiny.len, whole.len);
	ASSERT_TRUE(memcmp(tiny.data, whole.data, whole.len) == 0);
	/* head, script, labels, 6 frames, tail */
	ASSERT_EQ(calls, 10);

	calls = render_budget(f, NULL, 0, &zero);
	ASSERT_EQ(calls, 10);
	ASSERT_TRUE(zero.len == whole.len && memcmp(zero.data, whole.data, whole.len) == 0);

	calls = render_budget(f, NULL, 300, &mid);
	ASSERT_TRUE(calls > 1 && calls < 10);
	ASSERT_TRUE(mid.len == whole.len && memcmp(mid.data, whole.data, whole.len) == 0);
}

TEST(empty_model)
{
	static const char *const none[] = { NULL };
	static const char *const zero[] = { "a;b 0", NULL };
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(none, true);
	_cleanup_(fg_folded__freep) struct fg_folded *z = model_new(zero, true);
	_cleanup_(membuf_done) struct membuf m = {}, mz = {};

	render(f, NULL, &m);
	ASSERT_WELL_FORMED(&m);
	ASSERT_CONTAINS(m.data, ">No samples</text>");
	ASSERT_CONTAINS(m.data, ">Flame Graph</text>");
	ASSERT_EQ(count_str(m.data, "class=\"func_g\""), 0);
	ASSERT_CONTAINS(m.data, "<g id=\"frames\">");

	/* Stacks that add up to nothing are no samples either. */
	render(z, NULL, &mz);
	ASSERT_WELL_FORMED(&mz);
	ASSERT_CONTAINS(mz.data, ">No samples</text>");
	ASSERT_EQ(count_str(mz.data, "class=\"func_g\""), 0);
}

TEST(unsorted_model_is_rejected)
{
	static const char *const desc[] = { "b;x 1", "a;x 1", NULL };
	static const char *const prefix[] = { "a;b 1", "a 1", NULL };
	static const char *const deep[] = { "a;b;d 1", "a;b;c 1", NULL };
	static const char *const ok[] = { "a 1", "a;b 1", "a;c 2", "b 1", NULL };
	_cleanup_(fg_folded__freep) struct fg_folded *f1 = model_new(desc, false);
	_cleanup_(fg_folded__freep) struct fg_folded *f2 = model_new(prefix, false);
	_cleanup_(fg_folded__freep) struct fg_folded *f3 = model_new(deep, false);
	_cleanup_(fg_folded__freep) struct fg_folded *f4 = model_new(ok, false);
	_cleanup_(membuf_done) struct membuf m = {};
	struct fg_flame *fl = (struct fg_flame *)&m; /* must stay untouched on failure */

	ASSERT_ERR(fg_flame__new(f1, NULL, &fl), -EINVAL);
	ASSERT_TRUE(fl == (struct fg_flame *)&m);
	ASSERT_ERR(fg_flame__new(f2, NULL, &fl), -EINVAL);
	ASSERT_ERR(fg_flame__new(f3, NULL, &fl), -EINVAL);

	/* Sorting fixes them. */
	ASSERT_OK(fg_folded__sort(f1));
	ASSERT_OK(fg_folded__sort(f2));
	ASSERT_OK(fg_folded__sort(f3));
	render(f1, NULL, &m);
	ASSERT_CONTAINS(m.data, "<title>x (1 samples, 50.00%)</title>");
	ASSERT_EQ(count_str(m.data, "<title>x ("), 2);
	render(f2, NULL, &m);
	render(f3, NULL, &m);
	/* Stacks added already in order need no sort. */
	render(f4, NULL, &m);
	ASSERT_CONTAINS(m.data, "<title>c (2 samples, 40.00%)</title>");
}

TEST(bad_options)
{
	static const char *const lines[] = { "a;b 1", NULL };
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(lines, true);
	_cleanup_(membuf_done) struct membuf m = {};
	struct fg_flame *fl = NULL;
	struct fg_flame_opts o;

	fg_flame_opts_init(&o);
	o.width = 0;
	ASSERT_ERR(fg_flame__new(f, &o, &fl), -EINVAL);
	o.width = 20; /* no room between the pads */
	ASSERT_ERR(fg_flame__new(f, &o, &fl), -EINVAL);
	o.width = 100000000;
	ASSERT_ERR(fg_flame__new(f, &o, &fl), -EINVAL);

	fg_flame_opts_init(&o);
	o.frame_height = 0;
	ASSERT_ERR(fg_flame__new(f, &o, &fl), -EINVAL);

	fg_flame_opts_init(&o);
	o.font_size = 0;
	ASSERT_ERR(fg_flame__new(f, &o, &fl), -EINVAL);
	o.font_size = -3;
	ASSERT_ERR(fg_flame__new(f, &o, &fl), -EINVAL);
	o.font_size = NAN;
	ASSERT_ERR(fg_flame__new(f, &o, &fl), -EINVAL);

	fg_flame_opts_init(&o);
	o.min_width = -0.5;
	ASSERT_ERR(fg_flame__new(f, &o, &fl), -EINVAL);
	o.min_width = INFINITY;
	ASSERT_ERR(fg_flame__new(f, &o, &fl), -EINVAL);

	fg_flame_opts_init(&o);
	ASSERT_ERR(fg_flame__new(NULL, &o, &fl), -EINVAL);
	ASSERT_ERR(fg_flame__new(f, &o, NULL), -EINVAL);
	ASSERT_TRUE(fl == NULL);

	/* NULL strings fall back to the defaults. */
	o.title = NULL;
	o.count_name = NULL;
	o.font_type = NULL;
	o.name_type = NULL;
	render(f, &o, &m);
	ASSERT_CONTAINS(m.data, ">Flame Graph</text>");
	ASSERT_CONTAINS(m.data, "font-family=\"Verdana\"");
	ASSERT_CONTAINS(m.data, "<title>b (1 samples, 100.00%)</title>");
}

TEST(sink_error_is_returned)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = model_new(basic_lines, true);
	_cleanup_(fg_flame__freep) struct fg_flame *fl = NULL;
	_cleanup_(membuf_done) struct membuf whole = {}, m = {};
	int r;

	render(f, NULL, &whole);
	ASSERT_OK(fg_flame__new(f, NULL, &fl));

	m.fail = -EPIPE;
	ASSERT_ERR(fg_flame__emit(fl, membuf_write, &m, 1), -EPIPE);
	ASSERT_EQ(m.len, 0);

	/* Part way through, too; a failed chunk is not lost, so a retry completes. */
	m.fail = 0;
	ASSERT_EQ(fg_flame__emit(fl, membuf_write, &m, 1), 0);
	ASSERT_EQ(fg_flame__emit(fl, membuf_write, &m, 1), 0);
	m.fail = -ENOSPC;
	ASSERT_ERR(fg_flame__emit(fl, membuf_write, &m, 1), -ENOSPC);
	ASSERT_ERR(fg_flame__emit(fl, membuf_write, &m, SIZE_MAX), -ENOSPC);
	m.fail = 0;
	do
		r = fg_flame__emit(fl, membuf_write, &m, 1);
	while (r == 0);
	ASSERT_EQ(r, 1);
	ASSERT_TRUE(m.len == whole.len && memcmp(m.data, whole.data, whole.len) == 0);
}

TEST(large_profile_stays_small)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = fg_folded__new();
	_cleanup_(membuf_done) struct membuf m = {};
	char line[128];

	/* 20000 distinct stacks of one sample each, plus one dominant stack. */
	ASSERT_TRUE(f);
	for (int i = 0; i < 20000; i++) {
		int n = snprintf(line, sizeof(line), "main;work;leaf_%05d;inner_%d 1", i, i % 7);

		ASSERT_EQ(fg_folded__add_line(f, line, (size_t)n), 1);
	}
	ASSERT_EQ(fg_folded__add_line(f, "main;hot 1000000", 16), 1);
	ASSERT_OK(fg_folded__sort(f));
	render_budget(f, NULL, 4096, &m);
	ASSERT_WELL_FORMED(&m);
	/* Each leaf is 0.0012 px wide and elided with what is above it; "work" is 23 px. */
	ASSERT_LACKS(m.data, "leaf_");
	ASSERT_LACKS(m.data, "inner_");
	ASSERT_CONTAINS(m.data, "<title>work (20,000 samples, 1.96%)</title>");
	ASSERT_EQ(count_str(m.data, "class=\"func_g\""), 4);
	ASSERT_TRUE(m.len < 16 * 1024);
}

/* fgd budgets a snapshot by this figure: the layout of every frame drawn, as the heap it takes. */
TEST(bytes_are_the_heap_held)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = fg_folded__new();
	_cleanup_(fg_flame__freep) struct fg_flame *fl = NULL;
	char line[128];
	size_t before;

	/* 5000 stacks of equal weight: each leaf is 0.24 px wide, so all are drawn. */
	ASSERT_TRUE(f);
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(line, sizeof(line), "main;mod_%d;fn_%d;leaf_%d 1", i % 7, i % 101,
				 i);

		ASSERT_EQ(fg_folded__add_line(f, line, (size_t)n), 1);
	}
	ASSERT_OK(fg_folded__sort(f));
	before = heap_in_use();
	ASSERT_OK(fg_flame__new(f, NULL, &fl));
	ASSERT_BYTES_MATCH(fg_flame__bytes(fl), before, heap_in_use());
	ASSERT_TRUE(fg_flame__bytes(fl) > 5000 * sizeof(struct fg_flame_node));
}
