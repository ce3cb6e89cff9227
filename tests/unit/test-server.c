/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The server on synthesized requests: a loop, an engine and a server on a
 * socket of the test's own, driven the way fgd.c drives them, and a client
 * writing request lines and reading replies with a deadline. The protocol's
 * whole table is checked against the real daemon in test_protocol.py; this
 * is the server as a unit, one request of each kind.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/macro.h"
#include "fgd-clock.h"
#include "fgd-conf.h"
#include "fgd-engine.h"
#include "fgd-loop.h"
#include "server/fgd-outq.h"
#include "server/fgd-server.h"
#include "test.h"

struct fixture {
	struct fgd_config conf;
	struct fgd_loop *loop;
	struct fgd_engine *engine;
	struct fgd_server *server;
	char dir[48], path[64];
	int client;
	char buf[1 << 16];
	size_t len;
};

static void setup(struct fixture *f)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *why = NULL;

	if (geteuid() != 0)
		SKIP("the engine opens perf events: needs root");
	*f = (struct fixture){ .client = -1 };
	snprintf(f->dir, sizeof(f->dir), "/tmp/fgd-test-server-XXXXXX");
	ASSERT_TRUE(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/fgd.sock", f->dir);
	ASSERT_OK(fgd_config_init(&f->conf));
	f->conf.always_on = false;
	ASSERT_OK(fgd_config_set_string(&f->conf.socket_path, f->path));
	ASSERT_OK(fgd_config_set_string(&f->conf.socket_group, NULL));
	ASSERT_OK(fgd_loop__new(&f->loop));
	ASSERT_OK(fgd_engine__new(&f->conf, f->loop, &f->engine, &why));
	ASSERT_OK(fgd_server__new(&f->conf, f->loop, f->engine, -1, &f->server));
	f->client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ASSERT_TRUE(f->client >= 0);
	memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
	ASSERT_EQ(connect(f->client, (struct sockaddr *)&sa, sizeof(sa)), 0);
}

static void teardown(struct fixture *f)
{
	safe_close(f->client);
	fgd_server__free(f->server);
	fgd_engine__free(f->engine);
	fgd_loop__free(f->loop);
	fgd_config_done(&f->conf);
	rmdir(f->dir);
}

/* One turn of what fgd.c's run loop does. */
static void turn(struct fixture *f)
{
	(void)fgd_loop__wait(f->loop, 20);
	fgd_engine__drain(f->engine);
	fgd_server__tick(f->server);
}

