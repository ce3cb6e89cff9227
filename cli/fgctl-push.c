/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl push: fgd's always-on profiles, period by period, to a
 * Pyroscope-compatible ingest API (common/proto/ingest.h says what is sent and
 * how the cursor keeps the place). fgd itself has no network: this is the
 * part that talks to the fleet's store, as the calling user, and nothing
 * it meets there (a server down, slow or refusing) reaches fgd.
 *
 * Each period is one snapshot of fgd's window and history (folded text),
 * split by application (a process group: the stacks under one comm), and
 * one request per application, pprof (encoded here, common/profile/pprof-model.h)
 * or folded text.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/parse.h"
#include "base/safefile.h"
#include "base/strpool.h"
#include "fgctl-client.h"
#include "fgctl-display.h"
#include "fgctl-http.h"
#include "fgctl-optfile.h"
#include "fgctl-push-opts.h"
#include "fgctl-query.h"
#include "fgctl.h"
#include "profile/folded.h"
#include "profile/pprof-model.h"
#include "profile/procframe.h"
#include "proto/backoff.h"
#include "proto/ingest.h"
#include "proto/proto.h"
#include "proto/when.h"
#include "storage/window.h"

/*
 * After a failure push waits 1 s, then 2 s, 4 s... up to a minute, each
 * drawn in its upper half: a store back from an outage is not met by every
 * host at once, and one that stays down costs a request a minute.
 */
#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 60000
/* A server's Retry-After is waited for up to this: a longer one is a mistake, or hostile. */
#define RETRY_AFTER_MAX_MS 300000

/* What a push did: reported at the end, and for each period unless quiet. */
struct push_stats {
	uint64_t periods, empty_periods; /* done, and of those, done with nothing to send */
	uint64_t sent;                   /* profiles the server took */
	uint64_t failures;               /* requests that failed (each attempt) */
	uint64_t retries;  /* requests tried again at once, after a reply that may change */
	uint64_t put_off;  /* periods stopped on a failure, to be tried again after the backoff */
	uint64_t rejected; /* profiles the server refused for good (4xx): given up */
	uint64_t gap_ms;   /* time not pushed: older than --catch-up */
	/* periods fgd has no record of, whole (lost) or in part (sent incomplete) */
	uint64_t lost_periods, incomplete_periods;
};

/* When push tries the store again after a failure (common/proto/backoff.h). */
struct push_retry {
	struct fg_backoff schedule;
	uint64_t seed;     /* the jitter's xorshift64 state, never 0 */
	int64_t server_ms; /* what the last Retry-After asked, not yet waited for; 0: nothing */
};

struct push {
	struct fgctl_push_opts o;
	const char *socket;             /* borrowed */
	struct fg_request query;        /* the snapshot request: selectors, folded */
	struct fgctl_http *http;        /* owned */
	struct fg_ingest_cursor cursor; /* owned: where push is, saved to cursor_path */
	int cursor_dir_fd;              /* owned: cursor_path's directory, or -1 */
	const char *cursor_name;        /* borrowed from cursor_path: its last component */
	char host[256];
	struct push_retry retry;
	struct push_stats st;
	bool failed; /* something was not pushed (--once's exit status) */
};

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A local time of day for messages. */
static const char *hms(int64_t ms, char buf[16])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, 16, "%H:%M:%S", &tm))
		snprintf(buf, 16, "?");
	return buf;
}

/* ---- the cursor file ---- */

/*
 * The cursor decides what is sent and where push writes as the calling
 * user, often root; so it is read and written only through its directory's
 * descriptor (opened once by cursor_check()), never through a link, and
 * only in a directory nobody else can write (common/base/safefile.h).
 */

