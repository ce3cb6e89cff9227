/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The control socket: a Unix stream socket speaking the protocol of
 * docs/PROTOCOL.md. Each client is served independently: a malformed or
 * oversized request, a denied one, or a client vanishing mid-recording
 * affects that client only, and everything it held (its recording and the
 * recording's perf events) is released with it.
 *
 * Access: root may profile anything; other users only processes whose uids
 * are all theirs; whole-machine recordings need root (peer credentials from
 * SO_PEERCRED).
 */

#include <json-c/json.h>

#include "fgd.h"
#include "status.h"

/*
 * Serves listen_fd, a listening socket systemd passed (taken over: closed by
 * fgd_server__free(), its file left to systemd), or with listen_fd -1 binds
 * d->conf.socket_path itself (refusing to steal one a live daemon answers on).
 */
int fgd_server__new(struct fgd *d, int listen_fd, struct fgd_server **ret);
struct fgd_server *fgd_server__free(struct fgd_server *s);

/* Drains the rings of every live recording (part of a drain round). */
void fgd_server__snapshot_recordings(struct fgd_server *s);
void fgd_server__drain_recordings(struct fgd_server *s);

/* Deadlines, exited targets, progress messages, idle clients. */
void fgd_server__tick(struct fgd_server *s);

/* True while any recording samples: the loop then drains more often. */
bool fgd_server__busy(const struct fgd_server *s);

/*
 * The server's part of status: st->server (its clients and limits) and
 * st->recordings (the recordings sampling now, replacing what st held).
 * 0, or -ENOMEM with st untouched.
 */
int fgd_server__status(const struct fgd_server *s, struct fg_status *st);
/* Adds the stack figures of the recordings sampling now in mode g to *q. */
void fgd_server__add_stack_quality(const struct fgd_server *s, enum fg_call_graph g,
				   struct fg_stack_quality *q);

/* The socket's path, borrowed until fgd_server__free(). */
const char *fgd_server__path(const struct fgd_server *s);
/* Recordings sampling now. */
size_t fgd_server__recordings(const struct fgd_server *s);
/* Adds the counters of every live recording's events to *sum. */
void fgd_server__add_live_counters(const struct fgd_server *s, struct fg_cpu_counters *sum);
