/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "profile/framename.h"
#include "profile/transform.h"
#include "profile/view.h"

/*
 * What is known about one input name, filled in the first time a stack
 * holds it: the answer for a name never changes, and inputs have far fewer
 * names than frames.
 */
enum {
	NAME_IDLE_KNOWN = 1 << 0,
	NAME_IDLE_ROOT = 1 << 1, /* the idle task, as a root frame */
	NAME_IDLE_FN = 1 << 2,   /* a kernel idle function */
	NAME_INC_KNOWN = 1 << 3,
	NAME_INC_MATCH = 1 << 4,
	NAME_EXC_KNOWN = 1 << 5,
	NAME_EXC_MATCH = 1 << 6,
	NAME_FOCUS = 1 << 7, /* the --focus frame */
};

struct regex {
	regex_t re;
	bool compiled;
};

static void regex_done(struct regex *r)
{
	if (r->compiled)
		regfree(&r->re);
	r->compiled = false;
}

struct transform {
	const struct fg_folded *in;           /* borrowed for the call */
	struct fg_folded *out;                /* owned until handed to the caller */
	const struct fg_transform_opts *opts; /* borrowed for the call */
	uint8_t *names;                       /* owned; NAME_* flags by input name id */
	uint32_t *map;     /* owned; input name id -> output id, UINT32_MAX unset */
	uint32_t *scratch; /* owned; frames of the stack being built */
	size_t cap_scratch;
	struct regex include, exclude;
	/*
	 * With stackcollapse_names: input name id -> output id of its
	 * stackcollapse form, in stacks of java processes ([1]) and of others
	 * ([0]); owned, UINT32_MAX unset.
	 */
	uint32_t *tidy_map[2];
	char *tidy_buf; /* owned; the name being rewritten */
	size_t tidy_cap;
};

static void transform_done(struct transform *t)
{
	fg_folded__free(t->out);
	free(t->names);
	free(t->map);
	free(t->scratch);
	free(t->tidy_map[0]);
	free(t->tidy_map[1]);
	free(t->tidy_buf);
	regex_done(&t->include);
	regex_done(&t->exclude);
}

static int regex_compile(struct regex *r, const char *pattern, bool ignore_case, char *err,
			 size_t err_size)
{
	int rc = regcomp(&r->re, pattern, REG_EXTENDED | REG_NOSUB | (ignore_case ? REG_ICASE : 0));

	if (rc == REG_ESPACE)
		return -ENOMEM;
	if (rc != 0) {
		if (err && err_size > 0)
			regerror(rc, &r->re, err, err_size);
		return -EINVAL; /* regcomp() released what it built */
	}
	r->compiled = true;
	return 0;
}

/* 1 when the name matches, 0 when it does not, or -ENOMEM. */
static int regex_match(const struct regex *r, const char *s, size_t len)
{
	/* REG_STARTEND: the whole name, even past a NUL byte read from text. */
	regmatch_t m = { .rm_so = 0, .rm_eo = (regoff_t)len };
	int rc = regexec(&r->re, s, 1, &m, REG_STARTEND);

	if (rc == 0)
		return 1;
	return rc == REG_NOMATCH ? 0 : -ENOMEM;
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(s, prefix, n) == 0;
}

static bool is_idle_root(const char *s, size_t len)
{
	size_t i = strlen("swapper");

	if (!has_prefix(s, len, "swapper"))
		return false;
	/* Per-CPU idle tasks are "swapper/N". */
	if (i < len && s[i] == '/') {
		size_t digits = ++i;

		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == digits)
			return false;
	}
	if (i == len)
		return true;
	/* "-PID" and "-PID/TID": the idle task is pid 0, tid 0. */
	if (len - i == 2 && memcmp(s + i, "-0", 2) == 0)
		return true;
	return len - i == 4 && memcmp(s + i, "-0/0", 4) == 0;
}

static bool is_idle_function(const char *s, size_t len)
{
	static const char *const exact[] = {
		"do_idle",          "cpu_idle_poll",       "cpu_startup_entry",
		"native_safe_halt", "pv_native_safe_halt", "arch_cpu_idle",
		"cpu_do_idle",      "mwait_idle",          "poll_idle",
		"cpu_idle",         "cpu_idle_loop",
	};
	static const char *const prefix[] = {
		"cpuidle_enter",
		"default_idle",
		"acpi_idle",
		"intel_idle",
	};
	const char *dot;

	if (len >= 4 && memcmp(s + len - 4, "_[k]", 4) == 0)
		len -= 4;
	/* GCC clones: cpu_idle_poll.isra.0, intel_idle.constprop.0. */
	dot = memchr(s, '.', len);
	if (dot && dot > s)
		len = (size_t)(dot - s);
	for (size_t i = 0; i < ELEMENTSOF(exact); i++)
		if (strlen(exact[i]) == len && memcmp(s, exact[i], len) == 0)
			return true;
	for (size_t i = 0; i < ELEMENTSOF(prefix); i++)
		if (has_prefix(s, len, prefix[i]))
			return true;
	return false;
}

