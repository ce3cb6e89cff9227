/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "base/strpool.h"
#include "storage/slicefile.h"

#define MAGIC "FGDH"
#define HEADER_SIZE 40     /* what this version writes: with the frequency */
#define HEADER_SIZE_MIN 32 /* what the first files have: no frequency */
#define FREQUENCY_AT 32
#define TRAILER_SIZE 4
#define NONE_STRING UINT32_MAX
/* Header flags. */
#define FLAG_TIMES 1U    /* the body has the times section */
#define FLAG_COVERAGE 2U /* the body ends with the coverage section (version 3) */
/* The flags each version may set: one it does not know is a later version's. */
static const uint32_t version_flags[FG_SLICEFILE_VERSION + 1] = {
	[1] = 0,
	[2] = FLAG_TIMES,
	[3] = FLAG_TIMES | FLAG_COVERAGE,
};

/* ---- little-endian fields and varints ---- */

struct bytes {
	uint8_t *p; /* owned */
	size_t len, cap;
};

static int put(struct bytes *b, const void *data, size_t len)
{
	if (len == 0)
		return 0; /* data may be NULL then: an empty section */
	if (FG_GROW(b->p, b->cap, b->len + len) < 0)
		return -ENOMEM;
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

static int put_varint(struct bytes *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return put(b, buf, n);
}

static void store_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t load_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A read cursor over the body. */
struct cursor {
	const uint8_t *p, *end;
};

static int get_varint(struct cursor *c, uint64_t *ret)
{
	uint64_t v = 0;

	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		uint8_t byte = *c->p++;

		/* The tenth byte may carry only the top bit of a 64-bit value. */
		if (shift == 63 && byte > 1)
			return -EBADMSG;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*ret = v;
			return 0;
		}
		if (shift == 63)
			return -EBADMSG;
	}
	return -EBADMSG;
}

/* A varint that must be below limit. */
static int get_index(struct cursor *c, uint64_t limit, uint32_t *ret)
{
	uint64_t v;
	int r = get_varint(c, &v);

	if (r < 0)
		return r;
	if (v >= limit)
		return -EBADMSG;
	*ret = (uint32_t)v;
	return 0;
}

/* ---- CRC-32C ---- */

uint32_t fg_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	/* Bitwise: slices are written every few seconds, and this keeps no table. */
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78U & -(crc & 1));
	}
	return ~crc;
}

/* ---- writing ---- */

/* A time of the writer's: count samples of a stack in one tick (Unix ms / the tick's length). */
struct wtime {
	int64_t tick;
	uint32_t stack;
	uint64_t count;
};

/* floor(a / b) for b > 0, for times before the epoch too. */
static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/* Signed values as varints: 0, -1, 1, -2, ... as 0, 1, 2, 3, ... */
static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

struct fg_slicefile_writer {
	uint64_t start, end;
	uint32_t frequency;
	struct fg_strpool *strings; /* owned */
	struct bytes procs;         /* encoded processes */
	struct bytes stacks;        /* encoded stacks */
	uint32_t n_procs;
	uint64_t n_stacks;
	uint32_t tick_ms;    /* 0: no times section */
	struct wtime *times; /* owned */
	size_t n_times, cap_times;
	struct fg_slicefile_span *cover; /* owned */
	size_t n_cover, cap_cover;
	bool has_cover;   /* the file has a coverage section (which may list no stretch) */
	struct bytes out; /* the finished file */
};

int fg_slicefile_writer__new(uint64_t start_ns, uint64_t end_ns, struct fg_slicefile_writer **ret)
{
	struct fg_slicefile_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->strings = fg_strpool__new();
	if (!w->strings) {
		free(w);
		return -ENOMEM;
	}
	w->start = start_ns;
	w->end = end_ns;
	*ret = w;
	return 0;
}

struct fg_slicefile_writer *fg_slicefile_writer__free(struct fg_slicefile_writer *w)
{
	if (!w)
		return NULL;
	fg_strpool__free(w->strings);
	free(w->procs.p);
	free(w->stacks.p);
	free(w->times);
	free(w->cover);
	free(w->out.p);
	free(w);
	return NULL;
}

/* A string's id plus one, or 0 for NULL, as processes store them. */
static int string_ref(struct fg_slicefile_writer *w, const char *s, uint64_t *ret)
{
	uint32_t id;
	int r;

	if (!s) {
		*ret = 0;
		return 0;
	}
	r = fg_strpool__intern(w->strings, s, strlen(s), &id);
	if (r < 0)
		return r;
	*ret = (uint64_t)id + 1;
	return 0;
}

