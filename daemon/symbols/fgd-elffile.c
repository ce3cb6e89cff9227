/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/macro.h"
#include "symbols/fgd-elffile.h"
#include "symbols/fgd-plt.h"
#include "symbols/fgd-symtab.h"
#include "symbols/fgd-xz.h"
#include "unwind/ehframe.h"

/* GNU build-ids are 20 bytes (sha1) or 16 (md5); anything past this is not one. */
#define MAX_BUILD_ID 64
/* Real objects have a handful of segments; the cap bounds what a crafted header costs. */
#define MAX_LOADS 256
/* A note segment holding a build-id is tiny; do not read megabytes looking for one. */
#define MAX_NOTE_SIZE (1u << 20)
#define MAX_SECTIONS (1u << 20)
/*
 * MiniDebugInfo (.gnu_debugdata) holds an xz-compressed ELF with only a
 * symbol table: a few hundred KiB for the biggest libraries. The caps bound
 * what a crafted section costs to inflate.
 */
#define MAX_DEBUGDATA_IN (16u << 20)
#define MAX_DEBUGDATA_OUT (64u << 20)
/*
 * A mapped symbol table's pages are given back every this many symbols read
 * (a few hundred KiB of it, and their names).
 */
#define DROP_EVERY_SYMS 16384
struct load {
	uint64_t offset, filesz, vaddr;
	bool exec;
};

struct fg_elf_syms {
	uint64_t entry;       /* e_entry: where the kernel starts a program (0: none) */
	struct fg_symtab tab; /* owned: the function symbols */
	struct load *loads;   /* owned */
	size_t n_loads;
	uint8_t build_id[MAX_BUILD_ID];
	size_t build_id_len;
	char debuglink[FG_ELF_MAX_DEBUGLINK]; /* empty: none */
	uint32_t debuglink_crc;
	bool has_dwarf;
	enum fg_elf_source source;
};

/* What the symbol pass needs of each section. */
struct section {
	uint64_t addr, end;
	bool text;
};

struct loader {
	Elf *elf;                       /* borrowed */
	const struct fg_elf_file *file; /* borrowed: the mapped file elf reads, or NULL */
	bool debug_file;          /* a separate debug file: its code sections are SHT_NOBITS */
	bool layout_only;         /* segments and build-id, no symbols */
	struct section *sections; /* owned */
	size_t n_sections;
	Elf_Scn *debugdata;              /* borrowed from elf: .gnu_debugdata, or NULL */
	Elf_Scn *plt[FG_PLT_N_SECTIONS]; /* borrowed from elf: the PLT sections found, or NULL */
	struct fg_symtab_builder b;      /* owned: the symbols read */
};

static void loader_done(struct loader *l)
{
	free(l->sections);
	fg_symtab_builder_done(&l->b);
}

struct fg_elf_syms *fg_elf_syms__free(struct fg_elf_syms *s)
{
	if (!s)
		return NULL;
	fg_symtab_done(&s->tab);
	free(s->loads);
	free(s);
	return NULL;
}

static void elf_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static bool elf_ok;

static void elf_init(void)
{
	elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

bool fg_elf_ready(void)
{
	pthread_once(&elf_once, elf_init);
	return elf_ok;
}

/*
 * libelf keeps its own error codes, which are not part of its ABI, and sets
 * no errno. What the C library left in errno still tells a failed read or
 * allocation apart from a damaged file, so callers clear errno before each
 * libelf call whose failure they convert here.
 */
static int elf_error(void)
{
	int e = errno;

	(void)elf_errno(); /* consumed, so it does not leak into the next call */
	return e == ENOMEM || e == EIO ? -e : -EINVAL;
}

static bool add_overflows(uint64_t a, uint64_t b)
{
	return a + b < a;
}

/* Copies the build-id out of one block of notes; returns 1 if found, else 0. */
static int build_id_from_notes(Elf_Data *data, struct fg_elf_syms *s)
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	if (!data || !data->d_buf)
		return 0;
	/* gelf_getnote checks that name and descriptor lie within the data. */
	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(ELF_NOTE_GNU) &&
		    memcmp(name, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz <= MAX_BUILD_ID) {
			memcpy(s->build_id, (const uint8_t *)data->d_buf + desc_off, nh.n_descsz);
			s->build_id_len = nh.n_descsz;
			return 1;
		}
		if (next <= off)
			break;
		off = next;
	}
	return 0;
}

/* PT_LOAD table and, from PT_NOTE, the build-id. */
static int read_segments(Elf *elf, const GElf_Ehdr *eh, struct fg_elf_syms *s)
{
	size_t phnum;

	errno = 0;
	if (elf_getphdrnum(elf, &phnum) < 0)
		return elf_error();
	/* libelf quietly shortens a table that runs past the end of the file. */
	if ((eh->e_phnum != PN_XNUM && phnum < eh->e_phnum) || (phnum == 0 && eh->e_phnum != 0))
		return -EINVAL;
	if (phnum > MAX_SECTIONS)
		return -EINVAL;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		errno = 0;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return elf_error();
		if (ph.p_type == PT_LOAD && ph.p_filesz > 0) {
			if (add_overflows(ph.p_offset, ph.p_filesz) ||
			    add_overflows(ph.p_vaddr, ph.p_filesz))
				return -EINVAL;
			if (s->n_loads == MAX_LOADS)
				return -EINVAL;
			if (!s->loads) {
				s->loads = calloc(MIN(phnum, (size_t)MAX_LOADS), sizeof(*s->loads));
				if (!s->loads)
					return -ENOMEM;
			}
			s->loads[s->n_loads++] = (struct load){
				.offset = ph.p_offset,
				.filesz = ph.p_filesz,
				.vaddr = ph.p_vaddr,
				.exec = ph.p_flags & PF_X,
			};
		} else if (ph.p_type == PT_NOTE && s->build_id_len == 0 && ph.p_filesz > 0 &&
			   ph.p_filesz <= MAX_NOTE_SIZE) {
			Elf_Data *d;

			/* Bounds-checked against the file by libelf; a bad note is just skipped. */
			d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (d)
				(void)build_id_from_notes(d, s);
			else
				(void)elf_errno();
		}
	}
	return 0;
}

