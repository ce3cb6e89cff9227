/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fgd-elf.h"
#include "macro.h"

/* GNU build-ids are 20 bytes (sha1) or 16 (md5); anything past this is not one. */
#define MAX_BUILD_ID 64
/* Real objects have a handful of segments; the cap bounds what a crafted header costs. */
#define MAX_LOADS 256
/* A note segment holding a build-id is tiny; do not read megabytes looking for one. */
#define MAX_NOTE_SIZE (1u << 20)
#define MAX_SECTIONS (1u << 20)

struct load {
	uint64_t offset, filesz, vaddr;
	bool exec;
};

struct fg_elf_syms {
	uint64_t *start; /* owned; sorted, distinct */
	uint64_t *end;   /* owned; parallel to start, exclusive */
	uint32_t *name;  /* owned; parallel to start, offsets into names */
	size_t n;
	uint32_t *alias_name; /* owned; names dropped as aliases, for find() */
	uint32_t *alias_sym;  /* owned; the entry each one aliases */
	size_t n_aliases;
	char *names; /* owned arena of NUL-terminated names */
	struct load *loads; /* owned */
	size_t n_loads;
	uint8_t build_id[MAX_BUILD_ID];
	size_t build_id_len;
};

/* What the symbol pass needs of each section. */
struct section {
	uint64_t addr, end;
	bool text;
};

/* A function symbol while loading. */
struct pending {
	uint64_t addr, end;
	uint32_t name; /* offset into the loader's arena */
	uint32_t name_len;
	bool sized;
	uint8_t bind_rank; /* global 0, weak 1, local 2: lower wins among aliases */
	uint8_t underscores;
};

struct loader {
	Elf *elf; /* borrowed */
	struct section *sections; /* owned */
	size_t n_sections;
	struct pending *syms; /* owned */
	size_t n_syms, cap_syms;
	char *arena; /* owned */
	size_t arena_len, arena_cap;
};

static void loader_done(struct loader *l)
{
	free(l->sections);
	free(l->syms);
	free(l->arena);
}

struct fg_elf_syms *fg_elf_syms__free(struct fg_elf_syms *s)
{
	if (!s)
		return NULL;
	free(s->start);
	free(s->end);
	free(s->name);
	free(s->alias_name);
	free(s->alias_sym);
	free(s->names);
	free(s->loads);
	free(s);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_elf_syms *, fg_elf_syms__free);

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
 * Section table, the symbol tables, and (if the segments had none) the
 * build-id from SHT_NOTE sections.
 */
