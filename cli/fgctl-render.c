/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl render and fgctl diff: flamegraph.pl, stackcollapse-perf.pl and
 * difffolded.pl in one program, with their option names.
 *
 * The pipeline: read every input into a model (folded text or perf script
 * text), apply the filters (transform.h), then write SVG, HTML or folded
 * text. Malformed input lines are reported by file and line number and
 * skipped, or stop the run with --strict; nothing is dropped silently.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "argsplit.h"
#include "fgctl-client.h"
#include "fgctl-display.h"
#include "fgctl-output.h"
#include "fgctl-query.h"
#include "fgctl.h"
#include "flame-html.h"
#include "flame.h"
#include "folded.h"
#include "lines.h"
#include "macro.h"
#include "palette.h"
#include "perfscript.h"
#include "transform.h"

#define MAX_LINE (64u << 20)  /* longer input lines are refused, not buffered */
#define MAX_REPORTED_ERRORS 10 /* malformed lines named one by one; the rest counted */
#define EMIT_BUDGET (1u << 20)

DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_folded *, fg_folded__free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_palette_map *, fg_palette_map__free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_perfscript *, fg_perfscript__free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put);

enum input_format { FROM_FOLDED, FROM_PERF };

struct render_args {
	struct fg_flame_opts flame;
	struct fg_transform_opts transform;
	struct fg_perfscript_opts perf;
	enum input_format from;
	enum fg_format to; /* svg unless -f or -o's extension says otherwise */
	bool to_given;
	bool strict, quiet;
	bool normalize;          /* diff */
	const char *output;      /* borrowed from argv */
	/* diff --baseline: both profiles come from fgd's always-on sampling. */
	const char *baseline;    /* borrowed from argv: the baseline's query options; NULL: files */
	struct fg_query_request after; /* the after query's selectors */
	struct fgctl_period after_period;
	const char *socket;      /* borrowed */
	const char *cp_file;     /* borrowed; NULL unless --cp */
	char **inputs;           /* borrowed from argv */
	size_t n_inputs;
};

/* Reading one input into a model. */
struct reader {
	const struct render_args *args;
	const char *name; /* borrowed; for messages */
	struct fg_folded *model;       /* borrowed */
	struct fg_perfscript *perf;    /* borrowed; NULL for folded input */
	uint64_t n_bad;
	int err; /* the first fatal error, for the message */
};

static const char *describe_line_error(int r)
{
	switch (r) {
	case -ERANGE:
		return "count out of range";
	case -E2BIG:
		return "too many distinct stacks";
	default:
		return "expected 'frame;frame;... count'";
	}
}

static int folded_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	struct reader *rd = ctx;
	int r = fg_folded__add_line(rd->model, line, len);

	if (r >= 0)
		return 0;
	if (r != -EINVAL && r != -ERANGE)
		return r; /* out of memory or the stack cap: not the line's fault */
	if (++rd->n_bad <= MAX_REPORTED_ERRORS || rd->args->strict) {
		char shown[81];
		size_t n = MIN(len, sizeof(shown) - 1);

		/* The line as printable ASCII: a hostile file must not drive the terminal. */
		for (size_t i = 0; i < n; i++)
			shown[i] = line[i] >= 0x20 && line[i] < 0x7f ? line[i] : '?';
		shown[n] = '\0';
		fprintf(stderr, "fgctl: %s:%llu: malformed line (%s): %s%s\n", rd->name,
			(unsigned long long)lineno, describe_line_error(r), shown,
			len > n ? "..." : "");
	}
	return rd->args->strict ? -EBADMSG : 0;
}

static int perf_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	struct reader *rd = ctx;
	struct fg_perfscript_stats st;
	int r = fg_perfscript__feed(rd->perf, line, len, lineno);

	if (r < 0 || !rd->args->strict)
		return r;
	fg_perfscript__stats(rd->perf, &st);
	if (st.malformed == 0)
		return 0;
	fprintf(stderr, "fgctl: %s:%llu: not understood as perf script output\n", rd->name,
		(unsigned long long)st.first_bad_line);
	return -EBADMSG;
}

/* The count of malformed lines past those named one by one. */
static void report_skipped(const struct reader *rd)
{
	if (rd->n_bad > MAX_REPORTED_ERRORS)
		fprintf(stderr, "fgctl: %s: %llu malformed lines skipped in all\n", rd->name,
			(unsigned long long)rd->n_bad);
}

/* Reads the named input ("-" for stdin) into model. Returns 0 or an exit code. */
static int read_input(const struct render_args *args, const char *path, struct fg_folded *model)
{
	_cleanup_close_ int fd = -1;
	_cleanup_(fg_perfscript__freep) struct fg_perfscript *perf = NULL;
	struct reader rd = { .args = args, .name = path, .model = model };
	int r;

	if (strcmp(path, "-") == 0) {
		rd.name = "<stdin>";
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		fprintf(stderr, "fgctl: cannot read %s: %s\n", rd.name, strerror(errno));
		return FGCTL_EXIT_INPUT;
	}
	if (args->from == FROM_PERF) {
		r = fg_perfscript__new(model, &args->perf, &perf);
		if (r < 0) {
			fprintf(stderr, "fgctl: %s\n", strerror(-r));
			return FGCTL_EXIT_FAILURE;
		}
		rd.perf = perf;
		r = fg_lines_read_fd(fd, MAX_LINE, perf_line, &rd);
		if (r >= 0)
			r = fg_perfscript__finish(perf);
	} else {
		r = fg_lines_read_fd(fd, MAX_LINE, folded_line, &rd);
	}
	if (r == -EBADMSG) {
		fprintf(stderr, "fgctl: stopping at the first malformed line (--strict)\n");
		return FGCTL_EXIT_INPUT;
	}
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot read %s: %s\n", rd.name,
			r == -E2BIG ? "a line longer than 64 MiB" : strerror(-r));
		return FGCTL_EXIT_INPUT;
	}
	if (perf) {
		struct fg_perfscript_stats st;

		fg_perfscript__stats(perf, &st);
		if (st.multiple_events && !args->perf.event_filter)
			fprintf(stderr, "fgctl: %s holds several events; using '%s' (%llu samples of other "
					"events skipped; choose with --event-filter)\n",
				rd.name, st.event, (unsigned long long)st.filtered);
		if (st.malformed > 0) {
			fprintf(stderr, "fgctl: %s: %llu lines not understood as perf script output, "
					"skipped (first at line %llu)\n",
				rd.name, (unsigned long long)st.malformed,
				(unsigned long long)st.first_bad_line);
			if (args->strict)
				return FGCTL_EXIT_INPUT;
		}
	}
	report_skipped(&rd);
	return 0;
}

