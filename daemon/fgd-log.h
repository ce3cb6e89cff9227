/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Daemon logging: to stderr, with the sd-daemon "<N>" level prefixes that
 * journald turns into priorities when stderr is not a terminal.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <syslog.h>

#include "base/macro.h"

/* Messages above this syslog priority are dropped (LOG_INFO by default). */
extern int fg_log_max_level;

void fg_log(int level, const char *fmt, ...) _printf_(2, 3);

#define log_error(...) fg_log(LOG_ERR, __VA_ARGS__)
#define log_warning(...) fg_log(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) fg_log(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) fg_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...) fg_log(LOG_DEBUG, __VA_ARGS__)
