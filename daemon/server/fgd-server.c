/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/budget.h"
#include "base/macro.h"
#include "config.h"
#include "consumers/fgd-alwayson.h"
#include "consumers/fgd-query.h"
#include "consumers/fgd-recording.h"
#include "fgd-clock.h"
#include "fgd-log.h"
#include "profile/view.h"
#include "proto/proto.h"
#include "proto/session.h"
#include "resolver/fgd-jit.h"
#include "server/fgd-outq.h"
#include "server/fgd-server.h"
#include "server/fgd-socket.h"
#include "server/fgd-status.h"
#include "sources/fgd-evset.h"
#include "sources/fgd-offcpu.h"

/*
 * Every resource a client can make grow has a limit; refusals are counted.
 * When the table is full, a newcomer closes the oldest idle connection whose
 * going lets it in under these caps; failing that, it gets one of the short
 * slots, which answer one status or top (common/proto/session.c) and close.
 */
#define MAX_CLIENTS 64
#define MAX_CLIENTS_PER_USER 8   /* for everyone but root */
#define ROOT_RESERVED_CLIENTS 8  /* slots other users cannot take */
#define SHORT_CLIENTS 8          /* beyond the table, for status and top */
#define SHORT_CLIENTS_PER_USER 2 /* for everyone but root */
/* A short slot is for a request sent at once and a reply read at once. */
#define SHORT_TIMEOUT_NS (10ULL * 1000000000ULL)
#define MAX_RECORDINGS 8
#define MAX_RECORDINGS_PER_USER 2
#define IDLE_TIMEOUT_NS (60ULL * 1000000000ULL)
/* A client that stops reading its result loses it, and its recording slot. */
#define STALL_TIMEOUT_NS (60ULL * 1000000000ULL)
#define PROGRESS_INTERVAL_NS (1000000000ULL)
/* A stopped recording waits this long at most for the samples that wait for binaries being read. */
#define FINISH_WAIT_NS (5ULL * 1000000000ULL)
#define OUT_HIGH_WATER (256 * 1024)
#define CHUNK_SIZE (64 * 1024)
/*
 * What one client's result may hold in fgd while it streams: the profile, the
 * renderer's layout and the output buffers. A non-root user's 8 connections
 * then hold no more than their 2 recordings may (64 MiB each: fgd-engine.c).
 * A snapshot over it is refused (ENOBUFS), never cut short.
 */
#define RESULT_MAX_BYTES (256ULL << 20)
#define USER_RESULT_MAX_BYTES (16ULL << 20)
/*
 * The output buffers' share of that: the queue takes chunks until it holds
 * OUT_HIGH_WATER, so it needs that plus a chunk, and its capacity doubles
 * past OUT_HIGH_WATER once; the chunk copy and the renderer's own buffer
 * hold a chunk each, which a renderer overshoots by one element, doubling
 * them once.
 */
#define OUTPUT_MAX_BYTES (2 * OUT_HIGH_WATER + 4 * CHUNK_SIZE)
/* Output buffers larger than this are freed once they drain: idle clients hold little. */
#define OUT_KEEP_BYTES (16 * 1024)

struct client {
	struct fgd_watch watch;    /* first: the loop hands us this pointer */
	struct fgd_server *server; /* borrowed */
	struct client *next, *prev;
	struct ucred cred;
	bool reader; /* in the reader group when it connected: its queries see every process */
	enum fg_session_state state; /* what its requests get: common/proto/session.h */
	bool short_slot;             /* let in past a full table: one request, then closed */
	uint32_t epoll_events;
	/* Connecting, a complete request, or the end of a result: for the idle timeout and eviction. */
	uint64_t last_active;
	uint64_t stall_since; /* the last send that made progress, while output waits */

	struct fg_proto_reader in;
	bool read_eof;
	struct fgd_outq out; /* owned: bytes to send */
	char *chunk;         /* owned: one emitted chunk of result */
	size_t chunk_len, chunk_cap;

	struct fg_recording *rec;  /* owned */
	bool starting;             /* rec's off-CPU source is being made: not "started" yet */
	struct fgd_snapshot *snap; /* owned: a snapshot's result being streamed */
	uint64_t deadline;         /* CLOCK_MONOTONIC ns; 0: until stopped */
	const char *finish_reason; /* static; while finishing */
	uint64_t finish_by; /* CLOCK_MONOTONIC ns; finishing ends then whatever still waits */
	uint64_t next_progress;
	uint64_t result_bytes;
	uint64_t budget_charged; /* what the memory budget's results part holds of this client's */
	const char *ended; /* static: why its last recording ended, for a stop that comes after */
};

struct fgd_server {
	const struct fgd_config *conf; /* borrowed: fgd.c's, swapped whole on reload */
	struct fgd_loop *loop;         /* borrowed */
	struct fgd_engine *engine;     /* borrowed: starts, drains and finishes the recordings */
	struct fgd_watch listen_watch;
	char *path;  /* owned */
	bool passed; /* the socket came from systemd, which owns its file */
	struct client *clients;
	struct client *evicted; /* owned: closed, freed after the loop's batch of events */
	size_t n_clients, n_short, n_recordings;
	uint64_t accepted, rejected_clients, evicted_clients, short_requests;
	uint64_t requests, bad_requests, denied, results_refused;
	uint64_t recordings_started, recordings_completed, recordings_aborted;
};

static void client_free(struct client *c);

/*
 * A recording's tables are big and short-lived: give their memory back to
 * the system when it goes, or a daemon that ran one long recording keeps
 * its peak RSS for months.
 */
static struct fg_recording *recording_free(struct client *c)
{
	fg_recording__free(c->rec);
	fg_loader__trim_memory(fgd_engine__loader(c->server->engine));
	return NULL;
}

