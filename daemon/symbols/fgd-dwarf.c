/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/macro.h"
#include "base/u32map.h"
#include "symbols/fgd-dwarf.h"
#include "symbols/fgd-elffile.h"

/* Deeper inline nesting than this is not real code; it bounds the walk. */
#define MAX_SCOPES 256

/* Compile units can be many; past this, addresses beyond the table find no inline frames. */
#define MAX_CU_RANGES (1u << 22)

/*
 * The inline indexes of one binary together take no more than this; past
 * it, the units not indexed yet are looked into with a DIE walk per address
 * (fg_dwarf__inlines_walk()), slow but without memory of its own.
 */
#define MAX_INDEX_BYTES (UINT64_C(256) << 20)

/* One address range of a compile unit. */
struct cu_range {
	uint64_t lo, hi; /* [lo, hi) */
	Dwarf_Off cu;    /* the CU DIE's offset */
};

/*
 * libdw's own tables, estimated (fg_dwarf__bytes()): measured on this
 * machine's libc (its Debian debug file), libpython and node, with an
 * inline lookup at four addresses of every function, libdw held 3.5 to 4
 * times the bytes of .debug_abbrev once parsed (an abbreviation table per
 * unit, however many units share one) and about the size of
 * .debug_aranges. Counted in full from the start, so the budget is never
 * charged less than the DWARF grows to.
 */
#define LIBDW_ABBREV_FACTOR 4
/*
 * Walking every unit (the CU table) touches every page of a mapped
 * .debug_info, and the kernel maps the pages around each fault too: they
 * are given back every this many bytes walked, so a file of hundreds of
 * MiB does not sit in the RSS for the length of the walk.
 */
#define DROP_EVERY (UINT64_C(16) << 20)

struct fg_dwarf {
	struct fg_elf_file file; /* owned: the mapping or the copies libelf read */
	Dwarf *dbg;              /* owned */
	uint64_t heap;           /* sections copied or inflated onto the heap */
	uint64_t mapped;         /* sections read in place from the mapping */
	uint64_t libdw;          /* the estimate of libdw's tables */
	/*
	 * Which CU covers an address. .debug_aranges says so when present, but
	 * clang does not emit it by default: then the CUs' own ranges, sorted
	 * once, on first use.
	 */
	struct cu_range *ranges; /* owned */
	size_t n_ranges, cap_ranges;
	bool ranges_built;
	/*
	 * Each unit's inline index (struct unit_index, owned), by its CU DIE's
	 * offset, built on the first lookup into the unit; a unit whose index
	 * could not be built (no memory) maps to &no_index.
	 */
	struct fg_u32map indexes;
	/* The CU table's and the indexes' bytes: read by other threads (__atomic). */
	uint64_t built_bytes;
	/*
	 * Where the sections that hold names lie (.debug_str, .debug_line_str,
	 * and .debug_info and .debug_types for names spelled inline): libdw
	 * hands out a name as a pointer into them without finding its end, so
	 * a name there is used only if it ends before its section does.
	 */
	struct {
		uintptr_t lo, hi; /* [lo, hi): borrowed from libelf's data */
	} names[8];
	size_t n_names;
};

/*
 * A function or an inlined instance of a unit: a node of the tree of what
 * is inlined into what.
 */
struct inline_node {
	Dwarf_Off die;   /* its DIE */
	uint32_t parent; /* the node it is inlined into; NO_NODE for a function */
	bool inlined;    /* DW_TAG_inlined_subroutine, else DW_TAG_subprogram */
};

#define NO_NODE UINT32_MAX

/* An address range whose innermost function or inlined instance is one node. */
struct inline_seg {
	uint64_t lo, hi; /* [lo, hi) */
	uint32_t node;
};

/*
 * The inline index of a unit: its code cut into segments, sorted and
 * disjoint, each with its innermost node. A lookup is a binary search, then
 * a walk up the parents: what dwarf_getscopes() finds by walking the
 * unit's DIEs, for every address anew.
 */
struct unit_index {
	struct inline_node *nodes; /* owned */
	size_t n_nodes, cap_nodes;
	struct inline_seg *segs; /* owned */
	size_t n_segs, cap_segs;
	bool qualified; /* the unit's language qualifies names (qualified_language()) */
};

/* What a unit maps to when its index could not be built (no memory). */
static struct unit_index no_index;

