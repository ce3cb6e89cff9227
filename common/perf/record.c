/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "perf/record.h"

/* A bounds-checked reader over one record. */
struct cursor {
	const uint8_t *p;
	const uint8_t *end;
};

static int take(struct cursor *c, size_t n, const uint8_t **ret)
{
	if ((size_t)(c->end - c->p) < n)
		return -EFAULT;
	*ret = c->p;
	c->p += n;
	return 0;
}

static int take_u64(struct cursor *c, uint64_t *ret)
{
	const uint8_t *p;
	int r = take(c, 8, &p);

	if (r < 0)
		return r;
	*ret = *(const uint64_t *)p;
	return 0;
}

/* Two u32 packed in one u64 slot, as pid/tid and cpu/res are. */
static int take_u32x2(struct cursor *c, uint32_t *a, uint32_t *b)
{
	const uint8_t *p;
	int r = take(c, 8, &p);

	if (r < 0)
		return r;
	*a = ((const uint32_t *)p)[0];
	if (b)
		*b = ((const uint32_t *)p)[1];
	return 0;
}

/*
 * A NUL-terminated string padded to 8 bytes. In every record fgd reads it is
 * the last field of the body, so it owns the rest of it.
 */
static int take_string(struct cursor *c, const char **ret)
{
	if (!memchr(c->p, '\0', (size_t)(c->end - c->p)))
		return -EFAULT;
	*ret = (const char *)c->p;
	c->p = c->end;
	return 0;
}

static unsigned sample_id_slots(uint64_t t)
{
	return !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
	       !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
	       !!(t & PERF_SAMPLE_IDENTIFIER);
}

/* Decodes the sample_id trailer that sample_id_all appends to non-sample records. */
static int parse_sample_id(struct cursor *c, uint64_t t, struct fg_sample_id *sid)
{
	uint64_t skip;
	int r = 0;

	if (t & PERF_SAMPLE_TID)
		r = take_u32x2(c, &sid->pid, &sid->tid);
	if (r == 0 && (t & PERF_SAMPLE_TIME))
		r = take_u64(c, &sid->time);
	if (r == 0 && (t & PERF_SAMPLE_ID))
		r = take_u64(c, &sid->id);
	if (r == 0 && (t & PERF_SAMPLE_STREAM_ID))
		r = take_u64(c, &skip);
	if (r == 0 && (t & PERF_SAMPLE_CPU))
		r = take_u32x2(c, &sid->cpu, NULL);
	if (r == 0 && (t & PERF_SAMPLE_IDENTIFIER))
		r = take_u64(c, &sid->id);
	return r;
}

static int parse_sample(struct cursor *c, const struct fg_record_fmt *fmt, struct fg_record *rec)
{
	struct fg_sample *s = &rec->sample;
	uint64_t t = fmt->sample_type, skip;
	const uint8_t *p;
	int r;

	if (t & ~(uint64_t)FG_SAMPLE_TYPES_SUPPORTED)
		return -EINVAL;

#define STEP(expr)                \
	do {                      \
		r = (expr);       \
		if (r < 0)        \
			return r; \
	} while (0)

	if (t & PERF_SAMPLE_IDENTIFIER)
		STEP(take_u64(c, &s->sid.id));
	if (t & PERF_SAMPLE_IP)
		STEP(take_u64(c, &s->ip));
	if (t & PERF_SAMPLE_TID)
		STEP(take_u32x2(c, &s->sid.pid, &s->sid.tid));
	if (t & PERF_SAMPLE_TIME)
		STEP(take_u64(c, &s->sid.time));
	if (t & PERF_SAMPLE_ADDR)
		STEP(take_u64(c, &skip));
	if (t & PERF_SAMPLE_ID)
		STEP(take_u64(c, &s->sid.id));
	if (t & PERF_SAMPLE_STREAM_ID)
		STEP(take_u64(c, &skip));
	if (t & PERF_SAMPLE_CPU)
		STEP(take_u32x2(c, &s->sid.cpu, NULL));
	if (t & PERF_SAMPLE_PERIOD)
		STEP(take_u64(c, &s->period));
	if (t & PERF_SAMPLE_CALLCHAIN) {
		STEP(take_u64(c, &s->nr));
		if (s->nr > (uint64_t)(c->end - c->p) / 8)
			return -EFAULT;
		STEP(take(c, s->nr * 8, &p));
		s->ips = (const uint64_t *)p;
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t size;

		STEP(take(c, 4, &p));
		memcpy(&size, p, 4);
		/* u32 size + data are padded together to a multiple of 8. */
		if (size % 8 != 4)
			return -EINVAL;
		STEP(take(c, size, &p));
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		STEP(take_u64(c, &s->regs_abi));
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			s->n_regs = (uint32_t)__builtin_popcountll(fmt->sample_regs_user);
			STEP(take(c, (size_t)s->n_regs * 8, &p));
			s->regs = (const uint64_t *)p;
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		uint64_t size, dyn_size;

		STEP(take_u64(c, &size));
		if (size > 0) {
			if (size % 8)
				return -EINVAL;
			STEP(take(c, size, &p));
			STEP(take_u64(c, &dyn_size));
			if (dyn_size > size)
				return -EINVAL;
			s->stack = p;
			s->stack_size = dyn_size;
		}
	}
#undef STEP
	rec->sid = s->sid;
	return 0;
}

