/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The fgd control protocol (docs/PROTOCOL.md): over a Unix stream socket,
 * each message is one line of compact JSON ending in '\n' and carrying
 * "fgd": FG_PROTO_VERSION. A {"type":"data","length":N} message is followed
 * by exactly N raw bytes of result, so results stream in chunks and are
 * never JSON-escaped or held whole.
 *
 * This module holds the framing and the requests shared by the daemon and
 * the CLI: the incremental reader, request encoding and validation, and
 * errno names. The replies with a schema are proto/status.h and
 * proto/meta.h; the requests' types are proto/proto-types.h.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/json.h"
#include "proto/proto-types.h"

/* ---- incremental reader ---- */

enum fg_proto_item_kind {
	FG_PROTO_NEED_MORE, /* feed more bytes */
	FG_PROTO_MESSAGE,   /* a JSON line */
	FG_PROTO_DATA,      /* raw bytes following a "data" message */
};

struct fg_proto_item {
	enum fg_proto_item_kind kind;
	const char *bytes; /* borrowed until the next reader call; a message is NUL-terminated */
	size_t len;
};

struct fg_proto_reader {
	char *buf; /* owned */
	size_t start, len, cap;
	size_t max_line;
	uint64_t data_left; /* raw bytes still owed by the current data message */
};

void fg_proto_reader_init(struct fg_proto_reader *r, size_t max_line);
void fg_proto_reader_done(struct fg_proto_reader *r);

/* Appends received bytes. 0 or -ENOMEM. */
int fg_proto_reader_feed(struct fg_proto_reader *r, const void *data, size_t len);

/*
 * Next complete item. After a MESSAGE that is a data header, call
 * fg_proto_reader_expect_data() so the following bytes come back as DATA
 * items (possibly in several pieces). Returns 0, or -EMSGSIZE for a line
 * longer than max_line.
 */
int fg_proto_reader_next(struct fg_proto_reader *r, struct fg_proto_item *ret);
void fg_proto_reader_expect_data(struct fg_proto_reader *r, uint64_t len);
/*
 * Whether bytes other than blanks were received and not returned yet: at the
 * end of the input, the start of a request without its newline.
 */
bool fg_proto_reader_pending(const struct fg_proto_reader *r);

/* ---- messages ---- */

/*
 * Serialises obj as one protocol line (compact JSON + '\n'). Returns a string
 * the caller frees with free(), or NULL on ENOMEM.
 */
char *fg_proto_format(struct json_object *obj);

/*
 * Parses a line into a JSON object and checks the version. Returns 0 and a
 * new reference in *ret (caller puts it with json_object_put()), -EBADMSG for
 * anything that is not a JSON object, -EPROTO for a missing or different
 * version.
 */
int fg_proto_parse(const char *line, size_t len, struct json_object **ret);

/* A new message object with the version and "type" (or "cmd") set. NULL on ENOMEM. */
struct json_object *fg_proto_new_message(const char *type);
struct json_object *fg_proto_new_request(const char *cmd);

/* Adds a member to a JSON object being built; errors surface as a missing member. */
static inline void fg_json_add_int(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

static inline void fg_json_add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static inline void fg_json_add_bool(struct json_object *o, const char *key, bool v)
{
	json_object_object_add(o, key, json_object_new_boolean(v));
}

/* ---- requests (their types: proto/proto-types.h) ---- */

/* Defaults for a record request: folded; kernel and JIT suffixes, inline frames and demangling on. */
void fg_record_request_init(struct fg_record_request *r);

/*
 * Validates a parsed message as a request. On -EINVAL, *ret_error (may be
 * NULL) points to a static description of what is wrong.
 */
int fg_proto_decode_request(struct json_object *msg, struct fg_request *ret,
			    const char **ret_error);
/* The inverse, for clients. NULL on ENOMEM. */
struct json_object *fg_proto_encode_request(const struct fg_request *req);

/* ---- errors ---- */

/* "ESRCH" for ESRCH; NULL for an errno this table lacks. */
const char *fg_errno_name(int err);
/* ESRCH for "ESRCH"; 0 if unknown. */
int fg_errno_from_name(const char *name);
