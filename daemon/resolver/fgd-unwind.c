/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "base/budget.h"
#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "base/procfs.h"
#include "fgd-clock.h"
#include "fgd-loader.h"
#include "resolver/fgd-cfi.h"
#include "resolver/fgd-unwind.h"
#include "symbols/fgd-dsosource.h"
#include "symbols/fgd-elffile.h"
#include "symbols/fgd-vdso.h"
#include "unwind/ehframe.h"

/* How far past an entry point without CFI a pc still counts as the program's first frame. */
#define ENTRY_WINDOW 64
/* A binary whose CFI could not be read for a reason that may pass is retried this often. */
#define RETRY_NS (10ULL * 1000000000ULL)
/* A process whose first binary needs its CFI read gets this many more loads started at once. */
#define PREFETCH_MAPS 64

/*
 * libdw keeps every FDE it parses, about 82 bytes each on this machine
 * (measured over every function of node, libc, libjvm and cc1plus), with
 * malloc's overhead. A section without a search table is parsed whole
 * when read; its FDEs average 36 bytes of the section, so they cost about
 * three times its size.
 */
#define LIBDW_PER_FDE 96
#define LIBDW_INDEXED_FACTOR 3

/*
 * What reading one binary's CFI gave: built on the loader's thread, and
 * freed there too (fg_loader__dispose()).
 */
struct cfi {
	struct fg_elf_file file; /* owned: the binary, mapped or read (fgd-elffile.h) */
	void *image;             /* owned: the copy file.elf reads, for the vDSO */
	Dwarf_CFI *eh;           /* owned: .eh_frame, what the program itself unwinds with */
	/*
	 * .eh_frame again, read without libdw through .eh_frame_hdr: it borrows
	 * the sections from file (or image). table NULL: no usable search table.
	 */
	struct fg_ehframe own;
	Dwarf *dwarf;               /* owned, only to reach .debug_frame */
	Dwarf_CFI *debug;           /* owned by dwarf: .debug_frame, for code .eh_frame omits */
	struct fg_elf_syms *layout; /* owned: PT_LOAD segments and build-id */
	/*
	 * What it holds on the heap: the CFI sections read with pread (none
	 * when mapped) and libdw's FDEs of sections indexed whole. The FDEs
	 * lookups parse later are counted as they come (struct binary).
	 */
	uint64_t bytes;
	uint64_t mapped; /* bytes of CFI sections read in place from the mapping */
	bool eh_indexed; /* .eh_frame was parsed whole (no .eh_frame_hdr): its FDEs are in bytes */
};

/* One binary's entry. */
struct binary {
	struct fg_dso *dso;   /* owned reference; NULL = free entry */
	uint32_t serial;      /* never reused: row-cache keys of evicted entries go stale */
	uint64_t last_used;   /* the unwinder's clock of uses, for eviction */
	uint64_t last_period; /* the trim period of the last use */
	int error;            /* 0, or why there is no CFI */
	uint64_t failed_at;   /* CLOCK_MONOTONIC ns */
	bool loading;         /* a load is on the loader's thread: no CFI yet */
	struct cfi *cfi;      /* owned; NULL until loaded, or after a failure */
	/*
	 * The FDEs lookups made libdw parse, by start address: an open-addressing
	 * set (0 = empty slot), so each is counted once (LIBDW_PER_FDE).
	 */
	uint64_t *fdes; /* owned */
	size_t n_fdes, cap_fdes;
	uint64_t last_used_ns; /* CLOCK_MONOTONIC, for eviction across components */
	bool touched;          /* libdw read its mapped CFI since the pages were last given back */
};

/*
 * A row holds for a range of addresses (a function's body is often one
 * row), so the cache keeps the range. Slots (64 bytes, a cache line each)
 * find rows by hash: one under the address asked for (return addresses
 * come back exactly), one under the 64-byte block of addresses that holds
 * it, and one under each block near it (ROW_SPREAD either side) that lies
 * wholly in the row's range. A lookup tries its address, then its block:
 * sampled pcs, all different, then hit rows already seen. An ordinary row
 * is packed into its slots (common/unwind/unwind.h), so a hit reads one line; a
 * row with an expression is kept once, in a ring of FG_UNWIND_ROW_CACHE,
 * the oldest overwritten, and its slots point at it. Addresses without CFI
 * are kept too, by address.
 */
enum slot_kind {
	SLOT_EMPTY,
	SLOT_PACKED, /* the row is in the slot */
	SLOT_RING,   /* the row is in the ring, if it is still there */
	SLOT_NONE,   /* the binary has no CFI at start (code without it): no row */
};

struct row_slot {
	uint64_t start; /* [start, start + len): the ELF addresses the row holds for */
	uint32_t len;
	uint32_t serial; /* the binary's */
	uint8_t kind;    /* enum slot_kind */
	union {
		struct fg_unwind_packed_row packed; /* SLOT_PACKED */
		uint64_t gen;                       /* SLOT_RING: the row's in the ring */
	};
};

