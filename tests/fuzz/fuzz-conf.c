/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bytes are an fgd.conf. Root writes it, but a daemon that reloads on
 * SIGHUP must survive any file: beyond not crashing, a file that parses
 * must give values within every key's documented range, a file that does
 * not must leave the configuration untouched, and every error must carry a
 * message.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fgd-conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_error(void *ctx, const struct fg_conf_error *err)
{
	if (!err->message[0] || strnlen(err->message, sizeof(err->message)) == sizeof(err->message))
		abort();
	++*(unsigned *)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fgd_config c, before;
	unsigned errors = 0;
	int r;

	if (size > FGD_MAX_CONFIG_FILE || fgd_config_init(&c) < 0)
		return 0;
	before = c;
	r = fgd_config_parse(&c, (const char *)data, size, on_error, &errors);
	if (r < 0) {
		if (r != -ENOMEM && (r != -EINVAL || errors == 0))
			abort();
		if (memcmp(&c, &before, sizeof(c)) != 0)
			abort();
	} else {
		if (errors)
			abort();
		if (c.default_frequency < 1 || c.default_frequency > 100000 ||
		    c.always_on_frequency < 1 || c.always_on_frequency > 100000 || !c.ring_pages ||
		    (c.ring_pages & (c.ring_pages - 1)) || c.stack_dump % 8 || !c.stack_dump ||
		    c.slice_seconds < 1 || c.window_seconds < c.slice_seconds ||
		    c.memory_max < FGD_MIN_MEMORY_MAX || !c.socket_path ||
		    c.socket_path[0] != '/' || !c.state_directory || c.state_directory[0] != '/')
			abort();
	}
	fgd_config_done(&c);
	return 0;
}