/*
 * .gnu_debuglink: a file name, NUL, padding to 4 bytes, then the CRC32 of
 * the debug file in the object's byte order. The name is only ever looked
 * up in debug directories, so one that could leave them is refused.
 */
static void read_debuglink(Elf *elf, Elf_Scn *scn, struct fg_elf_syms *s)
{
	const unsigned char *ident;
	const uint8_t *p, *crc;
	Elf_Data *d;
	size_t len;

	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf) {
		(void)elf_errno();
		return;
	}
	p = d->d_buf;
	len = strnlen((const char *)p, MIN(d->d_size, sizeof(s->debuglink)));
	if (len == 0 || len >= sizeof(s->debuglink) || len >= d->d_size)
		return;
	if (memchr(p, '/', len) || strcmp((const char *)p, ".") == 0 ||
	    strcmp((const char *)p, "..") == 0)
		return;
	if (ALIGN_TO(len + 1, (size_t)4) + 4 > d->d_size)
		return;
	ident = (const unsigned char *)elf_getident(elf, NULL);
	if (!ident)
		return;
	crc = p + ALIGN_TO(len + 1, (size_t)4);
	if (ident[EI_DATA] == ELFDATA2MSB)
		s->debuglink_crc = (uint32_t)crc[0] << 24 | (uint32_t)crc[1] << 16 |
				   (uint32_t)crc[2] << 8 | crc[3];
	else
		s->debuglink_crc = (uint32_t)crc[3] << 24 | (uint32_t)crc[2] << 16 |
				   (uint32_t)crc[1] << 8 | crc[0];
	memcpy(s->debuglink, p, len + 1);
}

/*
 * Section table, the symbol tables, and (if the segments had none) the
 * build-id from SHT_NOTE sections; also the optional sections that lead to
 * more symbols: .gnu_debuglink, .gnu_debugdata and .debug_info.
 */
static int read_sections(struct loader *l, const GElf_Ehdr *eh, struct fg_elf_syms *s,
			 Elf_Scn **ret_symtab, Elf_Scn **ret_dynsym)
{
	Elf_Scn *symtab = NULL, *dynsym = NULL, *scn = NULL;
	size_t shnum, shstrndx;
	bool names;
	int k;

	errno = 0;
	if (elf_getshdrnum(l->elf, &shnum) < 0)
		return elf_error();
	/* Section names only find optional sections: without them, those are just absent. */
	names = elf_getshdrstrndx(l->elf, &shstrndx) == 0;
	if (!names)
		(void)elf_errno();
	/* libelf reports a section table cut off by the end of the file as no table at all. */
	if ((shnum == 0 && eh->e_shoff != 0) || shnum < eh->e_shnum)
		return -EINVAL;
	if (shnum > MAX_SECTIONS)
		return -EINVAL;
	if (shnum > 0) {
		l->sections = calloc(shnum, sizeof(*l->sections));
		if (!l->sections)
			return -ENOMEM;
	}
	l->n_sections = shnum;

	while ((scn = elf_nextscn(l->elf, scn))) {
		size_t idx = elf_ndxscn(scn);
		GElf_Shdr sh;

		errno = 0;
		if (!gelf_getshdr(scn, &sh))
			return elf_error();
		if (idx >= shnum)
			return -EINVAL;
		/* A debug file keeps the section headers of the code it describes, not the code. */
		if ((sh.sh_flags & SHF_EXECINSTR) && (sh.sh_flags & SHF_ALLOC) &&
		    (sh.sh_type != SHT_NOBITS || l->debug_file) &&
		    !add_overflows(sh.sh_addr, sh.sh_size))
			l->sections[idx] = (struct section){
				.addr = sh.sh_addr,
				.end = sh.sh_addr + sh.sh_size,
				.text = true,
			};
		if (sh.sh_type == SHT_SYMTAB && !symtab)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = scn;
		else if (sh.sh_type == SHT_NOTE && s->build_id_len == 0 &&
			 sh.sh_size <= MAX_NOTE_SIZE) {
			Elf_Data *d = elf_getdata(scn, NULL);

			if (d)
				(void)build_id_from_notes(d, s);
			else
				(void)elf_errno();
		} else if (names && sh.sh_type != SHT_NOBITS) {
			const char *name = elf_strptr(l->elf, shstrndx, sh.sh_name);

			if (!name)
				(void)elf_errno();
			else if (strcmp(name, ".gnu_debuglink") == 0 && !s->debuglink[0])
				read_debuglink(l->elf, scn, s);
			else if (strcmp(name, ".gnu_debugdata") == 0 && !l->debugdata)
				l->debugdata = scn;
			else if (strcmp(name, ".debug_info") == 0 && sh.sh_size > 0)
				s->has_dwarf = true;
			else if ((sh.sh_flags & SHF_EXECINSTR) &&
				 (k = fg_plt_section_kind(name)) >= 0 && !l->plt[k])
				l->plt[k] = scn;
		}
	}
	*ret_symtab = symtab;
	*ret_dynsym = dynsym;
	return 0;
}

