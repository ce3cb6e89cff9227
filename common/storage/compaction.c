/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>

#include "storage/compaction.h"

int fg_compaction_policy_check(const struct fg_compaction_policy *p, const char **ret_why)
{
	const char *why = NULL;

	if (p->n_tiers > FG_COMPACTION_MAX_TIERS)
		why = "too many tiers";
	for (size_t i = 0; !why && i < p->n_tiers; i++) {
		const struct fg_compaction_tier *t = &p->tiers[i],
						*prev = i ? &p->tiers[i - 1] : NULL;

		if (t->width_ns == 0)
			why = "a tier's file length is zero";
		else if (prev && t->age_ns <= prev->age_ns)
			why = "the tiers' ages must increase";
		else if (prev && t->width_ns <= prev->width_ns)
			why = "the tiers' file lengths must increase";
		else if (prev && t->width_ns % prev->width_ns)
			why = "each tier's file length must be a multiple of the one before";
	}
	if (!why && p->keep_ns && p->n_tiers && p->keep_ns <= p->tiers[p->n_tiers - 1].age_ns)
		why = "history must be kept longer than the last tier's age";
	if (why) {
		*ret_why = why;
		return -EINVAL;
	}
	return 0;
}

size_t fg_compaction_leftovers(struct fg_compaction_file *files, size_t n)
{
	uint64_t max_end = 0;
	size_t leftovers = 0;

	for (size_t i = 0; i < n; i++) {
		/*
		 * An earlier file starts no later (sorted) and, if it ends no
		 * earlier, holds this one; so does a next one with the same start
		 * and a later end.
		 */
		bool inside = (i > 0 && files[i].end <= max_end) ||
			      (i + 1 < n && files[i + 1].start == files[i].start &&
			       files[i + 1].end > files[i].end);

		files[i].fate = inside ? FG_COMPACTION_LEFTOVER : FG_COMPACTION_KEEP;
		files[i].group = UINT32_MAX;
		leftovers += inside;
		if (i == 0 || files[i].end > max_end)
			max_end = files[i].end;
	}
	return leftovers;
}

static bool sorted(const struct fg_compaction_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (files[i].start > files[i].end)
			return false;
		if (i &&
		    (files[i].start < files[i - 1].start ||
		     (files[i].start == files[i - 1].start && files[i].end < files[i - 1].end)))
			return false;
	}
	return true;
}

/*
 * The tier whose group of files[i] is ready (over, and all its files old
 * enough), the coarsest such; -1 if none. *ret_end is then one past the
 * group's last file. Every file of a tier-k group gets the same answer,
 * since the groups of coarser tiers nest around it.
 */
static int ready_tier(const struct fg_compaction_file *files, size_t n, size_t i, uint64_t now,
		      uint64_t horizon, const struct fg_compaction_policy *p, size_t *ret_end)
{
	for (size_t k = p->n_tiers; k-- > 0;) {
		const struct fg_compaction_tier *t = &p->tiers[k];
		uint64_t limit, g;
		bool ready = true;
		size_t j;

		if (now < t->age_ns)
			continue;
		limit = now - t->age_ns < horizon ? now - t->age_ns : horizon;
		g = files[i].start - files[i].start % t->width_ns;
		/* the group's period is not that old yet */
		if (g > limit || limit - g < t->width_ns)
			continue;
		for (j = i; j < n && files[j].start - g < t->width_ns; j++)
			if (files[j].fate == FG_COMPACTION_KEEP && files[j].end > limit)
				ready = false; /* one file runs past the period, and is younger */
		if (ready) {
			*ret_end = j;
			return (int)k;
		}
	}
	return -1;
}

int fg_compaction_plan(struct fg_compaction_file *files, size_t n, uint64_t now_ns,
		       uint64_t horizon_ns, const struct fg_compaction_policy *p,
		       struct fg_compaction_group *ret_groups)
{
	const char *why;
	size_t n_groups = 0;

	if (!sorted(files, n) || fg_compaction_policy_check(p, &why) < 0 || n / 2 > INT_MAX)
		return -EINVAL;
	fg_compaction_leftovers(files, n);
	for (size_t i = 0; p->keep_ns && now_ns >= p->keep_ns && i < n; i++)
		if (files[i].fate == FG_COMPACTION_KEEP && files[i].end <= now_ns - p->keep_ns)
			files[i].fate = FG_COMPACTION_EXPIRED;
	for (size_t i = 0; i < n;) {
		struct fg_compaction_group g = { .start = files[i].start };
		size_t end;
		int tier;

		if (files[i].fate != FG_COMPACTION_KEEP) {
			i++;
			continue;
		}
		tier = ready_tier(files, n, i, now_ns, horizon_ns, p, &end);
		if (tier < 0) {
			i++;
			continue;
		}
		for (size_t j = i; j < end; j++)
			if (files[j].fate == FG_COMPACTION_KEEP) {
				g.n_files++;
				g.end = files[j].end > g.end ? files[j].end : g.end;
			}
		/* One file alone is as coarse as its data already. */
		if (g.n_files >= 2) {
			g.tier = (uint32_t)tier;
			for (size_t j = i; j < end; j++)
				if (files[j].fate == FG_COMPACTION_KEEP) {
					files[j].fate = FG_COMPACTION_MERGE;
					files[j].group = (uint32_t)n_groups;
				}
			ret_groups[n_groups++] = g;
		}
		i = end;
	}
	return (int)n_groups;
}
