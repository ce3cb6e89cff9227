/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpulist.h"
#include "base/macro.h"
#include "base/utf8.h"
#include "proto/proto.h"

/* ---- incremental reader ---- */

void fg_proto_reader_init(struct fg_proto_reader *r, size_t max_line)
{
	*r = (struct fg_proto_reader){ .max_line = max_line };
}

void fg_proto_reader_done(struct fg_proto_reader *r)
{
	free(r->buf);
	*r = (struct fg_proto_reader){};
}

int fg_proto_reader_feed(struct fg_proto_reader *r, const void *data, size_t len)
{
	int ret;

	/* Reclaim consumed space before growing. */
	if (r->start > 0 && (r->start + r->len + len > r->cap || r->start > r->cap / 2)) {
		memmove(r->buf, r->buf + r->start, r->len);
		r->start = 0;
	}
	/* +1 so a complete line can always be NUL-terminated in place. */
	ret = FG_GROW(r->buf, r->cap, r->start + r->len + len + 1);
	if (ret < 0)
		return ret;
	memcpy(r->buf + r->start + r->len, data, len);
	r->len += len;
	return 0;
}

int fg_proto_reader_next(struct fg_proto_reader *r, struct fg_proto_item *ret)
{
	char *p = r->buf + r->start, *nl;

	*ret = (struct fg_proto_item){ .kind = FG_PROTO_NEED_MORE };
	if (r->data_left > 0) {
		size_t n = (size_t)MIN((uint64_t)r->len, r->data_left);

		if (n == 0)
			return 0;
		*ret = (struct fg_proto_item){ FG_PROTO_DATA, p, n };
		r->start += n;
		r->len -= n;
		r->data_left -= n;
		return 0;
	}
	nl = r->len ? memchr(p, '\n', r->len) : NULL;
	if (!nl)
		return r->len > r->max_line ? -EMSGSIZE : 0;
	if ((size_t)(nl - p) > r->max_line)
		return -EMSGSIZE;
	*nl = '\0';
	*ret = (struct fg_proto_item){ FG_PROTO_MESSAGE, p, (size_t)(nl - p) };
	r->start += (size_t)(nl - p) + 1;
	r->len -= (size_t)(nl - p) + 1;
	return 0;
}

void fg_proto_reader_expect_data(struct fg_proto_reader *r, uint64_t len)
{
	r->data_left = len;
}

bool fg_proto_reader_pending(const struct fg_proto_reader *r)
{
	for (size_t i = 0; i < r->len; i++) {
		char ch = r->buf[r->start + i];

		if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n')
			return true;
	}
	return false;
}

/* ---- messages ---- */

/*
 * Copies s[0..len) to out (NULL: only counts) with every byte that is not
 * part of a UTF-8 sequence replaced by U+FFFD. Returns the bytes written.
 */
static size_t utf8_copy(const char *s, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len;) {
		const unsigned char *p = (const unsigned char *)s + i;
		size_t used = 1;
		uint32_t cp = 0;

		if (*p >= 0x80)
			used = fg_utf8_next(p, len - i, &cp);
		if (*p >= 0x80 && cp == 0xfffd &&
		    !(used == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] == 0xbd)) {
			if (out)
				memcpy(out + n, "\xef\xbf\xbd", 3);
			n += 3;
		} else {
			if (out)
				memcpy(out + n, p, used);
			n += used;
		}
		i += used;
	}
	return n;
}

char *fg_proto_format(struct json_object *obj)
{
	const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	size_t len, n;
	char *line;

	if (!s)
		return NULL;
	/*
	 * Plain output escapes control characters, so it never holds a raw
	 * newline. It copies strings' other bytes as they are, though, and names
	 * come from processes (comm, paths, symbols): bytes that are not UTF-8
	 * become U+FFFD, so that every message is UTF-8 as the protocol says.
	 */
	len = strlen(s);
	n = utf8_copy(s, len, NULL);
	line = malloc(n + 2);
	if (!line)
		return NULL;
	utf8_copy(s, len, line);
	line[n] = '\n';
	line[n + 1] = '\0';
	return line;
}