/* The SHT_SYMTAB_SHNDX section extending symtab, if any (objects with > 65279 sections). */
static Elf_Data *find_shndx(Elf *elf, Elf_Scn *symtab)
{
	size_t want = elf_ndxscn(symtab);
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB_SHNDX && sh.sh_link == want)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* Collects the function symbols of one table. Returns how many, or a negative errno. */
static int read_symbols(struct loader *l, Elf_Scn *scn)
{
	Elf_Data *data, *shndx;
	GElf_Shdr sh;
	size_t nsyms, symsize, before = l->b.n_syms;
	int r;

	errno = 0;
	if (!gelf_getshdr(scn, &sh))
		return elf_error();
	errno = 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return elf_error();
	symsize = gelf_fsize(l->elf, ELF_T_SYM, 1, EV_CURRENT);
	/* An empty (SHT_NOBITS-like) or unlinked table contributes nothing; dynsym may still. */
	if (!data->d_buf || symsize == 0 || sh.sh_link == 0 || sh.sh_link >= l->n_sections)
		return 0;
	nsyms = data->d_size / symsize;
	if (nsyms > INT32_MAX)
		return -E2BIG;
	shndx = find_shndx(l->elf, scn);

	for (size_t i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		Elf32_Word xndx = 0;
		const struct section *sec;
		const char *name;
		size_t len, secidx;

		/* Fails for an entry past a short SHT_SYMTAB_SHNDX: skip that one symbol. */
		if (!gelf_getsymshndx(data, shndx, (int)i, &sym, &xndx)) {
			(void)elf_errno();
			continue;
		}
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		if (sym.st_name == 0 || sym.st_shndx == SHN_UNDEF)
			continue;
		if (sym.st_shndx == SHN_XINDEX)
			secidx = shndx ? xndx : 0;
		/* absolute or common: not code in this object */
		else if (sym.st_shndx >= SHN_LORESERVE)
			continue;
		else
			secidx = sym.st_shndx;
		if (secidx == 0 || secidx >= l->n_sections)
			continue;
		sec = &l->sections[secidx];
		if (!sec->text || sym.st_value < sec->addr || sym.st_value >= sec->end)
			continue;

		/* elf_strptr checks the offset and that the string ends inside the table. */
		name = elf_strptr(l->elf, sh.sh_link, sym.st_name);
		if (!name) {
			(void)elf_errno();
			continue;
		}
		/*
		 * A static symbol table spells symbol versions into the name
		 * (glibc's "__libc_start_main@@GLIBC_2.34"); the function is the
		 * part before them, as .dynsym names it. Versions of one function
		 * then meet as aliases.
		 */
		len = strcspn(name, "@");
		if (len == 0)
			continue;

		r = fg_symtab_builder_add(
			&l->b,
			&(struct fg_symtab_pending){
				.addr = sym.st_value,
				/* Bounded by the section end, which is above addr, so no overflow. */
				.end = sym.st_size > 0 && sym.st_size < sec->end - sym.st_value ?
					       sym.st_value + sym.st_size :
					       sec->end,
				.sized = sym.st_size > 0,
				.ifunc = GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC,
				.bind_rank = fg_symtab_bind_rank(GELF_ST_BIND(sym.st_info)),
			},
			name, len);
		if (r < 0)
			return r;
		/*
		 * A mapped file's table and names are read once, in order: the
		 * pages read so far go back, so they are never all resident at
		 * once (a big C++ program has tens of MiB of them).
		 */
		if (l->file && i % DROP_EVERY_SYMS == 0)
			fg_elf_file_drop_pages(l->file);
	}
	return (int)(l->b.n_syms - before);
}

static int collect(Elf *elf, struct loader *l, struct fg_elf_syms *s);

/*
 * Reads the symbol table of the ELF image an xz stream inflates to into m
 * (a loader for a debug file). Returns how many function symbols, or a
 * negative errno.
 */
static int collect_xz(const uint8_t *xz, size_t len, struct loader *m)
{
	/* Declared before elf so it is freed after elf_end(). */
	_cleanup_free_ uint8_t *image = NULL;
	_cleanup_(elf_endp) Elf *elf = NULL;
	struct fg_elf_syms scratch = {}; /* the image's build-id and links are not ours */
	size_t image_len = 0;
	int r;

	r = fg_xz_decode(xz, len, MAX_DEBUGDATA_IN, MAX_DEBUGDATA_OUT, &image, &image_len);
	if (r < 0)
		return r;
	if (image_len == 0)
		return -ENOEXEC;
	errno = 0;
	elf = elf_memory((char *)image, image_len);
	if (!elf)
		return elf_error();
	m->elf = elf;
	r = collect(elf, m, &scratch);
	m->elf = NULL;
	return r < 0 ? r : (int)m->b.n_syms;
}

