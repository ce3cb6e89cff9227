/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A reply's schema as tables of members (struct fg_schema_member): each
 * entry names a member as the wire spells it, its JSON type and where it
 * lives in a C struct. One walker encodes a struct by its table, in the
 * table's order (the reply's order), decodes it back and releases what the
 * decoder allocated, so a member cannot be written under one name and read
 * under another. status.c and meta.c hold the tables.
 *
 * Compatibility, the same for every table: a member that is absent decodes
 * to zero, false or NULL (an older fgd); members a table does not name are
 * ignored (a newer one); a member of the wrong JSON type (null included), an
 * integer out of its member's range or an array longer than
 * FG_SCHEMA_MAX_ARRAY is refused with -EBADMSG.
 *
 * Only files that define tables include this header: its short macros
 * (M_U64, M_END...) are for them.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The longest array a decoded reply may hold: far above any machine's CPUs
 * or what fgd lists, and a bound on what a hostile reply costs beyond its
 * own JSON.
 */
#define FG_SCHEMA_MAX_ARRAY 65536

enum fg_schema_kind {
	FG_SCHEMA_END,  /* ends a table */
	FG_SCHEMA_U64,  /* uint64_t */
	FG_SCHEMA_U32,  /* uint32_t */
	FG_SCHEMA_I64,  /* int64_t */
	FG_SCHEMA_BOOL, /* bool */
	FG_SCHEMA_STR,  /* const char *, borrowed; NULL: absent, not written */
	/*
	 * char *, owned by the struct: the decoder copies it, release frees
	 * it. For strings of arrays that outlive what they were read from.
	 */
	FG_SCHEMA_OWNED_STR,
	/* A double derived on the way out: 100 * the uint64_t at offset / the one at aux. */
	FG_SCHEMA_PCT,
	/* A nested object: the struct at offset, members in sub. */
	FG_SCHEMA_OBJECT,
	/* Objects: pointer at offset, size_t count at aux, elem_size bytes each, members in sub. */
	FG_SCHEMA_ARRAY,
	/* Integers: int64_t pointer at offset, size_t count at aux. */
	FG_SCHEMA_I64_ARRAY,
	/* The members of sub, in the struct at offset, written into this object (not nested). */
	FG_SCHEMA_INLINE,
	/*
	 * The members after it are written only when the bool at offset is
	 * true; the decoder sets it when one of them is there.
	 */
	FG_SCHEMA_GATE,
};

/* No presence flag: the member is always written. */
#define FG_SCHEMA_NO_FLAG SIZE_MAX

struct fg_schema_member {
	const char *name; /* as on the wire */
	enum fg_schema_kind kind;
	size_t offset;
	size_t aux;
	const struct fg_schema_member *sub;
	size_t elem_size;
	/*
	 * A bool that says whether the member is there: written only when it
	 * is true, set by the decoder when the member is read. NO_FLAG: always.
	 * A bool that is its own flag is written only when true.
	 */
	size_t flag;
};

/* Every table defines T, the struct its offsets are into, before using these. */
#define M_ENTRY(n, k, off, a, s, size, f)                                                   \
	{                                                                                   \
		.name = n, .kind = k, .offset = off, .aux = a, .sub = s, .elem_size = size, \
		.flag = f                                                                   \
	}
#define M_SCALAR(m, k) M_ENTRY(#m, k, offsetof(T, m), 0, NULL, 0, FG_SCHEMA_NO_FLAG)
#define M_U64(m) M_SCALAR(m, FG_SCHEMA_U64)
#define M_U32(m) M_SCALAR(m, FG_SCHEMA_U32)
#define M_I64(m) M_SCALAR(m, FG_SCHEMA_I64)
#define M_BOOL(m) M_SCALAR(m, FG_SCHEMA_BOOL)
#define M_STR(m) M_SCALAR(m, FG_SCHEMA_STR)
#define M_OWNED_STR(m) M_SCALAR(m, FG_SCHEMA_OWNED_STR)
/* A scalar there only when the bool member flag is true. */
#define M_IF(m, k, flag) M_ENTRY(#m, k, offsetof(T, m), 0, NULL, 0, offsetof(T, flag))
/* A member whose wire name is no C name ("inline"). */
#define M_NAMED(name, m, k) M_ENTRY(name, k, offsetof(T, m), 0, NULL, 0, FG_SCHEMA_NO_FLAG)
#define M_PCT(name, part, whole)                                                     \
	M_ENTRY(name, FG_SCHEMA_PCT, offsetof(T, part), offsetof(T, whole), NULL, 0, \
		FG_SCHEMA_NO_FLAG)
#define M_OBJECT(m, members) \
	M_ENTRY(#m, FG_SCHEMA_OBJECT, offsetof(T, m), 0, members, 0, FG_SCHEMA_NO_FLAG)
#define M_OPTIONAL(m, flag, members) \
	M_ENTRY(#m, FG_SCHEMA_OBJECT, offsetof(T, m), 0, members, 0, offsetof(T, flag))
#define M_ARRAY(m, count, type, members)                                                        \
	M_ENTRY(#m, FG_SCHEMA_ARRAY, offsetof(T, m), offsetof(T, count), members, sizeof(type), \
		FG_SCHEMA_NO_FLAG)
#define M_I64_ARRAY(m, count)                                                         \
	M_ENTRY(#m, FG_SCHEMA_I64_ARRAY, offsetof(T, m), offsetof(T, count), NULL, 0, \
		FG_SCHEMA_NO_FLAG)
#define M_INLINE(m, members) \
	M_ENTRY(NULL, FG_SCHEMA_INLINE, offsetof(T, m), 0, members, 0, FG_SCHEMA_NO_FLAG)
#define M_GATE(flag) M_ENTRY(NULL, FG_SCHEMA_GATE, offsetof(T, flag), 0, NULL, 0, FG_SCHEMA_NO_FLAG)
#define M_END M_ENTRY(NULL, FG_SCHEMA_END, 0, 0, NULL, 0, FG_SCHEMA_NO_FLAG)

/*
 * Writes the members of the struct at base (borrowed for the call) into the
 * object o, by table t. Returns 0 or -ENOMEM (o may then hold part of them).
 */
int fg_schema_encode(struct json_object *o, const void *base, const struct fg_schema_member *t);

/*
 * Reads the object o into the struct at base, which the caller zeroed, by
 * table t. Borrowed strings point into o (valid until it is put); arrays and
 * owned strings are allocated, and fg_schema_release() frees them, on
 * failure too. Returns 0, -EBADMSG (see the top of this file) or -ENOMEM.
 */
int fg_schema_decode(struct json_object *o, void *base, const struct fg_schema_member *t);

/* Frees the arrays and owned strings of the struct at base. Accepts a zeroed or half-filled one. */
void fg_schema_release(void *base, const struct fg_schema_member *t);
