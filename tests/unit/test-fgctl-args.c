/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl's option parsing (cli/fgctl-verb.h and each verb's parser): every
 * verb's options into its struct, bad values and combinations with the
 * exact messages fgctl prints, and --help.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgctl-client.h"
#include "fgctl-diff.h"
#include "fgctl-heatmap.h"
#include "fgctl-push-opts.h"
#include "fgctl-record.h"
#include "fgctl-render.h"
#include "fgctl-snapshot.h"
#include "fgctl-status.h"
#include "fgctl-top.h"
#include "fgctl.h"
#include "test.h"

static const struct fgctl_ctx ctx = { .socket = "/run/test.sock" };

/* What a parser or check wrote on its err stream. */
struct errbuf {
	char *text;
	size_t len;
	FILE *f;
};

static FILE *err_open(struct errbuf *e)
{
	*e = (struct errbuf){};
	e->f = open_memstream(&e->text, &e->len);
	ASSERT_TRUE(e->f != NULL);
	/* getopt_long's own messages (unknown options) are glibc's, on stderr: not tested here. */
	opterr = 0;
	return e->f;
}

static const char *err_text(struct errbuf *e)
{
	fflush(e->f);
	return e->text ? e->text : "";
}

static void err_close(struct errbuf *e)
{
	fclose(e->f);
	free(e->text);
}

#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })

static int count(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

/* Each verb's parser, then its check where it has one, on argv: the exit status and the message. */
#define EXPECT(status, message, call)                   \
	do {                                            \
		struct errbuf e_;                       \
		FILE *err = err_open(&e_);              \
		ASSERT_EQ((call), (status));            \
		ASSERT_STREQ(err_text(&e_), (message)); \
		err_close(&e_);                         \
	} while (0)

static int record(char **argv, struct fgctl_record_args *a, FILE *err)
{
	int r = fgctl_record_parse(&ctx, count(argv), argv, a, err);

	return r != FGCTL_EXIT_OK || a->co.help ? r : fgctl_record_check(a, err);
}

TEST(record_options_fill_the_request)
{
	struct fgctl_record_args a;

	EXPECT(FGCTL_EXIT_OK, "",
	       record(ARGV("record", "-p", "12,34", "-t", "1.5s", "-F", "999", "--call-graph",
			   "dwarf", "-o", "x.folded", "-q", "-s", "/x.sock", "--json",
			   "--no-inline", "--metadata", "m.json", "--cpu", "0-3", "--group-by",
			   "cgroup", "-u"),
		      &a, err));
	ASSERT_EQ(a.req.record.n_pids, 2);
	ASSERT_EQ(a.req.record.pids[1], 34);
	ASSERT_U64_EQ(a.req.record.duration_ms, 1500);
	ASSERT_EQ(a.req.record.frequency, 999);
	ASSERT_EQ(a.req.record.call_graph, FG_CALL_GRAPH_DWARF);
	ASSERT_EQ(a.req.record.format, FG_FORMAT_FOLDED);
	ASSERT_EQ(a.req.record.frames, FG_FRAMES_USER);
	ASSERT_EQ(a.req.record.group_by, FG_GROUP_CGROUP);
	ASSERT_TRUE(!a.req.record.inline_frames);
	ASSERT_STREQ(a.req.record.cpus, "0-3");
	ASSERT_STREQ(a.out.path, "x.folded");
	ASSERT_STREQ(a.co.socket, "/x.sock");
	ASSERT_STREQ(a.meta_path, "m.json");
	ASSERT_TRUE(a.co.quiet && a.co.json && !a.command);
}

TEST(record_socket_defaults_to_the_context)
{
	struct fgctl_record_args a;

	EXPECT(FGCTL_EXIT_OK, "", record(ARGV("record", "-a", "-o", "a.svg"), &a, err));
	ASSERT_STREQ(a.co.socket, "/run/test.sock");
	ASSERT_EQ(a.req.record.format, FG_FORMAT_SVG);
	ASSERT_TRUE(a.req.record.all);
}

TEST(record_command_after_the_options)
{
	/* Here, not in EXPECT's block: a.command points into it. */
	char **argv = ARGV("record", "-o", "a.svg", "--", "sleep", "1");
	struct fgctl_record_args a;

	EXPECT(FGCTL_EXIT_OK, "", record(argv, &a, err));
	ASSERT_STREQ(a.command[0], "sleep");
	ASSERT_STREQ(a.command[1], "1");
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: a command to run excludes -p and -a: it is what is recorded\n",
	       record(ARGV("record", "-a", "-o", "a.svg", "--", "sleep", "1"), &a, err));
}

