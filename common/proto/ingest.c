/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "proto/ingest.h"

#define CURSOR_MAGIC "fgd-push 1\n"

static bool key_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

int fg_ingest_label_parse(const char *arg, struct fg_ingest_label *ret, const char **ret_why)
{
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : 0;

	*ret = (struct fg_ingest_label){};
	if (!eq || klen == 0) {
		*ret_why = "expected key=value";
		return -EINVAL;
	}
	if (klen > FG_INGEST_MAX_LABEL || strlen(eq + 1) > FG_INGEST_MAX_LABEL) {
		*ret_why = "a key or value longer than 128 bytes";
		return -EINVAL;
	}
	for (size_t i = 0; i < klen; i++)
		if (!key_char(arg[i], i == 0)) {
			*ret_why = "a key is letters, digits and '_', not starting with a digit";
			return -EINVAL;
		}
	memcpy(ret->key, arg, klen);
	if (strcmp(ret->key, "host") == 0 || strcmp(ret->key, "__name__") == 0) {
		*ret_why = "host and __name__ are push's own labels";
		return -EINVAL;
	}
	if (!eq[1]) {
		*ret_why = "an empty value";
		return -EINVAL;
	}
	for (const char *v = eq + 1; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f || strchr(",{}=\"", *v)) {
			*ret_why =
				"a value holds no control characters, ',', '{', '}', '=' or '\"'";
			return -EINVAL;
		}
	strcpy(ret->value, eq + 1);
	return 0;
}

static const char *const placeholders[] = { "{comm}", "{unit}", "{cgroup}" };

/* The placeholder at s (an index of placeholders), or -1. */
static int placeholder_at(const char *s)
{
	for (size_t i = 0; i < ELEMENTSOF(placeholders); i++)
		if (strncmp(s, placeholders[i], strlen(placeholders[i])) == 0)
			return (int)i;
	return -1;
}

int fg_ingest_template_check(const char *tmpl, const char **ret_why)
{
	if (!*tmpl) {
		*ret_why = "an empty name";
		return -EINVAL;
	}
	for (const char *s = tmpl; *s; s++) {
		if (*s == '{' && placeholder_at(s) < 0) {
			*ret_why = "a '{' that is not {comm}, {unit} or {cgroup}";
			return -EINVAL;
		}
		if (*s == '{')
			s += strlen(placeholders[placeholder_at(s)]) - 1;
		else if (*s == '}') {
			*ret_why = "a '}' outside {comm}, {unit} or {cgroup}";
			return -EINVAL;
		}
	}
	return 0;
}

/* s[0..len) as a name Pyroscope takes: letters, digits, '.', '-', '_'; brackets dropped. */
static void put_name(struct fg_outbuf *b, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '[' || c == ']')
			continue;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == '_'))
			c = '_';
		fg_outbuf_put(b, &c, 1);
	}
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t k = strlen(suffix);

	return len >= k && memcmp(s + len - k, suffix, k) == 0;
}

/* The systemd unit a cgroup path names: its last .service or .scope component, else its last. */
static void unit_of(const char *cgroup, const char **ret, size_t *ret_len)
{
	const char *last = NULL, *unit = NULL;
	size_t last_len = 0, unit_len = 0;

	for (const char *s = cgroup; *s;) {
		const char *end = strchr(s, '/');
		size_t len = end ? (size_t)(end - s) : strlen(s);

		if (len) {
			last = s;
			last_len = len;
			if (ends_with(s, len, ".service") || ends_with(s, len, ".scope")) {
				unit = s;
				unit_len = len;
			}
		}
		s += len + (end != NULL);
	}
	*ret = unit ? unit : last ? last : "root";
	*ret_len = unit ? unit_len : last ? last_len : 4;
}

void fg_ingest_app_name(const char *tmpl, const struct fg_ingest_process *p, struct fg_outbuf *b)
{
	const char *cgroup = p->cgroup ? p->cgroup : "unknown";
	size_t start = b->used;

	for (const char *s = tmpl; *s;) {
		int ph = *s == '{' ? placeholder_at(s) : -1;
		const char *unit;
		size_t len;

		if (ph < 0) {
			put_name(b, s++, 1);
			continue;
		}
		if (ph == 0) {
			put_name(b, p->comm, strlen(p->comm));
		} else if (ph == 1) {
			unit_of(cgroup, &unit, &len);
			put_name(b, unit, len);
		} else {
			/* The path without its leading '/': "system.slice_x.service". */
			put_name(b, cgroup + (cgroup[0] == '/' && cgroup[1]),
				 strlen(cgroup) - (cgroup[0] == '/' && cgroup[1]));
		}
		s += strlen(placeholders[ph]);
	}
	/* A name the cursor can keep and the server take: never empty, never unbounded. */
	if (b->err == 0 && b->used == start)
		fg_outbuf_puts(b, "unknown");
	if (b->err == 0 && b->used - start > FG_INGEST_MAX_APP)
		b->used = start + FG_INGEST_MAX_APP;
}

/* Percent-encodes s for a query value: everything but unreserved characters. */
static void put_encoded(struct fg_outbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			fg_outbuf_put(b, s, 1);
		} else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };

			fg_outbuf_put(b, e, 3);
		}
	}
}

