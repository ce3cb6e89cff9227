/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Output sink shared by the renderers. Producers call it with chunks of
 * their output; it returns 0 or a negative errno, which the producer passes
 * back up unchanged.
 *
 * Producers are resumable: each call of an emit function writes at least
 * `budget` bytes (or everything left) and returns 0 while there is more and
 * 1 when done. The daemon uses this to stream large results to a socket a
 * chunk at a time without ever holding the whole output; fgctl simply loops.
 */

#include <stddef.h>

typedef int (*fg_write_fn)(void *ctx, const void *buf, size_t len);