static int read_inputs(const struct render_args *args, char **paths, size_t n,
		       struct fg_folded *model)
{
	static char *const stdin_only[] = { "-" };

	if (n == 0) {
		if (isatty(STDIN_FILENO)) {
			fprintf(stderr, "fgctl: no input: give a file, or pipe folded stacks or "
					"perf script output in\n");
			return FGCTL_EXIT_USAGE;
		}
		paths = (char **)stdin_only;
		n = 1;
	}
	for (size_t i = 0; i < n; i++) {
		int r = read_input(args, paths[i], model);

		if (r != 0)
			return r;
	}
	return 0;
}

static bool wants_transform(const struct fg_transform_opts *t)
{
	return t->no_idle || t->include || t->exclude || t->focus || t->collapse_recursion ||
	       t->reverse;
}

/* Replaces *model with its filtered form. Returns 0 or an exit code. */
static int apply_filters(const struct render_args *args, struct fg_folded **model)
{
	struct fg_folded *out = NULL;
	struct fg_transform_stats st;
	char err[256] = "";
	int r;

	if (!wants_transform(&args->transform))
		return 0;
	r = fg_transform(*model, &args->transform, &out, &st, err, sizeof(err));
	if (r == -EINVAL) {
		fprintf(stderr, "fgctl: invalid regular expression: %s\n", err[0] ? err : "?");
		return FGCTL_EXIT_USAGE;
	}
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot filter the stacks: %s\n", strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	fg_folded__free(*model);
	*model = out;
	if (!args->quiet && st.dropped > 0)
		fprintf(stderr, "fgctl: the filters kept %llu stacks and dropped %llu (%.1f%% of the "
				"samples)\n",
			(unsigned long long)st.stacks_kept, (unsigned long long)st.stacks_dropped,
			100 * st.dropped / (st.kept + st.dropped));
	return 0;
}

static int palette_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	int r = fg_palette_map__add_line(ctx, line, len);

	return r == -EINVAL ? -EBADMSG : r < 0 ? r : 0;
}

/* Reads the --cp file if it exists. Returns 0 or an exit code. */
static int read_palette(const char *path, struct fg_palette_map *map)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0; /* created on the way out */
		fprintf(stderr, "fgctl: cannot read the palette %s: %s\n", path, strerror(errno));
		return FGCTL_EXIT_INPUT;
	}
	r = fg_lines_read_fd(fd, 1u << 20, palette_line, map);
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot read the palette %s: %s\n", path,
			r == -EBADMSG ? "not a palette file (expected 'name->rgb(r,g,b)' lines)"
				      : strerror(-r));
		return FGCTL_EXIT_INPUT;
	}
	return 0;
}

static int output_sink(void *ctx, const void *buf, size_t len)
{
	return fgctl_output_write(ctx, buf, len);
}

static int write_palette(const char *path, const struct fg_palette_map *map)
{
	struct fgctl_output out = { .path = path, .fd = -1 };
	int r;

	if (fgctl_output_open(&out) < 0)
		return FGCTL_EXIT_OUTPUT;
	r = fg_palette_map__write(map, output_sink, &out);
	if (r >= 0)
		r = fgctl_output_close(&out, true);
	fgctl_output_close(&out, false);
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot write the palette %s: %s\n", path, strerror(-r));
		return FGCTL_EXIT_OUTPUT;
	}
	return 0;
}

/* Writes model in the chosen format. Returns 0 or a negative errno. */
static int emit(const struct render_args *args, const struct fg_folded *model,
		struct fgctl_output *out, size_t *ret_elided)
{
	struct fg_flame *svg = NULL;
	struct fg_flame_html *html = NULL;
	size_t cursor = 0;
	int r;

	*ret_elided = 0;
	if (args->to == FG_FORMAT_FOLDED) {
		while ((r = fg_folded__emit(model, &cursor, output_sink, out, EMIT_BUDGET)) == 0)
			;
		return r < 0 ? r : 0;
	}
	if (args->to == FG_FORMAT_HTML) {
		r = fg_flame_html__new(model, &args->flame, &html);
		if (r < 0)
			return r;
		while ((r = fg_flame_html__emit(html, output_sink, out, EMIT_BUDGET)) == 0)
			;
		*ret_elided = fg_flame_html__n_elided(html);
		fg_flame_html__free(html);
		return r < 0 ? r : 0;
	}
	r = fg_flame__new(model, &args->flame, &svg);
	if (r < 0)
		return r;
	while ((r = fg_flame__emit(svg, output_sink, out, EMIT_BUDGET)) == 0)
		;
	*ret_elided = fg_flame__n_elided(svg);
	fg_flame__free(svg);
	return r < 0 ? r : 0;
}

