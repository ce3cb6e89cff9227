/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A systemd-style configuration file: "Key=Value" lines, "#" and ";"
 * comments, blank lines, and "[Section]" headers. Whitespace around keys and
 * values is dropped; there is no quoting and no line continuation. The
 * reader knows no keys: it hands each assignment to the caller, who parses
 * the value with the helpers below. Every problem is reported with its line
 * number and the reader carries on, so one pass lists them all.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FG_CONF_MAX_LINE 4096 /* bytes, without the newline */
#define FG_CONF_MAX_MESSAGE 256

struct fg_conf_error {
	unsigned line; /* 1-based; 0 for the whole file */
	char message[FG_CONF_MAX_MESSAGE];
};

/*
 * Called for each assignment. section is NULL before any header; every
 * string is borrowed until the call returns and is NUL-free. Returns 0, or
 * a negative errno after filling err->message (err->line is already set).
 */
typedef int (*fg_conf_assign_fn)(void *ctx, const char *section, const char *key, const char *value,
				 struct fg_conf_error *err);
/* Called for each problem, the handler's and the reader's; err borrowed until it returns. */
typedef void (*fg_conf_error_fn)(void *ctx, const struct fg_conf_error *err);

/*
 * Reads len bytes of text (not NUL-terminated; a NUL byte is an error).
 * Returns 0 if every line was fine, else -EINVAL (-ENOMEM if memory ran
 * out), after reporting each problem to on_error.
 */
int fg_conf_parse(const char *text, size_t len, fg_conf_assign_fn assign, fg_conf_error_fn on_error,
		  void *ctx);

/* yes/no, true/false, on/off, 1/0 (any case). 0 or -EINVAL; *ret untouched on failure. */
int fg_conf_parse_bool(const char *s, bool *ret);

/*
 * A byte count: decimal digits with an optional K, M, G or T suffix (powers
 * of 1024, "KiB" and "K" alike) within [min, max]. 0, -EINVAL or -ERANGE.
 */
int fg_conf_parse_bytes(const char *s, uint64_t min, uint64_t max, uint64_t *ret);

/*
 * A duration in whole seconds: digits with an optional unit, s/sec, min, h,
 * d or w (so "900", "900s" and "15min" agree), within [min, max]. 0, -EINVAL
 * or -ERANGE.
 */
int fg_conf_parse_seconds(const char *s, uint32_t min, uint32_t max, uint32_t *ret);
