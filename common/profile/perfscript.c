/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "profile/framename.h"
#include "profile/perfscript.h"
#include "profile/timed.h"

enum state {
	BETWEEN,   /* after a blank line: the next header starts a sample */
	IN_SAMPLE, /* after a header: stack lines belong to it */
	SKIPPING,  /* after a filtered header: its stack lines are ignored */
};

struct buf {
	char *data; /* owned */
	size_t len, cap;
};

struct fg_perfscript {
	struct fg_folded *out;          /* borrowed until __free() */
	struct fg_timed *timed;         /* borrowed until __free(); NULL: no times */
	struct fg_perfscript_opts opts; /* .event_filter not used past __new() */
	struct buf filter;              /* the event kept; valid when has_filter */
	bool has_filter;
	struct buf first_event; /* the first event seen, to notice a second */
	bool seen_event;
	enum state state;
	struct buf pname; /* root frame(s) of the current sample */
	bool java;        /* pname starts with "java" */
	double count;
	bool counts_period; /* the current sample counts its period */
	int cpu;            /* the current header's "[NNN]"; -1: none */
	int64_t time_ms;    /* the current sample's, when has_time */
	bool has_time;
	uint32_t *ids; /* owned; frame ids of the current sample, leaf first */
	size_t n_ids, cap_ids;
	uint32_t *stack; /* owned; the sample root first, as added to the model */
	size_t cap_stack;
	/* Ids pushed by an "(inlined)" line, dropped if the next line has its IP. */
	size_t pending_inline;
	struct buf pending_ip;
	struct buf frame; /* owned scratch for building one frame name */
	struct fg_perfscript_stats stats;
};

