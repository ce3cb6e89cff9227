/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writes a hostile but valid x86-64 executable: a static ELF whose .symtab
 * holds N function symbols (default 4,000,000), so reading its symbols
 * takes the daemon seconds. Run, it spins at its entry point, in a function
 * named fgdBigSymSpin that the rest of the table surrounds. No libc, no
 * CFI, no build-id: only the symbol table's size is out of the ordinary.
 *
 * Usage: fgtest-bigsym OUTPUT [N]
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BASE 0x400000ULL
#define PAGE 0x1000ULL

static void put(FILE *f, const void *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n) {
		perror("fgtest-bigsym: write");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const char shstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	const char *spin = "fgdBigSymSpin";
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 4000000;
	uint64_t text_off = PAGE, text_size, sym_off, sym_size, str_off, str_size = 1, shstr_off,
		 sh_off;
	unsigned long spin_at;
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };
	Elf64_Shdr sh[5] = { { 0 } };
	Elf64_Sym sym = { 0 };
	char name[32];
	FILE *f;

	if (argc < 2 || n < 2) {
		fprintf(stderr, "usage: fgtest-bigsym OUTPUT [N >= 2]\n");
		return 2;
	}
	/* One byte of code per symbol; the spin loop (jmp .) starts in the middle: its pc never moves. */
	text_size = n + 1;
	spin_at = n / 2;
	for (unsigned long i = 0; i < n; i++)
		str_size +=
			(size_t)(i == spin_at ? strlen(spin) :
						(size_t)snprintf(name, sizeof(name), "f%lu", i)) +
			1;
	sym_off = (text_off + text_size + 7) & ~7ULL;
	sym_size = (n + 1) * sizeof(Elf64_Sym);
	str_off = sym_off + sym_size;
	shstr_off = str_off + str_size;
	sh_off = (shstr_off + sizeof(shstrtab) + 7) & ~7ULL;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = BASE + text_off + spin_at;
	eh.e_phoff = sizeof(eh);
	eh.e_shoff = sh_off;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 5;
	eh.e_shstrndx = 4;

	/* The headers and the code, read and executed from the file's start. */
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_vaddr = ph.p_paddr = BASE;
	ph.p_filesz = ph.p_memsz = text_off + text_size;
	ph.p_align = PAGE;

	sh[1] = (Elf64_Shdr){ .sh_name = 1,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			      .sh_addr = BASE + text_off,
			      .sh_offset = text_off,
			      .sh_size = text_size,
			      .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = 7,
			      .sh_type = SHT_SYMTAB,
			      .sh_offset = sym_off,
			      .sh_size = sym_size,
			      .sh_link = 3,
			      .sh_info = 1,
			      .sh_addralign = 8,
			      .sh_entsize = sizeof(Elf64_Sym) };
	sh[3] = (Elf64_Shdr){ .sh_name = 15,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = str_off,
			      .sh_size = str_size,
			      .sh_addralign = 1 };
	sh[4] = (Elf64_Shdr){ .sh_name = 23,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = shstr_off,
			      .sh_size = sizeof(shstrtab),
			      .sh_addralign = 1 };

	f = fopen(argv[1], "wbe");
	if (!f) {
		perror("fgtest-bigsym: open");
		return 1;
	}
	put(f, &eh, sizeof(eh));
	put(f, &ph, sizeof(ph));
	fseek(f, (long)text_off, SEEK_SET);
	for (uint64_t i = 0; i < text_size; i++)
		fputc(i == spin_at ? 0xeb : i == spin_at + 1 ? 0xfe : 0x90, f);
	fseek(f, (long)sym_off, SEEK_SET);
	put(f, &sym, sizeof(sym)); /* the null symbol */
	for (unsigned long i = 0, at = 1; i < n; i++) {
		size_t len = i == spin_at ? strlen(spin) :
					    (size_t)snprintf(name, sizeof(name), "f%lu", i);

		sym = (Elf64_Sym){ .st_name = (Elf64_Word)at,
				   .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				   .st_shndx = 1,
				   .st_value = BASE + text_off + i,
				   .st_size = 1 };
		put(f, &sym, sizeof(sym));
		at += len + 1;
	}
	put(f, "", 1);
	for (unsigned long i = 0; i < n; i++) {
		if (i == spin_at)
			put(f, spin, strlen(spin) + 1);
		else
			put(f, name, (size_t)snprintf(name, sizeof(name), "f%lu", i) + 1);
	}
	put(f, shstrtab, sizeof(shstrtab));
	fseek(f, (long)sh_off, SEEK_SET);
	put(f, sh, sizeof(sh));
	if (fclose(f) != 0 || chmod(argv[1], 0755) != 0) {
		perror("fgtest-bigsym: close");
		return 1;
	}
	return 0;
}
