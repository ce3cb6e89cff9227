/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "perf/kallsyms.h"
#include "test.h"

/* Shaped like a real /proc/kallsyms: aliases at _stext, __pfx_ padding, an _etext, modules. */
static const char fixture_sorted[] =
	"ffffffff81000000 T srso_alias_untrain_ret\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T __pi__text\n"
	"ffffffff81000010 T __entry_text_start\n"
	"ffffffff81000040 T entry_SYSCALL_64\n"
	"ffffffff81000100 t __pfx_foo_local\n"
	"ffffffff81000110 t foo_local\n"
	"ffffffff810001f0 T __entry_text_end\n"
	"ffffffff81001000 T schedule\n"
	"ffffffff81001200 W weak_fn\n"
	"ffffffff81002000 T _etext\n"
	"ffffffff81003000 T _sinittext\n"
	"ffffffff81003000 t __pfx_set_reset_devices\n"
	"ffffffff81003010 t set_reset_devices\n"
	"ffffffff81003100 T _einittext\n"
	"ffffffff82000000 D jiffies\n"
	"ffffffffc0a01000 t foo_init\t[foo]\n"
	"ffffffffc0a01100 T foo_work\t[foo]\n"
	"ffffffffc0a02000 d foo_data\t[foo]\n"
	"ffffffffc0b00000 t bar_fn\t[bar]\n"
	"ffffffffc0d00000 t bpf_prog_6deef7357e7b4530_sd_fw_ingress\t[bpf]\n"
	"ffffffffc0d00080 t bpf_prog_6deef7357e7b4531_other\t[bpf]\n";

/* The same symbols shuffled, with exact duplicates and more aliases. */
static const char fixture_shuffled[] =
	"ffffffffc0b00000 t bar_fn\t[bar]\n"
	"ffffffff81000040 T entry_SYSCALL_64\n"
	"ffffffff81003100 T _einittext\n"
	"ffffffff81001200 W weak_fn\n"
	"ffffffff81001200 w weak_fn_alias\n"
	"ffffffffc0a02000 d foo_data\t[foo]\n"
	"ffffffff81000000 T __pi__text\n"
	"ffffffffc0d00080 t bpf_prog_6deef7357e7b4531_other\t[bpf]\n"
	"ffffffff81003010 t set_reset_devices\n"
	"ffffffff81000110 t foo_local\n"
	"ffffffff81000110 t foo_local\n"
	"ffffffff82000000 D jiffies\n"
	"ffffffff81001000 t schedule_local_alias\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81002000 T _etext\n"
	"ffffffffc0a01100 T foo_work\t[foo]\n"
	"ffffffff810001f0 T __entry_text_end\n"
	"ffffffff81000000 T srso_alias_untrain_ret\n"
	"ffffffff81000100 t __pfx_foo_local\n"
	"ffffffff81003000 t __pfx_set_reset_devices\n"
	"ffffffffc0a01000 t foo_init\t[foo]\n"
	"ffffffff81001000 T schedule\n"
	"ffffffffc0d00000 t bpf_prog_6deef7357e7b4530_sd_fw_ingress\t[bpf]\n"
	"ffffffff81000010 T __entry_text_start\n"
	"ffffffff81003000 T _sinittext\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T schedule\n";

static struct fg_kallsyms *parse(const char *text, size_t len)
{
	struct fg_kallsyms *k = NULL;

	ASSERT_OK(fg_kallsyms__parse(text, len, &k));
	ASSERT_TRUE(k);
	return k;
}

/* Asserts that addr resolves to name in module (NULL = core), or to nothing when name is NULL. */
static void expect(const struct fg_kallsyms *k, uint64_t addr, const char *name, const char *module)
{
	int64_t i = fg_kallsyms__lookup(k, addr);

	if (!name) {
		if (i >= 0)
			fg_test_fail(__FILE__, __LINE__,
				     "0x%" PRIx64 " resolved to %s, expected nothing", addr,
				     fg_kallsyms__name(k, (size_t)i));
		return;
	}
	if (i < 0)
		fg_test_fail(__FILE__, __LINE__, "0x%" PRIx64 " did not resolve, expected %s", addr,
			     name);
	ASSERT_STREQ(fg_kallsyms__name(k, (size_t)i), name);
	if (module)
		ASSERT_STREQ(fg_kallsyms__module(k, (size_t)i), module);
	else
		ASSERT_TRUE(fg_kallsyms__module(k, (size_t)i) == NULL);
	ASSERT_TRUE(fg_kallsyms__addr(k, (size_t)i) <= addr);
}

