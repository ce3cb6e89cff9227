/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>

#include "fgd-clock.h"
#include "fgd-debuginfo.h"
#include "fgd-demangle.h"
#include "fgd-dwarf.h"
#include "fgd-elf.h"
#include "fgd-root.h"
#include "fgd-symbols.h"
#include "hash.h"
#include "idxmap.h"
#include "kallsyms.h"
#include "macro.h"

/* Every binary mapped on a big host fits; past this, frames show as [unknown]. */
#define MAX_DSOS 65536
/* A binary that failed to load for a reason that may pass is retried this often at most. */
#define DSO_RETRY_NS (5ULL * 1000000000ULL)
/* Kernel reloads forced by unresolved addresses are at most this frequent. */
#define KALLSYMS_MIN_INTERVAL_NS (10ULL * 1000000000ULL)
/* DWARF is held in memory (see fgd-dwarf.h); past this total, binaries get no inline frames. */
#define MAX_DWARF_BYTES (UINT64_C(2) << 30)
#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

struct fg_dso {
	unsigned refs;
	uint32_t slot;                /* index in the owner's table */
	struct fg_symbolizer *owner;  /* borrowed; outlives every dso */
	struct fg_dso_key key;
	bool in_build_id_index, in_inode_index;
	char *path;                   /* owned */
	char *open_path;              /* owned; where to read it if not path; may be NULL */
	struct fg_root *root;         /* owned reference: where path means something; NULL: ours */
	const char *basename;         /* borrowed from path */
	enum fg_dso_state state;
	int error;
	uint64_t failed_at;           /* CLOCK_MONOTONIC ns of the last failed load */
	struct fg_elf_syms *syms;     /* owned once loaded */
	struct fg_dwarf *dwarf;       /* owned once loaded; NULL: no DWARF */
};

struct fg_symbolizer {
	struct fg_dso **dsos; /* owned array of borrowed pointers; NULL = free slot */
	size_t n_dsos, cap_dsos;
	uint32_t *free_slots; /* owned */
	size_t n_free, cap_free;
	struct fg_idxmap by_build_id, by_inode;
	size_t live;

	char *debug_dir; /* owned */
	uint64_t dwarf_bytes; /* held by the dsos' DWARF */

	struct fg_kallsyms *kallsyms; /* owned */
	uint64_t modules_hash;
	uint64_t kallsyms_loaded_at; /* CLOCK_MONOTONIC ns; 0 = never */

	struct fg_symbolizer_stats stats;
};

