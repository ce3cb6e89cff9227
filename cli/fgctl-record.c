/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl record: samples processes or the whole machine through fgd for a
 * while and writes what it sent, with a summary of what was lost or left
 * out.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cpulist.h"
#include "base/macro.h"
#include "base/parse.h"
#include "config.h"
#include "fgctl-client.h"
#include "fgctl-display.h"
#include "fgctl-output.h"
#include "fgctl-pipeline.h"
#include "fgctl-query.h"
#include "fgctl-record.h"
#include "fgctl-verb.h"
#include "fgctl.h"
#include "proto/proto.h"

void fgctl_record_help(FILE *out)
{
	fputs("Usage: fgctl record (-p PID[,PID...] | -a) [OPTIONS]\n"
	      "       fgctl record [OPTIONS] -- CMD [ARGS...]\n"
	      "\n"
	      "Samples the given processes (all their threads) or the whole machine and\n"
	      "writes folded stacks or an interactive flame graph. With -- CMD, fgctl runs\n"
	      "the command with your own privileges and records it and the processes it\n"
	      "starts until it exits (or -t); fgctl exits with the command's status. Its\n"
	      "output goes to stderr when the profile (-o -) or --json is on stdout.\n"
	      "\n"
	      "  -p, --pid PIDS           processes to record, comma-separated\n"
	      "  -a, --all                the whole machine (root only)\n"
	      "  -t, --time SECONDS       how long (default: until Ctrl-C or the processes exit);\n"
	      "                           fractions and s/m/h suffixes work: 0.5, 30s, 5m\n"
	      "  -F, --frequency HZ       samples per second per CPU (default: fgd's, 99)\n"
	      "  -o, --output FILE        where to write; '-' for stdout (without -o: stdout,\n"
	      "                           or fgd-record-TIME.svg here on a terminal). The\n"
	      "                           format follows the extension: .svg, .html,\n"
	      "                           .folded/.txt for folded stacks, .timed, .pb.gz for\n"
	      "                           pprof (Go's pprof, Pyroscope, Parca: process frames\n"
	      "                           become labels), or .speedscope.json for speedscope\n"
	      "                           (a profile per process). SVGs need no CDATA: they\n"
	      "                           stay interactive inlined in a page or a blog post\n"
	      "  -f, --format FORMAT      svg, html, folded, timed, pprof or speedscope,\n"
	      "                           whatever the extension\n"
	      "      --title TEXT         flame graph title\n"
	      "      --pid-frames         root frame 'comm-PID' (stackcollapse-perf.pl --pid)\n"
	      "      --tid-frames         root frame 'comm-PID/TID' (stackcollapse-perf.pl --tid)\n"
	      "      --no-kernel-suffix   no '_[k]' on kernel frames\n"
	      "      --no-inline          no frames for inlined functions (by default each\n"
	      "                           function inlined at a sampled address is a frame of\n"
	      "                           its own, when the binary has debug info)\n"
	      "      --no-demangle        C++ and Rust names as the symbol table spells them\n"
	      "      --call-graph MODE    how user stacks are walked: dwarf (unwind a copy of\n"
	      "                           the stack with DWARF CFI: complete stacks without\n"
	      "                           frame pointers) or fp (frame pointers; cheaper).\n"
	      "                           Default: fgd's, dwarf unless configured otherwise\n"
	      "      --stack-dump BYTES   user stack copied per sample in dwarf mode, a\n"
	      "                           multiple of 8 up to 65528 (default: fgd's, 32768);\n"
	      "                           stacks cut by it or by the depth limit start with a\n"
	      "                           [truncated] frame\n"
	      "      --subtitle, --width, --height, --colors, --inverted, --reverse,\n"
	      "      --flamechart, --minwidth, --no-idle, --include, --exclude, --focus, ...\n"
	      "                           render's graph options (fgctl render --help): with\n"
	      "                           any but --title, fgctl draws the graph from fgd's\n"
	      "                           folded stacks (or writes them filtered, to .folded)\n"
	      "      --stackcollapse-names names cut at the first '(' as stackcollapse-perf.pl\n"
	      "                           cuts them (Java signatures; render --help)\n"
	      "      --tid TIDS           only these threads, comma-separated (their processes\n"
	      "                           are recorded; their other threads are counted)\n"
	      "      --cpu LIST           sample these CPUs only, e.g. 0-3,8 (others are not\n"
	      "                           sampled at all)\n"
	      "  -u, --user-only          only user frames (kernel frames dropped)\n"
	      "  -k, --kernel-only        only kernel frames, under the process frame\n"
	      "      --json               the summary as JSON on stdout (the profile goes to -o\n"
	      "                           FILE): the recording's figures, as --metadata writes\n"
	      "      --metadata FILE      also write the recording's figures as JSON: samples,\n"
	      "                           losses, frames named, stack quality (docs/PROTOCOL.md)\n"
	      "      --group-by WHAT      a root frame above the process name: 'cgroup' (its\n"
	      "                           cgroup v2 path, e.g. /system.slice/nginx.service, which\n"
	      "                           tells containers apart), 'cgroup-name' (the path's last\n"
	      "                           component), or 'process' (none, the default)\n"
	      "      --no-jit-suffix      no '_[j]' on JIT frames (named from /tmp/perf-PID.map)\n"
	      "      --off-cpu            where threads wait instead of where they run: time\n"
	      "                           blocked by stack, in microseconds, from sched_switch\n"
	      "                           (BPF); user stacks as --call-graph says (dwarf: copied\n"
	      "                           as the thread leaves the system call it blocked in)\n"
	      "      --wall               wall-clock time: on-CPU samples (each 1/F s) and\n"
	      "                           off-CPU blocks together, in microseconds; each\n"
	      "                           thread's total comes close to the duration\n"
	      "      --min-block US       with --off-cpu or --wall: leave out blocks shorter\n"
	      "                           than this (default 1)\n"
	      "      --since TIME, --until TIME\n"
	      "                           keep only the samples taken in this range, to the\n"
	      "                           millisecond (times as fgctl snapshot takes them:\n"
	      "                           12:00:01.250, 1764205200.250, -5s); the recording runs\n"
	      "                           as -t says\n"
	      "  -q, --quiet              no progress or summary, only warnings and errors\n",
	      out);
	fputs(fgctl_help_socket, out);
}

