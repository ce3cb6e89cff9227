/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "profile/procframe.h"

/* Whether s[0..len) is a pid or tid as written: 1 to 10 digits. */
static bool all_digits(const char *s, size_t len)
{
	if (len == 0 || len > 10)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

void fg_procframe_split(const char *name, size_t len, bool pid, bool tid, struct fg_procframe *ret)
{
	const char *dash, *end = name + len, *slash;

	*ret = (struct fg_procframe){ .comm_len = len };
	if (!pid && !tid)
		return;
	dash = memrchr(name, '-', len);
	if (!dash)
		return;
	slash = tid ? memchr(dash, '/', (size_t)(end - dash)) : end;
	if (!slash || !all_digits(dash + 1, (size_t)(slash - dash - 1)))
		return;
	if (tid) {
		if (!all_digits(slash + 1, (size_t)(end - slash - 1)))
			return;
		ret->tid = slash + 1;
		ret->tid_len = (size_t)(end - slash - 1);
	}
	ret->pid = dash + 1;
	ret->pid_len = (size_t)(slash - dash - 1);
	ret->comm_len = (size_t)(dash - name);
}
