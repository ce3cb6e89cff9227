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
 * SO_PEERCRED). A member of conf->reader_group (its gid or a supplementary
 * group when it connected, SO_PEERGROUPS) is a reader: its queries of the
 * always-on data (snapshot, top) show every process; its recordings follow
 * the rule above.
 */

#include <json-c/json.h>

#include "fgd-conf.h"
#include "fgd-engine.h"
#include "fgd-loop.h"
#include "proto/status.h"

struct fgd_server;

/*
 * Serves listen_fd, a listening socket systemd passed (taken over: closed by
 * fgd_server__free(), its file left to systemd), or with listen_fd -1 binds
 * conf->socket_path itself (refusing to steal one a live daemon answers on).
 * conf, loop and engine are borrowed for the server's life; the engine
 * starts, drains and finishes the recordings clients ask for.
 */
int fgd_server__new(const struct fgd_config *conf, struct fgd_loop *loop, struct fgd_engine *engine,
		    int listen_fd, struct fgd_server **ret);
struct fgd_server *fgd_server__free(struct fgd_server *s);

/* Deadlines, exited targets, progress messages, idle clients. */
void fgd_server__tick(struct fgd_server *s);

/*
 * When the earliest recording with a duration ends (CLOCK_MONOTONIC ns), or
 * UINT64_MAX: the loop wakes for it, so that a recording lasts what was
 * asked whatever the drain interval.
 */
uint64_t fgd_server__next_deadline(const struct fgd_server *s);

/*
 * The server's part of status: st->server (its clients and limits) and
 * st->recordings (the recordings sampling now, replacing what st held), and
 * st->socket (borrowed).
 * 0, or -ENOMEM with st untouched.
 */
int fgd_server__status(const struct fgd_server *s, struct fg_status *st);

/* The socket's path, borrowed until fgd_server__free(). */
const char *fgd_server__path(const struct fgd_server *s);
