/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What fgd reads of /proc, parsed: /proc/PID/stat's line, /proc/PID/status's
 * fields, and the /proc/PID/map_files path that reaches a mapped file.
 * The one home of each; the daemon reads the files (daemon/resolver/
 * fgd-procfs.h) and hands the text here. No I/O, no logging.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The fields fgd takes from a /proc/PID/stat line, "pid (comm) state ppid
 * ...": comm, which may itself hold spaces and parentheses (the last ')'
 * ends it), copied into comm[0..comm_size) and truncated to fit; and field
 * 22, starttime, the clock ticks from boot to the process's start. Either
 * output may be NULL. Returns 0, or -EINVAL for a line not of that form.
 */
int fg_parse_proc_stat(const char *line, char *comm, size_t comm_size, uint64_t *ret_starttime);

/*
 * The first number of a /proc/PID/status line "key:\t...", e.g. key "VmHWM"
 * (in kB, as the file has it) or "Tgid", from the whole text of the file
 * (NUL-terminated). Returns 0, -ENOENT when no line has that key, or
 * -EINVAL when its value does not start with a number.
 */
int fg_parse_proc_status(const char *text, const char *key, uint64_t *ret);

/*
 * Like fg_parse_proc_status(), but every number of the line, up to n of
 * them, in base (10, or 16 as CapEff has it), separated by spaces or tabs:
 * "Uid:\t1000\t1000\t1000\t1000", "NSpid:\t4242\t17". Returns how many
 * were read (at least one; what follows the n-th is not looked at),
 * -ENOENT when no line has that key, or -EINVAL when its value does not
 * start with a number or one overflows.
 */
int fg_parse_proc_status_list(const char *text, const char *key, unsigned base, uint64_t *ret,
			      size_t n);

/* The fields of /proc/PID/status the resolver asks for. */
struct fg_proc_status {
	pid_t tgid;      /* the process a task belongs to; 0: no valid Tgid line */
	pid_t nspid;     /* its pid in its own (innermost) namespace; 0: no valid NSpid line */
	uint32_t uid[4]; /* real, effective, saved and filesystem */
	uint32_t gid[4];
	uint64_t cap_eff; /* effective capabilities */
	bool have_uid, have_gid, have_cap_eff;
};

/* Parses the whole text of a /proc/PID/status file (NUL-terminated); a field missing stays unset. */
void fg_proc_status_parse(const char *text, struct fg_proc_status *ret);

/* Room for "/proc/PID/map_files/START-END" with 64-bit hexadecimal bounds. */
#define FG_PROC_MAP_FILES_MAX 80

/*
 * Formats the path of pid's mapping [start, end) in /proc/PID/map_files,
 * which reaches the very file mapped, even if it was replaced, unlinked or
 * is in another mount namespace. Returns buf.
 */
char *fg_proc_map_files_path(char buf[static FG_PROC_MAP_FILES_MAX], pid_t pid, uint64_t start,
			     uint64_t end);