static uint8_t idle_flags(struct transform *t, uint32_t id)
{
	if (!(t->names[id] & NAME_IDLE_KNOWN)) {
		const char *s = fg_folded__name(t->in, id);
		size_t len = fg_folded__name_len(t->in, id);

		t->names[id] |= NAME_IDLE_KNOWN;
		if (is_idle_root(s, len))
			t->names[id] |= NAME_IDLE_ROOT;
		if (is_idle_function(s, len))
			t->names[id] |= NAME_IDLE_FN;
	}
	return t->names[id];
}

static bool stack_is_idle(struct transform *t, const struct fg_stack *s)
{
	if (idle_flags(t, s->frames[0]) & NAME_IDLE_ROOT)
		return true;
	for (size_t i = 0; i < s->n_frames; i++)
		if (idle_flags(t, s->frames[i]) & NAME_IDLE_FN)
			return true;
	return false;
}

/* 1 when some frame of s matches r, 0 when none does, or -ENOMEM. */
static int stack_matches(struct transform *t, const struct fg_stack *s, const struct regex *r,
			 uint8_t known, uint8_t match)
{
	for (size_t i = 0; i < s->n_frames; i++) {
		uint32_t id = s->frames[i];

		if (!(t->names[id] & known)) {
			const char *name = fg_folded__name(t->in, id);
			size_t len = fg_folded__name_len(t->in, id);
			size_t plain = fg_name_display_len(name, len);
			int m = regex_match(r, name, len);

			/* A frame matches by its plain name too: do_syscall_64 for do_syscall_64_[k]. */
			if (m == 0 && plain < len)
				m = regex_match(r, name, plain);
			if (m < 0)
				return m;
			t->names[id] |= known | (m ? match : 0);
		}
		if (t->names[id] & match)
			return 1;
	}
	return 0;
}

