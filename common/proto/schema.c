/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The walker over schema tables (schema.h): one encoder, one decoder and
 * the release of what the decoder allocated, for every reply that has a
 * table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "proto/proto.h"
#include "proto/schema.h"

#define AT(base, off, type) ((type *)((char *)(base) + (off)))
#define AT_CONST(base, off, type) ((const type *)((const char *)(base) + (off)))

/* ---- releasing ---- */

void fg_schema_release(void *base, const struct fg_schema_member *t)
{
	for (; t->kind != FG_SCHEMA_END; t++) {
		if (t->kind == FG_SCHEMA_OBJECT || t->kind == FG_SCHEMA_INLINE) {
			fg_schema_release(AT(base, t->offset, char), t->sub);
		} else if (t->kind == FG_SCHEMA_ARRAY) {
			char *elems = *AT(base, t->offset, char *);
			size_t n = *AT(base, t->aux, size_t);

			for (size_t i = 0; elems && i < n; i++)
				fg_schema_release(elems + i * t->elem_size, t->sub);
			free(elems);
			*AT(base, t->offset, char *) = NULL;
		} else if (t->kind == FG_SCHEMA_I64_ARRAY || t->kind == FG_SCHEMA_OWNED_STR) {
			free(*AT(base, t->offset, void *));
			*AT(base, t->offset, void *) = NULL;
		}
	}
}

/* ---- encoding ---- */

static struct json_object *encode_object(const void *base, const struct fg_schema_member *t)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();

	if (!o || fg_schema_encode(o, base, t) < 0)
		return NULL;
	return TAKE_PTR(o);
}

static struct json_object *encode_array(const struct fg_schema_member *t, const void *base)
{
	_cleanup_(json_object_putp) struct json_object *a = json_object_new_array();
	const char *elems = *AT_CONST(base, t->offset, char *);
	size_t n = *AT_CONST(base, t->aux, size_t);

	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = t->kind == FG_SCHEMA_I64_ARRAY ?
						json_object_new_int64(((const int64_t *)elems)[i]) :
						encode_object(elems + i * t->elem_size, t->sub);

		if (!e || json_object_array_add(a, e) < 0) {
			json_object_put(e);
			return NULL;
		}
	}
	return TAKE_PTR(a);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

int fg_schema_encode(struct json_object *o, const void *base, const struct fg_schema_member *t)
{
	for (; t->kind != FG_SCHEMA_END; t++) {
		struct json_object *v = NULL;

		if (t->flag != FG_SCHEMA_NO_FLAG && !*AT_CONST(base, t->flag, bool))
			continue;
		switch (t->kind) {
		case FG_SCHEMA_U64:
			v = json_object_new_uint64(*AT_CONST(base, t->offset, uint64_t));
			break;
		case FG_SCHEMA_U32:
			v = json_object_new_int64(*AT_CONST(base, t->offset, uint32_t));
			break;
		case FG_SCHEMA_I64:
			v = json_object_new_int64(*AT_CONST(base, t->offset, int64_t));
			break;
		case FG_SCHEMA_BOOL:
			v = json_object_new_boolean(*AT_CONST(base, t->offset, bool));
			break;
		case FG_SCHEMA_STR:
		case FG_SCHEMA_OWNED_STR: {
			const char *s = *AT_CONST(base, t->offset, char *);

			if (!s)
				continue;
			v = json_object_new_string(s);
			break;
		}
		case FG_SCHEMA_PCT:
			v = json_object_new_double(share(*AT_CONST(base, t->offset, uint64_t),
							 *AT_CONST(base, t->aux, uint64_t)));
			break;
		case FG_SCHEMA_OBJECT:
			v = encode_object(AT_CONST(base, t->offset, char), t->sub);
			break;
		case FG_SCHEMA_ARRAY:
		case FG_SCHEMA_I64_ARRAY:
			v = encode_array(t, base);
			break;
		case FG_SCHEMA_INLINE:
			if (fg_schema_encode(o, AT_CONST(base, t->offset, char), t->sub) < 0)
				return -ENOMEM;
			continue;
		case FG_SCHEMA_GATE:
			if (!*AT_CONST(base, t->offset, bool))
				return 0;
			continue;
		case FG_SCHEMA_END:
			break;
		}
		if (!v || json_object_object_add(o, t->name, v) < 0) {
			json_object_put(v);
			return -ENOMEM;
		}
	}
	return 0;
}

/* ---- decoding ---- */

/* An integer from 0 to max. json-c keeps values past INT64_MAX as unsigned. */
static int read_unsigned(struct json_object *v, uint64_t max, uint64_t *ret)
{
	uint64_t u;

	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return -EBADMSG;
	u = json_object_get_uint64(v);
	if (u > max)
		return -EBADMSG;
	*ret = u;
	return 0;
}