int fg_slicefile_writer__add_process(struct fg_slicefile_writer *w,
				     const struct fg_slicefile_process *p, uint32_t *ret_index)
{
	uint64_t comm, exe, cgroup;
	int r;

	if (w->n_procs == UINT32_MAX)
		return -E2BIG;
	r = string_ref(w, p->comm, &comm);
	if (r >= 0)
		r = string_ref(w, p->exe, &exe);
	if (r >= 0)
		r = string_ref(w, p->cgroup, &cgroup);
	if (r >= 0)
		r = put_varint(&w->procs, (uint32_t)p->pid);
	if (r >= 0)
		r = put_varint(&w->procs, p->start_time);
	if (r >= 0)
		r = put_varint(&w->procs, p->uid);
	if (r >= 0)
		r = put_varint(&w->procs, comm);
	if (r >= 0)
		r = put_varint(&w->procs, exe);
	if (r >= 0)
		r = put_varint(&w->procs, cgroup);
	if (r < 0)
		return r;
	*ret_index = w->n_procs++;
	return 0;
}

int fg_slicefile_writer__add_stack(struct fg_slicefile_writer *w, uint32_t proc,
				   const char *const *frames, size_t n, uint64_t count)
{
	int r;

	if (proc >= w->n_procs || n == 0 || n > FG_SLICEFILE_MAX_DEPTH || count == 0)
		return -EINVAL;
	r = put_varint(&w->stacks, proc);
	if (r >= 0)
		r = put_varint(&w->stacks, count);
	if (r >= 0)
		r = put_varint(&w->stacks, n);
	for (size_t i = 0; i < n && r >= 0; i++) {
		uint32_t id;

		r = fg_strpool__intern(w->strings, frames[i], strlen(frames[i]), &id);
		if (r >= 0)
			r = put_varint(&w->stacks, id);
	}
	if (r < 0)
		return r;
	w->n_stacks++;
	return 0;
}

void fg_slicefile_writer__set_frequency(struct fg_slicefile_writer *w, uint32_t hz)
{
	w->frequency = hz;
}

int fg_slicefile_writer__add_coverage(struct fg_slicefile_writer *w,
				      const struct fg_slicefile_span *span)
{
	uint64_t after = w->n_cover ? w->cover[w->n_cover - 1].end_ns : w->start;

	if (span->start_ns >= span->end_ns || span->start_ns < after || span->end_ns > w->end)
		return -EINVAL;
	if (FG_GROW(w->cover, w->cap_cover, w->n_cover + 1) < 0)
		return -ENOMEM;
	w->cover[w->n_cover++] = *span;
	w->has_cover = true;
	return 0;
}

/*
 * The coverage section: n, then each stretch as (its start after the
 * previous one's end, or the slice's start; its length; its losses), in ns.
 */
static int put_coverage(struct fg_slicefile_writer *w)
{
	uint64_t prev = w->start;
	int r = put_varint(&w->out, w->n_cover);

	for (size_t i = 0; i < w->n_cover && r >= 0; i++) {
		const struct fg_slicefile_span *c = &w->cover[i];

		r = put_varint(&w->out, c->start_ns - prev);
		if (r >= 0)
			r = put_varint(&w->out, c->end_ns - c->start_ns);
		if (r >= 0)
			r = put_varint(&w->out, c->lost);
		prev = c->end_ns;
	}
	return r;
}

int fg_slicefile_writer__set_times(struct fg_slicefile_writer *w, uint32_t tick_ms)
{
	if (tick_ms == 0)
		return -EINVAL;
	w->tick_ms = tick_ms;
	return 0;
}

int fg_slicefile_writer__add_time(struct fg_slicefile_writer *w, uint32_t stack, int64_t time_ms,
				  uint64_t count)
{
	int64_t start_ms = (int64_t)(w->start / 1000000), end_ms = (int64_t)(w->end / 1000000);

	if (!w->tick_ms || stack >= w->n_stacks || count == 0)
		return -EINVAL;
	if (time_ms < start_ms - FG_SLICEFILE_TIME_SLACK_MS ||
	    time_ms > end_ms + FG_SLICEFILE_TIME_SLACK_MS)
		return -ERANGE;
	if (FG_GROW(w->times, w->cap_times, w->n_times + 1) < 0)
		return -ENOMEM;
	w->times[w->n_times++] = (struct wtime){ floor_div(time_ms, w->tick_ms), stack, count };
	return 0;
}

