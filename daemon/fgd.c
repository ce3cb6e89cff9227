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
#include <malloc.h>
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

#include "budget.h"
#include "config.h"
#include "fgd-alwayson.h"
#include "fgd-conf.h"
#include "fgd-jit.h"
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
/* How often STATUS= is refreshed for systemctl status. */
#define STATUS_INTERVAL_NS (5ULL * 1000000000ULL)

/* Command-line settings: unset (NULL or 0) leaves the configuration file's, or the default. */
static const char *arg_config; /* NULL: FGD_CONFIG_FILE, which may be missing */
static const char *arg_socket;
static const char *arg_group;
static uint32_t arg_frequency;
static bool arg_call_graph_set;
static enum fg_call_graph arg_call_graph;
static uint32_t arg_stack_dump;
static size_t arg_ring_pages;
static bool arg_no_always_on;
static uint32_t arg_always_on_frequency;
static uint32_t arg_slice_seconds;
static uint32_t arg_window_seconds;
static uint64_t arg_memory_max;
static const char *arg_state_directory;

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

/* Loads finished: hand their results over, and let the samples that waited for them go on. */
static void loader_event(struct fgd_watch *w, uint32_t events)
{
	struct fgd *d = (struct fgd *)((uint8_t *)w - offsetof(struct fgd, loader_watch));

	if (fg_loader__complete(d->loader) > 0)
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
		} else if (si.ssi_signo == SIGHUP)
			d->reload_requested = true;
	}
}

static void help(void)
{
	printf("Usage: fgd [OPTIONS]\n"
	       "\n"
	       "Sampling profiler daemon: samples every CPU with perf_event_open and serves\n"
	       "folded stacks and flame graphs to fgctl over a Unix socket.\n"
	       "\n"
	       "  -c, --config PATH        configuration file (default %s)\n"
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
	       "      --memory-max BYTES   fgd's memory budget, for everything it holds (the\n"
	       "                           window, recordings, results, symbols, DWARF, CFI...);\n"
	       "                           K, M, G suffixes (default 96M)\n"
	       "      --state-directory DIR  where closed slices are kept on disk\n"
	       "                           (default " FGD_DEFAULT_STATE_DIRECTORY ")\n"
	       "  -v, --verbose            log debug messages\n"
	       "  -h, --help               show this help\n"
	       "      --version            show the version\n"
	       "\n"
	       "Options override the configuration file, fgd.conf(5).\n"
	       "fgd runs in the foreground until SIGTERM or SIGINT; SIGHUP reloads the\n"
	       "configuration. See fgd(8).\n",
	       FGD_CONFIG_FILE, FG_DEFAULT_SOCKET, FG_PROTO_DEFAULT_STACK_DUMP,
	       FGD_DEFAULT_RING_PAGES, FGD_DEFAULT_ALWAYS_ON_FREQUENCY);
}

