/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/parse.h"

int fg_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *ret)
{
	unsigned long long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > max)
			return -EINVAL;
	}
	if (v < min)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

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

int fg_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fg_read_fd(int fd, size_t max, char **ret_text, size_t *ret_len)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	/* Grown as it is read: /proc files say no size, and most files are small. */
	for (;;) {
		ssize_t n;

		if (FG_GROW(buf, cap, MIN(len + 65536, max + 1) + 1) < 0)
			return -ENOMEM;
		n = read(fd, buf + len, MIN(cap - 1, max + 1) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max)
			return -EFBIG;
	}
	buf[len] = '\0';
	*ret_text = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

int fg_read_file(const char *path, size_t max, char **ret_text, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return negative_errno();
	return fg_read_fd(fd, max, ret_text, ret_len);
}