static void client_flush(struct client *c);
static void process_input(struct client *c);
static void finish_recording(struct client *c, const char *reason);
static void complete_recording(struct client *c, const char *reason);

/* What a client's result holds (the snapshot, its output buffers), charged to the budget's results part. */
static uint64_t client_result_bytes(const struct client *c)
{
	return (c->snap ? fgd_snapshot__bytes(c->snap) : 0) + c->out.cap + c->chunk_cap;
}

static void account_result(struct client *c)
{
	fg_budget__account(fgd_engine__budget(c->server->engine), FG_BUDGET_RESULTS,
			   &c->budget_charged, client_result_bytes(c));
}

/* ---- output ---- */

static int out_append(struct client *c, const void *p, size_t n)
{
	if (c->out.len == 0)
		c->stall_since = fgd_now();
	return fgd_outq_append(&c->out, p, n);
}

static void send_json(struct client *c, struct json_object *obj)
{
	_cleanup_free_ char *line = obj ? fg_proto_format(obj) : NULL;

	/* Out of memory while talking to one client: that client goes. */
	if (!line || out_append(c, line, strlen(line)) < 0)
		c->state = FG_SESSION_CLOSING;
}

/* An error reply; meta (NULL, or taken) goes with it as its "meta": what a query found missing. */
static void send_error_meta(struct client *c, int err, struct json_object *meta, const char *fmt,
			    ...) _printf_(4, 5);
static void send_error_meta(struct client *c, int err, struct json_object *meta, const char *fmt,
			    ...)
{
	_cleanup_(json_object_putp) struct json_object *m = fg_proto_new_message("error");
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m) {
		fg_json_add_str(m, "error", fg_errno_name(err) ?: "EIO");
		fg_json_add_str(m, "message", msg);
		if (meta)
			json_object_object_add(m, "meta", TAKE_PTR(meta));
	}
	json_object_put(meta);
	send_json(c, m);
}

#define send_error(c, err, ...) send_error_meta(c, err, NULL, __VA_ARGS__)

static void update_events(struct client *c)
{
	uint32_t ev = 0;

	/*
	 * Read no more while answers pile up unread: that is the backpressure. A
	 * streaming connection's next requests wait in the socket until its result
	 * has ended, so that their replies follow it in order.
	 */
	if (!c->read_eof && fg_session_reads(c->state) && c->out.len < OUT_HIGH_WATER)
		ev |= EPOLLIN;
	if (c->out.len > 0)
		ev |= EPOLLOUT;
	/* EPOLLHUP and EPOLLERR are always reported. */
	if (ev != c->epoll_events && fgd_loop__mod(c->server->loop, &c->watch, ev) == 0)
		c->epoll_events = ev;
}

/*
 * Back to waiting for a request. Requests that came while the result
 * streamed are still to be read, even when the client has finished
 * sending: process_input() answers them, and closes once none is left.
 */
static void become_idle(struct client *c)
{
	if (c->state == FG_SESSION_CLOSING)
		return;
	c->state = FG_SESSION_IDLE;
	c->last_active = fgd_now();
}

static int chunk_write(void *ctx, const void *buf, size_t len)
{
	struct client *c = ctx;
	int r = FG_GROW(c->chunk, c->chunk_cap, c->chunk_len + len);

	if (r < 0)
		return r;
	memcpy(c->chunk + c->chunk_len, buf, len);
	c->chunk_len += len;
	return 0;
}

static void end_result(struct client *c)
{
	_cleanup_(json_object_putp) struct json_object *m = fg_proto_new_message("end");

	if (m)
		fg_json_add_int(m, "bytes", (int64_t)c->result_bytes);
	send_json(c, m);
	free(c->chunk);
	c->chunk = NULL;
	c->chunk_cap = 0;
	if (c->snap) {
		c->snap = fgd_snapshot__free(c->snap);
		fg_loader__trim_memory(fgd_engine__loader(c->server->engine));
	} else {
		c->rec = recording_free(c);
		c->server->n_recordings--;
		c->server->recordings_completed++;
	}
	become_idle(c);
}

/* Produces result chunks while the peer keeps up: the result is never all queued at once. */
static void pump(struct client *c)
{
	while (c->state == FG_SESSION_STREAMING && c->out.len < OUT_HIGH_WATER) {
		_cleanup_(json_object_putp) struct json_object *m = NULL;
		int r;

		c->chunk_len = 0;
		r = c->snap ? fgd_snapshot__emit(c->snap, chunk_write, c, CHUNK_SIZE) :
			      fg_recording__emit(c->rec, chunk_write, c, CHUNK_SIZE);
		if (r < 0) {
			log_warning("Failed to render a result for uid %u: %s, dropping client",
				    c->cred.uid, strerror(-r));
			send_error(c, -r, "rendering the result failed: %s", strerror(-r));
			c->state = FG_SESSION_CLOSING;
			return;
		}
		if (c->chunk_len > 0) {
			m = fg_proto_new_message("data");
			if (m)
				fg_json_add_int(m, "length", (int64_t)c->chunk_len);
			send_json(c, m);
			if (c->state == FG_SESSION_CLOSING ||
			    out_append(c, c->chunk, c->chunk_len) < 0) {
				c->state = FG_SESSION_CLOSING;
				return;
			}
			c->result_bytes += c->chunk_len;
		}
		if (r == 1)
			end_result(c);
	}
}

