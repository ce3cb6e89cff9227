/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/budget.h"
#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "base/strpool.h"
#include "fgd-clock.h"
#include "proto/status-types.h"
#include "symbols/fgd-namecache.h"

/*
 * Addresses named on the loader's thread, kept: past this (or the budget's
 * share for them, if smaller), the table starts again.
 */
#define RESOLVED_MAX_BYTES (32ULL << 20)

struct fg_name_cache {
	struct fg_name_entry *resolved; /* owned */
	size_t n_resolved, cap_resolved;
	struct fg_idxmap resolved_index;
	struct fg_strpool *resolved_names; /* owned; NULL until the first */
	uint64_t resolved_since;           /* CLOCK_MONOTONIC ns of the table's last start */
	uint64_t resets;
	struct fg_budget *budget; /* borrowed; NULL: none */
	uint64_t names_charged;
};

int fg_name_cache__new(struct fg_name_cache **ret)
{
	struct fg_name_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

struct fg_name_cache *fg_name_cache__free(struct fg_name_cache *c)
{
	if (!c)
		return NULL;
	fg_name_cache__set_budget(c, NULL);
	free(c->resolved);
	fg_idxmap_done(&c->resolved_index);
	fg_strpool__free(c->resolved_names);
	free(c);
	return NULL;
}

static uint64_t resolved_hash(const struct fg_name_key *k)
{
	return fg_hash_combine(fg_hash_combine(fg_hash_mix(k->dso_serial), k->offset), k->flags);
}

static bool resolved_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_name_entry *e = &((const struct fg_name_cache *)ctx)->resolved[idx];
	const struct fg_name_key *k = key;

	return e->dso_serial == k->dso_serial && e->offset == k->offset && e->flags == k->flags;
}

static uint64_t resolved_bytes(const struct fg_name_cache *c)
{
	return c->cap_resolved * sizeof(*c->resolved) + fg_idxmap_bytes(&c->resolved_index) +
	       (c->resolved_names ? fg_strpool__bytes(c->resolved_names) : 0);
}

static void account_names(struct fg_name_cache *c)
{
	fg_budget__account(c->budget, FG_BUDGET_NAMES, &c->names_charged, resolved_bytes(c));
}

/* Empties the table. Jobs still running put their answers in the new one. */
static void resolved_reset(struct fg_name_cache *c)
{
	free(c->resolved);
	c->resolved = NULL;
	c->n_resolved = c->cap_resolved = 0;
	fg_idxmap_done(&c->resolved_index);
	c->resolved_names = fg_strpool__free(c->resolved_names);
	c->resets++;
	c->resolved_since = fgd_now();
	account_names(c);
}

/*
 * Last (after the binaries' DWARF and symbol tables, fgd-symbols.c), the
 * kept names: started again, unless they were less than idle ago (the
 * table has no clock of its own uses: its age stands for it). Jobs still
 * running put their answers in the new table.
 */
static uint64_t evict_names(void *ctx, uint64_t want, uint64_t now, uint64_t idle)
{
	struct fg_name_cache *c = ctx;
	size_t n = c->n_resolved;

	if (n == 0 || c->resolved_since + idle > now)
		return 0;
	resolved_reset(c);
	return n;
}

void fg_name_cache__set_budget(struct fg_name_cache *c, struct fg_budget *budget)
{
	fg_budget__account(c->budget, FG_BUDGET_NAMES, &c->names_charged, 0);
	fg_budget__set_evictor(c->budget, FG_BUDGET_NAMES, NULL, NULL);
	c->budget = budget;
	fg_budget__set_evictor(budget, FG_BUDGET_NAMES, evict_names, c);
	account_names(c);
}

struct fg_name_entry *fg_name_cache__find(struct fg_name_cache *c, const struct fg_name_key *k)
{
	int64_t i = fg_idxmap_find(&c->resolved_index, resolved_hash(k), resolved_eq, c, k);

	return i >= 0 ? &c->resolved[i] : NULL;
}

struct fg_name_entry *fg_name_cache__add(struct fg_name_cache *c, const struct fg_name_key *k)
{
	struct fg_name_entry *e;

	if (resolved_bytes(c) >
	    MIN(RESOLVED_MAX_BYTES, fg_budget__share(c->budget, FG_BUDGET_NAMES)))
		resolved_reset(c);
	if (!c->resolved_names && !(c->resolved_names = fg_strpool__new()))
		return NULL;
	if (FG_GROW(c->resolved, c->cap_resolved, c->n_resolved + 1) < 0 ||
	    fg_idxmap_insert(&c->resolved_index, resolved_hash(k), (uint32_t)c->n_resolved) < 0)
		return NULL;
	e = &c->resolved[c->n_resolved++];
	*e = (struct fg_name_entry){ .dso_serial = k->dso_serial,
				     .offset = k->offset,
				     .flags = k->flags };
	account_names(c);
	return e;
}

bool fg_name_cache__fill(struct fg_name_cache *c, struct fg_name_entry *e,
			 const struct fg_sym_frames *f)
{
	for (size_t i = 0; i < f->n; i++) {
		uint32_t id;

		if (fg_strpool__intern(c->resolved_names, f->names[i], strlen(f->names[i]), &id) <
		    0) {
			account_names(c);
			return false;
		}
		e->names[i] = id;
	}
	e->n = (uint8_t)f->n;
	e->result = (uint8_t)f->result;
	account_names(c);
	return true;
}

void fg_name_cache__frames(const struct fg_name_cache *c, const struct fg_name_entry *e,
			   struct fg_sym_frames *ret)
{
	*ret = (struct fg_sym_frames){ .n = e->n, .result = e->result, .inlined = e->n - 1u };
	for (size_t i = 0; i < e->n; i++)
		ret->names[i] = fg_strpool__str(c->resolved_names, e->names[i]);
}

void fg_name_cache__stats(const struct fg_name_cache *c, struct fg_status_symbols *ret)
{
	ret->resolved = c->n_resolved;
	ret->resolved_bytes = resolved_bytes(c);
	ret->resolved_resets = c->resets;
}
