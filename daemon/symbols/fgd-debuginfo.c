/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/macro.h"
#include "symbols/fgd-debuginfo.h"

/*
 * A .gnu_debuglink file is checked by the CRC32 of all its bytes: reading
 * more than this, on the loader's thread, is not worth its names.
 */
#define MAX_CRC_BYTES (UINT64_C(512) << 20)

int fg_debuginfo_crc32(int fd, uint32_t *ret)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, Z_NULL, 0);
	off_t off = 0;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if ((uint64_t)st.st_size > MAX_CRC_BYTES)
		return -EFBIG;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (n == 0)
			break;
		crc = crc32(crc, buf, (uInt)n);
		off += n;
		if ((uint64_t)off > MAX_CRC_BYTES)
			return -EFBIG;
	}
	*ret = (uint32_t)crc;
	return 0;
}

/*
 * Tries one candidate: opens it, checks it and adopts its symbols. Returns
 * its fd, or a negative errno to go on with the next.
 */
static int try_file(const struct fg_root *root, const char *path, struct fg_elf_syms *s,
		    bool by_crc)
{
	_cleanup_close_ int fd = fg_root__open_regular(root, path);
	uint32_t want, crc;
	int r;

	if (fd < 0)
		return fd;
	if (by_crc) {
		if (!fg_elf_syms__debuglink(s, &want))
			return -ENOENT;
		r = fg_debuginfo_crc32(fd, &crc);
		if (r < 0)
			return r;
		if (crc != want)
			return -ESTALE;
	}
	r = fg_elf_syms__adopt_debug_fd(s, fd, !by_crc);
	/* Checked, but no symbol table: still the DWARF of this binary. */
	if (r < 0 && r != -ENOENT)
		return r;
	return TAKE_FD(fd);
}

/* snprintf that refuses to truncate a path. */
_printf_(3, 4) static bool fmt_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n > 0 && (size_t)n < size;
}

int fg_debuginfo_find(const struct fg_debuginfo_query *q, struct fg_elf_syms *s,
		      enum fg_debuginfo_how *ret_how)
{
	char path[PATH_MAX], hex[2 * 64 + 1], dir[PATH_MAX];
	const uint8_t *id = NULL;
	const char *link, *slash;
	size_t id_len = fg_elf_syms__build_id(s, &id);
	bool absolute = q->path && q->path[0] == '/';
	uint32_t crc;
	int fd;

	if (id_len >= 2 && id_len * 2 < sizeof(hex)) {
		for (size_t i = 0; i < id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", id[i]);
		if (fmt_path(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", q->debug_dir, hex,
			     hex + 2) &&
		    (fd = try_file(q->root, path, s, false)) >= 0) {
			*ret_how = FG_DEBUGINFO_BUILD_ID;
			return fd;
		}
	}
	if (!absolute)
		return -ENOENT;
	/* "" for a binary in "/": the forms below add the slash. */
	slash = strrchr(q->path, '/');
	if ((size_t)(slash - q->path) >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, q->path, (size_t)(slash - q->path));
	dir[slash - q->path] = '\0';

	link = fg_elf_syms__debuglink(s, &crc);
	if (link) {
		static const char *const subdirs[] = { "", "/.debug" };

		for (size_t i = 0; i < ELEMENTSOF(subdirs); i++) {
			if (fmt_path(path, sizeof(path), "%s%s/%s", dir, subdirs[i], link) &&
			    (fd = try_file(q->root, path, s, true)) >= 0) {
				*ret_how = FG_DEBUGINFO_DEBUGLINK;
				return fd;
			}
		}
		if (fmt_path(path, sizeof(path), "%s%s/%s", q->debug_dir, dir, link) &&
		    (fd = try_file(q->root, path, s, true)) >= 0) {
			*ret_how = FG_DEBUGINFO_DEBUGLINK;
			return fd;
		}
	}
	if (id_len > 0) {
		static const char *const suffixes[] = { "", ".debug" };

		for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
			if (fmt_path(path, sizeof(path), "%s%s%s", q->debug_dir, q->path,
				     suffixes[i]) &&
			    (fd = try_file(q->root, path, s, false)) >= 0) {
				*ret_how = FG_DEBUGINFO_PATH;
				return fd;
			}
		}
	}
	return -ENOENT;
}