static int read_sections(struct loader *l, const GElf_Ehdr *eh, struct fg_elf_syms *s,
			 Elf_Scn **ret_symtab, Elf_Scn **ret_dynsym)
{
	Elf_Scn *symtab = NULL, *dynsym = NULL, *scn = NULL;
	size_t shnum;

	errno = 0;
	if (elf_getshdrnum(l->elf, &shnum) < 0)
		return elf_error();
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
		if ((sh.sh_flags & SHF_EXECINSTR) && (sh.sh_flags & SHF_ALLOC) &&
		    sh.sh_type != SHT_NOBITS && !add_overflows(sh.sh_addr, sh.sh_size))
			l->sections[idx] = (struct section){
				.addr = sh.sh_addr,
				.end = sh.sh_addr + sh.sh_size,
				.text = true,
			};
		if (sh.sh_type == SHT_SYMTAB && !symtab)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = scn;
		else if (sh.sh_type == SHT_NOTE && s->build_id_len == 0 && sh.sh_size <= MAX_NOTE_SIZE) {
			Elf_Data *d = elf_getdata(scn, NULL);

			if (d)
				(void)build_id_from_notes(d, s);
			else
				(void)elf_errno();
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

static uint8_t bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

/* Collects the function symbols of one table. Returns how many, or a negative errno. */
static int read_symbols(struct loader *l, Elf_Scn *scn)
{
	Elf_Data *data, *shndx;
	GElf_Shdr sh;
	size_t nsyms, symsize, before = l->n_syms;
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
		struct pending *p;
		size_t len, secidx;
		uint8_t us = 0;

		/* Fails for an entry past a short SHT_SYMTAB_SHNDX: skip that one symbol. */
		if (!gelf_getsymshndx(data, shndx, (int)i, &sym, &xndx)) {
			(void)elf_errno();
			continue;
		}
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		if (sym.st_name == 0 || sym.st_shndx == SHN_UNDEF)
			continue;
		if (sym.st_shndx == SHN_XINDEX)
			secidx = shndx ? xndx : 0;
		else if (sym.st_shndx >= SHN_LORESERVE)
			continue; /* absolute or common: not code in this object */
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
		len = strlen(name);
		if (len == 0)
			continue;

		if (l->n_syms >= FG_ELF_MAX_SYMS)
			return -E2BIG;
		if (l->arena_len + len + 1 > UINT32_MAX)
			return -E2BIG;
		r = FG_GROW(l->arena, l->arena_cap, l->arena_len + len + 1);
		if (r < 0)
			return r;
		r = FG_GROW(l->syms, l->cap_syms, l->n_syms + 1);
		if (r < 0)
			return r;
		memcpy(l->arena + l->arena_len, name, len + 1);
		while (us < len && us < UINT8_MAX && name[us] == '_')
			us++;

		p = &l->syms[l->n_syms++];
		*p = (struct pending){
			.addr = sym.st_value,
			.name = (uint32_t)l->arena_len,
			.name_len = (uint32_t)len,
			.sized = sym.st_size > 0,
			.bind_rank = bind_rank(GELF_ST_BIND(sym.st_info)),
			.underscores = us,
		};
		/* Both bounded by the section end, which is above addr, so no overflow. */
		p->end = sym.st_size > 0 && sym.st_size < sec->end - sym.st_value ?
				 sym.st_value + sym.st_size :
				 sec->end;
		l->arena_len += len + 1;
	}
	return (int)(l->n_syms - before);
}

/* Total order: address, then the alias preference documented in fgd-elf.h. */
static int pending_cmp(const void *a, const void *b, void *ctx)
{
	const struct pending *x = a, *y = b;
	const char *arena = ctx;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->sized != y->sized)
		return x->sized ? -1 : 1;
	if (x->bind_rank != y->bind_rank)
		return x->bind_rank < y->bind_rank ? -1 : 1;
	if (x->underscores != y->underscores)
		return x->underscores < y->underscores ? -1 : 1;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	c = memcmp(arena + x->name, arena + y->name, x->name_len);
	if (c != 0)
		return c;
	/* The same name twice: the smaller extent, so the choice never depends on table order. */
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Sorts, collapses aliases and fixes the extents of zero-size symbols into s. */
static int build(struct loader *l, struct fg_elf_syms *s)
{
	size_t n = 0, n_aliases = 0, off = 0;

	if (l->n_syms == 0)
		return 0;
	qsort_r(l->syms, l->n_syms, sizeof(*l->syms), pending_cmp, l->arena);
	for (size_t i = 1; i < l->n_syms; i++)
		n_aliases += l->syms[i].addr == l->syms[i - 1].addr;
	n = l->n_syms - n_aliases;

	s->start = malloc(n * sizeof(*s->start));
	s->end = malloc(n * sizeof(*s->end));
	s->name = malloc(n * sizeof(*s->name));
	/* Every name is kept, aliases included, so the arena is copied as is. */
	s->names = malloc(l->arena_len);
	if (n_aliases > 0) {
		s->alias_name = malloc(n_aliases * sizeof(*s->alias_name));
		s->alias_sym = malloc(n_aliases * sizeof(*s->alias_sym));
		if (!s->alias_name || !s->alias_sym)
			return -ENOMEM;
	}
	if (!s->start || !s->end || !s->name || !s->names)
		return -ENOMEM;
	memcpy(s->names, l->arena, l->arena_len);

	n = 0;
	for (size_t i = 0; i < l->n_syms; i++) {
		const struct pending *p = &l->syms[i];

		if (n > 0 && s->start[n - 1] == p->addr) {
			s->alias_name[off] = p->name;
			s->alias_sym[off++] = (uint32_t)(n - 1);
			continue;
		}
		s->start[n] = p->addr;
		s->end[n] = p->end;
		s->name[n] = p->name;
		n++;
	}
	/* A zero-size symbol ends at the next one; its end is already its section's end. */
	for (size_t i = 0, j = 0; i < l->n_syms; i++) {
		const struct pending *p = &l->syms[i];

		if (i > 0 && l->syms[i - 1].addr == p->addr)
			continue;
		if (!p->sized && j + 1 < n)
			s->end[j] = MIN(s->end[j], s->start[j + 1]);
		j++;
	}
	s->n = n;
	s->n_aliases = n_aliases;
	return 0;
}

static int load(Elf *elf, bool layout_only, struct fg_elf_syms **ret)
{
	_cleanup_(fg_elf_syms__freep) struct fg_elf_syms *s = NULL;
	_cleanup_(loader_done) struct loader l = { .elf = elf };
	Elf_Scn *symtab, *dynsym;
	GElf_Ehdr eh;
	int r = 0;

	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	errno = 0;
	if (!gelf_getehdr(elf, &eh))
		return elf_error();
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return -ENOEXEC;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	r = read_segments(elf, &eh, s);
	if (r < 0)
		return r;
	r = read_sections(&l, &eh, s, &symtab, &dynsym);
	if (r < 0)
		return r;
	if (layout_only)
		symtab = dynsym = NULL;
	r = 0;
	if (symtab) {
		r = read_symbols(&l, symtab);
		if (r < 0)
			return r;
	}
	/* Stripped objects keep only .dynsym; a .symtab with no function counts as stripped. */
	if (r == 0 && dynsym) {
		r = read_symbols(&l, dynsym);
		if (r < 0)
			return r;
	}
	r = build(&l, s);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}

int fg_elf_syms__load_fd(int fd, struct fg_elf_syms **ret)
{
	_cleanup_(elf_endp) Elf *elf = NULL;
	struct stat st;

	pthread_once(&elf_once, elf_init);
	if (!elf_ok)
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
	return load(elf, false, ret);
}

int fg_elf_syms__load_layout(Elf *elf, struct fg_elf_syms **ret)
{
	pthread_once(&elf_once, elf_init);
	if (!elf_ok)
		return -ENOSYS;
	return load(elf, true, ret);
}

int fg_elf_syms__load_mem(const void *image, size_t size, struct fg_elf_syms **ret)
{
	/* Declared before elf so it is freed after elf_end(). */
	_cleanup_free_ void *copy = NULL;
	_cleanup_(elf_endp) Elf *elf = NULL;

	pthread_once(&elf_once, elf_init);
	if (!elf_ok)
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
	return load(elf, false, ret);
}

size_t fg_elf_syms__build_id(const struct fg_elf_syms *s, const uint8_t **ret)
{
	if (s->build_id_len == 0)
		return 0;
	*ret = s->build_id;
	return s->build_id_len;
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
	const uint64_t *base = s->start;
	size_t n = s->n, i;

	if (n == 0 || vaddr < base[0])
		return -1;
	/* Branch-free lower bound, as in kallsyms.c. */
	while (n > 1) {
		size_t half = n / 2;

		base = base[half] <= vaddr ? base + half : base;
		n -= half;
	}
	i = (size_t)(base - s->start);
	return vaddr < s->end[i] ? (int64_t)i : -1;
}

const char *fg_elf_syms__name(const struct fg_elf_syms *s, size_t idx)
{
	return s->names + s->name[idx];
}

uint64_t fg_elf_syms__addr(const struct fg_elf_syms *s, size_t idx)
{
	return s->start[idx];
}

uint64_t fg_elf_syms__size(const struct fg_elf_syms *s, size_t idx)
{
	return s->end[idx] - s->start[idx];
}

size_t fg_elf_syms__count(const struct fg_elf_syms *s)
{
	return s->n;
}

int64_t fg_elf_syms__find(const struct fg_elf_syms *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->names + s->name[i], name) == 0)
			return (int64_t)i;
	for (size_t i = 0; i < s->n_aliases; i++)
		if (strcmp(s->names + s->alias_name[i], name) == 0)
			return s->alias_sym[i];
	return -1;
}
