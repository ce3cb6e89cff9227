/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/budget.h"
#include "base/macro.h"
#include "fgd-clock.h"
#include "fgd-loader.h"
#include "symbols/fgd-binid.h"
#include "symbols/fgd-debuginfo.h"
#include "symbols/fgd-demangle.h"
#include "symbols/fgd-dsosource.h"
#include "symbols/fgd-dwarf.h"
#include "symbols/fgd-elffile.h"
#include "symbols/fgd-kernelsyms.h"
#include "symbols/fgd-namecache.h"
#include "symbols/fgd-root.h"
#include "symbols/fgd-symbols.h"
#include "symbols/fgd-vdso.h"

/* Every binary mapped on a big host fits; past this, frames show as [unknown]. */
#define MAX_DSOS 65536
/* A binary that failed to load for a reason that may pass is retried this often at most. */
#define DSO_RETRY_NS (5ULL * 1000000000ULL)
/*
 * DWARF on the heap (see fgd-dwarf.h), without a budget: past this total,
 * binaries get no inline frames. With one, its share of the budget.
 */
#define MAX_DWARF_BYTES (UINT64_C(2) << 30)
#define DEFAULT_DEBUG_DIR "/usr/lib/debug"
/*
 * Addresses being named on the loader's thread at once: each job carries
 * its answer's buffer (8 KiB), and a process with ever new addresses would
 * queue them faster than they are named. Past it, samples wait.
 */
#define MAX_NAME_JOBS 1024
/* The pages of mapped DWARF that name jobs read are given back at most this often. */
#define DROP_INTERVAL_NS (1000ULL * 1000000ULL)

struct fg_dso {
	unsigned refs;
	uint32_t slot;               /* index in the owner's table */
	struct fg_symbolizer *owner; /* borrowed; outlives every dso */
	struct fg_dso_key key;
	uint64_t serial;                 /* never reused: names kept by offset stay this binary's */
	struct fg_binid_indexed indexed; /* which of the owner's indices hold it */
	char *path;                      /* owned */
	char *open_path;                 /* owned; where to read it if not path; may be NULL */
	struct fg_root *root; /* owned reference: where path means something; NULL: ours */
	const char *basename; /* borrowed from path */
	enum fg_dso_state state;
	int error;
	uint64_t failed_at;       /* CLOCK_MONOTONIC ns of the last failed load */
	bool failed_once;         /* counted in binaries_unreadable */
	struct fg_elf_syms *syms; /* owned once loaded */
	struct fg_dwarf *dwarf;   /* owned once loaded; NULL: no DWARF */
	bool dwarf_touched;       /* in the owner's touched list */
	/* The memory budget (common/base/budget.h). */
	uint64_t syms_charged, dwarf_charged; /* what syms and dwarf are charged */
	uint64_t last_used_ns; /* CLOCK_MONOTONIC of the last lookup: eviction goes by it */
	bool dwarf_evicted;    /* its DWARF was given up: no inline frames until read again */
	uint64_t dwarf_evicted_bytes; /* what it held: the room a new read needs */
	bool rereading;               /* a load is reading its DWARF again (state stays LOADED) */
	uint64_t refused_bytes;       /* a symbol table this large found no room (error -ENOBUFS) */
};

struct fg_symbolizer {
	struct fg_dso **dsos; /* owned array of borrowed pointers; NULL = free slot */
	size_t n_dsos, cap_dsos;
	uint32_t *free_slots; /* owned */
	size_t n_free, cap_free;
	struct fg_binid_index index; /* the dsos by build-id and by inode */
	size_t live;

	char *debug_dir;           /* owned */
	struct fg_elf_trust trust; /* which files may be mapped */
	struct fg_budget *budget;  /* borrowed; NULL: none */
	uint64_t dwarf_bytes;      /* the dsos' DWARF, as charged */
	uint64_t dwarf_mapped;     /* their debug sections read in place */
	uint64_t symbols_bytes;    /* the dsos' symbol tables, as charged */
	struct fg_loader *loader;  /* borrowed; NULL: loads happen in the caller */
	uint64_t next_dso_serial;

	/* Addresses named on the loader's thread (see fg_symbolizer__frames()). */
	struct fg_name_cache *names; /* owned */
	size_t name_jobs;            /* submitted, not done yet */
	/*
	 * Binaries whose mapped DWARF name jobs read since their pages were
	 * last given back (fg_dwarf__drop_pages()): owned references.
	 */
	struct fg_dso **touched;
	size_t n_touched, cap_touched;
	uint64_t dropped_at; /* CLOCK_MONOTONIC ns of the last drop_touched() */

	struct fg_kernel_syms *kernel; /* owned */

	struct fg_status_symbols stats;
};

/*
 * The system's own directories, whose filesystems the administrator
 * mounted: root-owned files there may be mapped (fgd-elffile.h).
 */
static const char *const trusted_dirs[] = { "/", "/usr", "/opt", DEFAULT_DEBUG_DIR };

int fg_symbolizer__new(struct fg_symbolizer **ret)
{
	struct fg_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->debug_dir = strdup(DEFAULT_DEBUG_DIR);
	if (!s->debug_dir || fg_name_cache__new(&s->names) < 0 ||
	    fg_kernel_syms__new(&s->kernel) < 0) {
		fg_name_cache__free(s->names);
		free(s->debug_dir);
		free(s);
		return -ENOMEM;
	}
	/* Missing ones (no /opt) add nothing. */
	for (size_t i = 0; i < ELEMENTSOF(trusted_dirs); i++)
		(void)fg_elf_trust_add(&s->trust, trusted_dirs[i]);
	*ret = s;
	return 0;
}

void fg_symbolizer__set_trust(struct fg_symbolizer *s, const struct fg_elf_trust *t)
{
	s->trust = *t;
}

static uint64_t evict_dwarf(void *ctx, uint64_t want, uint64_t now, uint64_t idle);
static uint64_t evict_syms(void *ctx, uint64_t want, uint64_t now, uint64_t idle);

