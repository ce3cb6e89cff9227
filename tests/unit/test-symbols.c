/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/budget.h"
#include "elf-test.h"
#include "fgd-clock.h"
#include "fgd-loader.h"
#include "resolver/fgd-proctab.h"
#include "symbols/fgd-elffile.h"
#include "symbols/fgd-symbols.h"
#include "test.h"

int fgtest_symbols_marker(int x);
__attribute__((noinline)) int fgtest_symbols_marker(int x)
{
	return x * 3 + 1;
}

static void self_key(struct fg_dso_key *key, char *path, size_t size)
{
	struct fg_elf_syms *syms;
	const uint8_t *id;
	ssize_t n = readlink("/proc/self/exe", path, size - 1);
	int fd;

	ASSERT_TRUE(n > 0);
	path[n] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	ASSERT_OK(fg_elf_syms__load_fd(fd, &syms));
	close(fd);
	*key = (struct fg_dso_key){ .kind = FG_DSO_FILE };
	key->build_id_len = (uint8_t)fg_elf_syms__build_id(syms, &id);
	ASSERT_TRUE(key->build_id_len > 0);
	memcpy(key->build_id, id, key->build_id_len);
	fg_elf_syms__free(syms);
}

TEST(names_a_function_of_this_process)
{
	struct fg_symbolizer *sym;
	struct fg_proctab *t;
	struct fg_process *p;
	const struct fg_map *m;
	enum fg_sym_result res;
	uint64_t addr = (uint64_t)(uintptr_t)&fgtest_symbols_marker;
	char buf[256];

	ASSERT_OK(fg_symbolizer__new(&sym));
	ASSERT_OK(fg_proctab__new(sym, &t));
	ASSERT_OK(fg_proctab__scan(t));
	p = fg_proctab__current(t, getpid());
	ASSERT_TRUE(p);
	m = fg_process_find_map(p, addr + 4);
	ASSERT_TRUE(m && m->dso);
	/* Middle of the function, as a return address would be. */
	ASSERT_STREQ(fg_symbolizer__name_user(sym, m->dso, addr + 4 - m->start + m->pgoff, NULL,
					      buf, sizeof(buf), &res),
		     "fgtest_symbols_marker");
	ASSERT_EQ(res, FG_SYM_NAMED);
	ASSERT_EQ(fg_dso__state(m->dso), FG_DSO_LOADED);
	ASSERT_EQ(fgtest_symbols_marker(1), 4);
	fg_proctab__free(t);
	fg_symbolizer__free(sym);
}

TEST(one_entry_per_binary_by_build_id_or_inode)
{
	struct fg_symbolizer *sym;
	struct fg_dso *by_id, *again, *by_inode;
	struct fg_dso_key key, ikey = { .kind = FG_DSO_FILE };
	struct fg_status_symbols st;
	char path[4096];
	struct stat s;

	ASSERT_OK(fg_symbolizer__new(&sym));
	self_key(&key, path, sizeof(path));
	by_id = fg_symbolizer__get_dso(sym, &key, path, NULL, NULL);
	again = fg_symbolizer__get_dso(sym, &key, "/some/other/path", NULL, NULL);
	ASSERT_TRUE(by_id && by_id == again);
	/* The same file found through /proc/PID/maps: only dev and inode. */
	ASSERT_TRUE(stat(path, &s) == 0);
	ikey.dev = s.st_dev;
	ikey.ino = s.st_ino;
	by_inode = fg_symbolizer__get_dso(sym, &ikey, path, NULL, NULL);
	ASSERT_TRUE(by_inode == by_id);
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.binaries, 1);
	fg_dso__unref(by_inode);
	fg_dso__unref(again);
	fg_dso__unref(by_id);
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.binaries, 0);
	fg_symbolizer__free(sym);
}

TEST(replaced_binary_is_never_named)
{
	struct fg_symbolizer *sym;
	struct fg_dso *d;
	struct fg_dso_key key;
	enum fg_sym_result res;
	char path[4096], buf[256];
	const char *name;

	ASSERT_OK(fg_symbolizer__new(&sym));
	self_key(&key, path, sizeof(path));
	key.build_id[0] ^= 0xff; /* what was mapped is not what is on disk now */
	d = fg_symbolizer__get_dso(sym, &key, path, NULL, NULL);
	ASSERT_TRUE(d);
	name = fg_symbolizer__name_user(sym, d, 0x1000, NULL, buf, sizeof(buf), &res);
	ASSERT_EQ(res, FG_SYM_OFFSET);
	ASSERT_TRUE(strstr(name, "test-symbols+0x") == name);
	ASSERT_EQ(fg_dso__state(d), FG_DSO_FAILED);
	ASSERT_EQ(fg_dso__error(d), -ESTALE);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
}

