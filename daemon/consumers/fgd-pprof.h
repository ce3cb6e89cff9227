/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A recording's profile of code locations, for pprof: beside its folded
 * model of names, a recording asked for pprof keeps each stack as the
 * resolver's locations (fgd-resolve.h), so the profile it writes has what
 * names alone lose: each location's address, its binary's mapping with
 * file name and build-id, and the functions inlined there as lines of
 * that one location. (A model of names gives pprof a location per name;
 * common/profile/pprof-model.h.)
 *
 * Its model is a folded model whose frames below the roots are location
 * keys ("#IDX", IDX the memo's index): common/profile/pprof-model.h writes it, and
 * calls back here for each location.
 */

#include <stddef.h>
#include <stdint.h>

#include "profile/folded.h"
#include "profile/pprof-model.h"
#include "resolver/fgd-resolve.h"

struct fg_loc_profile;

/* Caller frees *ret with fg_loc_profile__free(). 0 or -ENOMEM. */
int fg_loc_profile__new(struct fg_loc_profile **ret);
struct fg_loc_profile *fg_loc_profile__free(struct fg_loc_profile *lp);

/*
 * Adds count to the stack of root frames roots[0..n_roots) (name ids of
 * names: [cgroup,] process, and a FG_RESOLVE_TRUNCATED frame, which is
 * only a name) over the locations locs[0..n), leaf first, as
 * fg_resolver__sample_locations() gives them. 0 or a negative errno from
 * the model (-E2BIG once frozen and the stack is new).
 */
int fg_loc_profile__add(struct fg_loc_profile *lp, const struct fg_folded *names,
			const uint32_t *roots, size_t n_roots, const uint32_t *locs, size_t n,
			double count);

/* No new stacks from now on (the recording's memory is spent); known ones go on counting. */
void fg_loc_profile__freeze(struct fg_loc_profile *lp);
/* Heap bytes held, for memory budgets. */
size_t fg_loc_profile__bytes(const struct fg_loc_profile *lp);

/*
 * Readies the pprof form: sets meta's locate callback to name the model's
 * locations from res and names (the name table its locations' names are
 * in), with sym for the functions' names as their binaries spell them
 * (mangled: pprof's system names); all borrowed until the result is
 * built. Hands the model over in *ret_model (the caller's, for
 * fg_result__new(); lp keeps what the callback needs). 0 or -ENOMEM.
 */
int fg_loc_profile__pprof(struct fg_loc_profile *lp, const struct fg_resolver *res,
			  const struct fg_folded *names, struct fg_symbolizer *sym,
			  struct fg_pprof_meta *meta, struct fg_folded **ret_model);
