/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mangled names as compilers record them in symbol tables, byte for byte:
 * Itanium C++ (g++, clang++), Rust legacy (_ZN...17h<hash>E) and Rust v0
 * (_R..., rustc -C symbol-mangling-version=v0). No rustc needed.
 */
#include <stdio.h>
#include <string.h>

#include "symbols/fgd-demangle.h"
#include "test.h"

static const char *demangled(const char *name)
{
	static char buf[1024];
	int n = fg_demangle(name, buf, sizeof(buf));

	if (n < 0)
		fg_test_fail(__FILE__, __LINE__, "fg_demangle(%s): %s", name, strerror(-n));
	if (n == 0)
		return NULL;
	ASSERT_EQ(n, strlen(buf));
	return buf;
}

TEST(cxx_without_parameters_as_perf_report)
{
	ASSERT_STREQ(demangled("_ZN9wikipedia7article6formatEv"), "wikipedia::article::format");
	ASSERT_STREQ(demangled("_ZN3foo3BarIiE3bazIdEEvT_"), "foo::Bar<int>::baz<double>");
	ASSERT_STREQ(demangled("_ZNSt6vectorIiSaIiEE9push_backERKi"),
		     "std::vector<int, std::allocator<int> >::push_back");
	ASSERT_STREQ(demangled("_ZNKSt8functionIFvvEEclEv"), "std::function<void ()>::operator()");
	ASSERT_STREQ(demangled("_ZN6fgtest6shapes11AccumulatorIiE3addEi"),
		     "fgtest::shapes::Accumulator<int>::add");
	/* GCC's split-off and specialised clones are the function they came from. */
	ASSERT_STREQ(demangled("_Z3foov.cold"), "foo");
	ASSERT_STREQ(demangled("_ZN6fgtest6shapesL3mixEl.isra.0"), "fgtest::shapes::mix");
}

TEST(plt_entries_keep_their_suffix)
{
	/* libiberty alone would drop "@plt" as it drops a clone's suffix. */
	ASSERT_STREQ(demangled("_Znwm@plt"), "operator new@plt");
	ASSERT_STREQ(demangled("_ZNSt6vectorIiSaIiEE9push_backERKi@plt"),
		     "std::vector<int, std::allocator<int> >::push_back@plt");
	ASSERT_STREQ(demangled("_ZN4core3fmt5write17h0123456789abcdefE@plt"),
		     "core::fmt::write@plt");
	ASSERT_STREQ(demangled("_RNvCs1234_7mycrate3foo@plt"), "mycrate::foo@plt");
	ASSERT_TRUE(demangled("memcmp@plt") == NULL);
	ASSERT_TRUE(demangled("_Zgarbage@plt") == NULL);
	ASSERT_TRUE(demangled("@plt") == NULL);
	ASSERT_TRUE(demangled("_Z@plt") == NULL);
}