void fg_symbolizer__set_budget(struct fg_symbolizer *s, struct fg_budget *budget)
{
	fg_budget__set_evictor(s->budget, FG_BUDGET_DWARF, NULL, NULL);
	fg_budget__set_evictor(s->budget, FG_BUDGET_SYMBOLS, NULL, NULL);
	s->budget = budget;
	fg_budget__set_evictor(budget, FG_BUDGET_DWARF, evict_dwarf, s);
	fg_budget__set_evictor(budget, FG_BUDGET_SYMBOLS, evict_syms, s);
	fg_name_cache__set_budget(s->names, budget);
	fg_kernel_syms__set_budget(s->kernel, budget);
}

void fg_symbolizer__set_loader(struct fg_symbolizer *s, struct fg_loader *loader)
{
	s->loader = loader;
	fg_kernel_syms__set_loader(s->kernel, loader);
}

int fg_symbolizer__set_debug_dir(struct fg_symbolizer *s, const char *dir)
{
	char *copy = strdup(dir);

	if (!copy)
		return -ENOMEM;
	free(s->debug_dir);
	s->debug_dir = copy;
	return 0;
}

/* What the loader built goes back to it to be freed (see fg_loader__dispose()). */
static void dispose_syms(void *p)
{
	fg_elf_syms__free(p);
}

static void dispose_dwarf(void *p)
{
	fg_dwarf__free(p);
}

/* Brings the budget and the totals up to date with what d's DWARF holds now (0 without). */
static void account_dwarf(struct fg_symbolizer *s, struct fg_dso *d)
{
	uint64_t before = d->dwarf_charged;

	fg_budget__account(s->budget, FG_BUDGET_DWARF, &d->dwarf_charged,
			   d->dwarf ? fg_dwarf__bytes(d->dwarf) : 0);
	s->dwarf_bytes = s->dwarf_bytes - before + d->dwarf_charged;
}

static void account_syms(struct fg_symbolizer *s, struct fg_dso *d)
{
	uint64_t before = d->syms_charged;

	fg_budget__account(s->budget, FG_BUDGET_SYMBOLS, &d->syms_charged,
			   d->syms ? fg_elf_syms__bytes(d->syms) : 0);
	s->symbols_bytes = s->symbols_bytes - before + d->syms_charged;
}

/* Gives d's DWARF back to the loader, which built it, and its bytes to the budget. */
static void drop_dwarf(struct fg_symbolizer *s, struct fg_dso *d)
{
	if (!d->dwarf)
		return;
	s->dwarf_mapped -= MIN(s->dwarf_mapped, fg_dwarf__mapped(d->dwarf));
	fg_loader__dispose(s->loader, dispose_dwarf, TAKE_PTR(d->dwarf));
	account_dwarf(s, d);
}

static void drop_syms(struct fg_symbolizer *s, struct fg_dso *d)
{
	fg_loader__dispose(s->loader, dispose_syms, TAKE_PTR(d->syms));
	account_syms(s, d);
}

static void dso_free(struct fg_dso *d)
{
	drop_dwarf(d->owner, d);
	drop_syms(d->owner, d);
	free(d->path);
	free(d->open_path);
	fg_root__unref(d->root);
	free(d);
}

struct fg_symbolizer *fg_symbolizer__free(struct fg_symbolizer *s)
{
	if (!s)
		return NULL;
	/* Owners of references are gone by now; free what is left regardless. */
	for (size_t i = 0; i < s->n_dsos; i++)
		if (s->dsos[i])
			dso_free(s->dsos[i]);
	/* The kept names' and the kernel's too. */
	fg_symbolizer__set_budget(s, NULL);
	free(s->dsos);
	free(s->free_slots);
	fg_binid_index_done(&s->index);
	fg_kernel_syms__free(s->kernel);
	free(s->debug_dir);
	fg_name_cache__free(s->names);
	free(s->touched);
	free(s);
	return NULL;
}

/* The key of the dso in slot (fgd-binid.h's callback). */
static const struct fg_dso_key *slot_key(const void *ctx, uint32_t slot)
{
	const struct fg_symbolizer *s = ctx;

	return &s->dsos[slot]->key;
}

static struct fg_dso *find(struct fg_symbolizer *s, const struct fg_dso_key *k)
{
	int64_t i = fg_binid_index_find(&s->index, k, slot_key, s);

	return i >= 0 ? s->dsos[i] : NULL;
}

/*
 * Reads the GNU build-id note of an ELF file (fg_elf_read_build_id()).
 * Returns its length, 0 if none, or -errno. This runs in the loop, for
 * mappings found in /proc.
 */
static int read_build_id(const struct fg_root *root, const char *path, uint8_t *buf, size_t size)
{
	_cleanup_close_ int fd = fg_root__open_regular(root, path);

	if (fd < 0)
		return fd;
	return fg_elf_read_build_id(fd, buf, size);
}

static int add_index(struct fg_symbolizer *s, struct fg_dso *d)
{
	return fg_binid_index_add(&s->index, &d->key, d->slot, &d->indexed);
}

/* Takes d out of the indices and gives its slot back. */
static void release_slot(struct fg_symbolizer *s, struct fg_dso *d)
{
	fg_binid_index_remove(&s->index, &d->key, d->slot, &d->indexed);
	s->dsos[d->slot] = NULL;
	/* free_slots was grown when the slot was handed out, so this always fits. */
	s->free_slots[s->n_free++] = d->slot;
}