int fgctl_parse_pids(const char *s, struct fg_record_request *req, FILE *err)
{
	_cleanup_free_ char *copy = strdup(s);
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t v;

		if (fg_parse_u32(tok, 1, INT_MAX, &v) < 0) {
			fprintf(err, "fgctl: invalid pid '%s'\n", tok);
			return -EINVAL;
		}
		if (req->n_pids == FG_PROTO_MAX_PIDS) {
			fprintf(err, "fgctl: too many pids (at most %d)\n", FG_PROTO_MAX_PIDS);
			return -EINVAL;
		}
		req->pids[req->n_pids++] = (pid_t)v;
	}
	if (req->n_pids == 0) {
		fprintf(err, "fgctl: -p needs at least one pid\n");
		return -EINVAL;
	}
	return 0;
}

/* The process a thread belongs to: its Tgid, from /proc. 0, or -ESRCH. */
static int thread_process(pid_t tid, pid_t *ret)
{
	_cleanup_(fclosep) FILE *f = NULL;
	char path[64], line[256];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", ret) == 1)
			return 0;
	return -ESRCH;
}

/*
 * --tid TIDS: each thread, and its process among the pids (fgd records
 * processes, then keeps only these threads' samples). 0 or -EINVAL, said.
 */
static int parse_tids(const char *s, struct fg_record_request *req, FILE *err)
{
	_cleanup_free_ char *copy = strdup(s);
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t v;
		pid_t pid;
		bool known = false;

		if (fg_parse_u32(tok, 1, INT_MAX, &v) < 0) {
			fprintf(err, "fgctl: invalid tid '%s'\n", tok);
			return -EINVAL;
		}
		if (thread_process((pid_t)v, &pid) < 0) {
			fprintf(err, "fgctl: no such thread: %u\n", v);
			return -EINVAL;
		}
		if (req->n_tids == FG_PROTO_MAX_PIDS) {
			fprintf(err, "fgctl: too many tids (at most %d)\n", FG_PROTO_MAX_PIDS);
			return -EINVAL;
		}
		req->tids[req->n_tids++] = (pid_t)v;
		for (size_t i = 0; i < req->n_pids; i++)
			known |= req->pids[i] == pid;
		if (!known)
			req->pids[req->n_pids++] = pid;
	}
	return 0;
}

