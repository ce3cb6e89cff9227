/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "profile/timed.h"

/*
 * The largest part of a weight one sample carries: a whole number of ms in
 * µs, below 2^32, so that the parts of a long block end on whole ms.
 */
#define MAX_PART 4000000000ULL
/* The text form's version, in its header. */
#define TEXT_VERSION 1

struct fg_timed {
	enum fg_timed_unit unit;
	enum fg_timed_clock clock;
	struct fg_folded *model;   /* owned */
	struct fg_timed_sample *v; /* owned */
	size_t n, cap;
	uint64_t total;
	uint32_t max_weight;
	bool sorted;
	int64_t since, until; /* the period; both 0: none */
	/* Reading the text form: */
	bool has_header;
	int64_t last;       /* the time the next sample's delta counts from */
	uint32_t *text_ids; /* owned: the text's stack numbers to the model's ids */
	size_t n_text, cap_text;
};

int fg_timed__new(enum fg_timed_unit unit, enum fg_timed_clock clock, struct fg_timed **ret)
{
	struct fg_timed *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->model = fg_folded__new();
	if (!t->model) {
		free(t);
		return -ENOMEM;
	}
	t->unit = unit;
	t->clock = clock;
	t->sorted = true;
	*ret = t;
	return 0;
}

struct fg_timed *fg_timed__free(struct fg_timed *t)
{
	if (!t)
		return NULL;
	fg_folded__free(t->model);
	free(t->v);
	free(t->text_ids);
	free(t);
	return NULL;
}

struct fg_folded *fg_timed__model(struct fg_timed *t)
{
	return t->model;
}

const struct fg_folded *fg_timed__model_const(const struct fg_timed *t)
{
	return t->model;
}

enum fg_timed_unit fg_timed__unit(const struct fg_timed *t)
{
	return t->unit;
}

enum fg_timed_clock fg_timed__clock(const struct fg_timed *t)
{
	return t->clock;
}

const char *fg_timed_unit_name(enum fg_timed_unit unit)
{
	return unit == FG_TIMED_US ? "us" : "samples";
}

const char *fg_timed_clock_name(enum fg_timed_clock clock)
{
	return clock == FG_TIMED_CLOCK_PERF ? "perf" : "unix";
}

static bool time_ok(int64_t time)
{
	return time >= -FG_TIMED_TIME_MAX && time <= FG_TIMED_TIME_MAX;
}

static int64_t clamp_time(int64_t time)
{
	return MIN(MAX(time, -FG_TIMED_TIME_MAX), FG_TIMED_TIME_MAX);
}

/* Appends one sample of stack id; the caller has checked the weight. */
static int push(struct fg_timed *t, int64_t time, uint32_t stack, uint32_t weight)
{
	int r;

	if (!time_ok(time))
		return -ERANGE;
	if (t->n >= FG_TIMED_MAX_SAMPLES)
		return -E2BIG;
	if (t->n >= t->cap) {
		r = FG_GROW(t->v, t->cap, t->n + 1);
		if (r < 0)
			return r;
	}
	if (t->n > 0 && time < t->v[t->n - 1].time)
		t->sorted = false;
	t->v[t->n++] = (struct fg_timed_sample){ time, stack, weight };
	t->total += weight;
	t->max_weight = MAX(t->max_weight, weight);
	return 0;
}

/* A sample of weight at time on stack id, which the model holds: its count and the sample. */
static int add_to(struct fg_timed *t, int64_t time, uint32_t id, uint32_t weight)
{
	struct fg_stack st;
	int r;

	if (!time_ok(time))
		return -ERANGE;
	/* The stack is there: adding to it moves no frames. */
	fg_folded__stack_by_id(t->model, id, &st);
	r = fg_folded__add(t->model, st.frames, st.n_frames, (double)weight);
	return r < 0 ? r : push(t, time, id, weight);
}

int fg_timed__add_id(struct fg_timed *t, int64_t time, uint32_t stack, uint32_t weight)
{
	if (weight == 0 || stack >= fg_folded__n_stacks(t->model))
		return -EINVAL;
	return add_to(t, time, stack, weight);
}

void fg_timed__set_period(struct fg_timed *t, int64_t since, int64_t until)
{
	t->since = clamp_time(since);
	t->until = clamp_time(until);
}

void fg_timed__period(const struct fg_timed *t, int64_t *ret_since, int64_t *ret_until)
{
	*ret_since = t->since;
	*ret_until = t->until;
}

