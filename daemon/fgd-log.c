/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "fgd-log.h"

int fg_log_max_level = LOG_INFO;

void fg_log(int level, const char *fmt, ...)
{
	static int tty = -1;
	int saved = errno;
	va_list ap;

	if (level > fg_log_max_level)
		return;
	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	if (!tty)
		fprintf(stderr, "<%d>", level);
	va_start(ap, fmt);
	errno = saved; /* so %m works */
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	errno = saved;
}
