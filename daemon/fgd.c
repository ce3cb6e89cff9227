/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgd: the sampling-profiler daemon. main() sets up the shared state, the
 * tracking events and the socket, then runs the one epoll loop until
 * SIGTERM or SIGINT. See docs/ARCHITECTURE.md.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "fgd-alwayson.h"
#include "fgd-log.h"
#include "fgd-server.h"
#include "fgd.h"
#include "macro.h"
#include "parse.h"

#define ROUND_BUSY_NS (100ULL * 1000000ULL)  /* drain interval while recording */
#define ROUND_IDLE_NS (1000ULL * 1000000ULL) /* only tracking to keep current */
#define REAP_INTERVAL_NS (1000ULL * 1000000ULL)
/* Ended processes stay resolvable this long, for samples read after their exit. */
#define REAP_GRACE_NS (10ULL * 1000000000ULL)
/* CFI of a binary no sample needed for this long is dropped. */
#define UNWIND_IDLE_NS (600ULL * 1000000000ULL)
#define DEFAULT_RING_PAGES 128 /* 512 KiB per CPU: about half a second at 999 Hz */
#define TRACK_RING_PAGES 64
/* Always-on defaults: see docs/PERFORMANCE.md for how the rate was chosen. */
#define FGD_DEFAULT_ALWAYS_ON_FREQUENCY 19
#define FGD_DEFAULT_MEMORY_MAX (64ULL << 20)

static const char *arg_socket = FG_DEFAULT_SOCKET;
static const char *arg_group;
static uint32_t arg_frequency = 99;
static enum fg_call_graph arg_call_graph = FG_CALL_GRAPH_DWARF;
static uint32_t arg_stack_dump = FG_PROTO_DEFAULT_STACK_DUMP;
static size_t arg_ring_pages = DEFAULT_RING_PAGES;
static bool arg_always_on = true;
static uint32_t arg_always_on_frequency = FGD_DEFAULT_ALWAYS_ON_FREQUENCY;
static uint32_t arg_slice_seconds = 10;
static uint32_t arg_window_seconds = 900;
static uint64_t arg_memory_max = FGD_DEFAULT_MEMORY_MAX;

int fgd_watch_add(struct fgd *d, struct fgd_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, w->fd, &ev) < 0 ? negative_errno() : 0;
}

int fgd_watch_mod(struct fgd *d, struct fgd_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(d->epoll_fd, EPOLL_CTL_MOD, w->fd, &ev) < 0 ? negative_errno() : 0;
}

void fgd_watch_del(struct fgd *d, struct fgd_watch *w)
{
	if (w->fd >= 0)
		(void)epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, w->fd, NULL);
}

int fgd_watch_rings(struct fgd *d, const struct fg_evset *events)
{
	for (size_t i = 0; i < fg_evset__n(events); i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &d->ring_watch };

		if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fg_evset__fd(events, i), &ev) < 0)
			return negative_errno();
	}
	return 0;
}

void fgd_unwatch_rings(struct fgd *d, const struct fg_evset *events)
{
	for (size_t i = 0; i < fg_evset__n(events); i++)
		(void)epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, fg_evset__fd(events, i), NULL);
}

static void ring_event(struct fgd_watch *w, uint32_t events)
{
	struct fgd *d = (struct fgd *)((uint8_t *)w - offsetof(struct fgd, ring_watch));

	d->drain_requested = true;
}

static void on_tracking_record(void *ctx, const struct fg_record *rec)
{
	struct fgd *d = ctx;

	fg_proctab__handle(d->procs, rec);
}

