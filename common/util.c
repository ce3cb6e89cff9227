/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>

#include "macro.h"

int fg_grow(void **array, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = MAX(*cap * 2, (size_t)16);
	if (ncap < need)
		ncap = need;
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*array, ncap * elem);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = ncap;
	return 0;
}