TEST(unreadable_and_anonymous_code)
{
	struct fg_symbolizer *sym;
	struct fg_dso_key fkey = { .kind = FG_DSO_FILE, .dev = 1, .ino = 99 };
	struct fg_dso_key akey = { .kind = FG_DSO_ANON };
	struct fg_dso *f, *a;
	enum fg_sym_result res;
	char buf[256];
	struct fg_status_symbols st;

	ASSERT_OK(fg_symbolizer__new(&sym));
	f = fg_symbolizer__get_dso(sym, &fkey, "/nonexistent/libgone.so (deleted)", NULL, NULL);
	ASSERT_STREQ(fg_dso__path(f), "/nonexistent/libgone.so");
	ASSERT_STREQ(fg_symbolizer__name_user(sym, f, 0x1a2b, NULL, buf, sizeof(buf), &res),
		     "libgone.so+0x1a2b");
	ASSERT_EQ(res, FG_SYM_OFFSET);
	ASSERT_EQ(fg_dso__error(f), -ENOENT);
	ASSERT_STREQ(fg_symbolizer__name_user(sym, f, 0, NULL, buf, sizeof(buf), &res),
		     "libgone.so+0x0");
	ASSERT_STREQ(fg_symbolizer__name_user(sym, f, UINT64_MAX, NULL, buf, sizeof(buf), &res),
		     "libgone.so+0xffffffffffffffff");
	/* Cut to the buffer as snprintf() cuts, in the name and in the address. */
	ASSERT_STREQ(fg_symbolizer__name_user(sym, f, 0x1a2b, NULL, buf, 5, &res), "libg");
	ASSERT_STREQ(fg_symbolizer__name_user(sym, f, 0x1a2b, NULL, buf, 15, &res),
		     "libgone.so+0x1");
	ASSERT_STREQ(fg_symbolizer__name_user(sym, f, 0x1a2b, NULL, buf, 1, &res), "");
	a = fg_symbolizer__get_dso(sym, &akey, "//anon", NULL, NULL);
	ASSERT_STREQ(fg_symbolizer__name_user(sym, a, 0x10, NULL, buf, sizeof(buf), &res),
		     "[unknown]");
	ASSERT_EQ(res, FG_SYM_UNKNOWN);
	ASSERT_STREQ(fg_symbolizer__name_user(sym, NULL, 0x10, NULL, buf, sizeof(buf), &res),
		     "[unknown]");
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.binaries_unreadable, 1);
	fg_dso__unref(f);
	fg_dso__unref(a);
	fg_symbolizer__free(sym);
}

/* The size of the [vdso] mapping that starts at base, or 0. */
static size_t vdso_size(unsigned long base)
{
	char line[512];
	size_t size = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base)
			size = end - start;
	}
	if (f)
		fclose(f);
	return size;
}

TEST(a_fifo_at_the_path_cannot_stall_us)
{
	char dir[] = "/tmp/fg-test-symbols-XXXXXX", path[64];
	struct fg_dso_key key = { .kind = FG_DSO_FILE, .dev = 1, .ino = 4242 };
	struct fg_symbolizer *sym;
	enum fg_sym_result res;
	struct fg_dso *d;
	char buf[256];

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lib.so", dir);
	ASSERT_TRUE(mkfifo(path, 0600) == 0);
	ASSERT_OK(fg_symbolizer__new(&sym));
	/* Opening a FIFO for reading blocks until a writer comes: it must not even be tried. */
	d = fg_symbolizer__get_dso(sym, &key, path, NULL, NULL);
	ASSERT_STREQ(fg_symbolizer__name_user(sym, d, 0x10, path, buf, sizeof(buf), &res),
		     "lib.so+0x10");
	ASSERT_EQ(fg_dso__error(d), -EINVAL);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
	unlink(path);
	rmdir(dir);
}

/* The line of /proc/self/maps that maps addr: its start, end and file offset. */
static void find_self_map(uint64_t addr, uint64_t *start, uint64_t *end, uint64_t *pgoff)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	ASSERT_TRUE(f);
	*start = *end = *pgoff = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t s, e, o;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &s, &e, &o) == 3 &&
		    s <= addr && addr < e) {
			*start = s;
			*end = e;
			*pgoff = o;
		}
	}
	fclose(f);
	ASSERT_TRUE(*end > 0);
}

TEST(the_sampled_process_path_wins)
{
	struct fg_symbolizer *sym;
	struct fg_dso_key key;
	enum fg_sym_result res;
	char path[4096], buf[256], hint[128];
	struct fg_dso *d;
	uint64_t addr = (uint64_t)(uintptr_t)&fgtest_symbols_marker, start, end, pgoff;

	/* The binary's recorded path is gone: only the hint, the live mapping, reaches it. */
	ASSERT_OK(fg_symbolizer__new(&sym));
	self_key(&key, path, sizeof(path));
	d = fg_symbolizer__get_dso(sym, &key, "/nonexistent/test-symbols", NULL, NULL);
	find_self_map(addr, &start, &end, &pgoff);
	snprintf(hint, sizeof(hint), "/proc/self/map_files/%" PRIx64 "-%" PRIx64, start, end);
	ASSERT_STREQ(fg_symbolizer__name_user(sym, d, addr - start + pgoff, hint, buf, sizeof(buf),
					      &res),
		     "fgtest_symbols_marker");
	ASSERT_EQ(res, FG_SYM_NAMED);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
}

TEST(vdso_symbols)
{
	struct fg_symbolizer *sym;
	struct fg_dso_key key = { .kind = FG_DSO_VDSO };
	struct fg_elf_syms *img;
	struct fg_dso *d;
	enum fg_sym_result res;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char buf[256];
	const char *name;
	int64_t i;

	if (!base)
		SKIP("no vDSO");
	ASSERT_OK(fg_symbolizer__new(&sym));
	/* Find clock_gettime's offset from the image itself: that is what a sample would give. */
	ASSERT_OK(fg_elf_syms__load_mem((const void *)base, vdso_size(base), &img));
	i = fg_elf_syms__find(img, "__vdso_clock_gettime");
	ASSERT_TRUE(i >= 0);
	d = fg_symbolizer__get_dso(sym, &key, "[vdso]", NULL, NULL);
	name = fg_symbolizer__name_user(sym, d, fg_elf_syms__addr(img, (size_t)i) + 1, NULL, buf,
					sizeof(buf), &res);
	ASSERT_EQ(res, FG_SYM_NAMED);
	ASSERT_TRUE(strcmp(name, "__vdso_clock_gettime") == 0 ||
		    strcmp(name, "clock_gettime") == 0);
	fg_elf_syms__free(img);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
}