_Static_assert(sizeof(struct row_slot) == 64, "a slot is a cache line");

struct cached_row {
	uint64_t gen; /* 0 = empty */
	struct fg_unwind_row row;
};

#define ROW_GRANULE_SHIFT 6 /* 64-byte blocks */
#define ROW_SPREAD 8
#define ROW_SLOTS_BYTES (FG_UNWIND_ROW_SLOTS * sizeof(struct row_slot))
#define ROW_CACHE_BYTES (FG_UNWIND_ROW_CACHE * sizeof(struct cached_row) + ROW_SLOTS_BYTES)
#define HUGE_PAGE (2ULL << 20)

struct fg_unwinder {
	struct binary bins[FG_UNWIND_MAX_BINARIES];
	size_t n_bins; /* entries handed out; free ones have dso == NULL */
	struct fg_idxmap by_dso;
	uint32_t next_serial;
	uint64_t clock;
	uint64_t period;          /* trim calls so far */
	struct cached_row *rows;  /* owned: FG_UNWIND_ROW_CACHE entries, a ring */
	struct row_slot *slots;   /* owned: ROW_SLOTS_BYTES mapped (slots_map()), by hash */
	uint64_t next_gen;        /* the next row's; rows[gen % FG_UNWIND_ROW_CACHE] */
	struct fg_loader *loader; /* borrowed; NULL: loads happen in the caller */
	struct fg_budget *budget; /* borrowed; NULL: none */
	uint64_t charged;         /* what the budget's CFI part holds of ours */
	uint64_t now; /* CLOCK_MONOTONIC ns of the walk under way: one clock read a sample */
	struct fg_status_unwinding stats;
};

/* What one walk needs: the unwinder and the sampled process. */
struct walk {
	struct fg_unwinder *u;
	const struct fg_process *proc;
	bool nowait;     /* FG_UNWINDER_NOWAIT */
	bool prefetched; /* prefetch() ran */
	bool skipped; /* nowait: a binary's CFI was being read, its frame taken by frame pointer */
	/* The mapping of the last frame with a file, and its binary: callers are often in it too. */
	const struct fg_map *last_map; /* borrowed from proc */
	struct binary *last_bin;       /* borrowed from u; may be NULL */
};

/*
 * The row slots: zeroed pages, aligned to a huge page and asked to be
 * backed by huge pages, because each lookup lands on a random slot of the
 * 4 MiB: on 4 KiB pages it misses the TLB as well as the cache (4% of a
 * dwarf sample's cost with a g++ load, docs/PERFORMANCE.md). Nothing is
 * resident until a DWARF recording first uses the cache. NULL if out of
 * memory.
 */
static struct row_slot *slots_map(void)
{
	const size_t size = ROW_SLOTS_BYTES + HUGE_PAGE;
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *start, *end;

	if (p == MAP_FAILED)
		return NULL;
	/*
	 * Keep the aligned ROW_SLOTS_BYTES; give back what is before them (none
	 * if p is aligned) and after them (never none: start < p + HUGE_PAGE).
	 */
	start = (uint8_t *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	end = start + ROW_SLOTS_BYTES;
	if (start > p)
		(void)munmap(p, (size_t)(start - p));
	(void)munmap(end, (size_t)(p + size - end));
	/* Without transparent huge pages (never, or an old kernel) it is 4 KiB pages: slower, not wrong. */
	(void)madvise(start, ROW_SLOTS_BYTES, MADV_HUGEPAGE);
	return (struct row_slot *)start;
}

int fg_unwinder__new(struct fg_unwinder **ret)
{
	struct fg_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	u->rows = calloc(FG_UNWIND_ROW_CACHE, sizeof(*u->rows));
	u->slots = slots_map();
	if (!u->rows || !u->slots) {
		free(u->rows);
		if (u->slots)
			(void)munmap(u->slots, ROW_SLOTS_BYTES);
		free(u);
		return -ENOMEM;
	}
	u->next_gen = 1;
	*ret = u;
	return 0;
}

static uint64_t dso_hash(const struct fg_dso *d)
{
	return fg_hash_mix((uintptr_t)d);
}

static bool eq_dso(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct fg_unwinder *)ctx)->bins[idx].dso == key;
}

void fg_unwinder__set_loader(struct fg_unwinder *u, struct fg_loader *loader)
{
	u->loader = loader;
}

static struct cfi *cfi_free(struct cfi *c)
{
	if (!c)
		return NULL;
	if (c->eh)
		dwarf_cfi_end(c->eh);
	if (c->dwarf)
		dwarf_end(c->dwarf);
	fg_elf_file_close(&c->file);
	free(c->image);
	fg_elf_syms__free(c->layout);
	free(c);
	return NULL;
}

static void dispose_cfi(void *p)
{
	cfi_free(p);
}