static int parse_args(int argc, char **argv)
{
	enum { ARG_VERSION = 0x100, ARG_RING_PAGES, ARG_CALL_GRAPH, ARG_STACK_DUMP, ARG_NO_ALWAYS_ON,
	       ARG_ALWAYS_ON_FREQUENCY, ARG_SLICE_SECONDS, ARG_WINDOW_SECONDS, ARG_MEMORY_MAX,
	       ARG_STATE_DIRECTORY };
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
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
		{ "state-directory", required_argument, NULL, ARG_STATE_DIRECTORY },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{}
	};
	uint32_t v;
	int c;

	while ((c = getopt_long(argc, argv, "c:s:g:F:vh", options, NULL)) >= 0) {
		switch (c) {
		case 'c':
			arg_config = optarg;
			break;
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
			arg_call_graph_set = true;
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
			arg_no_always_on = true;
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
		case ARG_STATE_DIRECTORY:
			arg_state_directory = optarg;
			break;
		case ARG_MEMORY_MAX:
			if (fg_conf_parse_bytes(optarg, FGD_MIN_MEMORY_MAX, 1ULL << 40,
						&arg_memory_max) < 0) {
				fprintf(stderr, "fgd: invalid memory budget '%s': 32M to 1T\n",
					optarg);
				return -EINVAL;
			}
			break;
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
	return 1;
}

static void log_config_error(void *ctx, const struct fg_conf_error *err)
{
	const char *path = ctx;

	if (err->line)
		log_error("%s:%u: %s", path, err->line, err->message);
	else
		log_error("%s: %s", path, err->message);
}

/*
 * Builds the configuration: defaults, then the file, then the command line.
 * Problems are logged. 0, or a negative errno with *ret untouched.
 */
static int load_config(struct fgd_config *ret)
{
	_cleanup_(fgd_config_done) struct fgd_config c = { 0 };
	const char *path = arg_config ?: FGD_CONFIG_FILE;
	_cleanup_free_ char *text = NULL;
	struct fg_conf_error err;
	size_t len;
	int r;

	r = fgd_config_init(&c);
	if (r < 0)
		return log_error("Out of memory"), r;
	r = fgd_config_read_file(path, &text, &len);
	if (r == -ENOENT && !arg_config)
		log_debug("No %s, using the defaults", path);
	else if (r < 0)
		return log_error("Failed to read %s: %s", path, strerror(-r)), r;
	else {
		r = fgd_config_parse(&c, text, len, log_config_error, (void *)path);
		if (r < 0)
			return r;
	}

	if ((arg_socket && fgd_config_set_string(&c.socket_path, arg_socket) < 0) ||
	    (arg_group && fgd_config_set_string(&c.socket_group, arg_group) < 0))
		return log_error("Out of memory"), -ENOMEM;
	if (arg_frequency)
		c.default_frequency = arg_frequency;
	if (arg_call_graph_set)
		c.call_graph = arg_call_graph;
	if (arg_stack_dump)
		c.stack_dump = arg_stack_dump;
	if (arg_ring_pages)
		c.ring_pages = arg_ring_pages;
	if (arg_no_always_on)
		c.always_on = false;
	if (arg_always_on_frequency)
		c.always_on_frequency = arg_always_on_frequency;
	if (arg_slice_seconds)
		c.slice_seconds = arg_slice_seconds;
	if (arg_window_seconds)
		c.window_seconds = arg_window_seconds;
	if (arg_memory_max)
		c.memory_max = arg_memory_max;
	if (arg_state_directory && fgd_config_set_string(&c.state_directory, arg_state_directory) < 0)
		return log_error("Out of memory"), -ENOMEM;
	r = fgd_config_check(&c, &err);
	if (r < 0)
		return log_error("Invalid configuration with the command line: %s", err.message), r;
	if (!c.socket_group && getgrnam("fgd") && fgd_config_set_string(&c.socket_group, "fgd") < 0)
		return log_error("Out of memory"), -ENOMEM;

	*ret = c;
	c = (struct fgd_config){ 0 };
	return 0;
}

static bool streq_ptr(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

void fgd_config_changed(struct fgd *d, const struct fgd_config *old)
{
	const struct fgd_config *c = &d->conf;

	/* Recordings keep the settings they started with; these are for the next ones. */
	if (c->default_frequency != old->default_frequency)
		log_info("Default frequency: %u Hz (was %u)", c->default_frequency, old->default_frequency);
	if (c->call_graph != old->call_graph)
		log_info("Default call graph: %s (was %s)", fg_call_graph_name(c->call_graph),
			 fg_call_graph_name(old->call_graph));
	if (c->stack_dump != old->stack_dump)
		log_info("Default stack dump: %u bytes (was %u)", c->stack_dump, old->stack_dump);
	if (c->ring_pages != old->ring_pages)
		log_info("Ring pages: %zu per CPU (was %zu)", c->ring_pages, old->ring_pages);
	/* Maps already refused stay refused; the limit applies from their next read. */
	fg_jit__set_max_map(fg_proctab__jit(d->procs), c->jit_map_max);
	/* The window's share follows with the new always-on sampler (restart_always_on()). */
	if (c->memory_max != old->memory_max) {
		log_info("Memory budget: %" PRIu64 " bytes (was %" PRIu64 ")", c->memory_max,
			 old->memory_max);
		fg_budget__set_total(d->budget, c->memory_max);
	}
}

/* Whether c's always-on settings differ from old's: those the sampler is built with. */
static bool always_on_changed(const struct fgd_config *c, const struct fgd_config *old)
{
	return c->always_on != old->always_on || c->always_on_frequency != old->always_on_frequency ||
	       c->slice_seconds != old->slice_seconds || c->window_seconds != old->window_seconds ||
	       c->memory_max != old->memory_max || !streq_ptr(c->state_directory, old->state_directory) ||
	       (c->always_on && (c->call_graph != old->call_graph || c->stack_dump != old->stack_dump ||
				 c->ring_pages != old->ring_pages));
}

/* Puts old's always-on settings back into c. 0 or -ENOMEM. */
static int keep_always_on_settings(struct fgd_config *c, const struct fgd_config *old)
{
	c->always_on = old->always_on;
	c->always_on_frequency = old->always_on_frequency;
	c->slice_seconds = old->slice_seconds;
	c->window_seconds = old->window_seconds;
	c->memory_max = old->memory_max;
	return fgd_config_set_string(&c->state_directory, old->state_directory);
}

/*
 * Applies changed always-on settings by replacing the sampler: a new one
 * starts with them, then the running one writes its open slice, cut short,
 * to the history and stops. Its closed slices are on disk already, so
 * queries go on answering for their time from there (in the same state
 * directory). On failure the running one goes on. 0 or a negative errno.
 */
static int restart_always_on(struct fgd *d)
{
	struct fgd_alwayson *next = NULL;
	int r;

	if (d->conf.always_on) {
		if (d->conf.always_on_frequency > d->max_rate)
			return log_error("Always-on frequency %u Hz is above kernel.perf_event_max_sample_rate "
					 "(%u)", d->conf.always_on_frequency, d->max_rate), -EINVAL;
		r = fgd_alwayson__new(d, &next);
		if (r < 0)
			return log_error("Failed to start always-on sampling: %s", strerror(-r)), r;
	}
	if (d->alwayson) {
		fgd_alwayson__flush(d->alwayson);
		d->alwayson = fgd_alwayson__free(d->alwayson);
	}
	d->alwayson = next;
	if (next)
		log_info("Always-on sampling now at %u Hz: %u s slices, %u s window, %" PRIu64 " bytes at "
			 "most, call graph %s; the slices before are read from %s",
			 d->conf.always_on_frequency, d->conf.slice_seconds, d->conf.window_seconds,
			 d->conf.memory_max, fg_call_graph_name(d->conf.call_graph),
			 d->conf.state_directory ?: "(no history)");
	else
		log_info("Always-on sampling stopped");
	return 0;
}

/*
 * SIGHUP: a new configuration from the file and the command line, swapped
 * in whole. The socket stays as it is; a configuration that does not parse,
 * or that this kernel cannot run, leaves the running one in place.
 */
static void reload(struct fgd *d)
{
	_cleanup_(fgd_config_done) struct fgd_config next = { 0 };
	const char *path = arg_config ?: FGD_CONFIG_FILE;
	struct fgd_config old;
	bool restart;

	d->reload_requested = false;
	(void)sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, fgd_now() / 1000);
	log_info("Received SIGHUP, reloading %s", path);
	if (load_config(&next) < 0) {
		log_error("Failed to reload the configuration, keeping the running one");
		goto done;
	}
	if (next.default_frequency > d->max_rate) {
		log_error("Frequency=%u is above kernel.perf_event_max_sample_rate (%u), keeping the "
			  "running configuration", next.default_frequency, d->max_rate);
		goto done;
	}
	if (!streq_ptr(next.socket_path, d->conf.socket_path)) {
		log_warning("The socket cannot move without a restart: still on %s, ignoring %s",
			    d->conf.socket_path, next.socket_path);
		if (fgd_config_set_string(&next.socket_path, d->conf.socket_path) < 0)
			goto oom;
	}
	if (!streq_ptr(next.socket_group, d->conf.socket_group)) {
		log_warning("The socket group cannot change without a restart: still %s, ignoring %s",
			    d->conf.socket_group ?: "(none)", next.socket_group ?: "(none)");
		if (fgd_config_set_string(&next.socket_group, d->conf.socket_group) < 0)
			goto oom;
	}
	restart = always_on_changed(&next, &d->conf);
	/* Without a history the window in memory is all there is: replacing the sampler would lose it. */
	if (restart && d->alwayson && !fgd_alwayson__has_history(d->alwayson)) {
		log_warning("Always-on settings changed, but with no history on disk applying them would "
			    "lose the window in memory: they take effect at the next start");
		if (keep_always_on_settings(&next, &d->conf) < 0)
			goto oom;
		restart = false;
	}
	old = d->conf;
	d->conf = next;
	next = old; /* freed on return, after the hook saw it */
	fgd_config_changed(d, &old);
	if (restart && restart_always_on(d) < 0) {
		log_warning("Keeping the running always-on settings");
		if (keep_always_on_settings(&d->conf, &old) < 0)
			log_error("Out of memory: StateDirectory= now says %s, the history in use is %s",
				  d->conf.state_directory ?: "(none)", old.state_directory ?: "(none)");
	}
	log_info("Configuration reloaded");
	goto done;
oom:
	log_error("Out of memory, keeping the running configuration");
done:
	(void)sd_notify(false, "READY=1");
}

/* Creates the socket's directory (one level, like /run/fgd) if missing. */
static void make_socket_dir(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);

	if (copy && mkdir(dirname(copy), 0755) < 0 && errno != EEXIST)
		log_warning("Failed to create the directory of %s: %m, ignoring", path);
}