static void unit_index_free(struct unit_index *ix)
{
	if (!ix || ix == &no_index)
		return;
	free(ix->nodes);
	free(ix->segs);
	free(ix);
}

static uint64_t unit_index_bytes(const struct unit_index *ix)
{
	return sizeof(*ix) + ix->cap_nodes * sizeof(*ix->nodes) + ix->cap_segs * sizeof(*ix->segs);
}

struct fg_dwarf *fg_dwarf__free(struct fg_dwarf *d)
{
	if (!d)
		return NULL;
	if (d->dbg)
		dwarf_end(d->dbg);
	fg_elf_file_close(&d->file);
	free(d->ranges);
	for (size_t i = 0; i < d->indexes.n; i++)
		unit_index_free(d->indexes.vals[i]);
	fg_u32map_done(&d->indexes);
	free(d);
	return NULL;
}

/*
 * The part of a .debug_ or .zdebug_ section name libdw knows it by, without
 * a .dwo suffix; NULL for other sections.
 */
static const char *debug_kind(const char *name, size_t *ret_len)
{
	const char *k;
	size_t len;

	if (strncmp(name, ".debug_", 7) == 0)
		k = name + 7;
	else if (strncmp(name, ".zdebug_", 8) == 0)
		k = name + 8;
	else
		return NULL;
	len = strlen(k);
	if (len > 4 && strcmp(k + len - 4, ".dwo") == 0)
		len -= 4;
	*ret_len = len;
	return k;
}

/* What inline frames need of the debug sections; every other section is left as it is. */
static bool keep_section(const char *name)
{
	static const char *const wanted[] = { "info",        "abbrev", "str",     "line_str",
					      "str_offsets", "addr",   "aranges", "ranges",
					      "rnglists",    "types" };
	size_t len;
	const char *k = debug_kind(name, &len);

	if (!k)
		return true;
	for (size_t i = 0; i < ELEMENTSOF(wanted); i++)
		if (strlen(wanted[i]) == len && strncmp(k, wanted[i], len) == 0)
			return true;
	return false;
}

/*
 * What the kept debug sections will take on the heap once libdw has them:
 * inflated size if compressed, else their size unless they are mapped.
 * Also what libdw's tables will take (LIBDW_ABBREV_FACTOR).
 */
static uint64_t heap_needed(struct fg_dwarf *d, uint64_t *ret_libdw)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, len;
	uint64_t sum = 0, abbrev = 0, aranges = 0;

	*ret_libdw = 0;
	if (elf_getshdrstrndx(d->file.elf, &shstrndx) < 0)
		return (void)elf_errno(), 0;
	while ((scn = elf_nextscn(d->file.elf, scn))) {
		const char *name, *k;
		GElf_Shdr sh;
		GElf_Chdr ch;
		uint64_t size;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(d->file.elf, shstrndx, sh.sh_name);
		if (!name || !(k = debug_kind(name, &len)))
			continue;
		/* Inflated, or as stored; it stays in the mapping only if neither is needed. */
		size = sh.sh_size;
		if (sh.sh_flags & SHF_COMPRESSED)
			size = gelf_getchdr(scn, &ch) ? ch.ch_size : 0;
		if ((sh.sh_flags & SHF_COMPRESSED) || !d->file.map)
			sum += size;
		if (len == 6 && strncmp(k, "abbrev", 6) == 0)
			abbrev = size;
		else if (len == 7 && strncmp(k, "aranges", 7) == 0)
			aranges = size;
	}
	(void)elf_errno();
	*ret_libdw = abbrev * LIBDW_ABBREV_FACTOR + aranges;
	return sum;
}

/* Where libdw's sections ended up: in the mapping, or on the heap. */
static void count_sections(struct fg_dwarf *d)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, len;

	if (elf_getshdrstrndx(d->file.elf, &shstrndx) < 0)
		return (void)elf_errno();
	while ((scn = elf_nextscn(d->file.elf, scn))) {
		const char *name;
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(d->file.elf, shstrndx, sh.sh_name);
		if (!name || !debug_kind(name, &len))
			continue;
		/* libdw has read it already (or failed to): this is libelf's cached data. */
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		if (fg_elf_file_mapped(&d->file, data->d_buf))
			d->mapped += data->d_size;
		else
			d->heap += data->d_size;
		if ((strcmp(name, ".debug_str") == 0 || strcmp(name, ".debug_line_str") == 0 ||
		     strcmp(name, ".debug_info") == 0 || strcmp(name, ".debug_types") == 0) &&
		    d->n_names < ELEMENTSOF(d->names)) {
			d->names[d->n_names].lo = (uintptr_t)data->d_buf;
			d->names[d->n_names++].hi = (uintptr_t)data->d_buf + data->d_size;
		}
	}
	(void)elf_errno();
}