int fg_record_parse(const struct perf_event_header *h, const struct fg_record_fmt *fmt,
		    struct fg_record *ret)
{
	struct cursor c, trailer;
	struct fg_record rec = {};
	const uint8_t *p;
	int r = 0;

	if ((uintptr_t)h % 8)
		return -EINVAL;
	if (h->size < sizeof(*h))
		return -EFAULT;
	c.p = (const uint8_t *)(h + 1);
	c.end = (const uint8_t *)h + h->size;
	rec.type = h->type;
	rec.misc = h->misc;

	if (h->type == PERF_RECORD_SAMPLE) {
		r = parse_sample(&c, fmt, &rec);
		if (r < 0)
			return r;
		*ret = rec;
		return 0;
	}

	/* Peel the trailer off the end first, so the body cannot read into it. */
	if (fmt->sample_id_all) {
		size_t tsize = sample_id_slots(fmt->sample_type) * 8;

		if ((size_t)(c.end - c.p) < tsize)
			return -EFAULT;
		trailer.p = c.end - tsize;
		trailer.end = c.end;
		c.end = trailer.p;
		r = parse_sample_id(&trailer, fmt->sample_type, &rec.sid);
		if (r < 0)
			return r;
	}

	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		struct fg_mmap2 *m = &rec.mmap2;

		r = take_u32x2(&c, &m->pid, &m->tid);
		if (r == 0)
			r = take_u64(&c, &m->addr);
		if (r == 0)
			r = take_u64(&c, &m->len);
		if (r == 0)
			r = take_u64(&c, &m->pgoff);
		if (r == 0)
			r = take(&c, 24, &p);
		if (r < 0)
			break;
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			m->has_build_id = true;
			m->build_id_size = p[0];
			m->build_id = p + 4;
			if (m->build_id_size > 20)
				return -EINVAL;
		} else {
			memcpy(&m->maj, p, 4);
			memcpy(&m->min, p + 4, 4);
			memcpy(&m->ino, p + 8, 8);
			memcpy(&m->ino_generation, p + 16, 8);
		}
		r = take_u32x2(&c, &m->prot, &m->flags);
		if (r == 0)
			r = take_string(&c, &m->filename);
		break;
	}
	case PERF_RECORD_COMM:
		r = take_u32x2(&c, &rec.comm.pid, &rec.comm.tid);
		if (r == 0)
			r = take_string(&c, &rec.comm.comm);
		rec.comm.exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		r = take_u32x2(&c, &rec.task.pid, &rec.task.ppid);
		if (r == 0)
			r = take_u32x2(&c, &rec.task.tid, &rec.task.ptid);
		if (r == 0)
			r = take_u64(&c, &rec.task.time);
		break;
	case PERF_RECORD_LOST: {
		uint64_t id;

		r = take_u64(&c, &id);
		if (r == 0)
			r = take_u64(&c, &rec.lost);
		break;
	}
	case PERF_RECORD_LOST_SAMPLES:
		r = take_u64(&c, &rec.lost);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		r = take_u64(&c, &rec.throttle_time);
		break;
	default:
		break;
	}
	if (r < 0)
		return r;
	*ret = rec;
	return 0;
}
