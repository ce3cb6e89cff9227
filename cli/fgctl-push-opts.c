/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl push's options (fgctl-push-opts.h): the command line and the
 * option file of --config, parsed into struct fgctl_push_args and checked,
 * the secrets' files read, before fgctl-push.c runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/parse.h"
#include "fgctl-client.h"
#include "fgctl-optfile.h"
#include "fgctl-push-opts.h"
#include "fgctl-verb.h"
#include "fgctl.h"
#include "proto/when.h"

enum {
	ARG_URL = 0x100,
	ARG_EVERY,
	ARG_ONCE,
	ARG_DELAY,
	ARG_CATCH_UP,
	ARG_CURSOR,
	ARG_NAME,
	ARG_LABEL,
	ARG_FORMAT,
	ARG_CA_FILE,
	ARG_TOKEN_FILE,
	ARG_BASIC_AUTH_FILE,
	ARG_TENANT,
	ARG_CONNECT_TIMEOUT,
	ARG_TIMEOUT,
	ARG_RETRIES,
	ARG_CONFIG,
};

/* Secrets and tenants are short; a file larger than this is not one. */
#define SECRET_MAX 4096
/* A secret or id from a file: its first line, which must not be empty. 0 or an exit code. */
static int read_secret(const char *path, const char *what, char **ret, FILE *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	char buf[SECRET_MAX + 1];
	ssize_t n;
	size_t len;

	if (fd < 0) {
		fprintf(err, "fgctl: cannot read the %s file %s: %m\n", what, path);
		return FGCTL_EXIT_INPUT;
	}
	n = read(fd, buf, SECRET_MAX + 1);
	if (n < 0 || n > SECRET_MAX) {
		fprintf(err, "fgctl: cannot read the %s file %s: %s\n", what, path,
			n < 0 ? strerror(errno) : "larger than 4 KiB");
		return FGCTL_EXIT_INPUT;
	}
	/* Its first line, with or without a newline after it (secret mounts often have none). */
	buf[n] = '\0';
	len = strcspn(buf, "\r\n");
	buf[len] = '\0';
	if (len == 0) {
		fprintf(err, "fgctl: the %s file %s is empty\n", what, path);
		return FGCTL_EXIT_INPUT;
	}
	*ret = strdup(buf);
	explicit_bzero(buf, sizeof(buf));
	return *ret ? FGCTL_EXIT_OK : FGCTL_EXIT_FAILURE;
}

static const char push_help[] =
	"Usage: fgctl push [--config FILE] --url URL [--every SPAN] [--once] [--last SPAN]\n"
	"                  [--name TEMPLATE] [--label KEY=VALUE]... [SELECTORS]\n"
	"\nSends fgd's always-on profiles, period by period, to a Pyroscope-compatible\n"
	"server (POST URL/ingest): one profile per application and period. fgd itself\n"
	"stays off the network; the cursor file keeps the place, so no period is sent\n"
	"twice and an outage is caught up from the window and the history.\n\n"
	"      --url URL            the server, e.g. http://pyroscope:4040\n"
	"      --every SPAN         the period (default 15s); without --once, push runs\n"
	"                           until interrupted (SIGTERM ends it with success)\n"
	"      --once               push the periods due now, then exit: non-zero if any\n"
	"                           failed, was refused or was too old to catch up\n"
	"      --last SPAN          without a cursor, start this far back (default: one\n"
	"                           period)\n"
	"      --delay SPAN         push a period this long after its end, for samples\n"
	"                           that come late (default 10s)\n"
	"      --catch-up SPAN      after an outage, catch up at most this far back; older\n"
	"                           periods are reported as not pushed (default 1h)\n"
	"      --cursor FILE        where push keeps its place (default: in memory only)\n"
	"      --name TEMPLATE      the application: {comm} (default), {unit} (the systemd\n"
	"                           unit of its cgroup), {cgroup} (the whole path)\n"
	"      --label KEY=VALUE    a label of every profile, beside host=HOSTNAME\n"
	"      --format FORMAT      pprof (default) or folded\n"
	"      --ca-file FILE       trust this CA for https (default: the system's)\n"
	"      --token-file FILE    send 'Authorization: Bearer TOKEN', the token read\n"
	"                           from FILE\n"
	"      --basic-auth-file FILE  basic auth, 'user:password' read from FILE\n"
	"      --tenant ID          send 'X-Scope-OrgID: ID'\n"
	"      --connect-timeout SPAN  (default 5s)\n"
	"      --timeout SPAN       a request's whole time (default 30s)\n"
	"      --retries N          tries again after a reply that may change (408, 429,\n"
	"                           5xx), with backoff from 1 s (default 3); no answer,\n"
	"                           a redirect or the last retry puts the period off\n"
	"  -q, --quiet              no line per period; failures and the last line, what\n"
	"                           was done, are still written\n"
	"      --config FILE        options from FILE first, a 'key = value' line each: the\n"
	"                           long options without '--' (label may repeat; once and\n"
	"                           quiet take yes or no); the command line wins\n";

