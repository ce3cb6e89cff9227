/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "fgctl-client.h"
#include "fgctl-output.h"
#include "fgctl-pipeline.h"
#include "profile/lines.h"
#include "profile/pprof-model.h"
#include "profile/speedscope.h"
#include "profile/timed.h"
#include "profile/transform.h"
#include "render/flame-html.h"
#include "render/flame.h"
#include "render/palette.h"

#define MAX_REPORTED_ERRORS 10 /* malformed lines named one by one; the rest counted */
#define EMIT_BUDGET (1u << 20)

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

int fgctl_reader_folded_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	struct fgctl_reader *rd = ctx;
	int r = fg_folded__add_line(rd->model, line, len);

	if (r >= 0)
		return 0;
	if (r != -EINVAL && r != -ERANGE)
		return r; /* out of memory or the stack cap: not the line's fault */
	if (++rd->n_bad <= MAX_REPORTED_ERRORS || rd->opts->strict) {
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
	return rd->opts->strict ? -EBADMSG : 0;
}

static int perf_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	struct fgctl_reader *rd = ctx;
	struct fg_perfscript_stats st;
	int r = fg_perfscript__feed(rd->perf, line, len, lineno);

	if (r < 0 || !rd->opts->strict)
		return r;
	fg_perfscript__stats(rd->perf, &st);
	if (st.malformed == 0)
		return 0;
	fprintf(stderr, "fgctl: %s:%llu: not understood as perf script output\n", rd->name,
		(unsigned long long)st.first_bad_line);
	return -EBADMSG;
}

void fgctl_reader_report(const struct fgctl_reader *rd)
{
	if (rd->n_bad > MAX_REPORTED_ERRORS)
		fprintf(stderr, "fgctl: %s: %llu malformed lines skipped in all\n", rd->name,
			(unsigned long long)rd->n_bad);
}

/* Reads the named input ("-" for stdin) into model. Returns 0 or an exit code. */
static int read_input(struct fgctl_graph_opts *opts, const char *path, struct fg_folded *model)
{
	_cleanup_close_ int fd = -1;
	_cleanup_(fg_perfscript__freep) struct fg_perfscript *perf = NULL;
	struct fgctl_reader rd = { .opts = opts, .name = path, .model = model };
	int r;

	fd = fgctl_input_open(path, &rd.name);
	if (fd < 0)
		return FGCTL_EXIT_INPUT;
	if (opts->from == FGCTL_FROM_PERF) {
		r = fg_perfscript__new(model, &opts->perf, &perf);
		if (r < 0) {
			fprintf(stderr, "fgctl: %s\n", strerror(-r));
			return FGCTL_EXIT_FAILURE;
		}
		rd.perf = perf;
		r = fg_lines_read_fd(fd, FGCTL_MAX_LINE, perf_line, &rd);
		if (r >= 0)
			r = fg_perfscript__finish(perf);
	} else {
		r = fg_lines_read_fd(fd, FGCTL_MAX_LINE, fgctl_reader_folded_line, &rd);
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
		/* perf script sums periods, as the script does: say what they are, not "samples". */
		if (!opts->count_name_given)
			opts->flame.count_name =
				fg_perfscript_count_name(&st, opts->perf_count_name,
							 sizeof(opts->perf_count_name));
		if (opts->perf.n_cpus && !opts->quiet)
			fprintf(stderr, "fgctl: %s: %llu samples of other CPUs left out (--cpu)\n",
				rd.name, (unsigned long long)st.other_cpus);
		if (st.multiple_events && !opts->perf.event_filter)
			fprintf(stderr,
				"fgctl: %s holds several events; using '%s' (%llu samples of other "
				"events skipped; choose with --event-filter)\n",
				rd.name, st.event, (unsigned long long)st.filtered);
		if (st.malformed > 0) {
			fprintf(stderr,
				"fgctl: %s: %llu lines not understood as perf script output, "
				"skipped (first at line %llu)\n",
				rd.name, (unsigned long long)st.malformed,
				(unsigned long long)st.first_bad_line);
			if (opts->strict)
				return FGCTL_EXIT_INPUT;
		}
	}
	fgctl_reader_report(&rd);
	return 0;
}

/* One line of fgd's timed profile (--flamechart); a malformed one is counted and skipped. */
static int fetched_timed_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	struct fgctl_fetched *f = ctx;
	int r = f->timed ? fg_timed__add_line(f->timed, line, len) : -ENOMEM;

	if (r == -EINVAL || r == -ERANGE) {
		if (f->rd.n_bad++ < MAX_REPORTED_ERRORS)
			fprintf(stderr, "fgctl: the %s profile:%llu: %s, skipped\n", f->rd.name,
				(unsigned long long)lineno, describe_line_error(r));
		return 0;
	}
	return r == -EPROTONOSUPPORT ? -EBADMSG : MIN(r, 0);
}