static void client_flush(struct client *c)
{
	long sent = fgd_outq_send(&c->out, c->watch.fd);

	if (sent < 0) {
		/* The peer is gone (EPIPE, ECONNRESET): release everything it held. */
		client_free(c);
		return;
	}
	if (sent > 0)
		c->stall_since = fgd_now();
	if (c->state != FG_SESSION_STREAMING)
		fgd_outq_trim(&c->out, OUT_KEEP_BYTES);
	/*
	 * Refill: requests waiting for room, or result chunks; the rest waits for
	 * EPOLLOUT. A result that just ended lets the requests behind it be read.
	 */
	process_input(c);
	if (c->state == FG_SESSION_STREAMING) {
		pump(c);
		process_input(c);
	}
	if (c->state == FG_SESSION_CLOSING && c->out.len == 0) {
		client_free(c);
		return;
	}
	account_result(c);
	update_events(c);
}

/* ---- requests ---- */

static uint32_t paranoid_level(void)
{
	_cleanup_(fclosep) FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v;

	if (!f || fscanf(f, "%d", &v) != 1)
		return 2;
	return v < 0 ? 0 : (uint32_t)v;
}

/* What the client may see (common/profile/view.h): decided once per request, the sysctl read then. */
static struct fg_view client_view(const struct client *c)
{
	struct fg_view v;

	fg_view_init(&v, c->cred.uid, (int)paranoid_level());
	return v;
}

/*
 * What a query of the always-on data shows the client: a reader's view
 * widened to every process. Recordings keep client_view().
 */
static struct fg_view query_view(const struct client *c)
{
	struct fg_view v = client_view(c);

	if (c->reader)
		fg_view_read_all(&v);
	return v;
}

static size_t recordings_of(const struct fgd_server *s, uid_t uid)
{
	size_t n = 0;

	for (const struct client *c = s->clients; c; c = c->next)
		n += c->rec && c->cred.uid == uid;
	return n;
}

static void send_started(struct client *c, const struct fg_recording_opts *o)
{
	_cleanup_(json_object_putp) struct json_object *m = fg_proto_new_message("started");

	if (m) {
		const struct fg_evset *events = fg_recording__events(c->rec);

		fg_json_add_str(m, "event", o->req.off_cpu ? FG_OFFCPU_EVENT : o->event.name);
		fg_json_add_int(m, "frequency", o->frequency);
		fg_json_add_str(m, "call_graph", fg_call_graph_name(o->call_graph));
		fg_json_add_int(m, "cpus", events ? (int64_t)fg_evset__n(events) : 0);
		fg_json_add_int(m, "duration_ms", (int64_t)o->req.duration_ms);
		fg_json_add_bool(m, "kernel_hidden", o->view.hide_kernel);
	}
	send_json(c, m);
}

/* A recording samples from now on: its clock, the client's "started", the log. */
static void begin_recording(struct client *c)
{
	const struct fg_recording_opts *o = fg_recording__opts(c->rec);
	const struct fg_record_request *req = &o->req;

	c->deadline = req->duration_ms ?
			      fg_recording__started(c->rec) + req->duration_ms * 1000000ULL :
			      0;
	c->next_progress = fgd_now() + PROGRESS_INTERVAL_NS;
	send_started(c, o);
	if (req->off_cpu || req->wall)
		log_info("Recording started for uid %u: %s, %s", c->cred.uid,
			 req->all ? "all processes" : "selected processes",
			 req->wall ? "wall-clock" : "off-CPU");
	else
		log_info("Recording started for uid %u: %s, %u Hz", c->cred.uid,
			 req->all ? "all processes" : "selected processes", o->frequency);
}

/* The engine made the off-CPU source of c's recording, or could not. */
static void recording_started(void *ctx, struct fg_recording *rec, int err, const char *why)
{
	struct client *c = ctx;
	struct fgd_server *s = c->server;

	c->starting = false;
	if (err >= 0) {
		begin_recording(c);
		return;
	}
	if (why)
		send_error(c, -err, "off-CPU recording is unavailable: %s", why);
	else
		send_error(c, -err, "could not start sampling: %s", strerror(-err));
	fgd_engine__abort_recording(s->engine, TAKE_PTR(c->rec));
	s->n_recordings--;
	s->recordings_aborted++;
	become_idle(c);
}

/* The engine refused a recording as asked: the client hears why, and denials count. */
static void send_refusal(struct client *c, int err, const struct fgd_engine_refusal *why)
{
	if (why->denied)
		c->server->denied++;
	send_error(c, -err, "%s", why->why);
}

static void handle_record(struct client *c, const struct fg_record_request *req)
{
	struct fgd_server *s = c->server;
	struct fg_view view = client_view(c);
	struct fgd_engine_refusal why;
	struct fg_recording_opts o;
	pid_t bad_pid = 0;
	int r;

	/* The engine works out what the request gets, and whether the client may have it. */
	r = fgd_engine__recording_opts(s->engine, req, c->cred.uid, &view, &o, &why);
	if (r < 0) {
		send_refusal(c, r, &why);
		return;
	}
	if (s->n_recordings >= MAX_RECORDINGS ||
	    (c->cred.uid != 0 && recordings_of(s, c->cred.uid) >= MAX_RECORDINGS_PER_USER)) {
		send_error(
			c, EBUSY,
			"too many recordings in progress (at most %d, %d per user); try again later",
			MAX_RECORDINGS, MAX_RECORDINGS_PER_USER);
		return;
	}
	r = fgd_engine__can_record(s->engine, &o, &why);
	if (r < 0) {
		send_refusal(c, r, &why);
		return;
	}
	r = fgd_engine__start_recording(s->engine, &o, &c->rec, &bad_pid, recording_started, c);
	if (r == -ESRCH) {
		send_error(c, ESRCH, "no such process: %d", bad_pid);
		return;
	}
	if (r < 0) {
		log_warning("Failed to start a recording for uid %u: %s", c->cred.uid,
			    strerror(-r));
		send_error(c, -r, "could not start sampling: %s", strerror(-r));
		return;
	}
	s->n_recordings++;
	s->recordings_started++;
	c->state = FG_SESSION_RECORDING;
	c->ended = NULL;
	c->result_bytes = 0;
	/* Its off-CPU source is being made: recording_started() begins it. */
	c->starting = r > 0;
	if (!c->starting)
		begin_recording(c);
}

