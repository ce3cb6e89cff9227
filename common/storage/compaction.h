/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The history's compaction policy and its plan: given the slice files on
 * disk (their spans) and the time now, which files to merge into which
 * coarser file, which to delete, and which to leave. The caller does the
 * reading, merging (fg_slicefile_merge()) and writing.
 *
 * Tiers. Tier k says: a file whose whole group is at least age_ns old is
 * merged with the other files of its group into one file, a group being the
 * files that start in the same [G, G + width_ns) with G a multiple of
 * width_ns since the epoch. A group waits until its period is over and
 * every file in it has reached the tier's age, so a group is merged once,
 * whole, and never while a younger file could still join it. Ages and
 * widths increase from tier to tier, and each width is a multiple of the
 * one before, so every group of a tier lies within one group of the next:
 * by default 10 s files stay for an hour, then become 1-minute files, after
 * a day 10-minute files, and after a week (keep_ns) they are deleted.
 *
 * Leftovers. A merge writes its file first and deletes its sources after,
 * so a crash in between leaves the merged file plus some of its sources. A
 * file whose span lies within another file's span is such a leftover: its
 * samples are in the other file too. Readers skip leftovers and the plan
 * deletes them. (Two slices of one fgd never nest: a slice starts where the
 * previous one ended or later, unless the wall clock is set back.)
 *
 * A group of one file is left as it is (it is already as coarse as its
 * data); the merged file spans its sources, from the first one's start to
 * the last one's end, not the whole aligned group.
 *
 * Pure: no files, no clock, no allocation.
 */

#include <stddef.h>
#include <stdint.h>

#define FG_COMPACTION_MAX_TIERS 8

struct fg_compaction_tier {
	uint64_t age_ns;   /* groups whose files are all at least this old... */
	uint64_t width_ns; /* ...become one file per multiple of this (> 0) */
};

struct fg_compaction_policy {
	struct fg_compaction_tier tiers[FG_COMPACTION_MAX_TIERS]; /* the first n_tiers */
	size_t n_tiers;                                           /* 0: no merging */
	uint64_t keep_ns; /* files that ended this long ago are deleted; 0: none are */
};

/*
 * 0 for a usable policy; -EINVAL with *ret_why (a static string) when ages
 * or widths do not increase, a width is zero or not a multiple of the one
 * before, or keep_ns is not past the last tier's age.
 */
int fg_compaction_policy_check(const struct fg_compaction_policy *p, const char **ret_why);

enum fg_compaction_fate {
	FG_COMPACTION_KEEP,     /* stays as it is, for now */
	FG_COMPACTION_LEFTOVER, /* within another file's span: delete, never read */
	FG_COMPACTION_EXPIRED,  /* ended keep_ns ago or earlier: delete */
	FG_COMPACTION_MERGE, /* a source of groups[group]: delete once the merged file is stored */
};

struct fg_compaction_file {
	uint64_t start, end;          /* in: the file's span, ns since the epoch, start <= end */
	enum fg_compaction_fate fate; /* out */
	uint32_t group;               /* out: for FG_COMPACTION_MERGE, an index into the groups */
};

struct fg_compaction_group {
	uint64_t start, end; /* the merged file's span: its sources' first start to last end */
	uint32_t tier;       /* index into the policy's tiers */
	uint32_t n_files;    /* sources, at least 2 */
};

/*
 * Sets the fate of every file that lies within another's span to
 * FG_COMPACTION_LEFTOVER and of every other file to FG_COMPACTION_KEEP
 * (of two files with the same span, the second is the leftover). files
 * must be sorted by start, then end. Returns the number of leftovers.
 */
size_t fg_compaction_leftovers(struct fg_compaction_file *files, size_t n);

/*
 * The plan for files[0..n) (sorted by start, then end, as their names sort)
 * at now_ns: each file's fate, and the groups to merge, oldest first, in
 * ret_groups, which must have room for n / 2 groups. Nothing ending after
 * horizon_ns is merged, whatever its age (UINT64_MAX: no such limit): the
 * caller may hold that time elsewhere, as fgd's window in memory does.
 * Returns the number of groups, or -EINVAL (files not sorted, or a policy
 * that fails fg_compaction_policy_check()), leaving everything untouched.
 */
int fg_compaction_plan(struct fg_compaction_file *files, size_t n, uint64_t now_ns,
		       uint64_t horizon_ns, const struct fg_compaction_policy *p,
		       struct fg_compaction_group *ret_groups);