int fg_symbolizer__new(struct fg_symbolizer **ret)
{
	struct fg_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->debug_dir = strdup(DEFAULT_DEBUG_DIR);
	if (!s->debug_dir) {
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
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

static void dso_free(struct fg_dso *d)
{
	if (d->dwarf)
		d->owner->dwarf_bytes -= fg_dwarf__bytes(d->dwarf);
	fg_dwarf__free(d->dwarf);
	fg_elf_syms__free(d->syms);
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
	free(s->dsos);
	free(s->free_slots);
	fg_idxmap_done(&s->by_build_id);
	fg_idxmap_done(&s->by_inode);
	fg_kallsyms__free(s->kallsyms);
	free(s->debug_dir);
	free(s);
	return NULL;
}

static uint64_t build_id_hash(const uint8_t *id, size_t len)
{
	return fg_hash_bytes(id, len, 0x6275696c64ULL);
}

static uint64_t inode_hash(uint64_t dev, uint64_t ino)
{
	return fg_hash_combine(fg_hash_mix(dev), ino);
}

static bool eq_build_id(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_symbolizer *s = ctx;
	const struct fg_dso_key *k = key;
	const struct fg_dso_key *dk = &s->dsos[idx]->key;

	return dk->build_id_len == k->build_id_len &&
	       memcmp(dk->build_id, k->build_id, k->build_id_len) == 0;
}

static bool eq_inode(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_symbolizer *s = ctx;
	const struct fg_dso_key *k = key;
	const struct fg_dso_key *dk = &s->dsos[idx]->key;

	return dk->dev == k->dev && dk->ino == k->ino;
}

static struct fg_dso *find(struct fg_symbolizer *s, const struct fg_dso_key *k)
{
	int64_t i = -1;

	if (k->build_id_len)
		i = fg_idxmap_find(&s->by_build_id, build_id_hash(k->build_id, k->build_id_len),
				   eq_build_id, s, k);
	if (i < 0 && k->ino)
		i = fg_idxmap_find(&s->by_inode, inode_hash(k->dev, k->ino), eq_inode, s, k);
	return i >= 0 ? s->dsos[i] : NULL;
}

/*
 * Opens path, as seen from root (NULL: ours), for reading if it is a regular
 * file. Never blocks: paths come from other users' processes, and a FIFO or a
 * device there must not stall the daemon. Returns the fd or a negative errno
 * (-EINVAL: not a regular file).
 */
static int open_regular(const struct fg_root *root, const char *path)
{
	_cleanup_close_ int fd = fg_root__open(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return TAKE_FD(fd);
}

/* Reads the GNU build-id note of an ELF file. Returns its length, 0 if none, or -errno. */
static int read_build_id(const struct fg_root *root, const char *path, uint8_t *buf, size_t size)
{
	_cleanup_close_ int fd = open_regular(root, path);
	Elf *elf;
	size_t n_phdrs;
	int r = 0;

	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n_phdrs) < 0) {
		elf_end(elf);
		return -ENOEXEC;
	}
	for (size_t i = 0; i < n_phdrs && r == 0; i++) {
		GElf_Phdr ph;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
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

static int add_index(struct fg_symbolizer *s, struct fg_dso *d)
{
	int r;

	if (d->key.build_id_len && !d->in_build_id_index) {
		r = fg_idxmap_insert(&s->by_build_id,
				     build_id_hash(d->key.build_id, d->key.build_id_len), d->slot);
		if (r < 0)
			return r;
		d->in_build_id_index = true;
	}
	if (d->key.ino && !d->in_inode_index) {
		r = fg_idxmap_insert(&s->by_inode, inode_hash(d->key.dev, d->key.ino), d->slot);
		if (r < 0)
			return r;
		d->in_inode_index = true;
	}
	return 0;
}

/* Takes d out of the indices and gives its slot back. */
static void release_slot(struct fg_symbolizer *s, struct fg_dso *d)
{
	if (d->in_build_id_index)
		fg_idxmap_remove(&s->by_build_id, build_id_hash(d->key.build_id, d->key.build_id_len),
				 d->slot);
	if (d->in_inode_index)
		fg_idxmap_remove(&s->by_inode, inode_hash(d->key.dev, d->key.ino), d->slot);
	d->in_build_id_index = d->in_inode_index = false;
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
		s->stats.dsos_dropped++;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->refs = 1;
	d->owner = s;
	d->key = *key;
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
	s->stats.dsos = s->live;
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
	d->owner->stats.dsos = d->owner->live;
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

struct fg_dwarf *fg_dso__dwarf(struct fg_dso *d)
{
	return d->state == FG_DSO_LOADED ? d->dwarf : NULL;
}

enum fg_dso_kind fg_dso__kind(const struct fg_dso *d)
{
	return d->key.kind;
}

int fg_vdso_image(const void **ret, size_t *ret_size)
{
	_cleanup_(fclosep) FILE *f = NULL;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[512];

	if (!base)
		return -ENOENT;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return negative_errno();
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base && strstr(line, "[vdso]")) {
			*ret = (const void *)start;
			*ret_size = end - start;
			return 0;
		}
	}
	return -ENOENT;
}

static int load_vdso(struct fg_elf_syms **ret)
{
	const void *image;
	size_t size;
	int r = fg_vdso_image(&image, &size);

	return r < 0 ? r : fg_elf_syms__load_mem(image, size, ret);
}

/*
 * Separate debug information, then DWARF for inline frames. Both only add
 * to what the binary itself gave, so a failure here is not the dso's.
 */
static void load_debug(struct fg_dso *d, int fd)
{
	struct fg_symbolizer *s = d->owner;
	_cleanup_close_ int dfd = -1;
	enum fg_debuginfo_how how;
	struct stat st;
	int r;

	/*
	 * A binary with every symbol and its DWARF needs nothing more. The
	 * mapping process's root first (a container's debug files are in it),
	 * then the host's: a debug file is accepted only if it is this
	 * binary's, wherever it was found.
	 */
	if (fg_elf_syms__source(d->syms) != FG_ELF_SYMTAB || !fg_elf_syms__has_dwarf(d->syms)) {
		if (d->root)
			dfd = fg_debuginfo_find(&(struct fg_debuginfo_query){ d->root, s->debug_dir, d->path },
						d->syms, &how);
		if (dfd < 0)
			dfd = fg_debuginfo_find(&(struct fg_debuginfo_query){ NULL, s->debug_dir, d->path },
						d->syms, &how);
		if (dfd >= 0)
			s->stats.dsos_debug_file++;
	}
	if (fg_elf_syms__source(d->syms) == FG_ELF_MINIDEBUGINFO)
		s->stats.dsos_minidebuginfo++;
	if (dfd < 0 && !fg_elf_syms__has_dwarf(d->syms))
		return;
	if (fstat(dfd >= 0 ? dfd : fd, &st) < 0)
		return;
	if (s->dwarf_bytes + (uint64_t)st.st_size > MAX_DWARF_BYTES) {
		s->stats.dwarf_dropped++;
		return;
	}
	r = fg_dwarf__new(dfd >= 0 ? dfd : fd, &d->dwarf);
	if (r == -EFBIG)
		s->stats.dwarf_dropped++;
	if (r < 0)
		return;
	s->dwarf_bytes += fg_dwarf__bytes(d->dwarf);
	s->stats.dsos_dwarf++;
}

int fg_dso__open(const struct fg_dso *d, const char *hint)
{
	const char *tries[] = { hint, d->open_path, d->path };
	int fd = -ENOENT;

	if (d->key.kind != FG_DSO_FILE)
		return -ENOENT;
	/* The /proc paths are the daemon's; the mapped path is the process's, under its root. */
	for (size_t i = 0; i < ELEMENTSOF(tries) && fd < 0; i++)
		if (tries[i])
			fd = open_regular(tries[i] == d->path ? d->root : NULL, tries[i]);
	return fd;
}

const struct fg_dso_key *fg_dso__key(const struct fg_dso *d)
{
	return &d->key;
}

bool fg_dso__is_file(const struct fg_dso *d, const uint8_t *id, size_t id_len, const struct stat *st)
{
	const struct fg_dso_key *k = &d->key;

	if (k->build_id_len)
		return id_len == k->build_id_len && memcmp(id, k->build_id, id_len) == 0;
	return !k->ino || ((uint64_t)st->st_ino == k->ino && (uint64_t)st->st_dev == k->dev);
}

static int load_file(struct fg_dso *d, const char *hint)
{
	_cleanup_close_ int fd = fg_dso__open(d, hint);
	struct fg_elf_syms *syms = NULL;
	const uint8_t *id;
	struct stat st;
	size_t id_len;
	int r;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	r = fg_elf_syms__load_fd(fd, &syms);
	if (r < 0)
		return r;
	/*
	 * Never a wrong name: the file at this path must be the one that was
	 * mapped. A package upgrade replaces it under the running process.
	 */
	id_len = fg_elf_syms__build_id(syms, &id);
	if (!fg_dso__is_file(d, id, id_len, &st)) {
		fg_elf_syms__free(syms);
		return -ESTALE;
	}
	d->syms = syms;
	load_debug(d, fd);
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
		return true;
	default:
		return false;
	}
}

static void ensure_loaded(struct fg_symbolizer *s, struct fg_dso *d, const char *hint)
{
	uint64_t now;
	int r;

	if (d->state == FG_DSO_LOADED)
		return;
	if (d->state == FG_DSO_FAILED) {
		now = fgd_now();
		if (!transient(d->error) || now - d->failed_at < DSO_RETRY_NS)
			return;
	}
	r = d->key.kind == FG_DSO_VDSO ? load_vdso(&d->syms) : load_file(d, hint);
	if (r < 0) {
		/* Count each binary once, however often it is retried. */
		if (d->state != FG_DSO_FAILED)
			s->stats.dsos_failed++;
		d->state = FG_DSO_FAILED;
		d->error = r;
		d->failed_at = fgd_now();
		return;
	}
	d->state = FG_DSO_LOADED;
	d->error = 0;
	s->stats.dsos_loaded++;
}

/* The symbol covering file offset `offset` of d (loading it first), and its ELF address. */
static int64_t lookup_user(struct fg_symbolizer *s, struct fg_dso *d, uint64_t offset,
			   const char *open_hint, uint64_t *ret_vaddr)
{
	*ret_vaddr = offset;
	ensure_loaded(s, d, open_hint);
	if (d->state != FG_DSO_LOADED ||
	    fg_elf_syms__offset_to_vaddr(d->syms, offset, ret_vaddr) < 0)
		return -1;
	return fg_elf_syms__lookup(d->syms, *ret_vaddr);
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
	/* The address addr2line would want, or the file offset when the ELF is unreadable. */
	snprintf(buf, size, "%s+0x%" PRIx64, d->basename, vaddr);
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

void fg_symbolizer__frames_user(struct fg_symbolizer *s, struct fg_dso *d, uint64_t offset,
				const char *open_hint, unsigned flags, struct fg_sym_frames *ret)
{
	const char *inlined[FG_SYM_MAX_FRAMES - 1];
	struct fg_dwarf_names dn;
	uint64_t vaddr;
	int64_t idx;
	size_t k;

	ret->n = 1;
	ret->used = 0;
	ret->inlined = 0;
	if (!d || d->key.kind == FG_DSO_ANON) {
		ret->result = FG_SYM_UNKNOWN;
		ret->names[0] = "[unknown]";
		return;
	}
	idx = lookup_user(s, d, offset, open_hint, &vaddr);
	if (idx < 0) {
		snprintf(ret->buf, sizeof(ret->buf), "%s+0x%" PRIx64, d->basename, vaddr);
		ret->used = strlen(ret->buf) + 1;
		ret->result = FG_SYM_OFFSET;
		ret->names[0] = ret->buf;
		return;
	}
	ret->result = FG_SYM_NAMED;
	ret->names[0] = frame_name(ret, fg_elf_syms__name(d->syms, (size_t)idx), flags);
	if (!(flags & FG_SYM_INLINE) || !d->dwarf)
		return;
	/* The symbol table names the real function; DWARF adds what was inlined into it. */
	dn = (struct fg_dwarf_names){
		.names = inlined,
		.max = ELEMENTSOF(inlined),
		.buf = ret->buf,
		.size = sizeof(ret->buf),
		.used = ret->used,
	};
	k = fg_dwarf__inlines(d->dwarf, vaddr, &dn);
	ret->used = dn.used;
	for (size_t i = 0; i < k; i++)
		ret->names[ret->n++] = frame_name(ret, inlined[i], flags);
	ret->inlined = k;
}

const char *fg_symbolizer__name_kernel(struct fg_symbolizer *s, uint64_t addr)
{
	int64_t idx;

	if (!s->kallsyms)
		return NULL;
	idx = fg_kallsyms__lookup(s->kallsyms, addr);
	return idx >= 0 ? fg_kallsyms__name(s->kallsyms, (size_t)idx) : NULL;
}

/* Reads a whole /proc file; *ret is caller-freed. */
static int read_proc_file(const char *path, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	if (fd < 0)
		return negative_errno();
	for (;;) {
		ssize_t n;

		if (FG_GROW(buf, cap, len + 65536) < 0)
			return -ENOMEM;
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

static uint64_t modules_hash(void)
{
	_cleanup_free_ char *text = NULL;
	size_t len;

	/* Kernels without module support have no /proc/modules: hash as empty. */
	if (read_proc_file("/proc/modules", &text, &len) < 0)
		return 0;
	return fg_hash_bytes(text, len, 1);
}

int fg_symbolizer__refresh_kernel(struct fg_symbolizer *s, bool force)
{
	_cleanup_free_ char *text = NULL;
	struct fg_kallsyms *k;
	uint64_t now = fgd_now(), mh = modules_hash();
	size_t len;
	int r;

	if (s->kallsyms && mh == s->modules_hash &&
	    (!force || now - s->kallsyms_loaded_at < KALLSYMS_MIN_INTERVAL_NS))
		return 0;
	r = read_proc_file("/proc/kallsyms", &text, &len);
	if (r < 0)
		return r;
	r = fg_kallsyms__parse(text, len, &k);
	if (r < 0)
		return r;
	fg_kallsyms__free(s->kallsyms);
	s->kallsyms = k;
	s->modules_hash = mh;
	s->kallsyms_loaded_at = now;
	s->stats.kallsyms = fg_kallsyms__count(k);
	s->stats.kallsyms_loads++;
	s->stats.kernel_restricted = fg_kallsyms__restricted(k);
	return 1;
}

void fg_symbolizer__stats(const struct fg_symbolizer *s, struct fg_symbolizer_stats *ret)
{
	*ret = s->stats;
	ret->dwarf_bytes = s->dwarf_bytes;
}
