/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/macro.h"
#include "base/outbuf.h"
#include "base/strpool.h"
#include "profile/pprof.h"

/* profile.proto's field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* Protobuf wire types. */
enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

struct mapping {
	uint64_t start, limit, offset;
	int64_t filename, build_id; /* string ids */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
	bool covers; /* start and limit were set by fg_pprof__mapping_cover() */
};

struct fg_pprof {
	struct fg_strpool *strings; /* owned: the string table, "" first */
	int64_t types[FG_PPROF_MAX_VALUES], units[FG_PPROF_MAX_VALUES];
	size_t n_types;
	int64_t default_type; /* string id; 0: the first type */
	int64_t period_type, period_unit, period;
	int64_t time_nanos, duration_nanos;
	/* owned: the repeated messages, encoded as they come */
	struct fg_outbuf samples, locations, functions;
	/* owned: mappings, encoded at the end, since their ranges grow (fg_pprof__mapping_cover()) */
	struct mapping *mappings;
	size_t cap_mappings;
	struct fg_outbuf comments; /* owned: string ids, as varints */
	struct fg_outbuf msg;      /* owned: scratch for the message being built */
	struct fg_outbuf sub; /* owned: scratch for a part of it (a packed run, a Line, a Label) */
	uint64_t n_mappings, n_functions, n_locations;
	size_t n_samples;
};

struct fg_pprof *fg_pprof__free(struct fg_pprof *p)
{
	if (!p)
		return NULL;
	fg_strpool__free(p->strings);
	fg_outbuf_done(&p->samples);
	free(p->mappings);
	fg_outbuf_done(&p->locations);
	fg_outbuf_done(&p->functions);
	fg_outbuf_done(&p->comments);
	fg_outbuf_done(&p->msg);
	fg_outbuf_done(&p->sub);
	free(p);
	return NULL;
}

struct fg_pprof *fg_pprof__new(void)
{
	_cleanup_(fg_pprof__freep) struct fg_pprof *p = calloc(1, sizeof(*p));
	uint32_t empty;

	if (!p)
		return NULL;
	p->strings = fg_strpool__new();
	/* The string table's entry 0 is the empty string: what a field left at 0 means. */
	if (!p->strings || fg_strpool__intern(p->strings, "", 0, &empty) < 0)
		return NULL;
	return TAKE_PTR(p);
}

static void put_varint(struct fg_outbuf *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	fg_outbuf_put(b, buf, n);
}

