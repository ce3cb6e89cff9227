/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "base/hash.h"
#include "base/macro.h"
#include "base/u32map.h"

void fg_u32map_done(struct fg_u32map *m)
{
	fg_idxmap_done(&m->index);
	free(m->keys);
	free(m->vals);
	free(m->free_slots);
	*m = (struct fg_u32map)FG_U32MAP_INIT;
}

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_u32map *m = ctx;

	return m->keys[idx] == *(const uint32_t *)key;
}

static int64_t find(const struct fg_u32map *m, uint32_t key)
{
	return fg_idxmap_find(&m->index, fg_hash_mix(key), key_eq, m, &key);
}

void *fg_u32map_get(const struct fg_u32map *m, uint32_t key)
{
	int64_t i = find(m, key);

	return i >= 0 ? m->vals[i] : NULL;
}

int fg_u32map_set(struct fg_u32map *m, uint32_t key, void *val)
{
	int64_t i = find(m, key);
	uint32_t slot;
	int r;

	if (i >= 0) {
		m->vals[i] = val;
		return 0;
	}
	if (m->n_free > 0) {
		slot = m->free_slots[m->n_free - 1];
	} else {
		size_t cap = m->cap;

		/* keys, vals and free_slots grow together, so one capacity serves all. */
		r = FG_GROW(m->keys, cap, m->n + 1);
		if (r < 0)
			return r;
		cap = m->cap;
		r = FG_GROW(m->free_slots, cap, m->n + 1);
		if (r < 0)
			return r;
		r = FG_GROW(m->vals, m->cap, m->n + 1);
		if (r < 0)
			return r;
		slot = (uint32_t)m->n;
	}
	r = fg_idxmap_insert(&m->index, fg_hash_mix(key), slot);
	if (r < 0)
		return r;
	if (m->n_free > 0)
		m->n_free--;
	else
		m->n++;
	m->keys[slot] = key;
	m->vals[slot] = val;
	return 0;
}

void *fg_u32map_del(struct fg_u32map *m, uint32_t key)
{
	int64_t i = find(m, key);
	void *val;

	if (i < 0)
		return NULL;
	val = m->vals[i];
	fg_idxmap_remove(&m->index, fg_hash_mix(key), (uint32_t)i);
	m->vals[i] = NULL;
	m->free_slots[m->n_free++] = (uint32_t)i;
	return val;
}