static struct fg_dso *create(struct fg_symbolizer *s, const struct fg_dso_key *key,
			     const char *path, const char *open_path, struct fg_root *root)
{
	struct fg_dso *d;
	const char *deleted;
	size_t len;

	if (s->live >= MAX_DSOS) {
		s->stats.binaries_dropped++;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->refs = 1;
	d->owner = s;
	d->key = *key;
	d->serial = ++s->next_dso_serial;
	/* /proc/PID/maps marks unlinked files; the name is still the useful part. */
	len = strlen(path);
	deleted = strstr(path, " (deleted)");
	if (deleted && deleted[10] == '\0')
		len = (size_t)(deleted - path);
	d->path = strndup(path, len);
	if (!d->path)
		goto fail;
	if (open_path && strcmp(open_path, d->path) != 0) {
		d->open_path = strdup(open_path);
		if (!d->open_path)
			goto fail;
	}
	d->basename = strrchr(d->path, '/') ? strrchr(d->path, '/') + 1 : d->path;
	d->root = fg_root__ref(root);

	if (s->n_free > 0) {
		d->slot = s->free_slots[--s->n_free];
	} else {
		if (FG_GROW(s->dsos, s->cap_dsos, s->n_dsos + 1) < 0 ||
		    FG_GROW(s->free_slots, s->cap_free, s->n_dsos + 1) < 0)
			goto fail;
		d->slot = (uint32_t)s->n_dsos++;
	}
	s->dsos[d->slot] = d;
	if (add_index(s, d) < 0) {
		release_slot(s, d);
		goto fail;
	}
	s->live++;
	s->stats.binaries = s->live;
	return d;
fail:
	dso_free(d);
	return NULL;
}

struct fg_dso *fg_symbolizer__get_dso(struct fg_symbolizer *s, const struct fg_dso_key *key,
				      const char *path, const char *open_path, struct fg_root *root)
{
	struct fg_dso_key k = *key;
	struct fg_dso *d;

	if (k.kind != FG_DSO_FILE) {
		/* One shared entry per kind: every 64-bit process maps the same vDSO. */
		k.build_id_len = 0;
		k.dev = UINT64_MAX;
		k.ino = k.kind;
	}
	d = find(s, &k);
	if (d) {
		/* The newest mapper is the likeliest to be alive when the file is read. */
		if (open_path && d->state != FG_DSO_LOADED) {
			char *p = strdup(open_path);

			if (p) {
				free(d->open_path);
				d->open_path = p;
			}
		}
		return fg_dso__ref(d);
	}

	if (k.kind == FG_DSO_FILE && k.build_id_len == 0 && k.ino) {
		/* Learn the build-id so this file meets its MMAP2-keyed twin. */
		int n = open_path ? read_build_id(NULL, open_path, k.build_id, sizeof(k.build_id)) :
				    read_build_id(root, path, k.build_id, sizeof(k.build_id));

		if (n > 0) {
			k.build_id_len = (uint8_t)n;
			d = find(s, &k);
			if (d) {
				/* Alias the inode to it; on failure we merely look it up the slow way. */
				if (!d->key.ino) {
					d->key.dev = k.dev;
					d->key.ino = k.ino;
					if (add_index(s, d) < 0)
						d->key.ino = 0;
				}
				return fg_dso__ref(d);
			}
		}
	}
	return create(s, &k, path, open_path, root);
}

struct fg_dso *fg_dso__ref(struct fg_dso *d)
{
	if (d)
		d->refs++;
	return d;
}

struct fg_dso *fg_dso__unref(struct fg_dso *d)
{
	if (!d || --d->refs > 0)
		return NULL;
	release_slot(d->owner, d);
	d->owner->live--;
	d->owner->stats.binaries = d->owner->live;
	dso_free(d);
	return NULL;
}

const char *fg_dso__path(const struct fg_dso *d)
{
	return d->path;
}

enum fg_dso_state fg_dso__state(const struct fg_dso *d)
{
	return d->state;
}

int fg_dso__error(const struct fg_dso *d)
{
	return d->error;
}

bool fg_dso__may_open(const struct fg_dso *d)
{
	return d->state != FG_DSO_LOADED || d->dwarf_evicted;
}

struct fg_dwarf *fg_dso__dwarf(struct fg_dso *d)
{
	return d->state == FG_DSO_LOADED ? d->dwarf : NULL;
}

enum fg_dso_kind fg_dso__kind(const struct fg_dso *d)
{
	return d->key.kind;
}

const struct fg_dso_key *fg_dso__key(const struct fg_dso *d)
{
	return &d->key;
}

int fg_dso__source(const struct fg_dso *d, const char *hint, struct fg_dso_source *ret)
{
	struct fg_dso_source src = { .key = d->key, .trust = d->owner->trust };

	src.path = strdup(d->path);
	src.open_path = d->open_path ? strdup(d->open_path) : NULL;
	src.hint = hint ? strdup(hint) : NULL;
	if (!src.path || (d->open_path && !src.open_path) || (hint && !src.hint)) {
		fg_dso_source_done(&src);
		return -ENOMEM;
	}
	src.root = fg_root__ref(d->root);
	*ret = src;
	return 0;
}

/*
 * One load of a dso's symbols, debug information and DWARF. work() runs
 * on the loader's thread with the inputs copied here; done() installs the
 * results in the dso on the loop's thread.
 */
struct dso_load {
	struct fg_loader_job job;
	struct fg_dso *dso;       /* owned reference; only done() looks at it */
	struct fg_dso_source src; /* owned */
	char *debug_dir;          /* owned copy */
	uint64_t syms_room;       /* the budget's room at submission: a bigger table is refused */
	uint64_t dwarf_room;      /* likewise for DWARF: then it is not read */
	bool reread;              /* the dso is loaded, and wants its evicted DWARF back */
	/* Results. */
	int error;
	uint64_t refused_bytes;   /* -ENOBUFS: the symbol table's size */
	struct fg_elf_syms *syms; /* owned until installed */
	struct fg_dwarf *dwarf;   /* owned until installed */
	bool debug_file, dwarf_dropped;
};

/*
 * Separate debug information, then DWARF for inline frames. Both only add
 * to what the binary itself gave, so a failure here is not the dso's.
 */
static void load_debug(struct dso_load *job, int fd)
{
	const struct fg_dso_source *src = &job->src;
	_cleanup_close_ int dfd = -1;
	enum fg_debuginfo_how how;
	struct stat st;
	int map, r;

	/*
	 * A binary with every symbol and its DWARF needs nothing more. The
	 * mapping process's root first (a container's debug files are in it),
	 * then the host's: a debug file is accepted only if it is this
	 * binary's, wherever it was found.
	 */
	if (fg_elf_syms__source(job->syms) != FG_ELF_SYMTAB || !fg_elf_syms__has_dwarf(job->syms)) {
		if (src->root)
			dfd = fg_debuginfo_find(&(struct fg_debuginfo_query){ src->root,
									      job->debug_dir,
									      src->path },
						job->syms, &how);
		if (dfd < 0)
			dfd = fg_debuginfo_find(&(struct fg_debuginfo_query){ NULL, job->debug_dir,
									      src->path },
						job->syms, &how);
		job->debug_file = dfd >= 0;
	}
	if (dfd < 0 && !fg_elf_syms__has_dwarf(job->syms))
		return;
	map = fg_elf_may_map_fd(&src->trust, dfd >= 0 ? dfd : fd, &st);
	if (map < 0)
		return;
	r = fg_dwarf__new(dfd >= 0 ? dfd : fd, map > 0, job->dwarf_room, &job->dwarf);
	job->dwarf_dropped = r == -EFBIG;
}

static int load_file(struct dso_load *job)
{
	_cleanup_close_ int fd = fg_dso_source_open(&job->src);
	const uint8_t *id;
	struct stat st;
	size_t id_len;
	int r;

	if (fd < 0)
		return fd;
	/* Mapped if no unprivileged user can truncate it (fgd-elffile.h): nothing of it copied. */
	r = fg_elf_may_map_fd(&job->src.trust, fd, &st);
	if (r < 0)
		return r;
	r = fg_elf_syms__load_file(fd, r > 0, &job->syms);
	if (r < 0)
		return r;
	/*
	 * Never a wrong name: the file at this path must be the one that was
	 * mapped. A package upgrade replaces it under the running process.
	 */
	id_len = fg_elf_syms__build_id(job->syms, &id);
	if (!fg_binid_is_file(&job->src.key, id, id_len, &st)) {
		job->syms = fg_elf_syms__free(job->syms);
		return -ESTALE;
	}
	load_debug(job, fd);
	return 0;
}

/* Failures that another try, through another process or later, may not meet. */
static bool transient(int err)
{
	switch (-err) {
	case ENOENT:
	case ESTALE:
	case ESRCH:
	case EMFILE:
	case ENFILE:
	case ENOMEM:
	case EAGAIN:
	case EINTR:
	case ENOBUFS: /* the budget's room: see fg_symbolizer__prepare() */
		return true;
	default:
		return false;
	}
}

static void load_work(struct fg_loader_job *j)
{
	struct dso_load *job = (struct dso_load *)j;

	job->error =
		job->src.key.kind == FG_DSO_VDSO ? fg_vdso_load_syms(&job->syms) : load_file(job);
	/*
	 * A symbol table the budget has no room for is not kept: the binary's
	 * names are module+offset, as for one that cannot be read. (Read again
	 * for its DWARF, the table is the one the dso holds already.)
	 */
	if (job->error >= 0 && !job->reread && fg_elf_syms__bytes(job->syms) > job->syms_room) {
		job->refused_bytes = fg_elf_syms__bytes(job->syms);
		job->error = -ENOBUFS;
	}
	/* Freed here, where it was built: done() frees nothing of the worker's. */
	if (job->error < 0) {
		job->syms = fg_elf_syms__free(job->syms);
		job->dwarf = fg_dwarf__free(job->dwarf);
	}
}

/* Installs a loaded DWARF in d, with its bytes. */
static void set_dwarf(struct fg_symbolizer *s, struct fg_dso *d, struct fg_dwarf *dwarf)
{
	d->dwarf = dwarf;
	s->dwarf_mapped += fg_dwarf__mapped(dwarf);
	account_dwarf(s, d);
}

/* A read of an evicted DWARF is over: what it found replaces what d had. */
static void reread_done(struct fg_symbolizer *s, struct fg_dso *d, struct dso_load *job,
			bool cancelled)
{
	d->rereading = false;
	if (cancelled || job->error < 0 || !job->dwarf) {
		/* Tried: not again before the retry time, whatever came of it. */
		d->failed_at = fgd_now();
		return;
	}
	/* The same file's table: swapped, so that the names come from what the DWARF describes. */
	drop_syms(s, d);
	d->syms = TAKE_PTR(job->syms);
	account_syms(s, d);
	set_dwarf(s, d, TAKE_PTR(job->dwarf));
	d->dwarf_evicted = false;
	s->stats.dwarf_reread++;
}

static void load_done(struct fg_loader_job *j, bool cancelled)
{
	struct dso_load *job = (struct dso_load *)j;
	struct fg_dso *d = job->dso;
	struct fg_symbolizer *s = d->owner;

	if (job->reread) {
		reread_done(s, d, job, cancelled);
	} else if (cancelled) {
		d->state = FG_DSO_UNLOADED;
	} else if (job->error < 0) {
		/* Count each binary once, however often it is retried. */
		if (!d->failed_once)
			s->stats.binaries_unreadable++;
		d->failed_once = true;
		d->state = FG_DSO_FAILED;
		d->error = job->error;
		d->failed_at = fgd_now();
		d->refused_bytes = job->refused_bytes;
		s->stats.symbols_refused += job->error == -ENOBUFS;
		if (job->error == -ENOBUFS)
			fg_budget__refused(s->budget, FG_BUDGET_SYMBOLS);
	} else {
		d->syms = TAKE_PTR(job->syms);
		account_syms(s, d);
		if (job->debug_file)
			s->stats.binaries_debug_file++;
		if (fg_elf_syms__source(d->syms) == FG_ELF_MINIDEBUGINFO)
			s->stats.binaries_minidebuginfo++;
		/* Without a budget, other loads may have used the room this one saw. */
		if (job->dwarf && !s->budget &&
		    s->dwarf_bytes + fg_dwarf__bytes(job->dwarf) > MAX_DWARF_BYTES) {
			fg_loader__dispose(s->loader, dispose_dwarf, TAKE_PTR(job->dwarf));
			job->dwarf_dropped = true;
		}
		if (job->dwarf) {
			set_dwarf(s, d, TAKE_PTR(job->dwarf));
			s->stats.binaries_dwarf++;
		}
		d->dwarf_evicted = false;
		s->stats.dwarf_dropped += job->dwarf_dropped;
		if (job->dwarf_dropped)
			fg_budget__refused(s->budget, FG_BUDGET_DWARF);
		d->state = FG_DSO_LOADED;
		d->error = 0;
		s->stats.binaries_loaded++;
	}
	/* Nothing is left here: work() frees what it does not hand over, and the rest is taken. */
	fg_dso_source_done(&job->src);
	free(job->debug_dir);
	free(job);
	fg_dso__unref(d);
}

/* What the budget has room for, for one binary's DWARF. */
static uint64_t dwarf_room(const struct fg_symbolizer *s)
{
	if (s->budget)
		return fg_budget__room(s->budget, FG_BUDGET_DWARF);
	return MAX_DWARF_BYTES - MIN(s->dwarf_bytes, MAX_DWARF_BYTES);
}

/* Starts a load of d (reread: d is loaded, and its evicted DWARF is wanted back). */
static int start_load(struct fg_symbolizer *s, struct fg_dso *d, const char *hint, bool reread)
{
	struct dso_load *job = calloc(1, sizeof(*job));

	if (!job)
		return -ENOMEM;
	job->debug_dir = strdup(s->debug_dir);
	if (!job->debug_dir || fg_dso__source(d, hint, &job->src) < 0) {
		free(job->debug_dir);
		free(job);
		return -ENOMEM;
	}
	job->syms_room = fg_budget__room(s->budget, FG_BUDGET_SYMBOLS);
	job->dwarf_room = dwarf_room(s);
	job->reread = reread;
	job->dso = fg_dso__ref(d);
	if (reread)
		d->rereading = true;
	else
		d->state = FG_DSO_LOADING;
	fg_loader__submit(s->loader, &job->job, load_work, load_done);
	return 0;
}

int fg_symbolizer__prepare(struct fg_symbolizer *s, struct fg_dso *d, const char *hint)
{
	int r;

	if (!d || d->key.kind == FG_DSO_ANON)
		return 0;
	/* The clock of eviction: lookups, which only names never seen before make. */
	d->last_used_ns = fgd_now();
	if (d->state == FG_DSO_LOADED)
		return 0;
	if (d->state == FG_DSO_LOADING)
		return -EINPROGRESS;
	if (d->state == FG_DSO_FAILED &&
	    (!transient(d->error) || fgd_now() - d->failed_at < DSO_RETRY_NS))
		return 0;
	/* A table refused for its size is tried again only once there is room for it. */
	if (d->state == FG_DSO_FAILED && d->error == -ENOBUFS &&
	    fg_budget__room(s->budget, FG_BUDGET_SYMBOLS) < d->refused_bytes)
		return 0;
	r = start_load(s, d, hint, false);
	if (r < 0)
		return r;
	return d->state == FG_DSO_LOADING ? -EINPROGRESS : 0;
}

/* The symbol covering file offset `offset` of d (loading it first), and its ELF address. */
static int64_t lookup_user(struct fg_symbolizer *s, struct fg_dso *d, uint64_t offset,
			   const char *open_hint, uint64_t *ret_vaddr)
{
	*ret_vaddr = offset;
	/* With a loader, a caller that did not wait for the load gets no name. */
	(void)fg_symbolizer__prepare(s, d, open_hint);
	if (d->state != FG_DSO_LOADED ||
	    fg_elf_syms__offset_to_vaddr(d->syms, offset, ret_vaddr) < 0)
		return -1;
	return fg_elf_syms__lookup(d->syms, *ret_vaddr);
}

/*
 * d's "module+0xADDR" into buf, cut to size, for vaddr, which no symbol of
 * syms (NULL: none read) covers: the start of its function when .eh_frame
 * says where that is (fg_elf_syms__unnamed_function()), so that every
 * address of a stripped function is one frame, as a named one's are; else
 * vaddr itself; the file offset when the ELF is unreadable. Each is an
 * address addr2line takes.
 */
static void offset_name(const struct fg_dso *d, const struct fg_elf_syms *syms, uint64_t vaddr,
			char *buf, size_t size)
{
	uint64_t start;

	if (syms && fg_elf_syms__unnamed_function(syms, vaddr, &start) >= 0)
		vaddr = start;
	snprintf(buf, size, "%s+0x%" PRIx64, d->basename, vaddr);
}

const char *fg_symbolizer__name_user(struct fg_symbolizer *s, struct fg_dso *d, uint64_t offset,
				     const char *open_hint, char *buf, size_t size,
				     enum fg_sym_result *ret_result)
{
	uint64_t vaddr;
	int64_t idx;

	if (!d || d->key.kind == FG_DSO_ANON) {
		*ret_result = FG_SYM_UNKNOWN;
		return "[unknown]";
	}
	idx = lookup_user(s, d, offset, open_hint, &vaddr);
	if (idx >= 0) {
		*ret_result = FG_SYM_NAMED;
		return fg_elf_syms__name(d->syms, (size_t)idx);
	}
	offset_name(d, d->state == FG_DSO_LOADED ? d->syms : NULL, vaddr, buf, size);
	*ret_result = FG_SYM_OFFSET;
	return buf;
}

/* name, demangled into ret's buffer when asked and when it is a mangled name. */
static const char *frame_name(struct fg_sym_frames *ret, const char *name, unsigned flags)
{
	size_t left = sizeof(ret->buf) - ret->used;
	char *out = ret->buf + ret->used;
	int n;

	if (!(flags & FG_SYM_DEMANGLE) || left < 2)
		return name;
	n = fg_demangle(name, out, left);
	if (n <= 0)
		return name;
	ret->used += (size_t)n + 1;
	return out;
}

/*
 * The frames of offset in d, whose symbols are syms and DWARF dwarf (each
 * may be NULL): reads only those and what never changes in d (its
 * basename), so it can run on the loader's thread while the loop goes on,
 * with the objects a name job took when it was submitted (an eviction
 * meanwhile disposes of them on the loader's thread, after the job).
 */
static void frames_of(const struct fg_dso *d, const struct fg_elf_syms *syms,
		      struct fg_dwarf *dwarf, uint64_t offset, unsigned flags,
		      struct fg_sym_frames *ret)
{
	const char *inlined[FG_SYM_MAX_FRAMES - 1];
	struct fg_dwarf_names dn;
	uint64_t vaddr = offset;
	int64_t idx = -1;
	size_t k;

	ret->n = 1;
	ret->used = 0;
	ret->inlined = 0;
	if (syms && fg_elf_syms__offset_to_vaddr(syms, offset, &vaddr) >= 0)
		idx = fg_elf_syms__lookup(syms, vaddr);
	if (idx < 0) {
		offset_name(d, syms, vaddr, ret->buf, sizeof(ret->buf));
		ret->used = strlen(ret->buf) + 1;
		ret->result = FG_SYM_OFFSET;
		ret->names[0] = ret->buf;
		return;
	}
	ret->result = FG_SYM_NAMED;
	ret->names[0] = frame_name(ret, fg_elf_syms__name(syms, (size_t)idx), flags);
	if (!(flags & FG_SYM_INLINE) || !dwarf || fg_elf_syms__is_plt(syms, (size_t)idx))
		return;
	/* The symbol table names the real function; DWARF adds what was inlined into it. */
	dn = (struct fg_dwarf_names){
		.names = inlined,
		.max = ELEMENTSOF(inlined),
		.buf = ret->buf,
		.size = sizeof(ret->buf),
		.used = ret->used,
	};
	k = fg_dwarf__inlines(dwarf, vaddr, &dn);
	ret->used = dn.used;
	for (size_t i = 0; i < k; i++)
		ret->names[ret->n++] = frame_name(ret, inlined[i], flags);
	ret->inlined = k;
}

/* On the loop: the frames of d as it is now. */
static void frames_now(struct fg_dso *d, uint64_t offset, unsigned flags, struct fg_sym_frames *ret)
{
	if (d->state == FG_DSO_LOADED)
		frames_of(d, d->syms, d->dwarf, offset, flags, ret);
	else
		frames_of(d, NULL, NULL, offset, 0, ret);
}

static void unknown_frame(struct fg_sym_frames *ret)
{
	*ret = (struct fg_sym_frames){ .n = 1, .result = FG_SYM_UNKNOWN, .names = { "[unknown]" } };
}

void fg_symbolizer__frames_user(struct fg_symbolizer *s, struct fg_dso *d, uint64_t offset,
				const char *open_hint, unsigned flags, struct fg_sym_frames *ret)
{
	if (!d || d->key.kind == FG_DSO_ANON) {
		unknown_frame(ret);
		return;
	}
	/* With a loader, a caller that did not wait for the load gets module+offset. */
	(void)fg_symbolizer__prepare(s, d, open_hint);
	frames_now(d, offset, flags, ret);
}

/* ---- giving memory back to the budget ---- */

static int by_last_use(const void *a, const void *b)
{
	const struct fg_dso *x = *(const struct fg_dso *const *)a,
			    *y = *(const struct fg_dso *const *)b;

	return x->last_used_ns < y->last_used_ns ? -1 : x->last_used_ns > y->last_used_ns;
}

/*
 * The loaded binaries unused since before now - idle whose DWARF (dwarf
 * set) or symbol table may go, least recently used first, into *ret
 * (caller frees). A binary whose DWARF is being read again is busy.
 */
static size_t candidates(struct fg_symbolizer *s, uint64_t now, uint64_t idle, bool dwarf,
			 struct fg_dso ***ret)
{
	struct fg_dso **c = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < s->n_dsos; i++) {
		struct fg_dso *d = s->dsos[i];

		if (!d || d->state != FG_DSO_LOADED || d->rereading ||
		    d->last_used_ns + idle > now || !(dwarf ? (void *)d->dwarf : (void *)d->syms))
			continue;
		if (FG_GROW(c, cap, n + 1) < 0)
			break;
		c[n++] = d;
	}
	/* qsort may not be given NULL, even for no element. */
	if (n > 1)
		qsort(c, n, sizeof(*c), by_last_use);
	*ret = c;
	return n;
}

