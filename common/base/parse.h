/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Parses a whole decimal string as an integer within [min, max]: no sign, no
 * trailing characters, no overflow. Returns 0, or -EINVAL.
 */
int fg_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *ret);

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
