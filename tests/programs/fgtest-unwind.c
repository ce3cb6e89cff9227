/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A C call chain built the way distro binaries are (gcc -O2, no frame
 * pointer), which captures its registers and stack in its innermost
 * function for tests/unit/test-unwind.c. Usage: fgtest-unwind DUMPFILE
 *
 * Built with -DFGTEST_INLINE_B, fgtest_unwind_b is inlined into
 * fgtest_unwind_a: no frame of its own to unwind, but an inline frame to name.
 */
#include "fgtest-unwind.h"

static const char *dump_path;
static volatile int sink;

int fgtest_unwind_leaf(int x);
int fgtest_unwind_c(int x);
#ifndef FGTEST_INLINE_B
int fgtest_unwind_b(int x);
#endif
int fgtest_unwind_a(int x);

__attribute__((noinline)) int fgtest_unwind_leaf(int x)
{
	volatile char pad[64]; /* a frame with locals, so the CFA is not just rsp + 8 */

	pad[0] = (char)x;
	FGTEST_CAPTURE_REGS();
	if (fgtest_write_dump(dump_path, 65536) < 0)
		return -1;
	fgtest_wait_for_test();
	return pad[0] + sink;
}

/* Results are used after each call, so none of them becomes a tail call. */
__attribute__((noinline)) int fgtest_unwind_c(int x)
{
	return fgtest_unwind_leaf(x + 1) * 3 + sink;
}

#ifdef FGTEST_INLINE_B
static inline
	__attribute__((always_inline))
#else
__attribute__((noinline))
#endif
	int
	fgtest_unwind_b(int x)
{
	return fgtest_unwind_c(x + 1) * 5 + sink;
}

__attribute__((noinline)) int fgtest_unwind_a(int x)
{
	return fgtest_unwind_b(x + 1) * 7 + sink;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	dump_path = argv[1];
	return fgtest_unwind_a(argc) < 0;
}