TEST(record_bad_values)
{
	struct fgctl_record_args a;

	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid pid 'abc'\n",
	       record(ARGV("record", "-p", "abc"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: invalid duration '5x': expected seconds, e.g. 30, 0.5, 30s or 5m\n",
	       record(ARGV("record", "-a", "-t", "5x"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: unknown call graph mode 'xx': expected fp or dwarf\n",
	       record(ARGV("record", "--call-graph", "xx"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: unknown format 'xx': expected svg, html, folded, timed, pprof or "
	       "speedscope\n",
	       record(ARGV("record", "-f", "xx"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid --cpu 'x': a CPU list such as 0-3,8\n",
	       record(ARGV("record", "--cpu", "x"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: -u (--user-only) and -k (--kernel-only) exclude each other\n",
	       record(ARGV("record", "-u", "-k"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: invalid --width '5': expected a whole number of "
	       "pixels, 21 to 1000000\n",
	       record(ARGV("record", "-a", "--width", "5"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "Try 'fgctl record --help'.\n",
	       record(ARGV("record", "--bogus"), &a, err));
}

TEST(record_combinations)
{
	struct fgctl_record_args a;

	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: -p and -a exclude each other: record the processes, or all\n",
	       record(ARGV("record", "-a", "-p", "1"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: say what to record: -p PID[,PID...], -a for the whole machine, or -- "
	       "CMD ARGS to run a command\n",
	       record(ARGV("record"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: --json writes the summary to stdout: give -o FILE for the profile\n",
	       record(ARGV("record", "-a", "--json", "-o", "-"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: --width is how a graph is drawn, and folded text is not drawn: draw a "
	       "graph (.svg or .html) or leave it out\n",
	       record(ARGV("record", "-a", "--width", "30", "-o", "a.folded"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: cannot tell the format from 'a.zz': name it .svg, .html, .folded, .txt, "
	       ".pb.gz or .speedscope.json, or give --format\n",
	       record(ARGV("record", "-a", "-o", "a.zz"), &a, err));
	EXPECT(FGCTL_EXIT_OUTPUT, "fgctl: cannot write /tmp: it is a directory\n",
	       record(ARGV("record", "-a", "-o", "/tmp"), &a, err));
}

/* --help stops the parsing: what follows it is not looked at. */
TEST(record_help)
{
	struct fgctl_record_args a;
	struct errbuf out;

	EXPECT(FGCTL_EXIT_OK, "", record(ARGV("record", "--help", "-p", "abc"), &a, err));
	ASSERT_TRUE(a.co.help);
	fgctl_record_help(err_open(&out));
	ASSERT_TRUE(strncmp(err_text(&out), "Usage: fgctl record ", 20) == 0);
	ASSERT_TRUE(strstr(err_text(&out), fgctl_help_socket) != NULL);
	err_close(&out);
}

static int snapshot(char **argv, struct fgctl_snapshot_args *a, FILE *err)
{
	int r = fgctl_snapshot_parse(&ctx, count(argv), argv, a, err);

	return r != FGCTL_EXIT_OK || a->co.help ? r : fgctl_snapshot_check(a, err);
}

TEST(snapshot_options)
{
	struct fgctl_snapshot_args a;
	struct errbuf out;

	EXPECT(FGCTL_EXIT_OK, "",
	       snapshot(ARGV("snapshot", "--since", "1764205200", "--until", "1764205260", "--comm",
			     "^nginx", "-p", "7", "--off-cpu", "--group-by", "cgroup-name",
			     "--pid-frames", "-o", "s.pb.gz", "-k"),
			&a, err));
	ASSERT_EQ(a.req.query.since_ms, 1764205200000);
	ASSERT_EQ(a.req.query.until_ms, 1764205260000);
	ASSERT_STREQ(a.req.query.comm, "^nginx");
	ASSERT_EQ(a.req.query.pid, 7);
	ASSERT_TRUE(a.req.query.off_cpu && a.req.query.with_pid);
	ASSERT_EQ(a.req.query.group_by, FG_GROUP_CGROUP_NAME);
	ASSERT_EQ(a.req.query.frames, FG_FRAMES_KERNEL);
	ASSERT_EQ(a.req.query.format, FG_FORMAT_PPROF);
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid uid 'x'\n",
	       snapshot(ARGV("snapshot", "--uid", "x"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: unexpected argument 'xx'\n",
	       snapshot(ARGV("snapshot", "xx"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: give --last or --since, not both\n",
	       snapshot(ARGV("snapshot", "--last", "5m", "--since", "-1h"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: unknown grouping 'q': expected cgroup, cgroup-name or process\n",
	       snapshot(ARGV("snapshot", "--group-by", "q"), &a, err));
	EXPECT(FGCTL_EXIT_OK, "", snapshot(ARGV("snapshot", "-h"), &a, err));
	ASSERT_TRUE(a.co.help);
	fgctl_snapshot_help(err_open(&out));
	ASSERT_TRUE(strncmp(err_text(&out), "Usage: fgctl snapshot ", 22) == 0);
	err_close(&out);
}

TEST(top_and_status_options)
{
	struct fgctl_top_args t;
	struct fgctl_common co;

	EXPECT(FGCTL_EXIT_OK, "",
	       fgctl_top_parse(&ctx, 7, ARGV("top", "-n", "5", "-w", "-i", "3", "--json"), &t,
			       err));
	ASSERT_EQ(t.req.query.limit, 5);
	ASSERT_EQ(t.interval, 3);
	ASSERT_TRUE(t.watch && t.co.json);
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid count '0': 1 to 1000\n",
	       fgctl_top_parse(&ctx, 3, ARGV("top", "-n", "0"), &t, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid interval 'x'\n",
	       fgctl_top_parse(&ctx, 3, ARGV("top", "-i", "x"), &t, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: unexpected argument 'xx'\n",
	       fgctl_top_parse(&ctx, 2, ARGV("top", "xx"), &t, err));
	EXPECT(FGCTL_EXIT_OK, "",
	       fgctl_status_parse(&ctx, 4, ARGV("status", "-j", "-s", "/s"), &co, err));
	ASSERT_TRUE(co.json);
	ASSERT_STREQ(co.socket, "/s");
	EXPECT(FGCTL_EXIT_USAGE, "Try 'fgctl status --help'.\n",
	       fgctl_status_parse(&ctx, 2, ARGV("status", "-w"), &co, err));
}

TEST(render_options)
{
	/* Here, not in EXPECT's block: a.co.operands points into it. */
	char **argv = ARGV("render", "in.folded", "--from", "perf", "--cpu", "0-1", "--minwidth",
			   "0.5%", "--reverse");
	struct fgctl_render_args a;

	/* Options may follow the files. */
	EXPECT(FGCTL_EXIT_OK, "", fgctl_render_parse(&ctx, 9, argv, &a, err));
	ASSERT_EQ(a.co.n_operands, 1);
	ASSERT_STREQ(a.co.operands[0], "in.folded");
	ASSERT_EQ(a.graph.from, FGCTL_FROM_PERF);
	ASSERT_EQ(a.graph.perf.n_cpus, 2);
	ASSERT_TRUE(a.graph.flame.min_width_pct && a.graph.transform.reverse);
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid --from 'x': expected folded or perf\n",
	       fgctl_render_parse(&ctx, 3, ARGV("render", "--from", "x"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: --baseline is an option of fgctl diff\n",
	       fgctl_render_parse(&ctx, 3, ARGV("render", "--baseline", "x"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: invalid format 'timed': expected svg, html, folded, pprof or speedscope\n",
	       fgctl_render_parse(&ctx, 3, ARGV("render", "-f", "timed"), &a, err));
	EXPECT(FGCTL_EXIT_OK, "",
	       fgctl_render_parse(&ctx, 4, ARGV("render", "--cpu", "1", "x"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: --cpu picks perf script samples by their CPU: give --from perf\n",
	       fgctl_graph_opts_check(&a.graph, "render", err));
}

TEST(diff_options)
{
	struct fgctl_diff_args a;

	EXPECT(FGCTL_EXIT_OK, "",
	       fgctl_diff_parse(&ctx, 5, ARGV("diff", "a", "--no-normalize", "b", "-q"), &a, err));
	ASSERT_TRUE(!a.from_fgd && !a.graph.normalize && a.graph.quiet);
	ASSERT_EQ(a.n_inputs, 2);
	EXPECT(FGCTL_EXIT_OK, "",
	       fgctl_diff_parse(&ctx, 6,
				ARGV("diff", "--baseline", "--last 1h", "--last", "5m", "-p3"), &a,
				err));
	ASSERT_TRUE(a.from_fgd);
	ASSERT_STREQ(a.baseline, "--last 1h");
	ASSERT_STREQ(a.after_period.last, "5m");
	ASSERT_EQ(a.after.pid, 3);
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: spell --baseline out in full\n",
	       fgctl_diff_parse(&ctx, 3, ARGV("diff", "--basel", "x"), &a, err));
	EXPECT(FGCTL_EXIT_OK, "",
	       fgctl_diff_parse(&ctx, 5, ARGV("diff", "--flamechart", "a", "b", "-o-"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: a flame chart cannot be differential\n",
	       fgctl_diff_check(&a, err));
}

static int heatmap(char **argv, struct fgctl_heatmap_args *a, FILE *err)
{
	int r = fgctl_heatmap_parse(&ctx, count(argv), argv, a, err);

	if (r == FGCTL_EXIT_OK && !a->co.help)
		r = fgctl_heatmap_check(a, err);
	fgctl_heatmap_args_done(a);
	return r;
}

TEST(heatmap_options)
{
	struct fgctl_heatmap_args a;

	EXPECT(FGCTL_EXIT_OK, "",
	       heatmap(ARGV("heatmap", "-a", "-t", "3", "--bucket-ms", "50", "--scale", "rank",
			    "--comm", "^x", "-o", "h.json", "--title", "T"),
		       &a, err));
	ASSERT_EQ(a.to, FGCTL_HEATMAP_JSON);
	ASSERT_EQ(a.html.heatmap.bucket_ms, 50);
	ASSERT_EQ(a.html.heatmap.scale, FG_HEATMAP_RANK);
	ASSERT_STREQ(a.html.heatmap.title, "T");
	ASSERT_STREQ(a.comm, "^x");
	ASSERT_TRUE(!a.window);
	EXPECT(FGCTL_EXIT_OK, "",
	       heatmap(ARGV("heatmap", "--last", "5m", "-p", "9", "--comm", "^y", "-o", "h.svg"),
		       &a, err));
	ASSERT_TRUE(a.window);
	ASSERT_EQ(a.req.cmd, FG_CMD_SNAPSHOT);
	ASSERT_EQ(a.req.query.pid, 9);
	ASSERT_STREQ(a.req.query.comm, "^y");
	ASSERT_EQ(a.to, FGCTL_HEATMAP_SVG);
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid --bucket-ms '0': expected 1 to 1000\n",
	       heatmap(ARGV("heatmap", "--bucket-ms", "0"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: unknown format 'x': expected html, json, svg or timed\n",
	       heatmap(ARGV("heatmap", "-f", "x"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: -t, -F and --wall are for recording now, not with a period of always-on "
	       "sampling\n",
	       heatmap(ARGV("heatmap", "--last", "5m", "-t", "3"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: unexpected argument 'xx' (files are read with --from)\n",
	       heatmap(ARGV("heatmap", "-a", "xx"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid --comm regular expression '('\n",
	       heatmap(ARGV("heatmap", "-a", "--comm", "(", "-o", "h.html"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "Try 'fgctl heatmap --help'.\n",
	       heatmap(ARGV("heatmap", "--json"), &a, err));
}

static int push(char **argv, struct fgctl_push_args *a, FILE *err)
{
	int r = fgctl_push_parse(&ctx, count(argv), argv, a, err);

	if (r == FGCTL_EXIT_OK && !a->co.help)
		r = fgctl_push_check(a, err);
	fgctl_push_args_done(a);
	return r;
}

TEST(push_options)
{
	struct fgctl_push_args a;
	struct errbuf out;

	EXPECT(FGCTL_EXIT_OK, "",
	       push(ARGV("push", "--url", "https://p:4040", "--every", "30s", "--label", "a=b",
			 "--label", "a=c", "--format", "folded", "-q", "--retries", "5", "--name",
			 "{unit}", "--last", "2m", "--timeout", "3s", "--tenant", "t"),
		    &a, err));
	ASSERT_STREQ(a.o.url, "https://p:4040");
	ASSERT_EQ(a.o.plan.every_ms, 30000);
	ASSERT_EQ(a.o.plan.first_ms, 120000);
	ASSERT_EQ(a.o.n_labels, 1);
	ASSERT_STREQ(a.o.labels[0].value, "c");
	ASSERT_EQ(a.o.format, FG_INGEST_FOLDED);
	ASSERT_EQ(a.o.retries, 5);
	ASSERT_EQ(a.query.query.group_by, FG_GROUP_CGROUP);
	ASSERT_EQ(a.http.timeout_ms, 3000);
	ASSERT_STREQ(a.http.tenant, "t");
	ASSERT_TRUE(a.o.quiet);
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid --url 'x': http:// or https://\n",
	       push(ARGV("push", "--url", "x"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid --every 'x': a span such as 15s, 1m or 1h\n",
	       push(ARGV("push", "--every", "x"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: invalid --retries '101': 0 to 100\n",
	       push(ARGV("push", "--retries", "101"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE, "fgctl: push needs --url\n", push(ARGV("push"), &a, err));
	EXPECT(FGCTL_EXIT_USAGE,
	       "fgctl: push cuts its own periods: --since and --until do not apply (--last says "
	       "where to start)\n",
	       push(ARGV("push", "--url", "http://x", "--since", "10:00"), &a, err));
	EXPECT(FGCTL_EXIT_INPUT,
	       "fgctl: cannot read the token file /nonexistent/t: No such file or directory\n",
	       push(ARGV("push", "--url", "http://x", "--token-file", "/nonexistent/t"), &a, err));
	EXPECT(FGCTL_EXIT_OK, "", push(ARGV("push", "--help"), &a, err));
	ASSERT_TRUE(a.co.help);
	fgctl_push_help(err_open(&out));
	ASSERT_TRUE(strncmp(err_text(&out), "Usage: fgctl push ", 18) == 0);
	err_close(&out);
}