/* The heap b's CFI holds: what reading it took, the FDEs lookups parsed, and their set. */
static uint64_t binary_bytes(const struct binary *b)
{
	if (!b->cfi)
		return 0;
	return sizeof(*b->cfi) + b->cfi->bytes + b->n_fdes * LIBDW_PER_FDE +
	       b->cap_fdes * sizeof(*b->fdes);
}

/* Brings the budget up to date: the binaries' CFI and the row cache. */
static void account(struct fg_unwinder *u)
{
	fg_budget__account(u->budget, FG_BUDGET_CFI, &u->charged, u->stats.bytes + ROW_CACHE_BYTES);
}

/* Drops what a load read, keeping the entry itself (its binary, serial and failure). */
static void binary_unload(struct fg_unwinder *u, struct binary *b)
{
	if (!b->cfi)
		return;
	u->stats.bytes -= MIN(u->stats.bytes, binary_bytes(b));
	u->stats.mapped -= MIN(u->stats.mapped, b->cfi->mapped);
	fg_loader__dispose(u->loader, dispose_cfi, TAKE_PTR(b->cfi));
	free(b->fdes);
	b->fdes = NULL;
	b->n_fdes = b->cap_fdes = 0;
	account(u);
}

/* Empties the entry: its binary leaves the index and loses our reference. */
static void binary_clear(struct fg_unwinder *u, struct binary *b)
{
	binary_unload(u, b);
	if (b->dso) {
		fg_idxmap_remove(&u->by_dso, dso_hash(b->dso), (uint32_t)(b - u->bins));
		fg_dso__unref(b->dso);
		u->stats.binaries--;
	}
	*b = (struct binary){};
}

struct fg_unwinder *fg_unwinder__free(struct fg_unwinder *u)
{
	if (!u)
		return NULL;
	for (size_t i = 0; i < u->n_bins; i++)
		binary_clear(u, &u->bins[i]);
	fg_idxmap_done(&u->by_dso);
	free(u->rows);
	(void)munmap(u->slots, ROW_SLOTS_BYTES);
	fg_unwinder__set_budget(u, NULL);
	free(u);
	return NULL;
}

/* The sections CFI comes from, as cfi_sections() finds them. */
struct cfi_sections {
	uint64_t bytes;       /* of .eh_frame, .eh_frame_hdr and .debug_frame together */
	uint64_t eh_frame;    /* bytes of .eh_frame */
	uint64_t debug_frame; /* bytes of .debug_frame (0: none, or SHT_NOBITS) */
	bool eh_frame_hdr;    /* .eh_frame comes with its table for binary search */
};

static void cfi_sections(Elf *elf, struct cfi_sections *ret)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	*ret = (struct cfi_sections){};
	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || sh.sh_type == SHT_NOBITS)
			continue;
		if (!strcmp(name, ".debug_frame"))
			ret->debug_frame = sh.sh_size;
		else if (!strcmp(name, ".eh_frame"))
			ret->eh_frame = sh.sh_size;
		else if (!strcmp(name, ".eh_frame_hdr"))
			ret->eh_frame_hdr = true;
		else
			continue;
		ret->bytes += sh.sh_size;
	}
}

/*
 * Makes libdw index every FDE of a CFI section now, on the loader's thread:
 * a section without a search table (.debug_frame always; .eh_frame without
 * .eh_frame_hdr) is otherwise scanned on the loop, entry by entry, by the
 * lookups that miss. libdw keeps every FDE it parsed, and a lookup of an
 * address no FDE covers parses them all. Refused past FG_UNWIND_MAX_SCANNED:
 * the FDEs it would keep cost several times the section.
 */
static int index_unsorted(Dwarf_CFI *cfi, uint64_t size)
{
	Dwarf_Frame *frame = NULL;

	if (size > FG_UNWIND_MAX_SCANNED)
		return -E2BIG;
	if (dwarf_cfi_addrframe(cfi, 0, &frame) == 0)
		free(frame);
	return 0;
}

/* .debug_frame is all the unwinder wants of the debug sections (see fgd-dwarf.c's keep_section()). */
static bool keep_debug_frame(const char *name)
{
	return strncmp(name, ".debug_", 7) != 0 || strcmp(name, ".debug_frame") == 0;
}

/* What one CFI section holds on the heap once libdw has it: nothing if mapped in place. */
static uint64_t section_heap(const struct cfi *c, const void *data, size_t size)
{
	return data && !fg_elf_file_mapped(&c->file, data) ? size : 0;
}

/* Counts where the CFI sections libdw read ended up: in the mapping, or on the heap. */
static void count_sections(struct cfi *c)
{
	static const char *const names[] = { ".eh_frame", ".eh_frame_hdr", ".debug_frame" };

	/* The vDSO's copy is counted whole already. */
	if (c->image)
		return;
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		size_t size = 0;
		const void *data = fg_elf_section(c->file.elf, names[i], &size, NULL);
		uint64_t heap = section_heap(c, data, size);

		if ((i < 2 && !c->eh) || (i == 2 && !c->debug) || !data)
			continue;
		c->bytes += heap;
		c->mapped += size - heap;
	}
	(void)elf_errno();
}