/* Resident memory of the daemon, from /proc/self/statm; 0 if unknown. */
static uint64_t rss_bytes(void);

/* ---- memory budget (issue 12): MemoryMax= for the whole daemon (common/budget.h) ---- */

/* The budget, before the components that charge it: they get it as a borrowed pointer. */
static int budget_setup(struct fgd *d)
{
	int r = fg_budget__new(d->conf.memory_max, &d->budget);

	if (r < 0)
		return r;
	fg_symbolizer__set_budget(d->sym, d->budget);
	fg_unwinder__set_budget(d->unwinder, d->budget);
	fg_proctab__set_budget(d->procs, d->budget);
	return 0;
}

/*
 * Once everything is set up: what the daemon holds that no part is charged
 * with (its code, libraries, stacks, the allocator's own) counts against
 * the total as the base.
 */
static void budget_ready(struct fgd *d)
{
	struct fg_budget_stats st;
	uint64_t rss = rss_bytes();

	fg_budget__stats(d->budget, &st);
	fg_budget__set_base(d->budget, rss > st.charged ? rss - st.charged : 0);
	fg_budget__set_rss(d->budget, rss);
}

/* Each turn of the loop: caches give back what the budget is over by, and the heap follows. */
static void budget_relieve(struct fgd *d, uint64_t now)
{
	if (fg_budget__relieve(d->budget, now) > 0)
		fg_loader__trim_memory(d->loader);
}