static void check_fixture_lookups(const struct fg_kallsyms *k)
{
	ASSERT_EQ(fg_kallsyms__n_malformed(k), 0);
	ASSERT_TRUE(!fg_kallsyms__restricted(k));

	expect(k, 0, NULL, NULL);
	expect(k, 0xffffffff80ffffff, NULL, NULL);
	/* The function wins over the linker markers aliased to it. */
	expect(k, 0xffffffff81000000, "srso_alias_untrain_ret", NULL);
	expect(k, 0xffffffff8100000f, "srso_alias_untrain_ret", NULL);
	expect(k, 0xffffffff81000010, "__entry_text_start", NULL);
	expect(k, 0xffffffff81000100, "__pfx_foo_local", NULL);
	expect(k, 0xffffffff81000110, "foo_local", NULL);
	expect(k, 0xffffffff810001ef, "foo_local", NULL);
	/* __entry_text_end is a region end, not a function. */
	expect(k, 0xffffffff810001f0, NULL, NULL);
	expect(k, 0xffffffff81000fff, NULL, NULL);
	expect(k, 0xffffffff81001000, "schedule", NULL);
	expect(k, 0xffffffff81001100, "schedule", NULL);
	expect(k, 0xffffffff810011ff, "schedule", NULL);
	expect(k, 0xffffffff81001200, "weak_fn", NULL);
	expect(k, 0xffffffff81001fff, "weak_fn", NULL);
	/* Past _etext is not the last core function. */
	expect(k, 0xffffffff81002000, NULL, NULL);
	expect(k, 0xffffffff81002abc, NULL, NULL);
	/* Init text: the T marker beats the t padding alias, and _einittext ends it. */
	expect(k, 0xffffffff81003000, "_sinittext", NULL);
	expect(k, 0xffffffff81003010, "set_reset_devices", NULL);
	expect(k, 0xffffffff810030ff, "set_reset_devices", NULL);
	expect(k, 0xffffffff81003100, NULL, NULL);
	expect(k, 0xffffffff82000000, NULL, NULL);

	expect(k, 0xffffffffc0a01000, "foo_init", "foo");
	expect(k, 0xffffffffc0a010ff, "foo_init", "foo");
	expect(k, 0xffffffffc0a01100, "foo_work", "foo");
	expect(k, 0xffffffffc0a01fff, "foo_work", "foo");
	/* A data symbol of the module ends its text. */
	expect(k, 0xffffffffc0a02000, NULL, NULL);
	expect(k, 0xffffffffc0a80000, NULL, NULL);
	/* The last function of a module is capped at 1 MiB. */
	expect(k, 0xffffffffc0b00000, "bar_fn", "bar");
	expect(k, 0xffffffffc0b00000 + FG_KALLSYMS_MAX_EXTENT - 1, "bar_fn", "bar");
	expect(k, 0xffffffffc0b00000 + FG_KALLSYMS_MAX_EXTENT, NULL, NULL);
	expect(k, 0xffffffffc0d00000, "bpf_prog_6deef7357e7b4530_sd_fw_ingress", "bpf");
	expect(k, 0xffffffffc0d00080, "bpf_prog_6deef7357e7b4531_other", "bpf");
	expect(k, 0xffffffffc0d00080 + FG_KALLSYMS_MAX_EXTENT, NULL, NULL);
	expect(k, UINT64_MAX, NULL, NULL);
}

TEST(sorted_fixture)
{
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;

	k = parse(fixture_sorted, sizeof(fixture_sorted) - 1);
	/* Distinct function addresses; markers and data are not counted. */
	ASSERT_EQ(fg_kallsyms__count(k), 14);
	for (size_t i = 1; i < fg_kallsyms__count(k); i++)
		ASSERT_TRUE(fg_kallsyms__addr(k, i - 1) < fg_kallsyms__addr(k, i));
	check_fixture_lookups(k);
}