static void handle_status(struct client *c)
{
	_cleanup_(fg_status_done) struct fg_status st = {};
	_cleanup_(json_object_putp) struct json_object *m = NULL;
	const struct fgd_server *s = c->server;

	if (fgd_status_fill(s->conf, s->engine, s->loop, &st) >= 0 &&
	    fgd_server__status(s, &st) >= 0)
		m = fg_status_to_json(&st);
	if (!m) {
		c->state = FG_SESSION_CLOSING;
		return;
	}
	send_json(c, m);
}

/* What a query reads: always-on sampling, or always-on off-CPU; NULL, said to c, when off. */
static struct fgd_alwayson *always_on_for(struct client *c, const struct fg_query_request *q)
{
	struct fgd_engine *e = c->server->engine;
	struct fgd_engine_stats es;

	if (!fgd_engine__alwayson(e)) {
		send_error(
			c, ENODATA,
			"always-on sampling is off in this fgd (AlwaysOn=no, or --no-always-on): "
			"there is no history to query; use fgctl record");
		return NULL;
	}
	if (!q->off_cpu)
		return fgd_engine__alwayson(e);
	if (fgd_engine__offcpu_alwayson(e))
		return fgd_engine__offcpu_alwayson(e);
	fgd_engine__stats(e, &es);
	if (!es.offcpu_available)
		send_error(c, EOPNOTSUPP, "off-CPU profiling is unavailable in this fgd: %s",
			   es.offcpu_why);
	else if (!c->server->conf->off_cpu)
		send_error(c, ENODATA,
			   "always-on off-CPU is off in this fgd: set OffCpu=yes in fgd.conf(5) "
			   "and reload fgd, or record now with fgctl record --off-cpu");
	else
		send_error(
			c, ENODATA,
			"always-on off-CPU could not start in this fgd (see its log); record now "
			"with fgctl record --off-cpu");
	return NULL;
}

static uint64_t result_budget(const struct client *c)
{
	return c->cred.uid == 0 ? RESULT_MAX_BYTES : USER_RESULT_MAX_BYTES;
}

static void handle_snapshot(struct client *c, const struct fg_query_request *q)
{
	_cleanup_(json_object_putp) struct json_object *m = NULL;
	struct json_object *meta = NULL;
	struct fg_view view = query_view(c);
	struct fgd_alwayson_data ao;
	struct fgd_alwayson *a;
	char why[1024] = "";
	/* What the daemon's budget has room for now (its results part, and the total), if less. */
	uint64_t room = fg_budget__room(fgd_engine__budget(c->server->engine), FG_BUDGET_RESULTS);
	uint64_t limit = MIN(result_budget(c), room);
	int r;

	if (!(a = always_on_for(c, q)))
		return;
	fgd_alwayson__data(a, &ao);
	limit = limit > OUTPUT_MAX_BYTES ? limit - OUTPUT_MAX_BYTES : 0;
	r = fgd_query__snapshot(&ao, q, &view, limit, &c->snap, &meta, why, sizeof(why));
	/* Building took more than the result keeps (history read, the model of a page): give it back. */
	fg_loader__trim_memory(fgd_engine__loader(c->server->engine));
	if (r == -ENOBUFS && limit + OUTPUT_MAX_BYTES < result_budget(c)) {
		c->server->results_refused++;
		fg_budget__refused(fgd_engine__budget(c->server->engine), FG_BUDGET_RESULTS);
		send_error(c, ENOBUFS,
			   "the snapshot does not fit in the %llu MiB fgd's memory budget "
			   "(MemoryMax=, fgd.conf(5)) has room for now: %s",
			   (unsigned long long)((limit + OUTPUT_MAX_BYTES) >> 20), why);
		return;
	}
	if (r == -ENOBUFS) {
		c->server->results_refused++;
		send_error(c, ENOBUFS,
			   "the snapshot does not fit in the %llu MiB a %s client's result "
			   "may hold in fgd: %s",
			   (unsigned long long)(result_budget(c) >> 20),
			   c->cred.uid == 0 ? "root" : "non-root", why);
		return;
	}
	if (r < 0) {
		send_error_meta(c, -r, TAKE_PTR(meta), "%s", why[0] ? why : strerror(-r));
		return;
	}
	m = fg_proto_new_message("result");
	if (!m) {
		json_object_put(meta);
		c->snap = fgd_snapshot__free(c->snap);
		c->state = FG_SESSION_CLOSING;
		return;
	}
	fg_json_add_str(m, "reason", "snapshot");
	json_object_object_add(m, "meta", meta);
	send_json(c, m);
	if (c->state == FG_SESSION_CLOSING)
		return;
	c->result_bytes = 0;
	c->state = FG_SESSION_STREAMING;
}

static void handle_top(struct client *c, const struct fg_query_request *q)
{
	_cleanup_(json_object_putp) struct json_object *m = NULL;
	struct fg_view view = query_view(c);
	struct fgd_alwayson_data ao;
	struct fgd_alwayson *a;
	char why[1024] = "";
	int r;

	if (!(a = always_on_for(c, q)))
		return;
	fgd_alwayson__data(a, &ao);
	r = fgd_query__top(&ao, q, &view, &m, why, sizeof(why));
	if (r < 0) {
		/* On -ENODATA, m is what the period is missing. */
		send_error_meta(c, -r, TAKE_PTR(m), "%s", why[0] ? why : strerror(-r));
		return;
	}
	send_json(c, m);
}