void fgctl_fetched_init(struct fgctl_fetched *f, const struct fgctl_graph_opts *opts,
			struct fg_folded *model, const char *name)
{
	*f = (struct fgctl_fetched){ .rd = { .opts = opts, .name = name, .model = model } };
	if (opts->flame.flamechart) {
		fg_folded__set_sequence(model);
		/* The header says the unit and clock; out of memory, the first line says so. */
		(void)fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &f->timed);
		fg_lines_init(&f->lines, FGCTL_MAX_LINE, fetched_timed_line, f);
		return;
	}
	fg_lines_init(&f->lines, FGCTL_MAX_LINE, fgctl_reader_folded_line, &f->rd);
}

/* The timed profile's samples into the sequence model, in time order. 0 or a negative errno. */
static int fetched_sequence(struct fgctl_fetched *f)
{
	const struct fg_folded *src = fg_timed__model_const(f->timed);
	const struct fg_timed_sample *v;
	_cleanup_free_ uint32_t *map = NULL;
	size_t n_names = fg_folded__n_names(src);
	int r = fg_timed__sort(f->timed);

	if (r < 0)
		return r;
	map = malloc(MAX(n_names, (size_t)1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	memset(map, 0xff, n_names * sizeof(*map)); /* UINT32_MAX: not in the model yet */
	v = fg_timed__samples(f->timed);
	for (size_t i = 0; i < fg_timed__n_samples(f->timed); i++) {
		uint32_t id;

		r = fg_folded__add_from(f->rd.model, src, v[i].stack, v[i].weight, map, &id);
		if (r < 0)
			return r;
	}
	return 0;
}

int fgctl_fetched_write(void *ctx, const char *data, size_t len)
{
	struct fgctl_fetched *f = ctx;
	int r = fg_lines_feed(&f->lines, data, len);

	if (r < 0) {
		fprintf(stderr, "fgctl: cannot read the %s profile from fgd: %s\n", f->rd.name,
			r == -E2BIG ? "too many distinct stacks, or a line past 64 MiB" :
				      strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	return FGCTL_EXIT_OK;
}

static int fetched_open(void *ctx)
{
	return FGCTL_EXIT_OK;
}

const struct fgctl_sink fgctl_fetched_sink = { fetched_open, fgctl_fetched_write };

int fgctl_fetched_finish(struct fgctl_fetched *f, int r)
{
	int e;

	if (r == FGCTL_EXIT_OK && fg_lines_finish(&f->lines) < 0) {
		fprintf(stderr,
			"fgctl: cannot read the %s profile from fgd: too many distinct stacks\n",
			f->rd.name);
		r = FGCTL_EXIT_FAILURE;
	}
	fg_lines_done(&f->lines);
	if (r == FGCTL_EXIT_OK && f->timed && !fg_timed__has_header(f->timed)) {
		fprintf(stderr, "fgctl: fgd sent no timed profile for the flame chart (an fgd "
				"older than heat maps?)\n");
		r = FGCTL_EXIT_FAILURE;
	}
	if (r == FGCTL_EXIT_OK && f->timed && (e = fetched_sequence(f)) < 0) {
		fprintf(stderr, "fgctl: cannot chart the %s profile: %s\n", f->rd.name,
			strerror(-e));
		r = FGCTL_EXIT_FAILURE;
	}
	f->timed = fg_timed__free(f->timed);
	if (r == FGCTL_EXIT_OK)
		fgctl_reader_report(&f->rd);
	return r;
}

int fgctl_pipeline_read(struct fgctl_graph_opts *opts, char **paths, size_t n,
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
		int r = read_input(opts, paths[i], model);

		if (r != 0)
			return r;
	}
	return 0;
}

static bool wants_transform(const struct fg_transform_opts *t)
{
	return t->no_idle || t->include || t->exclude || t->focus || t->collapse_recursion ||
	       t->reverse || t->user_only || t->kernel_only || t->stackcollapse_names;
}

/* Replaces *model with its filtered form. Returns 0 or an exit code. */
static int apply_filters(const struct fgctl_graph_opts *opts, struct fg_folded **model)
{
	struct fg_folded *out = NULL;
	struct fg_transform_stats st;
	char err[256] = "";
	int r;

	if (!wants_transform(&opts->transform))
		return 0;
	r = fg_transform(*model, &opts->transform, &out, &st, err, sizeof(err));
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
	if (!opts->quiet && st.dropped > 0)
		fprintf(stderr,
			"fgctl: the filters kept %llu stacks and dropped %llu (%.1f%% of the "
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
			r == -EBADMSG ? "not a palette file (expected 'name->rgb(r,g,b)' lines)" :
					strerror(-r));
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

/* Writes model in format to, drawn as flame says. Returns 0 or a negative errno. */
static int emit(enum fg_format to, const struct fg_flame_opts *flame, const struct fg_folded *model,
		struct fgctl_output *out, size_t *ret_elided)
{
	struct fg_flame *svg = NULL;
	struct fg_flame_html *html = NULL;
	size_t cursor = 0;
	int r;

	*ret_elided = 0;
	if (to == FG_FORMAT_FOLDED) {
		while ((r = fg_folded__emit(model, &cursor, output_sink, out, EMIT_BUDGET)) == 0)
			;
		return r < 0 ? r : 0;
	}
	if (to == FG_FORMAT_PPROF) {
		/* A folded file's root frames may be anything: every frame stays a frame. */
		struct fg_pprof_meta meta = { .values = FG_PPROF_SAMPLES };
		_cleanup_free_ uint8_t *bytes = NULL;
		size_t len;

		r = fg_pprof_from_model(model, &meta, &bytes, &len);
		return r < 0 ? r : fgctl_output_write(out, (const char *)bytes, len);
	}
	if (to == FG_FORMAT_SPEEDSCOPE) {
		/* The same: one profile, every frame a frame, named by --title or the file. */
		struct fg_speedscope_meta meta = { .unit = FG_SPEEDSCOPE_SAMPLES,
						   .name = flame->title };
		const char *slash = strrchr(out->path, '/');
		_cleanup_free_ char *text = NULL;
		size_t len;

		if (!meta.name && strcmp(out->path, "-") != 0)
			meta.name = slash ? slash + 1 : out->path;
		r = fg_speedscope_from_model(model, &meta, &text, &len);
		return r < 0 ? r : fgctl_output_write(out, text, len);
	}
	if (to == FG_FORMAT_HTML) {
		r = fg_flame_html__new(model, flame, &html);
		if (r < 0)
			return r;
		while ((r = fg_flame_html__emit(html, output_sink, out, EMIT_BUDGET)) == 0)
			;
		*ret_elided = fg_flame_html__n_elided(html);
		fg_flame_html__free(html);
		return r < 0 ? r : 0;
	}
	r = fg_flame__new(model, flame, &svg);
	if (r < 0)
		return r;
	while ((r = fg_flame__emit(svg, output_sink, out, EMIT_BUDGET)) == 0)
		;
	*ret_elided = fg_flame__n_elided(svg);
	fg_flame__free(svg);
	return r < 0 ? r : 0;
}

int fgctl_pipeline_write(const struct fgctl_graph_opts *opts, struct fg_folded **model)
{
	_cleanup_(fg_palette_map__freep) struct fg_palette_map *map = NULL;
	struct fgctl_output out = { .path = opts->output, .fd = -1 };
	/* The options, with the palette while it lives. */
	struct fg_flame_opts flame = opts->flame;
	size_t elided = 0;
	int r;

	r = apply_filters(opts, model);
	if (r != 0)
		return r;
	if (fg_folded__n_stacks(*model) == 0 ||
	    !(fg_folded__total(*model) > 0 || fg_folded__total_before(*model) > 0)) {
		fprintf(stderr, "fgctl: no samples to draw%s\n",
			wants_transform(&opts->transform) ? " after the filters" : " in the input");
		return FGCTL_EXIT_INPUT;
	}
	if (fg_folded__is_diff(*model) && opts->palette_given && opts->to != FG_FORMAT_FOLDED) {
		fprintf(stderr, "fgctl: --colors does not apply to a differential graph: its "
				"colours say what grew (red) and what shrank (blue)\n");
		return FGCTL_EXIT_USAGE;
	}
	if (fg_folded__is_diff(*model) &&
	    (opts->to == FG_FORMAT_PPROF || opts->to == FG_FORMAT_SPEEDSCOPE)) {
		fprintf(stderr,
			"fgctl: a differential profile has no %s form: write it as folded, svg or "
			"html\n",
			fg_format_name(opts->to));
		return FGCTL_EXIT_USAGE;
	}
	if (fg_folded__is_diff(*model) && opts->to != FG_FORMAT_FOLDED &&
	    !((opts->flame.negate ? fg_folded__total_before(*model) : fg_folded__total(*model)) >
	      0)) {
		/* The widths come from that profile: there would be nothing to see. */
		fprintf(stderr,
			"fgctl: the %s profile has no samples%s; --negate draws the %s one\n",
			opts->flame.negate ? "before" : "after",
			wants_transform(&opts->transform) ? " after the filters" : "",
			opts->flame.negate ? "after" : "before");
		return FGCTL_EXIT_INPUT;
	}
	r = fg_folded__sort(*model);
	if (r < 0) {
		fprintf(stderr, "fgctl: %s\n", strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	if (opts->cp_file) {
		map = fg_palette_map__new();
		if (!map)
			return FGCTL_EXIT_FAILURE;
		r = read_palette(opts->cp_file, map);
		if (r != 0)
			return r;
		flame.palette_map = map;
	}
	if (fgctl_output_open(&out) < 0)
		return FGCTL_EXIT_OUTPUT;
	r = emit(opts->to, &flame, *model, &out, &elided);
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
			strcmp(opts->output, "-") == 0 ? "stdout" : opts->output, strerror(-r));
		return FGCTL_EXIT_OUTPUT;
	}
	if (map) {
		r = write_palette(opts->cp_file, map);
		if (r != 0)
			return r;
	}
	if (!opts->quiet && strcmp(opts->output, "-") != 0) {
		char count[400]; /* DBL_MAX has 309 digits */

		/* The profile the widths come from. */
		fg_format_count(fg_folded__is_diff(*model) && opts->flame.negate ?
					fg_folded__total_before(*model) :
					fg_folded__total(*model),
				count, sizeof(count));
		fprintf(stderr, "fgctl: wrote %s: %zu stacks, %s %s", opts->output,
			fg_folded__n_stacks(*model), count, opts->flame.count_name);
		if (elided > 0)
			fprintf(stderr, "; %zu frames narrower than --minwidth left out", elided);
		fputc('\n', stderr);
	}
	return FGCTL_EXIT_OK;
}

void fgctl_draw_init(struct fgctl_draw *d)
{
	*d = (struct fgctl_draw){};
	fgctl_graph_opts_init(&d->graph);
	/* The verb says what it wrote; the pipeline's own summary would say it again. */
	d->graph.quiet = true;
}

int fgctl_draw_option(struct fgctl_draw *d, int c, const char *arg, char *title, FILE *err)
{
	static const struct option draw[] = { FGCTL_DRAW_OPTIONS, {} };
	bool known = false;
	int r;

	for (size_t i = 0; draw[i].name && !known; i++)
		known = draw[i].val == c;
	if (!known)
		return 0;
	if (c == FGCTL_GRAPH_OPT_TITLE && fgctl_title_arg(arg, title, err) != FGCTL_EXIT_OK)
		return -1;
	r = fgctl_graph_option(c, arg, &d->graph, err);
	if (r > 0 && c != FGCTL_GRAPH_OPT_TITLE)
		d->here = true;
	return r;
}

int fgctl_draw_prepare(struct fgctl_draw *d, const struct fgctl_output *out,
		       enum fg_format *request_format, bool us, bool blocked, FILE *err)
{
	int r;

	/* --title too: fgd's graphs take it, folded text has no place for it. */
	r = fgctl_graph_check_look(&d->graph, *request_format, err);
	if (r != FGCTL_EXIT_OK || !d->here)
		return r;
	/* Folded text takes the filters and names as render writes it. */
	if (*request_format != FG_FORMAT_SVG && *request_format != FG_FORMAT_HTML &&
	    *request_format != FG_FORMAT_FOLDED) {
		fprintf(err, "fgctl: graph options draw a graph or filter folded stacks: write "
			     ".svg, .html or .folded\n");
		return FGCTL_EXIT_USAGE;
	}
	d->graph.output = out->path;
	d->graph.to = *request_format;
	d->graph.to_given = true;
	if (us && !d->graph.count_name_given)
		d->graph.flame.count_name = "us";
	/* Blocked time in the off-CPU palette, as fgd draws it. */
	if (blocked && !d->graph.palette_given)
		d->graph.flame.palette = FG_PALETTE_IO;
	/* A flame chart needs each sample's time, which fgd keeps: its timed profile. */
	*request_format = d->graph.flame.flamechart ? FG_FORMAT_TIMED : FG_FORMAT_FOLDED;
	return FGCTL_EXIT_OK;
}
