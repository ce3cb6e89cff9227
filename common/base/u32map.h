/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A map from uint32_t keys (pids, tids) to pointers the caller owns, with
 * removal. Built on fg_idxmap; slots of removed keys are reused.
 */

#include <stddef.h>
#include <stdint.h>

#include "base/idxmap.h"

struct fg_u32map {
	struct fg_idxmap index;
	uint32_t *keys; /* owned */
	void **vals;    /* owned array of borrowed pointers; NULL = free slot */
	size_t n, cap;
	uint32_t *free_slots; /* owned */
	size_t n_free;
};

#define FG_U32MAP_INIT \
	{              \
	}

void fg_u32map_done(struct fg_u32map *m);

/* The value for key, or NULL. */
void *fg_u32map_get(const struct fg_u32map *m, uint32_t key);
/* Sets key to val (non-NULL), replacing any value. 0 or -ENOMEM. */
int fg_u32map_set(struct fg_u32map *m, uint32_t key, void *val);
/* Removes key; returns its value, or NULL if it was absent. */
void *fg_u32map_del(struct fg_u32map *m, uint32_t key);

static inline size_t fg_u32map_count(const struct fg_u32map *m)
{
	return m->index.count;
}

/* Iteration: for (size_t i = 0; i < m->n; i++) if (m->vals[i]) ... (unordered). */
