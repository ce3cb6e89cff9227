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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fgctl-client.h"
#include "fgctl-output.h"
#include "fgctl-render.h"
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
	if (rd.n_bad > MAX_REPORTED_ERRORS)
		fprintf(stderr, "fgctl: %s: %llu malformed lines skipped in all\n", rd.name,
			(unsigned long long)rd.n_bad);
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
};

static const struct option render_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "strict", no_argument, NULL, OPT_STRICT },
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
	{ "pid", no_argument, NULL, OPT_PID },
	{ "tid", no_argument, NULL, OPT_TID },
	{ "kernel", no_argument, NULL, OPT_KERNEL },
	{ "jit", no_argument, NULL, OPT_JIT },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "addrs", no_argument, NULL, OPT_ADDRS },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "event-filter", required_argument, NULL, OPT_EVENT_FILTER },
	{ "count-samples", no_argument, NULL, OPT_COUNT_SAMPLES },
	{ "no-normalize", no_argument, NULL, OPT_NO_NORMALIZE },
	{}
};

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
	       "\n"
	       "Draws a differential flame graph of two profiles: widths from AFTER (from\n"
	       "BEFORE with --negate), each frame red where its own samples grew and blue\n"
	       "where they shrank; tooltips give both counts and the change. The BEFORE\n"
	       "counts are first scaled to AFTER's total, so colours show changes in share.\n"
	       "  fgctl diff before.folded after.folded -o diff.svg\n"
	       "\n"
	       "      --no-normalize       compare raw counts, not shares\n"
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
static int parse_render_options(int argc, char **argv, struct render_args *args,
				void (*help)(void))
{
	double v;
	int c;

	fg_flame_opts_init(&args->flame);
	args->output = NULL;
	args->to = FG_FORMAT_SVG;
	args->normalize = true;
	/* 0, not 1: glibc then re-reads the option string, so options may follow the files. */
	optind = 0;
	while ((c = getopt_long(argc, argv, "o:f:qh", render_options, NULL)) >= 0) {
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
		case OPT_NO_NORMALIZE:
			args->normalize = false;
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

int fgctl_verb_render(int argc, char **argv)
{
	_cleanup_(fg_folded__freep) struct fg_folded *model = NULL;
	struct render_args args = {};
	int r;

	r = parse_render_options(argc, argv, &args, render_help);
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

int fgctl_verb_diff(int argc, char **argv)
{
	_cleanup_(fg_folded__freep) struct fg_folded *before = NULL, *after = NULL, *diff = NULL;
	struct render_args args = {};
	int r;

	r = parse_render_options(argc, argv, &args, diff_help);
	if (r >= 0)
		return r;
	if (args.n_inputs != 2) {
		fprintf(stderr, "fgctl: diff takes two profiles, BEFORE and AFTER. Try 'fgctl diff "
				"--help'.\n");
		return FGCTL_EXIT_USAGE;
	}
	if (args.flame.flamechart) {
		fprintf(stderr, "fgctl: a flame chart cannot be differential\n");
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
	r = fg_folded_diff(before, after, args.normalize, &diff);
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot compare the profiles: %s\n", strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	return finish(&args, &diff);
}