/*
 * Pressure: the coldest binaries' DWARF goes. Their names come from the
 * symbol table alone until the DWARF is read again (fg_symbolizer__frames()).
 */
static uint64_t evict_dwarf(void *ctx, uint64_t want, uint64_t now, uint64_t idle)
{
	struct fg_symbolizer *s = ctx;
	_cleanup_free_ struct fg_dso **c = NULL;
	size_t n = candidates(s, now, idle, true, &c), i;
	uint64_t freed = 0;

	for (i = 0; i < n && freed < want; i++) {
		struct fg_dso *d = c[i];

		freed += d->dwarf_charged;
		d->dwarf_evicted_bytes = d->dwarf_charged;
		drop_dwarf(s, d);
		d->dwarf_evicted = true;
		s->stats.dwarf_evicted++;
	}
	return i;
}

/*
 * Then the coldest binaries' symbol tables, with what DWARF they have left:
 * the binary is as if never read, and is read again, whole, by the next
 * lookup that needs it (its samples wait, as for a first read).
 */
static uint64_t evict_syms(void *ctx, uint64_t want, uint64_t now, uint64_t idle)
{
	struct fg_symbolizer *s = ctx;
	_cleanup_free_ struct fg_dso **c = NULL;
	size_t n = candidates(s, now, idle, false, &c), i;
	uint64_t freed = 0;

	for (i = 0; i < n && freed < want; i++) {
		struct fg_dso *d = c[i];

		freed += d->syms_charged + d->dwarf_charged;
		drop_dwarf(s, d);
		drop_syms(s, d);
		d->dwarf_evicted = false;
		d->state = FG_DSO_UNLOADED;
		s->stats.symbols_evicted++;
	}
	return i;
}