TEST(kernel_symbols_from_kallsyms)
{
	struct fg_symbolizer *sym;
	struct fg_status_symbols st;
	char line[512];
	uint64_t addr = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		SKIP("/proc/kallsyms unreadable");
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		uint64_t a;

		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, name) == 3 &&
		    strcmp(name, "schedule") == 0) {
			addr = a;
			break;
		}
	}
	fclose(f);
	if (addr == 0)
		SKIP("kernel addresses hidden (kptr_restrict) or no 'schedule'");
	ASSERT_OK(fg_symbolizer__new(&sym));
	ASSERT_EQ(fg_symbolizer__refresh_kernel(sym, false), 1);
	ASSERT_EQ(fg_symbolizer__refresh_kernel(sym, false), 0); /* modules unchanged: no reload */
	ASSERT_STREQ(fg_symbolizer__name_kernel(sym, addr + 8), "schedule");
	ASSERT_TRUE(fg_symbolizer__name_kernel(sym, 0x1000) == NULL);
	fg_symbolizer__stats(sym, &st);
	ASSERT_TRUE(st.kernel_symbols > 1000);
	fg_symbolizer__free(sym);
}

/* ---- debug files, inline frames, demangling ---- */

/* A dso for a file, keyed by its build-id as an MMAP2 record gives it. */
static struct fg_dso *file_dso(struct fg_symbolizer *sym, const char *path)
{
	struct fg_dso_key key = { .kind = FG_DSO_FILE };
	struct fg_elf_syms *syms;
	const uint8_t *id;
	struct fg_dso *d;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ASSERT_TRUE(fd >= 0);
	ASSERT_OK(fg_elf_syms__load_fd(fd, &syms));
	close(fd);
	key.build_id_len = (uint8_t)fg_elf_syms__build_id(syms, &id);
	ASSERT_TRUE(key.build_id_len > 0);
	memcpy(key.build_id, id, key.build_id_len);
	fg_elf_syms__free(syms);
	d = fg_symbolizer__get_dso(sym, &key, path, NULL, NULL);
	ASSERT_TRUE(d);
	return d;
}

/* The frames the code at vaddr of program stands for, joined by ';' (valid until the next call). */
static const char *frames_at(struct fg_symbolizer *sym, struct fg_dso *d, uint64_t vaddr,
			     unsigned flags)
{
	static char out[8192];
	struct fg_sym_frames fr;
	size_t len = 0;

	fg_symbolizer__frames_user(sym, d, vaddr_to_offset(fg_dso__path(d), vaddr), NULL, flags,
				   &fr);
	ASSERT_TRUE(fr.n >= 1 && fr.n <= FG_SYM_MAX_FRAMES);
	ASSERT_EQ(fr.inlined, fr.n - 1);
	out[0] = '\0';
	for (size_t i = 0; i < fr.n; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", i ? ";" : "",
					fr.names[i]);
	return out;
}

#define ALL (FG_SYM_INLINE | FG_SYM_DEMANGLE)
#define INLINE_CHAIN "fgtest_outer;fgtest_middle;fgtest_inner"

/* A symbolizer whose debug directory is an empty temporary one: no system debug files. */
static struct fg_symbolizer *isolated(char *dir)
{
	struct fg_symbolizer *sym;

	ASSERT_TRUE(mkdtemp(dir));
	ASSERT_OK(fg_symbolizer__new(&sym));
	ASSERT_OK(fg_symbolizer__set_debug_dir(sym, dir));
	return sym;
}

TEST(inline_frames_from_the_binary_dwarf)
{
	const char *path = program_path("fgtest-inline");
	uint64_t mark = symbol_value(path, "fgtest_inline_mark");
	uint64_t outer = symbol_value(path, "fgtest_outer");
	struct stat sb;

	ASSERT_OK(stat(path, &sb));
	/* Mapped (a root-owned file on a system filesystem, as the build's are here), then read. */
	for (int read = 0; read <= 1; read++) {
		char dir[] = "/tmp/fg-test-symbols-XXXXXX";
		struct fg_symbolizer *sym = isolated(dir);
		struct fg_status_symbols st;
		struct fg_elf_trust none = {};
		struct fg_dso *d;

		if (read)
			fg_symbolizer__set_trust(sym, &none);
		/* a build by another user: nothing of it is mapped */
		else if (sb.st_uid != 0 || (sb.st_mode & 022))
			continue;
		d = file_dso(sym, path);
		ASSERT_STREQ(frames_at(sym, d, mark, ALL), INLINE_CHAIN);
		/* Off, the address is its real function alone. */
		ASSERT_STREQ(frames_at(sym, d, mark, FG_SYM_DEMANGLE), "fgtest_outer");
		/* The entry, before anything inlined runs, is the function itself. */
		ASSERT_STREQ(frames_at(sym, d, outer, ALL), "fgtest_outer");
		ASSERT_TRUE(fg_dso__dwarf(d) != NULL);
		fg_symbolizer__stats(sym, &st);
		ASSERT_EQ(st.binaries_dwarf, 1);
		ASSERT_EQ(st.binaries_debug_file, 0);
		/*
		 * Never the whole file: read, the debug sections inline frames need
		 * (no code, no line tables); mapped, only libdw's own tables.
		 */
		ASSERT_TRUE(st.dwarf_bytes > 0 && st.dwarf_bytes < (uint64_t)sb.st_size);
		ASSERT_TRUE(read ? st.dwarf_mapped == 0 : st.dwarf_mapped > 0);
		fg_dso__unref(d);
		fg_symbolizer__stats(sym, &st);
		ASSERT_EQ(st.dwarf_bytes, 0);
		ASSERT_EQ(st.dwarf_mapped, 0);
		fg_symbolizer__free(sym);
		remove_tree(dir);
	}
}