TEST(shuffled_duplicates_same_table)
{
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *a = NULL, *b = NULL;

	a = parse(fixture_sorted, sizeof(fixture_sorted) - 1);
	b = parse(fixture_shuffled, sizeof(fixture_shuffled) - 1);
	check_fixture_lookups(b);
	ASSERT_EQ(fg_kallsyms__count(a), fg_kallsyms__count(b));
	for (size_t i = 0; i < fg_kallsyms__count(a); i++) {
		const char *ma = fg_kallsyms__module(a, i), *mb = fg_kallsyms__module(b, i);

		ASSERT_U64_EQ(fg_kallsyms__addr(a, i), fg_kallsyms__addr(b, i));
		ASSERT_STREQ(fg_kallsyms__name(a, i), fg_kallsyms__name(b, i));
		ASSERT_TRUE((!ma && !mb) || (ma && mb && strcmp(ma, mb) == 0));
	}
}

TEST(alias_preference)
{
	/* Every rotation of these lines must pick the same name. */
	static const char *const lines[] = {
		"ffffffff81000000 w weak_local\n",  "ffffffff81000000 W weak_global\n",
		"ffffffff81000000 t local\n",       "ffffffff81000000 T __marker\n",
		"ffffffff81000000 T global_long\n", "ffffffff81000000 T global_b\n",
		"ffffffff81000000 T global_a\n",
	};
	const size_t n = ELEMENTSOF(lines);

	for (size_t rot = 0; rot < n; rot++) {
		_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;
		char buf[512] = "";

		for (size_t i = 0; i < n; i++)
			strcat(buf, lines[(rot + i) % n]);
		k = parse(buf, strlen(buf));
		ASSERT_EQ(fg_kallsyms__count(k), 1);
		expect(k, 0xffffffff81000000, "global_a", NULL);
	}
}

TEST(malformed_lines)
{
	static const char text[] = "ffffffff81000000 T good_a\n"
				   "zzzzzzzzzzzzzzzz T bad_hex\n"
				   "ffffffff81000100\n"
				   "ffffffff81000100 T\n"
				   "ffffffff81000100 TT two_char_type\n"
				   "ffffffff81000100 1 digit_type\n"
				   "ffffffff81000100 T name extra\n"
				   "ffffffff81000100 T name\t[mod] extra\n"
				   "ffffffff81000100 T name\t[unterminated\n"
				   "ffffffff81000100 T name\t[]\n"
				   "1ffffffff81000100 T seventeen_digits\n"
				   "ffffffff8100010g T bad_digit\n"
				   "ffffffff81000100 T nul\0byte\n"
				   "T ffffffff81000100 swapped\n"
				   "\n"
				   "   \n"
				   "ffffffff81000200 T good_b\n";
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;

	k = parse(text, sizeof(text) - 1);
	ASSERT_EQ(fg_kallsyms__n_malformed(k), 13);
	ASSERT_EQ(fg_kallsyms__count(k), 2);
	expect(k, 0xffffffff81000000, "good_a", NULL);
	expect(k, 0xffffffff810001ff, "good_a", NULL);
	expect(k, 0xffffffff81000200, "good_b", NULL);
}

TEST(overlong_names)
{
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;
	_cleanup_free_ char *text = NULL;
	size_t len;

	text = malloc(4096);
	ASSERT_TRUE(text);
	len = (size_t)sprintf(text, "ffffffff81000000 T ");
	memset(text + len, 'x', 2000);
	len += 2000;
	len += (size_t)sprintf(text + len, "\nffffffff81000100 T ok\t[");
	memset(text + len, 'm', 300);
	len += 300;
	len += (size_t)sprintf(text + len, "]\nffffffff81000200 T fine\n");
	k = parse(text, len);
	ASSERT_EQ(fg_kallsyms__n_malformed(k), 2);
	ASSERT_EQ(fg_kallsyms__count(k), 1);
}