/* Adds weight to stack id at time, in parts below 2^32. */
static int add_weight(struct fg_timed *t, int64_t time, uint32_t stack, uint64_t weight)
{
	while (weight > MAX_PART) {
		int r = push(t, time, stack, (uint32_t)MAX_PART);

		if (r < 0)
			return r;
		weight -= MAX_PART;
		/* The part before ends where this one begins. */
		if (t->unit == FG_TIMED_US)
			time -= (int64_t)(MAX_PART / 1000);
	}
	return push(t, time, stack, (uint32_t)weight);
}

int fg_timed__add(struct fg_timed *t, int64_t time, const uint32_t *frames, size_t n,
		  uint64_t weight)
{
	uint32_t id;
	int r;

	if (n == 0 || weight == 0)
		return -EINVAL;
	/* The parts of a long block reach back from time: the first must be in range too. */
	if (!time_ok(time) || !time_ok(time - (int64_t)(weight / MAX_PART * (MAX_PART / 1000))))
		return -ERANGE;
	if (t->n + weight / MAX_PART + 1 > FG_TIMED_MAX_SAMPLES)
		return -E2BIG;
	r = fg_folded__add_id(t->model, frames, n, (double)weight, &id);
	if (r < 0)
		return r;
	return add_weight(t, time, id, weight);
}

static int cmp_index(const void *a, const void *b, void *ctx)
{
	const struct fg_timed_sample *v = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (v[x].time != v[y].time)
		return v[x].time < v[y].time ? -1 : 1;
	return x < y ? -1 : x > y;
}

int fg_timed__sort(struct fg_timed *t)
{
	_cleanup_free_ uint32_t *order = NULL;
	struct fg_timed_sample *sorted;

	if (t->sorted)
		return 0;
	order = malloc(t->n * sizeof(*order));
	sorted = malloc(t->n * sizeof(*sorted));
	if (!order || !sorted) {
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, t->n, sizeof(*order), cmp_index, t->v);
	for (size_t i = 0; i < t->n; i++)
		sorted[i] = t->v[order[i]];
	free(t->v);
	t->v = sorted;
	t->cap = t->n;
	t->sorted = true;
	return 0;
}

size_t fg_timed__n_samples(const struct fg_timed *t)
{
	return t->n;
}

const struct fg_timed_sample *fg_timed__samples(const struct fg_timed *t)
{
	return t->v;
}

uint64_t fg_timed__total(const struct fg_timed *t)
{
	return t->total;
}

size_t fg_timed__bytes(const struct fg_timed *t)
{
	return sizeof(*t) + fg_folded__bytes(t->model) + t->cap * sizeof(*t->v) +
	       t->cap_text * sizeof(*t->text_ids);
}

/*
 * A sample's time is the ms it was taken in, [time, time + 1). In µs a
 * sample stands for the weight µs that ended with that ms.
 */
double fg_timed_share(enum fg_timed_unit unit, const struct fg_timed_sample *s, int64_t since,
		      int64_t until)
{
	double end, start, lo, hi;

	if (unit == FG_TIMED_SAMPLES)
		return s->time >= since && s->time < until ? s->weight : 0;
	end = ((double)s->time + 1) * 1000;
	start = end - s->weight;
	lo = MAX(start, (double)since * 1000);
	hi = MIN(end, (double)until * 1000);
	return hi > lo ? hi - lo : 0;
}

/* The first sample at or after time (samples sorted). */
static size_t first_at(const struct fg_timed *t, int64_t time)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].time < time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The time past which no sample reaches into a range ending at until (clamped). */
static int64_t range_last(const struct fg_timed *t, int64_t until)
{
	/* A sample in µs reaches back its weight: the last that can reach the range ends this late. */
	return t->unit == FG_TIMED_US ? until + (int64_t)(t->max_weight / 1000) + 1 : until;
}

