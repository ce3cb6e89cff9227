/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "consumers/fgd-pprof.h"
#include "profile/pprof.h"
#include "profile/view.h"
#include "symbols/fgd-symbols.h"

#define KEY_PREFIX '#'
#define NONE UINT32_MAX

struct dso_mapping {
	const struct fg_dso *dso; /* borrowed from the resolver's memo */
	uint64_t id;
};

struct fg_loc_profile {
	struct fg_folded *model; /* owned until handed over: roots, then location keys */
	uint32_t *of_loc; /* owned: per memo location, its key's id in model; NONE: none yet */
	size_t cap_of_loc;
	uint32_t *of_name; /* owned: per name id of the names table (roots), its id in model */
	size_t cap_of_name;
	uint32_t *stack; /* owned: one stack, root first */
	size_t cap_stack;

	/* While the pprof form is written: */
	const struct fg_resolver *res; /* borrowed */
	const struct fg_folded *names; /* borrowed */
	struct fg_symbolizer *sym;     /* borrowed */
	struct dso_mapping *maps;      /* owned: a mapping per binary */
	size_t n_maps, cap_maps;
	struct fg_idxmap map_index;   /* over maps, by dso */
	uint64_t kernel_map, jit_map; /* 0 until needed */
	uint64_t *fn_of;              /* owned: per name id of names, its function */
};

struct fg_loc_profile *fg_loc_profile__free(struct fg_loc_profile *lp)
{
	if (!lp)
		return NULL;
	fg_folded__free(lp->model);
	free(lp->of_loc);
	free(lp->of_name);
	free(lp->stack);
	free(lp->maps);
	fg_idxmap_done(&lp->map_index);
	free(lp->fn_of);
	free(lp);
	return NULL;
}

int fg_loc_profile__new(struct fg_loc_profile **ret)
{
	struct fg_loc_profile *lp = calloc(1, sizeof(*lp));

	if (!lp || !(lp->model = fg_folded__new())) {
		fg_loc_profile__free(lp);
		return -ENOMEM;
	}
	*ret = lp;
	return 0;
}

/* *id's slot in an id map grown to hold index i, NONE-filled as it grows. */
static int slot(uint32_t **map, size_t *cap, size_t i, uint32_t **ret)
{
	size_t old = *cap;

	if (i >= old) {
		if (FG_GROW(*map, *cap, i + 1) < 0)
			return -ENOMEM;
		memset(*map + old, 0xff, (*cap - old) * sizeof(**map));
	}
	*ret = &(*map)[i];
	return 0;
}

int fg_loc_profile__add(struct fg_loc_profile *lp, const struct fg_folded *names,
			const uint32_t *roots, size_t n_roots, const uint32_t *locs, size_t n,
			double count)
{
	size_t k = 0;
	uint32_t *id;
	int err;

	if (FG_GROW(lp->stack, lp->cap_stack, n_roots + n) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n_roots; i++) {
		err = slot(&lp->of_name, &lp->cap_of_name, roots[i], &id);
		if (err >= 0 && *id == NONE)
			err = fg_folded__intern(lp->model, fg_folded__name(names, roots[i]),
						fg_folded__name_len(names, roots[i]), id);
		if (err < 0)
			return err;
		lp->stack[k++] = *id;
	}
	for (size_t i = n; i-- > 0;) {
		err = slot(&lp->of_loc, &lp->cap_of_loc, locs[i], &id);
		if (err >= 0 && *id == NONE) {
			char key[16];
			int len = snprintf(key, sizeof(key), "%c%" PRIu32, KEY_PREFIX, locs[i]);

			err = fg_folded__intern(lp->model, key, (size_t)len, id);
		}
		if (err < 0)
			return err;
		lp->stack[k++] = *id;
	}
	return k ? fg_folded__add(lp->model, lp->stack, k, count) : 0;
}

void fg_loc_profile__freeze(struct fg_loc_profile *lp)
{
	fg_folded__set_max_stacks(lp->model, fg_folded__n_stacks(lp->model));
}

size_t fg_loc_profile__bytes(const struct fg_loc_profile *lp)
{
	return sizeof(*lp) + (lp->model ? fg_folded__bytes(lp->model) : 0) +
	       (lp->cap_of_loc + lp->cap_of_name + lp->cap_stack) * sizeof(uint32_t);
}

static bool map_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct fg_loc_profile *)ctx)->maps[idx].dso == key;
}

/* A binary's build-id as hex, as pprof and perf spell it. */
static void build_id_hex(const struct fg_dso_key *k, char *buf)
{
	for (size_t i = 0; i < k->build_id_len; i++)
		sprintf(buf + 2 * i, "%02x", k->build_id[i]);
	buf[2 * k->build_id_len] = '\0';
}

