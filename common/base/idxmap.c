/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "base/idxmap.h"
#include "base/macro.h"

void fg_idxmap_done(struct fg_idxmap *m)
{
	free(m->slots);
	*m = (struct fg_idxmap)FG_IDXMAP_INIT;
}

static void place(uint64_t *slots, size_t mask, uint64_t s)
{
	size_t pos = fg_idxmap_slot_tag(s) & mask;

	while (slots[pos])
		pos = (pos + 1) & mask;
	slots[pos] = s;
}

static int resize(struct fg_idxmap *m, size_t nslots)
{
	uint64_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; m->slots && i <= m->mask; i++)
		if (m->slots[i])
			place(slots, nslots - 1, m->slots[i]);
	free(m->slots);
	m->slots = slots;
	m->mask = nslots - 1;
	return 0;
}

int fg_idxmap_insert(struct fg_idxmap *m, uint64_t hash, uint32_t idx)
{
	int r;

	if (idx == UINT32_MAX)
		return -EOVERFLOW;
	/* Keep the load factor at or under 1/2 so probe runs stay short. */
	if (!m->slots || (m->count + 1) * 2 > m->mask + 1) {
		size_t n = m->slots ? (m->mask + 1) * 2 : 64;

		if (n > ((size_t)1 << 32))
			return -ENOMEM;
		r = resize(m, n);
		if (r < 0)
			return r;
	}
	place(m->slots, m->mask, (hash << 32) | ((uint64_t)idx + 1));
	m->count++;
	return 0;
}

int fg_idxmap_remove(struct fg_idxmap *m, uint64_t hash, uint32_t idx)
{
	size_t pos, next;

	if (!m->slots)
		return -ENOENT;
	for (pos = (uint32_t)hash & m->mask;; pos = (pos + 1) & m->mask) {
		if (m->slots[pos] == 0)
			return -ENOENT;
		if (fg_idxmap_slot_index(m->slots[pos]) == idx)
			break;
	}
	/* Backward-shift deletion: no tombstones, so probe runs never rot. */
	for (next = (pos + 1) & m->mask; m->slots[next]; next = (next + 1) & m->mask) {
		size_t home = fg_idxmap_slot_tag(m->slots[next]) & m->mask;

		/* Move next into the hole unless its home lies in (pos, next]. */
		if ((next > pos && (home <= pos || home > next)) ||
		    (next < pos && (home <= pos && home > next))) {
			m->slots[pos] = m->slots[next];
			pos = next;
		}
	}
	m->slots[pos] = 0;
	m->count--;
	return 0;
}
