/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/outbuf.h"
#include "profile/procframe.h"
#include "profile/speedscope.h"

#define NO_FRAME UINT32_MAX
#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* A stack, and the root frames that say which profile it is in. */
struct entry {
	uint32_t cgroup, process; /* name ids; NO_FRAME: none */
	uint32_t stack;           /* its position in the model's sorted order */
	uint32_t skip;            /* root frames left out of its sample */
};

struct profile {
	size_t first, n; /* its entries */
	double total;
	char *name; /* owned, NUL-terminated */
};

struct conv {
	const struct fg_folded *model;
	const struct fg_speedscope_meta *meta;
	struct entry *entries; /* owned: one per stack, grouped by profile */
	size_t n_entries;
	struct profile *profiles; /* owned */
	size_t n_profiles;
	uint32_t *frame_of; /* owned: per name id, its frame index; NO_FRAME until used */
	uint32_t *frames;   /* owned: the name id of each frame index */
	size_t n_frames;
	struct fg_outbuf out;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->cgroup != y->cgroup)
		return x->cgroup < y->cgroup ? -1 : 1;
	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Heaviest first; ties by name, then by root frames, so the order never depends on qsort's. */
static int cmp_profile(const void *a, const void *b, void *arg)
{
	const struct profile *x = a, *y = b;
	const struct entry *entries = arg;
	int r;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	r = strcmp(x->name, y->name);
	if (r != 0)
		return r;
	return cmp_entry(&entries[x->first], &entries[y->first]);
}

/* Which profile each stack is in: its root frames, as the meta says what they are. */
static int classify(struct conv *c)
{
	const struct fg_speedscope_meta *meta = c->meta;
	size_t roots = meta->roots == FG_SPEEDSCOPE_ROOTS_CGROUP_PROCESS ? 2 :
		       meta->roots == FG_SPEEDSCOPE_ROOTS_PROCESS        ? 1 :
									   0;

	c->n_entries = fg_folded__n_stacks(c->model);
	c->entries = calloc(MAX(c->n_entries, (size_t)1), sizeof(*c->entries));
	if (!c->entries)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_entries; i++) {
		struct entry *e = &c->entries[i];
		struct fg_stack st;

		fg_folded__stack(c->model, i, &st);
		*e = (struct entry){ .cgroup = NO_FRAME,
				     .process = NO_FRAME,
				     .stack = (uint32_t)i };
		/* A stack of root frames alone keeps its last as a frame, and names its profile. */
		e->skip = (uint32_t)MIN(roots, st.n_frames - 1);
		if (roots > 0 && e->skip == 0)
			e->process = st.frames[0];
		else if (e->skip == 2) {
			e->cgroup = st.frames[0];
			e->process = st.frames[1];
		} else if (e->skip == 1 && roots == 2)
			e->cgroup = st.frames[0];
		else if (e->skip == 1)
			e->process = st.frames[0];
	}
	qsort(c->entries, c->n_entries, sizeof(*c->entries), cmp_entry);
	return 0;
}

/* "comm (pid N, tid M) in CGROUP", or the file's name for stacks without roots. */
static int profile_name(struct conv *c, const struct entry *e, char **ret)
{
	const struct fg_folded *m = c->model;
	struct fg_outbuf b = {};
	struct fg_procframe pp;

	if (e->process != NO_FRAME) {
		const char *name = fg_folded__name(m, e->process);

		fg_procframe_split(name, fg_folded__name_len(m, e->process), c->meta->pid,
				   c->meta->tid, &pp);
		fg_outbuf_put(&b, name, pp.comm_len);
		if (pp.pid) {
			fg_outbuf_puts(&b, " (pid ");
			fg_outbuf_put(&b, pp.pid, pp.pid_len);
			if (pp.tid) {
				fg_outbuf_puts(&b, ", tid ");
				fg_outbuf_put(&b, pp.tid, pp.tid_len);
			}
			fg_outbuf_puts(&b, ")");
		}
	}
	if (e->cgroup != NO_FRAME) {
		if (e->process != NO_FRAME)
			fg_outbuf_puts(&b, " in ");
		fg_outbuf_put(&b, fg_folded__name(m, e->cgroup), fg_folded__name_len(m, e->cgroup));
	}
	if (e->process == NO_FRAME && e->cgroup == NO_FRAME)
		fg_outbuf_puts(&b, c->meta->name ? c->meta->name : "fgd");
	fg_outbuf_put(&b, "", 1);
	if (b.err < 0) {
		fg_outbuf_done(&b);
		return b.err;
	}
	*ret = TAKE_PTR(b.data);
	return 0;
}

/* The profiles: runs of entries with the same root frames, heaviest first. */
static int group(struct conv *c)
{
	struct fg_stack st;
	int err;

	c->profiles = calloc(MAX(c->n_entries, (size_t)1), sizeof(*c->profiles));
	if (!c->profiles)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_entries; i++) {
		const struct entry *e = &c->entries[i];
		struct profile *p;

		if (i == 0 || e->cgroup != e[-1].cgroup || e->process != e[-1].process) {
			c->profiles[c->n_profiles++] = (struct profile){ .first = i };
			err = profile_name(c, e, &c->profiles[c->n_profiles - 1].name);
			if (err < 0)
				return err;
		}
		p = &c->profiles[c->n_profiles - 1];
		fg_folded__stack(c->model, e->stack, &st);
		p->n++;
		p->total += st.count;
	}
	if (c->n_profiles == 0) {
		/* Nothing sampled is still a file speedscope opens: one empty profile. */
		c->n_profiles = 1;
		return profile_name(c, &(struct entry){ .cgroup = NO_FRAME, .process = NO_FRAME },
				    &c->profiles[0].name);
	}
	qsort_r(c->profiles, c->n_profiles, sizeof(*c->profiles), cmp_profile, c->entries);
	return 0;
}