/*
 * Sets up our own reader of .eh_frame through .eh_frame_hdr's table. Where
 * it cannot be (no table, one it does not read), every lookup goes to libdw.
 */
static void own_reader(struct cfi *c)
{
	uint64_t hdr_addr = 0, frame_addr = 0;
	size_t hdr_size = 0, frame_size = 0;
	const void *hdr = fg_elf_section(c->file.elf, ".eh_frame_hdr", &hdr_size, &hdr_addr),
		   *frame = fg_elf_section(c->file.elf, ".eh_frame", &frame_size, &frame_addr);

	if (hdr && frame &&
	    fg_ehframe_init(&c->own, hdr, hdr_size, hdr_addr, frame, frame_size, frame_addr) == 0)
		return;
	c->own = (struct fg_ehframe){};
	(void)elf_errno();
}

/* Reads the CFI of c's opened file. */
static int cfi_read(struct cfi *c)
{
	Elf *elf = c->file.elf;
	struct cfi_sections cs;
	int r;

	r = fg_elf_syms__load_layout(elf, &c->layout);
	if (r < 0)
		return r;
	cfi_sections(elf, &cs);
	/* .eh_frame is what the program itself unwinds with: the usual source. */
	c->eh = dwarf_getcfi_elf(elf);
	if (c->eh && !cs.eh_frame_hdr) {
		if (index_unsorted(c->eh, cs.eh_frame) < 0) {
			dwarf_cfi_end(c->eh);
			c->eh = NULL;
		} else {
			c->bytes += cs.eh_frame * LIBDW_INDEXED_FACTOR;
			c->eh_indexed = true;
		}
	}
	if (c->eh && !c->eh_indexed)
		own_reader(c);
	/*
	 * Code built without unwind tables but with -g has only .debug_frame,
	 * even when the startup files linked in bring an .eh_frame. libdw would
	 * read every other .debug_* section of the binary too: they are hidden.
	 */
	if (cs.debug_frame && fg_elf_file_keep_sections(&c->file, keep_debug_frame) >= 0) {
		c->dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (c->dwarf)
			c->debug = dwarf_getcfi(c->dwarf);
		if (c->debug && index_unsorted(c->debug, cs.debug_frame) < 0)
			c->debug = NULL; /* the Dwarf's own, freed with it */
		else if (c->debug)
			c->bytes += cs.debug_frame * LIBDW_INDEXED_FACTOR;
	}
	count_sections(c);
	/* Reading and indexing touched the sections' pages: give them back. */
	fg_elf_file_drop_pages(&c->file);
	return c->eh || c->debug ? 0 : -ENODATA;
}

static int load_vdso(struct cfi *c)
{
	const void *image;
	size_t size;
	int r;

	/* Every process runs the same kernel's vDSO: ours has the same CFI. */
	r = fg_vdso_image(&image, &size);
	if (r < 0)
		return r;
	/* A copy: libelf may convert data in place. */
	c->image = malloc(size);
	if (!c->image)
		return -ENOMEM;
	memcpy(c->image, image, size);
	c->bytes += size;
	if (!fg_elf_ready())
		return -ENOSYS;
	c->file.elf = elf_memory(c->image, size);
	if (!c->file.elf)
		return -ENOEXEC;
	return cfi_read(c);
}

static int load_file(struct cfi *c, const struct fg_dso_source *src)
{
	_cleanup_close_ int fd = fg_dso_source_open(src);
	const uint8_t *id = NULL;
	struct stat st;
	size_t id_len;
	int r;

	if (fd < 0)
		return fd;
	/* Mapped only if no unprivileged user can truncate it (fgd-elffile.h), else read with pread. */
	r = fg_elf_may_map_fd(&src->trust, fd, &st);
	if (r < 0)
		return r;
	r = fg_elf_file_open(fd, r > 0, &c->file);
	if (r < 0)
		return r;
	r = cfi_read(c);
	if (r < 0)
		return r;
	id_len = fg_elf_syms__build_id(c->layout, &id);
	if (!fg_binid_is_file(&src->key, id, id_len, &st))
		return -ESTALE;
	/* The CFI has been read (or mapped): the file can go. */
	fg_elf_file_forget_fd(&c->file);
	return 0;
}

static bool transient(int err)
{
	/* -ENOBUFS: no room in the budget then; there may be some at the next try. */
	return err == -ENOENT || err == -ESTALE || err == -ESRCH || err == -EMFILE ||
	       err == -ENFILE || err == -ENOMEM || err == -EAGAIN || err == -ECANCELED ||
	       err == -ENOBUFS;
}