TEST(stripped_binary_with_debuglink)
{
	const char *path = program_path("fgtest-inline-debuglink");
	uint64_t mark = symbol_value(program_path("fgtest-inline"), "fgtest_inline_mark");
	char dir[] = "/tmp/fg-test-symbols-XXXXXX";
	struct fg_symbolizer *sym = isolated(dir);
	struct fg_status_symbols st;
	struct fg_dso *d = file_dso(sym, path);

	/* fgtest_outer is in no table of the stripped binary: the names come from the debug file. */
	ASSERT_STREQ(frames_at(sym, d, mark, ALL), INLINE_CHAIN);
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.binaries_debug_file, 1);
	ASSERT_EQ(st.binaries_dwarf, 1);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
	remove_tree(dir);
}

TEST(build_id_tree_in_the_debug_dir)
{
	const char *path = program_path("fgtest-inline-stripped");
	uint64_t mark = symbol_value(program_path("fgtest-inline"), "fgtest_inline_mark");
	uint64_t outer = symbol_value(program_path("fgtest-inline"), "fgtest_outer"),
		 outer_size = symbol_size(program_path("fgtest-inline"), "fgtest_outer");
	char dir[] = "/tmp/fg-test-symbols-XXXXXX", debug[PATH_MAX], hex[41], want[128];
	uint64_t fn[3];
	struct fg_symbolizer *sym = isolated(dir);
	struct fg_elf_syms *syms;
	const uint8_t *id;
	struct fg_dso *d;
	size_t n;
	int fd;

	/*
	 * Without a debug file: the stripped binary has no name for this
	 * address, only its function's start, which .eh_frame gives (every
	 * address of the function is one frame).
	 */
	d = file_dso(sym, path);
	snprintf(want, sizeof(want), "fgtest-inline-stripped+0x%" PRIx64, outer);
	ASSERT_STREQ(frames_at(sym, d, mark, ALL), want);
	ASSERT_STREQ(frames_at(sym, d, outer, ALL), want);
	ASSERT_STREQ(frames_at(sym, d, outer + outer_size - 1, ALL), want);
	ASSERT_TRUE(strcmp(frames_at(sym, d, outer + outer_size, ALL), want) != 0);
	/* So the resolver may name the function's other addresses as its first. */
	ASSERT_TRUE(fg_symbolizer__function(d, vaddr_to_offset(path, mark), ALL, &fn[0]));
	ASSERT_TRUE(fg_symbolizer__function(d, vaddr_to_offset(path, outer), ALL, &fn[1]));
	ASSERT_U64_EQ(fn[0], fn[1]);
	ASSERT_TRUE(!fg_symbolizer__function(d, vaddr_to_offset(path, outer + outer_size), ALL,
					     &fn[2]) ||
		    fn[2] != fn[0]);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);

	/* DEBUG_DIR/.build-id/xx/yyyy.debug, as -dbgsym packages install them. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fg_elf_syms__load_fd(fd, &syms));
	close(fd);
	n = fg_elf_syms__build_id(syms, &id);
	ASSERT_TRUE(n == 20);
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	fg_elf_syms__free(syms);
	snprintf(debug, sizeof(debug), "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	copy_file(program_path("fgtest-inline.debug"), debug);
	ASSERT_OK(fg_symbolizer__new(&sym));
	ASSERT_OK(fg_symbolizer__set_debug_dir(sym, dir));
	d = file_dso(sym, path);
	ASSERT_STREQ(frames_at(sym, d, mark, ALL), INLINE_CHAIN);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);

	/* Another build's debug file under this build-id is refused: no name beats a wrong one. */
	if (program_exists("fgtest-cxx.debug")) {
		copy_file(program_path("fgtest-cxx.debug"), debug);
		ASSERT_OK(fg_symbolizer__new(&sym));
		ASSERT_OK(fg_symbolizer__set_debug_dir(sym, dir));
		d = file_dso(sym, path);
		ASSERT_TRUE(strncmp(frames_at(sym, d, mark, ALL), "fgtest-inline-stripped+0x",
				    25) == 0);
		fg_dso__unref(d);
		fg_symbolizer__free(sym);
	}
	remove_tree(dir);
}

TEST(debug_dir_mirrors_the_binary_path)
{
	const char *path = program_path("fgtest-inline-stripped");
	uint64_t mark = symbol_value(program_path("fgtest-inline"), "fgtest_inline_mark");
	char dir[] = "/tmp/fg-test-symbols-XXXXXX", debug[2 * PATH_MAX], real[PATH_MAX];
	struct fg_symbolizer *sym = isolated(dir);
	struct fg_dso *d;

	ASSERT_TRUE(realpath(path, real));
	snprintf(debug, sizeof(debug), "%s%s.debug", dir, real);
	copy_file(program_path("fgtest-inline.debug"), debug);
	d = file_dso(sym, real);
	ASSERT_STREQ(frames_at(sym, d, mark, ALL), INLINE_CHAIN);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
	remove_tree(dir);
}

