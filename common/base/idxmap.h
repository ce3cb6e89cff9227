/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * An open-addressing index: maps a 64-bit hash to a uint32_t index into an
 * array the caller owns. Keys live in the caller's entries, so one index type
 * serves every intern table (strings, stacks, locations, pids) and entries
 * stay densely numbered for cheap side arrays.
 *
 * Lookups call the caller's equality function only on a 32-bit tag match.
 * A slot holds the tag and the index together, so a probe touches one cache
 * line, not two.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_idxmap {
	uint64_t *slots; /* owned; 0 = empty, else tag << 32 | (index + 1) */
	size_t mask;
	size_t count;
};

/* Returns true when entry idx has the key. */
typedef bool (*fg_idxmap_eq_fn)(const void *ctx, uint32_t idx, const void *key);

#define FG_IDXMAP_INIT \
	{              \
	}

void fg_idxmap_done(struct fg_idxmap *m);

/* The tag is the hash's low 32 bits; it also picks the home slot. */
static inline uint32_t fg_idxmap_slot_index(uint64_t s)
{
	return (uint32_t)s - 1;
}

static inline uint32_t fg_idxmap_slot_tag(uint64_t s)
{
	return (uint32_t)(s >> 32);
}

/* Index of the entry equal to key, or -1. */
static inline int64_t fg_idxmap_find(const struct fg_idxmap *m, uint64_t hash, fg_idxmap_eq_fn eq,
				     const void *ctx, const void *key)
{
	uint32_t tag = (uint32_t)hash;
	size_t pos;

	if (!m->slots)
		return -1;
	for (pos = tag & m->mask;; pos = (pos + 1) & m->mask) {
		uint64_t s = m->slots[pos];

		if (s == 0)
			return -1;
		if (fg_idxmap_slot_tag(s) == tag && eq(ctx, fg_idxmap_slot_index(s), key))
			return fg_idxmap_slot_index(s);
	}
}

/* Adds idx under hash; the caller has checked it is absent. 0 or -ENOMEM. */
int fg_idxmap_insert(struct fg_idxmap *m, uint64_t hash, uint32_t idx);

/* Removes idx, stored under hash. Returns 0, or -ENOENT. */
int fg_idxmap_remove(struct fg_idxmap *m, uint64_t hash, uint32_t idx);

/* Bytes held by the index itself, for memory accounting. */
static inline size_t fg_idxmap_bytes(const struct fg_idxmap *m)
{
	return m->slots ? (m->mask + 1) * sizeof(*m->slots) : 0;
}