/* Drops the least recently used binary other than keep; false if there is none. */
static bool evict_one(struct fg_unwinder *u, const struct binary *keep)
{
	struct binary *victim = NULL;

	/* A binary being loaded is about to be used: its load would only start again. */
	for (size_t i = 0; i < u->n_bins; i++)
		if (u->bins[i].dso && &u->bins[i] != keep && !u->bins[i].loading &&
		    (!victim || u->bins[i].last_used < victim->last_used))
			victim = &u->bins[i];
	if (!victim)
		return false;
	binary_clear(u, victim);
	u->stats.binaries_evicted++;
	return true;
}

/* Makes room for one more binary: a free entry, or the least recently used one's. */
static struct binary *free_entry(struct fg_unwinder *u)
{
	for (size_t i = 0; i < u->n_bins; i++)
		if (!u->bins[i].dso)
			return &u->bins[i];
	if (u->n_bins < FG_UNWIND_MAX_BINARIES)
		return &u->bins[u->n_bins++];
	evict_one(u, NULL);
	for (size_t i = 0; i < u->n_bins; i++)
		if (!u->bins[i].dso)
			return &u->bins[i];
	return NULL;
}

/*
 * One load of a binary's CFI: work() reads it on the loader's thread into a
 * struct binary of its own; done() moves it into the binary's entry, if the
 * entry is still that binary's (the same serial).
 */
struct cfi_load {
	struct fg_loader_job job;
	struct fg_unwinder *u;    /* borrowed: the loader is freed before the unwinder */
	struct fg_dso *dso;       /* owned reference */
	uint32_t serial;          /* of the entry it loads for */
	struct fg_dso_source src; /* owned */
	uint64_t room;            /* what the budget had room for at submission: more is refused */
	struct cfi *out; /* owned: what work() read, NULL on failure; moved into the entry */
	int error;
};

static void cfi_work(struct fg_loader_job *j)
{
	struct cfi_load *job = (struct cfi_load *)j;

	job->out = calloc(1, sizeof(*job->out));
	if (!job->out) {
		job->error = -ENOMEM;
		return;
	}
	job->error = job->src.key.kind == FG_DSO_VDSO ? load_vdso(job->out) :
							load_file(job->out, &job->src);
	/* Read with pread, or indexed whole: more heap than the budget has room for. */
	if (job->error >= 0 && job->out->bytes > job->room)
		job->error = -ENOBUFS;
	/* Freed here, where it was built: done() frees nothing of the worker's. */
	if (job->error < 0)
		job->out = cfi_free(job->out);
}

static struct binary *find_binary(struct fg_unwinder *u, const struct fg_dso *dso)
{
	int64_t i = fg_idxmap_find(&u->by_dso, dso_hash(dso), eq_dso, u, dso);

	return i >= 0 ? &u->bins[i] : NULL;
}

/* Records b's failure so that it is not tried on every sample. */
static void binary_failed(struct fg_unwinder *u, struct binary *b, int err)
{
	/* Each binary counts once, however often it is retried. */
	u->stats.binaries_without_cfi += b->error == 0;
	b->error = err;
	b->failed_at = fgd_now();
}

static void cfi_done(struct fg_loader_job *j, bool cancelled)
{
	struct cfi_load *job = (struct cfi_load *)j;
	struct fg_unwinder *u = job->u;
	struct binary *b = find_binary(u, job->dso);

	if (b && b->serial == job->serial && b->loading) {
		b->loading = false;
		if (cancelled) {
			b->error = -ECANCELED;
		} else if (job->error < 0) {
			binary_failed(u, b, job->error);
			if (job->error == -ENOBUFS)
				fg_budget__refused(u->budget, FG_BUDGET_CFI);
		} else {
			b->cfi = TAKE_PTR(job->out);
			b->error = 0;
			u->stats.bytes += binary_bytes(b);
			u->stats.mapped += b->cfi->mapped;
			u->stats.binaries_loaded++;
			while (u->stats.bytes > FG_UNWIND_MAX_BYTES && evict_one(u, b))
				;
			account(u);
		}
	}
	/* Not taken: its entry was evicted or reused meanwhile. */
	fg_loader__dispose(u->loader, dispose_cfi, job->out);
	fg_dso_source_done(&job->src);
	fg_dso__unref(job->dso);
	free(job);
}

/* Starts reading b's CFI (at once, without a loader). */
/*
 * Where the sampled process maps the binary: /proc/PID/map_files/START-END,
 * which reaches the very file mapped. Formatted only when a load needs it,
 * not for every frame of every sample.
 */
struct hint {
	pid_t pid;
	const struct fg_map *map;
};

static void binary_load(struct fg_unwinder *u, struct binary *b, const struct hint *h)
{
	struct cfi_load *job = calloc(1, sizeof(*job));
	char hint[FG_PROC_MAP_FILES_MAX];

	fg_proc_map_files_path(hint, h->pid, h->map->start, h->map->end);
	if (!job || fg_dso__source(b->dso, hint, &job->src) < 0) {
		free(job);
		binary_failed(u, b, -ENOMEM);
		return;
	}
	job->u = u;
	job->dso = fg_dso__ref(b->dso);
	job->serial = b->serial;
	job->room = fg_budget__room(u->budget, FG_BUDGET_CFI);
	b->loading = true;
	fg_loader__submit(u->loader, &job->job, cfi_work, cfi_done);
}