/* The mapping a location is in (0: none), made the first time; its range covers addr. */
static int mapping(struct fg_loc_profile *lp, struct fg_pprof *p,
		   const struct fg_resolve_location *l, uint64_t *ret)
{
	struct fg_pprof_mapping m = { .has_functions = true, .has_inline_frames = true };
	char build_id[2 * FG_BUILD_ID_MAX + 1];
	uint64_t h;
	int64_t i;
	int err;

	*ret = 0;
	if (l->kind == FG_LOCATION_JIT) {
		m.filename = "[jit]";
		if (!lp->jit_map && (err = fg_pprof__mapping(p, &m, &lp->jit_map)) < 0)
			return err;
		*ret = lp->jit_map;
		return 0;
	}
	if (l->kind == FG_LOCATION_KERNEL) {
		m.filename = "[kernel.kallsyms]";
		m.build_id = lp->sym ? fg_symbolizer__kernel_build_id(lp->sym) : NULL;
		if (m.build_id && !m.build_id[0])
			m.build_id = NULL;
		if (!lp->kernel_map && (err = fg_pprof__mapping(p, &m, &lp->kernel_map)) < 0)
			return err;
		*ret = lp->kernel_map;
		return fg_pprof__mapping_cover(p, *ret, l->addr);
	}
	if (!l->dso)
		return 0; /* an address in no known mapping: its location alone */
	h = fg_hash_mix((uintptr_t)l->dso);
	i = fg_idxmap_find(&lp->map_index, h, map_eq, lp, l->dso);
	if (i < 0) {
		build_id_hex(fg_dso__key(l->dso), build_id);
		m.filename = fg_dso__path(l->dso);
		m.build_id = build_id[0] ? build_id : NULL;
		if (FG_GROW(lp->maps, lp->cap_maps, lp->n_maps + 1) < 0 ||
		    fg_idxmap_insert(&lp->map_index, h, (uint32_t)lp->n_maps) < 0)
			return -ENOMEM;
		err = fg_pprof__mapping(p, &m, &lp->maps[lp->n_maps].id);
		if (err < 0)
			return err;
		lp->maps[lp->n_maps].dso = l->dso;
		i = (int64_t)lp->n_maps++;
	}
	*ret = lp->maps[i].id;
	return fg_pprof__mapping_cover(p, *ret, l->addr);
}

/*
 * The function named by name id (of lp->names), without its annotation
 * suffix. l and its offset, for the location's outermost function (the
 * symbol table's; NULL for others): its system name is the symbol as the
 * binary spells it, mangled.
 */
static int function(struct fg_loc_profile *lp, struct fg_pprof *p, uint32_t name,
		    const struct fg_resolve_location *l, uint64_t *ret)
{
	const char *s = fg_folded__name(lp->names, name), *sys = NULL;
	size_t len = fg_folded__name_len(lp->names, name);
	enum fg_sym_result result;
	char buf[256];
	int err;

	if (!lp->fn_of[name]) {
		/* The mapping says kernel or JIT: the name needs no suffix to say it. */
		if (fg_frame_is_kernel(s, len))
			len -= strlen(FG_KERNEL_SUFFIX);
		else if (len > 4 && memcmp(s + len - 4, "_[j]", 4) == 0)
			len -= 4;
		/* Loaded symbols answer at once; a binary not loaded now starts loading, unnamed. */
		if (l && l->dso && lp->sym) {
			sys = fg_symbolizer__name_user(lp->sym, l->dso, l->addr, NULL, buf,
						       sizeof(buf), &result);
			if (result != FG_SYM_NAMED)
				sys = NULL;
		}
		err = fg_pprof__function(p, s, len, sys, NULL, &lp->fn_of[name]);
		if (err < 0)
			return err;
	}
	*ret = lp->fn_of[name];
	return 0;
}

/* fg_pprof_locate_fn: a location key of the model as its pprof location. */
static int locate(void *ctx, struct fg_pprof *p, const struct fg_folded *model, uint32_t name_id,
		  uint64_t *ret_id)
{
	struct fg_loc_profile *lp = ctx;
	const char *key = fg_folded__name(model, name_id);
	struct fg_resolve_location l;
	uint64_t map, fns[FG_SYM_MAX_FRAMES];
	unsigned long idx;
	char *end;
	int err;

	if (key[0] != KEY_PREFIX)
		return -ENOENT; /* a root frame kept as a frame */
	idx = strtoul(key + 1, &end, 10);
	if (*end || idx > UINT32_MAX || fg_resolver__location(lp->res, (uint32_t)idx, &l) < 0)
		return -EINVAL;
	err = mapping(lp, p, &l, &map);
	/* pprof's lines are innermost first; the memo's names outermost first. */
	for (size_t i = 0; err >= 0 && i < l.n_names && i < FG_SYM_MAX_FRAMES; i++)
		err = function(lp, p, l.names[l.n_names - 1 - i],
			       i == l.n_names - 1 && l.kind == FG_LOCATION_USER ? &l : NULL,
			       &fns[i]);
	if (err < 0)
		return err;
	/* A JIT entry's key is no address; an unknown location has none. */
	return fg_pprof__location(p, map,
				  l.kind == FG_LOCATION_JIT ||
						  (!l.dso && l.kind == FG_LOCATION_USER) ?
					  0 :
					  l.addr,
				  fns, MIN(l.n_names, (size_t)FG_SYM_MAX_FRAMES), ret_id);
}

int fg_loc_profile__pprof(struct fg_loc_profile *lp, const struct fg_resolver *res,
			  const struct fg_folded *names, struct fg_symbolizer *sym,
			  struct fg_pprof_meta *meta, struct fg_folded **ret_model)
{
	lp->fn_of = calloc(MAX(fg_folded__n_names(names), (size_t)1), sizeof(*lp->fn_of));
	if (!lp->fn_of)
		return -ENOMEM;
	lp->res = res;
	lp->names = names;
	lp->sym = sym;
	meta->locate = locate;
	meta->locate_ctx = lp;
	*ret_model = TAKE_PTR(lp->model);
	return 0;
}