int fgctl_parse_duration(const char *s, uint64_t *ret_ms, FILE *err)
{
	char *end;
	double v, mult = 1000;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v <= 0)
		goto bad;
	if (strcmp(end, "m") == 0)
		mult = 60000;
	else if (strcmp(end, "h") == 0)
		mult = 3600000;
	else if (*end && strcmp(end, "s") != 0)
		goto bad;
	if (v * mult > (double)FG_PROTO_MAX_DURATION_MS || v * mult < 1)
		goto bad;
	*ret_ms = (uint64_t)(v * mult);
	return 0;
bad:
	fprintf(err, "fgctl: invalid duration '%s': expected seconds, e.g. 30, 0.5, 30s or 5m\n",
		s);
	return -EINVAL;
}

static void describe_target(const struct fg_record_request *req, char *buf, size_t size)
{
	if (req->all && req->cpus[0])
		snprintf(buf, size, "CPUs %s", req->cpus);
	else if (req->all)
		snprintf(buf, size, "all CPUs");
	else if (req->n_pids == 1)
		snprintf(buf, size, "pid %d", req->pids[0]);
	else
		snprintf(buf, size, "%zu processes", req->n_pids);
	/* Processes on some CPUs: said after them. */
	if (!req->all && req->cpus[0])
		snprintf(buf + strlen(buf), size - strlen(buf), " on CPUs %s", req->cpus);
}

/* Writes the recording's metadata as JSON to path (replaced atomically). */
static int write_metadata(const char *path, struct json_object *meta)
{
	struct fgctl_output o = { .path = path, .fd = -1 };
	const char *text;
	int r;

	text = json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PRETTY |
							    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		return -ENOMEM;
	r = fgctl_output_open(&o);
	if (r >= 0)
		r = fgctl_output_write(&o, text, strlen(text));
	if (r >= 0)
		r = fgctl_output_write(&o, "\n", 1);
	return fgctl_output_close(&o, r >= 0) < 0 ? -EIO : r;
}

/*
 * Lets the launched command exec, and waits until it did (moments): OK, or
 * the shell's status for a command that cannot run (said; the recording of
 * nothing is abandoned, not written).
 */