static int cursor_load(struct push *p)
{
	_cleanup_close_ int fd = -1;
	char buf[1 << 16];
	struct stat st;
	ssize_t n = -1;
	const char *why = NULL;

	if (!p->o.cursor_path)
		return FGCTL_EXIT_OK;
	/* O_NONBLOCK: a FIFO planted there is refused below, not waited on. */
	fd = openat(p->cursor_dir_fd, p->cursor_name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return FGCTL_EXIT_OK;
	if (fd < 0)
		why = errno == ELOOP ? "it is a symlink" : strerror(errno);
	else if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "it is not a regular file";
	else if (!fg_safefile_owned(&st, geteuid()))
		why = "it belongs to another user";
	else if ((n = read(fd, buf, sizeof(buf))) < 0)
		why = strerror(errno);
	else if ((size_t)n == sizeof(buf) || fg_ingest_cursor_parse(buf, (size_t)n, &p->cursor) < 0)
		why = "it is not a push cursor, or damaged";
	if (why) {
		fprintf(stderr,
			"fgctl: cannot use the cursor %s: %s; move it away to start afresh\n",
			p->o.cursor_path, why);
		return FGCTL_EXIT_INPUT;
	}
	return FGCTL_EXIT_OK;
}

/*
 * Opens the cursor's directory and checks, before anything is sent, that
 * push may keep its place there: a directory of the caller's (or root's)
 * that nobody else can write, and that the caller can. Creates nothing. An
 * exit code, having said why.
 */
static int cursor_check(struct push *p)
{
	const char *why;
	struct stat st;
	int r;

	if (!p->o.cursor_path)
		return FGCTL_EXIT_OK;
	r = fg_safefile_open_dir(AT_FDCWD, p->o.cursor_path, &p->cursor_dir_fd, &p->cursor_name);
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot write the cursor %s: %s\n", p->o.cursor_path,
			r == -EISDIR ? "it names a directory, not a file" : strerror(-r));
		return FGCTL_EXIT_OUTPUT;
	}
	if (fstat(p->cursor_dir_fd, &st) < 0) {
		fprintf(stderr, "fgctl: cannot use the cursor %s: %m\n", p->o.cursor_path);
		return FGCTL_EXIT_OUTPUT;
	}
	why = fg_safefile_dir_unsafe(&st, geteuid());
	if (why) {
		fprintf(stderr,
			"fgctl: refusing the cursor %s: its directory is not safe for it: %s; "
			"keep the cursor in a directory of your own that only you can write\n",
			p->o.cursor_path, why);
		return FGCTL_EXIT_INPUT;
	}
	if (faccessat(p->cursor_dir_fd, ".", W_OK, AT_EACCESS) < 0) {
		fprintf(stderr, "fgctl: cannot write the cursor %s: %m\n", p->o.cursor_path);
		return FGCTL_EXIT_OUTPUT;
	}
	return FGCTL_EXIT_OK;
}

/* Writes the cursor beside its file and renames it over: a crash leaves the old or the new. */
static int cursor_save(struct push *p)
{
	struct fg_outbuf b = {};
	int r;

	if (!p->o.cursor_path)
		return 0;
	fg_ingest_cursor_format(&p->cursor, &b);
	r = b.err;
	if (r >= 0)
		r = fg_safefile_write(p->cursor_dir_fd, p->cursor_name, b.data, b.used, 0644);
	if (r < 0)
		fprintf(stderr, "fgctl: cannot write the cursor %s: %s\n", p->o.cursor_path,
			strerror(-r));
	fg_outbuf_done(&b);
	return r;
}

/*
 * A cursor that ends after now: the clock was set back, or the file came
 * from another host or a backup. No period is due until the clock passes
 * it, and push would wait without a word, so it is said at start and at
 * every period until then. True while it is so.
 */