/*
 * s, a name libdw read, if it ends (a NUL) within the section it lies in;
 * NULL if it runs off its end (a damaged or hostile file). A name from
 * elsewhere (a supplementary file's .debug_str) is taken as libdw gives it.
 */
static const char *checked_name(const struct fg_dwarf *d, const char *s)
{
	uintptr_t p = (uintptr_t)s;

	if (!s)
		return NULL;
	for (size_t i = 0; i < d->n_names; i++)
		if (p >= d->names[i].lo && p <= d->names[i].hi)
			return memchr(s, 0, d->names[i].hi - p) ? s : NULL;
	return s;
}

int fg_dwarf__new(int fd, bool map, uint64_t max_heap, struct fg_dwarf **ret)
{
	_cleanup_(fg_dwarf__freep) struct fg_dwarf *d = NULL;
	struct stat st;
	uint64_t need;
	int r;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (map && (uint64_t)st.st_size > FG_DWARF_MAX_MAPPED)
		return -EFBIG;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	r = fg_elf_file_open(fd, map, &d->file);
	if (r < 0)
		return r == -ENOEXEC ? -EINVAL : r;
	r = fg_elf_file_keep_sections(&d->file, keep_section);
	if (r < 0)
		return r;
	/* Refused before a byte of it is read or inflated. */
	need = heap_needed(d, &d->libdw);
	if (need + d->libdw > MIN(max_heap, FG_DWARF_MAX_READ))
		return -EFBIG;
	d->dbg = dwarf_begin_elf(d->file.elf, DWARF_C_READ, NULL);
	if (!d->dbg)
		return (void)dwarf_errno(), -ENODATA;
	/* Everything libdw reads is read now: the file can go. */
	fg_elf_file_forget_fd(&d->file);
	count_sections(d);
	fg_elf_file_drop_pages(&d->file);
	*ret = TAKE_PTR(d);
	return 0;
}

uint64_t fg_dwarf__bytes(const struct fg_dwarf *d)
{
	return sizeof(*d) + d->heap + d->libdw + __atomic_load_n(&d->built_bytes, __ATOMIC_RELAXED);
}

uint64_t fg_dwarf__mapped(const struct fg_dwarf *d)
{
	return d->mapped;
}

void fg_dwarf__drop_pages(const struct fg_dwarf *d)
{
	fg_elf_file_drop_pages(&d->file);
}

static int range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void build_ranges(struct fg_dwarf *d)
{
	Dwarf_Off off = 0, next, dropped = 0;
	size_t hsize;

	d->ranges_built = true;
	while (dwarf_next_unit(d->dbg, off, &next, &hsize, NULL, NULL, NULL, NULL, NULL, NULL) ==
	       0) {
		Dwarf_Addr base, lo, hi;
		Dwarf_Die cu;
		ptrdiff_t it = 0;

		if (next <= off)
			break;
		if (dwarf_offdie(d->dbg, off + hsize, &cu)) {
			while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (d->n_ranges >= MAX_CU_RANGES ||
				    FG_GROW(d->ranges, d->cap_ranges, d->n_ranges + 1) < 0)
					goto done;
				d->ranges[d->n_ranges++] = (struct cu_range){ lo, hi, off + hsize };
			}
		}
		off = next;
		if (off - dropped >= DROP_EVERY) {
			fg_elf_file_drop_pages(&d->file);
			dropped = off;
		}
	}
done:
	if (d->n_ranges > 1)
		qsort(d->ranges, d->n_ranges, sizeof(*d->ranges), range_cmp);
	__atomic_add_fetch(&d->built_bytes, (uint64_t)d->cap_ranges * sizeof(*d->ranges),
			   __ATOMIC_RELAXED);
}

