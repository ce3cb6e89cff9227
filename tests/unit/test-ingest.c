/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What fgctl push sends and how it keeps its place (common/proto/ingest.h). */
#include <errno.h>
#include <string.h>

#include "proto/ingest.h"
#include "test.h"

static void app_name(const char *tmpl, const char *comm, const char *cgroup, const char *want)
{
	struct fg_ingest_process p = { .comm = comm, .cgroup = cgroup };
	struct fg_outbuf b = {};

	fg_ingest_app_name(tmpl, &p, &b);
	fg_outbuf_put(&b, "", 1);
	ASSERT_OK(b.err);
	ASSERT_STREQ(b.data, want);
	fg_outbuf_done(&b);
}

TEST(application_names)
{
	app_name("{comm}", "python3", NULL, "python3");
	/* What Pyroscope's names do not take becomes '_'; brackets go. */
	app_name("{comm}", "kworker/0:1 x", NULL, "kworker_0_1_x");
	app_name("{comm}", "[other processes]", NULL, "other_processes");
	app_name("{unit}", "nginx", "/system.slice/nginx.service", "nginx.service");
	app_name("{unit}", "sh", "/user.slice/user-0.slice/session-3.scope", "session-3.scope");
	/* No unit in the path: its last component; none at all: "root". */
	app_name("{unit}", "x", "/machine/vm1", "vm1");
	app_name("{unit}", "x", "/", "root");
	app_name("{cgroup}", "x", "/system.slice/a.service", "system.slice_a.service");
	app_name("{cgroup}", "x", NULL, "unknown");
	app_name("prod-{comm}.{unit}", "db", "/system.slice/pg.service", "prod-db.pg.service");
	/* Never empty (the cursor keeps it, the server needs one), never unbounded. */
	app_name("{comm}", "[]", NULL, "unknown");
	{
		char deep[400], want[FG_INGEST_MAX_APP + 1];

		memset(deep, 'a', sizeof(deep) - 1);
		deep[0] = '/';
		deep[sizeof(deep) - 1] = '\0';
		memset(want, 'a', FG_INGEST_MAX_APP);
		want[FG_INGEST_MAX_APP] = '\0';
		app_name("{cgroup}", "x", deep, want);
	}
}

TEST(templates)
{
	const char *why = NULL;

	ASSERT_OK(fg_ingest_template_check("{comm}", &why));
	ASSERT_OK(fg_ingest_template_check("a-{unit}-{cgroup}", &why));
	ASSERT_ERR(fg_ingest_template_check("", &why), -EINVAL);
	ASSERT_ERR(fg_ingest_template_check("{pid}", &why), -EINVAL);
	ASSERT_ERR(fg_ingest_template_check("{comm", &why), -EINVAL);
	ASSERT_ERR(fg_ingest_template_check("comm}", &why), -EINVAL);
	ASSERT_TRUE(why != NULL);
}

TEST(labels)
{
	struct fg_ingest_label l;
	const char *why;

	ASSERT_OK(fg_ingest_label_parse("env=prod", &l, &why));
	ASSERT_STREQ(l.key, "env");
	ASSERT_STREQ(l.value, "prod");
	ASSERT_OK(fg_ingest_label_parse("_zone9=eu-west/1 a", &l, &why));
	ASSERT_STREQ(l.value, "eu-west/1 a");
	ASSERT_ERR(fg_ingest_label_parse("env", &l, &why), -EINVAL);
	ASSERT_ERR(fg_ingest_label_parse("=x", &l, &why), -EINVAL);
	ASSERT_ERR(fg_ingest_label_parse("env=", &l, &why), -EINVAL);
	ASSERT_ERR(fg_ingest_label_parse("9env=x", &l, &why), -EINVAL);
	ASSERT_ERR(fg_ingest_label_parse("en-v=x", &l, &why), -EINVAL);
	ASSERT_ERR(fg_ingest_label_parse("host=x", &l, &why), -EINVAL);
	ASSERT_ERR(fg_ingest_label_parse("__name__=x", &l, &why), -EINVAL);
	ASSERT_ERR(fg_ingest_label_parse("a=b,c", &l, &why), -EINVAL);
	ASSERT_ERR(fg_ingest_label_parse("a=b}", &l, &why), -EINVAL);
	ASSERT_ERR(fg_ingest_label_parse("a=b=c", &l, &why), -EINVAL);
	ASSERT_ERR(fg_ingest_label_parse("a=b\nc", &l, &why), -EINVAL);
}

TEST(url)
{
	struct fg_ingest_label labels[2];
	const char *why;
	struct fg_ingest_request r = {
		.base_url = "https://pyro.example:4040/prefix/",
		.app = "python3",
		.host = "web-1",
		.labels = labels,
		.n_labels = 2,
		.from_s = 1700000000,
		.until_s = 1700000015,
		.sample_rate = 99,
		.format = FG_INGEST_PPROF,
	};
	struct fg_outbuf b = {};

	ASSERT_OK(fg_ingest_label_parse("env=prod", &labels[0], &why));
	ASSERT_OK(fg_ingest_label_parse("az=a b", &labels[1], &why));
	fg_ingest_url(&r, &b);
	fg_outbuf_put(&b, "", 1);
	ASSERT_OK(b.err);
	ASSERT_STREQ(b.data,
		     "https://pyro.example:4040/prefix/ingest?name=python3.cpu%7Bhost%3Dweb-1"
		     "%2Cenv%3Dprod%2Caz%3Da%20b%7D&from=1700000000&until=1700000015"
		     "&format=pprof&sampleRate=99&spyName=fgd&units=samples"
		     "&aggregationType=sum");
	fg_outbuf_done(&b);
	r.format = FG_INGEST_FOLDED;
	r.n_labels = 0;
	r.base_url = "http://h";
	fg_ingest_url(&r, &b);
	fg_outbuf_put(&b, "", 1);
	ASSERT_TRUE(strstr(b.data, "http://h/ingest?name=python3.cpu%7Bhost%3Dweb-1%7D&") ==
		    b.data);
	ASSERT_TRUE(strstr(b.data, "&format=folded&") != NULL);
	fg_outbuf_done(&b);
}