/* The error a refused request gets: what the connection is doing, and what to do instead. */
static void refuse(struct client *c, const struct fg_request *req, int err)
{
	if (c->short_slot)
		send_error(c, err,
			   "fgd's %d connections are all busy, so this one was let in for one "
			   "status or top only; try again later",
			   MAX_CLIENTS);
	else if (req->cmd == FG_CMD_STOP && c->ended)
		send_error(c, err,
			   "no recording to stop: this connection is idle; its recording had "
			   "already ended (%s) before this stop was read, and its result was sent "
			   "first",
			   c->ended);
	else if (req->cmd == FG_CMD_STOP)
		send_error(c, err, "no recording to stop: this connection is %s",
			   fg_session_state_name(c->state));
	else if (c->state == FG_SESSION_RECORDING || c->state == FG_SESSION_FINISHING)
		send_error(c, err,
			   "a recording is running on this connection and its result comes "
			   "first: stop it, or send this request on another connection");
	else
		send_error(c, err, "not possible while this connection is %s",
			   fg_session_state_name(c->state));
}

static void answer_line(struct client *c, const char *line, size_t len)
{
	_cleanup_(json_object_putp) struct json_object *msg = NULL;
	struct fg_session_rule rule;
	struct fg_request req;
	const char *why = NULL;
	int r;

	c->server->requests++;
	r = fg_proto_parse(line, len, &msg);
	if (r == -EPROTO) {
		c->server->bad_requests++;
		send_error(c, EPROTO, "unsupported protocol version (this fgd speaks version %d)",
			   FG_PROTO_VERSION);
		return;
	}
	if (r < 0) {
		c->server->bad_requests++;
		send_error(c, EBADMSG, "a request must be one JSON object on one line");
		return;
	}
	r = fg_proto_decode_request(msg, &req, &why);
	if (r < 0) {
		c->server->bad_requests++;
		send_error(c, EINVAL, "invalid request: %s", why ? why : "malformed");
		return;
	}
	rule = fg_session_rule(c->state, req.cmd);
	if (rule.action == FG_SESSION_RUN && c->short_slot)
		c->server->short_requests++;
	if (rule.action == FG_SESSION_STOP) {
		if (c->state ==
		    FG_SESSION_FINISHING) /* a stop does not wait: the rest is dropped */
			complete_recording(c, c->finish_reason);
		else
			finish_recording(c, "stopped");
		return;
	}
	if (rule.action == FG_SESSION_REFUSE) {
		refuse(c, &req, rule.error);
		return;
	}
	if (rule.action != FG_SESSION_RUN) {
		/* process_input() reads only where the rules decide: this is a bug, answered all the same. */
		log_error("Request read on a connection that is %s, refusing it",
			  fg_session_state_name(c->state));
		send_error(c, EIO, "fgd read this request while the connection was %s",
			   fg_session_state_name(c->state));
		return;
	}
	if (req.cmd == FG_CMD_STATUS)
		handle_status(c);
	else if (req.cmd == FG_CMD_SNAPSHOT)
		handle_snapshot(c, &req.query);
	else if (req.cmd == FG_CMD_TOP)
		handle_top(c, &req.query);
	else
		handle_record(c, &req.record);
}

static void handle_line(struct client *c, const char *line, size_t len)
{
	bool one_request = fg_session_one_request(c->state);

	answer_line(c, line, len);
	/* A short slot is held for one reply, whatever the request was: it is free again once sent. */
	if (one_request)
		c->state = FG_SESSION_CLOSING;
}

/*
 * Handles the complete requests already received, while there is room to
 * answer them: a client that sends faster than it reads waits, with its
 * socket unwatched, instead of growing our memory.
 */
static void process_input(struct client *c)
{
	bool drained = false;

	while (fg_session_reads(c->state) && c->out.len < OUT_HIGH_WATER) {
		struct fg_proto_item it;
		int r = fg_proto_reader_next(&c->in, &it);

		if (r == -EMSGSIZE) {
			c->server->bad_requests++;
			send_error(c, EMSGSIZE, "request longer than %d bytes",
				   FG_PROTO_MAX_REQUEST);
			c->state = FG_SESSION_CLOSING;
		} else if (it.kind == FG_PROTO_DATA) {
			send_error(c, EBADMSG, "clients do not send data");
			c->state = FG_SESSION_CLOSING;
		} else if (it.kind == FG_PROTO_MESSAGE) {
			c->last_active = fgd_now();
			handle_line(c, it.bytes, it.len);
			continue;
		} else {
			drained = true;
		}
		break;
	}
	/* The client has finished sending and every request it sent is answered. */
	if (drained && c->read_eof &&
	    (c->state == FG_SESSION_IDLE || c->state == FG_SESSION_SHORT)) {
		if (fg_proto_reader_pending(&c->in)) {
			c->server->bad_requests++;
			send_error(c, EBADMSG,
				   "the input ended inside a request: a request is one line, "
				   "ending in a newline");
		}
		c->state = FG_SESSION_CLOSING;
	}
}

/* One read per wakeup, so no client can keep the loop to itself. */
static void client_read(struct client *c)
{
	char buf[16384];
	ssize_t n = recv(c->watch.fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n < 0) {
		if (errno != EINTR && errno != EAGAIN) {
			client_free(c);
			return;
		}
	} else if (n == 0) {
		/* Done sending; it may still wait for our answers. */
		c->read_eof = true;
	} else if (fg_proto_reader_feed(&c->in, buf, (size_t)n) < 0) {
		client_free(c);
		return;
	}
	process_input(c);
	client_flush(c);
}

