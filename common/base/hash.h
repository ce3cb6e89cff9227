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

/*
 * A cheaper hash of bytes for tables that only ever live in memory (the
 * string pool): one multiply and shift per 8 bytes instead of a full mix,
 * then one full mix. Not for anything whose output is visible, such as
 * frame colours, which stay on fg_hash_bytes().
 */
static inline uint64_t fg_hash_str(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = len * 0x9e3779b97f4a7c15ULL;
	uint64_t w = 0;
	size_t n = len;

	while (n > 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 29;
		p += 8;
		n -= 8;
	}
	/* The last 1..8 bytes: overlap the previous word rather than copy byte by byte. */
	if (len >= 8) {
		memcpy(&w, (const unsigned char *)data + len - 8, 8);
	} else if (len >= 4) {
		uint32_t a, b;

		memcpy(&a, p, 4);
		memcpy(&b, p + len - 4, 4);
		w = (uint64_t)a << 32 | b;
	} else if (len > 0) {
		w = (uint64_t)p[0] << 16 | (uint64_t)p[len / 2] << 8 | p[len - 1];
	}
	return fg_hash_mix(h ^ w);
}
