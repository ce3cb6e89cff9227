/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/procfs.h"

int fg_parse_proc_stat(const char *line, char *comm, size_t comm_size, uint64_t *ret_starttime)
{
	const char *open_paren = strchr(line, '('), *close_paren = strrchr(line, ')'), *p;
	unsigned long long v = 0;

	if (!open_paren || !close_paren || close_paren < open_paren)
		return -EINVAL;
	/* After the ')': " state ppid ...", state being field 3; starttime is field 22. */
	p = close_paren + 1;
	for (int field = 3; field < 22; field++) {
		if (*p != ' ')
			return -EINVAL;
		p += strcspn(p + 1, " \n") + 1;
	}
	if (*p++ != ' ' || *p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (*p != ' ' && *p != '\n' && *p != '\0')
		return -EINVAL;
	if (comm && comm_size)
		snprintf(comm, comm_size, "%.*s", (int)(close_paren - open_paren - 1),
			 open_paren + 1);
	if (ret_starttime)
		*ret_starttime = v;
	return 0;
}

/* The line after line's end, or NULL after the last. */
static const char *next_line(const char *line)
{
	const char *nl = strchr(line, '\n');

	return nl && nl[1] ? nl + 1 : NULL;
}

int fg_parse_proc_status(const char *text, const char *key, uint64_t *ret)
{
	int r = fg_parse_proc_status_list(text, key, 10, ret, 1);

	return r < 0 ? r : 0;
}

static int digit(char c, unsigned base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (base == 16 && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int fg_parse_proc_status_list(const char *text, const char *key, unsigned base, uint64_t *ret,
			      size_t n)
{
	size_t klen = strlen(key);

	for (const char *line = *text ? text : NULL; line; line = next_line(line)) {
		const char *p = line + klen;
		size_t got = 0;

		if (strncmp(line, key, klen) != 0 || *p != ':')
			continue;
		for (p++; got < n; got++) {
			uint64_t v = 0;
			bool digits = false;
			int d;

			for (; *p == ' ' || *p == '\t'; p++)
				;
			for (; (d = digit(*p, base)) >= 0; p++, digits = true) {
				if (v > (UINT64_MAX - (uint64_t)d) / base)
					return -EINVAL;
				v = v * base + (uint64_t)d;
			}
			if (!digits)
				break;
			ret[got] = v;
		}
		return got > 0 ? (int)got : -EINVAL;
	}
	return -ENOENT;
}

/* The numbers of key's line as 32-bit ids, all n of them; false if the line is not that. */
static bool ids(const char *text, const char *key, unsigned base, uint32_t *ret, size_t n)
{
	uint64_t v[4];

	if (n > 4 || fg_parse_proc_status_list(text, key, base, v, n) != (int)n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v[i] > UINT32_MAX)
			return false;
		ret[i] = (uint32_t)v[i];
	}
	return true;
}

void fg_proc_status_parse(const char *text, struct fg_proc_status *ret)
{
	/* A pid in each namespace down to the process's own: 32 levels at most, and the host's. */
	uint64_t v[33];
	int n;

	*ret = (struct fg_proc_status){};
	if (fg_parse_proc_status_list(text, "Tgid", 10, v, 1) == 1 && v[0] > 0 && v[0] <= INT32_MAX)
		ret->tgid = (pid_t)v[0];
	/* "NSpid:\t4242\t17": the last field is the innermost namespace's. */
	n = fg_parse_proc_status_list(text, "NSpid", 10, v, sizeof(v) / sizeof(v[0]));
	if (n > 0 && v[n - 1] > 0 && v[n - 1] <= INT32_MAX)
		ret->nspid = (pid_t)v[n - 1];
	ret->have_uid = ids(text, "Uid", 10, ret->uid, 4);
	ret->have_gid = ids(text, "Gid", 10, ret->gid, 4);
	ret->have_cap_eff = fg_parse_proc_status_list(text, "CapEff", 16, &ret->cap_eff, 1) == 1;
}

char *fg_proc_map_files_path(char buf[static FG_PROC_MAP_FILES_MAX], pid_t pid, uint64_t start,
			     uint64_t end)
{
	snprintf(buf, FG_PROC_MAP_FILES_MAX, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start,
		 end);
	return buf;
}
