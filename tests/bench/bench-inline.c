/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * bench-inline: what fgd's inline index costs and saves, on a real binary.
 *
 *   bench-inline [-n PER_FUNCTION] [-m MAX_ADDRESSES] FILE [DWARF_FILE]
 *
 * Takes PER_FUNCTION (default 4) addresses spread over each function of
 * FILE's symbol table, at most MAX_ADDRESSES (default 20000) of them spread
 * over the whole table, and names the inline frames at each with DWARF
 * from DWARF_FILE (default FILE, e.g. a separate debug file):
 *   1. with libdw's walk (fg_dwarf__inlines_walk(), what fgd did for every
 *      new address before the index);
 *   2. with the index (fg_dwarf__inlines()) on a fresh handle: the first
 *      pass builds the index of each unit it reaches, a second pass only
 *      looks up;
 * and checks that both name the same chains. Prints one "key: value" line
 * per figure: times per lookup, the bytes the indexes hold, mismatches.
 */

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "symbols/fgd-dwarf.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* per addresses spread over each sized function of path's symbol table, in *ret. */
static int addresses(const char *path, unsigned per, uint64_t **ret, size_t *ret_n)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ uint64_t *a = NULL;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0)
		return negative_errno();
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_size == 0 || s.st_shndx == SHN_UNDEF)
				continue;
			for (unsigned k = 0; k < per; k++) {
				if (FG_GROW(a, cap, n + 1) < 0) {
					elf_end(elf);
					return -ENOMEM;
				}
				a[n++] = s.st_value + s.st_size * k / per;
			}
		}
	}
	elf_end(elf);
	if (n == 0)
		return -ENODATA;
	*ret = TAKE_PTR(a);
	*ret_n = n;
	return 0;
}

/* Names at vaddr joined by ';' into out; whether any. */
static bool chain(struct fg_dwarf *d, uint64_t vaddr, bool walk, char *out, size_t size)
{
	const char *names[16];
	char buf[4096];
	struct fg_dwarf_names dn = { .names = names, .max = 16, .buf = buf, .size = sizeof(buf) };
	size_t n = walk ? fg_dwarf__inlines_walk(d, vaddr, &dn) : fg_dwarf__inlines(d, vaddr, &dn);
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ";" : "", names[i]);
	return n > 0;
}

static int open_dwarf(const char *path, struct fg_dwarf **ret)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return negative_errno();
	return fg_dwarf__new(fd, true, UINT64_C(2) << 30, ret);
}

int main(int argc, char **argv)
{
	_cleanup_(fg_dwarf__freep) struct fg_dwarf *walked = NULL, *indexed = NULL;
	_cleanup_free_ uint64_t *all = NULL;
	unsigned per = 4;
	size_t max = 20000, n_all = 0, n, with_inlines = 0, mismatches = 0;
	const char *file, *dwarf_file;
	uint64_t bytes0;
	char **walk_answers;
	double t0, t_walk, t_build, t_warm;
	int opt, r;

	while ((opt = getopt(argc, argv, "n:m:")) != -1) {
		if (opt == 'n')
			per = (unsigned)strtoul(optarg, NULL, 10);
		else if (opt == 'm')
			max = strtoul(optarg, NULL, 10);
		else
			return 2;
	}
	if (optind >= argc || per == 0 || max == 0) {
		fprintf(stderr,
			"usage: bench-inline [-n PER_FUNCTION] [-m MAX] FILE [DWARF_FILE]\n");
		return 2;
	}
	file = argv[optind];
	dwarf_file = optind + 1 < argc ? argv[optind + 1] : file;
	elf_version(EV_CURRENT);
	r = addresses(file, per, &all, &n_all);
	if (r < 0) {
		fprintf(stderr, "bench-inline: %s: no functions: %s\n", file, strerror(-r));
		return 1;
	}
	n = MIN(n_all, max);
	/* Spread over the whole table, not its first functions alone. */
	for (size_t i = 0; i < n; i++)
		all[i] = all[i * n_all / n];
	r = open_dwarf(dwarf_file, &walked);
	if (r >= 0)
		r = open_dwarf(dwarf_file, &indexed);
	if (r < 0) {
		fprintf(stderr, "bench-inline: %s: %s\n", dwarf_file, strerror(-r));
		return 1;
	}
	walk_answers = calloc(n, sizeof(*walk_answers));
	if (!walk_answers)
		return 1;

	t0 = now();
	for (size_t i = 0; i < n; i++) {
		char out[8192];

		chain(walked, all[i], true, out, sizeof(out));
		walk_answers[i] = strdup(out);
	}
	t_walk = now() - t0;

	bytes0 = fg_dwarf__bytes(indexed);
	t0 = now();
	for (size_t i = 0; i < n; i++) {
		char out[8192];

		with_inlines += chain(indexed, all[i], false, out, sizeof(out));
		if (!walk_answers[i] || strcmp(out, walk_answers[i]) != 0) {
			if (mismatches++ < 5)
				fprintf(stderr,
					"mismatch at 0x%" PRIx64 ": index '%s', walk '%s'\n",
					all[i], out, walk_answers[i] ? walk_answers[i] : "?");
		}
	}
	t_build = now() - t0;
	t0 = now();
	for (size_t i = 0; i < n; i++) {
		char out[8192];

		chain(indexed, all[i], false, out, sizeof(out));
	}
	t_warm = now() - t0;

	printf("file: %s\n", file);
	printf("dwarf_file: %s\n", dwarf_file);
	printf("addresses: %zu (of %zu)\n", n, n_all);
	printf("with_inline_frames: %zu\n", with_inlines);
	printf("walk_us_per_lookup: %.2f\n", t_walk * 1e6 / (double)n);
	printf("walk_total_s: %.3f\n", t_walk);
	printf("index_first_pass_s: %.3f\n", t_build);
	printf("index_first_pass_us_per_lookup: %.2f\n", t_build * 1e6 / (double)n);
	printf("index_warm_us_per_lookup: %.2f\n", t_warm * 1e6 / (double)n);
	printf("index_bytes: %" PRIu64 "\n", fg_dwarf__bytes(indexed) - bytes0);
	printf("mismatches: %zu\n", mismatches);
	for (size_t i = 0; i < n; i++)
		free(walk_answers[i]);
	free(walk_answers);
	return mismatches ? 1 : 0;
}
