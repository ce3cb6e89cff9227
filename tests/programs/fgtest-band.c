/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Burns CPU in a known band of every wall-clock second, and sleeps through
 * the rest: the heat map's workload (tests/integration/test_heatmap.py).
 *
 * usage: fgtest-band FROM_MS TO_MS SECONDS
 *
 * Prints "ready" once running, then for SECONDS seconds of wall time: from
 * offset FROM_MS to TO_MS of each second of CLOCK_REALTIME it spins in
 * burst(); outside the band it sleeps in idle_wait() until the band's next
 * start. burst() is the only function that runs on the CPU for long, so a
 * range of the heat map over the band is a flame graph of burst alone.
 *
 * The sleep ends LEAD_MS before the band, and burst() spins from then on:
 * the return from the sleep runs on the CPU too (clock_nanosleep's kernel
 * frames under idle_wait), and a sample of it must fall before the band,
 * not in it, even when a busy machine wakes the process a few ms late.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LEAD_MS 5

static volatile uint64_t sink;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Spins until ms end (CLOCK_REALTIME). */
__attribute__((noinline)) static void burst(int64_t end)
{
	uint64_t v = sink;

	while (now_ms() < end)
		for (int i = 0; i < 10000; i++)
			v = v * 6364136223846793005u + 1442695040888963407u;
	sink = v;
}

/* Sleeps until ms at (CLOCK_REALTIME). */
__attribute__((noinline)) static void idle_wait(int64_t at)
{
	struct timespec ts = { .tv_sec = at / 1000, .tv_nsec = (at % 1000) * 1000000 };

	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

int main(int argc, char **argv)
{
	int64_t from, to, start, end;

	if (argc != 4) {
		fprintf(stderr, "usage: fgtest-band FROM_MS TO_MS SECONDS\n");
		return 2;
	}
	from = atoll(argv[1]);
	to = atoll(argv[2]);
	end = now_ms() + (int64_t)(atof(argv[3]) * 1000);
	if (from < 0 || to <= from || to > 1000) {
		fprintf(stderr, "fgtest-band: expected 0 <= FROM_MS < TO_MS <= 1000\n");
		return 2;
	}
	start = from < LEAD_MS ? 0 : from - LEAD_MS;
	printf("ready\n");
	fflush(stdout);
	while (now_ms() < end) {
		int64_t t = now_ms(), second = t - t % 1000, off = t % 1000;

		if (off >= start && off < to)
			burst(second + to);
		else
			idle_wait(off < start ? second + start : second + 1000 + start);
	}
	return 0;
}
