/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "base/strpool.h"
#include "profile/framename.h"
#include "profile/top.h"

struct proc {
	pid_t pid;
	uid_t uid;
	uint64_t start_time;
	uint32_t comm; /* name id */
	uint64_t samples;
	double cpu_seconds;
};

struct pair {
	uint32_t proc, leaf; /* indexes into procs, name ids */
	uint64_t count;
};

struct fg_top {
	size_t max_processes, max_leaves;
	uint32_t default_frequency;
	struct fg_strpool *names; /* owned: comms and leaves */
	struct proc *procs;       /* owned */
	size_t n_procs, cap_procs;
	struct fg_idxmap proc_index;
	struct pair *pairs; /* owned */
	size_t n_pairs, cap_pairs;
	struct fg_idxmap pair_index;
	struct fg_top_entry *list; /* owned: the last fg_top__list() */
	size_t cap_list;
	struct fg_view view;
	char *clean; /* owned: a name's clean form, while it is interned */
	size_t cap_clean;
	uint64_t dropped_samples, dropped_leaf_samples;
};

int fg_top__new(size_t max_processes, size_t max_leaves, uint32_t default_frequency,
		const struct fg_view *view, struct fg_top **ret)
{
	struct fg_top *t;

	/* Ids and indexes are 32-bit. */
	if (max_processes == 0 || max_leaves == 0 || max_processes >= UINT32_MAX ||
	    max_leaves >= UINT32_MAX || default_frequency == 0)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->names = fg_strpool__new();
	if (!t->names) {
		free(t);
		return -ENOMEM;
	}
	t->max_processes = max_processes;
	t->max_leaves = max_leaves;
	t->default_frequency = default_frequency;
	t->view = *view;
	*ret = t;
	return 0;
}

struct fg_top *fg_top__free(struct fg_top *t)
{
	if (!t)
		return NULL;
	fg_strpool__free(t->names);
	free(t->procs);
	fg_idxmap_done(&t->proc_index);
	free(t->pairs);
	fg_idxmap_done(&t->pair_index);
	free(t->list);
	free(t->clean);
	free(t);
	return NULL;
}

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct proc *a = &((const struct fg_top *)ctx)->procs[idx];
	const struct fg_top_process *b = key;

	return a->pid == b->pid && a->start_time == b->start_time;
}

static bool pair_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct pair *a = &((const struct fg_top *)ctx)->pairs[idx], *b = key;

	return a->proc == b->proc && a->leaf == b->leaf;
}

/* Names are kept clean (framename.h): only one not held yet is checked, and cleaned if it must be. */
static int intern(struct fg_top *t, const char *s, size_t len, uint32_t *ret)
{
	int64_t id;
	int r;

	len = strnlen(s, len);
	id = fg_strpool__find(t->names, s, len);
	if (id >= 0) {
		*ret = (uint32_t)id;
		return 0;
	}
	if (!fg_framename_is_clean(s, len)) {
		r = fg_framename_clean(s, len, &t->clean, &t->cap_clean, &len);
		if (r < 0)
			return r;
		s = t->clean;
	}
	r = fg_strpool__intern(t->names, s, len, ret);
	return r < 0 ? r : 0;
}

/* The process's index; -ENOSPC past the cap. */
static int64_t find_proc(struct fg_top *t, const struct fg_top_process *p)
{
	const char *comm = p->comm ? p->comm : "[unknown]";
	uint64_t h = fg_hash_combine(fg_hash_mix((uint64_t)(uint32_t)p->pid), p->start_time);
	int64_t i = fg_idxmap_find(&t->proc_index, h, proc_eq, t, p);
	uint32_t id;
	int r;

	if (i >= 0) {
		/* The latest name wins: a process renames itself, or execs. */
		id = t->procs[i].comm;
		if (!fg_strpool__is(t->names, id, comm, strlen(comm))) {
			r = intern(t, comm, strlen(comm), &id);
			if (r < 0)
				return r;
			t->procs[i].comm = id;
		}
		return i;
	}
	if (t->n_procs >= t->max_processes)
		return -ENOSPC;
	r = intern(t, comm, strlen(comm), &id);
	if (r >= 0)
		r = FG_GROW(t->procs, t->cap_procs, t->n_procs + 1);
	if (r >= 0)
		r = fg_idxmap_insert(&t->proc_index, h, (uint32_t)t->n_procs);
	if (r < 0)
		return r;
	t->procs[t->n_procs] = (struct proc){
		.pid = p->pid, .uid = p->uid, .start_time = p->start_time, .comm = id
	};
	return (int64_t)t->n_procs++;
}