/*
 * MiniDebugInfo: the local functions .dynsym lacks, as the .symtab of an
 * xz-compressed ELF image in .gnu_debugdata. Returns how many, or a
 * negative errno.
 */
static int read_minidebuginfo(struct loader *l)
{
	_cleanup_(loader_done) struct loader m = { .debug_file = true };
	Elf_Data *d;
	GElf_Shdr sh;
	int r;

	if (!gelf_getshdr(l->debugdata, &sh) || sh.sh_size == 0 || sh.sh_size > MAX_DEBUGDATA_IN)
		return -EINVAL;
	errno = 0;
	d = elf_getdata(l->debugdata, NULL);
	if (!d || !d->d_buf)
		return elf_error();
	r = collect_xz(d->d_buf, d->d_size, &m);
	if (r <= 0)
		return r;
	r = fg_symtab_builder_merge(&l->b, &m.b);
	return r < 0 ? r : (int)m.b.n_syms;
}

/* ---- PLT entries (fgd-plt.h) ---- */

/* Hands the PLT sections' bytes to p. */
static int plt_sections(struct loader *l, struct fg_plt *p)
{
	for (size_t k = 0; k < FG_PLT_N_SECTIONS; k++) {
		GElf_Shdr sh;
		Elf_Data *d;
		int r;

		if (!l->plt[k] || !gelf_getshdr(l->plt[k], &sh) || sh.sh_type == SHT_NOBITS ||
		    add_overflows(sh.sh_addr, sh.sh_size))
			continue;
		d = elf_getdata(l->plt[k], NULL);
		if (!d || !d->d_buf || d->d_off != 0) {
			(void)elf_errno();
			continue;
		}
		r = fg_plt_add_section(p, (enum fg_plt_section)k, d->d_buf,
				       MIN((uint64_t)d->d_size, sh.sh_size), sh.sh_addr,
				       sh.sh_entsize, sh.sh_addralign);
		if (r < 0)
			return r;
	}
	fg_plt_sort(p);
	return 0;
}

/* The symbol data a relocation section's sh_link names: .dynsym (.symtab when static), or NULL. */
static Elf_Data *reloc_symbols(struct loader *l, const GElf_Shdr *rel, GElf_Shdr *ret_sh)
{
	Elf_Scn *scn;

	if (rel->sh_link == 0 || rel->sh_link >= l->n_sections)
		return NULL;
	scn = elf_getscn(l->elf, rel->sh_link);
	if (!scn || !gelf_getshdr(scn, ret_sh) ||
	    (ret_sh->sh_type != SHT_DYNSYM && ret_sh->sh_type != SHT_SYMTAB))
		return NULL;
	return elf_getdata(scn, NULL);
}

/* Relocation i of d, an SHT_RELA section's data; false if it cannot be read. */
static bool rela_at(Elf *elf, Elf_Data *d, size_t i, GElf_Rela *ret)
{
	Elf64_Rela r;

	/*
	 * Read in place when libelf has it as the native structs (.rela.dyn of
	 * a big C++ library holds hundreds of thousands), bounds checked here.
	 */
	if (gelf_getclass(elf) == ELFCLASS64 && d->d_type == ELF_T_RELA) {
		if (i >= d->d_size / sizeof(r))
			return false;
		memcpy(&r, (const uint8_t *)d->d_buf + i * sizeof(r), sizeof(r));
		*ret = (GElf_Rela){ .r_offset = r.r_offset,
				    .r_info = r.r_info,
				    .r_addend = r.r_addend };
		return true;
	}
	if (i > INT32_MAX || !gelf_getrela(d, (int)i, ret))
		return (void)elf_errno(), false;
	return true;
}

/*
 * Names the entries whose GOT slots the relocations of scn apply to: the
 * symbol of a JUMP_SLOT or GLOB_DAT relocation, the IFUNC an IRELATIVE one
 * calls. An entry keeps the first name found.
 */
