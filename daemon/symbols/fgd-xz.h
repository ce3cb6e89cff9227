/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Inflating one xz stream from an untrusted file: MiniDebugInfo's
 * .gnu_debugdata (fgd-elffile.h). What it costs is capped before
 * (the stream's size, the decoder's memory) and after (the output's size).
 * No logging, no global state.
 */

#include <stddef.h>
#include <stdint.h>

/*
 * Inflates in[0, len) into *ret (caller frees with free()) and *ret_len.
 * 0; -EINVAL for an empty or damaged stream, or one longer than max_in;
 * -E2BIG when the output would pass max_out or the decoder wants more
 * than 64 MiB; -ENOMEM.
 */
int fg_xz_decode(const uint8_t *in, size_t len, size_t max_in, size_t max_out, uint8_t **ret,
		 size_t *ret_len);
