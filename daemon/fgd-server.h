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

/* Binds the socket (refusing to steal one a live daemon answers on) and starts listening. */
int fgd_server__new(struct fgd *d, struct fgd_server **ret);
struct fgd_server *fgd_server__free(struct fgd_server *s);

/* Drains the rings of every live recording (part of a drain round). */
void fgd_server__snapshot_recordings(struct fgd_server *s);
void fgd_server__drain_recordings(struct fgd_server *s);

/* Deadlines, exited targets, progress messages, idle clients. */
void fgd_server__tick(struct fgd_server *s);

/* True while any recording samples: the loop then drains more often. */
bool fgd_server__busy(const struct fgd_server *s);

/* Adds the server's figures to a status reply. */
void fgd_server__status(const struct fgd_server *s, struct json_object *status);