/* The CU DIE's offset from the table of every unit's ranges (build_ranges()), or false. */
static bool find_in_ranges(struct fg_dwarf *d, uint64_t vaddr, Dwarf_Off *ret)
{
	size_t lo = 0, hi;

	if (!d->ranges_built)
		build_ranges(d);
	/* Ranges of different CUs do not overlap in sane DWARF; check the last few that start below. */
	hi = d->n_ranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ranges[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, tries = 0; i-- > 0 && tries < 16; tries++)
		if (vaddr < d->ranges[i].hi) {
			*ret = d->ranges[i].cu;
			return true;
		}
	return false;
}

/*
 * The offset of the DIE of the CU containing vaddr: from .debug_aranges,
 * which libdw keeps parsed (a binary search touching none of the file),
 * else from our table of the units' own ranges.
 */
static bool find_unit(struct fg_dwarf *d, uint64_t vaddr, Dwarf_Off *ret)
{
	Dwarf_Aranges *aranges;
	Dwarf_Arange *a;
	size_t n;

	if (dwarf_getaranges(d->dbg, &aranges, &n) == 0 &&
	    (a = dwarf_getarange_addr(aranges, vaddr)) &&
	    dwarf_getarangeinfo(a, NULL, NULL, ret) == 0)
		return true;
	return find_in_ranges(d, vaddr, ret);
}

/*
 * The CU containing vaddr, as libdw's dwarf_addrdie() finds it: kept apart
 * from find_unit() for fg_dwarf__inlines_walk(), the reference the index
 * is tested against.
 */
static bool find_cu(struct fg_dwarf *d, uint64_t vaddr, Dwarf_Die *ret)
{
	Dwarf_Off off;

	if (dwarf_addrdie(d->dbg, vaddr, ret))
		return true;
	return find_in_ranges(d, vaddr, &off) && dwarf_offdie(d->dbg, off, ret) != NULL;
}

/* Languages whose plain DWARF names need their namespaces and classes to be recognised. */
static bool qualified_language(Dwarf_Die *cu)
{
	switch (dwarf_srclang(cu)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
	case DW_LANG_Rust:
		return true;
	default:
		return false;
	}
}

/* Appends s to the name being built in out; false when it does not fit. */
static bool append(struct fg_dwarf_names *out, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (out->used + *len + n + 1 > out->size)
		return false;
	memcpy(out->buf + out->used + *len, s, n + 1);
	*len += n;
	return true;
}

/* A DIE of a walk of a unit, and (collect_nodes()) the node its children are inlined into. */
struct walk_level {
	Dwarf_Die die;
	uint32_t node;
};

/*
 * Starts a walk of cu's DIEs (next_die()) at its first child, in stack[0],
 * with *last its offset: false if it has none.
 */
static bool walk_start(Dwarf_Die *cu, struct walk_level *stack, Dwarf_Off *last)
{
	if (dwarf_child(cu, &stack[0].die) != 0)
		return false;
	stack[0].node = NO_NODE;
	*last = dwarf_dieoffset(&stack[0].die);
	return true;
}

/*
 * Steps a walk of a unit's DIEs in the order they are laid out: into the
 * first child of stack[*depth] (which gets node) if it has one and the
 * walk is not MAX_SCOPES deep, else to its next sibling, or to that of the
 * first level up that has one. 1 with the next DIE in stack[*depth], 0 at
 * the unit's end, -EINVAL when the DWARF cannot be read on.
 *
 * Children come after their parent and a sibling after everything under
 * the DIE before it, so each DIE lies past the last (*last). libdw follows
 * a DW_AT_sibling wherever it points, and one pointing back (damaged or
 * hostile DWARF) would have a walk go round for ever: it is -EINVAL here.
 */
static int next_die(struct walk_level *stack, int *depth, uint32_t node, Dwarf_Off *last)
{
	Dwarf_Die *at = &stack[*depth].die;
	Dwarf_Off off;

	if (dwarf_haschildren(at) > 0 && *depth + 1 < MAX_SCOPES &&
	    dwarf_child(at, &stack[*depth + 1].die) == 0) {
		stack[++*depth].node = node;
	} else {
		for (;;) {
			Dwarf_Die sib;
			int r = dwarf_siblingof(&stack[*depth].die, &sib);

			if (r < 0)
				return -EINVAL;
			if (r == 0) {
				stack[*depth].die = sib;
				break;
			}
			if ((*depth)-- == 0)
				return 0;
		}
	}
	off = dwarf_dieoffset(&stack[*depth].die);
	if (off <= *last)
		return -EINVAL;
	*last = off;
	return 1;
}