/* Filters, sorts and writes model, and the palette file. Returns the exit code. */
static int finish(struct render_args *args, struct fg_folded **model)
{
	_cleanup_(fg_palette_map__freep) struct fg_palette_map *map = NULL;
	struct fgctl_output out = { .path = args->output, .fd = -1 };
	size_t elided = 0;
	int r;

	r = apply_filters(args, model);
	if (r != 0)
		return r;
	if (fg_folded__n_stacks(*model) == 0 || !(fg_folded__total(*model) > 0 ||
						  fg_folded__total_before(*model) > 0)) {
		fprintf(stderr, "fgctl: no samples to draw%s\n",
			wants_transform(&args->transform) ? " after the filters" : " in the input");
		return FGCTL_EXIT_INPUT;
	}
	if (fg_folded__is_diff(*model) && args->to != FG_FORMAT_FOLDED &&
	    !((args->flame.negate ? fg_folded__total_before(*model) : fg_folded__total(*model)) > 0)) {
		/* The widths come from that profile: there would be nothing to see. */
		fprintf(stderr, "fgctl: the %s profile has no samples%s; --negate draws the %s one\n",
			args->flame.negate ? "before" : "after",
			wants_transform(&args->transform) ? " after the filters" : "",
			args->flame.negate ? "after" : "before");
		return FGCTL_EXIT_INPUT;
	}
	r = fg_folded__sort(*model);
	if (r < 0) {
		fprintf(stderr, "fgctl: %s\n", strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	if (args->cp_file) {
		map = fg_palette_map__new();
		if (!map)
			return FGCTL_EXIT_FAILURE;
		r = read_palette(args->cp_file, map);
		if (r != 0)
			return r;
		args->flame.palette_map = map;
	}
	if (fgctl_output_open(&out) < 0)
		return FGCTL_EXIT_OUTPUT;
	r = emit(args, *model, &out, &elided);
	if (r >= 0)
		r = fgctl_output_close(&out, true);
	fgctl_output_close(&out, false);
	if (r == -EINVAL) {
		/* Options are checked before reading; what is left is the model's shape. */
		fprintf(stderr, "fgctl: cannot render: invalid options for this input\n");
		return FGCTL_EXIT_USAGE;
	}
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot write %s: %s\n",
			strcmp(args->output, "-") == 0 ? "stdout" : args->output, strerror(-r));
		return FGCTL_EXIT_OUTPUT;
	}
	if (map) {
		r = write_palette(args->cp_file, map);
		if (r != 0)
			return r;
	}
	if (!args->quiet && strcmp(args->output, "-") != 0) {
		char count[400]; /* DBL_MAX has 309 digits */

		/* The profile the widths come from. */
		fg_format_count(fg_folded__is_diff(*model) && args->flame.negate
					? fg_folded__total_before(*model)
					: fg_folded__total(*model),
				count, sizeof(count));
		fprintf(stderr, "fgctl: wrote %s: %zu stacks, %s %s", args->output,
			fg_folded__n_stacks(*model), count, args->flame.count_name);
		if (elided > 0)
			fprintf(stderr, "; %zu frames narrower than --minwidth left out", elided);
		fputc('\n', stderr);
	}
	return FGCTL_EXIT_OK;
}

/* ---- options ---- */

enum {
	OPT_TITLE = 0x100,
	OPT_SUBTITLE,
	OPT_WIDTH,
	OPT_HEIGHT,
	OPT_FONTTYPE,
	OPT_FONTSIZE,
	OPT_FONTWIDTH,
	OPT_MINWIDTH,
	OPT_COUNTNAME,
	OPT_NAMETYPE,
	OPT_COLORS,
	OPT_BGCOLORS,
	OPT_HASH,
	OPT_RANDOM,
	OPT_CP,
	OPT_CP_FILE,
	OPT_REVERSE,
	OPT_INVERTED,
	OPT_FLAMECHART,
	OPT_NEGATE,
	OPT_NOTES,
	OPT_TOTAL,
	OPT_FROM,
	OPT_STRICT,
	OPT_INCLUDE,
	OPT_EXCLUDE,
	OPT_IGNORE_CASE,
	OPT_FOCUS,
	OPT_COLLAPSE_RECURSION,
	OPT_NO_IDLE,
	OPT_PID,
	OPT_TID,
	OPT_KERNEL,
	OPT_JIT,
	OPT_ALL,
	OPT_ADDRS,
	OPT_NO_INLINE,
	OPT_EVENT_FILTER,
	OPT_COUNT_SAMPLES,
	OPT_NO_NORMALIZE,
	OPT_BASELINE,
};

/* Output, graph and filters: every mode of render and diff. */
static const struct option graph_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "height", required_argument, NULL, OPT_HEIGHT },
	{ "fonttype", required_argument, NULL, OPT_FONTTYPE },
	{ "fontsize", required_argument, NULL, OPT_FONTSIZE },
	{ "fontwidth", required_argument, NULL, OPT_FONTWIDTH },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ "countname", required_argument, NULL, OPT_COUNTNAME },
	{ "nametype", required_argument, NULL, OPT_NAMETYPE },
	{ "colors", required_argument, NULL, OPT_COLORS },
	{ "colours", required_argument, NULL, OPT_COLORS },
	{ "bgcolors", required_argument, NULL, OPT_BGCOLORS },
	{ "hash", no_argument, NULL, OPT_HASH },
	{ "random", no_argument, NULL, OPT_RANDOM },
	{ "cp", no_argument, NULL, OPT_CP },
	{ "cp-file", required_argument, NULL, OPT_CP_FILE },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "flamechart", no_argument, NULL, OPT_FLAMECHART },
	{ "negate", no_argument, NULL, OPT_NEGATE },
	{ "notes", required_argument, NULL, OPT_NOTES },
	{ "total", required_argument, NULL, OPT_TOTAL },
	{ "include", required_argument, NULL, OPT_INCLUDE },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "ignore-case", no_argument, NULL, OPT_IGNORE_CASE },
	{ "focus", required_argument, NULL, OPT_FOCUS },
	{ "collapse-recursion", no_argument, NULL, OPT_COLLAPSE_RECURSION },
	{ "no-idle", no_argument, NULL, OPT_NO_IDLE },
	{ "normalize", no_argument, NULL, 'n' },
	{ "no-normalize", no_argument, NULL, OPT_NO_NORMALIZE },
	{}
};

/* How input files are read: not with --baseline, whose profiles come from fgd. */
static const struct option input_options[] = {
	{ "from", required_argument, NULL, OPT_FROM },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "pid", no_argument, NULL, OPT_PID },
	{ "tid", no_argument, NULL, OPT_TID },
	{ "kernel", no_argument, NULL, OPT_KERNEL },
	{ "jit", no_argument, NULL, OPT_JIT },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "addrs", no_argument, NULL, OPT_ADDRS },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "event-filter", required_argument, NULL, OPT_EVENT_FILTER },
	{ "count-samples", no_argument, NULL, OPT_COUNT_SAMPLES },
	/* Here only to say it must be spelled out: see baseline_given(). */
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{}
};