TEST(debuglink_with_a_wrong_crc_is_refused)
{
	uint64_t mark = symbol_value(program_path("fgtest-inline"), "fgtest_inline_mark");
	char dir[] = "/tmp/fg-test-symbols-XXXXXX", bin[PATH_MAX], debug[PATH_MAX];
	struct fg_symbolizer *sym = isolated(dir);
	struct fg_dso *d;

	if (!program_exists("fgtest-cxx.debug"))
		SKIP("no C++ compiler: fgtest-cxx.debug was not built");
	/* The link's name, beside the binary, but another file. */
	snprintf(bin, sizeof(bin), "%s/bin/fgtest-inline-debuglink", dir);
	snprintf(debug, sizeof(debug), "%s/bin/fgtest-inline.debug", dir);
	copy_file(program_path("fgtest-inline-debuglink"), bin);
	copy_file(program_path("fgtest-cxx.debug"), debug);
	d = file_dso(sym, bin);
	ASSERT_TRUE(strncmp(frames_at(sym, d, mark, ALL), "fgtest-inline-debuglink+0x", 26) == 0);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);

	/* The right file in .debug/ beside the binary is found. */
	snprintf(debug, sizeof(debug), "%s/bin/.debug/fgtest-inline.debug", dir);
	copy_file(program_path("fgtest-inline.debug"), debug);
	ASSERT_OK(fg_symbolizer__new(&sym));
	ASSERT_OK(fg_symbolizer__set_debug_dir(sym, dir));
	d = file_dso(sym, bin);
	ASSERT_STREQ(frames_at(sym, d, mark, ALL), INLINE_CHAIN);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
	remove_tree(dir);
}

TEST(minidebuginfo_names_local_functions)
{
	const char *path = program_path("fgtest-inline-minidebuginfo");
	uint64_t mark = symbol_value(program_path("fgtest-inline"), "fgtest_inline_mark");
	char dir[] = "/tmp/fg-test-symbols-XXXXXX";
	struct fg_symbolizer *sym;
	struct fg_status_symbols st;
	struct fg_dso *d;

	if (!program_exists("fgtest-inline-minidebuginfo"))
		SKIP("xz not installed: no MiniDebugInfo fixture");
	sym = isolated(dir);
	d = file_dso(sym, path);
	/* Names only: MiniDebugInfo has no DWARF, so no inline frames. */
	ASSERT_STREQ(frames_at(sym, d, mark, ALL), "fgtest_outer");
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.binaries_minidebuginfo, 1);
	ASSERT_EQ(st.binaries_dwarf, 0);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
	remove_tree(dir);
}

TEST(cxx_names_demangled_or_raw)
{
	const char *path = program_path("fgtest-cxx");
	char dir[] = "/tmp/fg-test-symbols-XXXXXX";
	struct fg_symbolizer *sym;
	struct fg_dso *d;
	uint64_t add, mark;

	if (!program_exists("fgtest-cxx"))
		SKIP("no C++ compiler: fgtest-cxx was not built");
	add = symbol_value(path, "_ZN6fgtest6shapes11AccumulatorIiE3addEi");
	mark = symbol_value(path, "fgtest_cxx_mark");
	sym = isolated(dir);
	d = file_dso(sym, path);
	ASSERT_STREQ(frames_at(sym, d, add, ALL), "fgtest::shapes::Accumulator<int>::add");
	ASSERT_STREQ(frames_at(sym, d, add, FG_SYM_INLINE),
		     "_ZN6fgtest6shapes11AccumulatorIiE3addEi");
	/* The inlined function's DWARF linkage name, demangled like a symbol. */
	ASSERT_STREQ(frames_at(sym, d, mark, ALL),
		     "fgtest::shapes::Accumulator<int>::add;fgtest::shapes::mix");
	ASSERT_STREQ(frames_at(sym, d, mark, FG_SYM_DEMANGLE),
		     "fgtest::shapes::Accumulator<int>::add");
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
	remove_tree(dir);
}

/* fg_symbolizer__frames() with the loader's answers handed over, for 10 s at most: its result. */
static int frames_loaded(struct fg_symbolizer *sym, struct fg_loader *l, struct fg_dso *d,
			 uint64_t offset, unsigned flags, struct fg_sym_frames *ret)
{
	for (int i = 0; i < 100; i++) {
		struct pollfd p = { .fd = fg_loader__fd(l), .events = POLLIN };
		int r = fg_symbolizer__frames(sym, d, offset, NULL, flags, ret);

		if (r != -EINPROGRESS)
			return r;
		(void)poll(&p, 1, 100);
		fg_loader__complete(l);
	}
	return -ETIMEDOUT;
}

/* An isolated symbolizer with a loader, and a binary's entry in it: what loader tests start from. */
struct with_loader {
	char dir[sizeof("/tmp/fg-test-symbols-XXXXXX")];
	struct fg_symbolizer *sym; /* owned */
	struct fg_loader *l;       /* owned */
	struct fg_dso *d;          /* owned reference: path's */
};

static void with_loader_init(struct with_loader *w, const char *path)
{
	snprintf(w->dir, sizeof(w->dir), "/tmp/fg-test-symbols-XXXXXX");
	w->sym = isolated(w->dir);
	ASSERT_OK(fg_loader__new(&w->l));
	fg_symbolizer__set_loader(w->sym, w->l);
	w->d = file_dso(w->sym, path);
}