static int release(struct fgctl_launched *cmd)
{
	int err = 0;
	ssize_t n;

	if (cmd->release_fd < 0)
		return FGCTL_EXIT_OK;
	n = write(cmd->release_fd, "", 1);
	cmd->release_fd = safe_close(cmd->release_fd);
	if (n != 1) {
		fprintf(stderr, "fgctl: cannot start %s: %m\n", cmd->name);
		return FGCTL_EXIT_FAILURE;
	}
	do
		n = read(cmd->exec_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	cmd->exec_fd = safe_close(cmd->exec_fd);
	if (n != sizeof(err))
		return FGCTL_EXIT_OK;
	cmd->exec_failed = true;
	fprintf(stderr, "fgctl: cannot run %s: %s; nothing written\n", cmd->name, strerror(err));
	return err == ENOENT ? 127 : 126;
}

int fgctl_record_conversation(struct fgctl_conn *conn, const struct fg_request *req,
			      fgctl_record_data_fn data_fn, void *data_ctx,
			      struct json_object **ret_meta, char reason[32], bool quiet,
			      struct fgctl_launched *cmd)
{
	char target[320];
	bool stopping = false, got_end = false;
	uint64_t duration_ms = req->record.duration_ms;
	int r;

	snprintf(reason, 32, "completed");
	describe_target(&req->record, target, sizeof(target));
	for (;;) {
		_cleanup_(json_object_putp) struct json_object *msg = NULL;
		enum fgctl_event ev;
		const char *data, *type;
		size_t len;

		r = fgctl_next(conn, &ev, &msg, &data, &len);
		if (r < 0) {
			fgctl_end_progress(stderr);
			fprintf(stderr, "fgctl: lost the conversation with fgd: %s\n",
				strerror(-r));
			return FGCTL_EXIT_FAILURE;
		}
		if (ev == FGCTL_EV_EOF) {
			fgctl_end_progress(stderr);
			if (got_end)
				break;
			fprintf(stderr,
				"fgctl: fgd closed the connection before the result was complete\n");
			return FGCTL_EXIT_FAILURE;
		}
		if (ev == FGCTL_EV_SIGNAL) {
			if (stopping) {
				fgctl_end_progress(stderr);
				fprintf(stderr, "fgctl: interrupted; nothing written\n");
				return FGCTL_EXIT_INTERRUPTED;
			}
			_cleanup_(json_object_putp) struct json_object *stop =
				fg_proto_new_request("stop");

			stopping = true;
			fgctl_end_progress(stderr);
			if (!quiet)
				fprintf(stderr,
					"fgctl: stopping; writing what was collected (Ctrl-C again to abandon)\n");
			r = stop ? fgctl_send(conn, stop) : -ENOMEM;
			if (r < 0)
				return fgctl_send_failed(conn, r);
			continue;
		}
		if (ev == FGCTL_EV_DATA) {
			r = data_fn(data_ctx, data, len);
			if (r != FGCTL_EXIT_OK) {
				fgctl_end_progress(stderr);
				return r;
			}
			continue;
		}
		type = fgctl_get_str(msg, "type");
		if (strcmp(type, "error") == 0) {
			fgctl_end_progress(stderr);
			fprintf(stderr, "fgctl: %s\n", fgctl_get_str(msg, "message"));
			return fgctl_exit_code_for(fgctl_get_str(msg, "error"));
		} else if (strcmp(type, "started") == 0) {
			/* The events are on: the command may begin. */
			if (cmd && (r = release(cmd)) != FGCTL_EXIT_OK) {
				fgctl_end_progress(stderr);
				return r;
			}
			if (!quiet && !isatty(STDERR_FILENO)) {
				fprintf(stderr, "fgctl: recording %s with %s", target,
					fgctl_get_str(msg, "event"));
				/* Off-CPU has no rate: every block is recorded. */
				if (fgctl_get_int(msg, "frequency"))
					fprintf(stderr, " at %" PRId64 " Hz",
						fgctl_get_int(msg, "frequency"));
				fputc('\n', stderr);
			}
			fgctl_show_progress(stderr, target, duration_ms, 0, 0, 0);
		} else if (strcmp(type, "progress") == 0) {
			if (!quiet)
				fgctl_show_progress(stderr, target, duration_ms,
						    (uint64_t)fgctl_get_int(msg, "elapsed_ms"),
						    (uint64_t)fgctl_get_int(msg, "samples"),
						    (uint64_t)fgctl_get_int(msg, "lost"));
		} else if (strcmp(type, "result") == 0) {
			struct json_object *m;

			fgctl_end_progress(stderr);
			if (json_object_object_get_ex(msg, "meta", &m) && !*ret_meta)
				*ret_meta = json_object_get(m);
			snprintf(reason, 32, "%s", fgctl_get_str(msg, "reason"));
		} else if (strcmp(type, "end") == 0) {
			got_end = true;
			break;
		}
	}
	return FGCTL_EXIT_OK;
}

/* The result's bytes, into the output file. */
static int write_out(void *ctx, const char *data, size_t len)
{
	struct fgctl_output *out = ctx;
	int r = fgctl_output_write(out, data, len);

	if (r < 0) {
		fprintf(stderr, "fgctl: cannot write %s: %s\n", out->path, strerror(-r));
		return FGCTL_EXIT_OUTPUT;
	}
	return FGCTL_EXIT_OK;
}

/* Runs the conversation of one recording into out; returns the exit code. */
static int record_session(struct fgctl_conn *conn, struct fg_request *req, struct fgctl_output *out,
			  struct fgctl_draw *draw, const char *meta_path, bool quiet, bool json,
			  struct fgctl_launched *cmd)
{
	_cleanup_(json_object_putp) struct json_object *meta = NULL;
	char reason[32];
	int r;

	if (draw->here) {
		/* fgd's folded stacks into a model, drawn here with the graph options. */
		_cleanup_(fg_folded__freep) struct fg_folded *model = fg_folded__new();
		struct fgctl_fetched f;

		if (!model)
			return FGCTL_EXIT_FAILURE;
		fgctl_fetched_init(&f, &draw->graph, model, "recorded");
		r = fgctl_record_conversation(conn, req, fgctl_fetched_write, &f, &meta, reason,
					      quiet, cmd);
		r = fgctl_fetched_finish(&f, r);
		if (r == FGCTL_EXIT_OK)
			r = fgctl_pipeline_write(&draw->graph, &model);
	} else {
		int e;

		r = fgctl_record_conversation(conn, req, write_out, out, &meta, reason, quiet, cmd);
		if (r == FGCTL_EXIT_OK && (e = fgctl_output_close(out, true)) < 0) {
			fprintf(stderr, "fgctl: cannot write %s: %s\n", out->path, strerror(-e));
			r = FGCTL_EXIT_OUTPUT;
		}
	}
	if (r != FGCTL_EXIT_OK)
		return r;
	fgctl_show_summary(stderr, strcmp(out->path, "-") == 0 ? "stdout" : out->path, meta,
			   quiet || json);
	/* The summary for scripts: the recording's metadata (docs/PROTOCOL.md), on stdout. */
	if (json)
		printf("%s\n",
		       meta ? json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PRETTY) : "{}");
	if (meta_path) {
		r = meta ? write_metadata(meta_path, meta) : -ENODATA;
		if (r < 0) {
			fprintf(stderr, "fgctl: cannot write the metadata to %s: %s\n", meta_path,
				strerror(-r));
			return FGCTL_EXIT_OUTPUT;
		}
	}
	return FGCTL_EXIT_OK;
}

