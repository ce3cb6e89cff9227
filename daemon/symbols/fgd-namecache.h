/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The names found off the loop, kept for every recording.
 *
 * A DWARF walk for inline frames costs what the compilation unit makes it
 * (a crafted one: seconds), and so may demangling, so an address that needs
 * either is named on the loader's thread (fg_symbolizer__frames(),
 * fgd-symbols.h). The answer is kept here, by binary and offset, for every
 * recording and the always-on sampler alike; past 32 MiB, or the memory
 * budget's names part if less, the table starts again empty, and under
 * the budget's pressure too. Names are interned once. Loop's thread only.
 */

#include <stdbool.h>
#include <stdint.h>

#include "symbols/fgd-symbols.h"

struct fg_budget;
struct fg_name_cache;

/*
 * What an answer is kept under: with inline frames, the offset (each
 * address has its own chain); without, the symbol's address with
 * FG_NAME_BY_SYMBOL in flags, since every address in a function then has
 * the one name, and garbage frame-pointer chains would bring a new offset
 * (a new job) per sample.
 */
struct fg_name_key {
	uint64_t dso_serial, offset;
	uint8_t flags;
};

#define FG_NAME_BY_SYMBOL (1u << 7)

/* One address's answer, or the job that will give it. */
struct fg_name_entry {
	uint64_t dso_serial;
	uint64_t offset;
	uint8_t flags;
	bool pending;                      /* a name job runs for it */
	uint8_t result;                    /* enum fg_sym_result */
	uint8_t n;                         /* 0: nothing known (yet) */
	uint32_t names[FG_SYM_MAX_FRAMES]; /* ids in the cache's names */
};

/* Caller frees with fg_name_cache__free(). 0 or -ENOMEM. */
int fg_name_cache__new(struct fg_name_cache **ret);
struct fg_name_cache *fg_name_cache__free(struct fg_name_cache *c);

/*
 * Charges the kept names to budget (common/base/budget.h; borrowed until
 * the cache is freed or another is set; NULL: none), giving what they held
 * back to the one before, and starts them again under its pressure.
 */
void fg_name_cache__set_budget(struct fg_name_cache *c, struct fg_budget *budget);

/*
 * The entry kept under k, or NULL. Borrowed until the next
 * fg_name_cache__add() or the budget's pressure.
 */
struct fg_name_entry *fg_name_cache__find(struct fg_name_cache *c, const struct fg_name_key *k);
/*
 * A new entry for k, nothing known, not pending (the table starts again
 * first if it is at its limit). Borrowed as fg_name_cache__find()'s.
 * NULL on ENOMEM.
 */
struct fg_name_entry *fg_name_cache__add(struct fg_name_cache *c, const struct fg_name_key *k);

/*
 * Keeps a job's answer f in e. False on ENOMEM (the entry then stays
 * pending-free and is asked again).
 */
bool fg_name_cache__fill(struct fg_name_cache *c, struct fg_name_entry *e,
			 const struct fg_sym_frames *f);
/*
 * e's answer (e->n > 0) into *ret, its names borrowed until the table
 * starts again (fg_name_cache__add() at the limit, or the budget's pressure).
 */
void fg_name_cache__frames(const struct fg_name_cache *c, const struct fg_name_entry *e,
			   struct fg_sym_frames *ret);

/*
 * Fills the cache's part of the symbols' status: resolved (addresses kept
 * now), resolved_bytes (what they take), resolved_resets (times the table
 * was emptied at its limit, or under pressure).
 */
void fg_name_cache__stats(const struct fg_name_cache *c, struct fg_status_symbols *ret);
