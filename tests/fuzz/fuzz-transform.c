/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filters and diffs of folded input from any tool and any user, with
 * user-supplied regexes. Input: a flags byte (FLAG_*), a byte holding the
 * lengths of two patterns (low nibble: include and focus; high: exclude),
 * the patterns, then folded text. The text is one model for fg_transform()
 * and, line by line alternately, the two profiles of fg_folded_diff().
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile/folded.h"
#include "profile/framename.h"
#include "profile/transform.h"
#include "render/palette.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	FLAG_NO_IDLE = 1 << 0,
	FLAG_INCLUDE = 1 << 1,
	FLAG_EXCLUDE = 1 << 2,
	FLAG_IGNORE_CASE = 1 << 3,
	FLAG_FOCUS = 1 << 4,
	FLAG_COLLAPSE = 1 << 5,
	FLAG_REVERSE = 1 << 6,
	FLAG_NORMALIZE = 1 << 7,
};

#define check(x)                 \
	do {                     \
		if (!(x))        \
			abort(); \
	} while (0)

/* Sums in different orders agree to rounding; infinite totals are not compared. */
static bool close_to(double a, double b)
{
	if (!isfinite(a) || !isfinite(b))
		return true;
	return fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b));
}

static int discard(void *ctx, const void *buf, size_t len)
{
	*(size_t *)ctx += len;
	return 0;
}

static void check_model(struct fg_folded *f)
{
	size_t cursor = 0, written = 0;

	for (size_t i = 0; i < fg_folded__n_stacks(f); i++) {
		struct fg_stack s;

		fg_folded__stack(f, i, &s);
		check(s.n_frames > 0);
		check(s.count >= 0 && s.before >= 0);
	}
	if (fg_folded__sort(f) == 0)
		while (fg_folded__emit(f, &cursor, discard, &written, 4096) == 0)
			;
}

/* Frame id is the one --focus name means: spelled so, or annotated with it as its plain name. */
static bool is_focus(const struct fg_folded *f, uint32_t id, const char *name)
{
	const char *s = fg_folded__name(f, id);
	size_t len = fg_folded__name_len(f, id), want = strlen(name);

	return (len == want || fg_name_display_len(s, len) == want) && memcmp(s, name, want) == 0;
}

static void check_transform(const struct fg_folded *in, const struct fg_transform_opts *o)
{
	struct fg_folded *out = NULL;
	struct fg_transform_stats st;
	char err[64];
	int r;

	r = fg_transform(in, o, &out, &st, err, sizeof(err));
	if (r < 0) {
		check(r == -ENOMEM || (r == -EINVAL && (o->include || o->exclude)));
		if (r == -EINVAL)
			check(memchr(err, '\0', sizeof(err)));
		return;
	}
	check(st.stacks_kept + st.stacks_dropped == fg_folded__n_stacks(in));
	check(fg_folded__n_stacks(out) <= st.stacks_kept);
	check(close_to(st.kept + st.dropped, fg_folded__total(in)));
	check(close_to(st.kept, fg_folded__total(out)));
	check(fg_folded__is_diff(out) == fg_folded__is_diff(in));
	for (size_t i = 0; i < fg_folded__n_stacks(out); i++) {
		struct fg_stack s;

		fg_folded__stack(out, i, &s);
		check(s.n_frames > 0);
		if (o->focus)
			check(is_focus(out, s.frames[o->reverse ? s.n_frames - 1 : 0], o->focus));
		if (o->collapse_recursion)
			for (size_t j = 1; j < s.n_frames; j++)
				check(s.frames[j] != s.frames[j - 1]);
	}
	check_model(out);
	fg_folded__free(out);
}

static void check_diff(const struct fg_folded *before, const struct fg_folded *after,
		       bool normalize, const struct fg_transform_opts *o)
{
	double tb = fg_folded__total(before), ta = fg_folded__total(after);
	struct fg_folded *out = NULL;
	int r;

	r = fg_folded_diff(before, after, normalize, &out);
	if (r < 0) {
		check(r == -ENOMEM ||
		      (r == -EINVAL && (fg_folded__is_diff(before) || fg_folded__is_diff(after))) ||
		      (r == -ERANGE && normalize && (isinf(ta) || isinf(tb))));
		return;
	}
	check(fg_folded__is_diff(out));
	check(fg_folded__n_stacks(out) <= fg_folded__n_stacks(before) + fg_folded__n_stacks(after));
	check(close_to(fg_folded__total(out), ta));
	check(close_to(fg_folded__total_before(out), normalize && ta > 0 && tb > 0 ? ta : tb));
	/* The merged model goes through the filters like any differential one. */
	check_transform(out, o);
	check_model(out);
	fg_folded__free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char include[16] = "", exclude[16] = "";
	size_t inc_len, exc_len;
	struct fg_folded *all, *a, *b;
	struct fg_transform_opts o;
	const char *p, *end;
	uint8_t flags;
	bool odd = false;

	if (size < 2)
		return 0;
	flags = data[0];
	inc_len = data[1] & 0xf;
	exc_len = data[1] >> 4;
	if (size < 2 + inc_len + exc_len)
		return 0;
	memcpy(include, data + 2, inc_len);
	memcpy(exclude, data + 2 + inc_len, exc_len);
	o = (struct fg_transform_opts){
		.no_idle = flags & FLAG_NO_IDLE,
		.include = flags & FLAG_INCLUDE ? include : NULL,
		.exclude = flags & FLAG_EXCLUDE ? exclude : NULL,
		.ignore_case = flags & FLAG_IGNORE_CASE,
		.focus = flags & FLAG_FOCUS ? include : NULL,
		.collapse_recursion = flags & FLAG_COLLAPSE,
		.reverse = flags & FLAG_REVERSE,
	};

	all = fg_folded__new();
	a = fg_folded__new();
	b = fg_folded__new();
	if (!all || !a || !b)
		goto out;
	p = (const char *)data + 2 + inc_len + exc_len;
	end = (const char *)data + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (fg_folded__add_line(all, p, len) > 0) {
			(void)fg_folded__add_line(odd ? b : a, p, len);
			odd = !odd;
		}
		p += len + 1;
	}
	check_transform(all, &o);
	check_diff(a, b, flags & FLAG_NORMALIZE, &o);
out:
	fg_folded__free(all);
	fg_folded__free(a);
	fg_folded__free(b);
	return 0;
}