int fg_proto_parse(const char *line, size_t len, struct json_object **ret)
{
	_cleanup_(json_object_putp) struct json_object *obj = NULL;
	struct json_tokener *tok;
	struct json_object *v;
	enum json_tokener_error err;

	if (len > INT32_MAX)
		return -EMSGSIZE;
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	obj = json_tokener_parse_ex(tok, line, (int)len);
	err = json_tokener_get_error(tok);
	/* Everything must be consumed: no trailing garbage, no half object. */
	if (err == json_tokener_success && json_tokener_get_parse_end(tok) != len)
		err = json_tokener_error_parse_unexpected;
	json_tokener_free(tok);
	if (err != json_tokener_success || !json_object_is_type(obj, json_type_object))
		return -EBADMSG;
	if (!json_object_object_get_ex(obj, "fgd", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != FG_PROTO_VERSION)
		return -EPROTO;
	*ret = TAKE_PTR(obj);
	return 0;
}

static struct json_object *new_with(const char *key, const char *value)
{
	struct json_object *obj = json_object_new_object();

	if (!obj)
		return NULL;
	if (json_object_object_add(obj, "fgd", json_object_new_int(FG_PROTO_VERSION)) < 0 ||
	    json_object_object_add(obj, key, json_object_new_string(value)) < 0) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

struct json_object *fg_proto_new_message(const char *type)
{
	return new_with("type", type);
}

struct json_object *fg_proto_new_request(const char *cmd)
{
	return new_with("cmd", cmd);
}

/* ---- requests ---- */

static const char *const cmd_names[] = {
	[FG_CMD_STATUS] = "status",     [FG_CMD_RECORD] = "record", [FG_CMD_STOP] = "stop",
	[FG_CMD_SNAPSHOT] = "snapshot", [FG_CMD_TOP] = "top",
};

static const char *const format_names[] = {
	[FG_FORMAT_FOLDED] = "folded", [FG_FORMAT_SVG] = "svg",
	[FG_FORMAT_HTML] = "html",     [FG_FORMAT_TIMED] = "timed",
	[FG_FORMAT_PPROF] = "pprof",   [FG_FORMAT_SPEEDSCOPE] = "speedscope",
};

const char *fg_format_name(enum fg_format f)
{
	return (size_t)f < ELEMENTSOF(format_names) ? format_names[f] : NULL;
}

int fg_format_from_name(const char *name, enum fg_format *ret)
{
	for (size_t i = 0; i < ELEMENTSOF(format_names); i++)
		if (strcmp(name, format_names[i]) == 0) {
			*ret = (enum fg_format)i;
			return 0;
		}
	return -EINVAL;
}

static const char *const call_graph_names[] = {
	[FG_CALL_GRAPH_DEFAULT] = "default",
	[FG_CALL_GRAPH_FP] = "fp",
	[FG_CALL_GRAPH_DWARF] = "dwarf",
};

const char *fg_call_graph_name(enum fg_call_graph g)
{
	return (size_t)g < ELEMENTSOF(call_graph_names) ? call_graph_names[g] : NULL;
}

int fg_call_graph_from_name(const char *name, enum fg_call_graph *ret)
{
	/* "default" is what an absent choice means, not a name a user gives. */
	for (size_t i = FG_CALL_GRAPH_FP; i < ELEMENTSOF(call_graph_names); i++)
		if (strcmp(name, call_graph_names[i]) == 0) {
			*ret = (enum fg_call_graph)i;
			return 0;
		}
	return -EINVAL;
}

static const char *const group_by_names[] = {
	[FG_GROUP_PROCESS] = "process",
	[FG_GROUP_CGROUP] = "cgroup",
	[FG_GROUP_CGROUP_NAME] = "cgroup-name",
};

static const char *const frames_side_names[] = {
	[FG_FRAMES_ALL] = "all",
	[FG_FRAMES_USER] = "user",
	[FG_FRAMES_KERNEL] = "kernel",
};

const char *fg_frames_side_name(enum fg_frames_side s)
{
	return (size_t)s < ELEMENTSOF(frames_side_names) ? frames_side_names[s] : NULL;
}

int fg_frames_side_from_name(const char *name, enum fg_frames_side *ret)
{
	for (size_t i = 0; i < ELEMENTSOF(frames_side_names); i++)
		if (strcmp(name, frames_side_names[i]) == 0) {
			*ret = (enum fg_frames_side)i;
			return 0;
		}
	return -EINVAL;
}

/* An empty CPU list, or one fg_cpulist_parse() reads. */
static bool cpus_valid(const char *s)
{
	int *cpus = NULL;
	size_t n;
	bool ok;

	if (!*s)
		return true;
	ok = fg_cpulist_parse(s, &cpus, &n) == 0 && n > 0;
	free(cpus);
	return ok;
}

/* The optional "frames" member: 0, or -EINVAL for anything but a side's name. */
static int get_frames_side(struct json_object *msg, enum fg_frames_side *ret)
{
	struct json_object *v;

	if (!json_object_object_get_ex(msg, "frames", &v))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -EINVAL;
	return fg_frames_side_from_name(json_object_get_string(v), ret);
}

const char *fg_group_by_name(enum fg_group_by g)
{
	return (size_t)g < ELEMENTSOF(group_by_names) ? group_by_names[g] : NULL;
}

int fg_group_by_from_name(const char *name, enum fg_group_by *ret)
{
	for (size_t i = 0; i < ELEMENTSOF(group_by_names); i++)
		if (strcmp(name, group_by_names[i]) == 0) {
			*ret = (enum fg_group_by)i;
			return 0;
		}
	return -EINVAL;
}

int fg_stack_dump_check(uint64_t n)
{
	return n >= 8 && n <= FG_PROTO_MAX_STACK_DUMP && n % 8 == 0 ? 0 : -EINVAL;
}

void fg_record_request_init(struct fg_record_request *r)
{
	*r = (struct fg_record_request){
		.format = FG_FORMAT_FOLDED,
		.kernel_suffix = true,
		.jit_suffix = true,
		.inline_frames = true,
		.demangle = true,
	};
}

#define FAIL(msg)                           \
	do {                                \
		if (ret_error)              \
			*ret_error = (msg); \
		return -EINVAL;             \
	} while (0)

/* Optional boolean member. */
static int get_bool(struct json_object *msg, const char *key, bool *val)
{
	struct json_object *v;

	if (!json_object_object_get_ex(msg, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return -EINVAL;
	*val = json_object_get_boolean(v);
	return 0;
}

/* Optional integer member within [min, max]. */
static int get_int(struct json_object *msg, const char *key, int64_t min, int64_t max, int64_t *val)
{
	struct json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(msg, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return -EINVAL;
	errno = 0;
	x = json_object_get_int64(v);
	if (errno != 0 || x < min || x > max)
		return -ERANGE;
	*val = x;
	return 0;
}

/* Optional string member of at most max bytes, without NUL, into buf (size > max). */
static int get_str(struct json_object *msg, const char *key, char *buf, size_t max)
{
	struct json_object *v;
	size_t len;

	if (!json_object_object_get_ex(msg, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -EINVAL;
	len = (size_t)json_object_get_string_len(v);
	if (len > max || memchr(json_object_get_string(v), '\0', len))
		return -EINVAL;
	memcpy(buf, json_object_get_string(v), len);
	buf[len] = '\0';
	return 0;
}

static int decode_record(struct json_object *msg, struct fg_record_request *rec,
			 const char **ret_error)
{
	struct json_object *v;
	int64_t x;

	fg_record_request_init(rec);
	if (get_bool(msg, "all", &rec->all) < 0)
		FAIL("'all' must be a boolean");
	if (json_object_object_get_ex(msg, "pids", &v)) {
		size_t n;

		if (!json_object_is_type(v, json_type_array))
			FAIL("'pids' must be an array of process ids");
		n = json_object_array_length(v);
		if (n > FG_PROTO_MAX_PIDS)
			FAIL("too many pids (at most 256)");
		for (size_t i = 0; i < n; i++) {
			struct json_object *p = json_object_array_get_idx(v, i);

			if (!json_object_is_type(p, json_type_int))
				FAIL("'pids' must be an array of process ids");
			x = json_object_get_int64(p);
			if (x <= 0 || x > 4194304)
				FAIL("a pid is out of range");
			rec->pids[rec->n_pids++] = (pid_t)x;
		}
	}
	if (rec->all == (rec->n_pids > 0))
		FAIL("give either 'all' or a non-empty 'pids'");
	if (json_object_object_get_ex(msg, "tids", &v)) {
		size_t n;

		if (!json_object_is_type(v, json_type_array) || rec->all)
			FAIL("'tids' must be an array of thread ids of the 'pids' processes");
		n = json_object_array_length(v);
		if (n > FG_PROTO_MAX_PIDS)
			FAIL("too many tids (at most 256)");
		for (size_t i = 0; i < n; i++) {
			struct json_object *t = json_object_array_get_idx(v, i);

			x = json_object_is_type(t, json_type_int) ? json_object_get_int64(t) : 0;
			if (x <= 0 || x > 4194304)
				FAIL("a tid is out of range");
			rec->tids[rec->n_tids++] = (pid_t)x;
		}
	}

	x = 0;
	if (get_int(msg, "duration_ms", 0, (int64_t)FG_PROTO_MAX_DURATION_MS, &x) < 0)
		FAIL("'duration_ms' must be an integer from 0 (until stopped) to a week");
	rec->duration_ms = (uint64_t)x;
	x = 0;
	if (get_int(msg, "frequency", 1, FG_PROTO_MAX_FREQUENCY, &x) < 0)
		FAIL("'frequency' must be an integer from 1 to 100000 Hz");
	rec->frequency = (uint32_t)x;

	if (json_object_object_get_ex(msg, "format", &v) &&
	    (!json_object_is_type(v, json_type_string) ||
	     fg_format_from_name(json_object_get_string(v), &rec->format) < 0))
		FAIL("'format' must be \"folded\", \"svg\" or \"html\"");
	if (json_object_object_get_ex(msg, "title", &v)) {
		if (!json_object_is_type(v, json_type_string) ||
		    (size_t)json_object_get_string_len(v) >= sizeof(rec->title))
			FAIL("'title' must be a string of at most 255 bytes");
		memcpy(rec->title, json_object_get_string(v),
		       (size_t)json_object_get_string_len(v));
		rec->title[json_object_get_string_len(v)] = '\0';
		if (strlen(rec->title) != (size_t)json_object_get_string_len(v))
			FAIL("'title' must not contain NUL");
	}
	if (get_bool(msg, "kernel_suffix", &rec->kernel_suffix) < 0 ||
	    get_bool(msg, "with_pid", &rec->with_pid) < 0 ||
	    get_bool(msg, "with_tid", &rec->with_tid) < 0 ||
	    get_bool(msg, "jit_suffix", &rec->jit_suffix) < 0)
		FAIL("'kernel_suffix', 'jit_suffix', 'with_pid' and 'with_tid' must be booleans");
	if (get_bool(msg, "inline", &rec->inline_frames) < 0 ||
	    get_bool(msg, "demangle", &rec->demangle) < 0)
		FAIL("'inline' and 'demangle' must be booleans");
	if (json_object_object_get_ex(msg, "call_graph", &v) &&
	    (!json_object_is_type(v, json_type_string) ||
	     fg_call_graph_from_name(json_object_get_string(v), &rec->call_graph) < 0))
		FAIL("'call_graph' must be \"fp\" or \"dwarf\"");
	x = 0;
	if (get_int(msg, "stack_dump", 0, FG_PROTO_MAX_STACK_DUMP, &x) < 0 ||
	    (x != 0 && fg_stack_dump_check((uint64_t)x) < 0))
		FAIL("'stack_dump' must be a multiple of 8 from 8 to 65528 bytes");
	rec->stack_dump = (uint32_t)x;
	if (json_object_object_get_ex(msg, "group_by", &v) &&
	    (!json_object_is_type(v, json_type_string) ||
	     fg_group_by_from_name(json_object_get_string(v), &rec->group_by) < 0))
		FAIL("'group_by' must be \"process\", \"cgroup\" or \"cgroup-name\"");
	if (get_frames_side(msg, &rec->frames) < 0)
		FAIL("'frames' must be \"all\", \"user\" or \"kernel\"");
	if (get_bool(msg, "children", &rec->children) < 0)
		FAIL("'children' must be a boolean");
	if (get_str(msg, "cpus", rec->cpus, FG_PROTO_MAX_CPUS - 1) < 0 || !cpus_valid(rec->cpus))
		FAIL("'cpus' must be a CPU list such as \"0-3,8\"");

	if (rec->children && rec->all)
		FAIL("'children' is for 'pids': 'all' has every process already");
	if (rec->frames != FG_FRAMES_ALL && rec->format == FG_FORMAT_TIMED)
		FAIL("'frames' is for profiles: a timed recording keeps every frame");
	if (get_bool(msg, "off_cpu", &rec->off_cpu) < 0 || get_bool(msg, "wall", &rec->wall) < 0)
		FAIL("'off_cpu' and 'wall' must be booleans");
	if (rec->cpus[0] && rec->off_cpu)
		FAIL("'cpus' is for sampling: off-CPU follows threads wherever they run");
	if (rec->off_cpu && rec->wall)
		FAIL("give 'off_cpu' (blocked time) or 'wall' (on-CPU and blocked time), not both");
	x = 0;
	if (get_int(msg, "min_block_us", 1, FG_PROTO_MAX_MIN_BLOCK_US, &x) < 0)
		FAIL("'min_block_us' must be an integer from 1 to 1000000000");
	rec->min_block_us = (uint32_t)x;
	if (!rec->off_cpu && !rec->wall && rec->min_block_us)
		FAIL("'min_block_us' is for off-CPU and wall-clock recordings ('off_cpu' or 'wall')");
	if (rec->off_cpu && rec->frequency)
		FAIL("'frequency' does not apply to off-CPU recordings: every block is recorded");
	if (get_int(msg, "since_ms", 0, INT64_MAX, &rec->since_ms) < 0 ||
	    get_int(msg, "until_ms", 0, INT64_MAX, &rec->until_ms) < 0)
		FAIL("'since_ms' and 'until_ms' must be Unix ms");
	if (rec->until_ms && rec->until_ms <= rec->since_ms)
		FAIL("'until_ms' must be after 'since_ms'");
	return 0;
}

static int decode_query(struct json_object *msg, enum fg_cmd cmd, struct fg_query_request *q,
			const char **ret_error)
{
	struct json_object *v;
	int64_t x;

	q->uid = -1;
	q->limit = 20;
	if (get_int(msg, "since_ms", 0, INT64_MAX / 2, &q->since_ms) < 0 ||
	    get_int(msg, "until_ms", 0, INT64_MAX / 2, &q->until_ms) < 0)
		FAIL("'since_ms' and 'until_ms' must be Unix times in milliseconds");
	if (q->until_ms && q->until_ms <= q->since_ms)
		FAIL("'until_ms' must be after 'since_ms'");
	x = 0;
	if (get_int(msg, "pid", 1, INT32_MAX, &x) < 0)
		FAIL("'pid' must be a process id");
	q->pid = (pid_t)x;
	if (get_int(msg, "uid", 0, UINT32_MAX - 1, &q->uid) < 0)
		FAIL("'uid' must be a user id");
	if (get_str(msg, "comm", q->comm, FG_PROTO_MAX_SELECTOR) < 0 ||
	    get_str(msg, "cgroup", q->cgroup, FG_PROTO_MAX_SELECTOR) < 0 ||
	    get_str(msg, "exe", q->exe, FG_PROTO_MAX_SELECTOR) < 0)
		FAIL("'comm', 'cgroup' and 'exe' must be strings of at most 1024 bytes");
	if (json_object_object_get_ex(msg, "format", &v) &&
	    (!json_object_is_type(v, json_type_string) ||
	     fg_format_from_name(json_object_get_string(v), &q->format) < 0))
		FAIL("'format' must be \"folded\", \"svg\", \"html\", \"timed\", \"pprof\" or "
		     "\"speedscope\"");
	if (get_str(msg, "title", q->title, FG_PROTO_MAX_TITLE - 1) < 0)
		FAIL("'title' must be a string of at most 255 bytes");
	x = q->limit;
	if (get_int(msg, "limit", 1, FG_PROTO_MAX_TOP, &x) < 0)
		FAIL("'limit' must be from 1 to 1000");
	q->limit = (uint32_t)x;
	if (get_bool(msg, "off_cpu", &q->off_cpu) < 0)
		FAIL("'off_cpu' must be a boolean");
	if (q->off_cpu && cmd != FG_CMD_SNAPSHOT)
		FAIL("'off_cpu' is for snapshots: top lists shares of CPU time");
	if (json_object_object_get_ex(msg, "group_by", &v) &&
	    (!json_object_is_type(v, json_type_string) ||
	     fg_group_by_from_name(json_object_get_string(v), &q->group_by) < 0))
		FAIL("'group_by' must be \"process\", \"cgroup\" or \"cgroup-name\"");
	if (get_bool(msg, "with_pid", &q->with_pid) < 0)
		FAIL("'with_pid' must be a boolean");
	if (get_frames_side(msg, &q->frames) < 0)
		FAIL("'frames' must be \"all\", \"user\" or \"kernel\"");
	if (q->frames != FG_FRAMES_ALL && (cmd != FG_CMD_SNAPSHOT || q->format == FG_FORMAT_TIMED))
		FAIL("'frames' is for snapshots as profiles");
	if ((q->group_by != FG_GROUP_PROCESS || q->with_pid) &&
	    (cmd != FG_CMD_SNAPSHOT || q->format == FG_FORMAT_TIMED))
		FAIL("'group_by' and 'with_pid' are for snapshots as profiles: top lists "
		     "processes, and a timed snapshot keeps the window's stacks");
	return 0;
}

static struct json_object *encode_query(struct json_object *obj, const struct fg_query_request *q)
{
	fg_json_add_int(obj, "since_ms", q->since_ms);
	if (q->until_ms)
		fg_json_add_int(obj, "until_ms", q->until_ms);
	if (q->pid)
		fg_json_add_int(obj, "pid", q->pid);
	if (q->uid >= 0)
		fg_json_add_int(obj, "uid", q->uid);
	if (q->comm[0])
		fg_json_add_str(obj, "comm", q->comm);
	if (q->cgroup[0])
		fg_json_add_str(obj, "cgroup", q->cgroup);
	if (q->exe[0])
		fg_json_add_str(obj, "exe", q->exe);
	fg_json_add_str(obj, "format", fg_format_name(q->format));
	if (q->title[0])
		fg_json_add_str(obj, "title", q->title);
	fg_json_add_int(obj, "limit", q->limit);
	if (q->off_cpu)
		fg_json_add_bool(obj, "off_cpu", true);
	/* Only when asked for: the default request stays what older daemons know. */
	if (q->group_by != FG_GROUP_PROCESS)
		fg_json_add_str(obj, "group_by", fg_group_by_name(q->group_by));
	if (q->with_pid)
		fg_json_add_bool(obj, "with_pid", true);
	if (q->frames != FG_FRAMES_ALL)
		fg_json_add_str(obj, "frames", fg_frames_side_name(q->frames));
	return obj;
}

int fg_proto_decode_request(struct json_object *msg, struct fg_request *ret, const char **ret_error)
{
	struct json_object *v;
	const char *cmd;

	if (!json_object_object_get_ex(msg, "cmd", &v) || !json_object_is_type(v, json_type_string))
		FAIL("a request needs a string 'cmd'");
	cmd = json_object_get_string(v);
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < ELEMENTSOF(cmd_names); i++) {
		if (strcmp(cmd, cmd_names[i]) != 0)
			continue;
		ret->cmd = (enum fg_cmd)i;
		if (ret->cmd == FG_CMD_RECORD)
			return decode_record(msg, &ret->record, ret_error);
		if (ret->cmd == FG_CMD_SNAPSHOT || ret->cmd == FG_CMD_TOP)
			return decode_query(msg, ret->cmd, &ret->query, ret_error);
		return 0;
	}
	FAIL("unknown 'cmd' (expected status, record, stop, snapshot or top)");
}

#undef FAIL

struct json_object *fg_proto_encode_request(const struct fg_request *req)
{
	_cleanup_(json_object_putp) struct json_object *obj = NULL;
	const struct fg_record_request *rec = &req->record;
	struct json_object *pids;

	if ((size_t)req->cmd >= ELEMENTSOF(cmd_names))
		return NULL;
	obj = fg_proto_new_request(cmd_names[req->cmd]);
	if (!obj)
		return NULL;
	if (req->cmd == FG_CMD_SNAPSHOT || req->cmd == FG_CMD_TOP)
		return encode_query(TAKE_PTR(obj), &req->query);
	if (req->cmd != FG_CMD_RECORD)
		return TAKE_PTR(obj);

	if (rec->all) {
		json_object_object_add(obj, "all", json_object_new_boolean(true));
	} else {
		pids = json_object_new_array();
		if (!pids)
			return NULL;
		json_object_object_add(obj, "pids", pids);
		for (size_t i = 0; i < rec->n_pids; i++)
			json_object_array_add(pids, json_object_new_int64(rec->pids[i]));
	}
	json_object_object_add(obj, "duration_ms",
			       json_object_new_int64((int64_t)rec->duration_ms));
	if (rec->frequency)
		json_object_object_add(obj, "frequency", json_object_new_int64(rec->frequency));
	json_object_object_add(obj, "format", json_object_new_string(fg_format_name(rec->format)));
	if (rec->title[0])
		json_object_object_add(obj, "title", json_object_new_string(rec->title));
	json_object_object_add(obj, "kernel_suffix", json_object_new_boolean(rec->kernel_suffix));
	json_object_object_add(obj, "jit_suffix", json_object_new_boolean(rec->jit_suffix));
	json_object_object_add(obj, "with_pid", json_object_new_boolean(rec->with_pid));
	json_object_object_add(obj, "with_tid", json_object_new_boolean(rec->with_tid));
	json_object_object_add(obj, "inline", json_object_new_boolean(rec->inline_frames));
	json_object_object_add(obj, "demangle", json_object_new_boolean(rec->demangle));
	if (rec->call_graph != FG_CALL_GRAPH_DEFAULT)
		json_object_object_add(obj, "call_graph",
				       json_object_new_string(fg_call_graph_name(rec->call_graph)));
	if (rec->stack_dump)
		json_object_object_add(obj, "stack_dump", json_object_new_int64(rec->stack_dump));
	/* Only when asked for: the default request stays what older daemons know. */
	if (rec->frames != FG_FRAMES_ALL)
		fg_json_add_str(obj, "frames", fg_frames_side_name(rec->frames));
	if (rec->children)
		fg_json_add_bool(obj, "children", true);
	if (rec->cpus[0])
		fg_json_add_str(obj, "cpus", rec->cpus);
	if (rec->n_tids) {
		struct json_object *tids = json_object_new_array();

		if (!tids)
			return NULL;
		json_object_object_add(obj, "tids", tids);
		for (size_t i = 0; i < rec->n_tids; i++)
			json_object_array_add(tids, json_object_new_int64(rec->tids[i]));
	}
	if (rec->off_cpu)
		json_object_object_add(obj, "off_cpu", json_object_new_boolean(true));
	if (rec->wall)
		json_object_object_add(obj, "wall", json_object_new_boolean(true));
	if (rec->min_block_us)
		json_object_object_add(obj, "min_block_us",
				       json_object_new_int64(rec->min_block_us));
	if (rec->since_ms)
		json_object_object_add(obj, "since_ms", json_object_new_int64(rec->since_ms));
	if (rec->until_ms)
		json_object_object_add(obj, "until_ms", json_object_new_int64(rec->until_ms));
	if (rec->group_by != FG_GROUP_PROCESS) {
		if (!fg_group_by_name(rec->group_by))
			return NULL;
		json_object_object_add(obj, "group_by",
				       json_object_new_string(fg_group_by_name(rec->group_by)));
	}
	return TAKE_PTR(obj);
}

/* ---- errors ---- */

static const struct {
	int err;
	const char *name;
} errno_names[] = {
#define E(x)          \
	{             \
		x, #x \
	}
	E(EPERM),    E(ENOENT),     E(ESRCH),        E(EINTR),      E(EIO),       E(E2BIG),
	E(ENOEXEC),  E(EBADF),      E(EAGAIN),       E(ENOMEM),     E(EACCES),    E(EBUSY),
	E(EEXIST),   E(ENODEV),     E(EINVAL),       E(ENFILE),     E(EMFILE),    E(ENOSPC),
	E(ERANGE),   E(ENOSYS),     E(EPROTO),       E(EBADMSG),    E(EOVERFLOW), E(EUSERS),
	E(EMSGSIZE), E(EOPNOTSUPP), E(ECONNREFUSED), E(ECONNRESET), E(ETIMEDOUT), E(ECANCELED),
	E(ECHILD),   E(ENODATA),
#undef E
};

const char *fg_errno_name(int err)
{
	for (size_t i = 0; i < ELEMENTSOF(errno_names); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	return NULL;
}

int fg_errno_from_name(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(errno_names); i++)
		if (strcmp(errno_names[i].name, name) == 0)
			return errno_names[i].err;
	return 0;
}