TEST(crlf_garbage_no_trailing_newline)
{
	static const char text[] = "ffffffff81000000 T a\r\n"
				   "ffffffff81000100 t b\t[m]\r\n"
				   "\x01\x02\xff garbage\r\n"
				   "ffffffff81000200 T c  \t";
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;

	k = parse(text, sizeof(text) - 1);
	ASSERT_EQ(fg_kallsyms__n_malformed(k), 1);
	ASSERT_EQ(fg_kallsyms__count(k), 3);
	expect(k, 0xffffffff81000000, "a", NULL);
	expect(k, 0xffffffff81000100, "b", "m");
	expect(k, 0xffffffff81000201, "c", NULL);

	/* Text cut off right after the last name, without its newline. */
	k = fg_kallsyms__free(k);
	k = parse(text, sizeof(text) - 1 - 3);
	expect(k, 0xffffffff81000200, "c", NULL);
}

TEST(restricted)
{
	static const char text[] = "0000000000000000 T _stext\n"
				   "0000000000000000 T schedule\n"
				   "0000000000000000 D jiffies\n"
				   "0000000000000000 t foo_init\t[foo]\n";
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;

	k = parse(text, sizeof(text) - 1);
	ASSERT_TRUE(fg_kallsyms__restricted(k));
	ASSERT_EQ(fg_kallsyms__count(k), 0);
	ASSERT_EQ(fg_kallsyms__n_malformed(k), 0);
	expect(k, 0, NULL, NULL);
	expect(k, 0xffffffff81000000, NULL, NULL);
}

TEST(zero_addresses_mixed)
{
	/* Per-cpu symbols sit at small addresses; a zero one never becomes a function. */
	static const char text[] = "0000000000000000 A fixed_percpu_data\n"
				   "0000000000000000 T zero_fn\n"
				   "ffffffff81000000 T real_fn\n";
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;

	k = parse(text, sizeof(text) - 1);
	ASSERT_TRUE(!fg_kallsyms__restricted(k));
	ASSERT_EQ(fg_kallsyms__count(k), 1);
	expect(k, 0, NULL, NULL);
	expect(k, 0xffffffff81000000, "real_fn", NULL);
}

TEST(top_of_address_space)
{
	/* Found by fuzzing: the 1 MiB cap must not wrap past the last address. */
	static const char text[] = "fffffffffffffff0 T below_top\n"
				   "ffffffffffffffff T top\n";
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;

	k = parse(text, sizeof(text) - 1);
	ASSERT_EQ(fg_kallsyms__count(k), 2);
	expect(k, 0xfffffffffffffff0, "below_top", NULL);
	expect(k, 0xfffffffffffffffe, "below_top", NULL);
	expect(k, UINT64_MAX, "top", NULL);
}

TEST(empty)
{
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;

	k = parse("", 0);
	ASSERT_EQ(fg_kallsyms__count(k), 0);
	ASSERT_TRUE(!fg_kallsyms__restricted(k));
	expect(k, 0xffffffff81000000, NULL, NULL);
}

