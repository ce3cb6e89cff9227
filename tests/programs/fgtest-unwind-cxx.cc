// SPDX-License-Identifier: LGPL-2.1-or-later
// The same capture as fgtest-unwind.c, from C++: templates, a namespace and
// a lambda between main and the capture. Usage: fgtest-unwind-cxx DUMPFILE
#include "fgtest-unwind.h"

namespace fgtest {

static const char *dump_path;
static volatile int sink;

template <typename T> struct Walker {
	__attribute__((noinline)) static T leaf(T x)
	{
		volatile T pad[8];

		pad[0] = x;
		FGTEST_CAPTURE_REGS();
		if (fgtest_write_dump(dump_path, 65536) < 0)
			return -1;
		fgtest_wait_for_test();
		return pad[0] + sink;
	}

	template <int N> __attribute__((noinline)) static T step(T x)
	{
		if constexpr (N == 0)
			return leaf(x + 1) * 3 + sink;
		else
			return step<N - 1>(x + 1) * 5 + sink;
	}
};

__attribute__((noinline)) int run(int x)
{
	auto f = [](int y) __attribute__((noinline)) { return Walker<int>::step<2>(y) * 7 + sink; };
	return f(x) + sink;
}

} // namespace fgtest

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	fgtest::dump_path = argv[1];
	return fgtest::run(argc) < 0;
}