static void client_event(struct fgd_watch *w, uint32_t events)
{
	struct client *c = (struct client *)w;

	if (events & (EPOLLERR | EPOLLHUP)) {
		client_free(c);
		return;
	}
	if (events & EPOLLIN) {
		client_read(c);
		return; /* it flushed, and may be gone */
	}
	if (events & EPOLLOUT)
		client_flush(c);
}

/* ---- recordings ---- */

/* Builds the result of a stopped recording and starts streaming it. */
static void complete_recording(struct client *c, const char *reason)
{
	_cleanup_(json_object_putp) struct json_object *m = NULL;
	int r;

	r = fgd_engine__finish_recording(c->server->engine, c->rec);
	if (r < 0) {
		log_warning("Failed to finish a recording for uid %u: %s", c->cred.uid,
			    strerror(-r));
		send_error(c, -r, "could not build the result: %s", strerror(-r));
		c->rec = recording_free(c);
		c->server->n_recordings--;
		c->server->recordings_aborted++;
		become_idle(c);
		return;
	}
	m = fg_proto_new_message("result");
	if (m) {
		struct json_object *meta = fg_recording__metadata(c->rec);

		fg_json_add_str(m, "reason", reason);
		json_object_object_add(m, "meta", meta);
	}
	send_json(c, m);
	c->ended = reason;
	if (c->state == FG_SESSION_CLOSING)
		return;
	c->state = FG_SESSION_STREAMING;
	log_info("Recording for uid %u %s: %" PRIu64 " samples, %" PRIu64 " lost", c->cred.uid,
		 reason, fg_recording__samples(c->rec), fg_recording__lost(c->rec));
}

/*
 * Whether a stopped recording still has samples to handle: waiting for
 * binaries being read, or off-CPU blocks its drains left behind.
 */
static bool unsettled(const struct fg_recording *rec)
{
	return fg_recording__waiting(rec) > 0 || fg_recording__behind(rec);
}

/*
 * Stops a recording. Its result is built once the samples it still has
 * are handled (unsettled()), or FINISH_WAIT_NS later.
 */
static void finish_recording(struct client *c, const char *reason)
{
	fgd_engine__stop_recording(c->server->engine, c->rec);
	if (unsettled(c->rec)) {
		c->state = FG_SESSION_FINISHING;
		c->finish_reason = reason;
		c->finish_by = fgd_now() + FINISH_WAIT_NS;
		return;
	}
	complete_recording(c, reason);
}

static void send_progress(struct client *c, uint64_t now)
{
	_cleanup_(json_object_putp) struct json_object *m = fg_proto_new_message("progress");

	if (m) {
		fg_json_add_int(m, "elapsed_ms",
				(int64_t)((now - fg_recording__started(c->rec)) / 1000000));
		fg_json_add_int(m, "samples", (int64_t)fg_recording__samples(c->rec));
		fg_json_add_int(m, "lost", (int64_t)fg_recording__lost(c->rec));
	}
	send_json(c, m);
}

uint64_t fgd_server__next_deadline(const struct fgd_server *s)
{
	uint64_t due = UINT64_MAX;

	for (const struct client *c = s->clients; c; c = c->next)
		if (c->state == FG_SESSION_RECORDING && c->deadline)
			due = MIN(due, c->deadline);
	return due;
}

void fgd_server__tick(struct fgd_server *s)
{
	uint64_t now = fgd_now();
	struct client *c, *next;

	/* The loop's batch of events is done: nothing refers to an evicted client any more. */
	while (s->evicted) {
		c = s->evicted;
		s->evicted = c->next;
		free(c);
	}
	for (c = s->clients; c; c = next) {
		uint64_t timeout = c->short_slot ? SHORT_TIMEOUT_NS : STALL_TIMEOUT_NS;

		next = c->next;
		if (c->out.len > 0 && now - c->stall_since > timeout) {
			log_warning("Client (uid %u) stopped reading for %llu s, dropping it",
				    c->cred.uid, (unsigned long long)(timeout / 1000000000ULL));
			client_free(c);
			continue;
		}
		if (c->state == FG_SESSION_RECORDING && c->starting) {
			/* Its clock starts with its source (recording_started()). */
		} else if (c->state == FG_SESSION_RECORDING) {
			if (c->deadline && now >= c->deadline)
				finish_recording(c, "completed");
			else if (fg_recording__targets_gone(c->rec))
				finish_recording(c, "exited");
			else if (now >= c->next_progress) {
				/* Progress is news, not history: none queues behind unread output. */
				if (c->out.len == 0)
					send_progress(c, now);
				c->next_progress = now + PROGRESS_INTERVAL_NS;
			}
		} else if (c->state == FG_SESSION_IDLE && c->out.len == 0 &&
			   now - c->last_active > IDLE_TIMEOUT_NS) {
			send_error(c, ETIMEDOUT, "closing this connection: no request for %llu s",
				   IDLE_TIMEOUT_NS / 1000000000ULL);
			c->state = FG_SESSION_CLOSING;
		} else if (c->state == FG_SESSION_SHORT &&
			   now - c->last_active > SHORT_TIMEOUT_NS) {
			send_error(c, ETIMEDOUT, "closing this connection: no request for %llu s",
				   SHORT_TIMEOUT_NS / 1000000000ULL);
			c->state = FG_SESSION_CLOSING;
		} else if (c->state == FG_SESSION_FINISHING) {
			if (!unsettled(c->rec) || now >= c->finish_by)
				complete_recording(c, c->finish_reason);
		}
		/* Flushing may free the client; next was taken before. */
		client_flush(c);
	}
}

/* ---- clients ---- */

/*
 * Releases everything a client holds and takes it off the list; the caller
 * frees the struct. Returns whether it held a result's worth of heap.
 */
