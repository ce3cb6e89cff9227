/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgctl's HTTP client for push, on libcurl: POSTs with TLS (the system's
 * CAs or a given CA file), a bearer token or basic auth, a tenant header
 * and timeouts, over one connection kept alive between requests.
 */

#include "base/macro.h"
#include <stdbool.h>
#include <stddef.h>

struct fgctl_http_opts {
	const char *ca_file;    /* borrowed; NULL: the system's CAs */
	const char *token;      /* borrowed; "Authorization: Bearer TOKEN"; NULL: none */
	const char *basic_auth; /* borrowed; "user:password"; NULL: none */
	const char *tenant;     /* borrowed; "X-Scope-OrgID: TENANT"; NULL: none */
	long connect_timeout_ms, timeout_ms;
};

struct fgctl_http;

/* Caller frees *ret with fgctl_http__free(). 0 or -ENOMEM. The options are copied. */
int fgctl_http__new(const struct fgctl_http_opts *opts, struct fgctl_http **ret);
struct fgctl_http *fgctl_http__free(struct fgctl_http *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fgctl_http *, fgctl_http__free);

/*
 * How a request went. Of the server's headers, only what tells when and
 * where to try again is kept: the text comes from the network, so it is
 * cut to size and its control characters are blanks.
 */
struct fgctl_http_result {
	long status;           /* the HTTP status; 0 when none came (connection, TLS, timeout) */
	bool timed_out;        /* none came within the timeout */
	char error[256];       /* why, when it failed: curl's error or the server's first words */
	char retry_after[128]; /* the last response's Retry-After, its first 127 bytes; "" */
	char location[256];    /* a 3xx's target, resolved against the URL; "" (not followed) */
};

/* Whether SIGINT or SIGTERM is pending (the caller blocks them): a stop was asked for. */
bool fgctl_stop_pending(void);

/*
 * POSTs body to url: as multipart/form-data with the body in a part named
 * part (a file part, as Pyroscope reads "profile"), or as content_type
 * when part is NULL. 0 when it got a 2xx status; -EINTR when a stop was
 * asked for meanwhile (fgctl_stop_pending(): the transfer is abandoned);
 * -ENOMEM; else -EIO with *ret saying what happened. A redirect is never
 * followed (the credentials would go with it): it is a failure that says
 * where it pointed.
 */
int fgctl_http__post(struct fgctl_http *h, const char *url, const void *body, size_t len,
		     const char *part, const char *content_type, struct fgctl_http_result *ret);
