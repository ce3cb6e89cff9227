/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/cpulist.h"
#include "fgctl-client.h"
#include "fgctl-graphopts.h"
#include "fgctl-output.h"
#include "render/palette.h"

void fgctl_graph_opts_init(struct fgctl_graph_opts *o)
{
	*o = (struct fgctl_graph_opts){
		.to = FG_FORMAT_SVG,
		.normalize = true,
		/* A folded file's root frame is the process's: -u and -k keep it. */
		.transform = { .roots = 1 },
	};
	fg_flame_opts_init(&o->flame);
}

static int bad_value(const char *opt, const char *value, const char *want, FILE *err)
{
	fprintf(err, "fgctl: invalid %s '%s': expected %s\n", opt, value, want);
	return -1;
}

/* The first len bytes of s as a number from min to max, and nothing else. 0 or -EINVAL. */
static int parse_number(const char *s, size_t len, double min, double max, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || end != s + len || errno || !isfinite(v) || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* The options from --title to --total change how a graph is drawn, but --reverse its stacks. */
static bool is_look_option(int c)
{
	return c >= FGCTL_GRAPH_OPT_TITLE && c <= FGCTL_GRAPH_OPT_TOTAL &&
	       c != FGCTL_GRAPH_OPT_REVERSE;
}

/* How the graph is drawn: flamegraph.pl's options. */
static int look_option(int c, const char *arg, struct fgctl_graph_opts *o, FILE *err)
{
	double v;

	switch (c) {
	case FGCTL_GRAPH_OPT_TITLE:
		o->flame.title = arg;
		return 1;
	case FGCTL_GRAPH_OPT_SUBTITLE:
		o->flame.subtitle = arg;
		return 1;
	case FGCTL_GRAPH_OPT_WIDTH:
		if (parse_number(arg, strlen(arg), 21, 1000000, &v) < 0 || v != floor(v))
			return bad_value("--width", arg, "a whole number of pixels, 21 to 1000000",
					 err);
		o->flame.width = (unsigned)v;
		return 1;
	case FGCTL_GRAPH_OPT_HEIGHT:
		if (parse_number(arg, strlen(arg), 1, 1000, &v) < 0 || v != floor(v))
			return bad_value("--height", arg, "a whole number of pixels, 1 to 1000",
					 err);
		o->flame.frame_height = (unsigned)v;
		return 1;
	case FGCTL_GRAPH_OPT_FONTTYPE:
		o->flame.font_type = arg;
		return 1;
	case FGCTL_GRAPH_OPT_FONTSIZE:
		if (parse_number(arg, strlen(arg), 0.1, 1000, &o->flame.font_size) < 0)
			return bad_value("--fontsize", arg, "a size from 0.1 to 1000", err);
		return 1;
	case FGCTL_GRAPH_OPT_FONTWIDTH:
		if (parse_number(arg, strlen(arg), 0.01, 10, &o->flame.font_width) < 0)
			return bad_value("--fontwidth", arg, "a ratio from 0.01 to 10", err);
		return 1;
	case FGCTL_GRAPH_OPT_MINWIDTH: {
		size_t len = strlen(arg);
		bool pct = len > 0 && arg[len - 1] == '%';

		/* The number before a final '%', which makes it a percentage of the total. */
		if (parse_number(arg, len - pct, 0, pct ? 100 : 1e6, &o->flame.min_width) < 0)
			return bad_value("--minwidth", arg, "pixels (0.1) or a percentage (0.5%)",
					 err);
		o->flame.min_width_pct = pct;
		return 1;
	}
	case FGCTL_GRAPH_OPT_COUNTNAME:
		o->flame.count_name = arg;
		o->count_name_given = true;
		return 1;
	case FGCTL_GRAPH_OPT_NAMETYPE:
		o->flame.name_type = arg;
		return 1;
	case FGCTL_GRAPH_OPT_COLORS:
		if (fg_palette_from_string(arg, &o->flame.palette) < 0)
			return bad_value("--colors", arg, fg_palette_names, err);
		o->palette_given = true;
		return 1;
	case FGCTL_GRAPH_OPT_BGCOLORS: {
		char top[8], bottom[8];

		if (fg_bgcolors_parse(arg, top, bottom) < 0)
			return bad_value("--bgcolors", arg, "yellow, blue, green, grey or #rrggbb",
					 err);
		o->flame.bgcolors = arg;
		return 1;
	}
	case FGCTL_GRAPH_OPT_HASH:
		o->flame.random = false;
		return 1;
	case FGCTL_GRAPH_OPT_RANDOM:
		o->flame.random = true;
		o->flame.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
		return 1;
	case FGCTL_GRAPH_OPT_CP:
		o->cp_file = "palette.map";
		return 1;
	case FGCTL_GRAPH_OPT_CP_FILE:
		o->cp_file = arg;
		return 1;
	case FGCTL_GRAPH_OPT_INVERTED:
		o->flame.inverted = true;
		return 1;
	case FGCTL_GRAPH_OPT_FLAMECHART:
		o->flame.flamechart = true;
		return 1;
	case FGCTL_GRAPH_OPT_NEGATE:
		o->flame.negate = true;
		return 1;
	case FGCTL_GRAPH_OPT_NOTES:
		o->flame.notes = arg;
		return 1;
	case FGCTL_GRAPH_OPT_TOTAL:
		if (parse_number(arg, strlen(arg), 0, 1e300, &o->flame.total) < 0)
			return bad_value("--total", arg, "a count", err);
		return 1;
	}
	return 0;
}

/* What of the profile is drawn: the filters, in the order they apply. */
static int filter_option(int c, const char *arg, struct fgctl_graph_opts *o, FILE *err)
{
	switch (c) {
	case FGCTL_GRAPH_OPT_REVERSE:
		o->transform.reverse = true;
		return 1;
	case FGCTL_GRAPH_OPT_INCLUDE:
		o->transform.include = arg;
		return 1;
	case FGCTL_GRAPH_OPT_EXCLUDE:
		o->transform.exclude = arg;
		return 1;
	case FGCTL_GRAPH_OPT_IGNORE_CASE:
		o->transform.ignore_case = true;
		return 1;
	case FGCTL_GRAPH_OPT_FOCUS:
		o->transform.focus = arg;
		return 1;
	case FGCTL_GRAPH_OPT_COLLAPSE_RECURSION:
		o->transform.collapse_recursion = true;
		return 1;
	case FGCTL_GRAPH_OPT_STACKCOLLAPSE_NAMES:
		o->transform.stackcollapse_names = true;
		return 1;
	case 'u':
		o->transform.user_only = true;
		return 1;
	case 'k':
		o->transform.kernel_only = true;
		return 1;
	case FGCTL_GRAPH_OPT_NO_IDLE:
		o->transform.no_idle = true;
		return 1;
	}
	return 0;
}

/* How input files are read: --from, and stackcollapse-perf.pl's options. */
static int input_option(int c, const char *arg, struct fgctl_graph_opts *o, FILE *err)
{
	switch (c) {
	case FGCTL_GRAPH_OPT_FROM:
		if (strcmp(arg, "folded") == 0)
			o->from = FGCTL_FROM_FOLDED;
		else if (strcmp(arg, "perf") == 0)
			o->from = FGCTL_FROM_PERF;
		else
			return bad_value("--from", arg, "folded or perf", err);
		return 1;
	case FGCTL_GRAPH_OPT_STRICT:
		o->strict = true;
		return 1;
	case FGCTL_GRAPH_OPT_CPU: {
		int *cpus = NULL;
		size_t n = 0;

		if (fg_cpulist_parse(arg, &cpus, &n) < 0 || n == 0 || n > FGCTL_MAX_CPUS) {
			free(cpus);
			return bad_value("--cpu", arg, "a CPU list such as 0-3,8", err);
		}
		memcpy(o->cpus, cpus, n * sizeof(*cpus));
		free(cpus);
		o->perf.cpus = o->cpus;
		o->perf.n_cpus = n;
		return 1;
	}
	case FGCTL_GRAPH_OPT_PID:
		o->perf.pid = true;
		return 1;
	case FGCTL_GRAPH_OPT_TID:
		o->perf.tid = true;
		return 1;
	case FGCTL_GRAPH_OPT_KERNEL:
		o->perf.annotate_kernel = true;
		return 1;
	case FGCTL_GRAPH_OPT_JIT:
		o->perf.annotate_jit = true;
		return 1;
	case FGCTL_GRAPH_OPT_ALL:
		o->perf.annotate_kernel = o->perf.annotate_jit = true;
		return 1;
	case FGCTL_GRAPH_OPT_ADDRS:
		o->perf.addrs = true;
		return 1;
	case FGCTL_GRAPH_OPT_NO_INLINE:
		o->perf.no_inline = true;
		return 1;
	case FGCTL_GRAPH_OPT_EVENT_FILTER:
		o->perf.event_filter = arg;
		return 1;
	case FGCTL_GRAPH_OPT_COUNT_SAMPLES:
		o->perf.count_samples = true;
		return 1;
	}
	return 0;
}

int fgctl_graph_option(int c, const char *arg, struct fgctl_graph_opts *o, FILE *err)
{
	int r;

	if (is_look_option(c) && !o->look_option)
		o->look_option = c;
	switch (c) {
	case 'o':
		o->output = arg;
		return 1;
	case 'f':
		if (fg_format_from_name(arg, &o->to) < 0 || o->to == FG_FORMAT_TIMED)
			return bad_value("format", arg, "svg, html, folded, pprof or speedscope",
					 err);
		o->to_given = true;
		return 1;
	case 'q':
		o->quiet = true;
		return 1;
	case 'n':
		o->normalize = true;
		return 1;
	case FGCTL_GRAPH_OPT_NO_NORMALIZE:
		o->normalize = false;
		return 1;
	}
	r = look_option(c, arg, o, err);
	if (r == 0)
		r = filter_option(c, arg, o, err);
	if (r == 0)
		r = input_option(c, arg, o, err);
	return r;
}

int fgctl_graph_opts_check(struct fgctl_graph_opts *o, const char *what, FILE *err)
{
	if (o->perf.n_cpus && o->from != FGCTL_FROM_PERF) {
		fprintf(err, "fgctl: --cpu picks perf script samples by their CPU: give --from "
			     "perf\n");
		return FGCTL_EXIT_USAGE;
	}
	if (o->transform.user_only && o->transform.kernel_only) {
		fprintf(err, "fgctl: -u (--user-only) and -k (--kernel-only) exclude each other\n");
		return FGCTL_EXIT_USAGE;
	}
	if (!o->output && isatty(STDOUT_FILENO)) {
		/* Nobody named it, and a graph is not for the terminal: a file here, named. */
		fgctl_default_output(what, o->to_given ? o->to : FG_FORMAT_SVG, o->default_output);
		o->output = o->default_output;
	}
	if (!o->output)
		o->output = "-";
	if (strcmp(o->output, "-") != 0 && fgctl_is_directory(o->output)) {
		fprintf(err, "fgctl: cannot write %s: it is a directory\n", o->output);
		return FGCTL_EXIT_OUTPUT;
	}
	if (!o->to_given && strcmp(o->output, "-") != 0 &&
	    (fgctl_format_for_path(o->output, &o->to) < 0 || o->to == FG_FORMAT_TIMED)) {
		fprintf(err,
			"fgctl: cannot tell the format from '%s': name it .svg, .html, .folded, "
			".txt, .pb.gz or .speedscope.json, or give --format\n",
			o->output);
		return FGCTL_EXIT_USAGE;
	}
	return fgctl_graph_check_look(o, o->to, err);
}

int fgctl_graph_check_look(const struct fgctl_graph_opts *o, enum fg_format to, FILE *err)
{
	static const struct option names[] = { FGCTL_DRAW_OPTIONS, {} };
	const char *name = "?";

	if (!o->look_option || to != FG_FORMAT_FOLDED)
		return FGCTL_EXIT_OK;
	for (size_t i = 0; names[i].name; i++)
		if (names[i].val == o->look_option) {
			name = names[i].name;
			break;
		}
	fprintf(err,
		"fgctl: --%s is how a graph is drawn, and folded text is not drawn: draw a graph "
		"(.svg or .html) or leave it out\n",
		name);
	return FGCTL_EXIT_USAGE;
}

const char fgctl_graph_help[] =
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
	"      --cpu LIST           only the samples of these CPUs (perf script's [NNN])\n"
	"      --count-samples      count each sample once; by default a sample counts\n"
	"                           its period (ns for cpu-clock), as stackcollapse-perf.pl\n"
	"\n"
	"Output:\n"
	"  -o, --output FILE        where to write; '-' for stdout (the default when it is\n"
	"                           not a terminal; on one, fgd-VERB-TIME.svg here). The\n"
	"                           format follows the extension:\n"
	"                           .svg, .html, .folded or .txt, .pb.gz (pprof),\n"
	"                           .speedscope.json\n"
	"  -f, --format FORMAT      svg, html (a page with a canvas graph and a table of the\n"
	"                           top functions, for profiles too big for an SVG), folded,\n"
	"                           pprof (each frame a function; no labels: a folded\n"
	"                           file does not say what its root frames are) or\n"
	"                           speedscope (one profile, every frame a frame)\n"
	"  -q, --quiet              no summary, only warnings and errors\n"
	"\n"
	"Filters, applied in this order:\n"
	"      --no-idle            drop the kernel idle loop (swapper, cpuidle stacks)\n"
	"  -u, --user-only          only user frames (kernel frames, name_[k], dropped)\n"
	"  -k, --kernel-only        only kernel frames (under the root frame, the process)\n"
	"      --include REGEX      keep only stacks with a frame matching REGEX (POSIX ERE)\n"
	"      --exclude REGEX      drop stacks with a frame matching REGEX\n"
	"      --ignore-case        --include and --exclude ignore case\n"
	"      --focus FUNC         keep only stacks through the frame FUNC, rooted there\n"
	"                           (frames match by their plain names too: do_syscall_64\n"
	"                           finds do_syscall_64_[k], as JIT frames' _[j])\n"
	"      --stackcollapse-names\n"
	"                           names as stackcollapse-perf.pl writes them, for diffs\n"
	"                           with its profiles: cut at the first '(' (Java's\n"
	"                           'double Hot.middle(int)' is 'double Hot.middle')\n"
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
	"      --countname TEXT     what counts are (default \"samples\"; perf script input:\n"
	"                           \"ns\" for cpu-clock's summed periods, the event's name\n"
	"                           for others)\n"
	"      --nametype TEXT      what frames are (default \"Function:\")\n"
	"      --colors PALETTE     hot (the default), mem, io, wakeup, chain, java, js,\n"
	"                           perl, red, green, blue, aqua, yellow, purple, orange\n"
	"      --bgcolors COLOR     yellow, blue, green, grey or #rrggbb\n"
	"      --hash               colours from the name's hash (the default)\n"
	"      --random             random colours instead\n"
	"      --cp                 consistent palette: colours kept in ./palette.map\n"
	"      --cp-file FILE       the same, kept in FILE\n"
	"      --inverted           icicle graph: drawn top-down\n"
	"      --flamechart         flame chart: stacks in input order, not merged (record\n"
	"                           and snapshot: fgd's samples in time order)\n"
	"      --negate             differential: widths from the before profile\n"
	"      --notes TEXT         notes kept in the output\n"
	"      --total COUNT        the count that is 100% (if larger than the total)\n";