/*
 * The binary's entry: its CFI loaded, its failure recorded, or (with a
 * loader) its load started. NULL when no entry is free (all loading) or on
 * ENOMEM.
 */
static struct binary *binary_get(struct fg_unwinder *u, struct fg_dso *dso, const struct hint *hint)
{
	struct binary *b = find_binary(u, dso);

	if (b) {
		b->last_used = ++u->clock;
		b->last_period = u->period;
		b->last_used_ns = u->now;
		/* Maybe another process now maps the same file where we can read it. */
		if (!b->loading && b->error && transient(b->error) &&
		    fgd_now() - b->failed_at >= RETRY_NS)
			binary_load(u, b, hint);
		return b;
	}
	b = free_entry(u);
	if (!b)
		return NULL;
	/* A new serial: row-cache entries of the slot's previous binary go stale. */
	*b = (struct binary){ .serial = ++u->next_serial,
			      .last_used = ++u->clock,
			      .last_period = u->period,
			      .last_used_ns = u->now };
	if (b->serial == 0)
		b->serial = ++u->next_serial;
	if (fg_idxmap_insert(&u->by_dso, dso_hash(dso), (uint32_t)(b - u->bins)) < 0)
		return NULL;
	b->dso = fg_dso__ref(dso);
	u->stats.binaries++;
	binary_load(u, b, hint);
	return b;
}

/*
 * Counts the FDE starting at start once: libdw keeps it from now on. Out
 * of memory, it is just not counted.
 */
static void note_fde(struct fg_unwinder *u, struct binary *b, uint64_t start)
{
	uint64_t key = start + 1, before = binary_bytes(b); /* 0 marks an empty slot */
	size_t i;

	if (b->n_fdes * 2 >= b->cap_fdes) {
		size_t cap = b->cap_fdes ? b->cap_fdes * 2 : 64;
		uint64_t *set = calloc(cap, sizeof(*set));

		if (!set)
			return;
		for (size_t j = 0; j < b->cap_fdes; j++) {
			if (!b->fdes[j])
				continue;
			for (i = fg_hash_mix(b->fdes[j]) & (cap - 1); set[i];
			     i = (i + 1) & (cap - 1))
				;
			set[i] = b->fdes[j];
		}
		free(b->fdes);
		b->fdes = set;
		b->cap_fdes = cap;
	}
	for (i = fg_hash_mix(key) & (b->cap_fdes - 1); b->fdes[i]; i = (i + 1) & (b->cap_fdes - 1))
		if (b->fdes[i] == key)
			break;
	if (!b->fdes[i]) {
		b->fdes[i] = key;
		b->n_fdes++;
	}
	u->stats.bytes += binary_bytes(b) - before;
	account(u);
}

/* The slot of an address (block false) or of a block of addresses (block true) of a binary. */
static struct row_slot *row_slot(struct fg_unwinder *u, uint32_t serial, uint64_t vaddr, bool block)
{
	uint64_t key = block ? (vaddr >> ROW_GRANULE_SHIFT) | 1ULL << 63 : vaddr;

	return &u->slots[fg_hash_combine(serial, key) & (FG_UNWIND_ROW_SLOTS - 1)];
}

/* The row slot c finds for vaddr of the binary serial: 1 (in *ret), 0 (no CFI), -ENOENT (none). */
static int slot_row(const struct fg_unwinder *u, const struct row_slot *c, uint32_t serial,
		    uint64_t vaddr, struct fg_unwind_row *ret)
{
	const struct cached_row *e;

	if (c->kind == SLOT_EMPTY || c->serial != serial || vaddr - c->start >= c->len)
		return -ENOENT;
	if (c->kind == SLOT_NONE)
		return 0;
	if (c->kind == SLOT_PACKED) {
		fg_unwind_row_unpack(&c->packed, ret);
		return 1;
	}
	e = &u->rows[c->gen % FG_UNWIND_ROW_CACHE];
	if (e->gen != c->gen)
		return -ENOENT; /* its row was overwritten since */
	/* The rules and the ops in use: most rows have none of the 16 (256 bytes) there is room for. */
	memcpy(ret, &e->row,
	       offsetof(struct fg_unwind_row, ops) + e->row.n_ops * sizeof(e->row.ops[0]));
	return 1;
}