static int name_from_relocs(struct loader *l, Elf_Scn *scn, const GElf_Shdr *sh, struct fg_plt *p)
{
	size_t relsize = gelf_fsize(l->elf, ELF_T_RELA, 1, EV_CURRENT), nrel;
	GElf_Shdr symsh = {};
	Elf_Data *d, *symd;
	int r;

	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || relsize == 0) {
		(void)elf_errno();
		return 0;
	}
	symd = reloc_symbols(l, sh, &symsh);
	nrel = d->d_size / relsize;
	for (size_t i = 0; i < nrel && fg_plt_unnamed(p) > 0; i++) {
		const char *name = NULL;
		uint64_t type, symidx;
		GElf_Rela rela;
		int64_t idx;

		if (!rela_at(l->elf, d, i, &rela))
			continue;
		type = GELF_R_TYPE(rela.r_info);
		symidx = GELF_R_SYM(rela.r_info);
		idx = fg_plt_find_slot(p, type, rela.r_offset);
		if (idx < 0)
			continue;
		if (symidx != 0 && symd && symidx <= INT32_MAX) {
			GElf_Sym sym;

			/* gelf_getsym checks the index, elf_strptr the name's offset and end. */
			if (gelf_getsym(symd, (int)symidx, &sym) && sym.st_name != 0)
				name = elf_strptr(l->elf, symsh.sh_link, sym.st_name);
			if (!name)
				(void)elf_errno();
		} else if (symidx == 0 && type == R_X86_64_IRELATIVE) {
			name = fg_plt_ifunc(p, (uint64_t)rela.r_addend);
		}
		r = fg_plt_name(p, (size_t)idx, name);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Names the entries (sorted by slot) from the dynamic relocations of their
 * GOT slots. Those of the sections that apply to one section (sh_info:
 * .rela.plt, for .got.plt) first, which name the entries of .plt and
 * .plt.sec; the rest (.rela.dyn) only if an entry is still unnamed (as one
 * of .plt.got is): a big library's .rela.dyn is megabytes of relocations of
 * its data.
 */
static int plt_name_entries(struct loader *l, struct fg_plt *p)
{
	int r;

	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;

		while (fg_plt_unnamed(p) > 0 && (scn = elf_nextscn(l->elf, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
			    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_info != 0) != (pass == 0))
				continue;
			r = name_from_relocs(l, scn, &sh, p);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/*
 * Synthesizes the symbols of an x86-64 object's PLT entries (fgd-plt.h).
 * Returns how many, or a negative errno, and then adds none.
 */
static int read_plt(struct loader *l, const GElf_Ehdr *eh)
{
	_cleanup_(fg_plt_done) struct fg_plt p = {};
	GElf_Shdr sh;
	int r;

	if (eh->e_machine != EM_X86_64)
		return 0;
	fg_plt_init(&p, &l->b, gelf_getclass(l->elf) == ELFCLASS32);
	r = plt_sections(l, &p);
	if (r >= 0 && fg_plt_unnamed(&p) > 0)
		r = plt_name_entries(l, &p);
	if (r >= 0 && l->plt[FG_PLT] && gelf_getshdr(l->plt[FG_PLT], &sh) &&
	    sh.sh_type != SHT_NOBITS && sh.sh_size > 0 && !add_overflows(sh.sh_addr, sh.sh_size))
		r = fg_plt_add_head(&p, sh.sh_addr, sh.sh_size);
	return fg_plt_finish(&p, r);
}

/* Everything of one object but the final table: segments, sections, symbols into l. */
static int collect(Elf *elf, struct loader *l, struct fg_elf_syms *s)
{
	Elf_Scn *symtab, *dynsym;
	GElf_Ehdr eh;
	int r;

	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	errno = 0;
	if (!gelf_getehdr(elf, &eh))
		return elf_error();
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return -ENOEXEC;

	/*
	 * A debug file's program headers describe the object it came from, not
	 * its own bytes: its build-id is read from its note sections instead.
	 */
	if (!l->debug_file) {
		s->entry = eh.e_entry;
		r = read_segments(elf, &eh, s);
		if (r < 0)
			return r;
	}
	r = read_sections(l, &eh, s, &symtab, &dynsym);
	if (r < 0)
		return r;
	/* The unwinder wants only where the segments are, not the names. */
	if (l->layout_only)
		symtab = dynsym = NULL;
	r = 0;
	if (symtab) {
		r = read_symbols(l, symtab);
		if (r < 0)
			return r;
	}
	if (r > 0)
		s->source = FG_ELF_SYMTAB;
	/* Stripped objects keep only .dynsym; a .symtab with no function counts as stripped. */
	if (r == 0 && dynsym) {
		r = read_symbols(l, dynsym);
		if (r < 0)
			return r;
		if (r > 0)
			s->source = FG_ELF_DYNSYM;
	}
	/* A damaged .gnu_debugdata costs only the names it would have added. */
	if (s->source != FG_ELF_SYMTAB && l->debugdata && !l->debug_file && !l->layout_only &&
	    read_minidebuginfo(l) > 0)
		s->source = FG_ELF_MINIDEBUGINFO;
	/* A damaged PLT, too, costs only its own names. A debug file has none (SHT_NOBITS). */
	if (!l->debug_file && !l->layout_only) {
		(void)read_plt(l, &eh);
		/* What was read of a mapped file goes back to the page cache before the table is built. */
		if (l->file)
			fg_elf_file_drop_pages(l->file);
	}
	return 0;
}

/*
 * The functions .eh_frame lists (through .eh_frame_hdr's table) that no
 * symbol of s names, into s->unnamed. An FDE the reader cannot read, or
 * that overlaps the one before, is left out: its code keeps plain
 * addresses. Best effort: without the sections, or memory, there are none
 * (or fewer).
 */
static void read_unnamed(Elf *elf, struct fg_elf_syms *s)
{
	uint64_t hdr_addr = 0, frame_addr = 0, start, end, prev_end = 0;
	size_t hdr_size = 0, frame_size = 0, cap = 0;
	const void *hdr = fg_elf_section(elf, ".eh_frame_hdr", &hdr_size, &hdr_addr),
		   *frame = fg_elf_section(elf, ".eh_frame", &frame_size, &frame_addr);
	struct fg_ehframe ef;

	if (!hdr || !frame ||
	    fg_ehframe_init(&ef, hdr, hdr_size, hdr_addr, frame, frame_size, frame_addr) < 0)
		return;
	for (size_t i = 0; i < ef.fde_count && s->tab.n_unnamed < FG_ELF_MAX_SYMS; i++) {
		if (fg_ehframe_fde_range(&ef, i, &start, &end) < 0 || end <= start ||
		    start < prev_end)
			continue;
		prev_end = end;
		if (fg_symtab_add_unnamed(&s->tab, start, end, &cap) < 0)
			break;
	}
	fg_symtab_shrink_unnamed(&s->tab);
}

/* keep_plt (borrowed, may be NULL): the object whose PLT symbols a debug file's table takes. */
static int load(Elf *elf, const struct fg_elf_file *file, bool debug_file, bool layout_only,
		const struct fg_elf_syms *keep_plt, struct fg_elf_syms **ret)
{
	_cleanup_(fg_elf_syms__freep) struct fg_elf_syms *s = NULL;
	_cleanup_(loader_done) struct loader l = {
		.elf = elf,
		.file = file && file->map ? file : NULL,
		.debug_file = debug_file,
		.layout_only = layout_only,
	};
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	r = collect(elf, &l, s);
	if (r < 0)
		return r;
	if (keep_plt) {
		r = fg_symtab_builder_keep_plt(&l.b, &keep_plt->tab);
		if (r < 0)
			return r;
	}
	r = fg_symtab_build(&l.b, &s->tab);
	if (r < 0)
		return r;
	/*
	 * Only for an object without its full symbol table: .symtab (in the
	 * object, or MiniDebugInfo's) names every function .eh_frame lists, and
	 * a big program's .eh_frame is megabytes to read for none. A debug
	 * file's is empty (SHT_NOBITS); the object's own has the functions.
	 */
	if (!debug_file && !layout_only &&
	    (s->source == FG_ELF_DYNSYM || s->source == FG_ELF_NONE)) {
		read_unnamed(elf, s);
		if (l.file)
			fg_elf_file_drop_pages(l.file);
	}
	*ret = TAKE_PTR(s);
	return 0;
}

int fg_elf_trust_add(struct fg_elf_trust *t, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return negative_errno();
	for (size_t i = 0; i < t->n; i++)
		if (t->dev[i] == (uint64_t)st.st_dev)
			return 0;
	if (t->n == FG_ELF_MAX_TRUSTED_FS)
		return -E2BIG;
	t->dev[t->n++] = (uint64_t)st.st_dev;
	return 0;
}

bool fg_elf_may_map(const struct fg_elf_trust *t, const struct stat *st)
{
	if (!t || !S_ISREG(st->st_mode) || st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH)))
		return false;
	for (size_t i = 0; i < t->n; i++)
		if (t->dev[i] == (uint64_t)st->st_dev)
			return true;
	return false;
}

int fg_elf_may_map_fd(const struct fg_elf_trust *t, int fd, struct stat *ret_st)
{
	if (fstat(fd, ret_st) < 0)
		return negative_errno();
	return fg_elf_may_map(t, ret_st);
}

/*
 * The pages of the section header table in an image of size bytes, from
 * its ELF header: false when the image is too short or the table lies
 * outside it (libelf refuses such a file anyway).
 */
static bool shdr_pages(const uint8_t *image, size_t size, uint64_t *ret_lo, uint64_t *ret_hi)
{
	uint64_t off, n, ent, page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (size < EI_NIDENT || memcmp(image, ELFMAG, SELFMAG) != 0)
		return false;
	if (image[EI_CLASS] == ELFCLASS64 && size >= sizeof(Elf64_Ehdr)) {
		Elf64_Ehdr eh;

		memcpy(&eh, image, sizeof(eh));
		off = eh.e_shoff, n = eh.e_shnum, ent = eh.e_shentsize;
	} else if (image[EI_CLASS] == ELFCLASS32 && size >= sizeof(Elf32_Ehdr)) {
		Elf32_Ehdr eh;

		memcpy(&eh, image, sizeof(eh));
		off = eh.e_shoff, n = eh.e_shnum, ent = eh.e_shentsize;
	} else {
		return false;
	}
	/* Byte order does not matter for a bound: a foreign one just gives a wide range. */
	if (off == 0 || off >= size)
		return false;
	/* More than 0xff00 sections: the count is in the first header, which is within the page. */
	if (n == 0 || ent == 0 || n * ent > size - off)
		n = (size - off) / MAX(ent, (uint64_t)1);
	*ret_lo = off / page * page;
	*ret_hi = MIN(ALIGN_TO(off + n * ent, page), ALIGN_TO((uint64_t)size, page));
	return true;
}

void fg_elf_file_close(struct fg_elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->map)
		munmap(f->map, f->map_size);
	*f = (struct fg_elf_file){};
}