#define SHORT_OPTIONS "p:qs:h"
static const struct option push_options[] = {
	FGCTL_QUERY_VERB_OPTIONS,
	{ "url", required_argument, NULL, ARG_URL },
	{ "every", required_argument, NULL, ARG_EVERY },
	{ "once", no_argument, NULL, ARG_ONCE },
	{ "delay", required_argument, NULL, ARG_DELAY },
	{ "catch-up", required_argument, NULL, ARG_CATCH_UP },
	{ "cursor", required_argument, NULL, ARG_CURSOR },
	{ "name", required_argument, NULL, ARG_NAME },
	{ "label", required_argument, NULL, ARG_LABEL },
	{ "format", required_argument, NULL, ARG_FORMAT },
	{ "ca-file", required_argument, NULL, ARG_CA_FILE },
	{ "token-file", required_argument, NULL, ARG_TOKEN_FILE },
	{ "basic-auth-file", required_argument, NULL, ARG_BASIC_AUTH_FILE },
	{ "tenant", required_argument, NULL, ARG_TENANT },
	{ "connect-timeout", required_argument, NULL, ARG_CONNECT_TIMEOUT },
	{ "timeout", required_argument, NULL, ARG_TIMEOUT },
	{ "retries", required_argument, NULL, ARG_RETRIES },
	{ "quiet", no_argument, NULL, 'q' },
	{ "config", required_argument, NULL, ARG_CONFIG },
	{},
};

/* What an option file (--config) may not say: no file within a file, no help. */
static const char *const config_refused[] = { "config", "help", NULL };

static int span_arg(const char *opt, const char *arg, int64_t min_ms, int64_t *ret, FILE *err)
{
	uint64_t ms;

	if (fg_parse_span(arg, &ms) < 0 || ms < (uint64_t)min_ms ||
	    ms > (uint64_t)INT32_MAX * 1000) {
		fprintf(err, "fgctl: invalid %s '%s': a span such as 15s, 1m or 1h\n", opt, arg);
		return -EINVAL;
	}
	*ret = (int64_t)ms;
	return 0;
}

/*
 * --label KEY=VALUE: a key given again takes the new value, so that a
 * command line's label wins over the option file's. 0 or -EINVAL (said).
 */
static int add_label(struct fgctl_push_opts *o, const char *arg, FILE *err)
{
	struct fg_ingest_label l;
	const char *why;
	size_t i;

	if (fg_ingest_label_parse(arg, &l, &why) < 0) {
		fprintf(err, "fgctl: invalid --label '%s': %s\n", arg, why);
		return -EINVAL;
	}
	for (i = 0; i < o->n_labels && strcmp(o->labels[i].key, l.key) != 0; i++)
		;
	if (i == FG_INGEST_MAX_LABELS) {
		fprintf(err, "fgctl: at most %d --label\n", FG_INGEST_MAX_LABELS);
		return -EINVAL;
	}
	o->labels[i] = l;
	o->n_labels = MAX(o->n_labels, i + 1);
	return 0;
}

