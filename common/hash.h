/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Fast non-cryptographic hashing for in-memory tables. Deterministic (no
 * per-process seed) so tables iterate identically from run to run; callers
 * must never use iteration order for output, which is always sorted.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t fg_hash_mix(uint64_t x)
{
	/* splitmix64 finaliser: full avalanche on a single word. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline uint64_t fg_hash_combine(uint64_t h, uint64_t v)
{
	return fg_hash_mix(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

static inline uint64_t fg_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ fg_hash_mix(w)) * 0x9fb21c651e98df25ULL;
		p += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, p, len);
	return fg_hash_mix(h ^ w);
}