/* ---- names found off the loop (kept in fgd-namecache.h for every recording) ---- */

struct name_job {
	struct fg_loader_job job;
	struct fg_dso *dso; /* owned reference */
	/*
	 * d's at submission, borrowed: an eviction that takes them from the dso
	 * disposes of them on the loader's thread, which runs jobs in order, so
	 * after this one.
	 */
	const struct fg_elf_syms *syms;
	struct fg_dwarf *dwarf;
	struct fg_name_key key;
	uint64_t offset; /* the address asked for, which key may not hold */
	struct fg_sym_frames out;
};

/* Gives back the pages of mapped DWARF that name jobs read, on the loader's thread. */
struct drop_job {
	struct fg_loader_job job;
	size_t n;
	/* borrowed: disposed of only after this job (the loader's order) */
	struct fg_dwarf *dwarf[];
};

static void drop_work(struct fg_loader_job *j)
{
	struct drop_job *job = (struct drop_job *)j;

	for (size_t i = 0; i < job->n; i++)
		fg_dwarf__drop_pages(job->dwarf[i]);
}

static void drop_done(struct fg_loader_job *j, bool cancelled)
{
	free(j);
}

/*
 * Once the loader has named every address it was given, the pages those
 * walks touched go back to the page cache: the RSS of mapped DWARF is what
 * one batch of lookups reads, not what every lookup ever read.
 */
