/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * bench-render: times the folded -> SVG path phase by phase, as fgctl render
 * runs it: fg_lines_read_fd() + fg_folded__add_line(), fg_folded__sort(),
 * fg_flame__new() (the layout), fg_flame__emit() to a file.
 *
 *   bench-render [-o OUT] [-w WIDTH] [-m MINWIDTH] [FILE]
 *
 * Reads FILE or stdin; writes the SVG to OUT (default /dev/null). Prints one
 * "key: value" figure per line (tests/bench/bench_render.py parses them).
 * Malformed lines are counted and skipped, as flamegraph.pl does.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "profile/folded.h"
#include "profile/lines.h"
#include "render/flame.h"

#define MAX_LINE (64u << 20)
#define EMIT_BUDGET (64u * 1024)

struct input {
	struct fg_folded *model; /* borrowed */
	uint64_t lines, stacks, malformed;
	uint64_t bytes; /* as read, newlines counted */
};

struct output {
	int fd;
	uint64_t bytes;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_rss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/*
 * The peak RSS of this program's own address space. ru_maxrss also counts
 * the address space the process had before exec (its parent's, copied by
 * fork), so under a big parent such as Python it never reads below the
 * parent's RSS; VmHWM starts afresh at exec.
 */
static long vm_hwm_kib(void)
{
	_cleanup_(fclosep) FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long v = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &v) == 1)
			break;
	return v;
}

/* CPU time of this process: on a busy machine, steadier than the wall clock. */
static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int on_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	struct input *in = ctx;
	int r;

	in->lines = lineno;
	in->bytes += len + 1;
	r = fg_folded__add_line(in->model, line, len);
	if (r == -EINVAL || r == -ERANGE) {
		in->malformed++;
		return 0;
	}
	if (r > 0)
		in->stacks++;
	return r < 0 ? r : 0;
}

static int write_all(void *ctx, const void *buf, size_t len)
{
	struct output *out = ctx;
	const char *p = buf;

	out->bytes += len;
	while (len > 0) {
		ssize_t n = write(out->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: bench-render [-o OUT] [-w WIDTH] [-m MINWIDTH] [FILE]\n");
}

int main(int argc, char **argv)
{
	_cleanup_(fg_folded__freep) struct fg_folded *model = NULL;
	_cleanup_(fg_flame__freep) struct fg_flame *flame = NULL;
	_cleanup_close_ int in_fd = -1, out_fd = -1;
	const char *path = "-", *out_path = "/dev/null";
	struct fg_flame_opts opts;
	struct input in = {};
	struct output out = {};
	struct stat st;
	double t0, t_read, t_sort, t_layout, t_emit, c0, c_read, c_sort, c_layout, c_emit;
	long rss_read, rss_sort, rss_layout, rss_emit, hwm;
	uint64_t in_bytes = 0;
	char *end;
	int c, r;

	fg_flame_opts_init(&opts);
	while ((c = getopt(argc, argv, "o:w:m:h")) >= 0) {
		switch (c) {
		case 'o':
			out_path = optarg;
			break;
		case 'w':
			errno = 0;
			opts.width = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg) {
				fprintf(stderr, "bench-render: bad width '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm':
			errno = 0;
			opts.min_width = strtod(optarg, &end);
			if (errno || *end || end == optarg) {
				fprintf(stderr, "bench-render: bad minimum width '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		usage(stderr);
		return 2;
	}
	if (optind < argc)
		path = argv[optind];

	in_fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
	if (in_fd < 0) {
		fprintf(stderr, "bench-render: failed to open %s: %m\n", path);
		return 1;
	}
	out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		fprintf(stderr, "bench-render: failed to open %s: %m\n", out_path);
		return 1;
	}
	out.fd = out_fd;

	t0 = now();
	c0 = cpu_seconds();
	model = fg_folded__new();
	if (!model) {
		fprintf(stderr, "bench-render: out of memory\n");
		return 1;
	}
	in.model = model;
	r = fg_lines_read_fd(in_fd, MAX_LINE, on_line, &in);
	if (r < 0) {
		fprintf(stderr, "bench-render: failed to read %s: %s\n", path, strerror(-r));
		return 1;
	}
	/* A pipe has no size; the lines' bytes are as good, but for a missing final newline. */
	in_bytes = in.bytes;
	if (fstat(in_fd, &st) == 0 && S_ISREG(st.st_mode))
		in_bytes = (uint64_t)st.st_size;
	t_read = now();
	c_read = cpu_seconds();
	rss_read = peak_rss_kib();

	r = fg_folded__sort(model);
	if (r < 0) {
		fprintf(stderr, "bench-render: failed to sort stacks: %s\n", strerror(-r));
		return 1;
	}
	t_sort = now();
	c_sort = cpu_seconds();
	rss_sort = peak_rss_kib();

	r = fg_flame__new(model, &opts, &flame);
	if (r < 0) {
		fprintf(stderr, "bench-render: failed to lay out the graph: %s\n", strerror(-r));
		return 1;
	}
	t_layout = now();
	c_layout = cpu_seconds();
	rss_layout = peak_rss_kib();

	do
		r = fg_flame__emit(flame, write_all, &out, EMIT_BUDGET);
	while (r == 0);
	if (r < 0) {
		fprintf(stderr, "bench-render: failed to write the graph: %s\n", strerror(-r));
		return 1;
	}
	t_emit = now();
	c_emit = cpu_seconds();
	rss_emit = peak_rss_kib();
	hwm = vm_hwm_kib();

	printf("input: %s\n", path);
	printf("input bytes: %llu\n", (unsigned long long)in_bytes);
	printf("lines: %llu (%llu stacks, %llu malformed)\n", (unsigned long long)in.lines,
	       (unsigned long long)in.stacks, (unsigned long long)in.malformed);
	printf("model: %zu distinct stacks, %zu names, %zu bytes held\n",
	       fg_folded__n_stacks(model), fg_folded__n_names(model), fg_folded__bytes(model));
	printf("read+parse s: %.4f\n", t_read - t0);
	printf("sort s: %.4f\n", t_sort - t_read);
	printf("layout s: %.4f\n", t_layout - t_sort);
	printf("emit s: %.4f\n", t_emit - t_layout);
	printf("total s: %.4f\n", t_emit - t0);
	printf("read+parse cpu s: %.4f\n", c_read - c0);
	printf("sort cpu s: %.4f\n", c_sort - c_read);
	printf("layout cpu s: %.4f\n", c_layout - c_sort);
	printf("emit cpu s: %.4f\n", c_emit - c_layout);
	printf("total cpu s: %.4f\n", c_emit - c0);
	printf("output bytes: %llu\n", (unsigned long long)out.bytes);
	printf("peak rss KiB after read+parse / sort / layout / emit: %ld %ld %ld %ld\n", rss_read,
	       rss_sort, rss_layout, rss_emit);
	printf("peak rss KiB: %ld\n", rss_emit);
	printf("VmHWM KiB: %ld\n", hwm);
	if (in_bytes > 0) {
		printf("peak rss / input: %.2f\n", (double)rss_emit * 1024 / (double)in_bytes);
		printf("VmHWM / input: %.2f\n", (double)hwm * 1024 / (double)in_bytes);
	}
	return 0;
}