/*
 * A private mapping of the whole file: read-only, but for the section
 * header table's pages, which libelf writes when a section is inflated or
 * skipped (they become our own copy, and are never dropped).
 */
static int open_mapped(int fd, size_t size, struct fg_elf_file *f)
{
	uint64_t lo, hi;

	f->map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		return negative_errno();
	}
	f->map_size = size;
	if (!shdr_pages(f->map, size, &lo, &hi))
		return -ENOEXEC;
	if (mprotect(f->map + lo, hi - lo, PROT_READ | PROT_WRITE) < 0)
		return negative_errno();
	f->shdr_lo = lo;
	f->shdr_hi = hi;
	errno = 0;
	f->elf = elf_memory((char *)f->map, size);
	if (!f->elf)
		return elf_error();
	return 0;
}

int fg_elf_file_open(int fd, bool map, struct fg_elf_file *ret)
{
	struct fg_elf_file f = {};
	struct stat st;
	int r;

	if (!fg_elf_ready())
		return -ENOSYS;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	/* A FIFO or device would block or never end; only regular files are objects. */
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size < EI_NIDENT)
		return -ENOEXEC;
	if (map && (uint64_t)st.st_size <= SIZE_MAX) {
		r = open_mapped(fd, (size_t)st.st_size, &f);
		if (r < 0) {
			fg_elf_file_close(&f);
			return r;
		}
	} else {
		errno = 0;
		f.elf = elf_begin(fd, ELF_C_READ, NULL);
		if (!f.elf)
			return elf_error();
	}
	if (elf_kind(f.elf) != ELF_K_ELF) {
		fg_elf_file_close(&f);
		return -ENOEXEC;
	}
	*ret = f;
	return 0;
}

