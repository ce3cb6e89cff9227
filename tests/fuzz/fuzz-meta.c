/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl reads a recording's and a snapshot's metadata from whatever answers
 * on the socket: parse arbitrary bytes as JSON, decode any object as both
 * kinds of metadata, and write back what was decoded (the encoder then
 * meets whatever the decoder let through).
 */
#include <stdlib.h>

#include "proto/meta.h"
#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok = json_tokener_new();
	struct fg_recording_meta rec;
	struct fg_snapshot_meta snap;
	struct json_object *obj;

	if (!tok || size > 1 << 20) {
		json_tokener_free(tok);
		return 0;
	}
	obj = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	if (obj && fg_recording_meta_from_json(obj, &rec) == 0) {
		struct json_object *back = fg_recording_meta_to_json(&rec);
		char *line = back ? fg_proto_format(back) : NULL;

		free(line);
		json_object_put(back);
		fg_recording_meta_done(&rec);
	}
	if (obj && fg_snapshot_meta_from_json(obj, &snap) == 0) {
		struct json_object *back = fg_snapshot_meta_to_json(&snap);
		char *line = back ? fg_proto_format(back) : NULL;

		free(line);
		json_object_put(back);
		fg_snapshot_meta_done(&snap);
	}
	json_object_put(obj);
	json_tokener_free(tok);
	return 0;
}