/* 1 when s is kept, 0 when dropped, or a negative errno; *ret_start: the frame to re-root at. */
static int keep_stack(struct transform *t, const struct fg_stack *s, size_t *ret_start)
{
	const struct fg_transform_opts *o = t->opts;
	int r;

	*ret_start = 0;
	if (o->no_idle && stack_is_idle(t, s))
		return 0;
	if (t->include.compiled) {
		r = stack_matches(t, s, &t->include, NAME_INC_KNOWN, NAME_INC_MATCH);
		if (r <= 0)
			return r;
	}
	if (t->exclude.compiled) {
		r = stack_matches(t, s, &t->exclude, NAME_EXC_KNOWN, NAME_EXC_MATCH);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	if (o->focus) {
		size_t i = 0;

		while (i < s->n_frames && !(t->names[s->frames[i]] & NAME_FOCUS))
			i++;
		if (i == s->n_frames)
			return 0;
		*ret_start = i;
	}
	return 1;
}

static int map_name(struct transform *t, uint32_t id, uint32_t *ret)
{
	if (t->map[id] == UINT32_MAX) {
		int r = fg_folded__intern(t->out, fg_folded__name(t->in, id),
					  fg_folded__name_len(t->in, id), &t->map[id]);

		if (r < 0)
			return r;
	}
	*ret = t->map[id];
	return 0;
}

/*
 * The output id of the frame id at index i of its stack: its name, or below
 * the root frames with stackcollapse_names, that name as the script tidies
 * it (fg_framename_tidy()), its annotation kept.
 */
static int map_frame(struct transform *t, uint32_t id, size_t i, bool java, uint32_t *ret)
{
	uint32_t *map = t->tidy_map[java];

	if (!t->opts->stackcollapse_names || i < t->opts->roots)
		return map_name(t, id, ret);
	if (map[id] == UINT32_MAX) {
		const char *name = fg_folded__name(t->in, id);
		size_t len = fg_folded__name_len(t->in, id), plain = fg_name_display_len(name, len);
		size_t n;
		int r = FG_GROW(t->tidy_buf, t->tidy_cap, MAX(len, (size_t)1));

		if (r < 0)
			return r;
		memcpy(t->tidy_buf, name, len);
		n = fg_framename_tidy(t->tidy_buf, plain, java);
		memmove(t->tidy_buf + n, t->tidy_buf + plain, len - plain);
		r = fg_folded__intern(t->out, t->tidy_buf, n + len - plain, &map[id]);
		if (r < 0)
			return r;
	}
	*ret = map[id];
	return 0;
}

/* The script's test for Java's names: the process frame's name starts with "java". */
static bool is_java_stack(const struct transform *t, const struct fg_stack *s)
{
	return s->n_frames > 0 && t->opts->roots > 0 &&
	       has_prefix(fg_folded__name(t->in, s->frames[0]),
			  fg_folded__name_len(t->in, s->frames[0]), "java");
}

/* Whether the frame at index i of its stack stays under user_only or kernel_only. */
static bool keep_frame(const struct transform *t, uint32_t id, size_t i)
{
	const struct fg_transform_opts *o = t->opts;
	bool kernel;

	if ((!o->user_only && !o->kernel_only) || i < o->roots)
		return true;
	/* An unprivileged client's kernel is one [kernel] frame: kernel too. */
	kernel =
		fg_frame_is_kernel_seen(fg_folded__name(t->in, id), fg_folded__name_len(t->in, id));
	return o->user_only ? !kernel : kernel;
}

/* Adds the kept part of s; 1 when added, 0 when nothing of it was left. */
static int add_kept(struct transform *t, const struct fg_stack *s, size_t start)
{
	bool java = is_java_stack(t, s);
	size_t n = 0;
	int r;

	r = FG_GROW(t->scratch, t->cap_scratch, s->n_frames - start);
	if (r < 0)
		return r;
	for (size_t i = start; i < s->n_frames; i++) {
		uint32_t id;

		if (!keep_frame(t, s->frames[i], i))
			continue;
		r = map_frame(t, s->frames[i], i, java, &id);
		if (r < 0)
			return r;
		/* Names are interned one to one: equal output ids are equal frames. */
		if (t->opts->collapse_recursion && n > 0 && t->scratch[n - 1] == id)
			continue;
		t->scratch[n++] = id;
	}
	/* Nothing of the side asked for: not even a root to draw it under. */
	if (n == 0)
		return 0;
	if (t->opts->reverse)
		for (size_t i = 0; i < n / 2; i++) {
			uint32_t x = t->scratch[i];

			t->scratch[i] = t->scratch[n - 1 - i];
			t->scratch[n - 1 - i] = x;
		}
	if (fg_folded__is_diff(t->in))
		r = fg_folded__add_pair(t->out, t->scratch, n, s->before, s->count);
	else
		r = fg_folded__add(t->out, t->scratch, n, s->count);
	return r < 0 ? r : 1;
}

/*
 * Marks the names --focus means: the one spelled so, and the annotated
 * ones whose plain name it is (do_syscall_64 means do_syscall_64_[k]).
 */
static void mark_focus(struct transform *t, const char *focus)
{
	size_t len = strlen(focus), n = fg_folded__n_names(t->in);

	for (size_t id = 0; id < n; id++) {
		const char *name = fg_folded__name(t->in, (uint32_t)id);
		size_t name_len = fg_folded__name_len(t->in, (uint32_t)id);

		if ((name_len == len || fg_name_display_len(name, name_len) == len) &&
		    memcmp(name, focus, len) == 0)
			t->names[id] |= NAME_FOCUS;
	}
}

int fg_transform(const struct fg_folded *in, const struct fg_transform_opts *opts,
		 struct fg_folded **ret_out, struct fg_transform_stats *ret_stats, char *err,
		 size_t err_size)
{
	static const struct fg_transform_opts none = { 0 };
	_cleanup_(transform_done) struct transform t = { .in = in, .opts = opts ? opts : &none };
	struct fg_transform_stats stats = { 0 };
	size_t n_names = fg_folded__n_names(in);
	int r;

	opts = t.opts;
	if (opts->user_only && opts->kernel_only) {
		if (err && err_size > 0)
			snprintf(err, err_size, "user-only and kernel-only exclude each other");
		return -EINVAL;
	}
	if (opts->include) {
		r = regex_compile(&t.include, opts->include, opts->ignore_case, err, err_size);
		if (r < 0)
			return r;
	}
	if (opts->exclude) {
		r = regex_compile(&t.exclude, opts->exclude, opts->ignore_case, err, err_size);
		if (r < 0)
			return r;
	}
	t.out = fg_folded__new();
	t.names = calloc(MAX(n_names, (size_t)1), sizeof(*t.names));
	t.map = malloc(MAX(n_names, (size_t)1) * sizeof(*t.map));
	if (!t.out || !t.names || !t.map)
		return -ENOMEM;
	if (opts->focus)
		mark_focus(&t, opts->focus);
	memset(t.map, 0xff, n_names * sizeof(*t.map));
	for (size_t k = 0; opts->stackcollapse_names && k < ELEMENTSOF(t.tidy_map); k++) {
		t.tidy_map[k] = malloc(MAX(n_names, (size_t)1) * sizeof(*t.tidy_map[k]));
		if (!t.tidy_map[k])
			return -ENOMEM;
		memset(t.tidy_map[k], 0xff, n_names * sizeof(*t.tidy_map[k]));
	}
	if (fg_folded__is_diff(in))
		fg_folded__mark_diff(t.out);
	/* A flame chart stays a sequence: stacks keep their order, neighbours merge. */
	if (fg_folded__is_sequence(in))
		fg_folded__set_sequence(t.out);

	for (size_t i = 0; i < fg_folded__n_stacks(in); i++) {
		struct fg_stack s;
		size_t start;

		fg_folded__stack(in, i, &s);
		r = keep_stack(&t, &s, &start);
		if (r < 0)
			return r;
		if (r == 0) {
			stats.dropped += s.count;
			stats.stacks_dropped++;
			continue;
		}
		r = add_kept(&t, &s, start);
		if (r < 0)
			return r;
		if (r == 0) {
			stats.dropped += s.count;
			stats.stacks_dropped++;
			continue;
		}
		stats.kept += s.count;
		stats.stacks_kept++;
	}

	*ret_out = TAKE_PTR(t.out);
	if (ret_stats)
		*ret_stats = stats;
	return 0;
}

/*
 * Adds every stack of from to out as the before or the after side of a pair,
 * its counts scaled so that they sum to to_total unless that is 0.
 */
static int merge_side(struct fg_folded *out, const struct fg_folded *from, bool as_before,
		      double to_total)
{
	size_t n_names = fg_folded__n_names(from);
	_cleanup_free_ uint32_t *map = malloc(MAX(n_names, (size_t)1) * sizeof(*map));
	_cleanup_free_ uint32_t *scratch = NULL;
	size_t cap_scratch = 0;
	double total = fg_folded__total(from);
	int r;

	if (!map)
		return -ENOMEM;
	/* Interning every name up front is cheaper than a check per frame. */
	for (size_t id = 0; id < n_names; id++) {
		r = fg_folded__intern(out, fg_folded__name(from, (uint32_t)id),
				      fg_folded__name_len(from, (uint32_t)id), &map[id]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < fg_folded__n_stacks(from); i++) {
		struct fg_stack s;
		double c;

		fg_folded__stack(from, i, &s);
		r = FG_GROW(scratch, cap_scratch, s.n_frames);
		if (r < 0)
			return r;
		for (size_t j = 0; j < s.n_frames; j++)
			scratch[j] = map[s.frames[j]];
		c = s.count;
		/* count / total <= 1 first, so the product cannot overflow. */
		if (to_total > 0)
			c = MIN(c / total, 1.0) * to_total;
		r = fg_folded__add_pair(out, scratch, s.n_frames, as_before ? c : 0,
					as_before ? 0 : c);
		if (r < 0)
			return r;
	}
	return 0;
}

int fg_folded_diff(const struct fg_folded *before, const struct fg_folded *after, bool normalize,
		   struct fg_folded **ret_out)
{
	_cleanup_(fg_folded__freep) struct fg_folded *out = NULL;
	double tb = fg_folded__total(before), ta = fg_folded__total(after);
	double to_total = 0; /* the total before counts are scaled to; 0: as they are */
	int r;

	if (fg_folded__is_diff(before) || fg_folded__is_diff(after))
		return -EINVAL;
	if (normalize && tb > 0 && ta > 0) {
		if (!isfinite(tb) || !isfinite(ta))
			return -ERANGE;
		to_total = ta;
	}
	out = fg_folded__new();
	if (!out)
		return -ENOMEM;
	fg_folded__mark_diff(out);
	r = merge_side(out, before, true, to_total);
	if (r < 0)
		return r;
	r = merge_side(out, after, false, 0);
	if (r < 0)
		return r;
	*ret_out = TAKE_PTR(out);
	return 0;
}
