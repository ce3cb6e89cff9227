/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fgd-elf.h"
#include "fgd-proc.h"
#include "fgd-symbols.h"
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
	ASSERT_STREQ(fg_symbolizer__name_user(sym, m->dso, addr + 4 - m->start + m->pgoff, NULL, buf,
					      sizeof(buf), &res),
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
	struct fg_symbolizer_stats st;
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
	ASSERT_EQ(st.dsos, 1);
	fg_dso__unref(by_inode);
	fg_dso__unref(again);
	fg_dso__unref(by_id);
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.dsos, 0);
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
	struct fg_symbolizer_stats st;

	ASSERT_OK(fg_symbolizer__new(&sym));
	f = fg_symbolizer__get_dso(sym, &fkey, "/nonexistent/libgone.so (deleted)", NULL, NULL);
	ASSERT_STREQ(fg_dso__path(f), "/nonexistent/libgone.so");
	ASSERT_STREQ(fg_symbolizer__name_user(sym, f, 0x1a2b, NULL, buf, sizeof(buf), &res), "libgone.so+0x1a2b");
	ASSERT_EQ(res, FG_SYM_OFFSET);
	ASSERT_EQ(fg_dso__error(f), -ENOENT);
	a = fg_symbolizer__get_dso(sym, &akey, "//anon", NULL, NULL);
	ASSERT_STREQ(fg_symbolizer__name_user(sym, a, 0x10, NULL, buf, sizeof(buf), &res), "[unknown]");
	ASSERT_EQ(res, FG_SYM_UNKNOWN);
	ASSERT_STREQ(fg_symbolizer__name_user(sym, NULL, 0x10, NULL, buf, sizeof(buf), &res), "[unknown]");
	fg_symbolizer__stats(sym, &st);
	ASSERT_EQ(st.dsos_failed, 1);
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
	ASSERT_STREQ(fg_symbolizer__name_user(sym, d, 0x10, path, buf, sizeof(buf), &res), "lib.so+0x10");
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

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &s, &e, &o) == 3 && s <= addr &&
		    addr < e) {
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
	ASSERT_TRUE(strcmp(name, "__vdso_clock_gettime") == 0 || strcmp(name, "clock_gettime") == 0);
	fg_elf_syms__free(img);
	fg_dso__unref(d);
	fg_symbolizer__free(sym);
}

TEST(kernel_symbols_from_kallsyms)
{
	struct fg_symbolizer *sym;
	struct fg_symbolizer_stats st;
	char line[512];
	uint64_t addr = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		SKIP("/proc/kallsyms unreadable");
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		uint64_t a;

		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, name) == 3 && strcmp(name, "schedule") == 0) {
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
	ASSERT_TRUE(st.kallsyms > 1000);
	fg_symbolizer__free(sym);
}