static void drop_touched(struct fg_symbolizer *s)
{
	struct drop_job *job = malloc(sizeof(*job) + s->n_touched * sizeof(job->dwarf[0]));

	if (job) {
		job->n = 0;
		for (size_t i = 0; i < s->n_touched; i++)
			if (s->touched[i]->dwarf)
				job->dwarf[job->n++] = s->touched[i]->dwarf;
		fg_loader__submit(s->loader, &job->job, drop_work, drop_done);
	}
	/* Their dispose jobs, if these references were the last, come after the drop job. */
	for (size_t i = 0; i < s->n_touched; i++) {
		s->touched[i]->dwarf_touched = false;
		fg_dso__unref(s->touched[i]);
	}
	s->n_touched = 0;
}

/* Notes that a name job will read d's DWARF, if it is mapped. */
static void touch(struct fg_symbolizer *s, struct fg_dso *d)
{
	if (d->dwarf_touched || !d->dwarf || fg_dwarf__mapped(d->dwarf) == 0 ||
	    FG_GROW(s->touched, s->cap_touched, s->n_touched + 1) < 0)
		return;
	s->touched[s->n_touched++] = fg_dso__ref(d);
	d->dwarf_touched = true;
}

static void name_work(struct fg_loader_job *j)
{
	struct name_job *job = (struct name_job *)j;

	frames_of(job->dso, job->syms, job->dwarf, job->offset, job->key.flags & ~FG_NAME_BY_SYMBOL,
		  &job->out);
}