int fg_timed__range(const struct fg_timed *t, int64_t since, int64_t until, fg_timed_match_fn match,
		    void *ctx, struct fg_folded *out)
{
	_cleanup_free_ uint32_t *ids = NULL;
	size_t cap = 0;
	int64_t last;
	int r;

	since = clamp_time(since);
	until = clamp_time(until);
	last = range_last(t, until);
	if (until <= since)
		return 0;
	for (size_t i = first_at(t, since); i < t->n && t->v[i].time < last; i++) {
		const struct fg_timed_sample *s = &t->v[i];
		double share = fg_timed_share(t->unit, s, since, until);
		struct fg_stack st;

		if (share <= 0)
			continue;
		fg_folded__stack_by_id(t->model, s->stack, &st);
		if (match && !match(ctx, t->model, st.frames, st.n_frames))
			continue;
		r = FG_GROW(ids, cap, st.n_frames);
		if (r < 0)
			return r;
		for (size_t k = 0; k < st.n_frames; k++) {
			const char *name = fg_folded__name(t->model, st.frames[k]);

			r = fg_folded__intern(out, name,
					      fg_folded__name_len(t->model, st.frames[k]), &ids[k]);
			if (r < 0)
				return r;
		}
		r = fg_folded__add(out, ids, st.n_frames, share);
		if (r < 0)
			return r;
	}
	return 0;
}

int fg_timed__filter(const struct fg_timed *t, fg_timed_match_fn match, void *ctx,
		     struct fg_timed **ret)
{
	_cleanup_(fg_timed__freep) struct fg_timed *out = NULL;
	_cleanup_free_ int64_t *map = NULL; /* t's stack id to out's, -1: not kept, -2: not asked */
	_cleanup_free_ uint32_t *names = NULL;
	size_t n_stacks = fg_folded__n_stacks(t->model), n_names = fg_folded__n_names(t->model);
	int r;

