/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "base/strpool.h"

#define CHUNK_SIZE (64 * 1024)

struct chunk {
	struct chunk *next; /* owned */
	size_t used, size;
	char data[];
};

struct entry {
	const char *str; /* borrowed from a chunk */
	uint32_t len;
};

struct fg_strpool {
	struct chunk *chunks; /* owned list, newest first */
	struct entry *entries;
	size_t n_entries, cap_entries;
	struct fg_idxmap index;
	size_t bytes;
};

struct key {
	const char *s;
	size_t len;
};

struct fg_strpool *fg_strpool__new(void)
{
	return calloc(1, sizeof(struct fg_strpool));
}

struct fg_strpool *fg_strpool__free(struct fg_strpool *p)
{
	if (!p)
		return NULL;
	while (p->chunks) {
		struct chunk *c = p->chunks;

		p->chunks = c->next;
		free(c);
	}
	free(p->entries);
	fg_idxmap_done(&p->index);
	free(p);
	return NULL;
}

static bool entry_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_strpool *p = ctx;
	const struct key *k = key;

	return p->entries[idx].len == k->len && memcmp(p->entries[idx].str, k->s, k->len) == 0;
}

static char *store(struct fg_strpool *p, const char *s, size_t len)
{
	struct chunk *c = p->chunks;
	char *dst;

	if (!c || c->size - c->used < len + 1) {
		size_t size = MAX((size_t)CHUNK_SIZE, len + 1);

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = p->chunks;
		p->chunks = c;
		p->bytes += sizeof(*c) + size;
	}
	dst = c->data + c->used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	c->used += len + 1;
	return dst;
}

int64_t fg_strpool__find(const struct fg_strpool *p, const char *s, size_t len)
{
	struct key k = { s, len };

	return fg_idxmap_find(&p->index, fg_hash_str(s, len), entry_eq, p, &k);
}

int fg_strpool__intern(struct fg_strpool *p, const char *s, size_t len, uint32_t *ret_id)
{
	struct key k = { s, len };
	uint64_t h = fg_hash_str(s, len);
	int64_t found;
	char *dst;
	int r;

	found = fg_idxmap_find(&p->index, h, entry_eq, p, &k);
	if (found >= 0) {
		*ret_id = (uint32_t)found;
		return 0;
	}
	if (len > UINT32_MAX || p->n_entries >= UINT32_MAX - 1)
		return -E2BIG;
	r = FG_GROW(p->entries, p->cap_entries, p->n_entries + 1);
	if (r < 0)
		return r;
	dst = store(p, s, len);
	if (!dst)
		return -ENOMEM;
	r = fg_idxmap_insert(&p->index, h, (uint32_t)p->n_entries);
	if (r < 0)
		return r; /* the stored bytes stay in the chunk, unreferenced */
	p->entries[p->n_entries] = (struct entry){ dst, (uint32_t)len };
	*ret_id = (uint32_t)p->n_entries++;
	return 1;
}

bool fg_strpool__is(const struct fg_strpool *p, uint32_t id, const char *s, size_t len)
{
	return p->entries[id].len == len && memcmp(p->entries[id].str, s, len) == 0;
}

const char *fg_strpool__str(const struct fg_strpool *p, uint32_t id)
{
	return p->entries[id].str;
}

size_t fg_strpool__len(const struct fg_strpool *p, uint32_t id)
{
	return p->entries[id].len;
}

size_t fg_strpool__count(const struct fg_strpool *p)
{
	return p->n_entries;
}

size_t fg_strpool__bytes(const struct fg_strpool *p)
{
	return p->bytes + p->cap_entries * sizeof(struct entry) + fg_idxmap_bytes(&p->index);
}
