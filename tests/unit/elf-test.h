/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the symbol unit tests share: paths of the programs meson built, the
 * address of any symbol (labels included) read straight from a file with
 * libelf, the address of a PLT entry, the file offset a mapping would give
 * for an address, and small file helpers for building debug directory trees.
 */

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/macro.h"
#include "test.h"

/* Path of a program in the build's tests/programs; valid for the next 15 calls. */
static inline const char *program_path(const char *name)
{
	static char paths[16][PATH_MAX];
	static unsigned slot;
	char *p = paths[slot++ % 16];

	snprintf(p, PATH_MAX, "%s/programs/%s", fg_test_build_dir(), name);
	return p;
}

static inline bool program_exists(const char *name)
{
	return access(program_path(name), R_OK) == 0;
}

/* The symbol called name in path's .symtab (any type), or fails the test. */
static inline GElf_Sym find_symbol(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	GElf_Sym found = {};
	bool seen = false;
	Elf *elf;

	ASSERT_TRUE(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ASSERT_TRUE(elf);
	while (!seen && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0 && sym.st_shndx != SHN_UNDEF) {
				found = sym;
				seen = true;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	if (!seen)
		fg_test_fail(__FILE__, __LINE__, "no symbol %s in %s", name, path);
	return found;
}

/* The value of that symbol. */
static inline uint64_t symbol_value(const char *path, const char *name)
{
	return find_symbol(path, name).st_value;
}

/* Its size (st_size). */
static inline uint64_t symbol_size(const char *path, const char *name)
{
	return find_symbol(path, name).st_size;
}

/* The file offset at which vaddr is loaded (what ip - start + pgoff gives), or fails the test. */
static inline uint64_t vaddr_to_offset(const char *path, uint64_t vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t off = UINT64_MAX;
	size_t n = 0;
	Elf *elf;

	ASSERT_TRUE(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ASSERT_TRUE(elf && elf_getphdrnum(elf, &n) == 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			off = vaddr - ph.p_vaddr + ph.p_offset;
	}
	elf_end(elf);
	close(fd);
	if (off == UINT64_MAX)
		fg_test_fail(__FILE__, __LINE__, "0x%" PRIx64 " is not loaded from %s", vaddr,
			     path);
	return off;
}

/* Where a program's PLT lies, from its section headers alone. */
struct plt_layout {
	uint64_t plt, plt_size; /* .plt */
	uint64_t sec, sec_size; /* .plt.sec (IBT), or 0 */
};

/*
 * The address of the PLT entry calling name, found the way perf lays PLTs
 * out rather than the way fgd does (decoding each entry's jump): the
 * relocations of .rela.plt in GOT order, one 16-byte entry each, in
 * .plt.sec when there is one, else in .plt after the 16 bytes of PLT0.
 * With name NULL, the entry of the R_X86_64_IRELATIVE relocation (an IFUNC
 * of the object's own). Fails the test if there is no such entry.
 */
static inline uint64_t plt_entry(const char *path, const char *name, struct plt_layout *ret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	GElf_Shdr rel_sh = {}, sym_sh = {};
	Elf_Data *rel = NULL, *syms = NULL;
	Elf_Scn *scn = NULL;
	uint64_t want = UINT64_MAX;
	size_t shstrndx, nrel, rank = 0;
	Elf *elf;

	ASSERT_TRUE(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ASSERT_TRUE(elf && elf_getshdrstrndx(elf, &shstrndx) == 0);
	*ret = (struct plt_layout){};
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		ASSERT_TRUE(gelf_getshdr(scn, &sh));
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n)
			continue;
		if (strcmp(n, ".plt") == 0)
			ret->plt = sh.sh_addr, ret->plt_size = sh.sh_size;
		else if (strcmp(n, ".plt.sec") == 0)
			ret->sec = sh.sh_addr, ret->sec_size = sh.sh_size;
		else if (strcmp(n, ".rela.plt") == 0) {
			rel_sh = sh;
			rel = elf_getdata(scn, NULL);
			ASSERT_TRUE(gelf_getshdr(elf_getscn(elf, sh.sh_link), &sym_sh));
			syms = elf_getdata(elf_getscn(elf, sh.sh_link), NULL);
		}
	}
	ASSERT_TRUE(rel && syms && ret->plt && rel_sh.sh_entsize == sizeof(Elf64_Rela));
	nrel = rel_sh.sh_size / rel_sh.sh_entsize;
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *n;

		ASSERT_TRUE(gelf_getrela(rel, (int)i, &r));
		ASSERT_TRUE(gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym));
		n = elf_strptr(elf, sym_sh.sh_link, sym.st_name);
		if (name ? n && strcmp(n, name) == 0 : GELF_R_TYPE(r.r_info) == R_X86_64_IRELATIVE)
			want = r.r_offset;
	}
	if (want == UINT64_MAX)
		fg_test_fail(__FILE__, __LINE__, "no PLT entry for %s in %s", name ?: "an IFUNC",
			     path);
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela r;

		ASSERT_TRUE(gelf_getrela(rel, (int)i, &r));
		rank += r.r_offset < want;
	}
	elf_end(elf);
	close(fd);
	return ret->sec ? ret->sec + 16 * rank : ret->plt + 16 + 16 * rank;
}

/*
 * The libc this test runs with, from /proc/self/maps, in path; and where
 * Debian's build-id tree keeps its debug file (libc6-dbg) in debug, whether
 * it is installed or not.
 */
static inline void own_libc(char *path, size_t size, char *debug, size_t debug_size)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096], hex[2 * 64 + 1] = "";
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	path[0] = '\0';
	ASSERT_TRUE(f);
	while (!path[0] && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(path, size, "%s", p);
		}
	}
	fclose(f);
	ASSERT_TRUE(path[0]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ASSERT_TRUE(elf);
	while (!hex[0] && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t off = 0, name_off, desc_off;
		GElf_Shdr sh;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !data)
			continue;
		while (!hex[0] && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz > 1 && nh.n_descsz <= 64)
				for (size_t i = 0; i < nh.n_descsz; i++)
					snprintf(hex + 2 * i, 3, "%02x",
						 ((const uint8_t *)data->d_buf)[desc_off + i]);
	}
	elf_end(elf);
	close(fd);
	ASSERT_TRUE(hex[0]);
	snprintf(debug, debug_size, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
}

/* Copies a file; mkdir -p of its directory first. */
static inline void copy_file(const char *from, const char *to)
{
	char dir[2 * PATH_MAX + 64], buf[65536];
	int in, out;
	ssize_t n;

	snprintf(dir, sizeof(dir), "%s", to);
	for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		(void)mkdir(dir, 0755);
		*p = '/';
	}
	in = open(from, O_RDONLY | O_CLOEXEC);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ASSERT_TRUE(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ASSERT_TRUE(write(out, buf, (size_t)n) == n);
	ASSERT_TRUE(n == 0);
	close(in);
	close(out);
}

/* rm -rf of a test's temporary directory. */
static inline void remove_tree(const char *path)
{
	char cmd[PATH_MAX + 32];

	ASSERT_TRUE(strncmp(path, "/tmp/fg-test-", 13) == 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	ASSERT_TRUE(system(cmd) == 0);
}