static void send_line(struct fixture *f, const char *line)
{
	size_t n = strlen(line);

	ASSERT_EQ(send(f->client, line, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* The next reply line, parsed; data chunks are skipped. Runs the loop meanwhile, 10 s at most. */
static struct json_object *reply(struct fixture *f)
{
	uint64_t deadline = fgd_now() + 10ULL * 1000000000ULL;

	for (;;) {
		char *nl = memchr(f->buf, '\n', f->len);
		ssize_t n;

		if (nl) {
			struct json_object *m;
			size_t used = (size_t)(nl - f->buf) + 1;

			*nl = '\0';
			m = json_tokener_parse(f->buf);
			ASSERT_TRUE(m);
			memmove(f->buf, f->buf + used, f->len - used);
			f->len -= used;
			return m;
		}
		ASSERT_TRUE(fgd_now() < deadline);
		turn(f);
		n = recv(f->client, f->buf + f->len, sizeof(f->buf) - f->len - 1, 0);
		if (n > 0)
			f->len += (size_t)n;
		else
			ASSERT_TRUE(n < 0 && errno == EAGAIN);
	}
}

/* Reads and drops the n raw bytes of a data chunk. */
static void skip_data(struct fixture *f, size_t n)
{
	uint64_t deadline = fgd_now() + 10ULL * 1000000000ULL;

	while (f->len < n) {
		ssize_t r;

		n -= f->len;
		f->len = 0;
		ASSERT_TRUE(fgd_now() < deadline);
		turn(f);
		r = recv(f->client, f->buf, sizeof(f->buf) - 1, 0);
		if (r > 0)
			f->len = (size_t)r;
	}
	memmove(f->buf, f->buf + n, f->len - n);
	f->len -= n;
}

static const char *str(struct json_object *m, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(m, key, &v) ? json_object_get_string(v) : "";
}

TEST(an_output_queue_sends_what_the_socket_takes_and_keeps_the_rest)
{
	struct fgd_outq q = {};
	char big[1 << 16], got[1 << 16];
	int sv[2], sndbuf = 4096;
	size_t read = 0;
	long sent, total = 0;

	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ASSERT_EQ(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	ASSERT_OK(fgd_outq_append(&q, big, sizeof(big)));
	/* A full socket takes part: the rest waits, in order. */
	sent = fgd_outq_send(&q, sv[0]);
	ASSERT_TRUE(sent > 0 && (size_t)sent < sizeof(big));
	ASSERT_EQ(q.len, sizeof(big) - (size_t)sent);
	total = sent;
	while (q.len > 0) {
		ssize_t n = recv(sv[1], got + read, sizeof(got) - read, MSG_DONTWAIT);

		if (n > 0)
			read += (size_t)n;
		sent = fgd_outq_send(&q, sv[0]);
		ASSERT_TRUE(sent >= 0);
		total += sent;
	}
	ASSERT_EQ(total, (long)sizeof(big));
	ASSERT_EQ(q.start, 0);
	while (read < sizeof(big)) {
		ssize_t n = recv(sv[1], got + read, sizeof(got) - read, 0);

		ASSERT_TRUE(n > 0);
		read += (size_t)n;
	}
	ASSERT_EQ(memcmp(big, got, sizeof(big)), 0);
	/* Drained: a big buffer is given back, a small one kept. */
	fgd_outq_trim(&q, sizeof(big) * 2);
	ASSERT_TRUE(q.buf != NULL);
	fgd_outq_trim(&q, 16);
	ASSERT_TRUE(q.buf == NULL && q.cap == 0);
	/* The peer gone: an error, and what waits stays. */
	ASSERT_OK(fgd_outq_append(&q, "x", 1));
	close(sv[1]);
	ASSERT_TRUE(fgd_outq_send(&q, sv[0]) < 0);
	ASSERT_EQ(q.len, 1);
	fgd_outq_done(&q);
	close(sv[0]);
}

TEST(status_is_answered_with_every_part)
{
	struct fixture f;
	struct json_object *m, *v;

	setup(&f);
	send_line(&f, "{\"fgd\":1,\"cmd\":\"status\"}\n");
	m = reply(&f);
	ASSERT_STREQ(str(m, "type"), "status");
	ASSERT_STREQ(str(m, "socket"), f.path);
	ASSERT_TRUE(strlen(str(m, "event")) > 0);
	for (const char *const *k = (const char *const[]){ "server", "symbols", "unwinding", "loop",
							   "loader", "always_on", NULL };
	     *k; k++)
		ASSERT_TRUE(json_object_object_get_ex(m, *k, &v));
	json_object_put(m);
	teardown(&f);
}

TEST(requests_that_cannot_be_served_get_an_error)
{
	struct fixture f;
	struct json_object *m;

	setup(&f);
	send_line(&f, "not json\n");
	m = reply(&f);
	ASSERT_STREQ(str(m, "error"), "EBADMSG");
	json_object_put(m);
	send_line(&f, "{\"fgd\":1,\"cmd\":\"stop\"}\n");
	m = reply(&f);
	ASSERT_STREQ(str(m, "error"), "ENOENT");
	json_object_put(m);
	/* Always-on is off in this engine: no window to query. */
	send_line(&f, "{\"fgd\":1,\"cmd\":\"snapshot\"}\n");
	m = reply(&f);
	ASSERT_STREQ(str(m, "error"), "ENODATA");
	json_object_put(m);
	send_line(&f, "{\"fgd\":2,\"cmd\":\"status\"}\n");
	m = reply(&f);
	ASSERT_STREQ(str(m, "error"), "EPROTO");
	json_object_put(m);
	teardown(&f);
}

TEST(a_recording_runs_to_its_result)
{
	struct fixture f;
	struct json_object *m;
	char req[128];

	setup(&f);
	snprintf(req, sizeof(req),
		 "{\"fgd\":1,\"cmd\":\"record\",\"pids\":[%d],\"duration_ms\":300}\n", getpid());
	send_line(&f, req);
	m = reply(&f);
	ASSERT_STREQ(str(m, "type"), "started");
	json_object_put(m);
	/* The result, then its data, then the end: whatever this test did meanwhile. */
	do {
		m = reply(&f);
		if (strcmp(str(m, "type"), "progress") == 0)
			json_object_put(m), m = NULL;
	} while (!m);
	ASSERT_STREQ(str(m, "type"), "result");
	ASSERT_STREQ(str(m, "reason"), "completed");
	json_object_put(m);
	do {
		m = reply(&f);
		if (strcmp(str(m, "type"), "end") != 0) {
			struct json_object *len;

			ASSERT_STREQ(str(m, "type"), "data");
			ASSERT_TRUE(json_object_object_get_ex(m, "length", &len));
			skip_data(&f, (size_t)json_object_get_int64(len));
			json_object_put(m);
			m = NULL;
		}
	} while (!m);
	json_object_put(m);
	teardown(&f);
}
