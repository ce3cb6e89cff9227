/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "base/hash.h"
#include "base/idxmap.h"
#include "base/u32map.h"
#include "test.h"

/* Entries are plain keys; hash deliberately weak so probe runs collide and wrap. */
static uint64_t keys[4096];

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	return keys[idx] == *(const uint64_t *)key;
}

static uint64_t weak_hash(uint64_t k)
{
	return k % 7; /* everything lands in a handful of home slots */
}

TEST(insert_find_remove_against_a_model)
{
	struct fg_idxmap m = FG_IDXMAP_INIT;
	bool present[4096] = {};
	unsigned seed = 7;

	for (uint32_t i = 0; i < 4096; i++)
		keys[i] = (uint64_t)i * 2654435761u;
	/* Random inserts and removals; after each, every key's presence must match. */
	for (int step = 0; step < 20000; step++) {
		uint32_t i = (uint32_t)rand_r(&seed) % 300;
		uint64_t h = weak_hash(keys[i]);

		if (present[i]) {
			ASSERT_OK(fg_idxmap_remove(&m, h, i));
			present[i] = false;
		} else {
			ASSERT_OK(fg_idxmap_insert(&m, h, i));
			present[i] = true;
		}
		if (step % 97 == 0)
			for (uint32_t j = 0; j < 300; j++) {
				int64_t f = fg_idxmap_find(&m, weak_hash(keys[j]), key_eq, NULL,
							   &keys[j]);

				ASSERT_EQ(f, present[j] ? (int64_t)j : -1);
			}
	}
	ASSERT_ERR(fg_idxmap_remove(&m, 12345, 4000), -ENOENT);
	fg_idxmap_done(&m);
}

TEST(grows_past_many_entries)
{
	struct fg_idxmap m = FG_IDXMAP_INIT;

	for (uint32_t i = 0; i < 4096; i++) {
		keys[i] = i;
		ASSERT_OK(fg_idxmap_insert(&m, fg_hash_mix(i), i));
	}
	ASSERT_EQ(m.count, 4096);
	ASSERT_TRUE(m.mask + 1 >= 8192); /* load factor kept at or under 1/2 */
	for (uint32_t i = 0; i < 4096; i++)
		ASSERT_EQ(fg_idxmap_find(&m, fg_hash_mix(i), key_eq, NULL, &keys[i]), i);
	fg_idxmap_done(&m);
}

TEST(u32map_set_get_del_reuses_slots)
{
	struct fg_u32map m = FG_U32MAP_INIT;
	int vals[3];

	ASSERT_OK(fg_u32map_set(&m, 10, &vals[0]));
	ASSERT_OK(fg_u32map_set(&m, 20, &vals[1]));
	ASSERT_TRUE(fg_u32map_get(&m, 10) == &vals[0]);
	ASSERT_OK(fg_u32map_set(&m, 10, &vals[2])); /* replace */
	ASSERT_TRUE(fg_u32map_get(&m, 10) == &vals[2]);
	ASSERT_EQ(fg_u32map_count(&m), 2);
	ASSERT_TRUE(fg_u32map_del(&m, 10) == &vals[2]);
	ASSERT_TRUE(fg_u32map_get(&m, 10) == NULL);
	ASSERT_TRUE(fg_u32map_del(&m, 10) == NULL);
	ASSERT_OK(fg_u32map_set(&m, 30, &vals[0]));
	ASSERT_EQ(m.n, 2); /* the freed slot was reused */
	ASSERT_TRUE(fg_u32map_get(&m, 30) == &vals[0]);
	ASSERT_TRUE(fg_u32map_get(&m, 20) == &vals[1]);
	fg_u32map_done(&m);
}
