/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/macro.h"
#include "server/fgd-outq.h"

int fgd_outq_append(struct fgd_outq *q, const void *p, size_t n)
{
	int r;

	if (q->start > 0 && q->start + q->len + n > q->cap) {
		memmove(q->buf, q->buf + q->start, q->len);
		q->start = 0;
	}
	r = FG_GROW(q->buf, q->cap, q->start + q->len + n);
	if (r < 0)
		return r;
	memcpy(q->buf + q->start + q->len, p, n);
	q->len += n;
	return 0;
}

long fgd_outq_send(struct fgd_outq *q, int fd)
{
	long sent = 0;

	while (q->len > 0) {
		ssize_t n = send(fd, q->buf + q->start, q->len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return negative_errno();
		}
		q->start += (size_t)n;
		q->len -= (size_t)n;
		sent += n;
		if (q->len == 0)
			q->start = 0;
	}
	return sent;
}

void fgd_outq_trim(struct fgd_outq *q, size_t keep)
{
	if (q->len == 0 && q->cap > keep)
		fgd_outq_done(q);
}

void fgd_outq_done(struct fgd_outq *q)
{
	free(q->buf);
	*q = (struct fgd_outq){};
}
