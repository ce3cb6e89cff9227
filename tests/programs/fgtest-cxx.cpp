// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * C++ names for demangling: a class template in nested namespaces, an
 * instantiated member (fgtest::shapes::Accumulator<int>::add) and a static
 * inline function inlined into it, marked by the global label
 * fgtest_cxx_mark (so Accumulator is instantiated for int only: the label
 * must be defined once). Prints "ready", then works for argv[1] seconds
 * (default: until killed).
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace fgtest {
namespace shapes {

static inline __attribute__((always_inline)) long mix(long x)
{
	__asm__ volatile(".globl fgtest_cxx_mark\nfgtest_cxx_mark:\n\tnop");
	for (int i = 0; i < 4000; i++)
		x = x * 2862933555777941757L + (x >> 17) + 3037000493L;
	return x;
}

template <typename T> struct Accumulator {
	T total{};
	__attribute__((noinline)) T add(T v);
};

template <typename T> T Accumulator<T>::add(T v)
{
	total += static_cast<T>(mix(static_cast<long>(v)));
	return total;
}

template struct Accumulator<int>;

} // namespace shapes
} // namespace fgtest

static double now()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : -1, end = now() + secs;
	fgtest::shapes::Accumulator<int> acc;
	volatile int sink = 0;

	std::printf("ready\n");
	std::fflush(stdout);
	do
		sink = acc.add(sink + 1);
	while (secs < 0 || now() < end);
	return 0;
}
