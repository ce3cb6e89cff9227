/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/macro.h"
#include "config.h"
#include "fgctl-http.h"

struct fgctl_http {
	CURL *curl;                 /* owned */
	struct curl_slist *headers; /* owned */
	char *ca_file, *basic_auth; /* owned */
	long connect_timeout_ms, timeout_ms;
	char errbuf[CURL_ERROR_SIZE]; /* curl's words on a failure: it writes here until cleanup */
	char body[200];               /* the start of the server's reply, for error messages */
	size_t body_len;
	struct fgctl_http_result *res; /* borrowed during a request: where its headers go */
};

struct fgctl_http *fgctl_http__free(struct fgctl_http *h)
{
	if (!h)
		return NULL;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
	free(h->ca_file);
	if (h->basic_auth)
		explicit_bzero(h->basic_auth, strlen(h->basic_auth));
	free(h->basic_auth);
	free(h);
	return NULL;
}

/* Adds a header line; false on ENOMEM. */
static bool add_header(struct fgctl_http *h, const char *name, const char *value)
{
	_cleanup_free_ char *line = NULL;
	struct curl_slist *l;

	if (asprintf(&line, "%s: %s", name, value) < 0)
		return false;
	l = curl_slist_append(h->headers, line);
	explicit_bzero(line, strlen(line));
	if (!l)
		return false;
	h->headers = l;
	return true;
}

int fgctl_http__new(const struct fgctl_http_opts *opts, struct fgctl_http **ret)
{
	_cleanup_(fgctl_http__freep) struct fgctl_http *h = calloc(1, sizeof(*h));
	_cleanup_free_ char *bearer = NULL;

	if (!h)
		return -ENOMEM;
	h->curl = curl_easy_init();
	if (!h->curl)
		return -ENOMEM;
	h->connect_timeout_ms = opts->connect_timeout_ms;
	h->timeout_ms = opts->timeout_ms;
	if ((opts->ca_file && !(h->ca_file = strdup(opts->ca_file))) ||
	    (opts->basic_auth && !(h->basic_auth = strdup(opts->basic_auth))))
		return -ENOMEM;
	if (opts->token && (asprintf(&bearer, "Bearer %s", opts->token) < 0 ||
			    !add_header(h, "Authorization", bearer)))
		return -ENOMEM;
	if (bearer)
		explicit_bzero(bearer, strlen(bearer));
	if (opts->tenant && !add_header(h, "X-Scope-OrgID", opts->tenant))
		return -ENOMEM;
	/* curl's "Expect: 100-continue" costs a round trip per profile for nothing. */
	if (!add_header(h, "Expect", ""))
		return -ENOMEM;
	*ret = TAKE_PTR(h);
	return 0;
}

bool fgctl_stop_pending(void)
{
	sigset_t pending;

	return sigpending(&pending) == 0 &&
	       (sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1);
}

/*
 * Abandons the transfer when a stop is asked for while the request is still
 * being sent: a slow server must not hold push. Once the server has the
 * whole request it may have taken the profile, so its answer is waited for
 * (--timeout bounds it): abandoned then, push would not know, and would
 * send the profile again at its next run.
 */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	bool sent = ultotal > 0 && ulnow >= ultotal;

	return !sent && fgctl_stop_pending();
}

/* Keeps the start of the reply's body for the error message; drops the rest. */
static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct fgctl_http *h = ctx;
	size_t len = size * n, room = sizeof(h->body) - 1 - h->body_len;

	memcpy(h->body + h->body_len, data, MIN(len, room));
	h->body_len += MIN(len, room);
	return len;
}

/* The server's words as one line of a message: control characters (NUL too) become spaces. */
static void blank_controls(char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = ' ';
}

/* Keeps the headers that say when to try again; a new response (after a 1xx) starts afresh. */
static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	static const char name[] = "retry-after:";
	struct fgctl_http *h = ctx;
	size_t len = size * n, k = sizeof(name) - 1;

	if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
		h->res->retry_after[0] = '\0';
	} else if (len > k && strncasecmp(data, name, k) == 0) {
		/* The value as it came, CRLF off; fg_retry_after_parse() takes the blanks. */
		while (len > k && (data[len - 1] == '\n' || data[len - 1] == '\r'))
			len--;
		snprintf(h->res->retry_after, sizeof(h->res->retry_after), "%.*s", (int)(len - k),
			 data + k);
		blank_controls(h->res->retry_after, strlen(h->res->retry_after));
	}
	return size * n;
}

int fgctl_http__post(struct fgctl_http *h, const char *url, const void *body, size_t len,
		     const char *part, const char *content_type, struct fgctl_http_result *ret)
{
	CURL *c = h->curl;
	curl_mime *mime = NULL;
	struct curl_slist *headers = h->headers, *typed = NULL;
	_cleanup_free_ char *type_line = NULL;
	CURLcode rc;

	*ret = (struct fgctl_http_result){};
	h->res = ret;
	h->body_len = 0;
	h->errbuf[0] = '\0';
	/* Each request sets what it needs: nothing of the last one carries over but the connection. */
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->timeout_ms);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "fgd-push/" FG_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
	/* Never followed, whatever curl's default: the token must not go where a 3xx says. */
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	if (h->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_file);
	if (h->basic_auth) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERPWD, h->basic_auth);
	}
	if (part) {
		curl_mimepart *mp;

		mime = curl_mime_init(c);
		mp = mime ? curl_mime_addpart(mime) : NULL;
		if (!mp || curl_mime_name(mp, part) != CURLE_OK ||
		    curl_mime_filename(mp, part) != CURLE_OK ||
		    curl_mime_type(mp, "application/octet-stream") != CURLE_OK ||
		    curl_mime_data(mp, body, len) != CURLE_OK) {
			curl_mime_free(mime);
			snprintf(ret->error, sizeof(ret->error), "out of memory");
			return -ENOMEM;
		}
		curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
	} else {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		if (asprintf(&type_line, "Content-Type: %s", content_type) < 0 ||
		    !(typed = curl_slist_append(NULL, type_line))) {
			snprintf(ret->error, sizeof(ret->error), "out of memory");
			return -ENOMEM;
		}
		/* The shared headers, then this request's type: a list of its own, freed after. */
		for (struct curl_slist *l = h->headers; l; l = l->next) {
			struct curl_slist *n = curl_slist_append(typed, l->data);

			if (!n) {
				curl_slist_free_all(typed);
				snprintf(ret->error, sizeof(ret->error), "out of memory");
				return -ENOMEM;
			}
			typed = n;
		}
		headers = typed;
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ret->status);
	curl_mime_free(mime);
	curl_slist_free_all(typed);
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		snprintf(ret->error, sizeof(ret->error), "interrupted");
		return -EINTR;
	}
	if (rc != CURLE_OK) {
		ret->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
		snprintf(ret->error, sizeof(ret->error), "%s",
			 h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc));
		return -EIO;
	}
	if (ret->status >= 200 && ret->status < 300)
		return 0;
	if (ret->status >= 300 && ret->status < 400) {
		char *target = NULL;

		/* Where curl would have gone, had it followed: the Location, made absolute. */
		if (curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &target) == CURLE_OK && target)
			snprintf(ret->location, sizeof(ret->location), "%s", target);
		blank_controls(ret->location, strlen(ret->location));
	}
	blank_controls(h->body, h->body_len);
	h->body[h->body_len] = '\0';
	snprintf(ret->error, sizeof(ret->error), "HTTP %ld%s%s", ret->status,
		 h->body_len ? ": " : "", h->body);
	return -EIO;
}
