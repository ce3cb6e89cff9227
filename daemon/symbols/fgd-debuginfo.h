/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Finding a binary's separate debug file where distributions put it, the
 * way gdb and elfutils look, in this order:
 *
 *   1. DEBUG_DIR/.build-id/xx/yyyy.debug (Debian's -dbgsym packages,
 *      libc6-dbg, Fedora's debuginfo): accepted if its build-id is the
 *      binary's;
 *   2. the .gnu_debuglink name in the binary's directory, in its .debug/
 *      subdirectory, then in DEBUG_DIR/<binary's directory>/: accepted if
 *      the CRC32 of the whole file is the one the link records (and, when
 *      both have a build-id, the build-ids agree);
 *   3. DEBUG_DIR/<binary's path>, then the same + ".debug": accepted if
 *      its build-id is the binary's.
 *
 * Every path is opened under a root (fgd-root.h): the daemon's own, or the
 * mount namespace and root directory of the process that mapped the binary
 * (a container), where its debug files are. DEBUG_DIR is a parameter
 * (normally /usr/lib/debug) so tests can build a tree of their own. Files
 * are opened without blocking and only if regular; the debug file is then
 * read by fgd-elffile, which treats it as untrusted like any other.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/fgd-elffile.h"
#include "symbols/fgd-root.h"

enum fg_debuginfo_how {
	FG_DEBUGINFO_BUILD_ID,  /* DEBUG_DIR/.build-id/ */
	FG_DEBUGINFO_DEBUGLINK, /* .gnu_debuglink */
	FG_DEBUGINFO_PATH,      /* DEBUG_DIR/<path> */
};

struct fg_debuginfo_query {
	const struct fg_root *root; /* where paths are opened; NULL: the daemon's own; borrowed */
	const char *debug_dir;      /* e.g. "/usr/lib/debug"; borrowed */
	const char *path;           /* the binary's absolute path as seen under root; borrowed */
};

/*
 * Looks for the debug file of the binary whose symbols are s (its build-id
 * and .gnu_debuglink come from there). At the first candidate that checks
 * out, s takes that file's symbol table (fg_elf_syms__adopt_debug_fd(); a
 * debug file without one is still accepted, for its DWARF) and the file's
 * fd is returned (caller closes it), with how it was found in *ret_how.
 * -ENOENT when there is none.
 */
int fg_debuginfo_find(const struct fg_debuginfo_query *q, struct fg_elf_syms *s,
		      enum fg_debuginfo_how *ret_how);

/* The CRC32 .gnu_debuglink records (zlib's), of the whole file fd, read with pread. */
int fg_debuginfo_crc32(int fd, uint32_t *ret);
