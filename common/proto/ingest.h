/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What `fgctl push` says to a Pyroscope-compatible ingest API, and how it
 * keeps its place: the application names (from a template), the labels,
 * the request's URL, the periods to push and the cursor file.
 *
 *   POST URL/ingest?name=APP.cpu{host=HOST,k=v}&from=S&until=S&format=pprof
 *        &sampleRate=HZ&spyName=fgd&units=samples&aggregationType=sum
 *
 * Periods are whole multiples of the push interval on the Unix clock, so a
 * restarted pusher cuts the same periods; the cursor says which periods
 * are done and, of the one under way, which applications were sent, and is
 * written after each, so an application's period is sent once: twice only
 * when push dies between the server's answer and the cursor's write.
 *
 * Pure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/outbuf.h"

/* Labels (--label k=v) a push may add to host=, and the longest key and value. */
#define FG_INGEST_MAX_LABELS 16
#define FG_INGEST_MAX_LABEL 128

struct fg_ingest_label {
	char key[FG_INGEST_MAX_LABEL + 1], value[FG_INGEST_MAX_LABEL + 1];
};

/*
 * Parses "key=value" as --label gives it: a key as Prometheus and Pyroscope
 * spell them ([A-Za-z_][A-Za-z0-9_]*, not "host", which push sets, nor
 * "__name__"), a value of printable characters without the ',', '{', '}',
 * '=' and '"' that would break the name's braces. 0, or -EINVAL with a
 * static reason in *ret_why.
 */
int fg_ingest_label_parse(const char *arg, struct fg_ingest_label *ret, const char **ret_why);

/* What an application is named from: a process group's comm and cgroup. */
struct fg_ingest_process {
	const char *comm;   /* borrowed */
	const char *cgroup; /* borrowed; NULL: not known */
};

/*
 * Checks a --name template: text with {comm}, {unit} and {cgroup}. 0, or
 * -EINVAL with a static reason.
 */
int fg_ingest_template_check(const char *tmpl, const char **ret_why);

/*
 * The application name of p under tmpl: {comm} its comm, {cgroup} its
 * cgroup path, {unit} the systemd unit in that path (the last component
 * ending in .service or .scope; else the last component). Characters
 * Pyroscope's names do not take (anything but letters, digits, '.', '-'
 * and '_') become '_', brackets go ("[other processes]" is
 * "other_processes"); an empty name is "unknown", a longer one than
 * FG_INGEST_MAX_APP bytes is cut there. Appended to b.
 */
#define FG_INGEST_MAX_APP 200
void fg_ingest_app_name(const char *tmpl, const struct fg_ingest_process *p, struct fg_outbuf *b);

enum fg_ingest_format {
	FG_INGEST_PPROF,
	FG_INGEST_FOLDED,
};

struct fg_ingest_request {
	const char *base_url; /* borrowed: scheme://host[:port][/prefix], no query */
	const char *app;      /* borrowed: already named (fg_ingest_app_name()) */
	const char *host;     /* borrowed: the host= label */
	const struct fg_ingest_label *labels;
	size_t n_labels;
	int64_t from_s, until_s; /* the period, Unix seconds */
	uint32_t sample_rate;    /* Hz */
	enum fg_ingest_format format;
};

/* The request's URL, its query percent-encoded, appended to b. */
void fg_ingest_url(const struct fg_ingest_request *r, struct fg_outbuf *b);

/*
 * Where a pusher is: periods ending at or before until_ms are done; of the
 * period starting there, the applications listed in sent were pushed.
 */
struct fg_ingest_cursor {
	int64_t until_ms; /* 0: nothing pushed yet */
	char **sent;      /* owned, each owned */
	size_t n_sent;
};

void fg_ingest_cursor_done(struct fg_ingest_cursor *c);
/* Notes app as sent in the period under way. 0 or -ENOMEM. */
int fg_ingest_cursor_sent(struct fg_ingest_cursor *c, const char *app);
/* Whether app was sent in the period under way. */
bool fg_ingest_cursor_was_sent(const struct fg_ingest_cursor *c, const char *app);
/* The period under way is done: the cursor moves to until_ms, with nothing sent. */
void fg_ingest_cursor_advance(struct fg_ingest_cursor *c, int64_t until_ms);

/*
 * The cursor file's text: "fgd-push 1\nuntil=MS\n" and a "sent=APP" line
 * per application. Parsing replaces *c; -EINVAL for anything else (a
 * damaged file is an error, not a silent restart), -ENOMEM.
 */
int fg_ingest_cursor_parse(const char *text, size_t len, struct fg_ingest_cursor *c);
void fg_ingest_cursor_format(const struct fg_ingest_cursor *c, struct fg_outbuf *b);

struct fg_ingest_plan {
	int64_t every_ms; /* the period: the Unix clock cut in multiples of it */
	int64_t delay_ms; /* a period is due this long after its end (late samples) */
	int64_t first_ms; /* without a cursor, start at the period holding now - first_ms */
	int64_t max_ms;   /* catch up at most this far back */
};

/*
 * The next period to push at now_ms, [*ret_from, *ret_until), from the
 * cursor's end (a cursor off the plan's periods, after --every changed,
 * gets a shorter period up to the next boundary). What lies before now -
 * max_ms is not caught up: [*ret_gap_from, *ret_gap_until) is what is
 * skipped, empty when nothing is. Returns true if the period is due.
 */
bool fg_ingest_next_period(const struct fg_ingest_plan *plan, int64_t cursor_until_ms,
			   int64_t now_ms, int64_t *ret_from, int64_t *ret_until,
			   int64_t *ret_gap_from, int64_t *ret_gap_until);