static void with_loader_done(struct with_loader *w)
{
	fg_dso__unref(w->d);
	fg_symbolizer__set_loader(w->sym, NULL);
	fg_loader__free(w->l);
	fg_symbolizer__free(w->sym);
	remove_tree(w->dir);
}

TEST(a_function_is_demangled_once_an_address_inlined_each)
{
	const char *path = program_path("fgtest-cxx");
	struct fg_status_symbols st;
	struct with_loader w;
	struct fg_sym_frames fr;
	uint64_t add, hits;

	if (!program_exists("fgtest-cxx"))
		SKIP("no C++ compiler: fgtest-cxx was not built");
	add = vaddr_to_offset(path, symbol_value(path, "_ZN6fgtest6shapes11AccumulatorIiE3addEi"));
	with_loader_init(&w, path);
	/*
	 * Demangling is the loader's work, and its answer is the function's:
	 * another address in it (a garbage frame-pointer chain brings a new one
	 * per sample) is named at once, without a job.
	 */
	ASSERT_EQ(frames_loaded(w.sym, w.l, w.d, add, FG_SYM_DEMANGLE, &fr), 0);
	ASSERT_STREQ(fr.names[0], "fgtest::shapes::Accumulator<int>::add");
	fg_symbolizer__stats(w.sym, &st);
	ASSERT_EQ(st.resolved_jobs, 1);
	hits = st.resolved_hits; /* the job's answer, taken */
	ASSERT_EQ(fg_symbolizer__frames(w.sym, w.d, add + 1, NULL, FG_SYM_DEMANGLE, &fr), 0);
	ASSERT_STREQ(fr.names[0], "fgtest::shapes::Accumulator<int>::add");
	fg_symbolizer__stats(w.sym, &st);
	ASSERT_EQ(st.resolved_jobs, 1);
	ASSERT_EQ(st.resolved_hits, hits + 1);
	/* With inline frames, each address has its own chain: asked for each. */
	ASSERT_EQ(frames_loaded(w.sym, w.l, w.d, add, FG_SYM_INLINE | FG_SYM_DEMANGLE, &fr), 0);
	ASSERT_EQ(frames_loaded(w.sym, w.l, w.d, add + 1, FG_SYM_INLINE | FG_SYM_DEMANGLE, &fr), 0);
	ASSERT_STREQ(fr.names[0], "fgtest::shapes::Accumulator<int>::add");
	fg_symbolizer__stats(w.sym, &st);
	ASSERT_EQ(st.resolved_jobs, 3);
	with_loader_done(&w);
}

TEST(plt_entries_named_from_file_offsets)
{
	static const struct {
		const char *program, *callee;
	} cases[] = {
		{ "fgfixture-nopie", "fgfixture_alpha" },   /* .plt, fixed address */
		{ "fgfixture-pie", "fgfixture_gamma" },     /* .plt, PIE */
		{ "fgfixture-ibt-pie", "fgfixture_alpha" }, /* .plt.sec */
		{ "fgfixture-ibt-nopie", "clock_gettime" }, /* .plt.sec, fixed address */
		{ "libfgfixture.so", "fgfixture_beta" },
	};

	for (size_t k = 0; k < ELEMENTSOF(cases); k++) {
		const char *path = program_path(cases[k].program);
		char dir[] = "/tmp/fg-test-symbols-XXXXXX", want[128], buf[256];
		struct fg_symbolizer *sym = isolated(dir);
		enum fg_sym_result res;
		struct plt_layout pl;
		uint64_t at = plt_entry(path, cases[k].callee, &pl);
		struct fg_dso *d = file_dso(sym, path);
		const char *name;

		snprintf(want, sizeof(want), "%s@plt", cases[k].callee);
		ASSERT_STREQ(frames_at(sym, d, at, ALL), want);
		ASSERT_STREQ(frames_at(sym, d, at + 15, ALL), want);
		ASSERT_TRUE(strcmp(frames_at(sym, d, at + 16, ALL), want) != 0);
		ASSERT_STREQ(frames_at(sym, d, pl.plt, ALL), ".plt");
		name = fg_symbolizer__name_user(sym, d, vaddr_to_offset(path, at + 4), NULL, buf,
						sizeof(buf), &res);
		ASSERT_EQ(res, FG_SYM_NAMED);
		ASSERT_STREQ(name, want);
		/* Code outside the PLT keeps its name. */
		if (strcmp(cases[k].program, "libfgfixture.so") == 0)
			ASSERT_STREQ(frames_at(sym, d, symbol_value(path, "fgfixture_beta"), ALL),
				     "fgfixture_beta");
		else
			ASSERT_STREQ(frames_at(sym, d, symbol_value(path, "main"), ALL), "main");
		fg_dso__unref(d);
		fg_symbolizer__free(sym);
		remove_tree(dir);
	}
}

/*
 * A PLT entry of a binary with DWARF: no unit covers it, so it is named by
 * its symbol alone, at once, and never sent to the loader's thread for
 * inline frames (where the failed unit search would build the table of
 * every unit, 10 ms for libc's).
 */
