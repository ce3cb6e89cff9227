/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "profile/pprof-model.h"
#include "profile/pprof.h"
#include "profile/procframe.h"

#define KERNEL_SUFFIX "_[k]"
#define JIT_SUFFIX "_[j]"
#define SUFFIX_LEN 4

enum { MAP_NONE, MAP_KERNEL, MAP_JIT, _MAP_MAX };

struct conv {
	const struct fg_folded *model;
	const struct fg_pprof_meta *meta;
	struct fg_pprof *p;
	uint64_t *loc_of;          /* owned: per name id, its location id; 0 until seen */
	uint64_t map_of[_MAP_MAX]; /* the mappings made so far; 0 until needed */
	uint64_t unknown_loc;      /* "[unknown]", for samples without frames; 0 until needed */
	uint64_t *locs;            /* owned: one sample's location ids, leaf first */
	size_t cap_locs;
};

static bool has_suffix(const char *name, size_t len, const char *suffix)
{
	return len > SUFFIX_LEN && memcmp(name + len - SUFFIX_LEN, suffix, SUFFIX_LEN) == 0;
}

static int mapping(struct conv *c, int kind, uint64_t *ret)
{
	/* Names came with the frames: pprof must not look them up again. */
	struct fg_pprof_mapping m = {
		.filename = kind == MAP_KERNEL ? "[kernel.kallsyms]" : "[jit]",
		.has_functions = true,
	};
	int err = 0;

	if (!c->map_of[kind])
		err = fg_pprof__mapping(c->p, &m, &c->map_of[kind]);
	*ret = c->map_of[kind];
	return err;
}

/* The location of name id, made the first time it is seen. */
static int location(struct conv *c, uint32_t id, uint64_t *ret)
{
	const char *name = fg_folded__name(c->model, id);
	size_t len = fg_folded__name_len(c->model, id);
	int kind = has_suffix(name, len, KERNEL_SUFFIX) ? MAP_KERNEL :
		   has_suffix(name, len, JIT_SUFFIX)    ? MAP_JIT :
							  MAP_NONE;
	uint64_t map = 0, fn;
	int err;

	if (c->loc_of[id]) {
		*ret = c->loc_of[id];
		return 0;
	}
	if (c->meta->locate) {
		err = c->meta->locate(c->meta->locate_ctx, c->p, c->model, id, &c->loc_of[id]);
		*ret = c->loc_of[id];
		if (err != -ENOENT)
			return err;
	}
	if (kind != MAP_NONE) {
		len -= SUFFIX_LEN;
		err = mapping(c, kind, &map);
		if (err < 0)
			return err;
	}
	err = fg_pprof__function(c->p, name, len, NULL, NULL, &fn);
	if (err >= 0)
		err = fg_pprof__location(c->p, map, 0, &fn, 1, &c->loc_of[id]);
	*ret = c->loc_of[id];
	return err;
}

/* The "[unknown]" location of samples without frames, made the first time. */
static int unknown_location(struct conv *c, uint64_t *ret)
{
	uint64_t fn;
	int err = 0;

	if (!c->unknown_loc) {
		err = fg_pprof__function(c->p, "[unknown]", strlen("[unknown]"), NULL, NULL, &fn);
		if (err >= 0)
			err = fg_pprof__location(c->p, 0, 0, &fn, 1, &c->unknown_loc);
	}
	*ret = c->unknown_loc;
	return err;
}

struct process_labels {
	char comm[256], pid[16], tid[16];
};

/* A process frame's parts as label values ("" for a part not in it). */
static void split_process(const struct fg_pprof_meta *meta, const char *name, size_t len,
			  struct process_labels *ret)
{
	struct fg_procframe pf;

	fg_procframe_split(name, len, meta->pid, meta->tid, &pf);
	snprintf(ret->comm, sizeof(ret->comm), "%.*s", (int)MIN(pf.comm_len, sizeof(ret->comm) - 1),
		 name);
	snprintf(ret->pid, sizeof(ret->pid), "%.*s", (int)pf.pid_len, pf.pid ? pf.pid : "");
	snprintf(ret->tid, sizeof(ret->tid), "%.*s", (int)pf.tid_len, pf.tid ? pf.tid : "");
}

/* A value as pprof's int64, rounded; -E2BIG beyond it. */
static int to_int64(double v, int64_t *ret)
{
	if (!(v >= 0) || v >= 9.2e18)
		return -E2BIG;
	*ret = (int64_t)llround(v);
	return 0;
}