void fgd_drain_round(struct fgd *d)
{
	/*
	 * Snapshot the sample rings first, then read all tracking up to now:
	 * every fork, exec and mmap that a snapshotted sample depends on
	 * happened before the snapshot, so it is applied before the sample.
	 */
	struct timespec ts;

	fgd_server__snapshot_recordings(d->server);
	if (d->alwayson)
		fgd_alwayson__snapshot(d->alwayson);
	fg_evset__snapshot(d->tracker);
	fg_evset__drain_ordered(d->tracker, on_tracking_record, d);
	fgd_server__drain_recordings(d->server);
	if (d->alwayson) {
		fgd_alwayson__drain(d->alwayson);
		clock_gettime(CLOCK_REALTIME, &ts);
		fgd_alwayson__tick(d->alwayson, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	}
	d->drain_requested = false;
}

void fgd_account_recording(struct fgd *d, struct fg_recording *rec)
{
	const struct fg_evset *events = fg_recording__events(rec);

	fg_stack_quality_add(&d->stack_totals[fg_recording__call_graph(rec)],
			     fg_recording__stack_quality(rec));
	for (size_t i = 0; events && i < fg_evset__n(events); i++) {
		const struct fg_cpu_counters *c = fg_evset__counters(events, i);

		for (size_t j = 0; j < d->n_cpu_totals; j++)
			if (d->cpu_totals[j].cpu == fg_evset__cpu(events, i))
				fg_cpu_counters_add(&d->cpu_totals[j].c, c);
	}
}

static void signal_event(struct fgd_watch *w, uint32_t events)
{
	struct fgd *d = (struct fgd *)((uint8_t *)w - offsetof(struct fgd, signal_watch));
	struct signalfd_siginfo si;

	while (read(w->fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			log_info("Received %s, shutting down", strsignal((int)si.ssi_signo));
			d->quit = true;
		}
	}
}

static void help(void)
{
	printf("Usage: fgd [OPTIONS]\n"
	       "\n"
	       "Sampling profiler daemon: samples every CPU with perf_event_open and serves\n"
	       "folded stacks and flame graphs to fgctl over a Unix socket.\n"
	       "\n"
	       "  -s, --socket PATH        control socket (default %s)\n"
	       "  -g, --socket-group NAME  group allowed to connect (socket mode 0660);\n"
	       "                           default: 'fgd' if that group exists, else root only\n"
	       "  -F, --frequency HZ       default sampling frequency (default 99)\n"
	       "      --call-graph MODE    how user stacks are walked when a recording does not\n"
	       "                           say: dwarf (unwind a copy of the stack with DWARF CFI;\n"
	       "                           the default) or fp (follow frame pointers)\n"
	       "      --stack-dump BYTES   user stack copied per sample in dwarf mode, a multiple\n"
	       "                           of 8 up to 65528 (default %d)\n"
	       "      --ring-pages N       ring buffer pages per CPU, a power of two (default %d)\n"
	       "      --no-always-on       no sampling while no recording runs (no snapshot, top)\n"
	       "      --always-on-frequency HZ  always-on sampling rate (default %d)\n"
	       "      --slice-seconds N    always-on time slice (default 10)\n"
	       "      --window-seconds N   always-on window kept in memory (default 900)\n"
	       "      --memory-max BYTES   ceiling of the window's aggregates; K, M, G suffixes\n"
	       "                           (default 64M)\n"
	       "  -v, --verbose            log debug messages\n"
	       "  -h, --help               show this help\n"
	       "      --version            show the version\n"
	       "\n"
	       "fgd runs in the foreground until SIGTERM or SIGINT. See fgd(8).\n",
	       FG_DEFAULT_SOCKET, FG_PROTO_DEFAULT_STACK_DUMP, DEFAULT_RING_PAGES,
	       FGD_DEFAULT_ALWAYS_ON_FREQUENCY);
}

static int parse_args(int argc, char **argv)
{
	enum { ARG_VERSION = 0x100, ARG_RING_PAGES, ARG_CALL_GRAPH, ARG_STACK_DUMP, ARG_NO_ALWAYS_ON,
	       ARG_ALWAYS_ON_FREQUENCY, ARG_SLICE_SECONDS, ARG_WINDOW_SECONDS, ARG_MEMORY_MAX };
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "socket-group", required_argument, NULL, 'g' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "ring-pages", required_argument, NULL, ARG_RING_PAGES },
		{ "call-graph", required_argument, NULL, ARG_CALL_GRAPH },
		{ "stack-dump", required_argument, NULL, ARG_STACK_DUMP },
		{ "no-always-on", no_argument, NULL, ARG_NO_ALWAYS_ON },
		{ "always-on-frequency", required_argument, NULL, ARG_ALWAYS_ON_FREQUENCY },
		{ "slice-seconds", required_argument, NULL, ARG_SLICE_SECONDS },
		{ "window-seconds", required_argument, NULL, ARG_WINDOW_SECONDS },
		{ "memory-max", required_argument, NULL, ARG_MEMORY_MAX },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{}
	};
	uint32_t v;
	int c;

	while ((c = getopt_long(argc, argv, "s:g:F:vh", options, NULL)) >= 0) {
		switch (c) {
		case 's':
			arg_socket = optarg;
			break;
		case 'g':
			arg_group = optarg;
			break;
		case 'F':
			if (fg_parse_u32(optarg, 1, 100000, &arg_frequency) < 0) {
				fprintf(stderr, "fgd: invalid frequency '%s': expected 1 to 100000 Hz\n", optarg);
				return -EINVAL;
			}
			break;
		case ARG_RING_PAGES:
			if (fg_parse_u32(optarg, 1, 65536, &v) < 0 || (v & (v - 1))) {
				fprintf(stderr, "fgd: invalid ring size '%s': expected a power of two pages\n", optarg);
				return -EINVAL;
			}
			arg_ring_pages = v;
			break;
		case ARG_CALL_GRAPH:
			if (fg_call_graph_from_name(optarg, &arg_call_graph) < 0) {
				fprintf(stderr, "fgd: invalid call graph mode '%s': expected fp or dwarf\n", optarg);
				return -EINVAL;
			}
			break;
		case ARG_STACK_DUMP:
			if (fg_parse_u32(optarg, 8, FG_PROTO_MAX_STACK_DUMP, &v) < 0 ||
			    fg_stack_dump_check(v) < 0) {
				fprintf(stderr, "fgd: invalid stack dump size '%s': expected a multiple of 8 "
						"from 8 to %d bytes\n", optarg, FG_PROTO_MAX_STACK_DUMP);
				return -EINVAL;
			}
			arg_stack_dump = v;
			break;
		case ARG_NO_ALWAYS_ON:
			arg_always_on = false;
			break;
		case ARG_ALWAYS_ON_FREQUENCY:
			if (fg_parse_u32(optarg, 1, 100000, &arg_always_on_frequency) < 0) {
				fprintf(stderr, "fgd: invalid always-on frequency '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case ARG_SLICE_SECONDS:
			if (fg_parse_u32(optarg, 1, 3600, &arg_slice_seconds) < 0) {
				fprintf(stderr, "fgd: invalid slice length '%s': 1 to 3600 s\n", optarg);
				return -EINVAL;
			}
			break;
		case ARG_WINDOW_SECONDS:
			if (fg_parse_u32(optarg, 1, 7 * 24 * 3600, &arg_window_seconds) < 0) {
				fprintf(stderr, "fgd: invalid window length '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case ARG_MEMORY_MAX: {
			char *end;
			unsigned long long mv;

			errno = 0;
			mv = strtoull(optarg, &end, 10);
			if (*end == 'K' || *end == 'k')
				mv <<= 10, end++;
			else if (*end == 'M' || *end == 'm')
				mv <<= 20, end++;
			else if (*end == 'G' || *end == 'g')
				mv <<= 30, end++;
			if (errno || end == optarg || *end || mv < (64ULL << 10) || mv > (1ULL << 40)) {
				fprintf(stderr, "fgd: invalid memory ceiling '%s': 64K to 1T\n", optarg);
				return -EINVAL;
			}
			arg_memory_max = mv;
			break;
		}
		case 'v':
			fg_log_max_level = LOG_DEBUG;
			break;
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("fgd %s\n", FG_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'fgd --help'.\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fgd: unexpected argument '%s'. Try 'fgd --help'.\n", argv[optind]);
		return -EINVAL;
	}
	if (arg_window_seconds < arg_slice_seconds) {
		fprintf(stderr, "fgd: the window (%u s) must be at least one slice (%u s)\n",
			arg_window_seconds, arg_slice_seconds);
		return -EINVAL;
	}
	if (!arg_group && getgrnam("fgd"))
		arg_group = "fgd";
	return 1;
}

/* Creates the socket's directory (one level, like /run/fgd) if missing. */
static void make_socket_dir(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);

	if (copy && mkdir(dirname(copy), 0755) < 0 && errno != EEXIST)
		log_warning("Failed to create the directory of %s: %m, ignoring", path);
}

static int setup(struct fgd *d)
{
	struct fg_evset_opts track = { .kind = FG_EVSET_TRACK, .ring_pages = d->conf.track_ring_pages };
	sigset_t mask;
	int r;

	d->started = fgd_now();
	d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epoll_fd < 0)
		return log_error("Failed to create the epoll instance: %m"), negative_errno();
	if (gethostname(d->hostname, sizeof(d->hostname) - 1) < 0)
		snprintf(d->hostname, sizeof(d->hostname), "localhost");
	d->ring_watch.fd = -1;
	d->ring_watch.fn = ring_event;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->signal_watch.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->signal_watch.fn = signal_event;
	if (d->signal_watch.fd < 0 || fgd_watch_add(d, &d->signal_watch, EPOLLIN) < 0)
		return log_error("Failed to set up signal handling: %m"), negative_errno();

	r = fg_sampler_probe_event(&d->event);
	if (r < 0) {
		log_error("Failed to open a perf event: %s. fgd needs root (or CAP_PERFMON) "
			  "and a kernel with perf events.", strerror(-r));
		return r;
	}
	d->max_stack = fg_sampler_max_stack();
	d->max_rate = fg_sampler_max_rate();
	if (arg_frequency > d->max_rate) {
		log_error("Default frequency %u Hz is above kernel.perf_event_max_sample_rate (%u)",
			  arg_frequency, d->max_rate);
		return -EINVAL;
	}
	log_info("Sampling event: %s%s", d->event.name,
		 d->event.type == PERF_TYPE_SOFTWARE ? " (no hardware PMU here: software clock)" : "");

	r = fg_unwinder__new(&d->unwinder);
	if (r < 0)
		return log_error("Failed to set up the unwinder: %s", strerror(-r)), r;
	r = fg_symbolizer__new(&d->sym);
	if (r >= 0)
		r = fg_proctab__new(d->sym, &d->procs);
	if (r < 0)
		return log_error("Out of memory"), r;

	/* Tracking first, then the scan: nothing born in between can be missed. */
	r = fg_evset__open(&track, &d->tracker);
	if (r >= 0)
		r = fg_evset__enable(d->tracker);
	if (r >= 0)
		r = fgd_watch_rings(d, d->tracker);
	if (r < 0) {
		log_error("Failed to open the tracking events: %s", strerror(-r));
		return r;
	}
	d->n_cpu_totals = fg_evset__n(d->tracker);
	d->cpu_totals = calloc(d->n_cpu_totals, sizeof(*d->cpu_totals));
	if (!d->cpu_totals)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_cpu_totals; i++)
		d->cpu_totals[i].cpu = fg_evset__cpu(d->tracker, i);

	r = fg_proctab__scan(d->procs);
	if (r < 0)
		return log_error("Failed to read /proc: %s", strerror(-r)), r;
	r = fg_symbolizer__refresh_kernel(d->sym, false);
	if (r < 0)
		log_warning("Failed to read /proc/kallsyms: %s; kernel frames will show as [unknown]",
			    strerror(-r));
	else {
		struct fg_symbolizer_stats ss;

		fg_symbolizer__stats(d->sym, &ss);
		if (ss.kernel_restricted)
			log_warning("Kernel addresses are hidden (kernel.kptr_restrict); kernel frames "
				    "will show as [unknown]");
	}

	make_socket_dir(d->conf.socket_path);
	r = fgd_server__new(d, &d->server);
	if (r == -EADDRINUSE)
		return log_error("Another fgd is already serving %s", d->conf.socket_path), r;
	if (r == -ENOENT && d->conf.socket_group)
		return log_error("No such group: %s", d->conf.socket_group), r;
	if (r < 0)
		return log_error("Failed to listen on %s: %s", d->conf.socket_path, strerror(-r)), r;

	if (d->conf.always_on) {
		if (d->conf.always_on_frequency > d->max_rate)
			return log_error("Always-on frequency %u Hz is above kernel.perf_event_max_sample_rate (%u)",
					 d->conf.always_on_frequency, d->max_rate), -EINVAL;
		r = fgd_alwayson__new(d, &d->alwayson);
		if (r < 0)
			return log_error("Failed to start always-on sampling: %s", strerror(-r)), r;
		log_info("Always-on sampling at %u Hz: %u s slices, %u s window, %" PRIu64 " bytes at most",
			 d->conf.always_on_frequency, d->conf.slice_seconds, d->conf.window_seconds,
			 d->conf.memory_max);
	}
	fgd_drain_round(d);
	return 0;
}

static void teardown(struct fgd *d)
{
	d->server = fgd_server__free(d->server);
	d->alwayson = fgd_alwayson__free(d->alwayson);
	d->tracker = fg_evset__free(d->tracker);
	d->procs = fg_proctab__free(d->procs);
	d->unwinder = fg_unwinder__free(d->unwinder);
	d->sym = fg_symbolizer__free(d->sym);
	free(d->cpu_totals);
	safe_close(d->signal_watch.fd);
	safe_close(d->epoll_fd);
}

static int run(struct fgd *d)
{
	uint64_t next_round = fgd_now(), next_reap = next_round + REAP_INTERVAL_NS;

	while (!d->quit) {
		struct epoll_event evs[64];
		uint64_t now = fgd_now();
		int64_t wait = next_round > now ? (int64_t)((next_round - now) / 1000000) + 1 : 0;
		int n = epoll_wait(d->epoll_fd, evs, ELEMENTSOF(evs), (int)wait);

		if (n < 0 && errno != EINTR)
			return log_error("epoll_wait failed: %m"), negative_errno();
		for (int i = 0; i < n; i++) {
			struct fgd_watch *w = evs[i].data.ptr;

			w->fn(w, evs[i].events);
		}
		now = fgd_now();
		if (d->drain_requested || now >= next_round) {
			fgd_drain_round(d);
			next_round = now + (fgd_server__busy(d->server) ? ROUND_BUSY_NS : ROUND_IDLE_NS);
		}
		fgd_server__tick(d->server);
		/* A recording may have started: drain soon rather than in a second. */
		if (fgd_server__busy(d->server) && next_round > now + ROUND_BUSY_NS)
			next_round = now + ROUND_BUSY_NS;
		if (now >= next_reap) {
			fg_proctab__reap(d->procs, now, REAP_GRACE_NS);
			fg_unwinder__trim(d->unwinder, UNWIND_IDLE_NS / REAP_INTERVAL_NS);
			next_reap = now + REAP_INTERVAL_NS;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fgd d = { .epoll_fd = -1, .signal_watch.fd = -1 };
	int r;

	r = parse_args(argc, argv);
	if (r <= 0)
		return r < 0 ? 2 : 0;
	d.conf = (struct fgd_config){
		.socket_path = arg_socket,
		.socket_group = arg_group,
		.default_frequency = arg_frequency,
		.call_graph = arg_call_graph,
		.stack_dump = arg_stack_dump,
		.ring_pages = arg_ring_pages,
		.track_ring_pages = TRACK_RING_PAGES,
		.always_on = arg_always_on,
		.always_on_frequency = arg_always_on_frequency,
		.slice_seconds = arg_slice_seconds,
		.window_seconds = arg_window_seconds,
		.memory_max = arg_memory_max,
		.state_directory = "/var/lib/fgd",
	};
	r = setup(&d);
	if (r >= 0) {
		log_info("fgd %s ready on %s (%s, %zu CPUs, default %u Hz)", FG_VERSION,
			 d.conf.socket_path, d.event.name, d.n_cpu_totals, arg_frequency);
		(void)sd_notifyf(false, "READY=1\nSTATUS=Sampling with %s on %zu CPUs", d.event.name,
				 d.n_cpu_totals);
		r = run(&d);
		(void)sd_notify(false, "STOPPING=1");
	}
	teardown(&d);
	return r < 0 ? 1 : 0;
}