/* diff --baseline: the after query's period and selectors, and where fgd is. */
static const struct option query_options[] = {
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	FGCTL_QUERY_OPTIONS,
	{ "socket", required_argument, NULL, 's' },
	{}
};

#define MAX_OPTIONS 80

/* The options of one mode: the tables a and b, joined into out (MAX_OPTIONS entries). */
static void join_options(struct option *out, const struct option *a, const struct option *b)
{
	size_t n = 0;

	for (; a->name; a++)
		out[n++] = *a;
	for (; b->name; b++)
		out[n++] = *b;
	out[n] = (struct option){};
}

static const char render_help_text[] =
	"Input:\n"
	"      --from FORMAT        folded (default): 'frame;frame;... count' lines, as\n"
	"                           stackcollapse-*.pl write them; blank and '#' lines are\n"
	"                           skipped, counts may have fractions, a line ending in two\n"
	"                           counts is a differential 'before after' pair.\n"
	"                           perf: the text of 'perf script', any -F selection.\n"
	"      --strict             stop at the first malformed line instead of skipping it\n"
	"\n"
	"perf script input (stackcollapse-perf.pl's options):\n"
	"      --pid                root frame 'comm-PID'\n"
	"      --tid                root frame 'comm-PID/TID'\n"
	"      --kernel             kernel frames get '_[k]'\n"
	"      --jit                JIT frames (perf-PID.map) get '_[j]'\n"
	"      --all                --kernel and --jit\n"
	"      --addrs              unknown symbols as their address, not [unknown]\n"
	"      --no-inline          leave out the inlined frames perf script prints\n"
	"      --event-filter EVENT the event to keep when the input holds several\n"
	"                           (default: the first one seen)\n"
	"      --count-samples      count each sample once; by default a sample counts\n"
	"                           its period (ns for cpu-clock), as stackcollapse-perf.pl\n"
	"\n"
	"Output:\n"
	"  -o, --output FILE        where to write; '-' for stdout (the default when it is\n"
	"                           not a terminal). The format follows the extension:\n"
	"                           .svg, .html, .folded or .txt\n"
	"  -f, --format FORMAT      svg, html (a page with a canvas graph and a table of the\n"
	"                           top functions, for profiles too big for an SVG) or folded\n"
	"  -q, --quiet              no summary, only warnings and errors\n"
	"\n"
	"Filters, applied in this order:\n"
	"      --no-idle            drop the kernel idle loop (swapper, cpuidle stacks)\n"
	"      --include REGEX      keep only stacks with a frame matching REGEX (POSIX ERE)\n"
	"      --exclude REGEX      drop stacks with a frame matching REGEX\n"
	"      --ignore-case        --include and --exclude ignore case\n"
	"      --focus FUNC         keep only stacks through the frame FUNC, rooted there\n"
	"      --collapse-recursion runs of the same frame become one\n"
	"      --reverse            each stack leaf first: who calls this leaf\n"
	"\n"
	"Graph (flamegraph.pl's names):\n"
	"      --title TEXT         title (default \"Flame Graph\", \"Icicle Graph\", ...)\n"
	"      --subtitle TEXT      second title line\n"
	"      --width PX           image width (default 1200)\n"
	"      --height PX          height of each frame (default 16)\n"
	"      --fonttype FONT      font (default Verdana)\n"
	"      --fontsize SIZE      font size (default 12)\n"
	"      --fontwidth RATIO    average glyph width per font size (default 0.59)\n"
	"      --minwidth PX|PCT%   leave out narrower frames (default 0.1 px)\n"
	"      --countname TEXT     what counts are (default \"samples\")\n"
	"      --nametype TEXT      what frames are (default \"Function:\")\n"
	"      --colors PALETTE     hot (the default), mem, io, wakeup, chain, java, js,\n"
	"                           perl, red, green, blue, aqua, yellow, purple, orange\n"
	"      --bgcolors COLOR     yellow, blue, green, grey or #rrggbb\n"
	"      --hash               colours from the name's hash (the default)\n"
	"      --random             random colours instead\n"
	"      --cp                 consistent palette: colours kept in ./palette.map\n"
	"      --cp-file FILE       the same, kept in FILE\n"
	"      --inverted           icicle graph: drawn top-down\n"
	"      --flamechart         flame chart: stacks in input order, not merged\n"
	"      --negate             differential: widths from the before profile\n"
	"      --notes TEXT         notes kept in the output\n"
	"      --total COUNT        the count that is 100% (if larger than the total)\n";

static void render_help(void)
{
	printf("Usage: fgctl render [OPTIONS] [FILE...]\n"
	       "\n"
	       "Draws a flame graph from folded stacks or perf script output, without fgd.\n"
	       "Reads the FILEs, or standard input. Examples:\n"
	       "  fgctl render in.folded -o out.svg\n"
	       "  perf script | fgctl render --from perf -o out.svg\n"
	       "  perf script | fgctl render --from perf --all -f folded > out.folded\n"
	       "\n");
	fputs(render_help_text, stdout);
}

