/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>

#include "base/conf.h"
#include "config.h"
#include "fgd-conf.h"
#include "test.h"

#define NS 1000000000ULL

struct errors {
	unsigned n;
	unsigned line[8];
	char message[8][FG_CONF_MAX_MESSAGE];
};

static void collect(void *ctx, const struct fg_conf_error *err)
{
	struct errors *e = ctx;

	if (e->n < 8) {
		e->line[e->n] = err->line;
		snprintf(e->message[e->n], sizeof(e->message[0]), "%s", err->message);
	}
	e->n++;
}

static int parse(struct fgd_config *c, const char *text, struct errors *e)
{
	*e = (struct errors){ 0 };
	return fgd_config_parse(c, text, strlen(text), collect, e);
}

TEST(defaults)
{
	struct fgd_config c;

	ASSERT_OK(fgd_config_init(&c));
	ASSERT_STREQ(c.socket_path, FG_DEFAULT_SOCKET);
	ASSERT_TRUE(c.socket_group == NULL);
	/* No reader role unless fgd.c finds the default group. */
	ASSERT_TRUE(c.reader_group == NULL);
	ASSERT_EQ(c.default_frequency, 99);
	ASSERT_EQ(c.call_graph, FG_CALL_GRAPH_DWARF);
	ASSERT_TRUE(c.always_on);
	ASSERT_EQ(c.slice_seconds, 10);
	ASSERT_EQ(c.window_seconds, 900);
	/* A user's off-CPU recording keeps 10,000 blocks a second at most. */
	ASSERT_EQ(c.off_cpu_user_rate, 10000);
	/* The whole daemon's memory budget (common/base/budget.h). */
	ASSERT_U64_EQ(c.memory_max, 96ULL << 20);
	ASSERT_STREQ(c.state_directory, "/var/lib/fgd");
	/* An hour of slices, a day of 1 min files, a week of 10 min files. */
	ASSERT_EQ(c.history_policy.n_tiers, 2);
	ASSERT_U64_EQ(c.history_policy.tiers[0].age_ns, 3600 * NS);
	ASSERT_U64_EQ(c.history_policy.tiers[0].width_ns, 60 * NS);
	ASSERT_U64_EQ(c.history_policy.tiers[1].age_ns, 86400 * NS);
	ASSERT_U64_EQ(c.history_policy.tiers[1].width_ns, 600 * NS);
	ASSERT_U64_EQ(c.history_policy.keep_ns, 7 * 86400 * NS);
	fgd_config_done(&c);
}