/* push's own options, beyond the selectors and the common ones (-s, -q, --help). */
static int push_option(void *args, int c, const char *arg, FILE *err)
{
	struct fgctl_push_args *a = args;
	struct fgctl_push_opts *o = &a->o;
	const char *why;
	int64_t ms;
	int r;

	r = fgctl_query_option(c, arg, &a->query.query, &a->period, err);
	if (r != 0)
		return r;
	switch (c) {
	case ARG_URL:
		if (strncmp(arg, "http://", 7) != 0 && strncmp(arg, "https://", 8) != 0) {
			fprintf(err, "fgctl: invalid --url '%s': http:// or https://\n", arg);
			return -1;
		}
		o->url = arg;
		return 1;
	case ARG_EVERY:
		return span_arg("--every", arg, 1000, &o->plan.every_ms, err) < 0 ? -1 : 1;
	case ARG_ONCE:
		o->once = true;
		return 1;
	case ARG_DELAY:
		return span_arg("--delay", arg, 0, &o->plan.delay_ms, err) < 0 ? -1 : 1;
	case ARG_CATCH_UP:
		return span_arg("--catch-up", arg, 1000, &o->plan.max_ms, err) < 0 ? -1 : 1;
	case ARG_CURSOR:
		o->cursor_path = arg;
		return 1;
	case ARG_NAME:
		if (fg_ingest_template_check(arg, &why) < 0) {
			fprintf(err, "fgctl: invalid --name '%s': %s\n", arg, why);
			return -1;
		}
		o->name = arg;
		/* The snapshots then carry each process's cgroup as a frame above it. */
		a->query.query.group_by = strstr(arg, "{unit}") || strstr(arg, "{cgroup}") ?
						  FG_GROUP_CGROUP :
						  FG_GROUP_PROCESS;
		return 1;
	case ARG_LABEL:
		return add_label(o, arg, err) < 0 ? -1 : 1;
	case ARG_FORMAT:
		if (strcmp(arg, "pprof") == 0) {
			o->format = FG_INGEST_PPROF;
		} else if (strcmp(arg, "folded") == 0) {
			o->format = FG_INGEST_FOLDED;
		} else {
			fprintf(err, "fgctl: invalid --format '%s': pprof or folded\n", arg);
			return -1;
		}
		return 1;
	case ARG_CA_FILE:
		a->http.ca_file = arg;
		return 1;
	/* Read once the last one is known: a command line's wins over the option file's. */
	case ARG_TOKEN_FILE:
		a->token_path = arg;
		return 1;
	case ARG_BASIC_AUTH_FILE:
		a->basic_path = arg;
		return 1;
	case ARG_TENANT:
		if (!*arg || strpbrk(arg, "\r\n")) {
			fprintf(err, "fgctl: invalid --tenant\n");
			return -1;
		}
		a->http.tenant = arg;
		return 1;
	case ARG_CONNECT_TIMEOUT:
		if (span_arg("--connect-timeout", arg, 1, &ms, err) < 0)
			return -1;
		a->http.connect_timeout_ms = (long)ms;
		return 1;
	case ARG_TIMEOUT:
		if (span_arg("--timeout", arg, 1, &ms, err) < 0)
			return -1;
		a->http.timeout_ms = (long)ms;
		return 1;
	case ARG_RETRIES:
		if (fg_parse_u32(arg, 0, 100, &o->retries) < 0) {
			fprintf(err, "fgctl: invalid --retries '%s': 0 to 100\n", arg);
			return -1;
		}
		return 1;
	case ARG_CONFIG: /* read before: fgctl_push_with_config() */
		return 1;
	}
	return 0;
}

int fgctl_push_parse(const struct fgctl_ctx *ctx, int argc, char **argv, struct fgctl_push_args *a,
		     FILE *err)
{
	int r;

	*a = (struct fgctl_push_args){
		.o = {
			.name = "{comm}",
			.format = FG_INGEST_PPROF,
			.plan = { .every_ms = 15000, .delay_ms = 10000, .max_ms = 3600000 },
			.retries = 3,
		},
		/* Folded, each process frame "comm-pid": the pid is a label of each sample. */
		.query = { .cmd = FG_CMD_SNAPSHOT,
			   .query = { .uid = -1,
				      .limit = 20,
				      .format = FG_FORMAT_FOLDED,
				      .with_pid = true } },
		.http = { .connect_timeout_ms = 5000, .timeout_ms = 30000 },
	};
	r = fgctl_parse_options(ctx, argc, argv, SHORT_OPTIONS, push_options, push_option, a,
				&a->co, err);
	a->o.quiet = a->co.quiet;
	return r;
}

