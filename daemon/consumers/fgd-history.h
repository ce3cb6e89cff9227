/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The on-disk history: slice files (common/storage/slicefile.h) in
 * STATE_DIRECTORY/slices/, one per slice, named START-END.fgdh with both
 * times as 20-digit nanoseconds since the epoch, so names sort by time and a
 * query picks its files without opening the others.
 *
 * Crash safety. A slice is written to a temporary file (".tmp" suffix),
 * fsync'd, renamed into place and the directory fsync'd: after a crash at
 * any moment the directory holds whole slices and, at worst, one temporary
 * file, which the next open removes.
 *
 * Damage. A slice file that does not read (truncated, a bad checksum, not a
 * slice at all) is set aside once, the first time it is met: renamed to
 * START-END.fgdh.REASON, logged and counted (corrupt), and never read
 * again. Anything in the directory with a slice's name that is not a
 * regular file (a symbolic link, a FIFO, a device) is never opened: its type
 * is read without following it, and it is set aside the same way. Readers
 * are told of every unreadable file in their range, set aside or not
 * (fg_history__read()), so that an answer can say what it is missing and
 * why; set-aside files go when they age out (HistoryKeepSec=) or the byte
 * budget needs their room.
 *
 * Failure to write (a full disk, a read-only mount) is returned and counted;
 * the caller goes on sampling.
 *
 * Compaction (common/storage/compaction.h has the policy and the plan): a group of
 * files is merged into one (fg_slicefile_merge()), which is stored as above
 * before its sources are deleted. A crash in between leaves the merged file
 * and some sources, each within the merged file's span: such leftovers are
 * never read, and are deleted by the next open or compaction. A source that
 * does not read is set aside as above, the group merged without it; a group
 * holding a file of a later format version is left whole.
 */

#include <stddef.h>
#include <stdint.h>

#include "storage/compaction.h"
#include "storage/slicefile.h"

struct fg_history_stats {
	uint64_t files, bytes; /* on disk now */
	uint64_t written;      /* slices stored, ever */
	uint64_t write_errors; /* slices that could not be stored (out_of_order included) */
	/* of those, slices refused for nesting with a stored file (clock set back) */
	uint64_t out_of_order;
	int last_write_error;  /* negative errno of the last failure; 0 if none */
	uint64_t corrupt;      /* files set aside as damaged or not regular files (each once) */
	uint64_t future;       /* files skipped for a later format version */
	uint64_t temp_removed; /* torn temporary files cleaned up at open */
	uint64_t pruned;       /* files deleted to stay within the byte budget */
	/* Compaction: */
	uint64_t merged;          /* merged files written */
	uint64_t merged_sources;  /* files merged into them, then deleted (damaged ones included) */
	uint64_t corrupt_dropped; /* of those, damaged ones (set aside, their samples lost) */
	uint64_t leftovers;       /* files within another's span (a crashed merge's), deleted */
	uint64_t expired;         /* files deleted for age (HistoryKeepSec=) */
	uint64_t compact_errors;  /* merges or deletions that failed; retried later */
	int last_compact_error;   /* negative errno of the last failure; 0 if none */
};

struct fg_history;

/*
 * Opens (creating if missing, mode 0750) dir and dir/slices, removes torn
 * temporary files and counts what is there. dir is copied. Caller frees
 * *ret with fg_history__free(). 0 or a negative errno.
 */
int fg_history__open(const char *dir, struct fg_history **ret);
struct fg_history *fg_history__free(struct fg_history *h);

/*
 * Stores one slice's bytes crash-safely. 0, or a negative errno (counted):
 * -ERANGE for a slice whose span nests with a file already stored (within
 * it, around it, or the same), which only a wall clock set back can cause:
 * written, it would read as the leftover of a crashed merge, or make a
 * stored file one. Its samples stay in the window in memory.
 */
int fg_history__store(struct fg_history *h, uint64_t start_ns, uint64_t end_ns, const uint8_t *data,
		      size_t len);

/* Why a file of the history could not be read. */
enum fg_history_damage {
	FG_HISTORY_NOT_SLICE,     /* not a slice file: other or random bytes */
	FG_HISTORY_TRUNCATED,     /* shorter than its header says */
	FG_HISTORY_BAD_CHECKSUM,  /* its bytes changed */
	FG_HISTORY_MALFORMED,     /* its checksum matches, its contents do not add up */
	FG_HISTORY_NOT_FILE,      /* a symbolic link, FIFO, device, socket or directory */
	FG_HISTORY_TOO_LARGE,     /* larger than any slice fgd writes */
	FG_HISTORY_LATER_VERSION, /* a later fgd's: left as it is, for that fgd */
	FG_HISTORY_READ_ERROR,    /* the read failed (EIO...): left as it is, tried again */
};
/* "truncated", "bad checksum", "not a regular file", ...: a static string. */
const char *fg_history_damage_name(enum fg_history_damage d);

/* A file a reader could not read: the span its name gives, and why. */
struct fg_history_unreadable {
	uint64_t start_ns, end_ns;
	enum fg_history_damage why;
};

/*
 * Calls fn, in time order, for every readable slice that overlaps
 * [from_ns, to_ns), each whole (a coarse file is not cut to the range),
 * and bad (may be NULL) for every file of that range that could not be
 * read, set aside earlier or now. Leftovers of a crashed merge are skipped.
 * Returns 0, the first negative value fn or bad returned, or a negative
 * errno from reading the directory.
 */
typedef int (*fg_history_fn)(void *ctx, const struct fg_slicefile *s);
typedef int (*fg_history_unreadable_fn)(void *ctx, const struct fg_history_unreadable *u);
int fg_history__read(struct fg_history *h, uint64_t from_ns, uint64_t to_ns, fg_history_fn fn,
		     fg_history_unreadable_fn bad, void *ctx);

/*
 * One step of compaction at now_ns under policy p: deletes leftovers and
 * expired files, then merges at most max_merges groups, taking them in turn
 * so that one that keeps failing does not hold up the others. Nothing
 * ending after horizon_ns is merged. Returns the number of groups merged,
 * or a negative errno (the last failure, counted); the history stays
 * readable either way.
 */
int fg_history__compact(struct fg_history *h, uint64_t now_ns, uint64_t horizon_ns,
			const struct fg_compaction_policy *p, unsigned max_merges);

/* Deletes the oldest slices until the files take at most max_bytes. 0 or a negative errno. */
int fg_history__prune(struct fg_history *h, uint64_t max_bytes);

void fg_history__stats(const struct fg_history *h, struct fg_history_stats *ret);
