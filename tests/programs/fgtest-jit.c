/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for a JIT runtime: copies a small busy loop into anonymous
 * memory, makes it executable and calls it forever, so nearly every sample
 * lands in code no file describes. The test writes (or plants) the perf map
 * naming it. Prints "ready", then "START SIZE" of the code in hex. x86-64
 * only: elsewhere it says "unsupported" and exits 77. With an argument, it
 * first names itself that (prctl(PR_SET_NAME): any bytes but NUL, 15 kept),
 * as any process may.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	/* push rbp; mov rbp,rsp; mov ecx,0x100000; 1: dec ecx; jnz 1b; pop rbp; ret */
	static const unsigned char code[] = {
		0x55, 0x48, 0x89, 0xe5, 0xb9, 0x00, 0x00, 0x10,
		0x00, 0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3,
	};
	void (*fn)(void);
	void *mem;

	if (argc > 1 && prctl(PR_SET_NAME, argv[1], 0, 0, 0) < 0) {
		perror("prctl");
		return 1;
	}
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(mem, code, sizeof(code));
	/* As JIT runtimes do: written, then made executable (a MMAP2 record for the tracker). */
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) < 0) {
		perror("mprotect");
		return 1;
	}
	fn = (void (*)(void))mem;
	printf("ready\n%lx %zx\n", (unsigned long)mem, sizeof(code));
	fflush(stdout);
	for (;;)
		fn();
#else
	printf("unsupported\n");
	return 77;
#endif
}
