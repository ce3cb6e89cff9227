/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>

#include "base/macro.h"
#include "symbols/fgd-xz.h"

/* The memory limit bounds the dictionary a crafted header can ask for. */
#define MAX_XZ_MEMORY (64u << 20)

int fg_xz_decode(const uint8_t *in, size_t len, size_t max_in, size_t max_out, uint8_t **ret,
		 size_t *ret_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	_cleanup_free_ uint8_t *out = NULL;
	size_t cap = 0;
	lzma_ret lr;
	int r = 0;

	if (len == 0 || len > max_in)
		return -EINVAL;
	/* The memory limit bounds the dictionary a crafted header can ask for. */
	lr = lzma_stream_decoder(&strm, MAX_XZ_MEMORY, 0);
	if (lr != LZMA_OK)
		return lr == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	strm.next_in = in;
	strm.avail_in = len;
	for (;;) {
		if (strm.avail_out == 0) {
			size_t ncap = cap ? MIN(cap * 2, max_out) : MIN(len * 4 + 4096, max_out);
			uint8_t *n;

			if (ncap <= cap) {
				r = -E2BIG;
				break;
			}
			n = realloc(out, ncap);
			if (!n) {
				r = -ENOMEM;
				break;
			}
			out = n;
			strm.next_out = out + cap;
			strm.avail_out = ncap - cap;
			cap = ncap;
		}
		lr = lzma_code(&strm, LZMA_FINISH);
		if (lr == LZMA_STREAM_END)
			break;
		if (lr != LZMA_OK) {
			r = lr == LZMA_MEM_ERROR      ? -ENOMEM :
			    lr == LZMA_MEMLIMIT_ERROR ? -E2BIG :
							-EINVAL;
			break;
		}
	}
	*ret_len = (size_t)strm.total_out;
	lzma_end(&strm);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(out);
	return 0;
}