TEST(plt_entries_take_no_dwarf_lookup)
{
	const char *path = program_path("fgtest-inline");
	uint64_t at, mark, function;
	struct fg_status_symbols st;
	struct fg_sym_frames fr;
	struct plt_layout pl;
	struct with_loader w;

	at = vaddr_to_offset(path, plt_entry(path, "clock_gettime", &pl));
	mark = vaddr_to_offset(path, symbol_value(path, "fgtest_inline_mark"));
	with_loader_init(&w, path);
	/* Code with inline frames is the loader's work, and has DWARF read. */
	ASSERT_EQ(frames_loaded(w.sym, w.l, w.d, mark, ALL, &fr), 0);
	ASSERT_EQ(fr.n, 3);
	ASSERT_TRUE(fg_dso__dwarf(w.d) != NULL);
	ASSERT_TRUE(!fg_symbolizer__function(w.d, mark, ALL, &function));
	fg_symbolizer__stats(w.sym, &st);
	ASSERT_EQ(st.resolved_jobs, 1);

	ASSERT_TRUE(fg_symbolizer__function(w.d, at, ALL, &function));
	ASSERT_EQ(fg_symbolizer__frames(w.sym, w.d, at, NULL, FG_SYM_INLINE, &fr), 0);
	ASSERT_EQ(fr.n, 1);
	ASSERT_EQ(fr.result, FG_SYM_NAMED);
	ASSERT_STREQ(fr.names[0], "clock_gettime@plt");
	ASSERT_EQ(fg_symbolizer__frames(w.sym, w.d, vaddr_to_offset(path, pl.plt), NULL,
					FG_SYM_INLINE, &fr),
		  0);
	ASSERT_STREQ(fr.names[0], ".plt");
	fg_symbolizer__stats(w.sym, &st);
	ASSERT_EQ(st.resolved_jobs, 1);

	with_loader_done(&w);
}

TEST(libc_local_function_from_libc6_dbg)
{
	char libc[PATH_MAX], debug[PATH_MAX], dir[] = "/tmp/fg-test-symbols-XXXXXX";
	struct fg_symbolizer *sym;
	struct fg_elf_syms *dyn;
	struct fg_dso *d;
	uint64_t addr;
	int fd;

	own_libc(libc, sizeof(libc), debug, sizeof(debug));
	if (access(debug, R_OK) != 0)
		SKIP("libc6-dbg is not installed");
	/* A static function of glibc: in the debug file's .symtab, not in libc's .dynsym. */
	addr = symbol_value(debug, "__libc_start_call_main");
	fd = open(libc, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fg_elf_syms__load_fd(fd, &dyn));
	close(fd);
	ASSERT_EQ(fg_elf_syms__find(dyn, "__libc_start_call_main"), -1);
	fg_elf_syms__free(dyn);

	ASSERT_OK(fg_symbolizer__new(&sym));
	d = file_dso(sym, libc);
	ASSERT_TRUE(strncmp(frames_at(sym, d, addr + 1, ALL), "__libc_start_call_main", 22) == 0);
	/* The debug file's .symtab spells versions into names: they are dropped, as in .dynsym. */
	ASSERT_STREQ(frames_at(sym, d, symbol_value(debug, "__libc_start_main@@GLIBC_2.34") + 1, 0),
		     "__libc_start_main");
	fg_dso__unref(d);
	fg_symbolizer__free(sym);

	/* The same without the system's debug directory: not that name. */
	sym = isolated(dir);
	d = file_dso(sym, libc);
	ASSERT_TRUE(strncmp(frames_at(sym, d, addr + 1, ALL), "__libc_start_call_main", 22) != 0);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
	remove_tree(dir);
}

/* This test program's path. */
static void self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	ASSERT_TRUE(n > 0);
	buf[n] = '\0';
}

/* fg_symbolizer__frames(), the loop's way: names joined by ';', and what it returned. */
static const char *frames_loop(struct fg_symbolizer *sym, struct fg_dso *d, uint64_t vaddr,
			       unsigned flags, int *ret)
{
	static char out[8192];
	struct fg_sym_frames fr;
	size_t len = 0;

	*ret = fg_symbolizer__frames(sym, d, vaddr_to_offset(fg_dso__path(d), vaddr), NULL, flags,
				     &fr);
	ASSERT_OK(*ret);
	out[0] = '\0';
	for (size_t i = 0; i < fr.n; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", i ? ";" : "",
					fr.names[i]);
	return out;
}

/* The address of function name in the table of path (its .dynsym will do). */
static uint64_t function_in(const char *path, const char *name)
{
	struct fg_elf_syms *s;
	uint64_t addr;
	int64_t i;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ASSERT_TRUE(fd >= 0);
	ASSERT_OK(fg_elf_syms__load_fd(fd, &s));
	close(fd);
	i = fg_elf_syms__find(s, name);
	ASSERT_TRUE(i >= 0);
	addr = fg_elf_syms__addr(s, (size_t)i);
	fg_elf_syms__free(s);
	return addr;
}