TEST(cursor_round_trip_and_damage)
{
	struct fg_ingest_cursor c = {}, d = {};
	struct fg_outbuf b = {};
	static const char *const bad[] = {
		"",
		"fgd-push 1\n",
		"fgd-push 2\nuntil=5\n",
		"fgd-push 1\nuntil=5",
		"fgd-push 1\nuntil=x\n",
		"fgd-push 1\nuntil=-5\n",
		"fgd-push 1\nuntil=5\nuntil=6\n",
		"fgd-push 1\nsent=a\nuntil=5\n",
		"fgd-push 1\nuntil=5\nsent=\n",
		"fgd-push 1\nuntil=5\nother=1\n",
		"fgd-push 1\nuntil=99999999999999999999\n",
	};

	c.until_ms = 1700000015000;
	{
		/* The longest name an application can have goes through the file. */
		char longest[FG_INGEST_MAX_APP + 1];

		memset(longest, 'n', FG_INGEST_MAX_APP);
		longest[FG_INGEST_MAX_APP] = '\0';
		ASSERT_OK(fg_ingest_cursor_sent(&c, longest));
	}
	ASSERT_OK(fg_ingest_cursor_sent(&c, "python3"));
	ASSERT_OK(fg_ingest_cursor_sent(&c, "nginx.service"));
	fg_ingest_cursor_format(&c, &b);
	ASSERT_OK(b.err);
	ASSERT_OK(fg_ingest_cursor_parse(b.data, b.used, &d));
	ASSERT_U64_EQ(d.until_ms, 1700000015000);
	ASSERT_EQ((int)d.n_sent, 3);
	ASSERT_TRUE(fg_ingest_cursor_was_sent(&d, "nginx.service"));
	ASSERT_TRUE(!fg_ingest_cursor_was_sent(&d, "nginx"));
	fg_ingest_cursor_advance(&d, 1700000030000);
	ASSERT_EQ((int)d.n_sent, 0);
	ASSERT_U64_EQ(d.until_ms, 1700000030000);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* A refused text leaves the cursor as it was. */
		ASSERT_ERR(fg_ingest_cursor_parse(bad[i], strlen(bad[i]), &d), -EINVAL);
		ASSERT_U64_EQ(d.until_ms, 1700000030000);
	}
	fg_outbuf_done(&b);
	fg_ingest_cursor_done(&c);
	fg_ingest_cursor_done(&d);
}

TEST(periods)
{
	struct fg_ingest_plan plan = {
		.every_ms = 15000, .delay_ms = 10000, .first_ms = 30000, .max_ms = 3600000
	};
	int64_t from, until, gf, gu;

	/* No cursor: the period holding now - 30 s, due once 10 s past its end. */
	ASSERT_TRUE(fg_ingest_next_period(&plan, 0, 1000051000, &from, &until, &gf, &gu));
	ASSERT_U64_EQ(from, 1000020000);
	ASSERT_U64_EQ(until, 1000035000);
	ASSERT_TRUE(gf == gu);
	/* The next one ends at ...50000: due at ...60000, not before. */
	ASSERT_TRUE(!fg_ingest_next_period(&plan, 1000035000, 1000059999, &from, &until, &gf, &gu));
	ASSERT_U64_EQ(until, 1000050000);
	ASSERT_TRUE(fg_ingest_next_period(&plan, 1000035000, 1000060000, &from, &until, &gf, &gu));
	/* A cursor off the boundaries (--every changed): a short period up to the next one. */
	ASSERT_TRUE(fg_ingest_next_period(&plan, 1000021000, 1000100000, &from, &until, &gf, &gu));
	ASSERT_U64_EQ(from, 1000021000);
	ASSERT_U64_EQ(until, 1000035000);
	/* A cursor older than max: the gap is said, the push starts at the oldest period. */
	ASSERT_TRUE(fg_ingest_next_period(&plan, 1000005000, 1000005000 + 7200000, &from, &until,
					  &gf, &gu));
	ASSERT_U64_EQ(gf, 1000005000);
	ASSERT_U64_EQ(gu, 1003605000);
	ASSERT_U64_EQ(from, 1003605000);
	ASSERT_U64_EQ(until, 1003620000);
	/* A cursor after now (the clock set back): nothing due until it passes, and no gap. */
	ASSERT_TRUE(!fg_ingest_next_period(&plan, 1000050000, 1000000000, &from, &until, &gf, &gu));
	ASSERT_U64_EQ(from, 1000050000);
	ASSERT_U64_EQ(until, 1000065000);
	ASSERT_TRUE(gf == gu);
	ASSERT_TRUE(!fg_ingest_next_period(&plan, 1000050000, 1000074999, &from, &until, &gf, &gu));
	ASSERT_TRUE(fg_ingest_next_period(&plan, 1000050000, 1000075000, &from, &until, &gf, &gu));
	/* Times before 1970 still round down. */
	plan.first_ms = 0;
	ASSERT_TRUE(!fg_ingest_next_period(&plan, 0, -1, &from, &until, &gf, &gu));
	ASSERT_TRUE(from == -15000);
}