int fgctl_record_option(int c, const char *arg, struct fg_record_request *req, FILE *err)
{
	switch (c) {
	case 'p':
		return fgctl_parse_pids(arg, req, err) < 0 ? -1 : 1;
	case 'a':
		req->all = true;
		return 1;
	case 't':
		return fgctl_parse_duration(arg, &req->duration_ms, err) < 0 ? -1 : 1;
	case 'F':
		if (fg_parse_u32(arg, 1, FG_PROTO_MAX_FREQUENCY, &req->frequency) < 0) {
			fprintf(err, "fgctl: invalid frequency '%s': expected 1 to %d Hz\n", arg,
				FG_PROTO_MAX_FREQUENCY);
			return -1;
		}
		return 1;
	case FGCTL_REC_OPT_CALL_GRAPH:
		if (fg_call_graph_from_name(arg, &req->call_graph) < 0) {
			fprintf(err, "fgctl: unknown call graph mode '%s': expected fp or dwarf\n",
				arg);
			return -1;
		}
		return 1;
	case FGCTL_REC_OPT_OFF_CPU:
		req->off_cpu = true;
		return 1;
	case FGCTL_REC_OPT_WALL:
		req->wall = true;
		return 1;
	case FGCTL_REC_OPT_MIN_BLOCK:
		if (fg_parse_u32(arg, 1, FG_PROTO_MAX_MIN_BLOCK_US, &req->min_block_us) < 0) {
			fprintf(err,
				"fgctl: invalid --min-block '%s': expected 1 to %d microseconds\n",
				arg, FG_PROTO_MAX_MIN_BLOCK_US);
			return -1;
		}
		return 1;
	case FGCTL_REC_OPT_PID_FRAMES:
		req->with_pid = true;
		return 1;
	case FGCTL_REC_OPT_TID_FRAMES:
		req->with_tid = true;
		return 1;
	}
	return 0;
}

/*
 * Starts command as a child of fgctl, with fgctl's (the caller's) own
 * privileges, stopped before its exec until ret->release_fd is written to
 * (the recording runs) or closed (it does not: the child exits 127). Its
 * exec's failure comes back on ret->exec_fd. With stdout_to_stderr (fgctl's
 * stdout carries the profile or the summary), the command's standard
 * output goes to fgctl's standard error, so the two do not mix.
 */