static int cmp_wtime(const void *a, const void *b)
{
	const struct wtime *x = a, *y = b;

	if (x->tick != y->tick)
		return x->tick < y->tick ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/*
 * The times section: the tick's length, the first tick (as the slice's
 * start's tick less it: a sample may be taken before the slice began), then
 * (tick delta and whether a count follows, stack[, count]) in time order,
 * each pair once.
 */
static int put_times(struct fg_slicefile_writer *w)
{
	int64_t start_tick = floor_div((int64_t)(w->start / 1000000), w->tick_ms), prev;
	size_t n = 0;
	int r;

	if (w->n_times > 0) /* an idle slice has none, and no array to sort */
		qsort(w->times, w->n_times, sizeof(*w->times), cmp_wtime);
	for (size_t i = 0; i < w->n_times; i++) {
		if (n > 0 && w->times[n - 1].tick == w->times[i].tick &&
		    w->times[n - 1].stack == w->times[i].stack)
			w->times[n - 1].count += w->times[i].count;
		else
			w->times[n++] = w->times[i];
	}
	w->n_times = n;
	prev = n ? w->times[0].tick : start_tick;
	r = put_varint(&w->out, w->tick_ms);
	if (r >= 0)
		r = put_varint(&w->out, zigzag(start_tick - prev));
	if (r >= 0)
		r = put_varint(&w->out, n);
	for (size_t i = 0; i < n && r >= 0; i++) {
		bool counted = w->times[i].count != 1;

		/* A tick's lone sample, the common case at low rates, has no count. */
		r = put_varint(&w->out, (uint64_t)(w->times[i].tick - prev) << 1 | counted);
		if (r >= 0)
			r = put_varint(&w->out, w->times[i].stack);
		if (r >= 0 && counted)
			r = put_varint(&w->out, w->times[i].count);
		prev = w->times[i].tick;
	}
	return r;
}

int fg_slicefile_writer__finish(struct fg_slicefile_writer *w, const uint8_t **ret_data,
				size_t *ret_len)
{
	size_t n_strings = fg_strpool__count(w->strings);
	uint8_t header[HEADER_SIZE] = { 0 }, trailer[TRAILER_SIZE];
	size_t body_len;
	int r;

	w->out.len = 0;
	r = put(&w->out, header, sizeof(header));
	if (r >= 0)
		r = put_varint(&w->out, n_strings);
	for (size_t i = 0; i < n_strings && r >= 0; i++) {
		size_t len = fg_strpool__len(w->strings, (uint32_t)i);

		r = put_varint(&w->out, len);
		if (r >= 0)
			r = put(&w->out, fg_strpool__str(w->strings, (uint32_t)i), len);
	}
	if (r >= 0)
		r = put_varint(&w->out, w->n_procs);
	if (r >= 0)
		r = put(&w->out, w->procs.p, w->procs.len);
	if (r >= 0)
		r = put_varint(&w->out, w->n_stacks);
	if (r >= 0)
		r = put(&w->out, w->stacks.p, w->stacks.len);
	if (r >= 0 && w->tick_ms)
		r = put_times(w);
	if (r >= 0 && w->has_cover)
		r = put_coverage(w);
	if (r < 0)
		return r;
	body_len = w->out.len - HEADER_SIZE;
	if (body_len > UINT32_MAX)
		return -E2BIG;

	memcpy(w->out.p, MAGIC, 4);
	store_le(w->out.p + 4, FG_SLICEFILE_VERSION, 2);
	store_le(w->out.p + 6, HEADER_SIZE, 2);
	store_le(w->out.p + 8, (w->tick_ms ? FLAG_TIMES : 0) | (w->has_cover ? FLAG_COVERAGE : 0),
		 4);
	store_le(w->out.p + 12, body_len, 4);
	store_le(w->out.p + 16, w->start, 8);
	store_le(w->out.p + 24, w->end, 8);
	store_le(w->out.p + FREQUENCY_AT, w->frequency, 4);
	store_le(w->out.p + FREQUENCY_AT + 4, 0, 4); /* reserved */
	store_le(trailer, fg_crc32c(0, w->out.p, w->out.len), 4);
	r = put(&w->out, trailer, sizeof(trailer));
	if (r < 0)
		return r;
	*ret_data = w->out.p;
	*ret_len = w->out.len;
	return 0;
}

/* ---- reading ---- */

struct fg_slicefile {
	uint64_t start, end;
	uint32_t frequency;
	uint32_t tick_ms;                /* 0: no times */
	struct fg_slicefile_time *times; /* owned */
	size_t n_times;
	struct fg_slicefile_span *cover; /* owned */
	size_t n_cover;
	char *arena;          /* owned: every string, NUL-terminated */
	uint32_t *string_off; /* owned: offsets into arena */
	size_t n_strings;
	struct fg_slicefile_process *procs; /* owned; strings point into arena */
	size_t n_procs;
	struct fg_slicefile_stack *stacks; /* owned; frames point into frame_ids */
	size_t n_stacks;
	uint32_t *frame_ids; /* owned */
};

struct fg_slicefile *fg_slicefile__free(struct fg_slicefile *s)
{
	if (!s)
		return NULL;
	free(s->arena);
	free(s->string_off);
	free(s->procs);
	free(s->stacks);
	free(s->frame_ids);
	free(s->times);
	free(s->cover);
	free(s);
	return NULL;
}

static int parse_strings(struct cursor *c, struct fg_slicefile *s)
{
	uint64_t n, total = 0;
	const uint8_t *save = c->p;
	size_t at = 0;
	int r;

	r = get_varint(c, &n);
	if (r < 0)
		return r;
	/* Every string takes at least its length byte. */
	if (n > (uint64_t)(c->end - c->p))
		return -EBADMSG;
	/* First pass: lengths, to size the arena. */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t len;

		r = get_varint(c, &len);
		if (r < 0)
			return r;
		if (len > (uint64_t)(c->end - c->p))
			return -EBADMSG;
		c->p += len;
		total += len + 1;
	}
	s->arena = malloc(total ? total : 1);
	s->string_off = calloc(n ? n : 1, sizeof(*s->string_off));
	if (!s->arena || !s->string_off)
		return -ENOMEM;
	c->p = save;
	(void)get_varint(c, &n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t len;

		(void)get_varint(c, &len);
		/* A NUL inside would cut the name short, silently: refuse it. */
		if (memchr(c->p, 0, len))
			return -EBADMSG;
		memcpy(s->arena + at, c->p, len);
		s->arena[at + len] = '\0';
		s->string_off[i] = (uint32_t)at;
		at += len + 1;
		c->p += len;
	}
	s->n_strings = n;
	return 0;
}

