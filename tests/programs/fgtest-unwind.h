/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the kernel hands the daemon in a DWARF-mode sample, made by the
 * program itself: its registers at one instruction (in perf's order for
 * FG_PERF_REGS_MASK_X86_64) and a copy of its stack from there up. The unit
 * test unwinds the copy with the daemon's unwinder while the program waits,
 * so the process's maps and binaries are there to read.
 *
 * Dump file: "FGUW", u32 register count, the registers, u64 stack size, the
 * stack bytes.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uint64_t fgtest_regs[17];

/*
 * Every general register, then the address of the instruction right after
 * the stores as rip: rsp is unchanged in between, so the CFI row for that
 * address describes these registers.
 */
#define FGTEST_CAPTURE_REGS()                       \
	__asm__ volatile("movq %%rax, 0(%0)\n\t"    \
			 "movq %%rbx, 8(%0)\n\t"    \
			 "movq %%rcx, 16(%0)\n\t"   \
			 "movq %%rdx, 24(%0)\n\t"   \
			 "movq %%rsi, 32(%0)\n\t"   \
			 "movq %%rdi, 40(%0)\n\t"   \
			 "movq %%rbp, 48(%0)\n\t"   \
			 "movq %%rsp, 56(%0)\n\t"   \
			 "movq %%r8, 72(%0)\n\t"    \
			 "movq %%r9, 80(%0)\n\t"    \
			 "movq %%r10, 88(%0)\n\t"   \
			 "movq %%r11, 96(%0)\n\t"   \
			 "movq %%r12, 104(%0)\n\t"  \
			 "movq %%r13, 112(%0)\n\t"  \
			 "movq %%r14, 120(%0)\n\t"  \
			 "movq %%r15, 128(%0)\n\t"  \
			 "leaq 0(%%rip), %%rax\n\t" \
			 "movq %%rax, 64(%0)\n\t"   \
			 :                          \
			 : "r"(fgtest_regs)         \
			 : "rax", "memory")

/* The end of this thread's stack mapping, from /proc/self/maps. */
static uint64_t fgtest_stack_end(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uint64_t end = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && sp >= lo && sp < hi)
			end = hi;
	}
	if (f)
		fclose(f);
	return end;
}

/*
 * Copies n bytes of this thread's stack from sp, as the kernel does for
 * PERF_SAMPLE_STACK_USER: through other frames' locals and AddressSanitizer's
 * red zones between them, which memcpy() would report.
 */
__attribute__((no_sanitize_address, unused)) static void fgtest_copy_stack(void *dst, uint64_t sp,
									   uint64_t n)
{
	const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)sp;
	uint8_t *out = (uint8_t *)dst;

	for (uint64_t i = 0; i < n; i++)
		out[i] = src[i];
}

/* Writes the registers and up to size bytes of stack above the captured rsp. */
static int fgtest_write_dump(const char *path, uint64_t size)
{
	uint64_t sp = fgtest_regs[7], end = fgtest_stack_end(sp), n;
	uint32_t nregs = 17;
	FILE *f;

	if (!end)
		return -1;
	n = end - sp < size ? end - sp : size;
	f = fopen(path, "we");
	if (!f)
		return -1;
	fwrite("FGUW", 1, 4, f);
	fwrite(&nregs, sizeof(nregs), 1, f);
	fwrite(fgtest_regs, sizeof(fgtest_regs), 1, f);
	fwrite(&n, sizeof(n), 1, f);
	fwrite((const void *)(uintptr_t)sp, 1, n, f);
	return fclose(f);
}

/* Tells the test the dump is there, and waits until it closes our stdin. */
static void fgtest_wait_for_test(void)
{
	char c;

	fputs("ready\n", stdout);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
}