static int launch(char **command, bool stdout_to_stderr, struct fgctl_launched *ret)
{
	int go_fds[2] = { -1, -1 }, exec_fds[2] = { -1, -1 };
	pid_t pid = -1;

	if (pipe2(go_fds, O_CLOEXEC) >= 0 && pipe2(exec_fds, O_CLOEXEC) >= 0) {
		/* What fgctl's output buffers hold must not be written twice. */
		fflush(NULL);
		pid = fork();
	}
	if (pid < 0) {
		fprintf(stderr, "fgctl: cannot run %s: %m\n", command[0]);
		for (size_t i = 0; i < 2; i++) {
			safe_close(go_fds[i]);
			safe_close(exec_fds[i]);
		}
		return FGCTL_EXIT_FAILURE;
	}
	if (pid == 0) {
		sigset_t none;
		char go;
		int err;

		safe_close(go_fds[1]);
		safe_close(exec_fds[0]);
		/*
		 * Until exec renames it, the command's process is fgctl's copy: the
		 * samples of its exec (the old image's teardown) say so, as perf's
		 * perf-exec does.
		 */
		(void)prctl(PR_SET_NAME, "fgctl-exec");
		if (read(go_fds[0], &go, 1) != 1)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(126);
		execvp(command[0], command);
		/* fgctl says it: the recording of nothing is not written. */
		err = errno;
		(void)!write(exec_fds[1], &err, sizeof(err));
		_exit(err == ENOENT ? 127 : 126);
	}
	safe_close(go_fds[0]);
	safe_close(exec_fds[1]);
	*ret = (struct fgctl_launched){
		.name = command[0], .pid = pid, .release_fd = go_fds[1], .exec_fd = exec_fds[0]
	};
	return FGCTL_EXIT_OK;
}

/*
 * After the recording of a launched command (its exit code r): the
 * command's own status, said (unless quiet, when it is normal), and what
 * fgctl exits with: the command's (128 + its signal), unless the recording
 * failed. A command still running (-t ended the recording first) is left
 * to run. One that never ran (not released, or its exec failed) is not said
 * again.
 */
static int command_status(struct fgctl_launched *cmd, int r, bool quiet)
{
	bool released = cmd->release_fd < 0;
	int status = 0, code;
	pid_t got = 0;

	/* Not released (fgd refused, or is not running): the command ends without running. */
	cmd->release_fd = safe_close(cmd->release_fd);
	cmd->exec_fd = safe_close(cmd->exec_fd);
	/* It exited, which ended the recording, or Ctrl-C is ending it: moments, at most. */
	for (int i = 0; i < 50 && (got = waitpid(cmd->pid, &status, WNOHANG)) == 0; i++)
		usleep(20000);
	if (!released || cmd->exec_failed)
		return r;
	if (got != cmd->pid) {
		fprintf(stderr, "fgctl: %s (pid %d) is still running\n", cmd->name, (int)cmd->pid);
		return r;
	}
	if (WIFSIGNALED(status)) {
		code = 128 + WTERMSIG(status);
		fprintf(stderr, "fgctl: %s was killed by signal %d\n", cmd->name, WTERMSIG(status));
	} else {
		code = WEXITSTATUS(status);
		if (!quiet)
			fprintf(stderr, "fgctl: %s exited with status %d\n", cmd->name, code);
	}
	return r != FGCTL_EXIT_OK ? r : code;
}

/* From 0x400: the draw options' codes start at 0x100, the record options' at 0x300. */
enum {
	ARG_NO_KSUFFIX = 0x400,
	ARG_NO_JSUFFIX,
	ARG_STACK_DUMP,
	ARG_METADATA,
	ARG_GROUP_BY,
	ARG_NO_INLINE,
	ARG_NO_DEMANGLE,
	ARG_SINCE,
	ARG_UNTIL,
	ARG_CPU,
	ARG_TID,
};

