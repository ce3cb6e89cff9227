/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * pprof profiles: the profile.proto message (github.com/google/pprof,
 * proto/profile.proto) built in memory and written as protobuf, gzipped as
 * every pprof reader expects. What fleets' stores take (Pyroscope, Parca,
 * Google's pprof).
 *
 * A builder: strings are interned into the string table (entry 0 is ""),
 * mappings, functions and locations get ids 1, 2, ... in the order they are
 * added, and each function, location and sample is encoded as it is added,
 * so the builder holds their wire bytes, the string table and the
 * mappings (encoded at the end, since their ranges may grow). Ids passed in are the
 * builder's own; the caller dedups what it adds (a location per distinct
 * code address, a function per distinct name).
 *
 * Pure: no I/O (zlib compresses in memory).
 */

#include "base/macro.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_pprof;

/* Caller frees with fg_pprof__free(). NULL on ENOMEM. */
struct fg_pprof *fg_pprof__new(void);
struct fg_pprof *fg_pprof__free(struct fg_pprof *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_pprof *, fg_pprof__free);

/*
 * Appends a sample type (a value of every sample, in the order added): e.g.
 * ("samples", "count"), ("cpu", "nanoseconds"). Up to FG_PPROF_MAX_VALUES.
 * The first added is the default sample type unless
 * fg_pprof__default_type() says otherwise.
 */
#define FG_PPROF_MAX_VALUES 4
int fg_pprof__sample_type(struct fg_pprof *p, const char *type, const char *unit);
/* Names the sample type shown by default (one added with fg_pprof__sample_type()). */
int fg_pprof__default_type(struct fg_pprof *p, const char *type);

/* What one sample stands for: e.g. ("cpu", "nanoseconds") and 10101010 at 99 Hz. */
int fg_pprof__period(struct fg_pprof *p, const char *type, const char *unit, int64_t period);
/* When the profile starts (Unix ns) and how long it covers (ns). */
void fg_pprof__time(struct fg_pprof *p, int64_t time_nanos, int64_t duration_nanos);
/* A free-text line readers show with the profile (go tool pprof -comments). */
int fg_pprof__comment(struct fg_pprof *p, const char *text);

struct fg_pprof_mapping {
	uint64_t memory_start, memory_limit, file_offset;
	const char *filename; /* borrowed for the call; NULL: none */
	const char *build_id; /* hex, borrowed for the call; NULL: none */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

/* Adds a mapping; its id (1, 2, ...) in *ret_id. 0 or a negative errno. */
int fg_pprof__mapping(struct fg_pprof *p, const struct fg_pprof_mapping *m, uint64_t *ret_id);

/*
 * Widens mapping id's range to cover address, for mappings whose range is
 * what their locations use (a binary's file offsets, kernel addresses):
 * the first call sets it to the address alone. The mapping's file offset
 * stays its start, so address - memory_start + file_offset is the address
 * itself, as pprof computes it. Mappings are encoded at the end, so this
 * may follow locations that use them. 0, or -EINVAL for an unknown id.
 */
int fg_pprof__mapping_cover(struct fg_pprof *p, uint64_t id, uint64_t address);

/*
 * Adds a function: name as people read it (demangled), system_name as the
 * binary spells it (NULL: the same), filename its source file (NULL: none).
 * Its id in *ret_id.
 */
int fg_pprof__function(struct fg_pprof *p, const char *name, size_t name_len,
		       const char *system_name, const char *filename, uint64_t *ret_id);

/*
 * Adds a location: mapping_id (0: none), its address (0: unknown) and the
 * functions at it, innermost first (inlined functions, then the one they
 * were inlined into), n >= 1. Its id in *ret_id.
 */
int fg_pprof__location(struct fg_pprof *p, uint64_t mapping_id, uint64_t address,
		       const uint64_t *function_ids, size_t n, uint64_t *ret_id);

struct fg_pprof_label {
	const char *key; /* borrowed for the call */
	const char *str; /* a string label; NULL: a number */
	int64_t num;
	const char *num_unit; /* NULL: none */
};

/*
 * Adds a sample: its locations leaf first (n may be 0), one value per
 * sample type added, and its labels. 0 or a negative errno.
 */
int fg_pprof__sample(struct fg_pprof *p, const uint64_t *location_ids, size_t n,
		     const int64_t *values, const struct fg_pprof_label *labels, size_t n_labels);

size_t fg_pprof__n_samples(const struct fg_pprof *p);
/* Heap bytes held, for memory budgets. */
size_t fg_pprof__bytes(const struct fg_pprof *p);

/*
 * The whole profile as protobuf, gzipped when gzip (the .pb.gz pprof reads),
 * in *ret (caller frees) of *ret_len bytes. The builder can take no more
 * after this. 0, -EINVAL without a sample type, or -ENOMEM.
 */
int fg_pprof__encode(struct fg_pprof *p, bool gzip, uint8_t **ret, size_t *ret_len);