static bool cursor_ahead(struct push *p, int64_t now)
{
	time_t t = (time_t)(p->cursor.until_ms / 1000);
	char when[32];
	struct tm tm;

	if (p->cursor.until_ms <= now)
		return false;
	if (!localtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(when, sizeof(when), "?");
	fprintf(stderr,
		"fgctl: push: the cursor%s%s ends at %s, %.1f s after now: the clock was set "
		"back%s; nothing is pushed until the clock passes it%s\n",
		p->o.cursor_path ? " " : "", p->o.cursor_path ? p->o.cursor_path : "", when,
		(double)(p->cursor.until_ms - now) / 1000.0,
		p->o.cursor_path ? ", or the cursor came from another host" : "",
		p->o.cursor_path ? " (move the cursor away to start from now)" : "");
	p->failed = true;
	return true;
}

/* ---- when to try again ---- */

/* The jitter's draws: xorshift64, seeded apart on each host (retry_init()). */
static uint64_t retry_draw(void *ctx)
{
	uint64_t *x = ctx;

	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void retry_init(struct push_retry *r)
{
	*r = (struct push_retry){
		.schedule = { .first_ms = BACKOFF_FIRST_MS, .max_ms = BACKOFF_MAX_MS },
	};
	/* Pushers restarted together (a fleet's deploy) must not back off together. */
	if (getrandom(&r->seed, sizeof(r->seed), GRND_NONBLOCK) != (ssize_t)sizeof(r->seed))
		r->seed = (uint64_t)wall_ms() ^ (uint64_t)getpid() << 32;
	r->seed |= 1;
}

/* A request went through: the store is back, the next failure waits from the start again. */
static void retry_reset(struct push_retry *r)
{
	fg_backoff__reset(&r->schedule);
	r->server_ms = 0;
}

/* The server's Retry-After, if it gave one: the next wait is at least that. */
static void retry_note(struct push_retry *r, const char *app, const struct fgctl_http_result *res)
{
	int64_t ms;

	if (!res->retry_after[0])
		return;
	if (fg_retry_after_parse(res->retry_after, strlen(res->retry_after), wall_ms(), INT64_MAX,
				 &ms) < 0) {
		fprintf(stderr,
			"fgctl: push of %s: the server's Retry-After '%s' is neither seconds nor "
			"an HTTP date, ignoring it\n",
			app, res->retry_after);
		return;
	}
	if (ms > RETRY_AFTER_MAX_MS)
		fprintf(stderr,
			"fgctl: push of %s: the server asks to wait %.0f s (Retry-After), longer "
			"than push waits: %d s\n",
			app, (double)ms / 1000.0, RETRY_AFTER_MAX_MS / 1000);
	r->server_ms = MIN(ms, (int64_t)RETRY_AFTER_MAX_MS);
}

/*
 * Waits before what (a message's subject) is tried again: the backoff's
 * next delay, or what the server asked if longer. Said, as every failure
 * is. True when a stop was asked for meanwhile.
 */
static bool retry_wait(struct push_retry *r, const char *what)
{
	int64_t ms = fg_backoff__next(&r->schedule, retry_draw, &r->seed);
	bool server = r->server_ms > ms;

	ms = MAX(ms, r->server_ms);
	r->server_ms = 0;
	fprintf(stderr, "fgctl: %s: trying again in %.1f s%s\n", what, (double)ms / 1000.0,
		server ? ", as the server asked (Retry-After)" : "");
	return fgctl_wait_for_signal(ms);
}

/* ---- one period ---- */

/*
 * The period's profile from fgd, folded, into *ret (the processes' comm at
 * each stack's root); what fgd said of the period in *ret_meta (NULL if
 * nothing; caller puts it): its sampling rate, and with or without samples,
 * the time fgd has no record of. 0; -ENODATA when fgd has no samples for it;
 * -EIO when fgd could not be asked (said why).
 */
static int fetch(struct push *p, int64_t from, int64_t until, struct fg_folded **ret,
		 struct json_object **ret_meta)
{
	_cleanup_(fg_folded__freep) struct fg_folded *model = fg_folded__new();
	struct fg_request req = p->query;
	struct fgctl_conn conn;
	char *pending = NULL; /* owned: an unfinished line */
	size_t pending_len = 0;
	int r;

	if (!model)
		return -ENOMEM;
	req.query.since_ms = from;
	req.query.until_ms = until;
	r = fgctl_query_send(p->socket, &req, &conn);
	if (r != 0)
		return r == FGCTL_EXIT_INTERRUPTED ? -EINTR : -EIO;
	for (r = -EIO;;) {
		_cleanup_(json_object_putp) struct json_object *msg = NULL;
		enum fgctl_event ev;
		const char *data, *type;
		size_t len;

		if (fgctl_next(&conn, &ev, &msg, &data, &len) < 0 || ev == FGCTL_EV_EOF) {
			fprintf(stderr, "fgctl: fgd closed the connection early\n");
			break;
		}
		if (ev == FGCTL_EV_SIGNAL) {
			r = -EINTR;
			break;
		}
		if (ev == FGCTL_EV_DATA) {
			/* Folded lines, cut anywhere by the chunks: whole lines go in. */
			char *buf = realloc(pending, pending_len + len);
			size_t start = 0;

			if (!buf) {
				r = -ENOMEM;
				break;
			}
			pending = buf;
			memcpy(pending + pending_len, data, len);
			pending_len += len;
			for (size_t i = 0; i < pending_len; i++) {
				if (pending[i] != '\n')
					continue;
				if (fg_folded__add_line(model, pending + start, i - start) < 0) {
					fprintf(stderr, "fgctl: fgd sent a malformed line\n");
					goto out;
				}
				start = i + 1;
			}
			memmove(pending, pending + start, pending_len - start);
			pending_len -= start;
			continue;
		}
		type = fgctl_get_str(msg, "type");
		if (strcmp(type, "error") == 0) {
			struct json_object *m;

			/* A period without samples may be one fgd has no record of: its meta says. */
			if (json_object_object_get_ex(msg, "meta", &m))
				*ret_meta = json_object_get(m);
			if (strcmp(fgctl_get_str(msg, "error"), "ENODATA") == 0)
				r = -ENODATA;
			else
				fprintf(stderr, "fgctl: fgd: %s\n", fgctl_get_str(msg, "message"));
			break;
		}
		if (strcmp(type, "result") == 0) {
			struct json_object *m;

			if (json_object_object_get_ex(msg, "meta", &m))
				*ret_meta = json_object_get(m);
		} else if (strcmp(type, "end") == 0) {
			r = pending_len == 0 ? 0 : -EIO;
			if (r < 0)
				fprintf(stderr, "fgctl: fgd's profile ended mid-line\n");
			break;
		}
	}
out:
	free(pending);
	fgctl_disconnect(&conn);
	if (r == 0)
		*ret = TAKE_PTR(model);
	return r;
}

/* The period's stacks by application: a model each, its id its name's in the pool. */
struct app {
	struct fg_folded *model; /* owned */
	uint32_t *map;           /* owned: per name id of the period's model, its id in this one */
};

struct apps {
	struct fg_strpool *names; /* owned: application names */
	struct app *v;            /* owned */
	size_t n, cap;
};

static void apps_done(struct apps *a)
{
	for (size_t i = 0; i < a->n; i++) {
		fg_folded__free(a->v[i].model);
		free(a->v[i].map);
	}
	free(a->v);
	fg_strpool__free(a->names);
}

/* A new application's model, for a period's model of n_names names. */
static int app_new(struct apps *a, size_t n_names)
{
	struct app *app;

	if (FG_GROW(a->v, a->cap, a->n + 1) < 0)
		return -ENOMEM;
	app = &a->v[a->n++];
	app->model = fg_folded__new();
	app->map = malloc(MAX(n_names, (size_t)1) * sizeof(uint32_t));
	if (!app->model || !app->map)
		return -ENOMEM;
	memset(app->map, 0xff, n_names * sizeof(uint32_t));
	return 0;
}

/* How many root frames the period's stacks have: [cgroup,] comm. */
static size_t n_roots(const struct push *p)
{
	return p->query.query.group_by == FG_GROUP_PROCESS ? 1 : 2;
}

/*
 * How many of a stack's frames are root frames: all of roots, or none for
 * the window's samples of no process ("[other processes]" alone).
 */
static size_t stack_roots(const struct fg_folded *m, const struct fg_stack *st, size_t roots)
{
	if (st->n_frames < roots || (st->n_frames == 1 && strcmp(fg_folded__name(m, st->frames[0]),
								 FG_PROCFRAME_OTHER) == 0))
		return 0;
	return roots;
}

/* Splits the period's stacks by the application their root frames name. */
static int split_apps(const struct push *p, const struct fg_folded *all, struct apps *a)
{
	size_t roots = n_roots(p);

	size_t n_names = fg_folded__n_names(all);
	struct fg_outbuf name = {};
	int err = 0;

	a->names = fg_strpool__new();
	if (!a->names)
		return -ENOMEM;
	for (size_t i = 0; err >= 0 && i < fg_folded__n_stacks(all); i++) {
		struct fg_stack st;
		struct fg_ingest_process proc;
		struct fg_procframe pf;
		char comm[256];
		uint32_t app, id;

		fg_folded__stack_by_id(all, (uint32_t)i, &st);
		/* "[other processes]" alone has no cgroup frame: it is its own application. */
		if (stack_roots(all, &st, roots)) {
			uint32_t frame = st.frames[roots - 1];

			/* "comm-pid": the application is the comm's, the pid a label. */
			fg_procframe_split(fg_folded__name(all, frame),
					   fg_folded__name_len(all, frame), true, false, &pf);
			snprintf(comm, sizeof(comm), "%.*s", (int)pf.comm_len,
				 fg_folded__name(all, frame));
			proc = (struct fg_ingest_process){
				.comm = comm,
				.cgroup = roots > 1 ? fg_folded__name(all, st.frames[0]) : NULL,
			};
		} else {
			proc = (struct fg_ingest_process){ .comm = fg_folded__name(all,
										   st.frames[0]) };
		}
		fg_outbuf_reset(&name);
		fg_ingest_app_name(p->o.name, &proc, &name);
		err = name.err;
		if (err >= 0)
			err = fg_strpool__intern(a->names, name.data ? name.data : "", name.used,
						 &app);
		/* Ids are dense and in order: a new name is the next application. */
		if (err > 0)
			err = app_new(a, n_names);
		if (err >= 0)
			err = fg_folded__add_from(a->v[app].model, all, (uint32_t)i, st.count,
						  a->v[app].map, &id);
	}
	fg_outbuf_done(&name);
	return err;
}

/* A sink for fg_folded__emit() that appends to an outbuf. */
static int put_outbuf(void *ctx, const void *buf, size_t len)
{
	struct fg_outbuf *b = ctx;

	fg_outbuf_put(b, buf, len);
	return b->err;
}

/*
 * An application's profile as folded text without its root frames (the
 * application and its labels name them); a sample without frames is
 * "[unknown]". Stacks that differed only in their root frames (two
 * processes of one comm) are one line: folded text has each stack once.
 */
static int folded_body(const struct fg_folded *m, size_t roots, struct fg_outbuf *b)
{
	_cleanup_(fg_folded__freep) struct fg_folded *body = fg_folded__new();
	struct fg_outbuf line = {};
	size_t cursor = 0;
	int r = body ? 0 : -ENOMEM;

	for (size_t i = 0; r >= 0 && i < fg_folded__n_stacks(m); i++) {
		struct fg_stack st;
		size_t first;
		char count[64];

		fg_folded__stack_by_id(m, (uint32_t)i, &st);
		first = stack_roots(m, &st, roots);
		fg_outbuf_reset(&line);
		if (first == st.n_frames)
			fg_outbuf_puts(&line, "[unknown]");
		for (size_t k = first; k < st.n_frames; k++) {
			if (k > first)
				fg_outbuf_put(&line, ";", 1);
			fg_outbuf_puts(&line, fg_folded__name(m, st.frames[k]));
		}
		fg_format_count(st.count, count, sizeof(count));
		fg_outbuf_printf(&line, " %s", count);
		r = line.err;
		if (r >= 0)
			r = fg_folded__add_line(body, line.data, line.used);
	}
	fg_outbuf_done(&line);
	if (r >= 0)
		r = fg_folded__sort(body);
	if (r >= 0)
		r = fg_folded__emit(body, &cursor, put_outbuf, b, SIZE_MAX) < 0 ? b->err ?: -EIO :
										  0;
	return r < 0 ? r : b->err;
}

/* Whether a server's refusal may change when the request is tried again. */
static bool retryable(const struct fgctl_http_result *res)
{
	return res->status == 408 || res->status == 429 || res->status >= 500;
}

/*
 * POSTs one profile. A reply that may change (408, 429, 5xx) is tried again
 * after the backoff, at most --retries times. No reply (a timeout, no
 * connection) is not: the next request would wait as long, so the period
 * stops at once. Nor is a redirect, which is not followed (the credentials
 * would go with it) and needs --url changed, yet is no refusal of the
 * profile. 0 when sent; -EREMOTEIO when refused for good; -EAGAIN when the
 * period stops here, to be tried again after the backoff (said why);
 * -EINTR; -ENOMEM.
 */
static int post(struct push *p, const char *app, const char *url, const void *body, size_t len)
{
	struct fgctl_http_result res;
	char what[FG_INGEST_MAX_APP + 16];

	for (uint32_t attempt = 0;; attempt++) {
		int r = fgctl_http__post(p->http, url, body, len,
					 p->o.format == FG_INGEST_PPROF ? "profile" : NULL,
					 "text/plain; charset=utf-8", &res);

		if (r == 0) {
			p->st.sent++;
			retry_reset(&p->retry);
			return 0;
		}
		if (r != -EIO)
			return r;
		p->st.failures++;
		retry_note(&p->retry, app, &res);
		if (res.status == 0) {
			fprintf(stderr, "fgctl: push of %s failed: the store %s: %s\n", app,
				res.timed_out ? "did not answer in time (--timeout)" :
						"could not be reached",
				res.error);
			return -EAGAIN;
		}
		if (res.status >= 300 && res.status < 400) {
			fprintf(stderr,
				"fgctl: push of %s failed: %s, a redirect to %s, which push does "
				"not follow (the credentials would go with it); the period stays "
				"due: point --url at the store itself\n",
				app, res.error,
				res.location[0] ? res.location : "nowhere (no Location)");
			return -EAGAIN;
		}
		fprintf(stderr, "fgctl: push of %s failed: %s\n", app, res.error);
		if (!retryable(&res))
			return -EREMOTEIO;
		if (attempt >= p->o.retries)
			return -EAGAIN;
		p->st.retries++;
		snprintf(what, sizeof(what), "push of %s", app);
		if (retry_wait(&p->retry, what))
			return -EINTR;
	}
}

/*
 * Sends one application's profile (post()). 0 when sent, -EREMOTEIO when
 * the server refused it for good, -EAGAIN when the period stops on it,
 * -EINTR when interrupted.
 */
static int send_app(struct push *p, const char *app, const struct fg_folded *m, int64_t from,
		    int64_t until, uint32_t rate, const char *comment)
{
	const char *comments[] = { comment, NULL };
	struct fg_pprof_meta meta = {
		.comments = comment[0] ? comments : NULL,
		.values = FG_PPROF_SAMPLES,
		.period_ns = rate ? 1000000000u / rate : 0,
		.time_ns = from * 1000000,
		.duration_ns = (until - from) * 1000000,
		.roots = n_roots(p) > 1 ? FG_PPROF_ROOTS_CGROUP_PROCESS : FG_PPROF_ROOTS_PROCESS,
		.pid = true,
	};
	struct fg_ingest_request req = {
		.base_url = p->o.url,
		.app = app,
		.host = p->host,
		.labels = p->o.labels,
		.n_labels = p->o.n_labels,
		.from_s = from / 1000,
		.until_s = (until + 999) / 1000,
		.sample_rate = rate,
		.format = p->o.format,
	};
	struct fg_outbuf url = {}, text = {};
	_cleanup_free_ uint8_t *pb = NULL;
	const void *body;
	size_t len;
	int r;

	fg_ingest_url(&req, &url);
	fg_outbuf_put(&url, "", 1);
	if (p->o.format == FG_INGEST_PPROF) {
		r = fg_pprof_from_model(m, &meta, &pb, &len);
		body = pb;
	} else {
		r = folded_body(m, n_roots(p), &text);
		body = text.data;
		len = text.used;
	}
	if (r >= 0)
		r = url.err;
	if (r >= 0)
		r = post(p, app, url.data, body, len);
	fg_outbuf_done(&url);
	fg_outbuf_done(&text);
	return r;
}

/*
 * Pushes [from, until): every application not sent yet, then the cursor
 * moves past it. -EAGAIN when an application could not be sent: the
 * period stops there, the rest untried, and stays due (what was sent is in
 * the cursor); -EINTR, or another error.
 */
static int push_period(struct push *p, int64_t from, int64_t until)
{
	_cleanup_(fg_folded__freep) struct fg_folded *all = NULL;
	_cleanup_(json_object_putp) struct json_object *meta = NULL;
	_cleanup_(fg_snapshot_meta_done) struct fg_snapshot_meta m = {};
	struct apps apps = {};
	size_t sent = 0, refused = 0;
	char a[16], b[16], comment[256] = "", label[48];
	bool stopped = false, missing;
	int r;

	r = fetch(p, from, until, &all, &meta);
	fgctl_snapshot_meta(stderr, meta, &m);
	/* What pprof readers show beside the profile (go tool pprof -comments). */
	if (meta)
		snprintf(comment, sizeof(comment),
			 "fgd always-on: %s at %" PRIu32 " Hz, %s stacks; %" PRIu64
			 " samples of the host in %" PRIu64 " slices, %" PRIu64
			 " folded into [other] by fgd's memory ceiling",
			 m.event ? m.event : "", m.frequency, m.call_graph ? m.call_graph : "",
			 m.samples, m.slices, m.folded_samples);
	/*
	 * Time fgd has no record of (it was not sampling, lost the samples, or a
	 * slice of the history does not read) is not idle time, and the history
	 * will not fill it later: the period is reported as lost, said with what
	 * is missing and counted, and --once fails; never "no samples".
	 */
	missing = m.missing.gap_count > 0 || m.missing.unreadable_slices > 0;
	snprintf(label, sizeof(label), "push %s-%s", hms(from, a), hms(until, b));
	if (r == -ENODATA && missing) {
		p->st.periods++;
		p->st.lost_periods++;
		p->failed = true;
		fgctl_note_missing(stderr, label, &m.missing);
		fprintf(stderr, "fgctl: %s: lost: fgd has no samples of it to send\n", label);
		fg_ingest_cursor_advance(&p->cursor, until);
		return cursor_save(p);
	}
	if (r == -ENODATA) {
		p->st.periods++;
		p->st.empty_periods++;
		if (!p->o.quiet)
			fprintf(stderr, "fgctl: push %s-%s: no samples\n", hms(from, a),
				hms(until, b));
		fg_ingest_cursor_advance(&p->cursor, until);
		return cursor_save(p);
	}
	if (r < 0)
		return r == -EINTR ? r : -EAGAIN;
	r = split_apps(p, all, &apps);
	for (size_t i = 0; r >= 0 && i < apps.n; i++) {
		const char *app = fg_strpool__str(apps.names, (uint32_t)i);

		if (fg_ingest_cursor_was_sent(&p->cursor, app))
			continue;
		/* A stop asked for between two applications: what was sent is in the cursor. */
		if (fgctl_stop_pending()) {
			r = -EINTR;
			break;
		}
		r = send_app(p, app, apps.v[i].model, from, until, m.frequency, comment);
		if (r == -EAGAIN) {
			/*
			 * The rest would meet the same store, each with its retries: a 429
			 * storm would become applications x (retries + 1) requests. They wait
			 * for the backoff with the period.
			 */
			stopped = true;
			r = 0;
			break;
		}
		if (r == -EREMOTEIO) {
			/* Refused as it is, it would be refused again: given up, said, counted. */
			p->st.rejected++;
			p->failed = true;
			refused++;
			r = 0;
		} else if (r < 0) {
			break;
		} else {
			sent++;
		}
		r = fg_ingest_cursor_sent(&p->cursor, app);
		if (r >= 0)
			r = cursor_save(p);
	}
	if (r >= 0 && !p->o.quiet)
		fprintf(stderr,
			"fgctl: push %s-%s: %zu of %zu applications sent (%" PRIu64
			" samples)%s%s\n",
			hms(from, a), hms(until, b), sent, apps.n, (uint64_t)fg_folded__total(all),
			refused ? ", some refused" : "",
			stopped ? ", stopped: the rest is tried again later" : "");
	apps_done(&apps);
	if (r < 0)
		return r;
	if (stopped)
		return -EAGAIN;
	/* Sent, but not whole: said (lost samples too), counted, and --once fails. */
	fgctl_note_missing(stderr, label, &m.missing);
	if (missing) {
		p->st.incomplete_periods++;
		p->failed = true;
	}
	p->st.periods++;
	fg_ingest_cursor_advance(&p->cursor, until);
	return cursor_save(p);
}

static void report(const struct push *p)
{
	const struct push_stats *s = &p->st;

	fprintf(stderr,
		"fgctl: push: %" PRIu64 " periods (%" PRIu64 " without samples, %" PRIu64
		" lost and %" PRIu64 " incomplete: fgd has no record of them, or of part), %" PRIu64
		" profiles sent, %" PRIu64 " failed requests, %" PRIu64 " retries, %" PRIu64
		" periods put off, %" PRIu64 " refused, %.1f s not pushed (older than "
		"--catch-up)\n",
		s->periods, s->empty_periods, s->lost_periods, s->incomplete_periods, s->sent,
		s->failures, s->retries, s->put_off, s->rejected, (double)s->gap_ms / 1000.0);
}

/*
 * How push ends on SIGINT or SIGTERM: --every stops as a service does, with
 * success (the cursor holds what was done); --once was cut short.
 */
static int interrupted(const struct push *p)
{
	return p->o.once ? FGCTL_EXIT_INTERRUPTED : FGCTL_EXIT_OK;
}

/* Pushes the periods due until interrupted (--every) or until none is due (--once). */
static int run(struct push *p)
{
	int64_t from, until, gap_from, gap_until;

	/* Without a cursor, where to start is settled once: --last before now. */
	if (!p->cursor.until_ms) {
		(void)fg_ingest_next_period(&p->o.plan, 0, wall_ms(), &from, &until, &gap_from,
					    &gap_until);
		p->cursor.until_ms = from;
	}
	for (;;) {
		int64_t now = wall_ms();
		bool due = fg_ingest_next_period(&p->o.plan, p->cursor.until_ms, now, &from, &until,
						 &gap_from, &gap_until);
		char a[16], b[16], what[64];
		int r;

		if (cursor_ahead(p, now)) {
			if (p->o.once)
				return FGCTL_EXIT_FAILURE;
			/* Said again a period later, or once the clock has passed it. */
			if (fgctl_wait_for_signal(
				    MIN(p->o.plan.every_ms, p->cursor.until_ms - now + 1)))
				return interrupted(p);
			continue;
		}
		if (gap_until > gap_from) {
			/* Beyond what push catches up: said, counted, and the cursor moves on. */
			fprintf(stderr,
				"fgctl: push: not catching up %s-%s (%.1f s): older than "
				"--catch-up\n",
				hms(gap_from, a), hms(gap_until, b),
				(double)(gap_until - gap_from) / 1000.0);
			p->st.gap_ms += (uint64_t)(gap_until - gap_from);
			p->failed = true;
			fg_ingest_cursor_advance(&p->cursor, gap_until);
			if (cursor_save(p) < 0)
				return FGCTL_EXIT_OUTPUT;
		}
		if (!due) {
			if (p->o.once)
				return p->failed ? FGCTL_EXIT_FAILURE : FGCTL_EXIT_OK;
			if (fgctl_wait_for_signal(until + p->o.plan.delay_ms - now))
				return interrupted(p);
			continue;
		}
		r = push_period(p, from, until);
		if (r == -EINTR)
			return interrupted(p);
		if (r == -EAGAIN) {
			p->failed = true;
			p->st.put_off++;
			/*
			 * --once gives up on it; --every tries it again, whole, from the
			 * cursor, once the backoff is over: then the periods missed
			 * meanwhile follow, oldest first.
			 */
			if (p->o.once)
				return FGCTL_EXIT_FAILURE;
			snprintf(what, sizeof(what), "push %s-%s", hms(from, a), hms(until, b));
			if (retry_wait(&p->retry, what))
				return interrupted(p);
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "fgctl: push: %s\n", strerror(-r));
			return FGCTL_EXIT_FAILURE;
		}
		retry_reset(&p->retry);
	}
}

int fgctl_verb_push(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	_cleanup_(fgctl_push_args_done) struct fgctl_push_args a = {};
	struct push p = { .cursor_dir_fd = -1 };
	char **all_argv, **words;
	sigset_t mask;
	int all_argc;
	int r;

	r = fgctl_push_with_config(argc, argv, &all_argc, &all_argv, &words);
	if (r != FGCTL_EXIT_OK)
		return r;
	r = fgctl_push_parse(ctx, all_argc, all_argv, &a, stderr);
	if (r == FGCTL_EXIT_OK && a.co.help) {
		fgctl_push_help(stdout);
		goto out;
	}
	if (r == FGCTL_EXIT_OK)
		r = fgctl_push_check(&a, stderr);
	if (r != FGCTL_EXIT_OK)
		goto out;
	p.o = a.o;
	p.socket = a.co.socket;
	p.query = a.query;
	if (gethostname(p.host, sizeof(p.host) - 1) < 0 || !p.host[0])
		snprintf(p.host, sizeof(p.host), "unknown");
	r = cursor_check(&p);
	if (r == FGCTL_EXIT_OK)
		r = cursor_load(&p);
	if (r != FGCTL_EXIT_OK)
		goto out;
	if (fgctl_http__new(&a.http, &p.http) < 0) {
		r = FGCTL_EXIT_FAILURE;
		goto out;
	}
	/* SIGINT and SIGTERM end the waits between periods (sigtimedwait), and the queries. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	retry_init(&p.retry);
	r = run(&p);
	/* What was done, always: the one line a service's log needs at its stop. */
	report(&p);
out:
	fgctl_http__free(p.http);
	fg_ingest_cursor_done(&p.cursor);
	safe_close(p.cursor_dir_fd);
	/* The options parsed borrow from these until here (url, name, cursor...). */
	if (all_argv != argv)
		free(all_argv);
	fgctl_optfile_free(words);
	return r;
}