static const struct option record_options[] = {
	FGCTL_RECORD_OPTIONS,
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	FGCTL_DRAW_OPTIONS,
	{ "no-kernel-suffix", no_argument, NULL, ARG_NO_KSUFFIX },
	{ "no-inline", no_argument, NULL, ARG_NO_INLINE },
	{ "no-demangle", no_argument, NULL, ARG_NO_DEMANGLE },
	{ "stack-dump", required_argument, NULL, ARG_STACK_DUMP },
	{ "metadata", required_argument, NULL, ARG_METADATA },
	{ "json", no_argument, NULL, FGCTL_OPT_JSON },
	{ "cpu", required_argument, NULL, ARG_CPU },
	{ "tid", required_argument, NULL, ARG_TID },
	{ "user-only", no_argument, NULL, 'u' },
	{ "kernel-only", no_argument, NULL, 'k' },
	{ "group-by", required_argument, NULL, ARG_GROUP_BY },
	{ "no-jit-suffix", no_argument, NULL, ARG_NO_JSUFFIX },
	{ "since", required_argument, NULL, ARG_SINCE },
	{ "until", required_argument, NULL, ARG_UNTIL },
	{ "quiet", no_argument, NULL, 'q' },
	{ "socket", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* --cpu LIST: kept as text for fgd, checked here. */
static int cpu_arg(const char *arg, struct fg_record_request *req, FILE *err)
{
	_cleanup_free_ int *cpus = NULL;
	size_t n;

	if (strlen(arg) >= sizeof(req->cpus) || fg_cpulist_parse(arg, &cpus, &n) < 0 || n == 0) {
		fprintf(err, "fgctl: invalid --cpu '%s': a CPU list such as 0-3,8\n", arg);
		return -1;
	}
	snprintf(req->cpus, sizeof(req->cpus), "%s", arg);
	return 1;
}

static int stack_dump_arg(const char *arg, struct fg_record_request *req, FILE *err)
{
	if (fg_parse_u32(arg, 8, FG_PROTO_MAX_STACK_DUMP, &req->stack_dump) < 0 ||
	    fg_stack_dump_check(req->stack_dump) < 0) {
		fprintf(err,
			"fgctl: invalid stack dump size '%s': expected a multiple of 8 from 8 to %d "
			"bytes\n",
			arg, FG_PROTO_MAX_STACK_DUMP);
		return -1;
	}
	return 1;
}

/* record's own options, beyond the recording's, the drawing's and the common ones. */
static int record_option(void *args, int c, const char *arg, FILE *err)
{
	struct fgctl_record_args *a = args;
	struct fg_record_request *req = &a->req.record;
	int r;

	r = fgctl_record_option(c, arg, req, err);
	if (r == 0)
		r = fgctl_draw_option(&a->draw, c, arg, req->title, err);
	if (r != 0)
		return r;
	switch (c) {
	case ARG_NO_KSUFFIX:
		req->kernel_suffix = false;
		return 1;
	case ARG_NO_INLINE:
		req->inline_frames = false;
		return 1;
	case ARG_NO_DEMANGLE:
		req->demangle = false;
		return 1;
	case ARG_METADATA:
		a->meta_path = arg;
		return 1;
	case ARG_TID:
		return parse_tids(arg, req, err) < 0 ? -1 : 1;
	case ARG_CPU:
		return cpu_arg(arg, req, err);
	case 'u':
	case 'k':
		return fgctl_frames_arg(c, &req->frames, err) != FGCTL_EXIT_OK ? -1 : 1;
	case ARG_STACK_DUMP:
		return stack_dump_arg(arg, req, err);
	case ARG_GROUP_BY:
		return fgctl_group_by_arg(arg, &req->group_by, err) != FGCTL_EXIT_OK ? -1 : 1;
	case ARG_NO_JSUFFIX:
		req->jit_suffix = false;
		return 1;
	case ARG_SINCE:
	case ARG_UNTIL:
		return fgctl_time_arg(arg, c == ARG_SINCE ? &req->since_ms : &req->until_ms, err) <
				       0 ?
			       -1 :
			       1;
	}
	return 0;
}

int fgctl_record_parse(const struct fgctl_ctx *ctx, int argc, char **argv,
		       struct fgctl_record_args *a, FILE *err)
{
	int r;

	*a = (struct fgctl_record_args){ .req = { .cmd = FG_CMD_RECORD } };
	fg_record_request_init(&a->req.record);
	fgctl_draw_init(&a->draw);
	r = fgctl_parse_options(ctx, argc, argv, "p:at:F:o:f:qs:huk", record_options, record_option,
				a, &a->co, err);
	if (r != FGCTL_EXIT_OK || a->co.help)
		return r;
	if (a->co.format_given)
		a->req.record.format = a->co.format;
	/* What follows the options is a command to run and record: fgctl record -- CMD ARGS. */
	if (a->co.n_operands > 0)
		a->command = a->co.operands;
	return FGCTL_EXIT_OK;
}

int fgctl_record_check(struct fgctl_record_args *a, FILE *err)
{
	struct fg_record_request *req = &a->req.record;
	int r;

	if (a->command && (req->all || req->n_pids > 0)) {
		fprintf(err,
			"fgctl: a command to run excludes -p and -a: it is what is recorded\n");
		return FGCTL_EXIT_USAGE;
	}
	if (req->until_ms && req->until_ms <= req->since_ms) {
		fprintf(err, "fgctl: the range ends before it starts\n");
		return FGCTL_EXIT_USAGE;
	}
	if (req->all && req->n_pids > 0) {
		fprintf(err, "fgctl: -p and -a exclude each other: record the processes, or all\n");
		return FGCTL_EXIT_USAGE;
	}
	if (!req->all && req->n_pids == 0 && !a->command) {
		fprintf(err, "fgctl: say what to record: -p PID[,PID...], -a for the whole "
			     "machine, or -- CMD ARGS to run a command\n");
		return FGCTL_EXIT_USAGE;
	}
	a->out = (struct fgctl_output){ .path = a->co.output, .fd = -1 };
	r = fgctl_output_target(&a->out, "record", a->co.format_given, &req->format, err);
	if (r == FGCTL_EXIT_OK)
		r = fgctl_check_json_output(&a->co, a->out.path, err);
	if (r == FGCTL_EXIT_OK)
		r = fgctl_draw_prepare(&a->draw, &a->out, &req->format, req->off_cpu || req->wall,
				       req->off_cpu, err);
	return r;
}

/* Runs the recording a asks for, checked: connects, records, writes. */
static int record_run(struct fgctl_record_args *a)
{
	_cleanup_(json_object_putp) struct json_object *msg = NULL;
	struct fgctl_launched cmd = { .release_fd = -1, .exec_fd = -1 };
	struct fg_request *req = &a->req;
	struct fgctl_output *out = &a->out;
	struct fgctl_conn conn;
	int r;

	/* Fail on an unwritable output now, not after a 30 s recording. */
	if (fgctl_output_open(out) < 0)
		return FGCTL_EXIT_OUTPUT;
	/* Drawn here, the graph is written at the end by the pipeline: this was only a check. */
	if (a->draw.here)
		fgctl_output_close(out, false);
	if (a->command) {
		/* Started now, it waits to exec until the recording runs (release()). */
		r = launch(a->command, a->co.json || strcmp(out->path, "-") == 0, &cmd);
		if (r != FGCTL_EXIT_OK) {
			fgctl_output_close(out, false);
			return r;
		}
		req->record.pids[0] = cmd.pid;
		req->record.n_pids = 1;
		req->record.children = true;
	}
	r = fgctl_connect(a->co.socket, &conn);
	if (r < 0) {
		fgctl_output_close(out, false);
		r = -r;
	} else {
		msg = fg_proto_encode_request(req);
		r = msg ? fgctl_send(&conn, msg) : -ENOMEM;
		if (r < 0)
			r = fgctl_send_failed(&conn, r);
		else
			r = record_session(&conn, req, out, &a->draw, a->meta_path, a->co.quiet,
					   a->co.json, a->command ? &cmd : NULL);
		fgctl_output_close(out, false); /* no-op after a successful commit */
		fgctl_disconnect(&conn);
	}
	return a->command ? command_status(&cmd, r, a->co.quiet) : r;
}

int fgctl_verb_record(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	struct fgctl_record_args a;
	int r;

	r = fgctl_record_parse(ctx, argc, argv, &a, stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (a.co.help) {
		fgctl_record_help(stdout);
		return FGCTL_EXIT_OK;
	}
	r = fgctl_record_check(&a, stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	return record_run(&a);
}