TEST(every_key)
{
	struct fgd_config c;
	struct errors e;

	ASSERT_OK(fgd_config_init(&c));
	ASSERT_OK(parse(&c,
			"# comment\n; another\n\n[fgd]\r\n"
			"Socket = /run/x/y.sock\n"
			"SocketGroup=wheel\n"
			"ReaderGroup=fgd-readers\n"
			"Frequency=997\n"
			"CallGraph=fp\n"
			"StackDump=8K\n"
			"RingPages=64\n"
			"AlwaysOn=no\n"
			"AlwaysOnFrequency=49\n"
			"OffCpu=yes\n"
			"OffCpuMinBlockUSec=250\n"
			"OffCpuUserRate=2500\n"
			"SliceSec=1min\n"
			"WindowSec=2h\n"
			"MemoryMax=1G\n"
			"StateDirectory=/srv/fgd\n"
			"HistoryKeepSec=30d\n"
			"JitMapMax=64M\n"
			"HistoryTiers= 30min:30s\t 2h:5min  3d:1h ",
			&e));
	ASSERT_EQ(e.n, 0);
	ASSERT_STREQ(c.socket_path, "/run/x/y.sock");
	ASSERT_STREQ(c.socket_group, "wheel");
	ASSERT_STREQ(c.reader_group, "fgd-readers");
	ASSERT_EQ(c.default_frequency, 997);
	ASSERT_EQ(c.call_graph, FG_CALL_GRAPH_FP);
	ASSERT_EQ(c.stack_dump, 8192);
	ASSERT_EQ(c.ring_pages, 64);
	ASSERT_TRUE(!c.always_on);
	ASSERT_EQ(c.always_on_frequency, 49);
	ASSERT_TRUE(c.off_cpu);
	ASSERT_EQ(c.off_cpu_min_block_us, 250);
	ASSERT_EQ(c.off_cpu_user_rate, 2500);
	ASSERT_ERR(parse(&c, "OffCpuMinBlockUSec=0\n", &e), -EINVAL);
	ASSERT_ERR(parse(&c, "OffCpuUserRate=0\n", &e), -EINVAL);
	ASSERT_ERR(parse(&c, "OffCpuUserRate=10000001\n", &e), -EINVAL);
	ASSERT_EQ(c.off_cpu_user_rate, 2500);
	ASSERT_ERR(parse(&c, "OffCpu=maybe\n", &e), -EINVAL);
	ASSERT_EQ(c.off_cpu_min_block_us, 250);
	ASSERT_EQ(c.slice_seconds, 60);
	ASSERT_EQ(c.window_seconds, 7200);
	ASSERT_U64_EQ(c.memory_max, 1ULL << 30);
	ASSERT_STREQ(c.state_directory, "/srv/fgd");
	ASSERT_EQ(c.history_policy.n_tiers, 3);
	ASSERT_U64_EQ(c.history_policy.tiers[0].age_ns, 1800 * NS);
	ASSERT_U64_EQ(c.history_policy.tiers[0].width_ns, 30 * NS);
	ASSERT_U64_EQ(c.history_policy.tiers[2].age_ns, 3 * 86400 * NS);
	ASSERT_U64_EQ(c.history_policy.tiers[2].width_ns, 3600 * NS);
	ASSERT_U64_EQ(c.history_policy.keep_ns, 30 * 86400 * NS);
	ASSERT_U64_EQ(c.jit_map_max, 64ULL << 20);
	ASSERT_OK(parse(&c, "JitMapMax=infinity\n", &e));
	ASSERT_OK(parse(&c, "OffCpuUserRate=infinity\n", &e));
	ASSERT_EQ(c.off_cpu_user_rate, 0);
	ASSERT_U64_EQ(c.jit_map_max, 0);
	ASSERT_ERR(parse(&c, "JitMapMax=12\n", &e), -EINVAL);
	ASSERT_U64_EQ(c.jit_map_max, 0);
	/* No tiers: nothing is merged; infinity: nothing expires (HistoryMax= still applies). */
	ASSERT_OK(parse(&c, "HistoryTiers=\nHistoryKeepSec=infinity\n", &e));
	ASSERT_EQ(c.history_policy.n_tiers, 0);
	ASSERT_U64_EQ(c.history_policy.keep_ns, 0);
	/* An empty SocketGroup= goes back to the default. */
	ASSERT_OK(parse(&c, "SocketGroup=\n", &e));
	ASSERT_TRUE(c.socket_group == NULL);
	/* ReaderGroup= alike; a name with a slash or colon is none, and the old one stays. */
	ASSERT_OK(parse(&c, "ReaderGroup=readers\n", &e));
	ASSERT_ERR(parse(&c, "ReaderGroup=a:b\n", &e), -EINVAL);
	ASSERT_ERR(parse(&c, "ReaderGroup=a/b\n", &e), -EINVAL);
	ASSERT_STREQ(c.reader_group, "readers");
	ASSERT_OK(parse(&c, "ReaderGroup=\n", &e));
	ASSERT_TRUE(c.reader_group == NULL);
	fgd_config_done(&c);
}

