/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A client's output queue (fgd-server.c): the bytes of replies and result
 * chunks not yet sent, sent as the socket takes them. The server decides
 * how much it queues (its high-water mark) and when a queue that drained
 * gives its memory back; the queue only holds and sends.
 */

#include <stddef.h>

struct fgd_outq {
	char *buf; /* owned: bytes [start, start + len) wait to be sent */
	size_t start, len, cap;
};

/* Queues p[0..n) after what waits. 0 or -ENOMEM. */
int fgd_outq_append(struct fgd_outq *q, const void *p, size_t n);

/*
 * Sends what waits on fd without blocking, until it is all sent or the
 * socket is full. Returns the bytes sent (0: none could be), or a negative
 * errno when the peer is gone (-EPIPE, -ECONNRESET, ...).
 */
long fgd_outq_send(struct fgd_outq *q, int fd);

/* Frees the buffer of a queue with nothing waiting, when it holds more than keep bytes. */
void fgd_outq_trim(struct fgd_outq *q, size_t keep);

/* Frees what the queue holds: it is empty after. */
void fgd_outq_done(struct fgd_outq *q);
