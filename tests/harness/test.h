/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgd's test harness. Each tests/unit/test-<module>.c defines TEST()s; the
 * harness main runs them all (or those named on the command line), prints
 * one line per test, and exits 0, 1 on any failure, or 77 when every test
 * skipped. An assertion prints file:line with both values and ends the test.
 */

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef void (*fg_test_fn)(void);

void fg_test_register(const char *name, fg_test_fn fn);
_Noreturn void fg_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
_Noreturn void fg_test_skip(const char *reason);

/* Directory holding the test binaries meson built (FG_TEST_BUILD_DIR). */
const char *fg_test_build_dir(void);
/* Directory holding tests/data (FG_TEST_DATA_DIR). */
const char *fg_test_data_dir(void);

#define TEST(name)                                                     \
	static void test_##name(void);                                 \
	__attribute__((constructor)) static void register_##name(void) \
	{                                                              \
		fg_test_register(#name, test_##name);                  \
	}                                                              \
	static void test_##name(void)

#define SKIP(reason) fg_test_skip(reason)

#define ASSERT_TRUE(x)                                                        \
	do {                                                                  \
		if (!(x))                                                     \
			fg_test_fail(__FILE__, __LINE__, "expected: %s", #x); \
	} while (0)

#define ASSERT_EQ(a, b)                                                                           \
	do {                                                                                      \
		int64_t _a = (int64_t)(a), _b = (int64_t)(b);                                     \
		if (_a != _b)                                                                     \
			fg_test_fail(__FILE__, __LINE__, "%s == %s: %" PRId64 " != %" PRId64, #a, \
				     #b, _a, _b);                                                 \
	} while (0)

#define ASSERT_U64_EQ(a, b)                                                                       \
	do {                                                                                      \
		uint64_t _a = (uint64_t)(a), _b = (uint64_t)(b);                                  \
		if (_a != _b)                                                                     \
			fg_test_fail(__FILE__, __LINE__, "%s == %s: 0x%" PRIx64 " != 0x%" PRIx64, \
				     #a, #b, _a, _b);                                             \
	} while (0)

#define ASSERT_STREQ(a, b)                                                                     \
	do {                                                                                   \
		const char *_a = (a), *_b = (b);                                               \
		if (!_a || !_b || strcmp(_a, _b) != 0)                                         \
			fg_test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b, \
				     _a ? _a : "(null)", _b ? _b : "(null)");                  \
	} while (0)

/* r is a return value that must be >= 0. */
#define ASSERT_OK(r)                                                                               \
	do {                                                                                       \
		int64_t _r = (int64_t)(r);                                                         \
		if (_r < 0)                                                                        \
			fg_test_fail(__FILE__, __LINE__, "%s failed: %s", #r, strerror((int)-_r)); \
	} while (0)

/* r is a return value that must be exactly the negative errno e (e.g. -EINVAL). */
#define ASSERT_ERR(r, e) ASSERT_EQ(r, e)

/*
 * Bytes of heap in use now, to check the *_bytes() accessors against what
 * was really allocated; 0 where the allocator does not say (sanitizers).
 */
static inline size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd; /* large blocks are mapped on their own */
}

/* An accessor's figure is the heap its object holds, within 10% (chunk headers, rounding). */
#define ASSERT_BYTES_MATCH(claimed, before, after)                                      \
	do {                                                                            \
		size_t _c = (claimed), _b = (before), _a = (after);                     \
		if (_b > 0 && _a > 0)                                                   \
			ASSERT_TRUE(_a - _b >= _c * 9 / 10 && _a - _b <= _c * 11 / 10); \
	} while (0)