static void diff_help(void)
{
	printf("Usage: fgctl diff [OPTIONS] BEFORE AFTER\n"
	       "       fgctl diff --baseline 'QUERY' [PERIOD] [SELECTORS] [OPTIONS]\n"
	       "\n"
	       "Draws a differential flame graph of two profiles: widths from AFTER (from\n"
	       "BEFORE with --negate), each frame red where its own samples grew and blue\n"
	       "where they shrank; tooltips give both counts and the change. The BEFORE\n"
	       "counts are first scaled to AFTER's total, so colours show changes in share\n"
	       "(the default, also with --baseline, whose two periods usually differ in\n"
	       "length).\n"
	       "  fgctl diff before.folded after.folded -o diff.svg\n"
	       "\n"
	       "  -n, --normalize          scale BEFORE to AFTER's total (the default)\n"
	       "      --no-normalize       compare raw counts, not shares\n"
	       "\n"
	       "Two periods of fgd's always-on sampling (from memory, and from the history\n"
	       "on disk for older times), instead of files:\n"
	       "  fgctl diff --baseline '--since -1h --until -55m' --last 5m -o what-changed.svg\n"
	       "\n"
	       "      --baseline QUERY     the before profile: a period of its own (--last, or\n"
	       "                           --since [--until]) and selectors, as for fgctl\n"
	       "                           snapshot, in one word. It is split like a shell\n"
	       "                           would: blanks separate options, '...' and \"...\"\n"
	       "                           quote, a backslash escapes; nothing else is special\n"
	       "  PERIOD, SELECTORS        the after profile: --last SPAN (default 5m), or\n"
	       "                           --since TIME [--until TIME]; -p PID, --comm REGEX,\n"
	       "                           --uid UID, --cgroup PATH, --exe PATH. Selectors\n"
	       "                           given here apply to the baseline too, unless it\n"
	       "                           gives the same selector itself\n"
	       "  -s, --socket PATH        fgd's socket\n"
	       "The graph's subtitle and the lines under it give both periods. With --baseline,\n"
	       "-p is the process selector and the input options (--from, --pid, ...) do not\n"
	       "apply.\n"
	       "\n");
	fputs(render_help_text, stdout);
}

static int bad_value(const char *opt, const char *value, const char *want)
{
	fprintf(stderr, "fgctl: invalid %s '%s': expected %s\n", opt, value, want);
	return FGCTL_EXIT_USAGE;
}