/* Perl's \s, \w and \d on bytes: ASCII only. */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_word(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int buf_set(struct buf *b, const char *s, size_t len)
{
	int r = FG_GROW(b->data, b->cap, len + 1);

	if (r < 0)
		return r;
	memcpy(b->data, s, len);
	b->data[len] = '\0';
	b->len = len;
	return 0;
}

static int buf_add(struct buf *b, const char *s, size_t len)
{
	int r = FG_GROW(b->data, b->cap, b->len + len + 1);

	if (r < 0)
		return r;
	memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

static int buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

static bool mem_has(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

static void copy_event(char dst[static 64], const char *s, size_t len)
{
	len = MIN(len, (size_t)63);
	memcpy(dst, s, len);
	dst[len] = '\0';
}

int fg_perfscript__new_timed(struct fg_timed *out, const struct fg_perfscript_opts *opts,
			     struct fg_perfscript **ret)
{
	int r = fg_perfscript__new(fg_timed__model(out), opts, ret);

	if (r >= 0)
		(*ret)->timed = out;
	return r;
}

int fg_perfscript__new(struct fg_folded *out, const struct fg_perfscript_opts *opts,
		       struct fg_perfscript **ret)
{
	_cleanup_(fg_perfscript__freep) struct fg_perfscript *p = NULL;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->out = out;
	if (opts)
		p->opts = *opts;
	p->opts.event_filter = NULL;
	if (opts && opts->event_filter) {
		r = buf_set(&p->filter, opts->event_filter, strlen(opts->event_filter));
		if (r < 0)
			return r;
		p->has_filter = true;
		copy_event(p->stats.event, p->filter.data, p->filter.len);
	}
	*ret = TAKE_PTR(p);
	return 0;
}

struct fg_perfscript *fg_perfscript__free(struct fg_perfscript *p)
{
	if (!p)
		return NULL;
	free(p->filter.data);
	free(p->first_event.data);
	free(p->pname.data);
	free(p->ids);
	free(p->stack);
	free(p->pending_ip.data);
	free(p->frame.data);
	free(p);
	return NULL;
}

static void malformed(struct fg_perfscript *p, uint64_t lineno)
{
	if (p->stats.malformed++ == 0)
		p->stats.first_bad_line = lineno;
}

static int push_id(struct fg_perfscript *p, uint32_t id)
{
	int r = FG_GROW(p->ids, p->cap_ids, p->n_ids + 1);

	if (r < 0)
		return r;
	p->ids[p->n_ids++] = id;
	return 0;
}

/* Adds the current sample: pname's frames, then the stack reversed to root first. */
static int flush(struct fg_perfscript *p)
{
	size_t n = 0, start = 0;
	int r;

	p->state = BETWEEN;
	p->pending_inline = 0;
	/* A ';' in a comm splits it, so that stacks merge as the script's strings do. */
	for (;;) {
		const char *semi = memchr(p->pname.data + start, ';', p->pname.len - start);
		size_t end = semi ? (size_t)(semi - p->pname.data) : p->pname.len;

		r = FG_GROW(p->stack, p->cap_stack, n + 1 + p->n_ids);
		if (r < 0)
			return r;
		r = fg_folded__intern(p->out, p->pname.data + start, end - start, &p->stack[n++]);
		if (r < 0)
			return r;
		if (!semi)
			break;
		start = end + 1;
	}
	for (size_t i = p->n_ids; i > 0; i--)
		p->stack[n++] = p->ids[i - 1];
	p->n_ids = 0;
	if (p->timed) {
		/* A heat map places each sample: one without a time has no place. */
		if (!p->has_time) {
			p->stats.untimed++;
			return 0;
		}
		r = fg_timed__add(p->timed, p->time_ms, p->stack, n, 1);
	} else {
		r = fg_folded__add(p->out, p->stack, n, p->count);
	}
	if (r < 0)
		return r;
	p->stats.samples++;
	p->stats.period_samples += !p->timed && p->counts_period;
	return 0;
}

const char *fg_perfscript_count_name(const struct fg_perfscript_stats *st, char *buf, size_t size)
{
	size_t len = strcspn(st->event, ":");

	if (st->period_samples == 0 || len == 0)
		return "samples";
	if ((len == 9 && memcmp(st->event, "cpu-clock", 9) == 0) ||
	    (len == 10 && memcmp(st->event, "task-clock", 10) == 0))
		return "ns";
	snprintf(buf, size, "%.*s", (int)len, st->event);
	return buf;
}

/*
 * The script's header pattern, ^(\S.+?)\s+(\d+)\/ *(\d+)*\s+ (no blank
 * before the '*'): the comm is
 * the shortest prefix of at least two bytes, starting with a non-blank,
 * that is followed by blanks, digits, optional slashes and digits, and a
 * blank. Returns the position after the last digits, or 0 for no match.
 */
struct header {
	size_t comm_len;
	const char *d1, *d2; /* the PID (or TID) digits and the TID digits */
	size_t d1_len, d2_len;
};

static size_t match_header(const char *s, size_t len, struct header *h)
{
	if (len < 2 || is_space(s[0]))
		return 0;
	for (size_t i = 2; i < len;) {
		size_t j = i, d1, slash, d2;

		if (!is_space(s[i])) {
			i++;
			continue;
		}
		/* Every start inside one run of blanks gives the same tail. */
		while (j < len && is_space(s[j]))
			j++;
		d1 = j;
		while (j < len && is_digit(s[j]))
			j++;
		slash = j;
		while (j < len && s[j] == '/')
			j++;
		d2 = j;
		while (j < len && is_digit(s[j]))
			j++;
		if (slash > d1 && j < len && is_space(s[j])) {
			*h = (struct header){
				.comm_len = i,
				.d1 = s + d1,
				.d1_len = slash - d1,
				.d2 = s + d2,
				.d2_len = j - d2,
			};
			return j;
		}
		i = MAX(d1, i + 1);
	}
	return 0;
}

/*
 * The script's /:\s*(\d+)*\s+(\S+):\s*$/ on the whole header: the last
 * word, ending in ':', names the event, and before it come ':', optional
 * blanks, optional period digits and blanks. Returns false for no match.
 */
static bool match_event(const char *s, size_t len, const char **ret_event, size_t *ret_event_len,
			const char **ret_period, size_t *ret_period_len)
{
	size_t end = len, a, k, dig_end;

	while (end > 0 && is_space(s[end - 1]))
		end--;
	if (end < 2 || s[end - 1] != ':')
		return false;
	a = end - 1;
	while (a > 0 && !is_space(s[a - 1]))
		a--;
	if (a == end - 1 || a == 0)
		return false;
	/* Backwards: blanks (at least one), digits, blanks, then the ':'. */
	k = a;
	while (k > 0 && is_space(s[k - 1]))
		k--;
	dig_end = k;
	while (k > 0 && is_digit(s[k - 1]))
		k--;
	*ret_period = s + k;
	*ret_period_len = dig_end - k;
	while (k > 0 && is_space(s[k - 1]))
		k--;
	if (k == 0 || s[k - 1] != ':')
		return false;
	*ret_event = s + a;
	*ret_event_len = end - 1 - a;
	return true;
}

/*
 * The script's stack-line pattern, /^\s*(\w+)\s*(.+) \((.*)\)/, with perl's
 * backtracking: the DSO is between the last " (" that has a ')' after it
 * and the last ')'; the symbol is what lies between the IP and the DSO,
 * and takes at least one byte from the IP or its blanks if it must.
 */
struct frame_line {
	const char *pc, *func, *mod;
	size_t pc_len, func_len, mod_len;
};

static bool match_stack(const char *s, size_t len, struct frame_line *fl)
{
	size_t st = 0, w_end, f0, paren, j, f;
	const char *rp;

	while (st < len && is_space(s[st]))
		st++;
	if (st == len || !is_word(s[st]))
		return false;
	w_end = st;
	while (w_end < len && is_word(s[w_end]))
		w_end++;
	f0 = w_end;
	while (f0 < len && is_space(s[f0]))
		f0++;
	rp = memrchr(s, ')', len);
	if (!rp)
		return false;
	paren = (size_t)(rp - s);
	/* The last " (" at j with j + 2 <= paren. */
	if (paren < 2)
		return false;
	for (j = paren - 2;; j--) {
		if (s[j] == ' ' && s[j + 1] == '(')
			break;
		if (j == 0)
			return false;
	}
	/* (.+) needs a byte, and (\w+) keeps at least one. */
	if (j < st + 2)
		return false;
	f = MIN(f0, j - 1);
	*fl = (struct frame_line){
		.pc = s + st,
		.pc_len = MIN(w_end, f) - st,
		.func = s + f,
		.func_len = j - f,
		.mod = s + j + 2,
		.mod_len = paren - (j + 2),
	};
	return true;
}

static bool is_lower_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f');
}

/* Strips a trailing "+0x" and lowercase hex digits, the symbol offset. */
static size_t strip_offset(const char *s, size_t len)
{
	size_t k = len;

	while (k > 0 && is_lower_hex(s[k - 1]))
		k--;
	if (k == len || k < 3 || s[k - 1] != 'x' || s[k - 2] != '0' || s[k - 3] != '+')
		return len;
	return k - 3;
}

/* m/\.\(.*\)\./: a Go method such as "net/http.(*Client).Do" */
static bool mod_is_jit(const char *mod, size_t len)
{
	static const char prefix[] = "/tmp/perf-";
	const char *m = mod, *end = mod + len;

	while ((m = memmem(m, (size_t)(end - m), prefix, sizeof(prefix) - 1))) {
		const char *d = m + sizeof(prefix) - 1, *q = d;

		while (q < end && is_digit(*q))
			q++;
		if (q > d && (size_t)(end - q) >= 4 && memcmp(q, ".map", 4) == 0)
			return true;
		m++;
	}
	return false;
}

static bool mod_is_kernel(const char *mod, size_t len)
{
	static const char vmlinux[] = "vmlinux";
	size_t vl = sizeof(vmlinux) - 1;

	if (mem_has(mod, len, "unknown"))
		return false;
	if (len > 0 && mod[0] == '[')
		return true;
	return len >= vl && memcmp(mod + len - vl, vmlinux, vl) == 0;
}

/* One "->"-separated piece of a symbol, tidied and annotated as the script does. */
static int add_piece(struct fg_perfscript *p, const struct frame_line *fl, const char *piece,
		     size_t len, bool inlined, uint32_t *ret_id)
{
	struct buf *b = &p->frame;
	int r;

	b->len = 0;
	if (len == 9 && memcmp(piece, "[unknown]", 9) == 0) {
		const char *name = "unknown";
		size_t name_len = 7;

		if (!(fl->mod_len == 9 && memcmp(fl->mod, "[unknown]", 9) == 0)) {
			const char *slash = memrchr(fl->mod, '/', fl->mod_len);

			name = slash ? slash + 1 : fl->mod;
			name_len = fl->mod_len - (size_t)(name - fl->mod);
		}
		r = buf_add(b, "[", 1);
		if (r >= 0)
			r = buf_add(b, name, name_len);
		if (r >= 0 && p->opts.addrs) {
			r = buf_add(b, " <", 2);
			if (r >= 0)
				r = buf_add(b, fl->pc, fl->pc_len);
			if (r >= 0)
				r = buf_add(b, ">", 1);
		}
		if (r >= 0)
			r = buf_add(b, "]", 1);
	} else {
		r = buf_add(b, piece, len);
	}
	if (r < 0)
		return r;

	b->len = fg_framename_tidy(b->data, b->len, p->java);

	if (inlined) {
		if (!mem_has(b->data, b->len, "_[i]"))
			r = buf_adds(b, "_[i]");
	} else if (p->opts.annotate_kernel && mod_is_kernel(fl->mod, fl->mod_len)) {
		r = buf_adds(b, "_[k]");
	} else if (p->opts.annotate_jit && mod_is_jit(fl->mod, fl->mod_len)) {
		if (!mem_has(b->data, b->len, "_[j]"))
			r = buf_adds(b, "_[j]");
	}
	if (r < 0)
		return r;
	return fg_folded__intern(p->out, b->data, b->len, ret_id);
}

/*
 * Pushes the frames of one stack line. The pieces of a "->" symbol go in
 * reversed, so that reversing the whole stack keeps them in their order.
 */
static int add_frames(struct fg_perfscript *p, const struct frame_line *fl)
{
	size_t len = strip_offset(fl->func, fl->func_len), end, n_pieces = 0, start;
	const char *s = fl->func;
	size_t first = p->n_ids;
	int r;

	if (len > 0 && s[0] == '(')
		return 0;
	/* perl's split drops trailing empty fields. */
	end = len;
	while (end >= 2 && s[end - 2] == '-' && s[end - 1] == '>')
		end -= 2;
	if (end == 0)
		return 0;
	for (start = 0;;) {
		const char *arrow = memmem(s + start, end - start, "->", 2);
		size_t stop = arrow ? (size_t)(arrow - s) : end;
		uint32_t id;

		r = add_piece(p, fl, s + start, stop - start, n_pieces > 0, &id);
		if (r < 0)
			return r;
		r = push_id(p, id);
		if (r < 0)
			return r;
		n_pieces++;
		if (!arrow)
			break;
		start = stop + 2;
	}
	for (size_t i = 0; i < n_pieces / 2; i++) {
		uint32_t t = p->ids[first + i];

		p->ids[first + i] = p->ids[p->n_ids - 1 - i];
		p->ids[p->n_ids - 1 - i] = t;
	}
	return (int)n_pieces;
}

static int stack_line(struct fg_perfscript *p, const struct frame_line *fl)
{
	bool inlined = fl->mod_len == 7 && memcmp(fl->mod, "inlined", 7) == 0;
	int n, r;

	/* An inlined frame is dropped once the next line shows the same address. */
	if (p->pending_inline > 0 && fl->pc_len == p->pending_ip.len &&
	    memcmp(fl->pc, p->pending_ip.data, fl->pc_len) == 0)
		p->n_ids -= p->pending_inline;
	p->pending_inline = 0;
	n = add_frames(p, fl);
	if (n < 0)
		return n;
	if (p->opts.no_inline && inlined && n > 0) {
		r = buf_set(&p->pending_ip, fl->pc, fl->pc_len);
		if (r < 0)
			return r;
		p->pending_inline = (size_t)n;
	}
	return 0;
}

/*
 * Applies the event filter. Returns 1 to keep the sample, 0 to skip it,
 * or a negative errno.
 */
static int filter_event(struct fg_perfscript *p, const char *event, size_t len)
{
	int r;

	if (!p->seen_event) {
		r = buf_set(&p->first_event, event, len);
		if (r < 0)
			return r;
		p->seen_event = true;
	} else if (!p->stats.multiple_events &&
		   (len != p->first_event.len || memcmp(event, p->first_event.data, len) != 0)) {
		p->stats.multiple_events = true;
	}
	if (!p->has_filter) {
		/* Merging cycles with instructions would mislead: keep the first. */
		r = buf_set(&p->filter, event, len);
		if (r < 0)
			return r;
		p->has_filter = true;
		copy_event(p->stats.event, event, len);
		return 1;
	}
	return len == p->filter.len && memcmp(event, p->filter.data, len) == 0;
}

static int parse_period(const char *digits, size_t len, double *ret)
{
	char tmp[512];
	double v;

	/* Perl's truthiness: no period, or "0", counts 1. */
	if (len == 0 || (len == 1 && digits[0] == '0')) {
		*ret = 1;
		return 0;
	}
	if (len >= sizeof(tmp))
		return -ERANGE;
	memcpy(tmp, digits, len);
	tmp[len] = '\0';
	v = strtod(tmp, NULL);
	if (!isfinite(v))
		return -ERANGE;
	*ret = v;
	return 0;
}

static int set_pname(struct fg_perfscript *p, const char *line, const struct header *h)
{
	bool pid_known = h->d2_len > 0 && !(h->d2_len == 1 && h->d2[0] == '0');
	const char *pid = pid_known ? h->d1 : "?", *tid = pid_known ? h->d2 : h->d1;
	size_t pid_len = pid_known ? h->d1_len : 1, tid_len = pid_known ? h->d2_len : h->d1_len;
	int r;

	r = buf_set(&p->pname, line, h->comm_len);
	if (r >= 0 && (p->opts.tid || p->opts.pid)) {
		r = buf_add(&p->pname, "-", 1);
		if (r >= 0)
			r = buf_add(&p->pname, pid, pid_len);
		if (r >= 0 && p->opts.tid) {
			r = buf_add(&p->pname, "/", 1);
			if (r >= 0)
				r = buf_add(&p->pname, tid, tid_len);
		}
	}
	if (r < 0)
		return r;
	for (size_t i = 0; i < p->pname.len; i++)
		if (p->pname.data[i] == ' ')
			p->pname.data[i] = '_';
	p->java = p->pname.len >= 4 && memcmp(p->pname.data, "java", 4) == 0;
	return 0;
}

struct event {
	const char *name, *period; /* name NULL: the header names no event */
	size_t name_len, period_len;
};

/*
 * perf script's time, "SECONDS.FRACTION:", as ms (the fraction cut to ms);
 * false if tok is not one.
 */
static bool parse_time(const char *tok, size_t len, int64_t *ret_ms)
{
	int64_t ms = 0;
	size_t i = 0, frac = 0;

	if (len < 2 || tok[len - 1] != ':')
		return false;
	len--;
	for (; i < len && is_digit(tok[i]); i++) {
		if (ms > FG_TIMED_TIME_MAX / 1000) /* past any time a timed profile holds */
			return false;
		ms = ms * 10 + (tok[i] - '0');
	}
	if (i == 0)
		return false;
	ms *= 1000;
	if (i < len && tok[i] == '.') {
		for (i++; i < len && is_digit(tok[i]); i++, frac++)
			if (frac < 3)
				ms += (tok[i] - '0') * (frac == 0 ? 100 : frac == 1 ? 10 : 1);
	}
	if (i != len || ms > FG_TIMED_TIME_MAX)
		return false;
	*ret_ms = ms;
	return true;
}

/* The next blank-separated token at or after pos: [*ret_start, *ret_end). */
static void next_token(const char *s, size_t len, size_t pos, size_t *ret_start, size_t *ret_end);

/*
 * The time in a header after its TID (at pos): an optional "[CPU]", then
 * "SECONDS.FRACTION:" (perf script prints it unless -F leaves it out).
 */
static void header_time(struct fg_perfscript *p, const char *line, size_t len, size_t pos)
{
	size_t a, b;

	next_token(line, len, pos, &a, &b);
	if (a < b && line[a] == '[')
		next_token(line, len, b, &a, &b);
	p->has_time = parse_time(line + a, b - a, &p->time_ms);
}

/* Whether the current header's CPU is one opts.cpus asks for (all, without a list). */
static bool on_cpus(const struct fg_perfscript *p)
{
	for (size_t i = 0; i < p->opts.n_cpus; i++)
		if (p->opts.cpus[i] == p->cpu)
			return true;
	return p->opts.n_cpus == 0;
}

/*
 * A header: sets up the sample. Returns 1 if it is kept, 0 if filtered or
 * malformed, or a negative errno.
 */
static int header_line(struct fg_perfscript *p, const char *line, const struct header *h,
		       const struct event *ev, uint64_t lineno)
{
	double count = 1;
	int r;

	p->n_ids = 0;
	p->pending_inline = 0;
	p->state = SKIPPING;
	if (ev->name) {
		r = filter_event(p, ev->name, ev->name_len);
		if (r < 0)
			return r;
		if (r == 0) {
			p->stats.filtered++;
			return 0;
		}
		if (parse_period(ev->period, ev->period_len, &count) < 0) {
			malformed(p, lineno);
			return 0;
		}
	}
	if (!on_cpus(p)) {
		p->stats.other_cpus++;
		return 0;
	}
	r = set_pname(p, line, h);
	if (r < 0)
		return r;
	p->count = p->opts.count_samples ? 1 : count;
	/* parse_period() counts 1 for no period or "0": only a real one is a period counted. */
	p->counts_period = !p->opts.count_samples && ev->name &&
			   !(ev->period_len == 0 || (ev->period_len == 1 && ev->period[0] == '0'));
	p->state = IN_SAMPLE;
	return 1;
}

/* The next blank-separated token at or after pos: [*ret_start, *ret_end). */
static void next_token(const char *s, size_t len, size_t pos, size_t *ret_start, size_t *ret_end)
{
	while (pos < len && is_space(s[pos]))
		pos++;
	*ret_start = pos;
	while (pos < len && !is_space(s[pos]))
		pos++;
	*ret_end = pos;
}

static bool all_digits(const char *s, size_t len, bool dot_ok)
{
	for (size_t i = 0; i < len; i++)
		if (!is_digit(s[i]) && !(dot_ok && s[i] == '.'))
			return false;
	return len > 0;
}

/* The CPU of the "[NNN]" token after a header's pid and tid (at pos), or -1. */
static int header_cpu(const char *line, size_t len, size_t pos)
{
	size_t a, b;
	int cpu = 0;

	next_token(line, len, pos, &a, &b);
	if (b - a < 3 || b - a > 9 || line[a] != '[' || line[b - 1] != ']' ||
	    !all_digits(line + a + 1, b - a - 2, false))
		return -1;
	for (size_t i = a + 1; i < b - 1; i++)
		cpu = cpu * 10 + (line[i] - '0');
	return cpu;
}

/*
 * A sample perf printed on one line, without a callchain:
 * "   comm  TID [CPU] TIME: PERIOD EVENT:  IP SYM+OFF (DSO)", the comm
 * right-aligned; every field but the comm and TID is optional. Returns 1
 * if the line was one (added, filtered or malformed), 0 if not, or a
 * negative errno.
 */
static int oneline_sample(struct fg_perfscript *p, const char *line, size_t len, uint64_t lineno)
{
	struct event ev = {};
	struct header h;
	struct frame_line fl;
	size_t st = 0, pos, a, b, c, d;
	int r;

	while (st < len && is_space(line[st]))
		st++;
	pos = match_header(line + st, len - st, &h);
	if (pos == 0)
		return 0;
	pos += st;
	header_time(p, line, len, pos);
	p->cpu = header_cpu(line, len, pos);
	next_token(line, len, pos, &a, &b);
	if (a < b && line[a] == '[') { /* [CPU] */
		pos = b;
		next_token(line, len, pos, &a, &b);
	}
	if (b - a > 1 && line[b - 1] == ':' && all_digits(line + a, b - a - 1, true)) { /* TIME: */
		pos = b;
		next_token(line, len, pos, &a, &b);
	}
	next_token(line, len, b, &c, &d);
	if (all_digits(line + a, b - a, false) && d - c > 1 && line[d - 1] == ':') {
		ev = (struct event){ line + c, line + a, d - 1 - c, b - a };
		pos = d;
	} else if (b - a > 1 && line[b - 1] == ':') {
		ev = (struct event){ .name = line + a, .name_len = b - 1 - a };
		pos = b;
	}
	r = header_line(p, line + st, &h, &ev, lineno);
	if (r <= 0) {
		p->state = BETWEEN;
		return r < 0 ? r : 1;
	}
	if (match_stack(line + pos, len - pos, &fl)) {
		r = stack_line(p, &fl);
		if (r < 0)
			return r;
	}
	r = flush(p);
	return r < 0 ? r : 1;
}

int fg_perfscript__feed(struct fg_perfscript *p, const char *line, size_t len, uint64_t lineno)
{
	struct header h;
	struct frame_line fl;
	size_t pos;
	int r;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len > 0 && line[0] == '#')
		return 0;
	if (len == 0) {
		if (p->state == IN_SAMPLE)
			return flush(p);
		p->state = BETWEEN;
		return 0;
	}
	pos = match_header(line, len, &h);
	if (pos > 0) {
		struct event ev = {};

		if (p->state == IN_SAMPLE) {
			r = flush(p);
			if (r < 0)
				return r;
		}
		header_time(p, line, len, pos);
		p->cpu = header_cpu(line, len, pos);
		if (!match_event(line, len, &ev.name, &ev.name_len, &ev.period, &ev.period_len))
			ev.name = NULL;
		r = header_line(p, line, &h, &ev, lineno);
		return r < 0 ? r : 0;
	}
	if (p->state == BETWEEN && is_space(line[0])) {
		r = oneline_sample(p, line, len, lineno);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	/*
	 * Between samples, a line in column 0 that is no header is a broken
	 * one: its stack lines are ignored, as the script ignores them.
	 */
	if (p->state == BETWEEN && !is_space(line[0]))
		p->state = SKIPPING;
	if (match_stack(line, len, &fl))
		return p->state == IN_SAMPLE ? stack_line(p, &fl) : 0;
	malformed(p, lineno);
	return 0;
}

int fg_perfscript__finish(struct fg_perfscript *p)
{
	if (p->state == IN_SAMPLE)
		return flush(p);
	p->state = BETWEEN;
	return 0;
}

void fg_perfscript__stats(const struct fg_perfscript *p, struct fg_perfscript_stats *ret)
{
	*ret = p->stats;
}
