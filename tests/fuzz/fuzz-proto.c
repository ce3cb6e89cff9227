/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Any local user can write to the daemon's socket: feed arbitrary bytes
 * through the reader in uneven pieces and decode every line as a request.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_proto_reader r;
	size_t off = 0, step = 1;

	fg_proto_reader_init(&r, 4096);
	while (off < size) {
		size_t n = step < size - off ? step : size - off;
		struct fg_proto_item it;

		if (fg_proto_reader_feed(&r, data + off, n) < 0)
			break;
		off += n;
		step = step * 3 % 97 + 1;
		while (fg_proto_reader_next(&r, &it) == 0 && it.kind != FG_PROTO_NEED_MORE) {
			struct json_object *msg;
			struct fg_request req;
			const char *err;

			if (it.kind != FG_PROTO_MESSAGE ||
			    fg_proto_parse(it.bytes, it.len, &msg) < 0)
				continue;
			if (fg_proto_decode_request(msg, &req, &err) == 0 &&
			    req.cmd == FG_CMD_RECORD) {
				struct json_object *back = fg_proto_encode_request(&req);
				char *line = back ? fg_proto_format(back) : NULL;

				free(line);
				json_object_put(back);
			}
			/* A data header in the input exercises the payload path too. */
			if (strstr(it.bytes, "\"data\""))
				fg_proto_reader_expect_data(&r, it.len);
			json_object_put(msg);
		}
	}
	fg_proto_reader_done(&r);
	return 0;
}
