/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * String interning. Each distinct string gets a dense id (0, 1, 2, ...).
 * Strings are stored NUL-terminated in chunks that never move, so pointers
 * returned by fg_strpool__str() stay valid until the pool is freed.
 */

#include "base/macro.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_strpool;

/* Caller frees with fg_strpool__free(). NULL on ENOMEM. */
struct fg_strpool *fg_strpool__new(void);
struct fg_strpool *fg_strpool__free(struct fg_strpool *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_strpool *, fg_strpool__free);

/*
 * Interns s[0..len). Stores the id in *ret_id. Returns 1 if the string was
 * new, 0 if it was present, -ENOMEM, or -E2BIG past 4 GiB of strings.
 */
int fg_strpool__intern(struct fg_strpool *p, const char *s, size_t len, uint32_t *ret_id);

/* Id of s, or -1 if not interned. */
int64_t fg_strpool__find(const struct fg_strpool *p, const char *s, size_t len);

/* Borrowed until the pool is freed. id must be < fg_strpool__count(). */
const char *fg_strpool__str(const struct fg_strpool *p, uint32_t id);
size_t fg_strpool__len(const struct fg_strpool *p, uint32_t id);
/* True when id's string is s[0..len); id must be < fg_strpool__count(). */
bool fg_strpool__is(const struct fg_strpool *p, uint32_t id, const char *s, size_t len);

size_t fg_strpool__count(const struct fg_strpool *p);
/* Heap bytes held, for memory accounting. */
size_t fg_strpool__bytes(const struct fg_strpool *p);
