/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/macro.h"
#include "fgctl-client.h"

/* Replies can be larger than requests (status lists every CPU). */
#define MAX_REPLY_LINE (16 * 1024 * 1024)

int fgctl_connect(const char *path, struct fgctl_conn *ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;
	sigset_t mask;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "fgctl: socket path too long: %s\n", path);
		return -FGCTL_EXIT_USAGE;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "fgctl: cannot create a socket: %m\n");
		return -FGCTL_EXIT_FAILURE;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		switch (errno) {
		case ENOENT:
		case ECONNREFUSED:
			fprintf(stderr,
				"fgctl: fgd is not running (nothing listens on %s).\n"
				"Start it with 'fgd' as root, or point fgctl at its socket with "
				"--socket or FGD_SOCKET.\n",
				path);
			return -FGCTL_EXIT_NO_DAEMON;
		case EACCES:
		case EPERM:
			fprintf(stderr,
				"fgctl: permission denied on %s.\n"
				"Run as root, or ask an administrator to add you to the group "
				"that owns the socket.\n",
				path);
			return -FGCTL_EXIT_DENIED;
		default:
			fprintf(stderr, "fgctl: cannot connect to %s: %m\n", path);
			return -FGCTL_EXIT_FAILURE;
		}
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	*ret = (struct fgctl_conn){ .fd = TAKE_FD(fd) };
	ret->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	fg_proto_reader_init(&ret->in, MAX_REPLY_LINE);
	return 0;
}

bool fgctl_wait_for_signal(int64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (ms <= 0)
		return false;
	/* EINTR from another signal: the remaining time is not known; wait no more. */
	return sigtimedwait(&mask, NULL, &ts) > 0;
}

void fgctl_disconnect(struct fgctl_conn *c)
{
	safe_close(c->fd);
	safe_close(c->signal_fd);
	fg_proto_reader_done(&c->in);
	c->fd = c->signal_fd = -1;
}

int fgctl_send(struct fgctl_conn *c, struct json_object *msg)
{
	_cleanup_free_ char *line = fg_proto_format(msg);
	size_t len, off = 0;

	if (!line)
		return -ENOMEM;
	len = strlen(line);
	while (off < len) {
		ssize_t n = send(c->fd, line + off, len - off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		off += (size_t)n;
	}
	return 0;
}

int fgctl_next(struct fgctl_conn *c, enum fgctl_event *ret_ev, struct json_object **ret_msg,
	       const char **ret_data, size_t *ret_len)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = c->fd, .events = POLLIN },
			{ .fd = c->signal_fd, .events = POLLIN },
		};
		struct fg_proto_item it;
		char buf[65536];
		ssize_t n;
		int r;

		r = fg_proto_reader_next(&c->in, &it);
		if (r < 0)
			return r;
		if (it.kind == FG_PROTO_DATA) {
			*ret_ev = FGCTL_EV_DATA;
			*ret_data = it.bytes;
			*ret_len = it.len;
			return 0;
		}
		if (it.kind == FG_PROTO_MESSAGE) {
			struct json_object *msg, *type, *len;

			r = fg_proto_parse(it.bytes, it.len, &msg);
			if (r < 0)
				return r;
			if (json_object_object_get_ex(msg, "type", &type) &&
			    strcmp(json_object_get_string(type), "data") == 0) {
				if (!json_object_object_get_ex(msg, "length", &len) ||
				    json_object_get_int64(len) < 0) {
					json_object_put(msg);
					return -EBADMSG;
				}
				fg_proto_reader_expect_data(&c->in,
							    (uint64_t)json_object_get_int64(len));
				json_object_put(msg);
				continue;
			}
			*ret_ev = FGCTL_EV_MESSAGE;
			*ret_msg = msg;
			return 0;
		}
		if (c->eof) {
			*ret_ev = FGCTL_EV_EOF;
			return 0;
		}
		if (poll(pfd, c->signal_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (c->signal_fd >= 0 && (pfd[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(c->signal_fd, &si, sizeof(si)) == sizeof(si)) {
				*ret_ev = FGCTL_EV_SIGNAL;
				return 0;
			}
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != ECONNRESET)
				return negative_errno();
			n = 0;
		}
		if (n == 0) {
			c->eof = true;
			continue;
		}
		r = fg_proto_reader_feed(&c->in, buf, (size_t)n);
		if (r < 0)
			return r;
	}
}

int fgctl_send_failed(struct fgctl_conn *c, int err)
{
	char buf[4096];
	ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	struct fg_proto_item it;

	if (n > 0 && fg_proto_reader_feed(&c->in, buf, (size_t)n) == 0 &&
	    fg_proto_reader_next(&c->in, &it) == 0 && it.kind == FG_PROTO_MESSAGE) {
		struct json_object *msg, *v;

		if (fg_proto_parse(it.bytes, it.len, &msg) == 0) {
			int code = FGCTL_EXIT_FAILURE;

			if (json_object_object_get_ex(msg, "message", &v))
				fprintf(stderr, "fgctl: %s\n", json_object_get_string(v));
			if (json_object_object_get_ex(msg, "error", &v))
				code = fgctl_exit_code_for(json_object_get_string(v));
			json_object_put(msg);
			return code;
		}
	}
	fprintf(stderr, "fgctl: cannot send the request to fgd: %s\n", strerror(-err));
	return FGCTL_EXIT_FAILURE;
}

int fgctl_exit_code_for(const char *name)
{
	switch (fg_errno_from_name(name ? name : "")) {
	case EPERM:
	case EACCES:
		return FGCTL_EXIT_DENIED;
	case ESRCH:
		return FGCTL_EXIT_NO_PROCESS;
	case EINVAL:
		return FGCTL_EXIT_USAGE;
	default:
		return FGCTL_EXIT_FAILURE;
	}
}