static void name_done(struct fg_loader_job *j, bool cancelled)
{
	struct name_job *job = (struct name_job *)j;
	struct fg_symbolizer *s = job->dso->owner;
	struct fg_name_entry *e = fg_name_cache__find(s->names, &job->key);

	s->name_jobs--;
	/* A reset while the job ran took its entry away: the answer still counts. */
	if (!e && !cancelled)
		e = fg_name_cache__add(s->names, &job->key);
	if (e) {
		e->pending = false;
		if (cancelled || !fg_name_cache__fill(s->names, e, &job->out))
			e->n = 0; /* nothing known: asked again */
	}
	/* The walk may have built the DWARF's CU table: its bytes grew. */
	if (job->dso->dwarf && job->dso->dwarf == job->dwarf)
		account_dwarf(s, job->dso);
	fg_dso__unref(job->dso);
	free(job);
	/*
	 * Once a second at most: each drop unmaps pages the next walks fault in
	 * again, and takes the kernel a TLB shootdown (measured: dropping after
	 * every batch cost the loader a third more CPU).
	 */
	if (s->name_jobs == 0 && s->n_touched > 0 &&
	    fgd_now() - s->dropped_at >= DROP_INTERVAL_NS) {
		drop_touched(s);
		s->dropped_at = fgd_now();
	}
}

/*
 * Whether naming offset in loaded d takes DWARF or demangling, work for the
 * loader's thread; if so, *ret_key is what the answer is kept under.
 */
static bool costly(const struct fg_dso *d, uint64_t offset, unsigned flags,
		   struct fg_name_key *ret_key)
{
	uint64_t vaddr;
	int64_t idx;
	const char *name;