/* Reads a whole procfs file; its size is unknown until read. */
static char *read_proc(const char *path, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	char *buf = NULL;
	size_t len = 0, cap = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n;

		if (FG_GROW(buf, cap, len + 65536) < 0) {
			free(buf);
			return NULL;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*ret_len = len;
	return buf;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

TEST(real_proc_kallsyms)
{
	enum { N_LOOKUPS = 1000000 };
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ uint64_t *addrs = NULL;
	uint64_t sched = 0, t0, t1, parse_ns, x = 88172645463325252ULL;
	const char *p;
	size_t len, hits = 0, n;

	text = read_proc("/proc/kallsyms", &len);
	if (!text)
		SKIP("/proc/kallsyms is not readable");
	t0 = now_ns();
	k = parse(text, len);
	parse_ns = now_ns() - t0;
	if (fg_kallsyms__restricted(k))
		SKIP("kptr_restrict hides kernel addresses");
	ASSERT_EQ(fg_kallsyms__n_malformed(k), 0);
	ASSERT_TRUE(fg_kallsyms__count(k) > 1000);

	/* Find "<addr> T schedule\n" by hand, independently of the parser. */
	for (p = text; p < text + len;) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
		char line[256], name[64];
		unsigned long long a;
		char type;

		/* sscanf wants a terminated string, and the buffer is not one. */
		snprintf(line, sizeof(line), "%.*s", (int)MIN(l, sizeof(line) - 1), p);
		if (sscanf(line, "%llx %c %63s", &a, &type, name) == 3 &&
		    strcmp(name, "schedule") == 0 && (type == 'T' || type == 't')) {
			sched = a;
			break;
		}
		p += l + 1;
	}
	if (!sched)
		SKIP("no schedule symbol in /proc/kallsyms");
	expect(k, sched, "schedule", NULL);
	expect(k, sched + 1, "schedule", NULL);

	/* Addresses near random functions: a rough lookup cost, printed for reference. */
	n = fg_kallsyms__count(k);
	addrs = malloc(N_LOOKUPS * sizeof(*addrs));
	ASSERT_TRUE(addrs);
	for (size_t j = 0; j < N_LOOKUPS; j++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		addrs[j] = fg_kallsyms__addr(k, (x >> 8) % n) + (x & 63);
	}
	t0 = now_ns();
	for (size_t j = 0; j < N_LOOKUPS; j++)
		hits += fg_kallsyms__lookup(k, addrs[j]) >= 0;
	t1 = now_ns();
	printf("# %zu symbols, %zu malformed; parse %.1f ms; %.1f ns per lookup (%zu of %d hit)\n",
	       n, fg_kallsyms__n_malformed(k), (double)parse_ns / 1e6,
	       (double)(t1 - t0) / N_LOOKUPS, hits, (int)N_LOOKUPS);
}

/* Appends a note (header, name and descriptor, each padded to 4 bytes) to buf at *len. */
static void put_note(uint8_t *buf, size_t *len, const char *name, uint32_t namesz, uint32_t type,
		     const uint8_t *desc, uint32_t descsz)
{
	uint32_t h[3] = { namesz, descsz, type };

	memcpy(buf + *len, h, sizeof(h));
	*len += sizeof(h);
	memset(buf + *len, 0, (namesz + 3) & ~3u);
	memcpy(buf + *len, name, namesz);
	*len += (namesz + 3) & ~3u;
	memset(buf + *len, 0, (descsz + 3) & ~3u);
	memcpy(buf + *len, desc, descsz);
	*len += (descsz + 3) & ~3u;
}

TEST(kernel_build_id_from_its_notes)
{
	uint8_t buf[256], id[20], other[6] = { 1, 2, 3, 4, 5, 6 };
	const uint8_t *got;
	size_t len = 0, got_len, whole;

	for (size_t i = 0; i < sizeof(id); i++)
		id[i] = (uint8_t)(0xa0 + i);
	/* Linux's own notes come first, as in /sys/kernel/notes; a GNU note of another type too. */
	put_note(buf, &len, "Linux", 6, 6, other, sizeof(other));
	put_note(buf, &len, "GNU", 4, 4, other, 4);
	put_note(buf, &len, "GNU", 4, 3, id, sizeof(id));
	whole = len;
	ASSERT_OK(fg_kernel_build_id(buf, len, &got, &got_len));
	ASSERT_EQ(got_len, sizeof(id));
	ASSERT_TRUE(memcmp(got, id, sizeof(id)) == 0);
	/* Cut inside the build-id's note: not found, nothing read past the end. */
	ASSERT_EQ(fg_kernel_build_id(buf, whole - 1, &got, &got_len), -ENOENT);
	ASSERT_EQ(fg_kernel_build_id(buf, 0, &got, &got_len), -ENOENT);
	/* A name size past the end stops the search. */
	len = 0;
	put_note(buf, &len, "GNU", 4, 3, id, sizeof(id));
	buf[0] = 0xff, buf[1] = 0xff, buf[2] = 0xff, buf[3] = 0xff;
	ASSERT_EQ(fg_kernel_build_id(buf, len, &got, &got_len), -ENOENT);
}

TEST(real_kernel_notes)
{
	uint8_t buf[4096];
	const uint8_t *id;
	size_t id_len;
	ssize_t n;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		SKIP("no /sys/kernel/notes");
	n = read(fd, buf, sizeof(buf));
	close(fd);
	ASSERT_TRUE(n > 0);
	ASSERT_OK(fg_kernel_build_id(buf, (size_t)n, &id, &id_len));
	ASSERT_TRUE(id_len >= 16);
}