/* Keeps row, which holds for [start, end) of b, under vaddr, its block and whole blocks near. */
static void cache_row(struct fg_unwinder *u, const struct binary *b, uint64_t vaddr, uint64_t start,
		      uint64_t end, const struct fg_unwind_row *row)
{
	const uint64_t size = 1ULL << ROW_GRANULE_SHIFT, at = vaddr & ~(size - 1);
	struct row_slot c = { .serial = b->serial };

	/* A range the slot cannot say (over 4 GiB) holds for vaddr alone. */
	if (end - start > UINT32_MAX) {
		start = vaddr;
		end = vaddr + 1;
	}
	c.start = start;
	c.len = (uint32_t)(end - start);
	if (fg_unwind_row_pack(row, &c.packed)) {
		c.kind = SLOT_PACKED;
	} else {
		struct cached_row *e = &u->rows[u->next_gen % FG_UNWIND_ROW_CACHE];

		c.kind = SLOT_RING;
		c.gen = u->next_gen++;
		e->gen = c.gen;
		e->row = *row;
	}
	*row_slot(u, b->serial, vaddr, false) = c;
	*row_slot(u, b->serial, at, true) = c;
	for (uint64_t i = 1; i <= ROW_SPREAD; i++) {
		if (at >= i * size && at - i * size >= start)
			*row_slot(u, b->serial, at - i * size, true) = c;
		if (at + (i + 1) * size <= end)
			*row_slot(u, b->serial, at + i * size, true) = c;
	}
}

/*
 * The row .eh_frame gives for vaddr, read by our own reader, or by libdw
 * for what ours leaves to it (common/unwind/ehframe.h). Returns as
 * fg_cfi_libdw_row() does.
 */
static int eh_row(struct fg_unwinder *u, struct binary *b, uint64_t vaddr,
		  struct fg_unwind_row *ret, uint64_t *start, uint64_t *end)
{
	int r = fg_ehframe_row(&b->cfi->own, vaddr, ret, start, end);
	uint64_t fde;

	if (r == 0 || r == -ENOENT)
		return r;
	u->stats.rows_libdw++;
	r = fg_cfi_libdw_row(b->cfi->eh, vaddr, ret, start, end);
	/*
	 * Found through .eh_frame_hdr: libdw parsed this FDE now, or before.
	 * Known by the table's start for it (a row from libdw starts at vaddr).
	 */
	if (r != -ENOENT && !b->cfi->eh_indexed)
		note_fde(u, b, fg_ehframe_fde_start(&b->cfi->own, vaddr, &fde) == 0 ? fde : *start);
	return r;
}

/* The row for ELF address vaddr of b, from the cache or from the binary's CFI. */
static int row_lookup(struct fg_unwinder *u, struct binary *b, uint64_t vaddr,
		      struct fg_unwind_row *ret)
{
	uint64_t start, end;
	int r;

	r = slot_row(u, row_slot(u, b->serial, vaddr, false), b->serial, vaddr, ret);
	if (r < 0)
		r = slot_row(u, row_slot(u, b->serial, vaddr, true), b->serial, vaddr, ret);
	if (r >= 0) {
		u->stats.row_hits++;
		return r > 0 ? 0 : -ENOENT;
	}
	u->stats.row_misses++;
	b->touched = true;
	r = b->cfi->eh ? eh_row(u, b, vaddr, ret, &start, &end) : -ENOENT;
	if (r == -ENOENT && b->cfi->debug)
		r = fg_cfi_libdw_row(b->cfi->debug, vaddr, ret, &start, &end);
	if (r == -ENOENT) {
		/* Code without CFI (hand-written, V8's builtins): asked again only if evicted. */
		u->stats.rows_none++;
		*row_slot(u, b->serial, vaddr, false) = (struct row_slot){
			.start = vaddr, .len = 1, .serial = b->serial, .kind = SLOT_NONE
		};
		return -ENOENT;
	}
	if (r < 0) {
		u->stats.rows_uncached++;
		return r == -E2BIG ? -ENOENT : r;
	}
	cache_row(u, b, vaddr, start, end, ret);
	return 0;
}

/*
 * True if vaddr lies in the first instructions after b's entry point. The
 * dynamic loader's _start (glibc's RTLD_START) has no CFI, and calls
 * _dl_start within a few bytes of the entry: a return address there is the
 * outermost frame of a process that is still being loaded.
 */
static bool is_entry(const struct binary *b, uint64_t vaddr)
{
	uint64_t entry = fg_elf_syms__entry(b->cfi->layout);

	return entry && vaddr >= entry && vaddr - entry < ENTRY_WINDOW;
}

/*
 * A walk met a binary whose CFI is being read: start reading the rest of
 * the process's binaries too, so the walk that resumes does not wait for
 * each in turn. Once a walk.
 */
static void prefetch(struct walk *w)
{
	size_t started = 0;

	if (w->prefetched)
		return;
	w->prefetched = true;
	for (size_t i = 0; i < w->proc->n_maps && started < PREFETCH_MAPS; i++) {
		const struct fg_map *m = &w->proc->maps[i];

		if (!m->dso || fg_dso__key(m->dso)->kind == FG_DSO_ANON ||
		    find_binary(w->u, m->dso))
			continue;
		(void)binary_get(w->u, m->dso, &(struct hint){ w->proc->pid, m });
		started++;
	}
}