void fg_elf_file_forget_fd(struct fg_elf_file *f)
{
	if (f->elf && !f->map)
		(void)elf_cntl(f->elf, ELF_C_FDDONE);
}

bool fg_elf_file_mapped(const struct fg_elf_file *f, const void *p)
{
	return f->map && (const uint8_t *)p >= f->map && (const uint8_t *)p < f->map + f->map_size;
}

/* The data of elf's section called name, as fg_elf_section() finds it. */
static Elf_Data *section_data(Elf *elf, const char *name, uint64_t *ret_addr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *s;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (s = elf_strptr(elf, shstrndx, sh.sh_name)) && strcmp(s, name) == 0) {
			if (ret_addr)
				*ret_addr = sh.sh_addr;
			return elf_getdata(scn, NULL);
		}
	}
	return NULL;
}

const void *fg_elf_section(Elf *elf, const char *name, size_t *ret_size, uint64_t *ret_addr)
{
	Elf_Data *d = section_data(elf, name, ret_addr);

	if (!d || !d->d_buf)
		return NULL;
	*ret_size = d->d_size;
	return d->d_buf;
}

int fg_elf_file_keep_sections(struct fg_elf_file *f, bool (*keep)(const char *name))
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int n = 0;

	if (elf_getshdrstrndx(f->elf, &shstrndx) < 0)
		return (void)elf_errno(), -EINVAL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (!name || keep(name))
			continue;
		sh.sh_type = SHT_NOBITS;
		if (!gelf_update_shdr(scn, &sh))
			return (void)elf_errno(), -EINVAL;
		n++;
	}
	(void)elf_errno();
	return n;
}

void fg_elf_file_drop_pages(const struct fg_elf_file *f)
{
	if (!f->map)
		return;
	if (f->shdr_lo > 0)
		(void)madvise(f->map, f->shdr_lo, MADV_DONTNEED);
	if (f->shdr_hi < f->map_size)
		(void)madvise(f->map + f->shdr_hi, f->map_size - f->shdr_hi, MADV_DONTNEED);
}

/* Program headers and note segments read for a build-id alone; real ones are far smaller. */
#define MAX_ID_PHDRS 256
#define MAX_ID_NOTE_BYTES (64U << 10)

int fg_elf_read_build_id(int fd, uint8_t *buf, size_t size)
{
	Elf *elf;
	size_t n_phdrs;
	int r = 0;

	if (!fg_elf_ready())
		return -ENOSYS;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n_phdrs) < 0 ||
	    n_phdrs > MAX_ID_PHDRS) {
		elf_end(elf);
		return -ENOEXEC;
	}
	for (size_t i = 0; i < n_phdrs && r == 0; i++) {
		GElf_Phdr ph;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_filesz > MAX_ID_NOTE_BYTES)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0 &&
			    nh.n_descsz > 0 && nh.n_descsz <= size) {
				memcpy(buf, (const char *)data->d_buf + desc_off, nh.n_descsz);
				r = (int)nh.n_descsz;
				break;
			}
		}
	}
	elf_end(elf);
	return r;
}

static int begin_fd(int fd, Elf **ret)
{
	struct stat st;
	Elf *elf;

	if (!fg_elf_ready())
		return -ENOSYS;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* A FIFO or device would block or never end; only regular files are objects. */
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	/* ELF_C_READ reads with pread: a file truncated under a mapping would raise SIGBUS. */
	errno = 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return elf_error();
	*ret = elf;
	return 0;
}

int fg_elf_syms__load_fd(int fd, struct fg_elf_syms **ret)
{
	_cleanup_(elf_endp) Elf *elf = NULL;
	int r = begin_fd(fd, &elf);

	if (r < 0)
		return r;
	return load(elf, NULL, false, false, NULL, ret);
}

int fg_elf_syms__load_file(int fd, bool map, struct fg_elf_syms **ret)
{
	_cleanup_(fg_elf_file_close) struct fg_elf_file f = {};
	int r;

	if (!map)
		return fg_elf_syms__load_fd(fd, ret);
	r = fg_elf_file_open(fd, true, &f);
	if (r < 0)
		return r;
	return load(f.elf, &f, false, false, NULL, ret);
}

int fg_elf_syms__load_layout(Elf *elf, struct fg_elf_syms **ret)
{
	if (!fg_elf_ready())
		return -ENOSYS;
	return load(elf, NULL, false, true, NULL, ret);
}