static int parse_number(const char *s, double min, double max, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

/*
 * Parses the options shared by render and diff into args; stops at the
 * first non-option's position in optind. Returns -1 to go on, or an exit
 * code.
 */
enum mode { MODE_RENDER, MODE_DIFF_FILES, MODE_DIFF_BASELINE };

static int parse_render_options(int argc, char **argv, struct render_args *args, enum mode mode,
				void (*help)(void))
{
	struct option options[MAX_OPTIONS];
	double v;
	int c, r;

	_Static_assert(ELEMENTSOF(graph_options) + ELEMENTSOF(input_options) <= MAX_OPTIONS &&
		       ELEMENTSOF(graph_options) + ELEMENTSOF(query_options) <= MAX_OPTIONS,
		       "MAX_OPTIONS too small");
	join_options(options, graph_options, mode == MODE_DIFF_BASELINE ? query_options : input_options);
	fg_flame_opts_init(&args->flame);
	args->output = NULL;
	args->to = FG_FORMAT_SVG;
	args->normalize = true;
	args->after = (struct fg_query_request){ .uid = -1, .limit = 20, .format = FG_FORMAT_FOLDED };
	/* 0, not 1: glibc then re-reads the option string, so options may follow the files. */
	optind = 0;
	while ((c = getopt_long(argc, argv, mode == MODE_DIFF_BASELINE ? "o:f:qhnp:s:" :
				mode == MODE_DIFF_FILES ? "o:f:qhn" : "o:f:qh", options, NULL)) >= 0) {
		if (mode == MODE_DIFF_BASELINE) {
			r = fgctl_query_option(c, optarg, &args->after, &args->after_period);
			if (r < 0)
				return FGCTL_EXIT_USAGE;
			if (r > 0)
				continue;
		}
		switch (c) {
		case 'o':
			args->output = optarg;
			break;
		case 'f':
			if (fg_format_from_name(optarg, &args->to) < 0)
				return bad_value("format", optarg, "svg, html or folded");
			args->to_given = true;
			break;
		case 'q':
			args->quiet = true;
			break;
		case 'h':
			help();
			return FGCTL_EXIT_OK;
		case OPT_FROM:
			if (strcmp(optarg, "folded") == 0)
				args->from = FROM_FOLDED;
			else if (strcmp(optarg, "perf") == 0)
				args->from = FROM_PERF;
			else
				return bad_value("--from", optarg, "folded or perf");
			break;
		case OPT_STRICT:
			args->strict = true;
			break;
		case OPT_TITLE:
			args->flame.title = optarg;
			break;
		case OPT_SUBTITLE:
			args->flame.subtitle = optarg;
			break;
		case OPT_WIDTH:
			if (parse_number(optarg, 21, 1000000, &v) < 0 || v != floor(v))
				return bad_value("--width", optarg, "a whole number of pixels, 21 to 1000000");
			args->flame.width = (unsigned)v;
			break;
		case OPT_HEIGHT:
			if (parse_number(optarg, 1, 1000, &v) < 0 || v != floor(v))
				return bad_value("--height", optarg, "a whole number of pixels, 1 to 1000");
			args->flame.frame_height = (unsigned)v;
			break;
		case OPT_FONTTYPE:
			args->flame.font_type = optarg;
			break;
		case OPT_FONTSIZE:
			if (parse_number(optarg, 0.1, 1000, &args->flame.font_size) < 0)
				return bad_value("--fontsize", optarg, "a size from 0.1 to 1000");
			break;
		case OPT_FONTWIDTH:
			if (parse_number(optarg, 0.01, 10, &args->flame.font_width) < 0)
				return bad_value("--fontwidth", optarg, "a ratio from 0.01 to 10");
			break;
		case OPT_MINWIDTH: {
			_cleanup_free_ char *num = strdup(optarg);
			size_t len = num ? strlen(num) : 0;

			if (!num)
				return FGCTL_EXIT_FAILURE;
			args->flame.min_width_pct = len > 0 && num[len - 1] == '%';
			if (args->flame.min_width_pct)
				num[len - 1] = '\0';
			if (parse_number(num, 0, args->flame.min_width_pct ? 100 : 1e6,
					 &args->flame.min_width) < 0)
				return bad_value("--minwidth", optarg, "pixels (0.1) or a percentage (0.5%)");
			break;
		}
		case OPT_COUNTNAME:
			args->flame.count_name = optarg;
			break;
		case OPT_NAMETYPE:
			args->flame.name_type = optarg;
			break;
		case OPT_COLORS:
			if (fg_palette_from_string(optarg, &args->flame.palette) < 0)
				return bad_value("--colors", optarg, fg_palette_names);
			break;
		case OPT_BGCOLORS: {
			char top[8], bottom[8];

			if (fg_bgcolors_parse(optarg, top, bottom) < 0)
				return bad_value("--bgcolors", optarg, "yellow, blue, green, grey or #rrggbb");
			args->flame.bgcolors = optarg;
			break;
		}
		case OPT_HASH:
			args->flame.random = false;
			break;
		case OPT_RANDOM:
			args->flame.random = true;
			args->flame.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
			break;
		case OPT_CP:
			args->cp_file = "palette.map";
			break;
		case OPT_CP_FILE:
			args->cp_file = optarg;
			break;
		case OPT_REVERSE:
			args->transform.reverse = true;
			break;
		case OPT_INVERTED:
			args->flame.inverted = true;
			break;
		case OPT_FLAMECHART:
			args->flame.flamechart = true;
			break;
		case OPT_NEGATE:
			args->flame.negate = true;
			break;
		case OPT_NOTES:
			args->flame.notes = optarg;
			break;
		case OPT_TOTAL:
			if (parse_number(optarg, 0, 1e300, &args->flame.total) < 0)
				return bad_value("--total", optarg, "a count");
			break;
		case OPT_INCLUDE:
			args->transform.include = optarg;
			break;
		case OPT_EXCLUDE:
			args->transform.exclude = optarg;
			break;
		case OPT_IGNORE_CASE:
			args->transform.ignore_case = true;
			break;
		case OPT_FOCUS:
			args->transform.focus = optarg;
			break;
		case OPT_COLLAPSE_RECURSION:
			args->transform.collapse_recursion = true;
			break;
		case OPT_NO_IDLE:
			args->transform.no_idle = true;
			break;
		case OPT_PID:
			args->perf.pid = true;
			break;
		case OPT_TID:
			args->perf.tid = true;
			break;
		case OPT_KERNEL:
			args->perf.annotate_kernel = true;
			break;
		case OPT_JIT:
			args->perf.annotate_jit = true;
			break;
		case OPT_ALL:
			args->perf.annotate_kernel = args->perf.annotate_jit = true;
			break;
		case OPT_ADDRS:
			args->perf.addrs = true;
			break;
		case OPT_NO_INLINE:
			args->perf.no_inline = true;
			break;
		case OPT_EVENT_FILTER:
			args->perf.event_filter = optarg;
			break;
		case OPT_COUNT_SAMPLES:
			args->perf.count_samples = true;
			break;
		case 'n':
			args->normalize = true;
			break;
		case OPT_NO_NORMALIZE:
			args->normalize = false;
			break;
		case OPT_BASELINE:
			if (mode != MODE_DIFF_BASELINE) {
				/* An abbreviation: the options were read as a diff of files. */
				fprintf(stderr, mode == MODE_RENDER ? "fgctl: --baseline is an option of fgctl diff\n" :
					"fgctl: spell --baseline out in full\n");
				return FGCTL_EXIT_USAGE;
			}
			args->baseline = optarg;
			break;
		case 's':
			args->socket = optarg;
			break;
		default:
			fprintf(stderr, "Try 'fgctl %s --help'.\n", argv[0]);
			return FGCTL_EXIT_USAGE;
		}
	}
	args->inputs = argv + optind;
	args->n_inputs = (size_t)(argc - optind);

	if (!args->output) {
		if (isatty(STDOUT_FILENO)) {
			fprintf(stderr, "fgctl: no output: give -o FILE.svg (or .html, .folded), or -o - "
					"for stdout\n");
			return FGCTL_EXIT_USAGE;
		}
		args->output = "-";
	}
	if (strcmp(args->output, "-") != 0 && fgctl_is_directory(args->output)) {
		fprintf(stderr, "fgctl: cannot write %s: it is a directory\n", args->output);
		return FGCTL_EXIT_OUTPUT;
	}
	if (!args->to_given && strcmp(args->output, "-") != 0 &&
	    fgctl_format_for_path(args->output, &args->to) < 0) {
		fprintf(stderr, "fgctl: cannot tell the format from '%s': name it .svg, .html, .folded "
				"or .txt, or give --format\n", args->output);
		return FGCTL_EXIT_USAGE;
	}
	if (args->flame.flamechart && args->to == FG_FORMAT_FOLDED) {
		fprintf(stderr, "fgctl: --flamechart draws a graph; it has no folded form\n");
		return FGCTL_EXIT_USAGE;
	}
	return -1;
}

int fgctl_verb_render(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	_cleanup_(fg_folded__freep) struct fg_folded *model = NULL;
	struct render_args args = {};
	int r;

	r = parse_render_options(argc, argv, &args, MODE_RENDER, render_help);
	if (r >= 0)
		return r;
	model = fg_folded__new();
	if (!model)
		return FGCTL_EXIT_FAILURE;
	if (args.flame.flamechart)
		fg_folded__set_sequence(model);
	r = read_inputs(&args, args.inputs, args.n_inputs, model);
	if (r != 0)
		return r;
	return finish(&args, &model);
}

/* ---- diff --baseline: both profiles from fgd ---- */

/* Whether argv asks for diff --baseline, which changes the options (-p takes a pid). */
static bool baseline_given(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--baseline") == 0 || strncmp(argv[i], "--baseline=", 11) == 0)
			return true;
	return false;
}

/* Reads the words of --baseline as query options into q, range included. Returns 0 or an exit code. */
static int parse_baseline(const char *text, struct fg_query_request *q)
{
	static const struct option options[] = { FGCTL_QUERY_OPTIONS, {} };
	struct fgctl_period period = {};
	_cleanup_free_ char **words = NULL, **argv = NULL;
	const char *why = NULL;
	size_t n, offset = 0;
	int c, r;

	r = fg_split_args(text, &words, &n, &why, &offset);
	if (r == -EINVAL) {
		fprintf(stderr, "fgctl: cannot split --baseline '%s' into options: %s (at byte %zu)\n",
			text, why, offset + 1);
		return FGCTL_EXIT_USAGE;
	}
	if (r < 0 || !(argv = calloc(n + 2, sizeof(*argv))))
		return FGCTL_EXIT_FAILURE;
	if (n == 0) {
		fprintf(stderr, "fgctl: --baseline is empty: give its period, e.g. --baseline "
				"'--since -1h --until -55m'\n");
		return FGCTL_EXIT_USAGE;
	}
	/* getopt's own messages then read "fgctl diff --baseline: unrecognized option ...". */
	argv[0] = (char *)"fgctl diff --baseline";
	memcpy(argv + 1, words, n * sizeof(*argv));
	optind = 0;
	while ((c = getopt_long((int)n + 1, argv, "+p:", options, NULL)) >= 0) {
		r = fgctl_query_option(c, optarg, q, &period);
		if (r < 0)
			return FGCTL_EXIT_USAGE;
		if (r == 0) {
			fprintf(stderr, "fgctl: --baseline takes a period (--last, --since, --until) and "
					"selectors (-p, --comm, --uid, --cgroup, --exe) only\n");
			return FGCTL_EXIT_USAGE;
		}
	}
	if (optind <= (int)n) {
		fprintf(stderr, "fgctl: unexpected '%s' in --baseline: it takes options only\n",
			argv[optind]);
		return FGCTL_EXIT_USAGE;
	}
	if (!period.last && !period.since) {
		fprintf(stderr, "fgctl: --baseline needs a period of its own: --last SPAN, or --since "
				"TIME [--until TIME]\n");
		return FGCTL_EXIT_USAGE;
	}
	/* Here, while the period's strings (borrowed from words) live. */
	return fgctl_query_range(q, &period, NULL) < 0 ? FGCTL_EXIT_USAGE : 0;
}

/* Selectors given outside --baseline apply to both profiles, unless the baseline sets the same one. */
static void inherit_selectors(struct fg_query_request *before, const struct fg_query_request *after)
{
	if (!before->pid)
		before->pid = after->pid;
	if (before->uid < 0)
		before->uid = after->uid;
	if (!before->comm[0])
		strcpy(before->comm, after->comm);
	if (!before->cgroup[0])
		strcpy(before->cgroup, after->cgroup);
	if (!before->exe[0])
		strcpy(before->exe, after->exe);
}

/* One profile arriving from fgd as folded text, line by line into its model. */
struct fetched {
	struct reader rd;
	struct fg_lines lines;
};

static int fetched_open(void *ctx)
{
	return FGCTL_EXIT_OK;
}

static int fetched_write(void *ctx, const char *data, size_t len)
{
	struct fetched *f = ctx;
	int r = fg_lines_feed(&f->lines, data, len);

	if (r < 0) {
		fprintf(stderr, "fgctl: cannot read the %s profile from fgd: %s\n", f->rd.name,
			r == -E2BIG ? "too many distinct stacks, or a line past 64 MiB" : strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	return FGCTL_EXIT_OK;
}

/* Fetches one side's profile, named label in messages. Returns 0 or an exit code. */
static int fetch_profile(const struct render_args *args, const char *label,
			 const struct fg_query_request *q, struct fg_folded *model,
			 struct json_object **ret_meta)
{
	static const struct fgctl_sink to_model = { fetched_open, fetched_write };
	struct fg_request req = { .cmd = FG_CMD_SNAPSHOT, .query = *q };
	struct fetched f = { .rd = { .args = args, .name = label, .model = model } };
	int r;

	req.query.format = FG_FORMAT_FOLDED;
	fg_lines_init(&f.lines, MAX_LINE, folded_line, &f.rd);
	r = fgctl_query_snapshot(args->socket, &req, label, &to_model, &f, ret_meta);
	if (r == FGCTL_EXIT_OK && fg_lines_finish(&f.lines) < 0) {
		fprintf(stderr, "fgctl: cannot read the %s profile from fgd: too many distinct stacks\n",
			label);
		r = FGCTL_EXIT_FAILURE;
	}
	fg_lines_done(&f.lines);
	if (r == FGCTL_EXIT_OK)
		report_skipped(&f.rd);
	return r;
}

/* "2024-03-10 10:00:00 to 10:05:00": the span of the slices a profile came from. */
static void describe_span(struct json_object *meta, char *buf, size_t size)
{
	time_t from = (time_t)(fgctl_get_int(meta, "first_ms") / 1000);
	time_t to = (time_t)(fgctl_get_int(meta, "last_ms") / 1000);
	char a[32], b[32];
	struct tm ta, tb;

	localtime_r(&from, &ta);
	localtime_r(&to, &tb);
	strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", &ta);
	strftime(b, sizeof(b), ta.tm_yday == tb.tm_yday && ta.tm_year == tb.tm_year ?
			       "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tb);
	snprintf(buf, size, "%s to %s", a, b);
}

/* The after side's period options, as given or defaulted. */
static void describe_period(const struct fgctl_period *p, char *buf, size_t size)
{
	snprintf(buf, size, "%s %s%s%s", p->since ? "--since" : "--last",
		 p->since ? p->since : p->last ? p->last : "5m", p->until ? " --until " : "",
		 p->until ? p->until : "");
}

/* "pid 12, comm ^x$", or "all processes". */
static void describe_selectors(const struct fg_query_request *q, char *buf, size_t size)
{
	size_t n = 0;

#define PIECE(...) n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__)
	buf[0] = '\0';
	if (q->pid)
		PIECE("%spid %d", n ? ", " : "", (int)q->pid);
	if (q->comm[0])
		PIECE("%scomm %s", n ? ", " : "", q->comm);
	if (q->uid >= 0)
		PIECE("%suid %lld", n ? ", " : "", (long long)q->uid);
	if (q->cgroup[0])
		PIECE("%scgroup %s", n ? ", " : "", q->cgroup);
	if (q->exe[0])
		PIECE("%sexe %s", n ? ", " : "", q->exe);
#undef PIECE
	if (n == 0)
		snprintf(buf, size, "all processes");
}

/* Compares before with after and writes the differential profile. Returns the exit code. */
static int compare(struct render_args *args, const struct fg_folded *before,
		   const struct fg_folded *after)
{
	_cleanup_(fg_folded__freep) struct fg_folded *diff = NULL;
	int r = fg_folded_diff(before, after, args->normalize, &diff);

	if (r < 0) {
		fprintf(stderr, "fgctl: cannot compare the profiles: %s\n", strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	return finish(args, &diff);
}

/* Room for a line naming a query: its options as given, or five selectors. */
#define DESCRIPTION_MAX 8192

static int diff_baseline(struct render_args *args)
{
	_cleanup_(fg_folded__freep) struct fg_folded *before = NULL, *after = NULL;
	_cleanup_(json_object_putp) struct json_object *meta_before = NULL, *meta_after = NULL;
	struct fg_query_request bq = { .uid = -1, .limit = 20 }, aq = args->after;
	char span_before[96], span_after[96], period_after[160], subtitle[256], scale[160];
	char sel_before[DESCRIPTION_MAX], sel_after[DESCRIPTION_MAX];
	char info_before[DESCRIPTION_MAX], info_after[DESCRIPTION_MAX], info_sel[2 * DESCRIPTION_MAX + 64];
	const char *info[5] = { info_before, info_after, info_sel, scale, NULL };
	double ratio;
	int r;

	if (args->n_inputs > 0) {
		fprintf(stderr, "fgctl: with --baseline, diff compares two periods of fgd's always-on "
				"sampling and takes no files ('%s')\n", args->inputs[0]);
		return FGCTL_EXIT_USAGE;
	}
	if (!args->baseline) {
		fprintf(stderr, "fgctl: --baseline needs the baseline's query options\n");
		return FGCTL_EXIT_USAGE;
	}
	r = parse_baseline(args->baseline, &bq);
	if (r != 0)
		return r;
	inherit_selectors(&bq, &aq);
	if (fgctl_query_range(&aq, &args->after_period, "5m") < 0)
		return FGCTL_EXIT_USAGE;
	before = fg_folded__new();
	after = fg_folded__new();
	if (!before || !after)
		return FGCTL_EXIT_FAILURE;
	r = fetch_profile(args, "baseline", &bq, before, &meta_before);
	if (r == 0)
		r = fetch_profile(args, "after", &aq, after, &meta_after);
	if (r != 0)
		return r;

	/* What was compared, for the graph's headings and the summary. */
	describe_span(meta_before, span_before, sizeof(span_before));
	describe_span(meta_after, span_after, sizeof(span_after));
	describe_period(&args->after_period, period_after, sizeof(period_after));
	describe_selectors(&bq, sel_before, sizeof(sel_before));
	describe_selectors(&aq, sel_after, sizeof(sel_after));
	snprintf(info_before, sizeof(info_before), "baseline (%s): %s, %" PRId64 " samples in %" PRId64
		 " slices", args->baseline, span_before, fgctl_get_int(meta_before, "samples"),
		 fgctl_get_int(meta_before, "slices"));
	snprintf(info_after, sizeof(info_after), "after (%s): %s, %" PRId64 " samples in %" PRId64
		 " slices", period_after, span_after, fgctl_get_int(meta_after, "samples"),
		 fgctl_get_int(meta_after, "slices"));
	if (strcmp(sel_before, sel_after) == 0)
		snprintf(info_sel, sizeof(info_sel), "processes: %s", sel_after);
	else
		snprintf(info_sel, sizeof(info_sel), "processes: baseline %s; after %s", sel_before,
			 sel_after);
	ratio = fg_folded__total(before) > 0 ? fg_folded__total(after) / fg_folded__total(before) : 0;
	if (args->normalize)
		snprintf(scale, sizeof(scale), "baseline counts scaled by %.4g to the after total "
			 "(--no-normalize: raw counts)", ratio);
	else
		snprintf(scale, sizeof(scale), "raw counts, not normalized (the after profile has "
			 "%.4g times the samples)", ratio);
	snprintf(subtitle, sizeof(subtitle), "always-on: baseline %s, after %s", span_before, span_after);
	if (!args->flame.subtitle)
		args->flame.subtitle = subtitle;
	args->flame.info = info;
	if (!args->quiet)
		fprintf(stderr, "fgctl: %s\nfgctl: %s\nfgctl: %s\n", info_before, info_after, scale);
	fgctl_note_kernel_hidden(stderr, fgctl_get_int(meta_before, "kernel_hidden") ? meta_before : meta_after);
	return compare(args, before, after);
}

int fgctl_verb_diff(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	_cleanup_(fg_folded__freep) struct fg_folded *before = NULL, *after = NULL;
	bool from_fgd = baseline_given(argc, argv);
	struct render_args args = { .socket = ctx->socket };
	int r;

	r = parse_render_options(argc, argv, &args, from_fgd ? MODE_DIFF_BASELINE : MODE_DIFF_FILES,
				 diff_help);
	if (r >= 0)
		return r;
	if (args.flame.flamechart) {
		fprintf(stderr, "fgctl: a flame chart cannot be differential\n");
		return FGCTL_EXIT_USAGE;
	}
	if (from_fgd)
		return diff_baseline(&args);
	if (args.n_inputs != 2) {
		fprintf(stderr, "fgctl: diff takes two profiles, BEFORE and AFTER. Try 'fgctl diff "
				"--help'.\n");
		return FGCTL_EXIT_USAGE;
	}
	before = fg_folded__new();
	after = fg_folded__new();
	if (!before || !after)
		return FGCTL_EXIT_FAILURE;
	r = read_inputs(&args, args.inputs, 1, before);
	if (r == 0)
		r = read_inputs(&args, args.inputs + 1, 1, after);
	if (r != 0)
		return r;
	if (fg_folded__is_diff(before) || fg_folded__is_diff(after)) {
		fprintf(stderr, "fgctl: the inputs of diff must be plain profiles, one count per line\n");
		return FGCTL_EXIT_INPUT;
	}
	return compare(&args, before, after);
}