static bool client_release(struct client *c)
{
	struct fgd_server *s = c->server;
	bool held;

	if (c->rec) {
		log_info("Client (uid %u) went away mid-recording, releasing it", c->cred.uid);
		/* Sampling or finishing, it is still the engine's; streaming, only ours. */
		fgd_engine__abort_recording(s->engine, TAKE_PTR(c->rec));
		fg_loader__trim_memory(fgd_engine__loader(s->engine));
		s->n_recordings--;
		s->recordings_aborted++;
	}
	fgd_loop__del(s->loop, &c->watch);
	safe_close(c->watch.fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->short_slot)
		s->n_short--;
	else
		s->n_clients--;
	held = c->snap || c->out.cap + c->chunk_cap > OUT_KEEP_BYTES;
	c->snap = fgd_snapshot__free(c->snap);
	fg_proto_reader_done(&c->in);
	fgd_outq_done(&c->out);
	free(c->chunk);
	c->chunk = NULL;
	c->chunk_cap = 0;
	account_result(c); /* all given back */
	return held;
}

static void client_free(struct client *c)
{
	struct fg_loader *loader = fgd_engine__loader(c->server->engine);
	bool held = client_release(c);

	free(c);
	/* A client that goes mid-result leaves as much free heap as end_result() would: return it. */
	if (held)
		fg_loader__trim_memory(loader);
}

static void ignore_event(struct fgd_watch *w, uint32_t events)
{
}

/*
 * Closes an idle connection to make room, with an error line saying why.
 * Idle, it has nothing queued, so the line follows whatever it was sent
 * before. The struct outlives the loop's batch of events, which may still
 * name it: fgd_server__tick() frees it.
 */