/* A process's string: a reference (id + 1, 0 for none) resolved into the arena. */
static int get_string_ref(struct cursor *c, const struct fg_slicefile *s, const char **ret)
{
	uint32_t ref;
	int r = get_index(c, (uint64_t)s->n_strings + 1, &ref);

	if (r < 0)
		return r;
	*ret = ref ? s->arena + s->string_off[ref - 1] : NULL;
	return 0;
}

static int parse_processes(struct cursor *c, struct fg_slicefile *s)
{
	uint64_t n;
	int r = get_varint(c, &n);

	if (r < 0)
		return r;
	/* Six fields of at least a byte each. */
	if (n > (uint64_t)(c->end - c->p) / 6)
		return -EBADMSG;
	s->procs = calloc(n ? n : 1, sizeof(*s->procs));
	if (!s->procs)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct fg_slicefile_process *p = &s->procs[i];
		uint64_t pid, uid;

		r = get_varint(c, &pid);
		if (r >= 0)
			r = get_varint(c, &p->start_time);
		if (r >= 0)
			r = get_varint(c, &uid);
		if (r >= 0)
			r = get_string_ref(c, s, &p->comm);
		if (r >= 0)
			r = get_string_ref(c, s, &p->exe);
		if (r >= 0)
			r = get_string_ref(c, s, &p->cgroup);
		if (r < 0)
			return r;
		/* The pid is stored as its 32 bits: 4294967295 is -1, a process fgd cannot name. */
		if (pid > UINT32_MAX || uid > UINT32_MAX)
			return -EBADMSG;
		p->pid = (int32_t)(uint32_t)pid;
		p->uid = (uint32_t)uid;
	}
	s->n_procs = n;
	return 0;
}

static int parse_stacks(struct cursor *c, struct fg_slicefile *s)
{
	size_t n_frames = 0, cap_frames = 0;
	uint64_t n;
	int r = get_varint(c, &n);

	if (r < 0)
		return r;
	/* Proc, count, depth and a frame: four bytes at least. */
	if (n > (uint64_t)(c->end - c->p) / 4)
		return -EBADMSG;
	s->stacks = calloc(n ? n : 1, sizeof(*s->stacks));
	if (!s->stacks)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct fg_slicefile_stack *st = &s->stacks[i];
		uint64_t depth;

		r = get_index(c, s->n_procs, &st->proc);
		if (r >= 0)
			r = get_varint(c, &st->count);
		if (r >= 0)
			r = get_varint(c, &depth);
		if (r < 0)
			return r;
		if (st->count == 0 || depth == 0 || depth > FG_SLICEFILE_MAX_DEPTH ||
		    depth > (uint64_t)(c->end - c->p))
			return -EBADMSG;
		if (FG_GROW(s->frame_ids, cap_frames, n_frames + depth) < 0)
			return -ENOMEM;
		for (uint64_t k = 0; k < depth; k++) {
			r = get_index(c, s->n_strings, &s->frame_ids[n_frames + k]);
			if (r < 0)
				return r;
		}
		st->n = depth;
		/* An offset for now: the array may still move. */
		st->frames = (const uint32_t *)(uintptr_t)n_frames;
		n_frames += depth;
	}
	for (uint64_t i = 0; i < n; i++)
		s->stacks[i].frames = s->frame_ids + (uintptr_t)s->stacks[i].frames;
	s->n_stacks = n;
	return 0;
}