TEST(errors_have_lines_and_leave_the_config_alone)
{
	struct fgd_config c;
	struct errors e;

	ASSERT_OK(fgd_config_init(&c));
	ASSERT_ERR(parse(&c,
			 "Frequency=500\n"
			 "Bogus=1\n"
			 "Frequency=0\n"
			 "no equals sign\n"
			 "[other]\n"
			 "Frequency=5\n"
			 "[fgd\n"
			 "RingPages=3\n",
			 &e),
		   -EINVAL);
	ASSERT_EQ(e.n, 6);
	ASSERT_EQ(e.line[0], 2);
	ASSERT_STREQ(e.message[0], "unknown key Bogus");
	ASSERT_EQ(e.line[1], 3);
	ASSERT_STREQ(e.message[1], "Frequency=0: expected 1 to 100000 (Hz)");
	ASSERT_EQ(e.line[2], 4);
	ASSERT_STREQ(e.message[2], "expected Key=Value");
	ASSERT_EQ(e.line[3], 6);
	ASSERT_STREQ(e.message[3], "Frequency= is in section [other]; fgd reads only [fgd]");
	ASSERT_EQ(e.line[4], 7);
	ASSERT_EQ(e.line[5], 8);
	/* Nothing applied, not even the good first line. */
	ASSERT_EQ(c.default_frequency, 99);

	ASSERT_ERR(parse(&c, "SliceSec=60\nWindowSec=30\n", &e), -EINVAL);
	ASSERT_EQ(e.n, 1);
	ASSERT_EQ(e.line[0], 0);
	ASSERT_ERR(parse(&c, "Socket=relative\n", &e), -EINVAL);
	ASSERT_ERR(parse(&c, "StackDump=12\n", &e), -EINVAL);
	ASSERT_ERR(parse(&c, "MemoryMax=18446744073709551615G\n", &e), -EINVAL);
	/* A budget for everything: below 32M there is no room to name anything. */
	ASSERT_ERR(parse(&c, "MemoryMax=8M\n", &e), -EINVAL);
	ASSERT_STREQ(e.message[0],
		     "MemoryMax=8M: expected 32M to 1T (bytes, or with K, M, G or T)");
	ASSERT_ERR(parse(&c, "AlwaysOn=maybe\n", &e), -EINVAL);
	ASSERT_EQ(c.default_frequency, 99);

	/* The history's tiers: each pair, their order, and the retention against the last. */
	ASSERT_ERR(parse(&c, "HistoryTiers=1h\n", &e), -EINVAL);
	ASSERT_STREQ(e.message[0],
		     "HistoryTiers=1h: expected AGE:LENGTH pairs of times, e.g. 1h:1min 1d:10min");
	ASSERT_ERR(parse(&c, "HistoryTiers=1h:0\n", &e), -EINVAL);
	ASSERT_ERR(parse(&c, "HistoryTiers=1h:1min:2\n", &e), -EINVAL);
	ASSERT_ERR(parse(&c, "HistoryTiers=1h:1min 30min:10min\n", &e), -EINVAL);
	ASSERT_STREQ(e.message[0],
		     "HistoryTiers=1h:1min 30min:10min: the tiers' ages must increase");
	ASSERT_ERR(parse(&c, "HistoryTiers=1h:1min 1d:90s\n", &e), -EINVAL);
	ASSERT_STREQ(e.message[0], "HistoryTiers=1h:1min 1d:90s: each tier's file length must be a "
				   "multiple of the one before");
	ASSERT_ERR(parse(&c, "HistoryTiers=1:1 2:2 3:4 4:8 5:16 6:32 7:64 8:128 9:256\n", &e),
		   -EINVAL);
	ASSERT_STREQ(e.message[0], "HistoryTiers=: at most 8 tiers");
	ASSERT_ERR(parse(&c, "HistoryKeepSec=forever\n", &e), -EINVAL);
	ASSERT_ERR(parse(&c, "HistoryKeepSec=1d\n", &e), -EINVAL);
	ASSERT_EQ(e.line[0], 0);
	ASSERT_STREQ(e.message[0],
		     "HistoryTiers= with HistoryKeepSec=: history must be kept longer "
		     "than the last tier's age");
	/* The same, whatever the order of the keys. */
	ASSERT_ERR(parse(&c, "HistoryKeepSec=2h\nHistoryTiers=1h:1min 3h:10min\n", &e), -EINVAL);
	ASSERT_OK(parse(&c, "HistoryTiers=1h:1min\nHistoryKeepSec=2h\n", &e));
	ASSERT_U64_EQ(c.history_policy.keep_ns, 7200 * NS);
	fgd_config_done(&c);
}

TEST(nul_and_long_lines)
{
	char text[FG_CONF_MAX_LINE + 64];
	struct fgd_config c;
	struct errors e = { 0 };

	ASSERT_OK(fgd_config_init(&c));
	ASSERT_ERR(fgd_config_parse(&c, "Frequency=1\0\nCallGraph=fp\n", 26, collect, &e), -EINVAL);
	ASSERT_EQ(e.n, 1);
	ASSERT_STREQ(e.message[0], "contains a NUL byte");
	memset(text, 'x', sizeof(text));
	e = (struct errors){ 0 };
	ASSERT_ERR(fgd_config_parse(&c, text, sizeof(text), collect, &e), -EINVAL);
	ASSERT_EQ(e.n, 1);
	ASSERT_EQ(c.default_frequency, 99);
	fgd_config_done(&c);
}

