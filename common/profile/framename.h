/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Frame names as every output shows them. Names come from places nobody
 * vouches for: ELF symbols and JIT maps (/tmp/perf-PID.map) written by any
 * program, process names a process sets itself (prctl(PR_SET_NAME) takes
 * any 15 bytes), cgroup names, history files from older versions or
 * damaged, folded files from any tool. A name must never split a frame or
 * a line of folded text, and every output must be valid UTF-8, so a name
 * is cleaned once, when it is interned into a model an output is made from
 * (common/profile/folded, common/profile/top), and is clean in every output made from it:
 *
 *   - a byte that is not part of valid UTF-8 (stray continuation bytes,
 *     overlong forms, surrogates, code points past U+10FFFF, a sequence cut
 *     short) becomes U+FFFD, one per byte;
 *   - a control character (C0, DEL, C1: NUL, tab, CR and LF included) and
 *     U+FFFE, U+FFFF become U+FFFD;
 *   - ';', which separates frames, becomes ':'.
 *
 * This is common/base/utf8's decoding, the one the SVG and HTML renderers use,
 * so a name reads the same in folded text and in a graph. A clean name is
 * its own clean form. The empty name stays empty.
 *
 * Pure.
 */

#include <stdbool.h>
#include <stddef.h>

/* Whether s[0..len) is clean already: the common case, checked without writing. */
bool fg_framename_is_clean(const char *s, size_t len);

/*
 * Writes the clean form of s[0..len) to *buf, which is grown with realloc()
 * as needed (it may be NULL with *cap 0; the caller frees it), and stores its
 * length (at most 3 * len bytes; not NUL-terminated). 0 or -ENOMEM.
 */
int fg_framename_clean(const char *s, size_t len, char **buf, size_t *cap, size_t *ret_len);

/*
 * The annotation letter of a frame name's suffix: 'k' for "_[k]" (kernel),
 * 'j' JIT, 'i' inlined, 'w' waker; 0 for none.
 */
char fg_framename_annotation(const char *name, size_t len);

/* The length of name without its annotation suffix, as graphs show it. */
size_t fg_name_display_len(const char *name, size_t len);

/*
 * Rewrites s[0..len) in place into the form stackcollapse-perf.pl gives a
 * function name (its default "tidy" rules), and returns the new length:
 *   - ';' becomes ':';
 *   - everything from the first '(' on is dropped, unless that '(' opens
 *     "(anonymous namespace)" (then the next one is looked for), or the
 *     name looks like a Go method, "pkg.(*T).M", which is kept whole: so
 *     "double Hot.middle(int)" becomes "double Hot.middle", "foo(int)"
 *     "foo", and "StubRoutines (1)" "StubRoutines " (as the script has it);
 *   - '"' and '\'' are removed;
 *   - with java (the script's test: the process name starts with "java"),
 *     a leading 'L' of a name holding a '/' is removed (perf-map-agent's
 *     "Lorg/x/Y;.m" becomes "org/x/Y:.m").
 * Annotations ("_[k]" and the like) are the caller's to take off first.
 */
size_t fg_framename_tidy(char *s, size_t len, bool java);
