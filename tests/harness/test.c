/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "test.h"

#define MAX_TESTS 256

static struct {
	const char *name;
	fg_test_fn fn;
} tests[MAX_TESTS];
static size_t n_tests;
static jmp_buf test_exit;
static int test_state;

enum { PASSED, FAILED, SKIPPED };

void fg_test_register(const char *name, fg_test_fn fn)
{
	if (n_tests == MAX_TESTS) {
		fprintf(stderr, "too many tests; raise MAX_TESTS\n");
		abort();
	}
	tests[n_tests].name = name;
	tests[n_tests].fn = fn;
	n_tests++;
}

void fg_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	test_state = FAILED;
	longjmp(test_exit, 1);
}

void fg_test_skip(const char *reason)
{
	fprintf(stderr, "skip: %s\n", reason);
	test_state = SKIPPED;
	longjmp(test_exit, 1);
}

const char *fg_test_build_dir(void)
{
	const char *d = getenv("FG_TEST_BUILD_DIR");

	return d ? d : ".";
}

const char *fg_test_data_dir(void)
{
	const char *d = getenv("FG_TEST_DATA_DIR");

	return d ? d : "tests/data";
}

static bool selected(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return true;
	return false;
}

static int run_one(fg_test_fn fn)
{
	test_state = PASSED;
	if (setjmp(test_exit) == 0)
		fn();
	return test_state;
}

int main(int argc, char **argv)
{
	size_t passed = 0, failed = 0, skipped = 0;

	for (size_t i = 0; i < n_tests; i++) {
		if (!selected(tests[i].name, argc, argv))
			continue;
		switch (run_one(tests[i].fn)) {
		case PASSED:
			passed++;
			printf("ok      %s\n", tests[i].name);
			break;
		case FAILED:
			failed++;
			printf("FAIL    %s\n", tests[i].name);
			break;
		default:
			skipped++;
			printf("skip    %s\n", tests[i].name);
			break;
		}
		fflush(stdout);
	}
	printf("%zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
	if (failed)
		return 1;
	return passed == 0 && skipped > 0 ? 77 : 0;
}