TEST(value_parsers)
{
	uint64_t b = 7;
	uint32_t s = 7;
	bool v = false;

	ASSERT_OK(fg_conf_parse_bytes("64M", 0, UINT64_MAX, &b));
	ASSERT_U64_EQ(b, 64ULL << 20);
	ASSERT_OK(fg_conf_parse_bytes("3KiB", 0, UINT64_MAX, &b));
	ASSERT_U64_EQ(b, 3072);
	ASSERT_ERR(fg_conf_parse_bytes("1m", 0, UINT64_MAX, &b), -EINVAL);
	ASSERT_ERR(fg_conf_parse_bytes("M", 0, UINT64_MAX, &b), -EINVAL);
	ASSERT_ERR(fg_conf_parse_bytes("99999999999999999999", 0, UINT64_MAX, &b), -ERANGE);
	ASSERT_ERR(fg_conf_parse_bytes("17000000T", 0, UINT64_MAX, &b), -ERANGE);
	ASSERT_ERR(fg_conf_parse_bytes("2K", 0, 1024, &b), -ERANGE);
	ASSERT_U64_EQ(b, 3072);
	ASSERT_OK(fg_conf_parse_seconds("15min", 1, 86400, &s));
	ASSERT_EQ(s, 900);
	ASSERT_OK(fg_conf_parse_seconds("10s", 1, 86400, &s));
	ASSERT_EQ(s, 10);
	ASSERT_ERR(fg_conf_parse_seconds("0", 1, 86400, &s), -ERANGE);
	ASSERT_OK(fg_conf_parse_seconds("1d", 1, 86400, &s));
	ASSERT_EQ(s, 86400);
	ASSERT_OK(fg_conf_parse_seconds("2w", 1, 14 * 86400, &s));
	ASSERT_EQ(s, 14 * 86400);
	ASSERT_ERR(fg_conf_parse_seconds("2d", 1, 86400, &s), -ERANGE);
	ASSERT_ERR(fg_conf_parse_seconds("1y", 1, 86400, &s), -EINVAL);
	ASSERT_ERR(fg_conf_parse_seconds("-1", 1, 86400, &s), -EINVAL);
	ASSERT_OK(fg_conf_parse_bool("Yes", &v));
	ASSERT_TRUE(v);
	ASSERT_OK(fg_conf_parse_bool("off", &v));
	ASSERT_TRUE(!v);
	ASSERT_ERR(fg_conf_parse_bool("", &v), -EINVAL);
}

/* The template meson installs parses, and its commented values are the defaults. */
TEST(example_file_matches_defaults)
{
	char path[4096], *text, *uncommented;
	struct fgd_config c, d;
	struct errors e;
	size_t len, j = 0;

	snprintf(path, sizeof(path), "%s/../../systemd/fgd.conf.example", fg_test_data_dir());
	ASSERT_OK(fgd_config_read_file(path, &text, &len));
	uncommented = malloc(len + 1);
	ASSERT_TRUE(uncommented);
	for (size_t i = 0; i < len; i++) {
		/* "#Key=" lines become assignments; prose comments stay comments. */
		if (text[i] == '#' && (i == 0 || text[i - 1] == '\n') && i + 1 < len &&
		    text[i + 1] != ' ')
			continue;
		uncommented[j++] = text[i];
	}
	ASSERT_OK(fgd_config_init(&c));
	ASSERT_OK(fgd_config_init(&d));
	ASSERT_OK(parse(&c, (uncommented[j] = '\0', uncommented), &e));
	ASSERT_STREQ(c.socket_path, d.socket_path);
	ASSERT_STREQ(c.socket_group, "fgd");
	ASSERT_EQ(c.default_frequency, d.default_frequency);
	ASSERT_EQ(c.call_graph, d.call_graph);
	ASSERT_EQ(c.stack_dump, d.stack_dump);
	ASSERT_EQ(c.ring_pages, d.ring_pages);
	ASSERT_EQ(c.always_on, d.always_on);
	ASSERT_EQ(c.always_on_frequency, d.always_on_frequency);
	ASSERT_EQ(c.off_cpu_user_rate, d.off_cpu_user_rate);
	ASSERT_EQ(c.slice_seconds, d.slice_seconds);
	ASSERT_EQ(c.window_seconds, d.window_seconds);
	ASSERT_U64_EQ(c.memory_max, d.memory_max);
	ASSERT_STREQ(c.state_directory, d.state_directory);
	ASSERT_U64_EQ(c.history_max, d.history_max);
	ASSERT_EQ(memcmp(&c.history_policy, &d.history_policy, sizeof(c.history_policy)), 0);
	fgd_config_done(&c);
	fgd_config_done(&d);
	free(uncommented);
	free(text);
}
