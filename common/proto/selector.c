/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "proto/selector.h"

struct fg_selector {
	pid_t pid;
	int64_t uid;
	bool has_comm;
	regex_t comm;
	char *cgroup; /* owned; without leading or trailing '/'; NULL: any */
	char *exe;    /* owned; NULL: any */
};

struct fg_selector *fg_selector__free(struct fg_selector *s)
{
	if (!s)
		return NULL;
	if (s->has_comm)
		regfree(&s->comm);
	free(s->cgroup);
	free(s->exe);
	free(s);
	return NULL;
}

/*
 * glibc compiles "x+" as "xx*" and "x{n}" as n copies of x, so nested
 * repetition grows the automaton exponentially ("a++++++++++++" takes
 * gigabytes), and its closures grow fast with stacked stars too ("u$/"
 * then 101 '*' took 2.6 s; "((a*)*)" ten times, 20 operators, 1.2 ms). A
 * comm is at most 15 bytes: allow 12 repetitions, two of them that
 * duplicate, with bounds up to 16, in a pattern of at most 256 bytes.
 */
static bool regex_is_tame(const char *re)
{
	unsigned duplicating = 0, repeating = 0;

	if (strlen(re) > FG_SELECTOR_MAX_REGEX)
		return false;
	for (const char *p = re; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p == '*' || *p == '?' || *p == '+' || *p == '{')
			repeating++;
		if (*p == '+') {
			duplicating++;
		} else if (*p == '{') {
			char *end;
			unsigned long n = strtoul(p + 1, &end, 10);

			duplicating++;
			if (n > 16)
				return false;
			if (*end == ',') {
				n = strtoul(end + 1, &end, 10);
				if (n > 16)
					return false;
			}
		}
	}
	return duplicating <= 2 && repeating <= 12;
}

static bool given(const char *s)
{
	return s && *s;
}

int fg_selector__new(const struct fg_selector_spec *spec, struct fg_selector **ret,
		     const char **ret_error)
{
	_cleanup_(fg_selector__freep) struct fg_selector *s = calloc(1, sizeof(*s));
	const char *why = NULL;

	if (!s)
		return -ENOMEM;
	s->pid = spec->pid;
	s->uid = spec->uid;
	if ((given(spec->comm) && strlen(spec->comm) > FG_SELECTOR_MAX_PATTERN) ||
	    (given(spec->cgroup) && strlen(spec->cgroup) > FG_SELECTOR_MAX_PATTERN) ||
	    (given(spec->exe) && strlen(spec->exe) > FG_SELECTOR_MAX_PATTERN))
		why = "a selector is too long";
	else if (spec->pid < 0 || spec->uid < -1 || spec->uid > UINT32_MAX)
		why = "pid or uid out of range";
	if (why) {
		if (ret_error)
			*ret_error = why;
		return -EINVAL;
	}
	if (given(spec->comm)) {
		if (!regex_is_tame(spec->comm)) {
			if (ret_error)
				*ret_error =
					"comm pattern too complex: at most 256 bytes, 12 repetitions "
					"('*', '?', '+', '{}'), two of them '+' or '{}', bounds up to 16";
			return -EINVAL;
		}
		if (regcomp(&s->comm, spec->comm, REG_EXTENDED | REG_NOSUB) != 0) {
			if (ret_error)
				*ret_error = "invalid regular expression for comm";
			return -EINVAL;
		}
		s->has_comm = true;
	}
	if (given(spec->cgroup)) {
		const char *c = spec->cgroup;
		size_t len;

		while (*c == '/')
			c++;
		len = strlen(c);
		while (len > 0 && c[len - 1] == '/')
			len--;
		s->cgroup = strndup(c, len);
		if (!s->cgroup)
			return -ENOMEM;
	}
	if (given(spec->exe)) {
		s->exe = strdup(spec->exe);
		if (!s->exe)
			return -ENOMEM;
	}
	*ret = TAKE_PTR(s);
	return 0;
}

bool fg_selector__is_all(const struct fg_selector *s)
{
	return s->pid == 0 && s->uid < 0 && !s->has_comm && !s->cgroup && !s->exe;
}

static bool cgroup_matches(const char *want, const char *cg)
{
	size_t len = strlen(want);

	while (*cg == '/')
		cg++;
	/* The root cgroup "/" contains everything. */
	if (len == 0)
		return true;
	return strncmp(cg, want, len) == 0 && (cg[len] == '\0' || cg[len] == '/');
}

static bool exe_matches(const char *want, const char *exe)
{
	const char *base = strrchr(exe, '/');

	if (strcmp(want, exe) == 0)
		return true;
	return !strchr(want, '/') && base && strcmp(base + 1, want) == 0;
}

bool fg_selector__match(const struct fg_selector *s, pid_t pid, uid_t uid, const char *comm,
			const char *exe, const char *cgroup)
{
	if (s->pid && s->pid != pid)
		return false;
	if (s->uid >= 0 && (int64_t)uid != s->uid)
		return false;
	if (s->has_comm && (!comm || regexec(&s->comm, comm, 0, NULL, 0) != 0))
		return false;
	if (s->cgroup && (!cgroup || !cgroup_matches(s->cgroup, cgroup)))
		return false;
	if (s->exe && (!exe || !exe_matches(s->exe, exe)))
		return false;
	return true;
}