int fg_top__add(struct fg_top *t, const struct fg_top_process *p, const char *leaf, size_t leaf_len,
		uint64_t count)
{
	struct pair key = {};
	int64_t i;
	uint64_t h;
	int r;

	if (count == 0)
		return 0;
	i = find_proc(t, p);
	if (i == -ENOSPC) {
		t->dropped_samples += count;
		return 0;
	}
	if (i < 0)
		return (int)i;
	t->procs[i].samples += count;
	t->procs[i].cpu_seconds +=
		(double)count / (p->frequency ? p->frequency : t->default_frequency);
	if (!leaf)
		return 0;
	key.proc = (uint32_t)i;
	/* The leaf as the view shows it: a hidden kernel leaf is the run of kernel frames it ends. */
	leaf = fg_view_frame(&t->view, leaf, strnlen(leaf, leaf_len), &leaf_len);
	r = intern(t, leaf, leaf_len, &key.leaf);
	if (r < 0)
		return r;
	h = fg_hash_combine(fg_hash_mix(key.proc), key.leaf);
	i = fg_idxmap_find(&t->pair_index, h, pair_eq, t, &key);
	if (i >= 0) {
		t->pairs[i].count += count;
		return 0;
	}
	if (t->n_pairs >= t->max_leaves) {
		t->dropped_leaf_samples += count;
		return 0;
	}
	r = FG_GROW(t->pairs, t->cap_pairs, t->n_pairs + 1);
	if (r >= 0)
		r = fg_idxmap_insert(&t->pair_index, h, (uint32_t)t->n_pairs);
	if (r < 0)
		return r;
	key.count = count;
	t->pairs[t->n_pairs++] = key;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct fg_top_entry *x = a, *y = b;

	if (x->cpu_seconds != y->cpu_seconds)
		return x->cpu_seconds > y->cpu_seconds ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start_time < y->start_time ? -1 : x->start_time > y->start_time;
}

int fg_top__list(struct fg_top *t, const struct fg_top_entry **ret, size_t *ret_n)
{
	int r = FG_GROW(t->list, t->cap_list, t->n_procs + 1);

	if (r < 0)
		return r;
	for (size_t i = 0; i < t->n_procs; i++) {
		const struct proc *p = &t->procs[i];

		t->list[i] = (struct fg_top_entry){
			.pid = p->pid,
			.start_time = p->start_time,
			.uid = p->uid,
			.comm = fg_strpool__str(t->names, p->comm),
			.samples = p->samples,
			.cpu_seconds = p->cpu_seconds,
		};
	}
	/* Entry i is still process i here: the hottest leaf of each, from the summed counts. */
	for (size_t i = 0; i < t->n_pairs; i++) {
		const struct pair *q = &t->pairs[i];
		struct fg_top_entry *e = &t->list[q->proc];
		const char *name = fg_strpool__str(t->names, q->leaf);

		if (q->count > e->leaf_samples ||
		    (q->count == e->leaf_samples && strcmp(name, e->leaf) < 0)) {
			e->leaf = name;
			e->leaf_samples = q->count;
		}
	}
	if (t->n_procs > 1)
		qsort(t->list, t->n_procs, sizeof(*t->list), entry_cmp);
	*ret = t->list;
	*ret_n = t->n_procs;
	return 0;
}

void fg_top__stats(const struct fg_top *t, struct fg_top_stats *ret)
{
	*ret = (struct fg_top_stats){
		.processes = t->n_procs,
		.leaves = t->n_pairs,
		.dropped_samples = t->dropped_samples,
		.dropped_leaf_samples = t->dropped_leaf_samples,
	};
}