void fg_ingest_url(const struct fg_ingest_request *r, struct fg_outbuf *b)
{
	struct fg_outbuf name = {};
	size_t base_len = strlen(r->base_url);

	/* A base given with its trailing '/' gets no second one. */
	while (base_len > 0 && r->base_url[base_len - 1] == '/')
		base_len--;
	fg_outbuf_printf(&name, "%s.cpu{host=%s", r->app, r->host);
	for (size_t i = 0; i < r->n_labels; i++)
		fg_outbuf_printf(&name, ",%s=%s", r->labels[i].key, r->labels[i].value);
	fg_outbuf_puts(&name, "}");
	fg_outbuf_put(&name, "", 1);
	fg_outbuf_put(b, r->base_url, base_len);
	fg_outbuf_puts(b, "/ingest?name=");
	if (name.err < 0)
		b->err = name.err;
	else
		put_encoded(b, name.data);
	fg_outbuf_printf(b,
			 "&from=%" PRId64 "&until=%" PRId64 "&format=%s&sampleRate=%" PRIu32
			 "&spyName=fgd&units=samples&aggregationType=sum",
			 r->from_s, r->until_s, r->format == FG_INGEST_PPROF ? "pprof" : "folded",
			 r->sample_rate);
	fg_outbuf_done(&name);
}

void fg_ingest_cursor_done(struct fg_ingest_cursor *c)
{
	for (size_t i = 0; i < c->n_sent; i++)
		free(c->sent[i]);
	free(c->sent);
	c->sent = NULL;
	c->n_sent = 0;
}

int fg_ingest_cursor_sent(struct fg_ingest_cursor *c, const char *app)
{
	char **sent = realloc(c->sent, (c->n_sent + 1) * sizeof(*sent));

	if (!sent)
		return -ENOMEM;
	c->sent = sent;
	sent[c->n_sent] = strdup(app);
	if (!sent[c->n_sent])
		return -ENOMEM;
	c->n_sent++;
	return 0;
}

bool fg_ingest_cursor_was_sent(const struct fg_ingest_cursor *c, const char *app)
{
	for (size_t i = 0; i < c->n_sent; i++)
		if (strcmp(c->sent[i], app) == 0)
			return true;
	return false;
}

void fg_ingest_cursor_advance(struct fg_ingest_cursor *c, int64_t until_ms)
{
	fg_ingest_cursor_done(c);
	c->until_ms = until_ms;
}

int fg_ingest_cursor_parse(const char *text, size_t len, struct fg_ingest_cursor *c)
{
	struct fg_ingest_cursor parsed = {};
	size_t magic = strlen(CURSOR_MAGIC);
	bool have_until = false;
	int err = 0;

	if (len < magic || memcmp(text, CURSOR_MAGIC, magic) != 0)
		return -EINVAL;
	for (size_t pos = magic; pos < len && err >= 0;) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		char buf[FG_INGEST_MAX_LABEL * 4];

		pos += n + 1;
		if (!nl || n >= sizeof(buf) || memchr(line, '\0', n)) {
			err = -EINVAL;
			break;
		}
		memcpy(buf, line, n);
		buf[n] = '\0';
		if (strncmp(buf, "until=", 6) == 0 && !have_until) {
			char *end;

			errno = 0;
			parsed.until_ms = strtoll(buf + 6, &end, 10);
			have_until = true;
			if (errno || *end || end == buf + 6 || parsed.until_ms < 0)
				err = -EINVAL;
		} else if (strncmp(buf, "sent=", 5) == 0 && have_until && buf[5]) {
			err = fg_ingest_cursor_sent(&parsed, buf + 5);
		} else {
			err = -EINVAL;
		}
	}
	if (err >= 0 && !have_until)
		err = -EINVAL;
	if (err < 0) {
		fg_ingest_cursor_done(&parsed);
		return err;
	}
	fg_ingest_cursor_done(c);
	*c = parsed;
	return 0;
}

void fg_ingest_cursor_format(const struct fg_ingest_cursor *c, struct fg_outbuf *b)
{
	fg_outbuf_printf(b, CURSOR_MAGIC "until=%" PRId64 "\n", c->until_ms);
	for (size_t i = 0; i < c->n_sent; i++)
		fg_outbuf_printf(b, "sent=%s\n", c->sent[i]);
}

/* t rounded down to a multiple of every (> 0), for any t. */
static int64_t align_down(int64_t t, int64_t every)
{
	int64_t r = t % every;

	return r < 0 ? t - r - every : t - r;
}

bool fg_ingest_next_period(const struct fg_ingest_plan *plan, int64_t cursor_until_ms,
			   int64_t now_ms, int64_t *ret_from, int64_t *ret_until,
			   int64_t *ret_gap_from, int64_t *ret_gap_until)
{
	int64_t every = MAX(plan->every_ms, (int64_t)1);
	int64_t start =
		cursor_until_ms ? cursor_until_ms : align_down(now_ms - plan->first_ms, every);
	int64_t oldest = align_down(now_ms - plan->max_ms, every);

	*ret_gap_from = *ret_gap_until = start;
	if (start < oldest) {
		*ret_gap_until = oldest;
		start = oldest;
	}
	*ret_from = start;
	*ret_until = align_down(start, every) + every;
	return *ret_until + plan->delay_ms <= now_ms;
}