static void client_evict(struct client *c)
{
	struct fgd_server *s = c->server;
	char line[512];
	int n = snprintf(
		line, sizeof(line),
		"{\"fgd\":%d,\"type\":\"error\",\"error\":\"EUSERS\",\"message\":\"closed "
		"to make room for a new connection: fgd's client table was full and this was "
		"its oldest idle connection (no request for %llu s)\"}\n",
		FG_PROTO_VERSION,
		(unsigned long long)((fgd_now() - c->last_active) / 1000000000ULL));

	(void)!send(c->watch.fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	log_debug("Closed an idle connection of uid %u to make room", c->cred.uid);
	s->evicted_clients++;
	client_release(c);
	c->watch.fn = ignore_event;
	c->next = s->evicted;
	s->evicted = c;
}

/*
 * Why a new connection of uid may not have a slot (a short one if
 * short_slot) were `gone` (may be NULL) closed, or NULL. Root keeps a
 * reserve: other users are let in only while fewer than MAX_CLIENTS -
 * ROOT_RESERVED_CLIENTS connections are open.
 */
static const char *refusal(const struct fgd_server *s, uid_t uid, bool short_slot,
			   const struct client *gone)
{
	size_t all = 0, mine = 0;

	for (const struct client *c = s->clients; c; c = c->next) {
		if (c == gone || c->short_slot != short_slot)
			continue;
		all++;
		mine += c->cred.uid == uid;
	}
	if (short_slot) {
		if (all >= SHORT_CLIENTS)
			return "too many clients connected to fgd, none of them idle; try again later";
		if (uid != 0 && mine >= SHORT_CLIENTS_PER_USER)
			return "too many connections from this user, none of them idle; try again later";
		return NULL;
	}
	if (all >= MAX_CLIENTS)
		return "too many clients connected to fgd; try again later";
	if (uid != 0 && all >= MAX_CLIENTS - ROOT_RESERVED_CLIENTS)
		return "too many clients connected to fgd; the remaining slots are root's";
	if (uid != 0 && mine >= MAX_CLIENTS_PER_USER)
		return "too many connections from this user; close some and try again";
	return NULL;
}

/*
 * The connection a newcomer of uid may close to take its slot: the one idle
 * the longest (no request in flight: waiting for one, nothing queued) among
 * those whose going lets the newcomer in under the caps. So a user at their
 * own cap can close only their own, and no user gets into root's reserve.
 * NULL if there is none.
 */
static struct client *eviction_victim(struct fgd_server *s, uid_t uid, bool short_slot)
{
	struct client *victim = NULL;

	for (struct client *c = s->clients; c; c = c->next) {
		bool idle = (c->state == FG_SESSION_IDLE || c->state == FG_SESSION_SHORT) &&
			    c->out.len == 0;

		if (c->short_slot != short_slot || !idle ||
		    (victim && c->last_active >= victim->last_active))
			continue;
		if (!refusal(s, uid, short_slot, c))
			victim = c;
	}
	return victim;
}

/*
 * Finds a new connection of uid a slot: a free one, or one an idle
 * connection gives up, in the table and failing that among the short slots.
 * Returns 0 and whether the slot is short, or -EUSERS and why not.
 */
static int admit(struct fgd_server *s, uid_t uid, bool *ret_short, const char **ret_why)
{
	const char *why = refusal(s, uid, false, NULL);
	struct client *victim;

	if (!why) {
		*ret_short = false;
		return 0;
	}
	victim = eviction_victim(s, uid, false);
	if (!victim && !refusal(s, uid, true, NULL)) {
		*ret_short = true;
		return 0;
	}
	if (!victim)
		victim = eviction_victim(s, uid, true);
	if (!victim) {
		*ret_why = why;
		return -EUSERS;
	}
	*ret_short = victim->short_slot;
	client_evict(victim);
	return 0;
}

/* Whether a new connection gets the reader role (fgd(8), "ACCESS CONTROL"): decided once. */
static bool is_reader(const struct fgd_server *s, int fd, const struct ucred *cred)
{
	int r;

	/* Root sees everything already. */
	if (!s->conf->reader_group || cred->uid == 0)
		return false;
	r = fgd_socket_peer_in_group(fd, cred, s->conf->reader_gid);
	if (r < 0) {
		log_warning("Failed to read the groups of a client (uid %u): %s, serving it "
			    "without the reader role",
			    cred->uid, strerror(-r));
		return false;
	}
	if (r > 0)
		log_debug("Client (uid %u) is in the reader group %s", cred->uid,
			  s->conf->reader_group);
	return r > 0;
}

static void accept_event(struct fgd_watch *w, uint32_t events)
{
	struct fgd_server *s =
		(struct fgd_server *)((uint8_t *)w - offsetof(struct fgd_server, listen_watch));

	for (;;) {
		socklen_t len = sizeof(struct ucred);
		struct ucred cred;
		struct client *c;
		const char *why = NULL;
		bool short_slot = false;
		int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				log_warning("Failed to accept a client: %m, ignoring");
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			log_warning("Failed to read a client's credentials: %m, dropping it");
			close(fd);
			continue;
		}
		if (admit(s, cred.uid, &short_slot, &why) < 0) {
			s->rejected_clients++;
			fgd_socket_reject(fd, why);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->watch.fd = fd;
		c->watch.fn = client_event;
		c->server = s;
		c->cred = cred;
		c->reader = is_reader(s, fd, &cred);
		c->short_slot = short_slot;
		c->state = short_slot ? FG_SESSION_SHORT : FG_SESSION_IDLE;
		c->last_active = fgd_now();
		fg_proto_reader_init(&c->in, FG_PROTO_MAX_REQUEST);
		if (fgd_loop__add(s->loop, &c->watch, EPOLLIN) < 0) {
			log_warning("Failed to watch a client: %m, dropping it");
			close(fd);
			free(c);
			continue;
		}
		c->epoll_events = EPOLLIN;
		c->next = s->clients;
		if (s->clients)
			s->clients->prev = c;
		s->clients = c;
		if (short_slot)
			s->n_short++;
		else
			s->n_clients++;
		s->accepted++;
	}
}

int fgd_server__new(const struct fgd_config *conf, struct fgd_loop *loop, struct fgd_engine *engine,
		    int listen_fd, struct fgd_server **ret)
{
	struct fgd_server *s = calloc(1, sizeof(*s));
	int r, fd = listen_fd;

	if (!s)
		return -ENOMEM;
	s->conf = conf;
	s->loop = loop;
	s->engine = engine;
	s->listen_watch.fd = -1;
	if (listen_fd >= 0) {
		s->passed = true;
		r = fgd_socket_adopt(listen_fd, &s->path);
	} else {
		s->path = strdup(conf->socket_path);
		r = s->path ? fgd_socket_bind(s->path, conf->socket_group, &fd) : -ENOMEM;
	}
	if (r < 0) {
		free(s->path);
		free(s);
		return r;
	}
	s->listen_watch.fd = fd;
	s->listen_watch.fn = accept_event;
	r = fgd_loop__add(loop, &s->listen_watch, EPOLLIN);
	if (r < 0) {
		fgd_server__free(s);
		return r;
	}
	*ret = s;
	return 0;
}

struct fgd_server *fgd_server__free(struct fgd_server *s)
{
	if (!s)
		return NULL;
	while (s->clients)
		client_free(s->clients);
	while (s->evicted) {
		struct client *c = s->evicted;

		s->evicted = c->next;
		free(c);
	}
	if (s->listen_watch.fd >= 0) {
		fgd_loop__del(s->loop, &s->listen_watch);
		close(s->listen_watch.fd);
		if (!s->passed)
			unlink(s->path);
	}
	free(s->path);
	free(s);
	return NULL;
}

int fgd_server__status(const struct fgd_server *s, struct fg_status *st)
{
	struct fg_status_recording *active;
	uint64_t now = fgd_now(), result_bytes = 0;
	size_t n = 0;

	/* What results being streamed hold now: their profiles, layouts and output buffers. */
	for (const struct client *c = s->clients; c; c = c->next) {
		result_bytes += client_result_bytes(c);
		n += c->rec && c->state == FG_SESSION_RECORDING;
	}
	active = calloc(MAX(n, (size_t)1), sizeof(*active));
	if (!active)
		return -ENOMEM;
	n = 0;
	for (const struct client *c = s->clients; c; c = c->next) {
		if (!c->rec || c->state != FG_SESSION_RECORDING)
			continue;
		active[n++] = (struct fg_status_recording){
			.uid = c->cred.uid,
			.elapsed_ms = (now - fg_recording__started(c->rec)) / 1000000,
			.samples = fg_recording__samples(c->rec),
			.lost = fg_recording__lost(c->rec),
			.rate_limited = fg_recording__rate_limited(c->rec),
		};
	}
	st->server = (struct fg_status_server){
		.clients = s->n_clients,
		.max_clients = MAX_CLIENTS,
		.clients_rejected = s->rejected_clients,
		.clients_evicted = s->evicted_clients,
		.short_clients = s->n_short,
		.max_short_clients = SHORT_CLIENTS,
		.short_requests = s->short_requests,
		.requests = s->requests,
		.bad_requests = s->bad_requests,
		.denied = s->denied,
		.result_bytes = result_bytes,
		.result_max_bytes = RESULT_MAX_BYTES,
		.user_result_max_bytes = USER_RESULT_MAX_BYTES,
		.results_refused = s->results_refused,
		.recordings_active = s->n_recordings,
		.max_recordings = MAX_RECORDINGS,
		.recordings_started = s->recordings_started,
		.recordings_completed = s->recordings_completed,
		.recordings_aborted = s->recordings_aborted,
	};
	st->socket = s->path;
	free(st->recordings);
	st->recordings = active;
	st->n_recordings = n;
	return 0;
}

const char *fgd_server__path(const struct fgd_server *s)
{
	return s->path;
}
