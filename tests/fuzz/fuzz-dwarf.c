/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bytes are an ELF file whose DWARF a user could make the daemon read
 * for inline frames (a binary, or a debug file it points to). Opening must
 * fail cleanly, or lookups through the inline index must answer within
 * their bounds, at addresses of each unit and at addresses taken from the
 * input. (libdw's own walk, fg_dwarf__inlines_walk(), is left out: it
 * leaks on damaged DWARF; fgd falls back to it only past the index's
 * memory limit.)
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/fgd-dwarf.h"

#define MAX_NAMES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void look_up(struct fg_dwarf *d, uint64_t vaddr)
{
	const char *names[MAX_NAMES];
	char buf[256];
	struct fg_dwarf_names dn = {
		.names = names, .max = MAX_NAMES, .buf = buf, .size = sizeof(buf)
	};
	size_t n = fg_dwarf__inlines(d, vaddr, &dn);

	if (n > MAX_NAMES || dn.used > dn.size)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!names[i] || strlen(names[i]) > (size_t)1 << 20)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_dwarf *d = NULL;
	Dwarf_Off off = 0, next;
	size_t hsize, units = 0;
	int fd, r;

	if (size > 1 << 20)
		return 0;
	fd = memfd_create("fuzz-dwarf", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	r = fg_dwarf__new(fd, false, UINT64_C(64) << 20, &d);
	close(fd);
	if (r < 0) {
		if (d)
			abort();
		return 0;
	}
	/* Where each unit starts, and a little further on. */
	while (units++ < 64 &&
	       dwarf_next_unit(fg_dwarf__handle(d), off, &next, &hsize, NULL, NULL, NULL, NULL,
			       NULL, NULL) == 0 &&
	       next > off) {
		Dwarf_Die cu;
		Dwarf_Addr lo;

		if (dwarf_offdie(fg_dwarf__handle(d), off + hsize, &cu) &&
		    dwarf_lowpc(&cu, &lo) == 0)
			for (uint64_t k = 0; k < 64; k += 3)
				look_up(d, lo + k);
		off = next;
	}
	/* Addresses from the input itself, so the fuzzer can steer them. */
	for (size_t at = 0; at + 8 <= size && at < 512; at += 8) {
		uint64_t a;

		memcpy(&a, data + at, 8);
		look_up(d, a);
	}
	fg_dwarf__free(d);
	return 0;
}