TEST(memory_pressure_evicts_dwarf_then_symbols_least_recently_used_first)
{
	const char *inl = program_path("fgtest-inline");
	uint64_t mark = symbol_value(inl, "fgtest_inline_mark"), getpid_at;
	char dir[] = "/tmp/fg-test-symbols-XXXXXX", libc[PATH_MAX], libc_debug[PATH_MAX];
	struct fg_symbolizer *sym;
	struct fg_status_symbols st;
	struct fg_status_memory bs;
	struct fg_budget *b;
	struct fg_dso *a, *big;
	uint64_t libc_bytes, total;
	const char *name;
	int r;

	own_libc(libc, sizeof(libc), libc_debug, sizeof(libc_debug));
	getpid_at = function_in(libc, "getpid");
	sym = isolated(dir);
	ASSERT_OK(fg_budget__new(1ULL << 30, &b));
	fg_symbolizer__set_budget(sym, b);
	/* libc first, so that it is the least recently used; it has no DWARF here. */
	big = file_dso(sym, libc);
	name = frames_loop(sym, big, getpid_at, ALL, &r);
	ASSERT_TRUE(strcmp(name, "getpid") == 0 || strcmp(name, "__getpid") == 0);
	fg_symbolizer__stats(sym, &st);
	libc_bytes = st.symbols_bytes;
	ASSERT_EQ(st.dwarf_bytes, 0);
	a = file_dso(sym, inl);
	ASSERT_STREQ(frames_loop(sym, a, mark, ALL, &r), INLINE_CHAIN);

	/* Every byte held is charged: the symbol tables, the DWARF, the names kept (none here). */
	fg_symbolizer__stats(sym, &st);
	fg_budget__stats(b, &bs);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_SYMBOLS].bytes, st.symbols_bytes);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_DWARF].bytes, st.dwarf_bytes);
	ASSERT_TRUE(st.dwarf_bytes > 0 && st.symbols_bytes > libc_bytes);
	ASSERT_TRUE(libc_bytes > 4 * st.dwarf_bytes);

	/*
	 * A total both fit in (symbols may take half), then a base that puts it
	 * one byte over: relieving has to free a sixteenth of it, which the
	 * DWARF alone does not hold, and libc's table, the older, does.
	 */
	total = 8 * libc_bytes;
	fg_budget__set_total(b, total);
	fg_budget__set_base(b, total - bs.charged + 1);
	ASSERT_TRUE(fg_budget__over(b));
	/* Everything was used just now: nothing may go yet, and that is counted. */
	ASSERT_U64_EQ(fg_budget__relieve(b, fgd_now()), 0);
	fg_budget__stats(b, &bs);
	ASSERT_EQ(bs.unrelieved, 1);
	ASSERT_EQ(bs.by_part[FG_BUDGET_DWARF].evicted + bs.by_part[FG_BUDGET_SYMBOLS].evicted, 0);
	/* Two minutes on, both binaries are cold. */
	ASSERT_TRUE(fg_budget__relieve(b, fgd_now() + 120ULL * 1000000000ULL) > 0);
	ASSERT_TRUE(!fg_budget__over(b));
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.dwarf_evicted, 1);
	ASSERT_EQ(st.symbols_evicted, 1);
	ASSERT_EQ(fg_dso__state(big), FG_DSO_UNLOADED);
	ASSERT_EQ(fg_dso__state(a), FG_DSO_LOADED);
	ASSERT_TRUE(fg_dso__dwarf(a) == NULL);
	fg_budget__stats(b, &bs);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_DWARF].bytes, 0);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_SYMBOLS].bytes, st.symbols_bytes);
	ASSERT_EQ(bs.by_part[FG_BUDGET_DWARF].evicted, 1);
	ASSERT_EQ(bs.by_part[FG_BUDGET_SYMBOLS].evicted, 1);

	/* No room to read the DWARF again: the symbol table names it, without inline frames. */
	fg_budget__set_base(b, total);
	ASSERT_STREQ(frames_loop(sym, a, mark, ALL, &r), "fgtest_outer");
	ASSERT_EQ(r, 0);
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.inline_skipped, 1);
	ASSERT_EQ(st.dwarf_reread, 0);
	/* Room again: read again, and the inline frames are back. */
	fg_budget__set_base(b, 0);
	ASSERT_STREQ(frames_loop(sym, a, mark, ALL, &r), INLINE_CHAIN);
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.dwarf_reread, 1);
	ASSERT_TRUE(fg_dso__dwarf(a) != NULL);
	/* The evicted table is read again by the next lookup that needs it. */
	name = frames_loop(sym, big, getpid_at, ALL, &r);
	ASSERT_TRUE(strcmp(name, "getpid") == 0 || strcmp(name, "__getpid") == 0);
	ASSERT_EQ(fg_dso__state(big), FG_DSO_LOADED);
	fg_symbolizer__stats(sym, &st);
	fg_budget__stats(b, &bs);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_SYMBOLS].bytes, st.symbols_bytes);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_DWARF].bytes, st.dwarf_bytes);

	fg_dso__unref(a);
	fg_dso__unref(big);
	fg_symbolizer__free(sym);
	/* All given back. */
	fg_budget__stats(b, &bs);
	ASSERT_U64_EQ(bs.charged, 0);
	fg_budget__free(b);
	remove_tree(dir);
}

TEST(a_symbol_table_larger_than_the_budget_is_refused)
{
	char dir[] = "/tmp/fg-test-symbols-XXXXXX";
	struct fg_symbolizer *sym = isolated(dir);
	struct fg_status_symbols st;
	struct fg_status_memory bs;
	struct fg_budget *b;
	struct fg_dso *d;
	char self[4096];
	int r;

	/* Symbols may take half of 16 KiB: this test program's table is far more. */
	ASSERT_OK(fg_budget__new(16 << 10, &b));
	fg_symbolizer__set_budget(sym, b);
	self_path(self, sizeof(self));
	d = file_dso(sym, self);
	ASSERT_TRUE(
		strncmp(frames_loop(sym, d, symbol_value(self, "fgtest_symbols_marker"), ALL, &r),
			"test-symbols+0x", 15) == 0);
	ASSERT_EQ(fg_dso__state(d), FG_DSO_FAILED);
	ASSERT_ERR(fg_dso__error(d), -ENOBUFS);
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.symbols_refused, 1);
	fg_budget__stats(b, &bs);
	ASSERT_EQ(bs.by_part[FG_BUDGET_SYMBOLS].refused, 1);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_SYMBOLS].bytes, 0);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
	fg_budget__free(b);
	remove_tree(dir);
}
