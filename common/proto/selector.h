/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Which processes a query of the always-on window covers. Every selector
 * given must match (they combine with AND); none given matches everything.
 *   pid:    the process id;
 *   uid:    the owner (the real uid fgd saw);
 *   comm:   a POSIX extended regular expression, searched in the name (at
 *           most 256 bytes and 12 repetitions, two of them '+' or '{}',
 *           bounds up to 16: glibc's compiler would otherwise blow up on
 *           nesting);
 *   cgroup: the cgroup v2 path or an ancestor of it, with or without the
 *           leading '/' ("system.slice" covers "/system.slice/x.service");
 *   exe:    the executable's full path, or its last component.
 */

#include "base/macro.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FG_SELECTOR_MAX_PATTERN 1024
/* comm patterns are capped harder: see regex_is_tame() in selector.c. */
#define FG_SELECTOR_MAX_REGEX 256

struct fg_selector_spec {
	pid_t pid;          /* 0: any */
	int64_t uid;        /* -1: any */
	const char *comm;   /* borrowed for the call; NULL or "": any */
	const char *cgroup; /* borrowed for the call; NULL or "": any */
	const char *exe;    /* borrowed for the call; NULL or "": any */
};

struct fg_selector;

/*
 * Compiles spec. Caller frees *ret with fg_selector__free(). -EINVAL for a
 * pattern too long or a bad regular expression (with *ret_error, which may
 * be NULL, pointing to a static description), -ENOMEM.
 */
int fg_selector__new(const struct fg_selector_spec *spec, struct fg_selector **ret,
		     const char **ret_error);
struct fg_selector *fg_selector__free(struct fg_selector *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_selector *, fg_selector__free);

/* NULL strings match only selectors that do not look at them. */
bool fg_selector__match(const struct fg_selector *s, pid_t pid, uid_t uid, const char *comm,
			const char *exe, const char *cgroup);
/* True when the selector selects everything. */
bool fg_selector__is_all(const struct fg_selector *s);
