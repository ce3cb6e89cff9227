/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the status reply says (docs/PROTOCOL.md, "Status"; the schema is
 * common/proto/status.h), gathered from the daemon's components in one place.
 */

#include "fgd-conf.h"
#include "fgd-engine.h"
#include "fgd-loop.h"
#include "proto/status.h"

/*
 * Fills *ret from the configuration conf, the engine and every component it
 * owns (fgd_engine__status(): the process table, symbols, unwinding, JIT
 * maps, the loader, the budget, tracking, the per-CPU and stack totals of
 * every recording), the loop, and always-on sampling
 * (fgd_alwayson__status()): each fills its own part. The
 * server adds its own part (fgd_server__status()). Strings in *ret are
 * borrowed from those for the call that encodes them; caller releases *ret
 * with fg_status_done(). 0, or -ENOMEM with *ret untouched.
 */
int fgd_status_fill(const struct fgd_config *conf, struct fgd_engine *e,
		    const struct fgd_loop *loop, struct fg_status *ret);