TEST(rust_legacy_loses_its_hash)
{
	ASSERT_STREQ(demangled("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
	ASSERT_STREQ(demangled("_ZN3std2rt10lang_start17hd8a2f3a3d3c8c1f6E"),
		     "std::rt::lang_start");
	/* $LT$ and friends are the escapes of the legacy scheme. */
	ASSERT_STREQ(demangled("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$"
			       "..$u7b$$u7b$closure$u7d$$u7d$$GT$17h33d8b4ed1bcbd1a4E"),
		     "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
	/* LTO's suffix goes with the hash. */
	ASSERT_STREQ(demangled("_ZN3std2rt10lang_start17hd8a2f3a3d3c8c1f6E.llvm.1234567"),
		     "std::rt::lang_start");
}

TEST(rust_v0)
{
	ASSERT_STREQ(demangled("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
	ASSERT_STREQ(demangled("_RNvNtCs1cGDMWrDiXA_5hello4main4main"), "hello::main::main");
	ASSERT_STREQ(
		demangled(
			"_RINvNtCs9ltgdHTiPiY_4core3ptr13drop_in_placeNtCs1cGDMWrDiXA_5hello3FooEB4_"),
		"core::ptr::drop_in_place::<hello::Foo>");
}

TEST(plain_and_broken_names_are_kept)
{
	char buf[16] = "untouched";

	ASSERT_TRUE(demangled("main") == NULL);
	ASSERT_TRUE(demangled("__libc_start_call_main") == NULL);
	ASSERT_TRUE(demangled("_") == NULL);
	ASSERT_TRUE(demangled("_Z") == NULL);
	ASSERT_TRUE(demangled("_R") == NULL);
	ASSERT_TRUE(demangled("_ZN3foo") == NULL);
	ASSERT_TRUE(demangled("_RNvC") == NULL);
	ASSERT_EQ(fg_demangle("_Zgarbage", buf, sizeof(buf)), 0);
	ASSERT_STREQ(buf, "untouched");
}

TEST(output_is_cut_to_the_buffer)
{
	char buf[5];

	ASSERT_EQ(fg_demangle("_ZN4core3fmt5write17h0123456789abcdefE", buf, sizeof(buf)), 4);
	ASSERT_STREQ(buf, "core");
	ASSERT_EQ(fg_demangle("_ZN4core3fmt5write17h0123456789abcdefE", buf, 0), 0);
	/* The suffix too. */
	ASSERT_EQ(fg_demangle("_Z1fv@plt", buf, sizeof(buf)), 4);
	ASSERT_STREQ(buf, "f@pl");
	ASSERT_EQ(fg_demangle("_ZN4core3fmt5write17h0123456789abcdefE@plt", buf, sizeof(buf)), 4);
	ASSERT_STREQ(buf, "core");
	ASSERT_EQ(fg_demangle("_Z1fv@plt", buf, 1), 0);
}

TEST(overlong_names_are_left_alone)
{
	static char name[FG_DEMANGLE_MAX_IN + 64];
	char buf[64];
	size_t len = 0;

	/* _ZN + many "1a" components + E: valid, and longer than the cap. */
	len += (size_t)snprintf(name, sizeof(name), "_ZN");
	while (len + 3 < FG_DEMANGLE_MAX_IN + 16)
		len += (size_t)snprintf(name + len, sizeof(name) - len, "1a");
	snprintf(name + len, sizeof(name) - len, "E");
	ASSERT_EQ(fg_demangle(name, buf, sizeof(buf)), 0);
	/* Within the cap the same shape demangles. */
	ASSERT_STREQ(demangled("_ZN1a1a1aE"), "a::a::a");
}

/*
 * The crafted name of f<T60>, where T1 is P<int, int> and each T the P of
 * two of the one before: under 500 bytes, thanks to substitutions (S0_ is
 * P, Sk_ is T k), and 2^60 types long demangled. cplus_demangle() would
 * never finish it (c++filt prints T28's as 4 GiB in 19 s).
 */
TEST(names_that_print_huge_are_cut_where_the_output_ends)
{
	static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	static char big[FG_DEMANGLE_MAX_OUT * 2];
	char name[1024], buf[256];
	size_t len = 0;

	len += (size_t)snprintf(name + len, sizeof(name) - len, "_Z1fI1P");
	for (int k = 1; k < 60; k++)
		len += (size_t)snprintf(name + len, sizeof(name) - len, "IS0_");
	len += (size_t)snprintf(name + len, sizeof(name) - len, "IiiE");
	for (int k = 1; k < 60; k++)
		len += (size_t)snprintf(name + len, sizeof(name) - len, "S%s%c_E",
					k < 36 ? "" : "1", digits[k % 36]);
	snprintf(name + len, sizeof(name) - len, "Evv");
	ASSERT_EQ(fg_demangle(name, buf, sizeof(buf)), sizeof(buf) - 1);
	ASSERT_TRUE(strncmp(buf, "f<P<P<P<P<", 10) == 0);
	/* However large the buffer, the output stops at FG_DEMANGLE_MAX_OUT. */
	ASSERT_EQ(fg_demangle(name, big, sizeof(big)), FG_DEMANGLE_MAX_OUT);
	ASSERT_EQ(strlen(big), FG_DEMANGLE_MAX_OUT);
	ASSERT_TRUE(strncmp(big, buf, sizeof(buf) - 1) == 0);
	/* The same shape, three levels: whole, as c++filt prints it (less the types of f). */
	ASSERT_STREQ(demangled("_Z1fI1PIS0_IS0_IiiES1_ES2_EEvv"),
		     "f<P<P<P<int, int>, P<int, int> >, P<P<int, int>, P<int, int> > > >");
}