/* ---- end of the memory budget's part ---- */

static int setup(struct fgd *d)
{
	struct fg_evset_opts track = { .kind = FG_EVSET_TRACK, .ring_pages = d->conf.track_ring_pages };
	int listen_fd = -1;
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
	sigaddset(&mask, SIGHUP);
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
	if (d->conf.default_frequency > d->max_rate) {
		log_error("Default frequency %u Hz is above kernel.perf_event_max_sample_rate (%u)",
			  d->conf.default_frequency, d->max_rate);
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
	if (r >= 0)
		r = budget_setup(d);
	if (r < 0)
		return log_error("Out of memory"), r;
	fg_jit__set_max_map(fg_proctab__jit(d->procs), d->conf.jit_map_max);

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
	/* From here on, files are read on the loader's thread, never in the loop. */
	r = fg_loader__new(&d->loader);
	if (r < 0)
		return log_error("Failed to start the loader thread: %s", strerror(-r)), r;
	d->loader_watch = (struct fgd_watch){ .fd = fg_loader__fd(d->loader), .fn = loader_event };
	r = fgd_watch_add(d, &d->loader_watch, EPOLLIN);
	if (r < 0)
		return log_error("Failed to watch the loader: %s", strerror(-r)), r;
	fg_symbolizer__set_loader(d->sym, d->loader);
	fg_unwinder__set_loader(d->unwinder, d->loader);

	r = sd_listen_fds(true);
	if (r > 1)
		return log_error("systemd passed %d sockets, expected one", r), -EINVAL;
	if (r == 1) {
		listen_fd = SD_LISTEN_FDS_START;
		if (sd_is_socket_unix(listen_fd, SOCK_STREAM, 1, NULL, 0) <= 0)
			return log_error("The socket systemd passed is not a listening Unix stream "
					 "socket"), -EINVAL;
	} else {
		if (r < 0)
			log_warning("Failed to read the sockets systemd passed: %s, binding %s, ignoring",
				    strerror(-r), d->conf.socket_path);
		make_socket_dir(d->conf.socket_path);
	}
	r = fgd_server__new(d, listen_fd, &d->server);
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
	budget_ready(d);
	return 0;
}

static void teardown(struct fgd *d)
{
	d->server = fgd_server__free(d->server);
	d->alwayson = fgd_alwayson__free(d->alwayson);
	/*
	 * Its jobs hold references to dsos and the unwinder: before those go.
	 * What they free from now on, they free themselves.
	 */
	if (d->sym)
		fg_symbolizer__set_loader(d->sym, NULL);
	if (d->unwinder)
		fg_unwinder__set_loader(d->unwinder, NULL);
	d->loader = fg_loader__free(d->loader);
	d->tracker = fg_evset__free(d->tracker);
	d->procs = fg_proctab__free(d->procs);
	d->unwinder = fg_unwinder__free(d->unwinder);
	d->sym = fg_symbolizer__free(d->sym);
	d->budget = fg_budget__free(d->budget); /* after every component that charged it */
	free(d->cpu_totals);
	safe_close(d->signal_watch.fd);
	safe_close(d->epoll_fd);
	fgd_config_done(&d->conf);
}

/* Resident memory of the daemon, from /proc/self/statm; 0 if unknown. */
static uint64_t rss_bytes(void)
{
	_cleanup_(fclosep) FILE *f = fopen("/proc/self/statm", "re");
	unsigned long long size, resident;

	if (!f || fscanf(f, "%llu %llu", &size, &resident) != 2)
		return 0;
	return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Samples and losses of every recording since start, finished or not. */
static void sample_totals(struct fgd *d, struct fg_cpu_counters *ret)
{
	struct fg_cpu_counters sum = { 0 };

	for (size_t i = 0; i < d->n_cpu_totals; i++)
		fg_cpu_counters_add(&sum, &d->cpu_totals[i].c);
	fgd_server__add_live_counters(d->server, &sum);
	*ret = sum;
}

struct status_clock {
	uint64_t at;      /* CLOCK_MONOTONIC ns of the last STATUS= */
	uint64_t samples; /* sample_totals() then */
};

/* STATUS=, the one line systemctl status shows. */
static void send_status(struct fgd *d, struct status_clock *last, uint64_t now)
{
	struct fg_cpu_counters t;
	double rate = 0;

	sample_totals(d, &t);
	if (last->at && now > last->at && t.samples >= last->samples)
		rate = (double)(t.samples - last->samples) * 1e9 / (double)(now - last->at);
	(void)sd_notifyf(false, "STATUS=%s on %zu CPUs, default %u Hz, %zu recording%s, "
			 "%.0f samples/s, %" PRIu64 " lost, RSS %.1f MiB",
			 d->event.name, d->n_cpu_totals, d->conf.default_frequency,
			 fgd_server__recordings(d->server),
			 fgd_server__recordings(d->server) == 1 ? "" : "s", rate,
			 t.lost + t.lost_samples, (double)rss_bytes() / (1 << 20));
	last->at = now;
	last->samples = t.samples;
}

/*
 * SIGTERM or SIGINT ended the loop; everything is still live. Anything that
 * must outlive the daemon is written here, before systemd hears STOPPING=1.
 */
static void stopping(struct fgd *d)
{
	/* The open slice is cut short and kept: a restart finds the history up to now. */
	if (d->alwayson)
		fgd_alwayson__flush(d->alwayson);
	(void)sd_notify(false, "STOPPING=1");
}

static int run(struct fgd *d)
{
	uint64_t next_round = fgd_now(), next_reap = next_round + REAP_INTERVAL_NS;
	uint64_t next_status = next_round + STATUS_INTERVAL_NS, next_watchdog = UINT64_MAX;
	uint64_t watchdog_ns = 0, watchdog_usec;
	struct status_clock status = { 0 };

	/* Pinged from the loop itself, twice per timeout: a stuck loop is a dead daemon. */
	if (sd_watchdog_enabled(false, &watchdog_usec) > 0) {
		watchdog_ns = watchdog_usec * 1000 / 2;
		next_watchdog = next_round;
	}
	send_status(d, &status, next_round);
	while (!d->quit) {
		struct epoll_event evs[64];
		uint64_t now = fgd_now(), due = MIN(next_round, next_watchdog);
		int64_t wait = due > now ? (int64_t)((due - now) / 1000000) + 1 : 0;
		int n = epoll_wait(d->epoll_fd, evs, ELEMENTSOF(evs), (int)wait);

		uint64_t woke = fgd_now(), busy;

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
		budget_relieve(d, now);
		fgd_server__tick(d->server);
		/* A recording may have started: drain soon rather than in a second. */
		if (fgd_server__busy(d->server) && next_round > now + ROUND_BUSY_NS)
			next_round = now + ROUND_BUSY_NS;
		if (now >= next_reap) {
			fg_proctab__reap(d->procs, now, REAP_GRACE_NS);
			fg_unwinder__trim(d->unwinder, UNWIND_IDLE_NS / REAP_INTERVAL_NS);
			fg_budget__set_rss(d->budget, rss_bytes());
			next_reap = now + REAP_INTERVAL_NS;
		}
		if (d->reload_requested && !d->quit)
			reload(d);
		if (now >= next_status) {
			send_status(d, &status, now);
			next_status = now + STATUS_INTERVAL_NS;
		}
		if (now >= next_watchdog) {
			(void)sd_notify(false, "WATCHDOG=1");
			next_watchdog = now + watchdog_ns;
		}
		/* Time away from the rings and the clients, whatever the cause: what status shows. */
		busy = fgd_now() - woke;
		d->loop.iterations++;
		d->loop.longest_ns = MAX(d->loop.longest_ns, busy);
		d->loop.slow += busy > FGD_SLOW_ITERATION_NS;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fgd d = { .epoll_fd = -1, .signal_watch.fd = -1 };
	int r;

	/*
	 * Big blocks (symbol tables, DWARF, result buffers) come straight from
	 * mmap and go back with munmap, outside malloc's arena locks: the
	 * loader thread builds and frees hundreds of MiB, and the loop must
	 * never wait for an arena the loader holds while it copies or trims a
	 * large block. (A set threshold also stops glibc from raising it to 32
	 * MiB as blocks are freed.)
	 */
	(void)mallopt(M_MMAP_THRESHOLD, 256 << 10);
	r = parse_args(argc, argv);
	if (r <= 0)
		return r < 0 ? 2 : 0;
	if (load_config(&d.conf) < 0)
		return 2;
	r = setup(&d);
	if (r >= 0) {
		log_info("fgd %s ready on %s (%s, %zu CPUs, default %u Hz)", FG_VERSION,
			 fgd_server__path(d.server), d.event.name, d.n_cpu_totals,
			 d.conf.default_frequency);
		(void)sd_notify(false, "READY=1");
		r = run(&d);
		stopping(&d);
	}
	teardown(&d);
	return r < 0 ? 1 : 0;
}
