/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "idxmap.h"
#include "macro.h"

void fg_idxmap_done(struct fg_idxmap *m)
{
	free(m->slot);
	free(m->tag);
	*m = (struct fg_idxmap)FG_IDXMAP_INIT;
}

static void place(uint32_t *slot, uint32_t *tagv, size_t mask, uint32_t tag, uint32_t s)
{
	size_t pos = tag & mask;

	while (slot[pos])
		pos = (pos + 1) & mask;
	slot[pos] = s;
	tagv[pos] = tag;
}

static int resize(struct fg_idxmap *m, size_t nslots)
{
	_cleanup_free_ uint32_t *slot = calloc(nslots, sizeof(*slot));
	_cleanup_free_ uint32_t *tag = calloc(nslots, sizeof(*tag));

	if (!slot || !tag)
		return -ENOMEM;
	for (size_t i = 0; m->slot && i <= m->mask; i++)
		if (m->slot[i])
			place(slot, tag, nslots - 1, m->tag[i], m->slot[i]);
	free(m->slot);
	free(m->tag);
	m->slot = TAKE_PTR(slot);
	m->tag = TAKE_PTR(tag);
	m->mask = nslots - 1;
	return 0;
}

int fg_idxmap_insert(struct fg_idxmap *m, uint64_t hash, uint32_t idx)
{
	int r;

	if (idx == UINT32_MAX)
		return -EOVERFLOW;
	/* Keep the load factor at or under 1/2 so probe runs stay short. */
	if (!m->slot || (m->count + 1) * 2 > m->mask + 1) {
		size_t n = m->slot ? (m->mask + 1) * 2 : 64;

		if (n > ((size_t)1 << 32))
			return -ENOMEM;
		r = resize(m, n);
		if (r < 0)
			return r;
	}
	place(m->slot, m->tag, m->mask, (uint32_t)hash, idx + 1);
	m->count++;
	return 0;
}

int fg_idxmap_remove(struct fg_idxmap *m, uint64_t hash, uint32_t idx)
{
	size_t pos, next;

	if (!m->slot)
		return -ENOENT;
	for (pos = (uint32_t)hash & m->mask;; pos = (pos + 1) & m->mask) {
		if (m->slot[pos] == 0)
			return -ENOENT;
		if (m->slot[pos] == idx + 1)
			break;
	}
	/* Backward-shift deletion: no tombstones, so probe runs never rot. */
	for (next = (pos + 1) & m->mask; m->slot[next]; next = (next + 1) & m->mask) {
		size_t home = m->tag[next] & m->mask;

		/* Move next into the hole unless its home lies in (pos, next]. */
		if ((next > pos && (home <= pos || home > next)) ||
		    (next < pos && (home <= pos && home > next))) {
			m->slot[pos] = m->slot[next];
			m->tag[pos] = m->tag[next];
			pos = next;
		}
	}
	m->slot[pos] = 0;
	m->count--;
	return 0;
}
