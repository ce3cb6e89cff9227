/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "base/macro.h"
#include "base/parse.h"
#include "config.h"
#include "fgd-conf.h"
#include "proto/proto.h"
#include "resolver/fgd-jit.h"

#define NS 1000000000ULL
/* The longest age, file length or retention of the history: about ten years. */
#define HISTORY_MAX_SECONDS (3650U * 86400)

int fgd_config_init(struct fgd_config *ret)
{
	struct fgd_config c = {
		.default_frequency = FGD_DEFAULT_FREQUENCY,
		.call_graph = FG_CALL_GRAPH_DWARF,
		.stack_dump = FG_PROTO_DEFAULT_STACK_DUMP,
		.ring_pages = FGD_DEFAULT_RING_PAGES,
		.track_ring_pages = FGD_TRACK_RING_PAGES,
		.always_on = true,
		.always_on_frequency = FGD_DEFAULT_ALWAYS_ON_FREQUENCY,
		.slice_seconds = 10,
		.window_seconds = 900,
		.off_cpu_min_block_us = FGD_DEFAULT_OFF_CPU_MIN_BLOCK_US,
		.off_cpu_user_rate = FGD_DEFAULT_OFF_CPU_USER_RATE,
		.memory_max = FGD_DEFAULT_MEMORY_MAX,
		.history_max = 1ULL << 30,
		.jit_map_max = FG_JIT_DEFAULT_MAX_MAP,
		.realtime_priority = FGD_DEFAULT_REALTIME_PRIORITY,
		/* An hour of slices as written, a day of 1 min files, a week of 10 min files. */
		.history_policy = {
			.tiers = { { 3600 * NS, 60 * NS }, { 86400 * NS, 600 * NS } },
			.n_tiers = 2,
			.keep_ns = 7 * 86400 * NS,
		},
	};

	if (fgd_config_set_string(&c.socket_path, FG_DEFAULT_SOCKET) < 0 ||
	    fgd_config_set_string(&c.state_directory, FGD_DEFAULT_STATE_DIRECTORY) < 0) {
		fgd_config_done(&c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

int fgd_config_set_string(const char **field, const char *value)
{
	char *copy = NULL;

	if (value) {
		copy = strdup(value);
		if (!copy)
			return -ENOMEM;
	}
	free((char *)*field);
	*field = copy;
	return 0;
}

int fgd_config_copy(const struct fgd_config *src, struct fgd_config *ret)
{
	struct fgd_config c = *src;

	c.socket_path = c.socket_group = c.reader_group = c.state_directory = NULL;
	if (fgd_config_set_string(&c.socket_path, src->socket_path) < 0 ||
	    fgd_config_set_string(&c.socket_group, src->socket_group) < 0 ||
	    fgd_config_set_string(&c.reader_group, src->reader_group) < 0 ||
	    fgd_config_set_string(&c.state_directory, src->state_directory) < 0) {
		fgd_config_done(&c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

void fgd_config_done(struct fgd_config *c)
{
	free((char *)c->socket_path);
	free((char *)c->socket_group);
	free((char *)c->reader_group);
	free((char *)c->state_directory);
	*c = (struct fgd_config){ 0 };
}

/* ---- the keys ---- */

typedef int (*key_fn)(struct fgd_config *c, const char *value, struct fg_conf_error *err);

#define FAIL(err, ...) (snprintf((err)->message, sizeof((err)->message), __VA_ARGS__), -EINVAL)

static int set_path(const char **field, const char *key, size_t max, const char *value,
		    struct fg_conf_error *err)
{
	if (value[0] != '/')
		return FAIL(err, "%s=%s: expected an absolute path", key, value);
	if (strlen(value) >= max)
		return FAIL(err, "%s=: path longer than %zu bytes", key, max - 1);
	return fgd_config_set_string(field, value);
}

static int key_socket(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	return set_path(&c->socket_path, "Socket", sizeof(((struct sockaddr_un *)0)->sun_path),
			value, err);
}

/* A group's name into *field; empty: back to the default, a group of fgd's name if it exists. */
static int group_key(const char *key, const char **field, const char *value,
		     struct fg_conf_error *err)
{
	if (!value[0])
		return fgd_config_set_string(field, NULL);
	if (strlen(value) > 32 || strchr(value, '/') || strchr(value, ':'))
		return FAIL(err, "%s=%s: not a group name", key, value);
	return fgd_config_set_string(field, value);
}

static int key_socket_group(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	return group_key("SocketGroup", &c->socket_group, value, err); /* default: "fgd" */
}

static int key_reader_group(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	return group_key("ReaderGroup", &c->reader_group, value, err); /* default: "fgd-readers" */
}

static int parse_hz(const char *key, const char *value, uint32_t *ret, struct fg_conf_error *err)
{
	if (fg_parse_u32(value, 1, 100000, ret) < 0)
		return FAIL(err, "%s=%s: expected 1 to 100000 (Hz)", key, value);
	return 0;
}

static int key_frequency(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	return parse_hz("Frequency", value, &c->default_frequency, err);
}

static int key_call_graph(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (fg_call_graph_from_name(value, &c->call_graph) < 0)
		return FAIL(err, "CallGraph=%s: expected dwarf or fp", value);
	return 0;
}

static int key_stack_dump(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	uint64_t v;

	if (fg_conf_parse_bytes(value, 8, FG_PROTO_MAX_STACK_DUMP, &v) < 0 ||
	    fg_stack_dump_check(v) < 0)
		return FAIL(err, "StackDump=%s: expected a multiple of 8 from 8 to %d bytes", value,
			    FG_PROTO_MAX_STACK_DUMP);
	c->stack_dump = (uint32_t)v;
	return 0;
}

static int key_ring_pages(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	uint32_t v;

	if (fg_parse_u32(value, 1, 65536, &v) < 0 || (v & (v - 1)))
		return FAIL(err, "RingPages=%s: expected a power of two from 1 to 65536", value);
	c->ring_pages = v;
	return 0;
}

static int key_always_on(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (fg_conf_parse_bool(value, &c->always_on) < 0)
		return FAIL(err, "AlwaysOn=%s: expected yes or no", value);
	return 0;
}

static int key_always_on_frequency(struct fgd_config *c, const char *value,
				   struct fg_conf_error *err)
{
	return parse_hz("AlwaysOnFrequency", value, &c->always_on_frequency, err);
}

static int key_off_cpu(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (fg_conf_parse_bool(value, &c->off_cpu) < 0)
		return FAIL(err, "OffCpu=%s: expected yes or no", value);
	return 0;
}

static int key_off_cpu_min_block(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (fg_parse_u32(value, 1, FGD_MAX_OFF_CPU_MIN_BLOCK_US, &c->off_cpu_min_block_us) < 0)
		return FAIL(err, "OffCpuMinBlockUSec=%s: expected microseconds from 1 to %u", value,
			    FGD_MAX_OFF_CPU_MIN_BLOCK_US);
	return 0;
}

static int key_off_cpu_user_rate(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (strcmp(value, "infinity") == 0) {
		c->off_cpu_user_rate = 0;
		return 0;
	}
	if (fg_parse_u32(value, 1, FGD_MAX_OFF_CPU_USER_RATE, &c->off_cpu_user_rate) < 0)
		return FAIL(err,
			    "OffCpuUserRate=%s: expected blocks a second from 1 to %u, or infinity",
			    value, FGD_MAX_OFF_CPU_USER_RATE);
	return 0;
}

static int key_slice(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (fg_conf_parse_seconds(value, 1, 3600, &c->slice_seconds) < 0)
		return FAIL(err,
			    "SliceSec=%s: expected 1s to 1h (a number of seconds, or with "
			    "s, min or h)",
			    value);
	return 0;
}

static int key_window(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (fg_conf_parse_seconds(value, 1, 24 * 3600, &c->window_seconds) < 0)
		return FAIL(err,
			    "WindowSec=%s: expected 1s to 24h (a number of seconds, or with "
			    "s, min or h)",
			    value);
	return 0;
}

static int key_memory_max(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (fg_conf_parse_bytes(value, FGD_MIN_MEMORY_MAX, 1ULL << 40, &c->memory_max) < 0)
		return FAIL(err, "MemoryMax=%s: expected 32M to 1T (bytes, or with K, M, G or T)",
			    value);
	return 0;
}

static int key_history_max(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (fg_conf_parse_bytes(value, 1ULL << 20, 1ULL << 50, &c->history_max) < 0)
		return FAIL(err, "HistoryMax=%s: expected 1M or more (bytes, or with K, M, G or T)",
			    value);
	return 0;
}

static int key_realtime_priority(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (fg_parse_u32(value, 0, 99, &c->realtime_priority) < 0)
		return FAIL(err, "RealtimePriority=%s: expected 0 (normal priority) to 99", value);
	return 0;
}

static int key_jit_map_max(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	if (strcmp(value, "infinity") == 0) {
		c->jit_map_max = 0;
		return 0;
	}
	if (fg_conf_parse_bytes(value, 1ULL << 10, 1ULL << 40, &c->jit_map_max) < 0)
		return FAIL(err,
			    "JitMapMax=%s: expected 1K to 1T (bytes, or with K, M, G or T) or "
			    "infinity",
			    value);
	return 0;
}

/* "AGE:LENGTH ...": from AGE on, files are merged into files of LENGTH. */
static int key_history_tiers(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	struct fg_compaction_policy p = { .keep_ns = 0 }; /* retention is checked with the others */
	char copy[FG_CONF_MAX_LINE + 1], *save = NULL;
	const char *why;

	snprintf(copy, sizeof(copy), "%s", value);
	for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *colon = strchr(tok, ':');
		uint32_t age, length;

		if (p.n_tiers == FG_COMPACTION_MAX_TIERS)
			return FAIL(err, "HistoryTiers=: at most %d tiers",
				    FG_COMPACTION_MAX_TIERS);
		if (colon)
			*colon = '\0';
		if (!colon || fg_conf_parse_seconds(tok, 1, HISTORY_MAX_SECONDS, &age) < 0 ||
		    fg_conf_parse_seconds(colon + 1, 1, HISTORY_MAX_SECONDS, &length) < 0)
			return FAIL(err,
				    "HistoryTiers=%s: expected AGE:LENGTH pairs of times, e.g. "
				    "1h:1min 1d:10min",
				    value);
		p.tiers[p.n_tiers++] = (struct fg_compaction_tier){ age * NS, length * NS };
	}
	if (fg_compaction_policy_check(&p, &why) < 0)
		return FAIL(err, "HistoryTiers=%s: %s", value, why);
	p.keep_ns = c->history_policy.keep_ns;
	c->history_policy = p;
	return 0;
}

static int key_history_keep(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	uint32_t v;

	if (strcmp(value, "infinity") == 0) {
		c->history_policy.keep_ns = 0;
		return 0;
	}
	if (fg_conf_parse_seconds(value, 1, HISTORY_MAX_SECONDS, &v) < 0)
		return FAIL(err,
			    "HistoryKeepSec=%s: expected 1s to 3650d (a time with s, min, h, d "
			    "or w) or infinity",
			    value);
	c->history_policy.keep_ns = v * NS;
	return 0;
}

static int key_state_directory(struct fgd_config *c, const char *value, struct fg_conf_error *err)
{
	return set_path(&c->state_directory, "StateDirectory", 4096, value, err);
}

static const struct {
	const char *name;
	key_fn fn;
} keys[] = {
	{ "Socket", key_socket },
	{ "SocketGroup", key_socket_group },
	{ "ReaderGroup", key_reader_group },
	{ "Frequency", key_frequency },
	{ "CallGraph", key_call_graph },
	{ "StackDump", key_stack_dump },
	{ "RingPages", key_ring_pages },
	{ "AlwaysOn", key_always_on },
	{ "AlwaysOnFrequency", key_always_on_frequency },
	{ "OffCpu", key_off_cpu },
	{ "OffCpuMinBlockUSec", key_off_cpu_min_block },
	{ "OffCpuUserRate", key_off_cpu_user_rate },
	{ "SliceSec", key_slice },
	{ "WindowSec", key_window },
	{ "MemoryMax", key_memory_max },
	{ "StateDirectory", key_state_directory },
	{ "HistoryMax", key_history_max },
	{ "HistoryTiers", key_history_tiers },
	{ "HistoryKeepSec", key_history_keep },
	{ "JitMapMax", key_jit_map_max },
	{ "RealtimePriority", key_realtime_priority },
};

struct parse_ctx {
	struct fgd_config *c; /* borrowed: the config being built */
	fg_conf_error_fn on_error;
	void *ctx;
};

static int assign(void *userdata, const char *section, const char *key, const char *value,
		  struct fg_conf_error *err)
{
	struct parse_ctx *p = userdata;

	if (section && strcmp(section, "fgd") != 0)
		return FAIL(err, "%s= is in section [%s]; fgd reads only [fgd]", key, section);
	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		if (strcmp(keys[i].name, key) == 0)
			return keys[i].fn(p->c, value, err);
	return FAIL(err, "unknown key %s", key);
}

static void forward_error(void *userdata, const struct fg_conf_error *err)
{
	struct parse_ctx *p = userdata;

	p->on_error(p->ctx, err);
}

int fgd_config_parse(struct fgd_config *c, const char *text, size_t len, fg_conf_error_fn on_error,
		     void *ctx)
{
	struct fgd_config next;
	struct parse_ctx p = { .c = &next, .on_error = on_error, .ctx = ctx };
	int r;

	r = fgd_config_copy(c, &next);
	if (r < 0)
		return r;
	r = fg_conf_parse(text, len, assign, forward_error, &p);
	if (r >= 0) {
		struct fg_conf_error err = { .line = 0 };

		r = fgd_config_check(&next, &err);
		if (r < 0)
			on_error(ctx, &err);
	}
	if (r < 0) {
		fgd_config_done(&next);
		return r;
	}
	fgd_config_done(c);
	*c = next;
	return 0;
}

int fgd_config_check(const struct fgd_config *c, struct fg_conf_error *err)
{
	const struct fg_compaction_policy *p = &c->history_policy;
	const char *why;

	if (c->window_seconds < c->slice_seconds)
		return FAIL(err, "WindowSec= (%us) is shorter than SliceSec= (%us)",
			    c->window_seconds, c->slice_seconds);
	if (fg_compaction_policy_check(p, &why) < 0)
		return FAIL(err, "HistoryTiers= with HistoryKeepSec=: %s", why);
	return 0;
}

int fgd_config_read_file(const char *path, char **ret_text, size_t *ret_len)
{
	return fg_read_file(path, FGD_MAX_CONFIG_FILE, ret_text, ret_len);
}
