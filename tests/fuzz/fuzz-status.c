/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl reads status from whatever answers on the socket: parse arbitrary
 * bytes as JSON, decode any object as a status reply, and write back what
 * was decoded (the encoder then meets whatever the decoder let through).
 */
#include <stdlib.h>

#include "proto/proto.h"
#include "proto/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *obj;
	struct fg_status st;

	if (!tok || size > 1 << 20) {
		json_tokener_free(tok);
		return 0;
	}
	obj = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	if (obj && fg_status_from_json(obj, &st) == 0) {
		struct json_object *back = fg_status_to_json(&st);
		char *line = back ? fg_proto_format(back) : NULL;

		free(line);
		json_object_put(back);
		fg_status_done(&st);
	}
	json_object_put(obj);
	json_tokener_free(tok);
	return 0;
}