/*
 * The DIEs die lies in, its unit's first level first, in stack[0..n): n,
 * or -1 if a walk of the unit (next_die()) does not reach die. libdw's
 * dwarf_getscopes_die() finds them by a walk without next_die()'s check.
 */
static int scopes_of(Dwarf_Die *die, struct walk_level *stack)
{
	Dwarf_Off target = dwarf_dieoffset(die), last;
	Dwarf_Die cu;
	int depth = 0, r;

	if (!dwarf_diecu(die, &cu, NULL, NULL) || !walk_start(&cu, stack, &last))
		return -1;
	for (r = 1; r > 0 && last < target; r = next_die(stack, &depth, NO_NODE, &last))
		;
	return r > 0 && last == target ? depth : -1;
}

/*
 * name with the namespaces and classes around the function's declaration,
 * "ns::Class::name" as a demangled linkage name reads. C++ functions with
 * internal linkage, for one, have no linkage name in DWARF.
 */
static const char *qualify(const struct fg_dwarf *d, Dwarf_Die *die, const char *name,
			   struct fg_dwarf_names *out)
{
	_cleanup_free_ struct walk_level *scopes = calloc(MAX_SCOPES, sizeof(*scopes));
	Dwarf_Die decl = *die, next;
	Dwarf_Attribute attr;
	size_t len = 0;
	int n;

	/* The inlined instance points at the abstract function, which may point at its declaration. */
	for (int i = 0; i < 4; i++) {
		if ((dwarf_attr(&decl, DW_AT_abstract_origin, &attr) ||
		     dwarf_attr(&decl, DW_AT_specification, &attr)) &&
		    dwarf_formref_die(&attr, &next))
			decl = next;
		else
			break;
	}
	/* Not found (damaged or hostile DWARF): the plain name. */
	if (!scopes || (n = scopes_of(&decl, scopes)) <= 0)
		return name;
	for (int i = 0; i < n; i++) {
		const char *scope;

		switch (dwarf_tag(&scopes[i].die)) {
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			scope = checked_name(d, dwarf_diename(&scopes[i].die));
			if (!append(out, &len, scope ? scope : "(anonymous namespace)") ||
			    !append(out, &len, "::"))
				return name;
			break;
		default:
			break;
		}
	}
	if (len == 0 || !append(out, &len, name))
		return name;
	name = out->buf + out->used;
	out->used += len + 1;
	return name;
}

/* What addr2line prints: the linkage name, else the plain name; both through abstract origins. */
static const char *die_name(const struct fg_dwarf *d, Dwarf_Die *die, bool qualified,
			    struct fg_dwarf_names *out)
{
	Dwarf_Attribute attr;
	const char *name;

	name = checked_name(d,
			    dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr)));
	if (!name)
		name = checked_name(d, dwarf_formstring(
					       dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name,
								    &attr)));
	if (name && name[0])
		return name;
	name = checked_name(d, dwarf_diename(die));
	if (!name || !name[0])
		return NULL;
	return qualified ? qualify(d, die, name, out) : name;
}

size_t fg_dwarf__inlines_walk(struct fg_dwarf *d, uint64_t vaddr, struct fg_dwarf_names *out)
{
	bool qualified;
	_cleanup_free_ Dwarf_Die *scopes = NULL;
	Dwarf_Die cudie, innermost;
	size_t k = 0, n_inlined = 0;
	int n, fn;

	if (out->max == 0 || !find_cu(d, vaddr, &cudie))
		return 0;
	n = dwarf_getscopes(&cudie, vaddr, &scopes);
	if (n <= 0)
		return 0;
	/*
	 * Past an inlined instance, getscopes may go on with the scopes of its
	 * abstract definition; the inlined-into chain is the innermost DIE's
	 * own nesting in the tree, which is how eu-addr2line -i takes it.
	 */
	innermost = scopes[0];
	free(TAKE_PTR(scopes));
	n = dwarf_getscopes_die(&innermost, &scopes);
	if (n <= 0)
		return 0;
	n = MIN(n, MAX_SCOPES);
	/* Innermost first: inlined instances (and blocks) up to the real function. */
	for (fn = 0; fn < n && dwarf_tag(&scopes[fn]) != DW_TAG_subprogram; fn++)
		n_inlined += dwarf_tag(&scopes[fn]) == DW_TAG_inlined_subroutine;
	if (fn == n || n_inlined == 0)
		return 0;
	qualified = qualified_language(&cudie);
	for (int i = fn - 1; i >= 0 && k < out->max; i--) {
		const char *name;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		name = die_name(d, &scopes[i], qualified, out);
		out->names[k++] = name ? name : "[inlined]";
	}
	return k;
}

