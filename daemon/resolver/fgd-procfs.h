/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The one reader of /proc/PID/status for the resolver: the process table
 * (its threads' processes, its processes' owners) and the JIT maps (the
 * process's namespace pid and uid). The file is parsed by
 * common/base/procfs.h.
 */

#include <sys/types.h>

#include "base/procfs.h"

/*
 * Reads pid's /proc/PID/status into *ret, and the file's owner into
 * *ret_file_uid if that is not NULL (a non-dumpable process has its /proc
 * files owned by root). 0, or the negative errno of opening or reading it
 * (-ENOENT: no such process).
 */
int fg_procfs_status(pid_t pid, struct fg_proc_status *ret, uid_t *ret_file_uid);
