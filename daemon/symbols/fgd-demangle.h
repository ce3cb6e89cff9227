/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * C++ and Rust symbol names made readable, with libiberty's demangler
 * (cplus_demangle's callback interface): the demangler of binutils and gdb,
 * maintained with GCC, which knows the Itanium C++ ABI, Rust's legacy
 * scheme (_ZN...17h<hash>E) and Rust v0 (_R...). Writing our own would
 * only get these wrong in new ways.
 *
 * The form is the one `perf report` shows by default (perf adds parameter
 * lists only with -v): namespaces, classes and template arguments, but no
 * parameter list and no return type. A flame graph merges frames by name,
 * and overloads of one function are one frame there, as in perf.
 * Rust legacy names lose their hash suffix (the ::h0123456789abcdef that
 * rustc adds to every symbol), and v0 names their crate disambiguators,
 * which is what rustfilt and perf print. GCC's clone suffixes go too
 * (foo.cold, foo.isra.0 are "foo"), as in perf: the split-off cold part of
 * a function is that function. The "@plt" of a PLT entry's name (fgd-plt.h)
 * stays, after the demangled name: "_Znwm@plt" is "operator new@plt".
 *
 * Pure: no logging, no state. libiberty bounds its own recursion, names
 * longer than FG_DEMANGLE_MAX_IN are left alone, and a demangled name is
 * cut at FG_DEMANGLE_MAX_OUT bytes: its time and memory are bounded by
 * that, however much longer a crafted name would print (fgd-demangle.c).
 */

#include <stddef.h>

#define FG_DEMANGLE_MAX_IN 8192
#define FG_DEMANGLE_MAX_OUT 4096

/*
 * Writes the demangled form of name into buf (NUL-terminated, cut to
 * size - 1 bytes and to FG_DEMANGLE_MAX_OUT). Returns its length, or 0 if
 * name is not a C++ or Rust mangled name or does not demangle (buf
 * untouched: keep name).
 */
int fg_demangle(const char *name, char *buf, size_t size);