static int add_stack(struct conv *c, uint32_t sid)
{
	const struct fg_pprof_meta *meta = c->meta;
	struct fg_pprof_label labels[4];
	struct process_labels pl;
	struct fg_stack st;
	size_t roots = meta->roots == FG_PPROF_ROOTS_CGROUP_PROCESS ? 2 :
		       meta->roots == FG_PPROF_ROOTS_PROCESS        ? 1 :
								      0;
	size_t n_labels = 0, n;
	int64_t values[2];
	char cgroup[1024];
	int err;

	fg_folded__stack_by_id(c->model, sid, &st);
	/* The window's samples of no process: their one frame says so, and they have no labels. */
	if (st.n_frames < roots ||
	    (st.n_frames == 1 &&
	     strcmp(fg_folded__name(c->model, st.frames[0]), FG_PROCFRAME_OTHER) == 0))
		roots = 0;
	if (roots == 2) {
		snprintf(cgroup, sizeof(cgroup), "%s", fg_folded__name(c->model, st.frames[0]));
		labels[n_labels++] = (struct fg_pprof_label){ .key = "cgroup", .str = cgroup };
	}
	if (roots >= 1) {
		uint32_t id = st.frames[roots - 1];

		split_process(meta, fg_folded__name(c->model, id),
			      fg_folded__name_len(c->model, id), &pl);
		labels[n_labels++] = (struct fg_pprof_label){ .key = "comm", .str = pl.comm };
		if (pl.pid[0])
			labels[n_labels++] = (struct fg_pprof_label){ .key = "pid", .str = pl.pid };
		if (pl.tid[0])
			labels[n_labels++] =
				(struct fg_pprof_label){ .key = "thread_id", .str = pl.tid };
	}
	n = st.n_frames - roots;
	err = FG_GROW(c->locs, c->cap_locs, MAX(n, (size_t)1));
	if (err < 0)
		return err;
	for (size_t i = 0; i < n; i++) {
		err = location(c, st.frames[st.n_frames - 1 - i], &c->locs[i]);
		if (err < 0)
			return err;
	}
	/* A sample without frames (its roots alone): one frame, as perf names what it cannot. */
	if (n == 0) {
		err = unknown_location(c, &c->locs[n++]);
		if (err < 0)
			return err;
	}
	err = to_int64(st.count, &values[0]);
	if (err >= 0 && meta->values == FG_PPROF_SAMPLES && meta->period_ns)
		err = to_int64(st.count * (double)meta->period_ns, &values[1]);
	if (err < 0)
		return err;
	return fg_pprof__sample(c->p, c->locs, n, values, labels, n_labels);
}

static int header(struct conv *c)
{
	const struct fg_pprof_meta *meta = c->meta;
	struct fg_pprof *p = c->p;
	int err = 0;

	switch (meta->values) {
	case FG_PPROF_SAMPLES:
		err = fg_pprof__sample_type(p, "samples", "count");
		/* Without a period, what a sample stands for is not known: counts alone. */
		if (!meta->period_ns)
			break;
		if (err >= 0)
			err = fg_pprof__sample_type(p, "cpu", "nanoseconds");
		if (err >= 0)
			err = fg_pprof__default_type(p, "cpu");
		if (err >= 0)
			err = fg_pprof__period(p, "cpu", "nanoseconds",
					       (int64_t)MIN(meta->period_ns, (uint64_t)INT64_MAX));
		break;
	case FG_PPROF_OFF_CPU:
		err = fg_pprof__sample_type(p, "off_cpu", "microseconds");
		if (err >= 0)
			err = fg_pprof__period(p, "off_cpu", "microseconds", 1);
		break;
	case FG_PPROF_WALL:
		err = fg_pprof__sample_type(p, "wall", "microseconds");
		if (err >= 0)
			err = fg_pprof__period(p, "wall", "microseconds", 1);
		break;
	}
	fg_pprof__time(p, meta->time_ns, meta->duration_ns);
	for (size_t i = 0; err >= 0 && meta->comments && meta->comments[i]; i++)
		err = fg_pprof__comment(p, meta->comments[i]);
	return err;
}

int fg_pprof_from_model(const struct fg_folded *model, const struct fg_pprof_meta *meta,
			uint8_t **ret, size_t *ret_len)
{
	struct conv c = { .model = model, .meta = meta };
	size_t n_stacks = fg_folded__n_stacks(model);
	int err;

	if (fg_folded__is_diff(model))
		return -EINVAL;
	c.p = fg_pprof__new();
	c.loc_of = calloc(MAX(fg_folded__n_names(model), (size_t)1), sizeof(*c.loc_of));
	err = c.p && c.loc_of ? header(&c) : -ENOMEM;
	for (size_t i = 0; err >= 0 && i < n_stacks; i++)
		err = add_stack(&c, (uint32_t)i);
	if (err >= 0)
		err = fg_pprof__encode(c.p, true, ret, ret_len);
	fg_pprof__free(c.p);
	free(c.loc_of);
	free(c.locs);
	return err;
}