/* A range of a node, as the sweep of build_index() takes them. */
struct node_range {
	uint64_t lo, hi;
	uint32_t node;
};

/* By start; of ranges starting together, the longer (the enclosing) first, then the outer node. */
static int node_range_cmp(const void *a, const void *b)
{
	const struct node_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	/* Nodes are numbered in the walk's pre-order: a parent before what is inlined into it. */
	return x->node < y->node ? -1 : x->node > y->node;
}

/* Appends [lo, hi) of node, merged with the segment before when they meet. */
static int add_seg(struct unit_index *ix, uint64_t lo, uint64_t hi, uint32_t node)
{
	struct inline_seg *last = ix->n_segs ? &ix->segs[ix->n_segs - 1] : NULL;

	if (lo >= hi)
		return 0;
	if (last && last->node == node && last->hi == lo) {
		last->hi = hi;
		return 0;
	}
	if (FG_GROW(ix->segs, ix->cap_segs, ix->n_segs + 1) < 0)
		return -ENOMEM;
	ix->segs[ix->n_segs++] = (struct inline_seg){ lo, hi, node };
	return 0;
}

/*
 * The segments of ranges (sorted by node_range_cmp): each address takes
 * the innermost range that holds it. Ranges nest as the DIEs do; one that
 * sticks out of the range it starts in (damaged DWARF) is cut at its end.
 */
static int sweep(struct unit_index *ix, struct node_range *ranges, size_t n)
{
	_cleanup_free_ struct node_range **open = NULL;
	size_t n_open = 0, cap_open = 0;
	uint64_t at = 0;
	int r;

	for (size_t i = 0; i <= n; i++) {
		struct node_range *next = i < n ? &ranges[i] : NULL;

		/* Close what ends before the next range starts (everything, at the end). */
		while (n_open && (!next || open[n_open - 1]->hi <= next->lo)) {
			struct node_range *top = open[--n_open];

			r = add_seg(ix, at, top->hi, top->node);
			if (r < 0)
				return r;
			at = MAX(at, top->hi);
		}
		if (!next)
			break;
		if (n_open) {
			struct node_range *top = open[n_open - 1];

			r = add_seg(ix, at, next->lo, top->node);
			if (r < 0)
				return r;
			next->hi = MIN(next->hi, top->hi);
		}
		if (next->hi <= next->lo)
			continue;
		if (FG_GROW(open, cap_open, n_open + 1) < 0)
			return -ENOMEM;
		open[n_open++] = next;
		at = next->lo;
	}
	return 0;
}

/*
 * Walks the unit's DIEs once: every function and inlined instance with
 * code becomes a node, its ranges go to *ranges. -ENOMEM, or -EINVAL when
 * the DWARF cannot be read on (what was read before stays; next_die()).
 */