/* The times section: each stack's times must add up to its count, or the file lies. */
static int parse_times(struct cursor *c, struct fg_slicefile *s)
{
	_cleanup_free_ uint64_t *sum = NULL;
	uint64_t tick_ms, n, back;
	int64_t tick, start_ms = (int64_t)(s->start / 1000000),
		      end_ms = (int64_t)(s->end / 1000000);
	int r;

	r = get_varint(c, &tick_ms);
	if (r >= 0)
		r = get_varint(c, &back);
	if (r >= 0)
		r = get_varint(c, &n);
	if (r < 0)
		return r;
	/* Two varints a time at least, of a byte at least. */
	if (tick_ms == 0 || tick_ms > UINT32_MAX || n > (uint64_t)(c->end - c->p) / 2 ||
	    __builtin_sub_overflow(floor_div((int64_t)(s->start / 1000000), (int64_t)tick_ms),
				   unzigzag(back), &tick))
		return -EBADMSG;
	s->times = calloc(n ? n : 1, sizeof(*s->times));
	sum = calloc(s->n_stacks ? s->n_stacks : 1, sizeof(*sum));
	if (!s->times || !sum)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct fg_slicefile_time *t = &s->times[i];
		uint64_t delta;

		r = get_varint(c, &delta);
		if (r >= 0)
			r = get_index(c, s->n_stacks, &t->stack);
		t->count = 1;
		if (r >= 0 && delta & 1)
			r = get_varint(c, &t->count);
		if (r < 0)
			return r;
		delta >>= 1;
		if (t->count == 0 || delta > INT64_MAX ||
		    __builtin_add_overflow(tick, (int64_t)delta, &tick) ||
		    __builtin_mul_overflow(tick, (int64_t)tick_ms, &t->time_ms) ||
		    /* Past it (by the tick a time rounds down in) the file lies. */
		    t->time_ms <= start_ms - FG_SLICEFILE_TIME_SLACK_MS - (int64_t)tick_ms ||
		    t->time_ms > end_ms + FG_SLICEFILE_TIME_SLACK_MS ||
		    __builtin_add_overflow(sum[t->stack], t->count, &sum[t->stack]))
			return -EBADMSG;
	}
	for (size_t i = 0; i < s->n_stacks; i++)
		if (sum[i] != s->stacks[i].count)
			return -EBADMSG;
	s->tick_ms = (uint32_t)tick_ms;
	s->n_times = n;
	return 0;
}

/* The coverage section: stretches in order, apart, within the slice's span. */
static int parse_coverage(struct cursor *c, struct fg_slicefile *s)
{
	uint64_t n, prev = s->start;
	int r = get_varint(c, &n);

	if (r < 0)
		return r;
	/* Three varints a stretch, of a byte at least. */
	if (n > (uint64_t)(c->end - c->p) / 3)
		return -EBADMSG;
	s->cover = calloc(n ? n : 1, sizeof(*s->cover));
	if (!s->cover)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct fg_slicefile_span *sp = &s->cover[i];
		uint64_t after, len;

		r = get_varint(c, &after);
		if (r >= 0)
			r = get_varint(c, &len);
		if (r >= 0)
			r = get_varint(c, &sp->lost);
		if (r < 0)
			return r;
		if (len == 0 || __builtin_add_overflow(prev, after, &sp->start_ns) ||
		    __builtin_add_overflow(sp->start_ns, len, &sp->end_ns) || sp->end_ns > s->end)
			return -EBADMSG;
		prev = sp->end_ns;
	}
	s->n_cover = n;
	return 0;
}

/* A file without a coverage section covers its span, losses unknown (an empty span: nothing). */
static int whole_span(struct fg_slicefile *s)
{
	s->cover = calloc(1, sizeof(*s->cover));
	if (!s->cover)
		return -ENOMEM;
	s->cover[0] = (struct fg_slicefile_span){ s->start, s->end, 0 };
	s->n_cover = s->start < s->end;
	return 0;
}

enum fg_slicefile_damage fg_slicefile_diagnose(const void *data, size_t len)
{
	const uint8_t *b = data;
	uint64_t header_size, body_len;

	if (len < 4 || memcmp(b, MAGIC, 4) != 0)
		return FG_SLICEFILE_NOT_SLICE;
	if (len < HEADER_SIZE_MIN + TRAILER_SIZE)
		return FG_SLICEFILE_TRUNCATED;
	header_size = load_le(b + 6, 2);
	body_len = load_le(b + 12, 4);
	if (header_size >= HEADER_SIZE_MIN && header_size + body_len + TRAILER_SIZE > len)
		return FG_SLICEFILE_TRUNCATED;
	if (fg_crc32c(0, b, len - TRAILER_SIZE) != (uint32_t)load_le(b + len - TRAILER_SIZE, 4))
		return FG_SLICEFILE_BAD_CHECKSUM;
	return FG_SLICEFILE_MALFORMED;
}