int fg_elf_syms__load_mem(const void *image, size_t size, struct fg_elf_syms **ret)
{
	/* Declared before elf so it is freed after elf_end(). */
	_cleanup_free_ void *copy = NULL;
	_cleanup_(elf_endp) Elf *elf = NULL;

	if (!fg_elf_ready())
		return -ENOSYS;
	if (size == 0)
		return -ENOEXEC;
	/* libelf may convert data in place, and must not see the caller's memory change. */
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, size);
	errno = 0;
	elf = elf_memory(copy, size);
	if (!elf)
		return elf_error();
	return load(elf, NULL, false, false, NULL, ret);
}

int fg_elf_syms__load_debugdata_mem(const void *xz, size_t size, struct fg_elf_syms **ret)
{
	_cleanup_(fg_elf_syms__freep) struct fg_elf_syms *s = NULL;
	_cleanup_(loader_done) struct loader m = { .debug_file = true };
	int r;

	if (!fg_elf_ready())
		return -ENOSYS;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	r = collect_xz(xz, size, &m);
	if (r < 0)
		return r;
	r = fg_symtab_build(&m.b, &s->tab);
	if (r < 0)
		return r;
	s->source = m.b.n_syms > 0 ? FG_ELF_SYMTAB : FG_ELF_NONE;
	*ret = TAKE_PTR(s);
	return 0;
}

int fg_elf_syms__adopt_debug_fd(struct fg_elf_syms *s, int fd, bool need_build_id)
{
	_cleanup_(elf_endp) Elf *elf = NULL;
	_cleanup_(fg_elf_syms__freep) struct fg_elf_syms *d = NULL;
	int r = begin_fd(fd, &elf);

	if (r < 0)
		return r;
	r = load(elf, NULL, true, false, s, &d);
	if (r < 0)
		return r;
	/* Never a wrong name: two build-ids that differ mean two different builds. */
	if ((need_build_id || (s->build_id_len && d->build_id_len)) &&
	    (s->build_id_len == 0 || d->build_id_len != s->build_id_len ||
	     memcmp(d->build_id, s->build_id, s->build_id_len) != 0))
		return -ESTALE;
	if (d->source != FG_ELF_SYMTAB)
		return -ENOENT;
	fg_symtab_swap_named(&s->tab, &d->tab);
	s->source = FG_ELF_DEBUG_FILE;
	fg_symtab_keep_unnamed(&s->tab);
	return (int)MIN(s->tab.n, (size_t)INT32_MAX);
}

size_t fg_elf_syms__build_id(const struct fg_elf_syms *s, const uint8_t **ret)
{
	if (s->build_id_len == 0)
		return 0;
	*ret = s->build_id;
	return s->build_id_len;
}

uint64_t fg_elf_syms__entry(const struct fg_elf_syms *s)
{
	return s->entry;
}

int fg_elf_syms__offset_to_vaddr(const struct fg_elf_syms *s, uint64_t offset, uint64_t *ret_vaddr)
{
	const struct load *best = NULL;

	for (size_t i = 0; i < s->n_loads; i++) {
		const struct load *l = &s->loads[i];

		if (offset < l->offset || offset - l->offset >= l->filesz)
			continue;
		/* Old layouts let the text and data segments share a file page; code wins. */
		if (!best || (l->exec && !best->exec))
			best = l;
	}
	if (!best)
		return -ENOENT;
	*ret_vaddr = offset - best->offset + best->vaddr;
	return 0;
}

int64_t fg_elf_syms__lookup(const struct fg_elf_syms *s, uint64_t vaddr)
{
	return fg_symtab_lookup(&s->tab, vaddr);
}

const char *fg_elf_syms__name(const struct fg_elf_syms *s, size_t idx)
{
	return fg_symtab_name(&s->tab, idx);
}

bool fg_elf_syms__is_plt(const struct fg_elf_syms *s, size_t idx)
{
	return fg_symtab_is_plt(&s->tab, idx);
}

uint64_t fg_elf_syms__addr(const struct fg_elf_syms *s, size_t idx)
{
	return fg_symtab_addr(&s->tab, idx);
}

uint64_t fg_elf_syms__size(const struct fg_elf_syms *s, size_t idx)
{
	return fg_symtab_size(&s->tab, idx);
}

uint64_t fg_elf_syms__bytes(const struct fg_elf_syms *s)
{
	return sizeof(*s) + s->n_loads * sizeof(*s->loads) + fg_symtab_bytes(&s->tab);
}

int64_t fg_elf_syms__unnamed_function(const struct fg_elf_syms *s, uint64_t vaddr,
				      uint64_t *ret_start)
{
	return fg_symtab_unnamed_function(&s->tab, vaddr, ret_start);
}

size_t fg_elf_syms__unnamed_count(const struct fg_elf_syms *s)
{
	return s->tab.n_unnamed;
}

size_t fg_elf_syms__count(const struct fg_elf_syms *s)
{
	return s->tab.n;
}

int64_t fg_elf_syms__find(const struct fg_elf_syms *s, const char *name)
{
	return fg_symtab_find(&s->tab, name);
}

const char *fg_elf_syms__debuglink(const struct fg_elf_syms *s, uint32_t *ret_crc)
{
	if (!s->debuglink[0])
		return NULL;
	*ret_crc = s->debuglink_crc;
	return s->debuglink;
}

bool fg_elf_syms__has_dwarf(const struct fg_elf_syms *s)
{
	return s->has_dwarf;
}

enum fg_elf_source fg_elf_syms__source(const struct fg_elf_syms *s)
{
	return s->source;
}