static int collect_nodes(Dwarf_Die *cu, struct unit_index *ix, struct node_range **ranges,
			 size_t *n_ranges, size_t *cap_ranges)
{
	_cleanup_free_ struct walk_level *stack = calloc(MAX_SCOPES, sizeof(*stack));
	Dwarf_Off last;
	int depth = 0, r;

	if (!stack)
		return -ENOMEM;
	if (!walk_start(cu, stack, &last))
		return 0;
	for (;;) {
		struct walk_level *at = &stack[depth];
		uint32_t inner = at->node;
		int tag = dwarf_tag(&at->die);

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t it = 0;
			uint32_t node = (uint32_t)ix->n_nodes;

			if (ix->n_nodes >= NO_NODE ||
			    FG_GROW(ix->nodes, ix->cap_nodes, ix->n_nodes + 1) < 0)
				return -ENOMEM;
			ix->nodes[ix->n_nodes++] = (struct inline_node){
				.die = dwarf_dieoffset(&at->die),
				.parent = tag == DW_TAG_inlined_subroutine ? at->node : NO_NODE,
				.inlined = tag == DW_TAG_inlined_subroutine,
			};
			while ((it = dwarf_ranges(&at->die, it, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (FG_GROW(*ranges, *cap_ranges, *n_ranges + 1) < 0)
					return -ENOMEM;
				(*ranges)[(*n_ranges)++] = (struct node_range){ lo, hi, node };
			}
			inner = node;
		}
		/* Lexical blocks, namespaces and the like are passed through. */
		r = next_die(stack, &depth, inner, &last);
		if (r <= 0)
			return r;
	}
}

/*
 * The index of the unit whose CU DIE is at cu_off in *ret, built on first
 * use: a unit already indexed is found without reading the file. -ENOSPC
 * when the binary's indexes have taken all they may (the walk answers
 * then), -ENOMEM when it could not be built (the unit gets no inline
 * frames).
 */
static int index_of_unit(struct fg_dwarf *d, Dwarf_Off cu_off, struct unit_index **ret)
{
	uint32_t key = (uint32_t)cu_off;
	struct unit_index *ix = fg_u32map_get(&d->indexes, key);
	_cleanup_free_ struct node_range *ranges = NULL;
	size_t n_ranges = 0, cap_ranges = 0;
	uint64_t bytes;
	Dwarf_Die cu;

	if (ix) {
		*ret = ix;
		return ix == &no_index ? -ENOMEM : 0;
	}
	if (__atomic_load_n(&d->built_bytes, __ATOMIC_RELAXED) >= MAX_INDEX_BYTES)
		return -ENOSPC;
	ix = calloc(1, sizeof(*ix));
	/*
	 * Damaged DWARF (-EINVAL) keeps what was read before the damage: the
	 * walk would meet the same damage (and libdw's dwarf_getscopes() leaks
	 * on some of it). A unit libdw cannot read at all is not tried again.
	 */
	if (!ix || !dwarf_offdie(d->dbg, cu_off, &cu) ||
	    collect_nodes(&cu, ix, &ranges, &n_ranges, &cap_ranges) == -ENOMEM)
		goto failed;
	ix->qualified = qualified_language(&cu);
	if (n_ranges > 1)
		qsort(ranges, n_ranges, sizeof(*ranges), node_range_cmp);
	if (sweep(ix, ranges, n_ranges) < 0)
		goto failed;
	bytes = unit_index_bytes(ix);
	if (fg_u32map_set(&d->indexes, key, ix) < 0)
		goto failed;
	__atomic_add_fetch(&d->built_bytes, bytes, __ATOMIC_RELAXED);
	*ret = ix;
	return 0;
failed:
	unit_index_free(ix);
	/* Not tried again. */
	(void)fg_u32map_set(&d->indexes, key, &no_index);
	return -ENOMEM;
}

size_t fg_dwarf__inlines(struct fg_dwarf *d, uint64_t vaddr, struct fg_dwarf_names *out)
{
	uint32_t chain[MAX_SCOPES];
	struct unit_index *ix;
	size_t lo = 0, hi, n = 0, k = 0;
	Dwarf_Off cu_off;
	uint32_t node;
	int r;

	if (out->max == 0 || !find_unit(d, vaddr, &cu_off))
		return 0;
	r = index_of_unit(d, cu_off, &ix);
	if (r == -ENOSPC)
		return fg_dwarf__inlines_walk(d, vaddr, out);
	if (r < 0)
		return 0;
	/* The last segment that starts at or below vaddr. */
	hi = ix->n_segs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->segs[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= ix->segs[lo - 1].hi)
		return 0;
	/* Innermost first, up to the function everything here is inlined into. */
	for (node = ix->segs[lo - 1].node; node != NO_NODE && n < MAX_SCOPES;
	     node = ix->nodes[node].parent)
		chain[n++] = node;
	if (n < 2 || ix->nodes[chain[n - 1]].inlined)
		return 0;
	for (size_t i = n - 1; i-- > 0 && k < out->max;) {
		Dwarf_Die die;
		const char *name = NULL;

		if (dwarf_offdie(d->dbg, ix->nodes[chain[i]].die, &die))
			name = die_name(d, &die, ix->qualified, out);
		out->names[k++] = name ? name : "[inlined]";
	}
	return k;
}

Dwarf *fg_dwarf__handle(struct fg_dwarf *d)
{
	return d->dbg;
}
