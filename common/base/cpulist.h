/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/*
 * Parses a kernel CPU list such as "0-3,8,10-11" (the format of
 * /sys/devices/system/cpu/online) into an ascending array of CPU numbers.
 * Stores the array (caller frees with free()) and its length. Returns 0,
 * -EINVAL for a malformed list, or -ENOMEM.
 */
int fg_cpulist_parse(const char *s, int **ret_cpus, size_t *ret_n);