static void put_tag(struct fg_outbuf *b, unsigned field, unsigned wire)
{
	put_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field; 0 is the default and is left out, as proto3 does. */
static void put_uint(struct fg_outbuf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_tag(b, field, WIRE_VARINT);
	put_varint(b, v);
}

/* An int64 field: negative values take ten bytes, as protobuf's int64 does. */
static void put_int(struct fg_outbuf *b, unsigned field, int64_t v)
{
	put_uint(b, field, (uint64_t)v);
}

static void put_bytes(struct fg_outbuf *b, unsigned field, const void *data, size_t len)
{
	put_tag(b, field, WIRE_LEN);
	put_varint(b, len);
	if (len)
		fg_outbuf_put(b, data, len);
}

/* part (p->msg or p->sub) as a field of b, its error b's; part is emptied. */
static void put_part(struct fg_outbuf *b, unsigned field, struct fg_outbuf *part)
{
	if (part->err < 0 && b->err == 0)
		b->err = part->err;
	put_bytes(b, field, part->data, part->used);
	fg_outbuf_reset(part);
}

static void put_msg(struct fg_pprof *p, struct fg_outbuf *b, unsigned field)
{
	put_part(b, field, &p->msg);
}

/* The string's id in the string table (interned), or a negative errno. */
static int64_t string_id(struct fg_pprof *p, const char *s, size_t len)
{
	uint32_t id;
	int r;

	if (!s)
		return 0;
	r = fg_strpool__intern(p->strings, s, len, &id);
	return r < 0 ? r : (int64_t)id;
}

static int64_t string_idz(struct fg_pprof *p, const char *s)
{
	return string_id(p, s, s ? strlen(s) : 0);
}

int fg_pprof__sample_type(struct fg_pprof *p, const char *type, const char *unit)
{
	int64_t t = string_idz(p, type), u = string_idz(p, unit);

	if (t < 0 || u < 0)
		return (int)(t < 0 ? t : u);
	if (p->n_types >= FG_PPROF_MAX_VALUES)
		return -E2BIG;
	p->types[p->n_types] = t;
	p->units[p->n_types++] = u;
	return 0;
}

int fg_pprof__default_type(struct fg_pprof *p, const char *type)
{
	int64_t t = string_idz(p, type);

	if (t < 0)
		return (int)t;
	for (size_t i = 0; i < p->n_types; i++)
		if (p->types[i] == t) {
			p->default_type = t;
			return 0;
		}
	return -ENOENT;
}

int fg_pprof__period(struct fg_pprof *p, const char *type, const char *unit, int64_t period)
{
	int64_t t = string_idz(p, type), u = string_idz(p, unit);

	if (t < 0 || u < 0)
		return (int)(t < 0 ? t : u);
	p->period_type = t;
	p->period_unit = u;
	p->period = period;
	return 0;
}

void fg_pprof__time(struct fg_pprof *p, int64_t time_nanos, int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

int fg_pprof__comment(struct fg_pprof *p, const char *text)
{
	int64_t s = string_idz(p, text);

	if (s < 0)
		return (int)s;
	put_varint(&p->comments, (uint64_t)s);
	return p->comments.err;
}

int fg_pprof__mapping(struct fg_pprof *p, const struct fg_pprof_mapping *m, uint64_t *ret_id)
{
	int64_t file = string_idz(p, m->filename), build_id = string_idz(p, m->build_id);

	if (file < 0 || build_id < 0)
		return (int)(file < 0 ? file : build_id);
	if (FG_GROW(p->mappings, p->cap_mappings, p->n_mappings + 1) < 0)
		return -ENOMEM;
	p->mappings[p->n_mappings++] = (struct mapping){
		.start = m->memory_start,
		.limit = m->memory_limit,
		.offset = m->file_offset,
		.filename = file,
		.build_id = build_id,
		.has_functions = m->has_functions,
		.has_filenames = m->has_filenames,
		.has_line_numbers = m->has_line_numbers,
		.has_inline_frames = m->has_inline_frames,
	};
	*ret_id = p->n_mappings;
	return 0;
}

int fg_pprof__mapping_cover(struct fg_pprof *p, uint64_t id, uint64_t address)
{
	struct mapping *m;

	if (id == 0 || id > p->n_mappings || address == UINT64_MAX)
		return -EINVAL;
	m = &p->mappings[id - 1];
	if (!m->covers) {
		m->start = m->offset = address;
		m->limit = address + 1;
		m->covers = true;
		return 0;
	}
	/* The file offset moves with the start: address - start + offset stays the address. */
	if (address < m->start)
		m->start = m->offset = address;
	m->limit = MAX(m->limit, address + 1);
	return 0;
}

static void put_mappings(struct fg_pprof *p, struct fg_outbuf *out)
{
	for (size_t i = 0; i < p->n_mappings; i++) {
		const struct mapping *m = &p->mappings[i];

		put_uint(&p->msg, MAPPING_ID, i + 1);
		put_uint(&p->msg, MAPPING_MEMORY_START, m->start);
		put_uint(&p->msg, MAPPING_MEMORY_LIMIT, m->limit);
		put_uint(&p->msg, MAPPING_FILE_OFFSET, m->offset);
		put_int(&p->msg, MAPPING_FILENAME, m->filename);
		put_int(&p->msg, MAPPING_BUILD_ID, m->build_id);
		put_uint(&p->msg, MAPPING_HAS_FUNCTIONS, m->has_functions);
		put_uint(&p->msg, MAPPING_HAS_FILENAMES, m->has_filenames);
		put_uint(&p->msg, MAPPING_HAS_LINE_NUMBERS, m->has_line_numbers);
		put_uint(&p->msg, MAPPING_HAS_INLINE_FRAMES, m->has_inline_frames);
		put_msg(p, out, PROFILE_MAPPING);
	}
}

int fg_pprof__function(struct fg_pprof *p, const char *name, size_t name_len,
		       const char *system_name, const char *filename, uint64_t *ret_id)
{
	int64_t n = string_id(p, name, name_len);
	int64_t sys = system_name ? string_idz(p, system_name) : n;
	int64_t file = string_idz(p, filename);
	uint64_t id = p->n_functions + 1;

	if (n < 0 || sys < 0 || file < 0)
		return (int)(n < 0 ? n : sys < 0 ? sys : file);
	put_uint(&p->msg, FUNCTION_ID, id);
	put_int(&p->msg, FUNCTION_NAME, n);
	put_int(&p->msg, FUNCTION_SYSTEM_NAME, sys);
	put_int(&p->msg, FUNCTION_FILENAME, file);
	put_msg(p, &p->functions, PROFILE_FUNCTION);
	if (p->functions.err < 0)
		return p->functions.err;
	p->n_functions = id;
	*ret_id = id;
	return 0;
}

int fg_pprof__location(struct fg_pprof *p, uint64_t mapping_id, uint64_t address,
		       const uint64_t *function_ids, size_t n, uint64_t *ret_id)
{
	uint64_t id = p->n_locations + 1;

	if (n == 0 || mapping_id > p->n_mappings)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (function_ids[i] == 0 || function_ids[i] > p->n_functions)
			return -EINVAL;
	put_uint(&p->msg, LOCATION_ID, id);
	put_uint(&p->msg, LOCATION_MAPPING_ID, mapping_id);
	put_uint(&p->msg, LOCATION_ADDRESS, address);
	/* A Line is a small message of its own: function_id (and line, which fgd does not keep). */
	for (size_t i = 0; i < n; i++) {
		put_uint(&p->sub, LINE_FUNCTION_ID, function_ids[i]);
		put_part(&p->msg, LOCATION_LINE, &p->sub);
	}
	put_msg(p, &p->locations, PROFILE_LOCATION);
	if (p->locations.err < 0)
		return p->locations.err;
	p->n_locations = id;
	*ret_id = id;
	return 0;
}

/* A repeated scalar field, packed: one length-delimited run of varints. */
static void put_packed(struct fg_pprof *p, unsigned field, const uint64_t *v, size_t n)
{
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++)
		put_varint(&p->sub, v[i]);
	put_part(&p->msg, field, &p->sub);
}

static int put_label(struct fg_pprof *p, const struct fg_pprof_label *l)
{
	int64_t key = string_idz(p, l->key);
	int64_t str = string_idz(p, l->str);
	int64_t unit = string_idz(p, l->num_unit);

	if (key < 0 || str < 0 || unit < 0)
		return (int)(key < 0 ? key : str < 0 ? str : unit);
	put_int(&p->sub, LABEL_KEY, key);
	if (l->str) {
		put_int(&p->sub, LABEL_STR, str);
	} else {
		put_int(&p->sub, LABEL_NUM, l->num);
		put_int(&p->sub, LABEL_NUM_UNIT, unit);
	}
	put_part(&p->msg, SAMPLE_LABEL, &p->sub);
	return 0;
}

int fg_pprof__sample(struct fg_pprof *p, const uint64_t *location_ids, size_t n,
		     const int64_t *values, const struct fg_pprof_label *labels, size_t n_labels)
{
	uint64_t v[FG_PPROF_MAX_VALUES];
	int err;

	for (size_t i = 0; i < n; i++)
		if (location_ids[i] == 0 || location_ids[i] > p->n_locations)
			return -EINVAL;
	for (size_t i = 0; i < p->n_types; i++)
		v[i] = (uint64_t)values[i];
	put_packed(p, SAMPLE_LOCATION_ID, location_ids, n);
	put_packed(p, SAMPLE_VALUE, v, p->n_types);
	for (size_t i = 0; i < n_labels; i++) {
		err = put_label(p, &labels[i]);
		if (err < 0) {
			fg_outbuf_reset(&p->msg);
			return err;
		}
	}
	put_msg(p, &p->samples, PROFILE_SAMPLE);
	if (p->samples.err < 0)
		return p->samples.err;
	p->n_samples++;
	return 0;
}

size_t fg_pprof__n_samples(const struct fg_pprof *p)
{
	return p->n_samples;
}

size_t fg_pprof__bytes(const struct fg_pprof *p)
{
	return sizeof(*p) + fg_strpool__bytes(p->strings) + p->samples.cap +
	       p->cap_mappings * sizeof(*p->mappings) + p->locations.cap + p->functions.cap +
	       p->comments.cap + p->msg.cap + p->sub.cap;
}

static void put_value_type(struct fg_pprof *p, struct fg_outbuf *b, unsigned field, int64_t type,
			   int64_t unit)
{
	put_int(&p->msg, VALUE_TYPE_TYPE, type);
	put_int(&p->msg, VALUE_TYPE_UNIT, unit);
	put_msg(p, b, field);
}

/* An encoded run of repeated fields (p->samples, ...) appended to b. */
static void put_buf(struct fg_outbuf *b, const struct fg_outbuf *part)
{
	if (part->err < 0 && b->err == 0)
		b->err = part->err;
	if (part->used)
		fg_outbuf_put(b, part->data, part->used);
}

/* The gzip member of in (zlib's deflate with a gzip header), in *ret (caller frees). */
static int gzip(const uint8_t *in, size_t len, uint8_t **ret, size_t *ret_len)
{
	z_stream z = {};
	_cleanup_free_ uint8_t *out = NULL;
	uLong cap;
	int r;

	if (len > UINT32_MAX)
		return -E2BIG;
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	/* The bound covers the whole output, so one call with Z_FINISH completes it. */
	cap = deflateBound(&z, (uLong)len);
	out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	r = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (r != Z_STREAM_END)
		return -ENOMEM;
	*ret_len = z.total_out;
	*ret = TAKE_PTR(out);
	return 0;
}

int fg_pprof__encode(struct fg_pprof *p, bool gz, uint8_t **ret, size_t *ret_len)
{
	struct fg_outbuf out = {};
	size_t n_strings = fg_strpool__count(p->strings);
	int err;

	if (p->n_types == 0)
		return -EINVAL;
	for (size_t i = 0; i < p->n_types; i++)
		put_value_type(p, &out, PROFILE_SAMPLE_TYPE, p->types[i], p->units[i]);
	put_buf(&out, &p->samples);
	put_mappings(p, &out);
	put_buf(&out, &p->locations);
	put_buf(&out, &p->functions);
	/* Every string, the empty one too: the table's indices are its positions. */
	for (size_t i = 0; i < n_strings; i++)
		put_bytes(&out, PROFILE_STRING_TABLE, fg_strpool__str(p->strings, (uint32_t)i),
			  fg_strpool__len(p->strings, (uint32_t)i));
	put_int(&out, PROFILE_TIME_NANOS, p->time_nanos);
	put_int(&out, PROFILE_DURATION_NANOS, p->duration_nanos);
	if (p->period_type || p->period_unit)
		put_value_type(p, &out, PROFILE_PERIOD_TYPE, p->period_type, p->period_unit);
	put_int(&out, PROFILE_PERIOD, p->period);
	if (p->comments.used)
		put_bytes(&out, PROFILE_COMMENT, p->comments.data, p->comments.used);
	put_int(&out, PROFILE_DEFAULT_SAMPLE_TYPE, p->default_type);
	err = out.err < 0 ? out.err : p->msg.err;
	if (err < 0) {
		fg_outbuf_done(&out);
		return err;
	}
	if (!gz) {
		*ret = (uint8_t *)out.data;
		*ret_len = out.used;
		return 0;
	}
	err = gzip((const uint8_t *)out.data, out.used, ret, ret_len);
	fg_outbuf_done(&out);
	return err;
}