	if (d->state != FG_DSO_LOADED || fg_elf_syms__offset_to_vaddr(d->syms, offset, &vaddr) < 0)
		return false;
	idx = fg_elf_syms__lookup(d->syms, vaddr);
	if (idx < 0)
		return false;
	/*
	 * A PLT entry has no inline frames: no unit covers it, and asking would
	 * have libdw's table of units fail, and then ours be built (a walk of
	 * every unit: 10 ms for libc's, whose PLT is called all the time).
	 */
	if ((flags & FG_SYM_INLINE) && d->dwarf && !fg_elf_syms__is_plt(d->syms, (size_t)idx)) {
		*ret_key = (struct fg_name_key){ d->serial, offset, (uint8_t)flags };
		return true;
	}
	name = fg_elf_syms__name(d->syms, (size_t)idx);
	/* Itanium C++ and Rust v0 names: what libiberty would work on. */
	if (!(flags & FG_SYM_DEMANGLE) || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return false;
	*ret_key = (struct fg_name_key){ d->serial, fg_elf_syms__addr(d->syms, (size_t)idx),
					 (uint8_t)(flags | FG_NAME_BY_SYMBOL) };
	return true;
}

bool fg_symbolizer__function(const struct fg_dso *d, uint64_t offset, unsigned flags,
			     uint64_t *ret_function)
{
	uint64_t vaddr, start;
	int64_t idx;

	/* As frames_of() names it: the symbol's name, and DWARF's inline frames if any. */
	if (!d || d->key.kind == FG_DSO_ANON || d->state != FG_DSO_LOADED || !d->syms ||
	    fg_elf_syms__offset_to_vaddr(d->syms, offset, &vaddr) < 0)
		return false;
	idx = fg_elf_syms__lookup(d->syms, vaddr);
	/* No symbol: "module+0xSTART" for a function .eh_frame knows (offset_name()), no DWARF. */
	if (idx < 0) {
		idx = fg_elf_syms__unnamed_function(d->syms, vaddr, &start);
		if (idx < 0)
			return false;
		/* Numbered after the symbols. */
		*ret_function = fg_elf_syms__count(d->syms) + (uint64_t)idx;
		return true;
	}
	if ((flags & FG_SYM_INLINE) && (d->dwarf || d->dwarf_evicted || d->rereading) &&
	    !fg_elf_syms__is_plt(d->syms, (size_t)idx))
		return false;
	*ret_function = (uint64_t)idx;
	return true;
}

int fg_symbolizer__frames(struct fg_symbolizer *s, struct fg_dso *d, uint64_t offset,
			  const char *open_hint, unsigned flags, struct fg_sym_frames *ret)
{
	bool nowait = flags & FG_SYM_NOWAIT;
	struct fg_name_key k;
	struct name_job *job;
	struct fg_name_entry *e;
	int r;

	if (!d || d->key.kind == FG_DSO_ANON) {
		unknown_frame(ret);
		return 0;
	}
	r = fg_symbolizer__prepare(s, d, open_hint);
	if (r == -EINPROGRESS && (flags & FG_SYM_NOWAIT)) {
		/* Not loaded yet: the binary is known, its symbols are not. */
		frames_now(d, offset, 0, ret);
		return 1;
	}
	if (r < 0)
		return r;
	flags &= ~FG_SYM_NOWAIT;
	/*
	 * Its DWARF was given up under memory pressure: read again once the
	 * budget has room for what it held (and not more often than a failed
	 * load is retried); until then, no inline frames, counted.
	 */
	if ((flags & FG_SYM_INLINE) && d->state == FG_DSO_LOADED && d->dwarf_evicted) {
		if (!d->rereading && fgd_now() - d->failed_at >= DSO_RETRY_NS &&
		    dwarf_room(s) >= d->dwarf_evicted_bytes &&
		    start_load(s, d, open_hint, true) < 0)
			return -ENOMEM;
		if (d->rereading) {
			if (!nowait)
				return -EINPROGRESS;
			frames_now(d, offset, 0, ret);
			return 1;
		}
		if (d->dwarf_evicted) {
			s->stats.inline_skipped++;
			flags &= ~FG_SYM_INLINE;
		}
	}
	if (!s->loader || !costly(d, offset, flags, &k)) {
		frames_now(d, offset, flags, ret);
		return 0;
	}
	e = fg_name_cache__find(s->names, &k);
	if (e && e->pending && nowait) {
		/* The symbol table's name, as it is: no DWARF, no demangling here. */
		frames_now(d, offset, 0, ret);
		return 1;
	}
	if (e && e->pending)
		return -EINPROGRESS;
	if (e && e->n > 0) {
		fg_name_cache__frames(s->names, e, ret);
		s->stats.resolved_hits++;
		return 0;
	}
	if (s->name_jobs >= MAX_NAME_JOBS) {
		/* The loader has enough to do: the caller asks again once it has done some. */
		s->stats.resolved_waits++;
		if (!nowait)
			return -EINPROGRESS;
		frames_now(d, offset, 0, ret);
		return 1;
	}
	if (!e && !(e = fg_name_cache__add(s->names, &k)))
		return -ENOMEM;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->dso = fg_dso__ref(d);
	job->syms = d->syms;
	job->dwarf = d->dwarf;
	if (flags & FG_SYM_INLINE)
		touch(s, d);
	job->key = k;
	job->offset = offset;
	e->pending = true;
	s->name_jobs++;
	s->stats.resolved_jobs++;
	fg_loader__submit(s->loader, &job->job, name_work, name_done);
	if (!nowait)
		return -EINPROGRESS;
	frames_now(d, offset, 0, ret);
	return 1;
}

const char *fg_symbolizer__name_kernel(struct fg_symbolizer *s, uint64_t addr)
{
	return fg_kernel_syms__name(s->kernel, addr);
}

const char *fg_symbolizer__kernel_build_id(struct fg_symbolizer *s)
{
	return fg_kernel_syms__build_id(s->kernel);
}

int fg_symbolizer__refresh_kernel(struct fg_symbolizer *s, bool force)
{
	return fg_kernel_syms__refresh(s->kernel, force);
}

void fg_symbolizer__stats(const struct fg_symbolizer *s, struct fg_status_symbols *ret)
{
	*ret = s->stats;
	ret->dwarf_bytes = s->dwarf_bytes;
	ret->dwarf_mapped = s->dwarf_mapped;
	ret->symbols_bytes = s->symbols_bytes;
	fg_name_cache__stats(s->names, ret);
	fg_kernel_syms__stats(s->kernel, ret);
}