static int row_for_pc(void *ctx, uint64_t pc, struct fg_unwind_row *ret)
{
	struct walk *w = ctx;
	const struct fg_map *m = w->last_map;
	struct binary *b = w->last_bin;
	uint64_t vaddr;
	int r;

	if (!m || pc < m->start || pc >= m->end) {
		m = fg_process_find_map(w->proc, pc);
		/* No file behind it (JIT code): the frame pointer is all there is. */
		if (!m || !m->dso || fg_dso__key(m->dso)->kind == FG_DSO_ANON)
			return -ENOENT;
		b = binary_get(w->u, m->dso, &(struct hint){ w->proc->pid, m });
		w->last_map = m;
		w->last_bin = b;
	}
	if (b && b->loading) {
		prefetch(w);
		if (!w->nowait)
			return -EINPROGRESS;
		w->skipped = true;
		return -ENOENT;
	}
	if (!b || !b->cfi)
		return -ENOENT;
	if (fg_elf_syms__offset_to_vaddr(b->cfi->layout, pc - m->start + m->pgoff, &vaddr) < 0)
		return -ENOENT;
	r = row_lookup(w->u, b, vaddr, ret);
	if (r == -ENOENT && is_entry(b, vaddr)) {
		/* A first frame without CFI (the dynamic loader's _start): the stack ends here. */
		*ret = (struct fg_unwind_row){
			.cfa = { .kind = FG_RULE_VAL_OFFSET, .reg = FG_REG_RSP, .offset = 8 },
		};
		return 0;
	}
	return r;
}

int fg_unwinder__unwind(struct fg_unwinder *u, const struct fg_process *proc,
			const struct fg_sample *s, unsigned flags, uint64_t *pcs, size_t max,
			struct fg_unwind_result *ret)
{
	struct fg_unwind_regs regs;
	struct fg_unwind_stack stack;
	struct walk w = { .u = u, .proc = proc, .nowait = flags & FG_UNWINDER_NOWAIT };

	if (s->regs_abi != PERF_SAMPLE_REGS_ABI_64 ||
	    fg_unwind_regs_from_perf(s->regs, s->n_regs, &regs) < 0)
		return -EINVAL;
	u->now = fgd_now();
	stack = (struct fg_unwind_stack){ regs.v[FG_REG_RSP], s->stack, s->stack_size };
	fg_unwind(&regs, &stack, row_for_pc, &w, pcs, max, ret);
	return w.skipped;
}

static int by_last_use(const void *a, const void *b)
{
	const struct binary *x = *(const struct binary *const *)a,
			    *y = *(const struct binary *const *)b;

	return x->last_used_ns < y->last_used_ns ? -1 : x->last_used_ns > y->last_used_ns;
}

/*
 * The budget's pressure: the CFI of the binaries least recently walked
 * through goes, as the unwinder's own limits take it (the entry is
 * cleared; a later walk reads it again, its samples waiting meanwhile).
 */
static uint64_t evict_cfi(void *ctx, uint64_t want, uint64_t now, uint64_t idle)
{
	struct fg_unwinder *u = ctx;
	_cleanup_free_ struct binary **c = calloc(u->n_bins ? u->n_bins : 1, sizeof(*c));
	uint64_t freed = 0, before;
	size_t n = 0, i;

	if (!c)
		return 0;
	for (i = 0; i < u->n_bins; i++)
		if (u->bins[i].dso && u->bins[i].cfi && !u->bins[i].loading &&
		    u->bins[i].last_used_ns + idle <= now)
			c[n++] = &u->bins[i];
	qsort(c, n, sizeof(*c), by_last_use);
	for (i = 0; i < n && freed < want; i++) {
		before = u->charged;
		binary_clear(u, c[i]);
		u->stats.binaries_evicted++;
		freed += before - u->charged;
	}
	return i;
}

void fg_unwinder__set_budget(struct fg_unwinder *u, struct fg_budget *budget)
{
	fg_budget__account(u->budget, FG_BUDGET_CFI, &u->charged, 0);
	fg_budget__set_evictor(u->budget, FG_BUDGET_CFI, NULL, NULL);
	u->budget = budget;
	fg_budget__set_evictor(budget, FG_BUDGET_CFI, evict_cfi, u);
	if (budget)
		account(u);
}

void fg_unwinder__trim(struct fg_unwinder *u, uint64_t idle_periods)
{
	u->period++;
	for (size_t i = 0; i < u->n_bins; i++) {
		struct binary *b = &u->bins[i];

		/* The pages row lookups touched go back to the page cache (fgd-elffile.h). */
		if (b->touched && b->cfi) {
			fg_elf_file_drop_pages(&b->cfi->file);
			b->touched = false;
		}
		if (b->dso && u->period - b->last_period > idle_periods) {
			binary_clear(u, b);
			u->stats.binaries_evicted++;
		}
	}
}

void fg_unwinder__stats(const struct fg_unwinder *u, struct fg_status_unwinding *ret)
{
	*ret = u->stats;
	ret->bytes += ROW_CACHE_BYTES;
}
