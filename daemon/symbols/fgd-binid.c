/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "base/hash.h"
#include "symbols/fgd-binid.h"

/* What the index's equality callbacks are handed. */
struct lookup {
	const struct fg_dso_key *(*key_of)(const void *ctx, uint32_t slot);
	const void *ctx;
};

static uint64_t build_id_hash(const uint8_t *id, size_t len)
{
	return fg_hash_bytes(id, len, 0x6275696c64ULL);
}

static uint64_t inode_hash(uint64_t dev, uint64_t ino)
{
	return fg_hash_combine(fg_hash_mix(dev), ino);
}

static bool eq_build_id(const void *ctx, uint32_t idx, const void *key)
{
	const struct lookup *l = ctx;
	const struct fg_dso_key *k = key;
	const struct fg_dso_key *dk = l->key_of(l->ctx, idx);

	return dk->build_id_len == k->build_id_len &&
	       memcmp(dk->build_id, k->build_id, k->build_id_len) == 0;
}

static bool eq_inode(const void *ctx, uint32_t idx, const void *key)
{
	const struct lookup *l = ctx;
	const struct fg_dso_key *k = key;
	const struct fg_dso_key *dk = l->key_of(l->ctx, idx);

	return dk->dev == k->dev && dk->ino == k->ino;
}

void fg_binid_index_done(struct fg_binid_index *x)
{
	fg_idxmap_done(&x->by_build_id);
	fg_idxmap_done(&x->by_inode);
}

int64_t fg_binid_index_find(const struct fg_binid_index *x, const struct fg_dso_key *k,
			    const struct fg_dso_key *(*key_of)(const void *ctx, uint32_t slot),
			    const void *ctx)
{
	const struct lookup l = { key_of, ctx };
	int64_t i = -1;

	if (k->build_id_len)
		i = fg_idxmap_find(&x->by_build_id, build_id_hash(k->build_id, k->build_id_len),
				   eq_build_id, &l, k);
	if (i < 0 && k->ino)
		i = fg_idxmap_find(&x->by_inode, inode_hash(k->dev, k->ino), eq_inode, &l, k);
	return i;
}

int fg_binid_index_add(struct fg_binid_index *x, const struct fg_dso_key *k, uint32_t slot,
		       struct fg_binid_indexed *in)
{
	int r;

	if (k->build_id_len && !in->build_id) {
		r = fg_idxmap_insert(&x->by_build_id, build_id_hash(k->build_id, k->build_id_len),
				     slot);
		if (r < 0)
			return r;
		in->build_id = true;
	}
	if (k->ino && !in->inode) {
		r = fg_idxmap_insert(&x->by_inode, inode_hash(k->dev, k->ino), slot);
		if (r < 0)
			return r;
		in->inode = true;
	}
	return 0;
}

void fg_binid_index_remove(struct fg_binid_index *x, const struct fg_dso_key *k, uint32_t slot,
			   struct fg_binid_indexed *in)
{
	if (in->build_id)
		fg_idxmap_remove(&x->by_build_id, build_id_hash(k->build_id, k->build_id_len),
				 slot);
	if (in->inode)
		fg_idxmap_remove(&x->by_inode, inode_hash(k->dev, k->ino), slot);
	*in = (struct fg_binid_indexed){};
}

bool fg_binid_is_file(const struct fg_dso_key *k, const uint8_t *id, size_t id_len,
		      const struct stat *st)
{
	if (k->build_id_len)
		return id_len == k->build_id_len && memcmp(id, k->build_id, id_len) == 0;
	return !k->ino || ((uint64_t)st->st_ino == k->ino && (uint64_t)st->st_dev == k->dev);
}
