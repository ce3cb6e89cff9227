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

#include "base/macro.h"
#include "base/parse.h"
#include "config.h"
#include "fgd-clock.h"
#include "fgd-conf.h"
#include "fgd-engine.h"
#include "fgd-log.h"
#include "fgd-loop.h"
#include "server/fgd-server.h"

/*
 * Drain interval while recording. Each round starts on caches the sampled
 * programs have since filled with their own data, and wakes the loader
 * once: at 999 Hz on two CPUs of g++ compiles, fgd's CPU per sample was a
 * quarter lower with rounds of 250 ms than of 100 ms (bench_ab.py). Rings
 * that fill sooner wake the loop at their watermark (half the ring), and a
 * recording's end is its own wakeup (fgd_server__next_deadline()).
 */
#define ROUND_BUSY_NS (250ULL * 1000000ULL)
#define ROUND_IDLE_NS (1000ULL * 1000000ULL)    /* only tracking to keep current */
#define TICK_INTERVAL_NS (1000ULL * 1000000ULL) /* fgd_engine__tick(): reaping, trimming */
/* How often STATUS= is refreshed for systemctl status. */
#define STATUS_INTERVAL_NS (5ULL * 1000000000ULL)

/* Command-line settings: unset (NULL or 0) leaves the configuration file's, or the default. */
static const char *arg_config; /* NULL: FGD_CONFIG_FILE, which may be missing */
static const char *arg_socket;
static const char *arg_group;
static const char *arg_reader_group;
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

/*
 * The daemon: its configuration, and the three parts fgd.c wires together
 * and runs (docs/ARCHITECTURE.md): the loop, the engine, the server.
 */
struct fgd {
	struct fgd_config conf;
	struct fgd_loop *loop; /* owned */
	struct fgd_watch signal_watch;
	struct fgd_engine *engine; /* owned */
	struct fgd_server *server; /* owned */
	bool quit;
	bool reload_requested; /* SIGHUP */
};

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
	       "      --reader-group NAME  group whose members may read every process's\n"
	       "                           always-on data (snapshot, top), not record it;\n"
	       "                           default: '" FGD_DEFAULT_READER_GROUP
	       "' if that group exists\n"
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
	enum {
		ARG_VERSION = 0x100,
		ARG_RING_PAGES,
		ARG_CALL_GRAPH,
		ARG_STACK_DUMP,
		ARG_NO_ALWAYS_ON,
		ARG_ALWAYS_ON_FREQUENCY,
		ARG_SLICE_SECONDS,
		ARG_WINDOW_SECONDS,
		ARG_MEMORY_MAX,
		ARG_STATE_DIRECTORY,
		ARG_READER_GROUP,
	};
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "socket-group", required_argument, NULL, 'g' },
		{ "reader-group", required_argument, NULL, ARG_READER_GROUP },
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
		{},
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
		case ARG_READER_GROUP:
			arg_reader_group = optarg;
			break;
		case 'F':
			if (fg_parse_u32(optarg, 1, 100000, &arg_frequency) < 0) {
				fprintf(stderr,
					"fgd: invalid frequency '%s': expected 1 to 100000 Hz\n",
					optarg);
				return -EINVAL;
			}
			break;
		case ARG_RING_PAGES:
			if (fg_parse_u32(optarg, 1, 65536, &v) < 0 || (v & (v - 1))) {
				fprintf(stderr,
					"fgd: invalid ring size '%s': expected a power of two pages\n",
					optarg);
				return -EINVAL;
			}
			arg_ring_pages = v;
			break;
		case ARG_CALL_GRAPH:
			if (fg_call_graph_from_name(optarg, &arg_call_graph) < 0) {
				fprintf(stderr,
					"fgd: invalid call graph mode '%s': expected fp or dwarf\n",
					optarg);
				return -EINVAL;
			}
			arg_call_graph_set = true;
			break;
		case ARG_STACK_DUMP:
			if (fg_parse_u32(optarg, 8, FG_PROTO_MAX_STACK_DUMP, &v) < 0 ||
			    fg_stack_dump_check(v) < 0) {
				fprintf(stderr,
					"fgd: invalid stack dump size '%s': expected a multiple of 8 "
					"from 8 to %d bytes\n",
					optarg, FG_PROTO_MAX_STACK_DUMP);
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
				fprintf(stderr, "fgd: invalid slice length '%s': 1 to 3600 s\n",
					optarg);
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
 * ReaderGroup= to its gid, now: a group renamed or made later counts from
 * the next reload. Without the key, "fgd-readers" if that group exists,
 * else no reader role. A group that was named and does not exist is an
 * error, as SocketGroup='s is at start: a mistyped name must not pass
 * unnoticed (a reload with one keeps the running configuration).
 */
static int resolve_reader_group(struct fgd_config *c)
{
	const char *name = c->reader_group ?: FGD_DEFAULT_READER_GROUP;
	struct group *g;

	g = getgrnam(name);
	if (!g && c->reader_group)
		return log_error("No such group: %s (ReaderGroup=)", name), -ENOENT;
	if (!g)
		return 0;
	if (!c->reader_group && fgd_config_set_string(&c->reader_group, name) < 0)
		return log_error("Out of memory"), -ENOMEM;
	c->reader_gid = g->gr_gid;
	log_debug("Reader group: %s (gid %u)", name, (unsigned)g->gr_gid);
	return 0;
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
	    (arg_group && fgd_config_set_string(&c.socket_group, arg_group) < 0) ||
	    (arg_reader_group && fgd_config_set_string(&c.reader_group, arg_reader_group) < 0))
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
	if (arg_state_directory &&
	    fgd_config_set_string(&c.state_directory, arg_state_directory) < 0)
		return log_error("Out of memory"), -ENOMEM;
	r = fgd_config_check(&c, &err);
	if (r < 0)
		return log_error("Invalid configuration with the command line: %s", err.message), r;
	if (!c.socket_group && getgrnam("fgd") && fgd_config_set_string(&c.socket_group, "fgd") < 0)
		return log_error("Out of memory"), -ENOMEM;
	r = resolve_reader_group(&c);
	if (r < 0)
		return r;

	*ret = c;
	c = (struct fgd_config){ 0 };
	return 0;
}