	r = fg_timed__new(t->unit, t->clock, &out);
	if (r < 0)
		return r;
	fg_timed__set_period(out, t->since, t->until);
	map = malloc(MAX(n_stacks, (size_t)1) * sizeof(*map));
	names = malloc(MAX(n_names, (size_t)1) * sizeof(*names));
	if (!map || !names)
		return -ENOMEM;
	for (size_t i = 0; i < n_stacks; i++)
		map[i] = -2;
	memset(names, 0xff, n_names * sizeof(*names));
	for (size_t i = 0; i < t->n; i++) {
		const struct fg_timed_sample *s = &t->v[i];

		if (map[s->stack] == -2) {
			struct fg_stack st;
			uint32_t id;

			fg_folded__stack_by_id(t->model, s->stack, &st);
			map[s->stack] = -1;
			if (!match(ctx, t->model, st.frames, st.n_frames))
				continue;
			r = fg_folded__add_from(out->model, t->model, s->stack, 0, names, &id);
			if (r < 0)
				return r;
			map[s->stack] = id;
		}
		if (map[s->stack] < 0)
			continue;
		r = add_to(out, s->time, (uint32_t)map[s->stack], s->weight);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(out);
	return 0;
}

int fg_timed__between(const struct fg_timed *t, int64_t since, int64_t until, struct fg_timed **ret)
{
	_cleanup_(fg_timed__freep) struct fg_timed *out = NULL;
	_cleanup_free_ uint32_t *names = NULL, *ids = NULL;
	size_t n_stacks = fg_folded__n_stacks(t->model), n_names = fg_folded__n_names(t->model);
	int64_t last;
	int r;

	since = clamp_time(since);
	until = clamp_time(until);
	last = range_last(t, until);
	r = fg_timed__new(t->unit, t->clock, &out);
	if (r < 0)
		return r;
	fg_timed__set_period(out, since, until);
	names = malloc(MAX(n_names, (size_t)1) * sizeof(*names));
	ids = malloc(MAX(n_stacks, (size_t)1) * sizeof(*ids));
	if (!names || !ids)
		return -ENOMEM;
	memset(names, 0xff, n_names * sizeof(*names));
	memset(ids, 0xff, n_stacks * sizeof(*ids));
	for (size_t i = first_at(t, since); i < t->n && t->v[i].time < last; i++) {
		const struct fg_timed_sample *s = &t->v[i];
		/* Whole µs: the times and the range are whole ms, exact in a double. */
		uint32_t share = (uint32_t)llround(fg_timed_share(t->unit, s, since, until));

		if (share == 0)
			continue;
		if (ids[s->stack] == UINT32_MAX) {
			r = fg_folded__add_from(out->model, t->model, s->stack, 0, names,
						&ids[s->stack]);
			if (r < 0)
				return r;
		}
		r = add_to(out, s->time, ids[s->stack], share);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(out);
	return 0;
}

bool fg_timed__has_header(const struct fg_timed *t)
{
	return t->has_header;
}

/* Parses a decimal int64 (an optional '-' then digits) spanning s[0..len). */
static int parse_i64(const char *s, size_t len, int64_t *ret)
{
	bool neg = len > 0 && s[0] == '-';
	uint64_t v = 0;

	if (len == neg)
		return -EINVAL;
	for (size_t i = neg; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > (uint64_t)INT64_MAX)
		return -EINVAL;
	*ret = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* A time in the header: an int64 within FG_TIMED_TIME_MAX. */
static int parse_time(const char *s, size_t len, int64_t *ret)
{
	int r = parse_i64(s, len, ret);

	return r < 0 ? r : time_ok(*ret) ? 0 : -ERANGE;
}

/* The next blank-separated word of s[*pos..len): [*ret, *ret + *ret_len); false at the end. */
static bool next_word(const char *s, size_t len, size_t *pos, const char **ret, size_t *ret_len)
{
	size_t i = *pos, start;

	while (i < len && s[i] == ' ')
		i++;
	start = i;
	while (i < len && s[i] != ' ')
		i++;
	*pos = i;
	*ret = s + start;
	*ret_len = i - start;
	return i > start;
}

static bool word_is(const char *w, size_t len, const char *s)
{
	return len == strlen(s) && memcmp(w, s, len) == 0;
}

/* The header line; the profile takes what it says only when all of it is good. */
static int header_line(struct fg_timed *t, const char *line, size_t len)
{
	enum fg_timed_clock clock = t->clock;
	enum fg_timed_unit unit = t->unit;
	int64_t version, start = 0, since = 0, until = 0;
	const char *w;
	size_t pos = 0, n;
	int r = 0;

	if (t->has_header || t->n > 0 || fg_folded__n_stacks(t->model) > 0)
		return -EINVAL;
	if (!next_word(line, len, &pos, &w, &n) || !word_is(w, n, "fgd-timed"))
		return -EINVAL;
	if (!next_word(line, len, &pos, &w, &n) || parse_i64(w, n, &version) < 0)
		return -EINVAL;
	if (version != TEXT_VERSION)
		return -EPROTONOSUPPORT;
	while (next_word(line, len, &pos, &w, &n)) {
		const char *eq = memchr(w, '=', n);
		size_t klen = eq ? (size_t)(eq - w) : n, vlen = eq ? n - klen - 1 : 0;
		const char *v = eq ? eq + 1 : "";

		if (word_is(w, klen, "clock")) {
			if (word_is(v, vlen, "unix"))
				clock = FG_TIMED_CLOCK_UNIX;
			else if (word_is(v, vlen, "perf"))
				clock = FG_TIMED_CLOCK_PERF;
			else
				return -EPROTONOSUPPORT;
		} else if (word_is(w, klen, "unit")) {
			if (word_is(v, vlen, "samples"))
				unit = FG_TIMED_SAMPLES;
			else if (word_is(v, vlen, "us"))
				unit = FG_TIMED_US;
			else
				return -EPROTONOSUPPORT;
		} else if (word_is(w, klen, "start")) {
			r = parse_time(v, vlen, &start);
		} else if (word_is(w, klen, "since")) {
			r = parse_time(v, vlen, &since);
		} else if (word_is(w, klen, "until")) {
			r = parse_time(v, vlen, &until);
		}
		/* Other keys are a later version's additions, ignored. */
		if (r < 0)
			return r;
	}
	if (until < since)
		return -EINVAL;
	t->clock = clock;
	t->unit = unit;
	t->last = start;
	t->since = since;
	t->until = until;
	t->has_header = true;
	return 0;
}

static int stack_line(struct fg_timed *t, const char *text, size_t len)
{
	const uint32_t *frames;
	size_t n;
	uint32_t id;
	int r;

	if (t->n_text >= UINT32_MAX - 1)
		return -E2BIG;
	r = fg_folded__intern_stack(t->model, text, len, &frames, &n);
	if (r < 0)
		return r;
	/* Counted as samples refer to it. */
	r = fg_folded__add_id(t->model, frames, n, 0, &id);
	if (r < 0)
		return r;
	r = FG_GROW(t->text_ids, t->cap_text, t->n_text + 1);
	if (r < 0)
		return r;
	t->text_ids[t->n_text++] = id;
	return 0;
}

static int sample_line(struct fg_timed *t, const char *line, size_t len)
{
	const char *w;
	size_t pos = 0, n;
	int64_t delta, stack, weight = 1, time;
	int r;

	if (!next_word(line, len, &pos, &w, &n) || parse_i64(w, n, &delta) < 0 || delta < 0 ||
	    __builtin_add_overflow(t->last, delta, &time))
		return -EINVAL;
	if (!next_word(line, len, &pos, &w, &n) || parse_i64(w, n, &stack) < 0 || stack < 0 ||
	    (uint64_t)stack >= t->n_text)
		return -EINVAL;
	if (next_word(line, len, &pos, &w, &n) &&
	    (parse_i64(w, n, &weight) < 0 || weight < 1 || weight > UINT32_MAX))
		return -EINVAL;
	if (next_word(line, len, &pos, &w, &n))
		return -EINVAL;
	r = add_to(t, time, t->text_ids[stack], (uint32_t)weight);
	if (r < 0)
		return r;
	t->last = time;
	return 1;
}

int fg_timed__add_line(struct fg_timed *t, const char *line, size_t len)
{
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0 || line[0] == '#')
		return 0;
	if (!t->has_header)
		return header_line(t, line, len);
	if (len >= 2 && line[0] == 's' && line[1] == ' ')
		return stack_line(t, line + 2, len - 2);
	return sample_line(t, line, len);
}

/* Output gathered a line at a time and written in blocks. */
struct out {
	char buf[8192];
	size_t len, written;
	fg_write_fn fn;
	void *ctx;
};

static int out_flush(struct out *o)
{
	int r = o->len ? o->fn(o->ctx, o->buf, o->len) : 0;

	o->written += o->len;
	o->len = 0;
	return r;
}

/* Room for a line of up to need bytes; 0 or the sink's error. */
static int out_room(struct out *o, size_t need)
{
	return o->len + need > sizeof(o->buf) ? out_flush(o) : 0;
}

static int out_add(struct out *o, const char *s, size_t len)
{
	int r;

	while (len > 0) {
		size_t part = MIN(len, sizeof(o->buf) - o->len);

		memcpy(o->buf + o->len, s, part);
		o->len += part;
		s += part;
		len -= part;
		if (o->len == sizeof(o->buf)) {
			r = out_flush(o);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int fg_timed__emit(const struct fg_timed *t, size_t *cursor, fg_write_fn fn, void *ctx,
		   size_t budget)
{
	size_t n_stacks = fg_folded__n_stacks(t->model);
	struct out o = { .fn = fn, .ctx = ctx };
	int64_t start = t->n ? t->v[0].time : 0;
	char line[128];
	int r, len;

	while (o.written + o.len < budget) {
		size_t c = *cursor;

		if (c == 0) {
			len = snprintf(line, sizeof(line),
				       "fgd-timed %d clock=%s unit=%s start=%" PRId64, TEXT_VERSION,
				       fg_timed_clock_name(t->clock), fg_timed_unit_name(t->unit),
				       start);
			if (t->since || t->until)
				len += snprintf(line + len, sizeof(line) - (size_t)len,
						" since=%" PRId64 " until=%" PRId64, t->since,
						t->until);
			len += snprintf(line + len, sizeof(line) - (size_t)len, "\n");
			r = out_add(&o, line, (size_t)len);
		} else if (c <= n_stacks) {
			struct fg_stack st;

			fg_folded__stack_by_id(t->model, (uint32_t)(c - 1), &st);
			r = out_add(&o, "s ", 2);
			for (size_t k = 0; r >= 0 && k < st.n_frames; k++) {
				if (k > 0)
					r = out_add(&o, ";", 1);
				if (r >= 0)
					r = out_add(&o, fg_folded__name(t->model, st.frames[k]),
						    fg_folded__name_len(t->model, st.frames[k]));
			}
			if (r >= 0)
				r = out_add(&o, "\n", 1);
		} else if (c - 1 - n_stacks < t->n) {
			size_t i = c - 1 - n_stacks;
			const struct fg_timed_sample *s = &t->v[i];
			int64_t prev = i ? t->v[i - 1].time : start;

			r = out_room(&o, sizeof(line));
			if (s->weight == 1)
				len = snprintf(line, sizeof(line), "%" PRId64 " %" PRIu32 "\n",
					       s->time - prev, s->stack);
			else
				len = snprintf(line, sizeof(line),
					       "%" PRId64 " %" PRIu32 " %" PRIu32 "\n",
					       s->time - prev, s->stack, s->weight);
			if (r >= 0)
				r = out_add(&o, line, (size_t)len);
		} else {
			r = out_flush(&o);
			return r < 0 ? r : 1;
		}
		if (r < 0)
			return r;
		(*cursor)++;
	}
	r = out_flush(&o);
	return r < 0 ? r : 0;
}