const char *fg_slicefile_damage_name(enum fg_slicefile_damage d)
{
	switch (d) {
	case FG_SLICEFILE_NOT_SLICE:
		return "not a slice file";
	case FG_SLICEFILE_TRUNCATED:
		return "truncated";
	case FG_SLICEFILE_BAD_CHECKSUM:
		return "bad checksum";
	case FG_SLICEFILE_MALFORMED:
		break;
	}
	return "malformed";
}

int fg_slicefile__parse(const void *data, size_t len, struct fg_slicefile **ret)
{
	_cleanup_(fg_slicefile__freep) struct fg_slicefile *s = NULL;
	const uint8_t *b = data;
	uint64_t version, header_size, body_len, flags;
	struct cursor c;
	int r;

	if (len < HEADER_SIZE_MIN + TRAILER_SIZE || memcmp(b, MAGIC, 4) != 0)
		return -EBADMSG;
	version = load_le(b + 4, 2);
	header_size = load_le(b + 6, 2);
	body_len = load_le(b + 12, 4);
	flags = load_le(b + 8, 4);
	if (version == 0)
		return -EBADMSG;
	if (version > FG_SLICEFILE_VERSION)
		return -EPROTONOSUPPORT;
	/* A flag its version does not define is damage (a later version says so by its number). */
	if (flags & ~(uint64_t)version_flags[version])
		return -EBADMSG;
	/* A later minor revision may grow the header; the body follows it. */
	if (header_size < HEADER_SIZE_MIN || header_size + body_len + TRAILER_SIZE != len)
		return -EBADMSG;
	if (fg_crc32c(0, b, len - TRAILER_SIZE) != (uint32_t)load_le(b + len - TRAILER_SIZE, 4))
		return -EBADMSG;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->start = load_le(b + 16, 8);
	s->end = load_le(b + 24, 8);
	s->frequency = header_size >= FREQUENCY_AT + 4 ? (uint32_t)load_le(b + FREQUENCY_AT, 4) : 0;
	c = (struct cursor){ b + header_size, b + header_size + body_len };
	r = parse_strings(&c, s);
	if (r >= 0)
		r = parse_processes(&c, s);
	if (r >= 0)
		r = parse_stacks(&c, s);
	if (r >= 0 && (flags & FLAG_TIMES))
		r = parse_times(&c, s);
	if (r >= 0)
		r = flags & FLAG_COVERAGE ? parse_coverage(&c, s) : whole_span(s);
	if (r < 0)
		return r;
	if (c.p != c.end)
		return -EBADMSG;
	*ret = TAKE_PTR(s);
	return 0;
}

uint32_t fg_slicefile__frequency(const struct fg_slicefile *s)
{
	return s->frequency;
}

uint64_t fg_slicefile__start(const struct fg_slicefile *s)
{
	return s->start;
}

uint64_t fg_slicefile__end(const struct fg_slicefile *s)
{
	return s->end;
}

size_t fg_slicefile__n_processes(const struct fg_slicefile *s)
{
	return s->n_procs;
}

const struct fg_slicefile_process *fg_slicefile__process(const struct fg_slicefile *s, size_t i)
{
	return &s->procs[i];
}

size_t fg_slicefile__n_stacks(const struct fg_slicefile *s)
{
	return s->n_stacks;
}

void fg_slicefile__stack(const struct fg_slicefile *s, size_t i, struct fg_slicefile_stack *ret)
{
	*ret = s->stacks[i];
}

const char *fg_slicefile__string(const struct fg_slicefile *s, uint32_t id)
{
	return s->arena + s->string_off[id];
}

uint32_t fg_slicefile__tick_ms(const struct fg_slicefile *s)
{
	return s->tick_ms;
}

size_t fg_slicefile__n_times(const struct fg_slicefile *s)
{
	return s->n_times;
}

const struct fg_slicefile_time *fg_slicefile__time(const struct fg_slicefile *s, size_t i)
{
	return &s->times[i];
}

size_t fg_slicefile__n_coverage(const struct fg_slicefile *s)
{
	return s->n_cover;
}

const struct fg_slicefile_span *fg_slicefile__coverage(const struct fg_slicefile *s, size_t i)
{
	return &s->cover[i];
}

/* ---- compaction ---- */

/* What merging accumulates: distinct processes and distinct stacks with summed counts. */
struct merge {
	const struct fg_slicefile_process **procs; /* borrowed from the inputs */
	size_t n_procs, cap_procs;
	struct fg_idxmap proc_index;
	struct fg_strpool *names; /* owned: frame names, so equal frames get one id */
	uint32_t *keys;           /* owned: each stack as [process, depth, name ids...] */
	size_t keys_len, keys_cap;
	size_t *key_off;  /* owned: where each distinct stack's key starts */
	uint64_t *counts; /* owned: parallel to key_off */
	size_t n_stacks, cap_stacks, cap_counts;
	struct fg_idxmap stack_index;
};

