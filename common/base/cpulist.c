/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "base/cpulist.h"
#include "base/macro.h"

/* Far above any real machine; bounds what a bogus list can make us allocate. */
#define MAX_CPU 65536

static int parse_num(const char **p, long *ret)
{
	char *end;
	long v;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(*p, &end, 10);
	if (errno || v < 0 || v >= MAX_CPU)
		return -EINVAL;
	*p = end;
	*ret = v;
	return 0;
}

int fg_cpulist_parse(const char *s, int **ret_cpus, size_t *ret_n)
{
	_cleanup_free_ int *cpus = NULL;
	size_t n = 0, cap = 0;
	long last = -1;

	while (*s && *s != '\n') {
		long lo, hi;
		int r = parse_num(&s, &lo);

		if (r < 0)
			return r;
		hi = lo;
		if (*s == '-') {
			s++;
			r = parse_num(&s, &hi);
			if (r < 0)
				return r;
		}
		/* Ranges must ascend, so the result is sorted and duplicate-free. */
		if (hi < lo || lo <= last)
			return -EINVAL;
		r = FG_GROW(cpus, cap, n + (size_t)(hi - lo + 1));
		if (r < 0)
			return r;
		for (long c = lo; c <= hi; c++)
			cpus[n++] = (int)c;
		last = hi;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	if (n == 0)
		return -EINVAL;
	*ret_cpus = TAKE_PTR(cpus);
	*ret_n = n;
	return 0;
}