/* get_int64 clamps an unsigned value past INT64_MAX to INT64_MAX: refused, not clamped. */
static int read_signed(struct json_object *v, int64_t *ret)
{
	int64_t i;

	if (!json_object_is_type(v, json_type_int))
		return -EBADMSG;
	i = json_object_get_int64(v);
	if (i == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
		return -EBADMSG;
	*ret = i;
	return 0;
}

static int decode_array(struct json_object *v, void *base, const struct fg_schema_member *t)
{
	size_t size = t->kind == FG_SCHEMA_I64_ARRAY ? sizeof(int64_t) : t->elem_size;
	size_t n;
	char *elems;

	if (!json_object_is_type(v, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(v);
	if (n > FG_SCHEMA_MAX_ARRAY)
		return -EBADMSG;
	elems = calloc(MAX(n, (size_t)1), size);
	if (!elems)
		return -ENOMEM;
	/* Stored at once: fg_schema_release() frees it and what its elements hold if one fails. */
	*AT(base, t->offset, char *) = elems;
	*AT(base, t->aux, size_t) = n;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		int r;

		if (t->kind == FG_SCHEMA_I64_ARRAY) {
			r = read_signed(e, (int64_t *)elems + i);
		} else {
			if (!json_object_is_type(e, json_type_object))
				return -EBADMSG;
			r = fg_schema_decode(e, elems + i * size, t->sub);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int decode_member(struct json_object *v, void *base, const struct fg_schema_member *t)
{
	uint64_t u;
	int r;

	switch (t->kind) {
	case FG_SCHEMA_U64:
		return read_unsigned(v, UINT64_MAX, AT(base, t->offset, uint64_t));
	case FG_SCHEMA_U32:
		r = read_unsigned(v, UINT32_MAX, &u);
		if (r >= 0)
			*AT(base, t->offset, uint32_t) = (uint32_t)u;
		return r;
	case FG_SCHEMA_I64:
		return read_signed(v, AT(base, t->offset, int64_t));
	case FG_SCHEMA_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return -EBADMSG;
		*AT(base, t->offset, bool) = json_object_get_boolean(v);
		return 0;
	case FG_SCHEMA_STR:
		if (!json_object_is_type(v, json_type_string))
			return -EBADMSG;
		*AT(base, t->offset, const char *) = json_object_get_string(v);
		return 0;
	case FG_SCHEMA_OWNED_STR:
		if (!json_object_is_type(v, json_type_string))
			return -EBADMSG;
		*AT(base, t->offset, char *) = strdup(json_object_get_string(v));
		return *AT(base, t->offset, char *) ? 0 : -ENOMEM;
	case FG_SCHEMA_PCT:
		/* Derived from the counts, which the struct holds: only its type is checked. */
		if (!json_object_is_type(v, json_type_double) &&
		    !json_object_is_type(v, json_type_int))
			return -EBADMSG;
		return 0;
	case FG_SCHEMA_OBJECT:
		if (!json_object_is_type(v, json_type_object))
			return -EBADMSG;
		return fg_schema_decode(v, AT(base, t->offset, char), t->sub);
	case FG_SCHEMA_ARRAY:
	case FG_SCHEMA_I64_ARRAY:
		return decode_array(v, base, t);
	case FG_SCHEMA_INLINE:
	case FG_SCHEMA_GATE:
	case FG_SCHEMA_END:
		break;
	}
	return 0;
}

int fg_schema_decode(struct json_object *o, void *base, const struct fg_schema_member *t)
{
	/* A member after a gate is there only if the gate was open: it reads as open. */
	size_t gate = FG_SCHEMA_NO_FLAG;

	for (; t->kind != FG_SCHEMA_END; t++) {
		struct json_object *v;
		int r;

		if (t->kind == FG_SCHEMA_GATE) {
			gate = t->offset;
			continue;
		}

		if (t->kind == FG_SCHEMA_INLINE) {
			r = fg_schema_decode(o, AT(base, t->offset, char), t->sub);
			if (r < 0)
				return r;
			continue;
		}
		/* Absent: left zero. */
		if (!json_object_object_get_ex(o, t->name, &v))
			continue;
		r = decode_member(v, base, t);
		if (r < 0)
			return r;
		if (t->flag != FG_SCHEMA_NO_FLAG && t->flag != t->offset)
			*AT(base, t->flag, bool) = true;
		if (gate != FG_SCHEMA_NO_FLAG)
			*AT(base, gate, bool) = true;
	}
	return 0;
}