static void merge_done(struct merge *m)
{
	free(m->procs);
	fg_idxmap_done(&m->proc_index);
	fg_strpool__free(m->names);
	free(m->keys);
	free(m->key_off);
	free(m->counts);
	fg_idxmap_done(&m->stack_index);
}

static uint64_t proc_hash(const struct fg_slicefile_process *p)
{
	return fg_hash_combine(fg_hash_mix((uint32_t)p->pid), p->start_time);
}

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_slicefile_process *a = ((const struct merge *)ctx)->procs[idx], *b = key;

	return a->pid == b->pid && a->start_time == b->start_time;
}

static int merge_process(struct merge *m, const struct fg_slicefile_process *p, uint32_t *ret)
{
	uint64_t h = proc_hash(p);
	int64_t i = fg_idxmap_find(&m->proc_index, h, proc_eq, m, p);

	if (i < 0) {
		if (m->n_procs == UINT32_MAX)
			return -E2BIG;
		if (FG_GROW(m->procs, m->cap_procs, m->n_procs + 1) < 0 ||
		    fg_idxmap_insert(&m->proc_index, h, (uint32_t)m->n_procs) < 0)
			return -ENOMEM;
		m->procs[m->n_procs] = p;
		i = (int64_t)m->n_procs++;
	}
	*ret = (uint32_t)i;
	return 0;
}

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct merge *m = ctx;
	const uint32_t *a = m->keys + m->key_off[idx], *b = key;

	return a[0] == b[0] && a[1] == b[1] && memcmp(a + 2, b + 2, a[1] * sizeof(*a)) == 0;
}

/*
 * Adds count to the stack whose key was just appended at keys[at..]; drops
 * the copy if known. Its index among the merged stacks in *ret.
 */
static int merge_stack(struct merge *m, size_t at, uint64_t count, uint32_t *ret)
{
	const uint32_t *key = m->keys + at;
	uint64_t h = fg_hash_bytes(key, (2 + key[1]) * sizeof(*key), 0x736c696365ULL);
	int64_t i = fg_idxmap_find(&m->stack_index, h, stack_eq, m, key);

	if (i >= 0) {
		m->keys_len = at;
		m->counts[i] =
			m->counts[i] + count < m->counts[i] ? UINT64_MAX : m->counts[i] + count;
		*ret = (uint32_t)i;
		return 0;
	}
	if (m->n_stacks >= UINT32_MAX || FG_GROW(m->key_off, m->cap_stacks, m->n_stacks + 1) < 0 ||
	    FG_GROW(m->counts, m->cap_counts, m->n_stacks + 1) < 0 ||
	    fg_idxmap_insert(&m->stack_index, h, (uint32_t)m->n_stacks) < 0)
		return -ENOMEM;
	m->key_off[m->n_stacks] = at;
	m->counts[m->n_stacks] = count;
	*ret = (uint32_t)m->n_stacks++;
	return 0;
}

/* Merges s's stacks; with times, each stack's index among the merged ones in ids. */
static int merge_slice(struct merge *m, const struct fg_slicefile *s, uint32_t *ids)
{
	for (size_t i = 0; i < s->n_stacks; i++) {
		const struct fg_slicefile_stack *st = &s->stacks[i];
		size_t at = m->keys_len;
		uint32_t proc, idx;
		int r;

		r = merge_process(m, &s->procs[st->proc], &proc);
		if (r < 0)
			return r;
		if (FG_GROW(m->keys, m->keys_cap, at + 2 + st->n) < 0)
			return -ENOMEM;
		m->keys[at] = proc;
		m->keys[at + 1] = (uint32_t)st->n;
		for (size_t k = 0; k < st->n; k++) {
			const char *name = fg_slicefile__string(s, st->frames[k]);

			r = fg_strpool__intern(m->names, name, strlen(name), &m->keys[at + 2 + k]);
			if (r < 0)
				return r;
		}
		m->keys_len = at + 2 + st->n;
		r = merge_stack(m, at, st->count, &idx);
		if (r < 0)
			return r;
		if (ids)
			ids[i] = idx;
	}
	return 0;
}

/* Whether every slice has times, at one tick: the merged file then has them too. */
static bool all_timed(const struct fg_slicefile *const *slices, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!slices[i]->tick_ms || slices[i]->tick_ms != slices[0]->tick_ms)
			return false;
	return n > 0;
}

static bool same_frequency(const struct fg_slicefile *const *slices, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (slices[i]->frequency != slices[0]->frequency)
			return false;
	return true;
}

