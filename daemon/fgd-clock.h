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

/*
 * CLOCK_REALTIME less CLOCK_MONOTONIC, in ns, now: what turns a record's
 * time into wall-clock time. It moves when the wall clock is set or slewed
 * (NTP), so it is read again for samples as they are drained, not once.
 */
static inline int64_t fgd_wall_offset_ns(void)
{
	struct timespec wall, mono;

	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return ((int64_t)wall.tv_sec - (int64_t)mono.tv_sec) * 1000000000LL +
	       ((int64_t)wall.tv_nsec - (int64_t)mono.tv_nsec);
}
