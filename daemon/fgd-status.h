/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the status reply says (docs/PROTOCOL.md, "Status"; the schema is
 * common/status.h), gathered from the daemon's components in one place.
 */

#include "fgd.h"
#include "status.h"

/*
 * Fills *ret from d and every component it owns: the configuration, the
 * loop, the loader, the process table, symbols, unwinding, JIT maps,
 * tracking, the per-CPU and stack totals of every recording, the server
 * (fgd_server__status()) and always-on sampling (fgd_alwayson__status()).
 * Strings in *ret are borrowed from d for the call that encodes them;
 * caller releases *ret with fg_status_done(). 0, or -ENOMEM with *ret
 * untouched.
 */
int fgd_status_fill(struct fgd *d, struct fg_status *ret);
