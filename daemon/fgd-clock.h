/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <time.h>

/*
 * The daemon's two clocks. fgd_now() is the clock of sampling:
 * CLOCK_MONOTONIC in ns, the clock every perf event is told to stamp its
 * records with (use_clockid), so record times and our own times compare
 * directly.
 */
static inline uint64_t fgd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Wall-clock time in ms (CLOCK_REALTIME): only for what users name by date,
 * the always-on window's slices and the history on disk, never for intervals.
 */
static inline int64_t fgd_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
