/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgd-dwarf's inline index against libdw's own walk: at every address of
 * every function of the programs meson built with inlining (C and C++,
 * DWARF in the binary and in a separate debug file), fg_dwarf__inlines()
 * must name exactly the chain fg_dwarf__inlines_walk() names, and the
 * index must be charged to the binary's bytes once built.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "elf-test.h"
#include "symbols/fgd-dwarf.h"
#include "test.h"

/* A function of a symbol table: [lo, hi). */
struct func {
	uint64_t lo, hi;
};

/* The sized functions of path's .symtab, in *ret (caller frees); how many. */
static size_t functions(const char *path, struct func **ret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct func *f = NULL;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;

	ASSERT_TRUE(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ASSERT_TRUE(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0 ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			ASSERT_OK(FG_GROW(f, cap, n + 1));
			f[n++] = (struct func){ sym.st_value, sym.st_value + sym.st_size };
		}
	}
	elf_end(elf);
	close(fd);
	*ret = f;
	return n;
}

/* The chain at vaddr by index (walk false) or by libdw's walk, joined by ';'. */
static void chain_at(struct fg_dwarf *d, uint64_t vaddr, bool walk, char *out, size_t size)
{
	const char *names[16];
	char buf[4096];
	struct fg_dwarf_names dn = { .names = names, .max = 16, .buf = buf, .size = sizeof(buf) };
	size_t n = walk ? fg_dwarf__inlines_walk(d, vaddr, &dn) : fg_dwarf__inlines(d, vaddr, &dn);
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ";" : "", names[i]);
}

/*
 * Compares both answers at every step-th address of path's functions
 * (DWARF from dwarf_path); returns how many addresses had inline frames.
 */
static size_t compare_every(const char *path, const char *dwarf_path, uint64_t step)
{
	_cleanup_free_ struct func *f = NULL;
	size_t n = functions(path, &f), inlined = 0;
	int fd = open(dwarf_path, O_RDONLY | O_CLOEXEC);
	struct fg_dwarf *d;
	uint64_t before;

	ASSERT_TRUE(n > 0);
	ASSERT_TRUE(fd >= 0);
	ASSERT_OK(fg_dwarf__new(fd, true, UINT64_C(64) << 20, &d));
	close(fd);
	before = fg_dwarf__bytes(d);
	for (size_t i = 0; i < n; i++) {
		for (uint64_t a = f[i].lo; a < f[i].hi; a += step) {
			char by_index[8192], by_walk[8192];

			chain_at(d, a, false, by_index, sizeof(by_index));
			chain_at(d, a, true, by_walk, sizeof(by_walk));
			if (strcmp(by_index, by_walk) != 0)
				fprintf(stderr, "%s at 0x%" PRIx64 ": index '%s', walk '%s'\n",
					path, a, by_index, by_walk);
			ASSERT_STREQ(by_index, by_walk);
			inlined += by_index[0] != '\0';
		}
	}
	/* The indexes of the units looked into are held, and counted. */
	ASSERT_TRUE(fg_dwarf__bytes(d) > before);
	fg_dwarf__free(d);
	return inlined;
}

TEST(index_matches_the_walk_in_c)
{
	const char *path = program_path("fgtest-inline");

	/* The fixture inlines three deep at its marker: there must be chains to compare. */
	ASSERT_TRUE(compare_every(path, path, 1) > 0);
}

TEST(index_matches_the_walk_in_cxx_from_a_debug_file)
{
	ASSERT_TRUE(compare_every(program_path("fgtest-cxx"), program_path("fgtest-cxx.debug"), 1) >
		    0);
}

TEST(index_matches_the_walk_from_a_separate_debug_file)
{
	ASSERT_TRUE(compare_every(program_path("fgtest-inline"),
				  program_path("fgtest-inline.debug"), 1) > 0);
}

/*
 * A distribution's library with thousands of units, found through
 * .debug_aranges (the test programs: g++'s have the section, clang's do
 * not, so their units are found from their own ranges).
 */
TEST(index_matches_the_walk_in_libc_from_libc6_dbg)
{
	char libc[PATH_MAX], debug[PATH_MAX];

	own_libc(libc, sizeof(libc), debug, sizeof(debug));
	if (access(debug, R_OK) != 0)
		SKIP("libc6-dbg is not installed");
	/* Every 97th address of its functions: some 15,000, across its units. */
	ASSERT_TRUE(compare_every(debug, debug, 97) > 0);
}