static bool streq_ptr(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Logs what a reload changed of the defaults the next recordings get. */
static void log_config_changes(const struct fgd_config *c, const struct fgd_config *old)
{
	/* Recordings keep the settings they started with; these are for the next ones. */
	if (c->default_frequency != old->default_frequency)
		log_info("Default frequency: %u Hz (was %u)", c->default_frequency,
			 old->default_frequency);
	if (c->call_graph != old->call_graph)
		log_info("Default call graph: %s (was %s)", fg_call_graph_name(c->call_graph),
			 fg_call_graph_name(old->call_graph));
	if (c->stack_dump != old->stack_dump)
		log_info("Default stack dump: %u bytes (was %u)", c->stack_dump, old->stack_dump);
	if (c->ring_pages != old->ring_pages)
		log_info("Ring pages: %zu per CPU (was %zu)", c->ring_pages, old->ring_pages);
	if (c->off_cpu_user_rate != old->off_cpu_user_rate)
		log_info("Off-CPU rate of non-root recordings: %u blocks/s (was %u; 0: no limit)",
			 c->off_cpu_user_rate, old->off_cpu_user_rate);
	if (c->memory_max != old->memory_max)
		log_info("Memory budget: %" PRIu64 " bytes (was %" PRIu64 ")", c->memory_max,
			 old->memory_max);
	/* A connection's role is decided when it connects: open ones keep theirs. */
	if (!streq_ptr(c->reader_group, old->reader_group) || c->reader_gid != old->reader_gid)
		log_info("Reader group: %s (was %s), for new connections",
			 c->reader_group ?: "(none)", old->reader_group ?: "(none)");
}

/* Whether c's always-on settings differ from old's: those the sampler is built with. */
static bool always_on_changed(const struct fgd_config *c, const struct fgd_config *old)
{
	return c->always_on != old->always_on ||
	       c->always_on_frequency != old->always_on_frequency || c->off_cpu != old->off_cpu ||
	       c->off_cpu_min_block_us != old->off_cpu_min_block_us ||
	       c->slice_seconds != old->slice_seconds || c->window_seconds != old->window_seconds ||
	       c->memory_max != old->memory_max ||
	       !streq_ptr(c->state_directory, old->state_directory) ||
	       (c->always_on &&
		(c->call_graph != old->call_graph || c->stack_dump != old->stack_dump ||
		 c->ring_pages != old->ring_pages));
}

/* Puts old's always-on settings back into c. 0 or -ENOMEM. */
static int keep_always_on_settings(struct fgd_config *c, const struct fgd_config *old)
{
	c->always_on = old->always_on;
	c->always_on_frequency = old->always_on_frequency;
	c->off_cpu = old->off_cpu;
	c->off_cpu_min_block_us = old->off_cpu_min_block_us;
	c->slice_seconds = old->slice_seconds;
	c->window_seconds = old->window_seconds;
	c->memory_max = old->memory_max;
	return fgd_config_set_string(&c->state_directory, old->state_directory);
}

/*
 * The loop's priority, RealtimePriority= (was: what it was before a reload).
 * Set once the loader's thread exists, which keeps normal priority.
 */
static void loop_priority(struct fgd *d, uint32_t was)
{
	uint32_t want = d->conf.realtime_priority;
	int r;

	if (want == was)
		return;
	r = fgd_loop__set_realtime(d->loop, want);
	if (r < 0)
		log_warning("The loop cannot run at real-time priority %u (RealtimePriority=): %s; "
			    "on a machine saturated by runnable threads its turns then wait for a "
			    "CPU, ignoring",
			    want, strerror(-r));
	else if (want)
		log_info("The loop runs at real-time priority %u (SCHED_FIFO), for %llu ms at most "
			 "without sleeping",
			 want, (unsigned long long)FGD_REALTIME_MAX_US / 1000);
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
	struct fgd_engine_stats es;
	struct fgd_config old;
	bool restart;

	d->reload_requested = false;
	(void)sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, fgd_now() / 1000);
	log_info("Received SIGHUP, reloading %s", path);
	if (load_config(&next) < 0) {
		log_error("Failed to reload the configuration, keeping the running one");
		goto done;
	}
	fgd_engine__stats(d->engine, &es);
	if (next.default_frequency > es.max_frequency) {
		log_error(
			"Frequency=%u is above kernel.perf_event_max_sample_rate (%u), keeping the "
			"running configuration",
			next.default_frequency, es.max_frequency);
		goto done;
	}
	if (!streq_ptr(next.socket_path, d->conf.socket_path)) {
		log_warning("The socket cannot move without a restart: still on %s, ignoring %s",
			    d->conf.socket_path, next.socket_path);
		if (fgd_config_set_string(&next.socket_path, d->conf.socket_path) < 0)
			goto oom;
	}
	if (!streq_ptr(next.socket_group, d->conf.socket_group)) {
		log_warning(
			"The socket group cannot change without a restart: still %s, ignoring %s",
			d->conf.socket_group ?: "(none)", next.socket_group ?: "(none)");
		if (fgd_config_set_string(&next.socket_group, d->conf.socket_group) < 0)
			goto oom;
	}
	restart = always_on_changed(&next, &d->conf);
	/* Without a history the window in memory is all there is: replacing the sampler would lose it. */
	if (restart && fgd_engine__alwayson(d->engine) && !fgd_engine__has_history(d->engine)) {
		log_warning(
			"Always-on settings changed, but with no history on disk applying them would "
			"lose the window in memory: they take effect at the next start");
		if (keep_always_on_settings(&next, &d->conf) < 0)
			goto oom;
		restart = false;
	}
	old = d->conf;
	d->conf = next;
	next = old; /* freed on return, after the hook saw it */
	log_config_changes(&d->conf, &old);
	loop_priority(d, old.realtime_priority);
	if (fgd_engine__reconfigure(d->engine, restart) < 0) {
		log_warning("Keeping the running always-on settings");
		if (keep_always_on_settings(&d->conf, &old) < 0)
			log_error(
				"Out of memory: StateDirectory= now says %s, the history in use is %s",
				d->conf.state_directory ?: "(none)",
				old.state_directory ?: "(none)");
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

static void signal_setup_mask(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGHUP);
}

static int setup(struct fgd *d)
{
	const char *why = NULL;
	int listen_fd = -1;
	sigset_t mask;
	int r;

	r = fgd_loop__new(&d->loop);
	if (r < 0)
		return log_error("Failed to create the event loop: %s", strerror(-r)), r;

	signal_setup_mask(&mask);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->signal_watch.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->signal_watch.fn = signal_event;
	if (d->signal_watch.fd < 0 || fgd_loop__add(d->loop, &d->signal_watch, EPOLLIN) < 0)
		return log_error("Failed to set up signal handling: %m"), negative_errno();

	r = fgd_engine__new(&d->conf, d->loop, &d->engine, &why);
	if (r < 0)
		return log_error("Failed to start: %s: %s", why, strerror(-r)), r;

	r = sd_listen_fds(true);
	if (r > 1)
		return log_error("systemd passed %d sockets, expected one", r), -EINVAL;
	if (r == 1) {
		listen_fd = SD_LISTEN_FDS_START;
		if (sd_is_socket_unix(listen_fd, SOCK_STREAM, 1, NULL, 0) <= 0)
			return log_error("The socket systemd passed is not a listening Unix stream "
					 "socket"),
			       -EINVAL;
	} else {
		if (r < 0)
			log_warning(
				"Failed to read the sockets systemd passed: %s, binding %s, ignoring",
				strerror(-r), d->conf.socket_path);
		make_socket_dir(d->conf.socket_path);
	}
	r = fgd_server__new(&d->conf, d->loop, d->engine, listen_fd, &d->server);
	if (r == -EADDRINUSE)
		return log_error("Another fgd is already serving %s", d->conf.socket_path), r;
	if (r == -ENOENT && d->conf.socket_group)
		return log_error("No such group: %s", d->conf.socket_group), r;
	if (r == -EEXIST)
		return log_error("Failed to listen on %s: something that is not a socket is there "
				 "(fgd removes only a socket it no longer serves)",
				 d->conf.socket_path),
		       r;
	if (r < 0)
		return log_error("Failed to listen on %s: %s", d->conf.socket_path, strerror(-r)),
		       r;
	loop_priority(d, 0);
	return 0;
}

static void teardown(struct fgd *d)
{
	/* Clients go first: their recordings are the engine's until they let them go. */
	d->server = fgd_server__free(d->server);
	d->engine = fgd_engine__free(d->engine);
	if (d->loop && d->signal_watch.fd >= 0)
		fgd_loop__del(d->loop, &d->signal_watch);
	safe_close(d->signal_watch.fd);
	d->loop = fgd_loop__free(d->loop);
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

struct status_clock {
	uint64_t at;      /* CLOCK_MONOTONIC ns of the last STATUS= */
	uint64_t samples; /* of every recording since start, then */
};

/* STATUS=, the one line systemctl status shows. */
static void send_status(struct fgd *d, struct status_clock *last, uint64_t now)
{
	struct fg_cpu_counters t = { 0 };
	struct fgd_engine_stats es;
	double rate = 0;

	/* Samples and losses of every recording since start, finished or not. */
	fgd_engine__stats(d->engine, &es);
	for (size_t i = 0; i < es.n_cpu_totals; i++)
		fg_cpu_counters_add(&t, &es.cpu_totals[i].c);
	fgd_engine__live_counters(d->engine, &t);
	if (last->at && now > last->at && t.samples >= last->samples)
		rate = (double)(t.samples - last->samples) * 1e9 / (double)(now - last->at);
	(void)sd_notifyf(false,
			 "STATUS=%s on %zu CPUs, default %u Hz, %zu recording%s, "
			 "%.0f samples/s, %" PRIu64 " lost, RSS %.1f MiB",
			 es.event.name, es.n_cpu_totals, d->conf.default_frequency, es.recordings,
			 es.recordings == 1 ? "" : "s", rate, t.lost + t.lost_samples,
			 (double)rss_bytes() / (1 << 20));
	last->at = now;
	last->samples = t.samples;
}

/*
 * SIGTERM or SIGINT ended the loop; everything is still live. Anything that
 * must outlive the daemon is written here, before systemd hears STOPPING=1.
 */
static void stopping(struct fgd *d)
{
	fgd_engine__stopping(d->engine);
	(void)sd_notify(false, "STOPPING=1");
}

static int run(struct fgd *d)
{
	uint64_t next_round = fgd_now(), next_tick = next_round + TICK_INTERVAL_NS;
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
		/* A recording's end, and off-CPU blocks left behind by the last round. */
		uint64_t deadline = MIN(fgd_server__next_deadline(d->server),
					fgd_engine__blocks_due(d->engine));
		uint64_t now = fgd_now(), due = MIN(MIN(next_round, next_watchdog), deadline);
		int64_t wait = due > now ? (int64_t)((due - now) / 1000000) + 1 : 0;
		int r = fgd_loop__wait(d->loop, (int)wait);

		if (r < 0)
			return log_error("epoll_wait failed: %s", strerror(-r)), r;
		now = fgd_now();
		if (fgd_engine__drain_wanted(d->engine) || now >= next_round ||
		    now >= fgd_engine__blocks_due(d->engine)) {
			fgd_engine__drain(d->engine);
			next_round =
				now + (fgd_engine__busy(d->engine) ? ROUND_BUSY_NS : ROUND_IDLE_NS);
		}
		fgd_server__tick(d->server);
		fgd_engine__relieve(d->engine, now);
		/* A recording may have started: drain soon rather than in a second. */
		if (fgd_engine__busy(d->engine) && next_round > now + ROUND_BUSY_NS)
			next_round = now + ROUND_BUSY_NS;
		if (now >= next_tick) {
			fgd_engine__tick(d->engine, now);
			next_tick = now + TICK_INTERVAL_NS;
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
		if (fgd_loop__demoted(d->loop))
			log_warning(
				"The loop ran %llu ms without sleeping at real-time priority: it "
				"runs at normal priority from now on (a reload with "
				"RealtimePriority= sets it again)",
				(unsigned long long)FGD_REALTIME_MAX_US / 1000);
		fgd_loop__turn_done(d->loop);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fgd d = { .signal_watch.fd = -1 };
	struct fgd_engine_stats es;
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
		fgd_engine__stats(d.engine, &es);
		log_info("fgd %s ready on %s (%s, %zu CPUs, default %u Hz)", FG_VERSION,
			 fgd_server__path(d.server), es.event.name, es.n_cpu_totals,
			 d.conf.default_frequency);
		(void)sd_notify(false, "READY=1");
		r = run(&d);
		stopping(&d);
	}
	teardown(&d);
	return r < 0 ? 1 : 0;
}