/* The secrets' files, read once the last of each is known. 0 or an exit code. */
static int read_secrets(struct fgctl_push_args *a, FILE *err)
{
	int r;

	if (a->token_path) {
		r = read_secret(a->token_path, "token", &a->token, err);
		if (r != FGCTL_EXIT_OK)
			return r;
	}
	if (a->basic_path) {
		r = read_secret(a->basic_path, "basic auth", &a->basic, err);
		if (r != FGCTL_EXIT_OK)
			return r;
		if (!strchr(a->basic, ':')) {
			fprintf(err, "fgctl: the basic auth file %s holds no user:password\n",
				a->basic_path);
			return FGCTL_EXIT_INPUT;
		}
	}
	if (a->token && a->basic) {
		fprintf(err, "fgctl: --token-file and --basic-auth-file exclude each other\n");
		return FGCTL_EXIT_USAGE;
	}
	a->http.token = a->token;
	a->http.basic_auth = a->basic;
	return FGCTL_EXIT_OK;
}

int fgctl_push_check(struct fgctl_push_args *a, FILE *err)
{
	int r;

	r = fgctl_no_operands(&a->co, err);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (!a->o.url) {
		fprintf(err, "fgctl: push needs --url\n");
		return FGCTL_EXIT_USAGE;
	}
	if (a->period.since || a->period.until) {
		fprintf(err, "fgctl: push cuts its own periods: --since and --until do not apply "
			     "(--last says where to start)\n");
		return FGCTL_EXIT_USAGE;
	}
	/* Said now, not as a failed send retried with backoff. */
	if (a->http.ca_file && access(a->http.ca_file, R_OK) < 0) {
		fprintf(err, "fgctl: cannot read --ca-file %s: %m\n", a->http.ca_file);
		return FGCTL_EXIT_INPUT;
	}
	r = read_secrets(a, err);
	if (r != FGCTL_EXIT_OK)
		return r;
	a->o.plan.first_ms = a->o.plan.every_ms;
	if (a->period.last &&
	    span_arg("--last", a->period.last, 1000, &a->o.plan.first_ms, err) < 0)
		return FGCTL_EXIT_USAGE;
	return FGCTL_EXIT_OK;
}

void fgctl_push_args_done(struct fgctl_push_args *a)
{
	if (a->token)
		explicit_bzero(a->token, strlen(a->token));
	if (a->basic)
		explicit_bzero(a->basic, strlen(a->basic));
	free(a->token);
	free(a->basic);
	a->token = a->basic = NULL;
}

void fgctl_push_help(FILE *out)
{
	fputs(push_help, out);
	fputs(fgctl_query_selector_help, out);
}

/* The --config FILE of argv, or NULL; the last one if given more than once. */
static const char *config_arg(int argc, char **argv)
{
	const char *path = NULL;
	int c, saved = opterr;

	/* The same table, so "--comm --config" is a --comm; the real pass says what is wrong. */
	opterr = 0;
	fgctl_getopt_reset();
	while ((c = getopt_long(argc, argv, SHORT_OPTIONS, push_options, NULL)) >= 0)
		if (c == ARG_CONFIG)
			path = optarg;
	opterr = saved;
	fgctl_getopt_reset();
	return path;
}

int fgctl_push_with_config(int argc, char **argv, int *ret_argc, char ***ret_argv,
			   char ***ret_words)
{
	const char *path = config_arg(argc, argv);
	char **words = NULL, **all;
	size_t n;

	*ret_argc = argc;
	*ret_argv = argv;
	*ret_words = NULL;
	if (!path)
		return FGCTL_EXIT_OK;
	if (fgctl_optfile_read(path, push_options, config_refused, &words, &n) < 0)
		return FGCTL_EXIT_USAGE;
	all = calloc((size_t)argc + n + 1, sizeof(*all));
	if (!all) {
		fgctl_optfile_free(words);
		return FGCTL_EXIT_FAILURE;
	}
	all[0] = argv[0];
	memcpy(all + 1, words, n * sizeof(*all));
	memcpy(all + 1 + n, argv + 1, (size_t)(argc - 1) * sizeof(*all));
	*ret_argc = argc + (int)n;
	*ret_argv = all;
	*ret_words = words;
	return FGCTL_EXIT_OK;
}
