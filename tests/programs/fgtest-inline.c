/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inlined functions with known names, for inline frames. fgtest_outer (never
 * inlined) inlines fgtest_middle, which inlines fgtest_inner; the global
 * label fgtest_inline_mark sits inside fgtest_inner's inlined code, so tests
 * can find an address there in the symbol table. Each is inlined exactly
 * once, or the label would be defined twice.
 *
 * Prints "ready", then works for argv[1] seconds (default: until killed).
 * Built -O2 -g, and from it: stripped with a .gnu_debuglink, stripped
 * alone, and stripped with MiniDebugInfo (tests/programs/meson.build).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long fgtest_inline_sink;

static inline __attribute__((always_inline)) unsigned long fgtest_inner(unsigned long x)
{
	__asm__ volatile(".globl fgtest_inline_mark\nfgtest_inline_mark:\n\tnop");
	for (int i = 0; i < 4000; i++)
		x = x * 6364136223846793005UL + (x >> 29) + 1442695040888963407UL;
	return x;
}

static inline __attribute__((always_inline)) unsigned long fgtest_middle(unsigned long x)
{
	fgtest_inline_sink = x;
	return fgtest_inner(x ^ 0x9e3779b97f4a7c15UL) + 1;
}

__attribute__((noinline)) unsigned long fgtest_outer(unsigned long x);
__attribute__((noinline)) unsigned long fgtest_outer(unsigned long x)
{
	return fgtest_middle(x * 3);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : -1, end = now() + secs;

	printf("ready\n");
	fflush(stdout);
	do
		fgtest_inline_sink = fgtest_outer(fgtest_inline_sink + 1);
	while (secs < 0 || now() < end);
	return 0;
}