static int cmp_span(const void *a, const void *b)
{
	const struct fg_slicefile_span *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/*
 * The sources' stretches, cut to [start, end), into w: overlapping ones (a
 * clock set back) united with their losses added; abutting ones joined
 * when neither lost anything, so a loss keeps its own stretch.
 */
static int merge_coverage(const struct fg_slicefile *const *slices, size_t n, uint64_t start,
			  uint64_t end, struct fg_slicefile_writer *w)
{
	_cleanup_free_ struct fg_slicefile_span *v = NULL;
	struct fg_slicefile_span cur;
	size_t total = 0, k = 0;
	int r = 0;

	/* Present even when empty: sources outside [start, end) cover none of it. */
	w->has_cover = true;
	for (size_t i = 0; i < n; i++)
		total += slices[i]->n_cover;
	v = calloc(MAX(total, (size_t)1), sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < slices[i]->n_cover; j++) {
			struct fg_slicefile_span sp = slices[i]->cover[j];

			sp.start_ns = MAX(sp.start_ns, start);
			sp.end_ns = MIN(sp.end_ns, end);
			if (sp.start_ns < sp.end_ns)
				v[k++] = sp;
		}
	if (k == 0)
		return 0;
	qsort(v, k, sizeof(*v), cmp_span);
	cur = v[0];
	for (size_t i = 1; i < k && r >= 0; i++) {
		if (v[i].start_ns < cur.end_ns ||
		    (v[i].start_ns == cur.end_ns && cur.lost == 0 && v[i].lost == 0)) {
			cur.end_ns = MAX(cur.end_ns, v[i].end_ns);
			cur.lost =
				cur.lost + v[i].lost < cur.lost ? UINT64_MAX : cur.lost + v[i].lost;
			continue;
		}
		r = fg_slicefile_writer__add_coverage(w, &cur);
		cur = v[i];
	}
	return r >= 0 ? fg_slicefile_writer__add_coverage(w, &cur) : r;
}

int fg_slicefile_merge(const struct fg_slicefile *const *slices, size_t n, uint64_t start_ns,
		       uint64_t end_ns, struct fg_slicefile_writer **ret)
{
	struct merge m = {};
	struct fg_slicefile_writer *w = NULL;
	const char *frames[FG_SLICEFILE_MAX_DEPTH];
	bool timed = all_timed(slices, n);
	uint32_t **ids = NULL; /* with times: per slice, each stack's merged index */
	int r = -ENOMEM;

	m.names = fg_strpool__new();
	if (!m.names)
		goto out;
	if (timed) {
		ids = calloc(n, sizeof(*ids));
		if (!ids)
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (timed) {
			ids[i] = malloc(MAX(slices[i]->n_stacks, (size_t)1) * sizeof(**ids));
			if (!ids[i]) {
				r = -ENOMEM;
				goto out;
			}
		}
		r = merge_slice(&m, slices[i], timed ? ids[i] : NULL);
		if (r < 0)
			goto out;
	}
	r = fg_slicefile_writer__new(start_ns, end_ns, &w);
	/* One rate for the merged file if its sources agree; else unknown. */
	if (r >= 0 && n > 0 && same_frequency(slices, n))
		fg_slicefile_writer__set_frequency(w, slices[0]->frequency);
	for (size_t i = 0; i < m.n_procs && r >= 0; i++) {
		uint32_t idx;

		/* Written in the order first seen, so index i is process i. */
		r = fg_slicefile_writer__add_process(w, m.procs[i], &idx);
	}
	for (size_t i = 0; i < m.n_stacks && r >= 0; i++) {
		const uint32_t *key = m.keys + m.key_off[i];

		for (uint32_t k = 0; k < key[1]; k++)
			frames[k] = fg_strpool__str(m.names, key[2 + k]);
		r = fg_slicefile_writer__add_stack(w, key[0], frames, key[1], m.counts[i]);
	}
	/* What the sources covered, and no more: a gap between them stays one. */
	if (r >= 0)
		r = merge_coverage(slices, n, start_ns, end_ns, w);
	/* Each source's times: ticks of one length line up. */
	if (r >= 0 && timed)
		r = fg_slicefile_writer__set_times(w, slices[0]->tick_ms);
	for (size_t i = 0; timed && i < n && r >= 0; i++) {
		const struct fg_slicefile *s = slices[i];

		for (size_t k = 0; k < s->n_times && r >= 0; k++)
			r = fg_slicefile_writer__add_time(w, ids[i][s->times[k].stack],
							  s->times[k].time_ms, s->times[k].count);
	}
out:
	for (size_t i = 0; ids && i < n; i++)
		free(ids[i]);
	free(ids);
	merge_done(&m);
	if (r < 0) {
		fg_slicefile_writer__free(w);
		return r;
	}
	*ret = w;
	return 0;
}