/* Frame indices in the order the profiles use them: the same model, the same file. */
static int number_frames(struct conv *c)
{
	size_t n_names = fg_folded__n_names(c->model);
	struct fg_stack st;

	c->frame_of = malloc(MAX(n_names, (size_t)1) * sizeof(*c->frame_of));
	c->frames = malloc(MAX(n_names, (size_t)1) * sizeof(*c->frames));
	if (!c->frame_of || !c->frames)
		return -ENOMEM;
	memset(c->frame_of, 0xff, n_names * sizeof(*c->frame_of));
	for (size_t p = 0; p < c->n_profiles; p++)
		for (size_t i = 0; i < c->profiles[p].n; i++) {
			const struct entry *e = &c->entries[c->profiles[p].first + i];

			fg_folded__stack(c->model, e->stack, &st);
			for (size_t k = e->skip; k < st.n_frames; k++)
				if (c->frame_of[st.frames[k]] == NO_FRAME) {
					c->frame_of[st.frames[k]] = (uint32_t)c->n_frames;
					c->frames[c->n_frames++] = st.frames[k];
				}
		}
	return 0;
}

static void put_number(struct fg_outbuf *b, double v)
{
	char num[400]; /* DBL_MAX has 309 digits */

	fg_outbuf_put(b, num, fg_format_count(v, num, sizeof(num)));
}

static void put_profile(struct conv *c, const struct profile *p)
{
	struct fg_outbuf *b = &c->out;
	struct fg_stack st;

	fg_outbuf_puts(b, "{\"type\":\"sampled\",\"name\":");
	fg_outbuf_put_json_str(b, p->name, strlen(p->name));
	fg_outbuf_printf(b, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":",
			 c->meta->unit == FG_SPEEDSCOPE_MICROSECONDS ? "microseconds" : "none");
	put_number(b, p->total);
	fg_outbuf_puts(b, ",\"samples\":[");
	for (size_t i = 0; i < p->n; i++) {
		const struct entry *e = &c->entries[p->first + i];

		fg_folded__stack(c->model, e->stack, &st);
		fg_outbuf_puts(b, i ? ",[" : "[");
		for (size_t k = e->skip; k < st.n_frames; k++)
			fg_outbuf_printf(b, k > e->skip ? ",%u" : "%u", c->frame_of[st.frames[k]]);
		fg_outbuf_puts(b, "]");
	}
	fg_outbuf_puts(b, "],\"weights\":[");
	for (size_t i = 0; i < p->n; i++) {
		fg_folded__stack(c->model, c->entries[p->first + i].stack, &st);
		if (i)
			fg_outbuf_puts(b, ",");
		put_number(b, st.count);
	}
	fg_outbuf_puts(b, "]}");
}

static void put_file(struct conv *c)
{
	struct fg_outbuf *b = &c->out;
	const char *name = c->meta->name ? c->meta->name : "fgd";

	fg_outbuf_puts(b, "{\"$schema\":\"" SCHEMA "\",\"shared\":{\"frames\":[");
	for (size_t i = 0; i < c->n_frames; i++) {
		fg_outbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
		fg_outbuf_put_json_str(b, fg_folded__name(c->model, c->frames[i]),
				       fg_folded__name_len(c->model, c->frames[i]));
		fg_outbuf_puts(b, "}");
	}
	fg_outbuf_puts(b, "]},\n\"profiles\":[");
	for (size_t p = 0; p < c->n_profiles; p++) {
		if (p)
			fg_outbuf_puts(b, ",\n");
		put_profile(c, &c->profiles[p]);
	}
	fg_outbuf_puts(b, "],\n\"name\":");
	fg_outbuf_put_json_str(b, name, strlen(name));
	fg_outbuf_puts(b, ",\"activeProfileIndex\":0,\"exporter\":\"fgd\"}\n");
	/* The NUL, for readers that want a string; not counted in the length. */
	fg_outbuf_put(b, "", 1);
}

int fg_speedscope_from_model(const struct fg_folded *model, const struct fg_speedscope_meta *meta,
			     char **ret, size_t *ret_len)
{
	struct conv c = { .model = model, .meta = meta };
	int err;

	if (fg_folded__is_diff(model))
		return -EINVAL;
	err = classify(&c);
	if (err >= 0)
		err = group(&c);
	if (err >= 0)
		err = number_frames(&c);
	if (err >= 0) {
		put_file(&c);
		err = c.out.err;
	}
	if (err >= 0) {
		*ret_len = c.out.used - 1;
		*ret = TAKE_PTR(c.out.data);
	}
	fg_outbuf_done(&c.out);
	for (size_t i = 0; c.profiles && i < c.n_profiles; i++)
		free(c.profiles[i].name);
	free(c.profiles);
	free(c.entries);
	free(c.frame_of);
	free(c.frames);
	return err;
}
