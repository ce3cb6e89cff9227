/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pprof profiles: what the builder writes is read back with a protobuf
 * reader of the test's own (profile.proto's field numbers, as Go's pprof
 * reads them), and one profile is checked byte for byte. The integration
 * test (test_pprof.py) has Go's own reader judge real recordings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile/folded.h"
#include "profile/pprof-model.h"
#include "profile/pprof.h"
#include "test.h"

#define MAX_ITEMS 32

/* ---- a protobuf reader for the test ---- */

struct pb {
	const uint8_t *p, *end;
};

static uint64_t pb_varint(struct pb *b)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		ASSERT_TRUE(b->p < b->end);
		v |= (uint64_t)(*b->p & 0x7f) << shift;
		if (!(*b->p++ & 0x80))
			return v;
	}
	ASSERT_TRUE(false);
	return 0;
}

/* The next field: its number, and its value (varint) or its bytes (length-delimited). */
static bool pb_field(struct pb *b, unsigned *field, uint64_t *v, struct pb *sub)
{
	uint64_t tag, len;

	if (b->p >= b->end)
		return false;
	tag = pb_varint(b);
	*field = (unsigned)(tag >> 3);
	if ((tag & 7) == 0) {
		*v = pb_varint(b);
		return true;
	}
	ASSERT_EQ((int)(tag & 7), 2);
	len = pb_varint(b);
	ASSERT_TRUE(len <= (uint64_t)(b->end - b->p));
	*sub = (struct pb){ b->p, b->p + len };
	b->p += len;
	return true;
}

struct label {
	uint64_t key, str, num, unit;
};

struct sample {
	uint64_t locs[MAX_ITEMS], values[4];
	size_t n_locs, n_values;
	struct label labels[4];
	size_t n_labels;
};

struct location {
	uint64_t id, mapping, address, lines[4];
	size_t n_lines;
};

struct function {
	uint64_t id, name, system_name, filename;
};

struct mapping {
	uint64_t id, start, limit, offset, filename, build_id, has_functions;
};

struct profile {
	char *strings[MAX_ITEMS * 4];
	size_t n_strings;
	uint64_t types[4][2];
	size_t n_types;
	struct sample samples[MAX_ITEMS];
	size_t n_samples;
	struct location locations[MAX_ITEMS];
	size_t n_locations;
	struct function functions[MAX_ITEMS];
	size_t n_functions;
	struct mapping mappings[4];
	size_t n_mappings;
	uint64_t time, duration, period, period_type[2], comments[4], default_type;
	size_t n_comments;
};

static void packed(struct pb sub, uint64_t *out, size_t *n, size_t max)
{
	while (sub.p < sub.end) {
		ASSERT_TRUE(*n < max);
		out[(*n)++] = pb_varint(&sub);
	}
}

static void read_sample(struct pb b, struct sample *s)
{
	struct pb sub, l;
	unsigned f, lf;
	uint64_t v, lv;

	while (pb_field(&b, &f, &v, &sub)) {
		if (f == 1)
			packed(sub, s->locs, &s->n_locs, MAX_ITEMS);
		else if (f == 2)
			packed(sub, s->values, &s->n_values, 4);
		else if (f == 3) {
			struct label *lb = &s->labels[s->n_labels++];

			while (pb_field(&sub, &lf, &lv, &l)) {
				if (lf == 1)
					lb->key = lv;
				else if (lf == 2)
					lb->str = lv;
				else if (lf == 3)
					lb->num = lv;
				else if (lf == 4)
					lb->unit = lv;
			}
		}
	}
}

static void read_location(struct pb b, struct location *l)
{
	struct pb sub, line;
	unsigned f, lf;
	uint64_t v, lv;

	while (pb_field(&b, &f, &v, &sub)) {
		if (f == 1)
			l->id = v;
		else if (f == 2)
			l->mapping = v;
		else if (f == 3)
			l->address = v;
		else if (f == 4)
			while (pb_field(&sub, &lf, &lv, &line))
				if (lf == 1)
					l->lines[l->n_lines++] = lv;
	}
}

static void read_profile(const uint8_t *data, size_t len, struct profile *pr)
{
	struct pb b = { data, data + len }, sub, vt;
	unsigned f, vf;
	uint64_t v, vv;

	memset(pr, 0, sizeof(*pr));
	while (pb_field(&b, &f, &v, &sub)) {
		switch (f) {
		case 1:
			while (pb_field(&sub, &vf, &vv, &vt))
				pr->types[pr->n_types][vf - 1] = vv;
			pr->n_types++;
			break;
		case 2:
			read_sample(sub, &pr->samples[pr->n_samples++]);
			break;
		case 3: {
			struct mapping *m = &pr->mappings[pr->n_mappings++];
			uint64_t *fields[] = { &m->id,           &m->start,    &m->limit,
					       &m->offset,       &m->filename, &m->build_id,
					       &m->has_functions };

			while (pb_field(&sub, &vf, &vv, &vt))
				if (vf >= 1 && vf <= 7)
					*fields[vf - 1] = vv;
			break;
		}
		case 4:
			read_location(sub, &pr->locations[pr->n_locations++]);
			break;
		case 5: {
			struct function *fn = &pr->functions[pr->n_functions++];
			uint64_t *fields[] = { &fn->id, &fn->name, &fn->system_name,
					       &fn->filename };

			while (pb_field(&sub, &vf, &vv, &vt))
				if (vf >= 1 && vf <= 4)
					*fields[vf - 1] = vv;
			break;
		}
		case 6:
			pr->strings[pr->n_strings] = strndup((const char *)sub.p, sub.end - sub.p);
			ASSERT_TRUE(pr->strings[pr->n_strings++]);
			break;
		case 9:
			pr->time = v;
			break;
		case 10:
			pr->duration = v;
			break;
		case 11:
			while (pb_field(&sub, &vf, &vv, &vt))
				pr->period_type[vf - 1] = vv;
			break;
		case 12:
			pr->period = v;
			break;
		case 13:
			packed(sub, pr->comments, &pr->n_comments, 4);
			break;
		case 14:
			pr->default_type = v;
			break;
		default:
			ASSERT_TRUE(false);
		}
	}
}

static void free_profile(struct profile *pr)
{
	for (size_t i = 0; i < pr->n_strings; i++)
		free(pr->strings[i]);
}

static const char *str(const struct profile *pr, uint64_t i)
{
	ASSERT_TRUE(i < pr->n_strings);
	return pr->strings[i];
}

static const struct location *loc(const struct profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_locations; i++)
		if (pr->locations[i].id == id)
			return &pr->locations[i];
	ASSERT_TRUE(false);
	return NULL;
}

static const struct function *fn(const struct profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_functions; i++)
		if (pr->functions[i].id == id)
			return &pr->functions[i];
	ASSERT_TRUE(false);
	return NULL;
}

/* The name of the function at a location's line i. */
static const char *line_name(const struct profile *pr, uint64_t loc_id, size_t i)
{
	const struct location *l = loc(pr, loc_id);

	ASSERT_TRUE(i < l->n_lines);
	return str(pr, fn(pr, l->lines[i])->name);
}

/* The label key's value in s: its string, or NULL. */
static const char *label(const struct profile *pr, const struct sample *s, const char *key)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (strcmp(str(pr, s->labels[i].key), key) == 0)
			return str(pr, s->labels[i].str);
	return NULL;
}

/* ---- the builder ---- */

static struct fg_pprof *small_profile(void)
{
	struct fg_pprof *p = fg_pprof__new();
	struct fg_pprof_mapping m = { .memory_start = 0x400000,
				      .memory_limit = 0x500000,
				      .file_offset = 0x1000,
				      .filename = "/usr/bin/app",
				      .build_id = "abcd",
				      .has_functions = true };
	uint64_t map, f_main, f_inl, f_leaf, l_main, l_leaf, locs[2], fns[2];
	const struct fg_pprof_label labels[] = { { .key = "comm", .str = "app" },
						 { .key = "bytes", .num = 300, .num_unit = "B" } };
	const int64_t values[] = { 3, 300 };

	ASSERT_TRUE(p);
	ASSERT_OK(fg_pprof__sample_type(p, "samples", "count"));
	ASSERT_OK(fg_pprof__sample_type(p, "cpu", "nanoseconds"));
	ASSERT_OK(fg_pprof__default_type(p, "cpu"));
	ASSERT_OK(fg_pprof__period(p, "cpu", "nanoseconds", 100));
	fg_pprof__time(p, 1700000000000000000, 5000000000);
	ASSERT_OK(fg_pprof__comment(p, "event: cpu-clock"));
	ASSERT_OK(fg_pprof__mapping(p, &m, &map));
	ASSERT_U64_EQ(map, 1);
	ASSERT_OK(fg_pprof__function(p, "main", 4, NULL, "app.c", &f_main));
	ASSERT_OK(fg_pprof__function(p, "ns::inl()", 9, "_ZN2ns3inlEv", NULL, &f_inl));
	ASSERT_OK(fg_pprof__function(p, "leafXX", 4, NULL, NULL, &f_leaf));
	ASSERT_OK(fg_pprof__location(p, map, 0x401000, &f_main, 1, &l_main));
	/* The leaf location: leaf() inlined into ns::inl(): innermost first. */
	fns[0] = f_leaf;
	fns[1] = f_inl;
	ASSERT_OK(fg_pprof__location(p, map, 0x402000, fns, 2, &l_leaf));
	locs[0] = l_leaf;
	locs[1] = l_main;
	ASSERT_OK(fg_pprof__sample(p, locs, 2, values, labels, 2));
	ASSERT_OK(fg_pprof__sample(p, &l_main, 1, (const int64_t[]){ 1, 100 }, NULL, 0));
	ASSERT_U64_EQ(fg_pprof__n_samples(p), 2);
	return p;
}

TEST(builder_round_trips)
{
	struct fg_pprof *p = small_profile();
	uint8_t *data;
	size_t len;
	struct profile pr;
	const struct sample *s;

	ASSERT_OK(fg_pprof__encode(p, false, &data, &len));
	read_profile(data, len, &pr);
	ASSERT_STREQ(str(&pr, 0), "");
	ASSERT_EQ((int)pr.n_types, 2);
	ASSERT_STREQ(str(&pr, pr.types[0][0]), "samples");
	ASSERT_STREQ(str(&pr, pr.types[0][1]), "count");
	ASSERT_STREQ(str(&pr, pr.types[1][0]), "cpu");
	ASSERT_STREQ(str(&pr, pr.default_type), "cpu");
	ASSERT_STREQ(str(&pr, pr.period_type[0]), "cpu");
	ASSERT_STREQ(str(&pr, pr.period_type[1]), "nanoseconds");
	ASSERT_U64_EQ(pr.period, 100);
	ASSERT_U64_EQ(pr.time, 1700000000000000000);
	ASSERT_U64_EQ(pr.duration, 5000000000);
	ASSERT_EQ((int)pr.n_comments, 1);
	ASSERT_STREQ(str(&pr, pr.comments[0]), "event: cpu-clock");

	ASSERT_EQ((int)pr.n_mappings, 1);
	ASSERT_U64_EQ(pr.mappings[0].id, 1);
	ASSERT_U64_EQ(pr.mappings[0].start, 0x400000);
	ASSERT_U64_EQ(pr.mappings[0].limit, 0x500000);
	ASSERT_U64_EQ(pr.mappings[0].offset, 0x1000);
	ASSERT_STREQ(str(&pr, pr.mappings[0].filename), "/usr/bin/app");
	ASSERT_STREQ(str(&pr, pr.mappings[0].build_id), "abcd");
	ASSERT_U64_EQ(pr.mappings[0].has_functions, 1);

	ASSERT_EQ((int)pr.n_functions, 3);
	ASSERT_STREQ(str(&pr, fn(&pr, 2)->name), "ns::inl()");
	ASSERT_STREQ(str(&pr, fn(&pr, 2)->system_name), "_ZN2ns3inlEv");
	/* Without a system name, the name is the one the binary has. */
	ASSERT_STREQ(str(&pr, fn(&pr, 1)->system_name), "main");
	ASSERT_STREQ(str(&pr, fn(&pr, 1)->filename), "app.c");
	/* The name was given with its length: the rest of the buffer is not in it. */
	ASSERT_STREQ(str(&pr, fn(&pr, 3)->name), "leaf");

	ASSERT_EQ((int)pr.n_locations, 2);
	ASSERT_U64_EQ(loc(&pr, 2)->address, 0x402000);
	ASSERT_U64_EQ(loc(&pr, 2)->mapping, 1);
	ASSERT_STREQ(line_name(&pr, 2, 0), "leaf");
	ASSERT_STREQ(line_name(&pr, 2, 1), "ns::inl()");

	ASSERT_EQ((int)pr.n_samples, 2);
	s = &pr.samples[0];
	ASSERT_EQ((int)s->n_locs, 2);
	ASSERT_U64_EQ(s->locs[0], 2);
	ASSERT_U64_EQ(s->locs[1], 1);
	ASSERT_EQ((int)s->n_values, 2);
	ASSERT_U64_EQ(s->values[0], 3);
	ASSERT_U64_EQ(s->values[1], 300);
	ASSERT_STREQ(label(&pr, s, "comm"), "app");
	ASSERT_EQ((int)s->n_labels, 2);
	ASSERT_STREQ(str(&pr, s->labels[1].key), "bytes");
	ASSERT_U64_EQ(s->labels[1].num, 300);
	ASSERT_STREQ(str(&pr, s->labels[1].unit), "B");
	ASSERT_EQ((int)pr.samples[1].n_labels, 0);
	free_profile(&pr);
	free(data);
	fg_pprof__free(p);
}

TEST(a_tiny_profile_byte_for_byte)
{
	struct fg_pprof *p = fg_pprof__new();
	uint64_t f, l;
	uint8_t *data;
	size_t len;
	/*
	 * sample_type {type: 1 "samples", unit: 2 "count"}; sample {location_id:
	 * [1] value: [300]}; location {id 1, line {function_id 1}}; function
	 * {id 1, name 3 "f", system_name 3}; the strings "", "samples",
	 * "count", "f".
	 */
	static const uint8_t want[] = {
		0x0a, 0x04, 0x08, 0x01, 0x10, 0x02,                   /* sample_type */
		0x12, 0x07, 0x0a, 0x01, 0x01, 0x12, 0x02, 0xac, 0x02, /* sample */
		0x22, 0x06, 0x08, 0x01, 0x22, 0x02, 0x08, 0x01,       /* location */
		0x2a, 0x06, 0x08, 0x01, 0x10, 0x03, 0x18, 0x03,       /* function */
		0x32, 0x00,                                           /* "" */
		0x32, 0x07, 's',  'a',  'm',  'p',  'l',  'e',  's',  /* "samples" */
		0x32, 0x05, 'c',  'o',  'u',  'n',  't',              /* "count" */
		0x32, 0x01, 'f',                                      /* "f" */
	};

	ASSERT_TRUE(p);
	ASSERT_OK(fg_pprof__sample_type(p, "samples", "count"));
	ASSERT_OK(fg_pprof__function(p, "f", 1, NULL, NULL, &f));
	ASSERT_OK(fg_pprof__location(p, 0, 0, &f, 1, &l));
	ASSERT_OK(fg_pprof__sample(p, &l, 1, (const int64_t[]){ 300 }, NULL, 0));
	ASSERT_OK(fg_pprof__encode(p, false, &data, &len));
	ASSERT_EQ((int)len, (int)sizeof(want));
	ASSERT_TRUE(memcmp(data, want, len) == 0);
	free(data);
	fg_pprof__free(p);
}

TEST(gzip_holds_the_same_bytes)
{
	struct fg_pprof *p = small_profile();
	uint8_t *raw, *gz, out[4096];
	size_t raw_len, gz_len;
	z_stream z = {};
	struct fg_pprof *q = small_profile();

	ASSERT_OK(fg_pprof__encode(p, false, &raw, &raw_len));
	ASSERT_OK(fg_pprof__encode(q, true, &gz, &gz_len));
	/* The gzip magic: what pprof and every store look for. */
	ASSERT_TRUE(gz_len > 18 && gz[0] == 0x1f && gz[1] == 0x8b);
	ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = gz;
	z.avail_in = (uInt)gz_len;
	z.next_out = out;
	z.avail_out = sizeof(out);
	ASSERT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
	ASSERT_EQ((int)z.total_out, (int)raw_len);
	ASSERT_TRUE(memcmp(out, raw, raw_len) == 0);
	inflateEnd(&z);
	free(raw);
	free(gz);
	fg_pprof__free(p);
	fg_pprof__free(q);
}

TEST(mapping_ranges_cover_their_addresses)
{
	struct fg_pprof *p = fg_pprof__new();
	struct fg_pprof_mapping m = { .filename = "/bin/x", .has_functions = true };
	uint64_t id, f, l;
	uint8_t *data;
	size_t len;
	struct profile pr;

	ASSERT_TRUE(p);
	ASSERT_OK(fg_pprof__sample_type(p, "samples", "count"));
	ASSERT_OK(fg_pprof__mapping(p, &m, &id));
	ASSERT_OK(fg_pprof__function(p, "f", 1, NULL, NULL, &f));
	/* Locations may come before the range is known: mappings are written last. */
	ASSERT_OK(fg_pprof__location(p, id, 0x2000, &f, 1, &l));
	ASSERT_OK(fg_pprof__mapping_cover(p, id, 0x2000));
	ASSERT_OK(fg_pprof__mapping_cover(p, id, 0x1000));
	ASSERT_OK(fg_pprof__mapping_cover(p, id, 0x3000));
	ASSERT_ERR(fg_pprof__mapping_cover(p, 2, 0x3000), -EINVAL);
	ASSERT_OK(fg_pprof__encode(p, false, &data, &len));
	read_profile(data, len, &pr);
	ASSERT_EQ((int)pr.n_mappings, 1);
	ASSERT_U64_EQ(pr.mappings[0].start, 0x1000);
	ASSERT_U64_EQ(pr.mappings[0].limit, 0x3001);
	/* address - start + offset is the address: offsets are what the addresses are. */
	ASSERT_U64_EQ(pr.mappings[0].offset, 0x1000);
	ASSERT_STREQ(str(&pr, pr.mappings[0].filename), "/bin/x");
	free_profile(&pr);
	free(data);
	fg_pprof__free(p);
}

TEST(bad_ids_and_shapes_are_refused)
{
	struct fg_pprof *p = fg_pprof__new();
	uint64_t f, l, bad = 7;
	uint8_t *data;
	size_t len;

	ASSERT_TRUE(p);
	/* Without a sample type there is no profile. */
	ASSERT_ERR(fg_pprof__encode(p, false, &data, &len), -EINVAL);
	for (int i = 0; i < FG_PPROF_MAX_VALUES; i++)
		ASSERT_OK(fg_pprof__sample_type(p, "samples", "count"));
	ASSERT_ERR(fg_pprof__sample_type(p, "more", "count"), -E2BIG);
	ASSERT_ERR(fg_pprof__default_type(p, "nothing"), -ENOENT);
	ASSERT_OK(fg_pprof__function(p, "f", 1, NULL, NULL, &f));
	ASSERT_ERR(fg_pprof__location(p, 0, 0, &bad, 1, &l), -EINVAL);
	ASSERT_ERR(fg_pprof__location(p, 3, 0, &f, 1, &l), -EINVAL);
	ASSERT_ERR(fg_pprof__location(p, 0, 0, &f, 0, &l), -EINVAL);
	ASSERT_OK(fg_pprof__location(p, 0, 0, &f, 1, &l));
	ASSERT_ERR(fg_pprof__sample(p, &bad, 1, (const int64_t[]){ 1, 1, 1, 1 }, NULL, 0), -EINVAL);
	ASSERT_U64_EQ(fg_pprof__n_samples(p), 0);
	/* A refused sample left nothing behind: the next one encodes alone. */
	ASSERT_OK(fg_pprof__sample(p, &l, 1, (const int64_t[]){ 1, 2, 3, 4 }, NULL, 0));
	ASSERT_OK(fg_pprof__encode(p, false, &data, &len));
	{
		struct profile pr;

		read_profile(data, len, &pr);
		ASSERT_EQ((int)pr.n_samples, 1);
		ASSERT_U64_EQ(pr.samples[0].values[3], 4);
		free_profile(&pr);
	}
	free(data);
	fg_pprof__free(p);
}

/* ---- a folded model as pprof ---- */

static void add(struct fg_folded *f, const char *stack, double count)
{
	const uint32_t *ids;
	size_t n;

	ASSERT_OK(fg_folded__intern_stack(f, stack, strlen(stack), &ids, &n));
	ASSERT_OK(fg_folded__add(f, ids, n, count));
}

static void model_profile(struct fg_folded *f, const struct fg_pprof_meta *meta, struct profile *pr)
{
	uint8_t *gz, *raw;
	size_t gz_len;
	uLongf raw_len = 1 << 20;
	z_stream z = {};

	ASSERT_OK(fg_pprof_from_model(f, meta, &gz, &gz_len));
	raw = malloc(raw_len);
	ASSERT_TRUE(raw);
	ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = gz;
	z.avail_in = (uInt)gz_len;
	z.next_out = raw;
	z.avail_out = (uInt)raw_len;
	ASSERT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
	read_profile(raw, z.total_out, pr);
	inflateEnd(&z);
	free(raw);
	free(gz);
}

/* The sample whose leaf is named leaf. */
static const struct sample *sample_with_leaf(const struct profile *pr, const char *leaf)
{
	for (size_t i = 0; i < pr->n_samples; i++)
		if (pr->samples[i].n_locs &&
		    strcmp(line_name(pr, pr->samples[i].locs[0], 0), leaf) == 0)
			return &pr->samples[i];
	ASSERT_TRUE(false);
	return NULL;
}

TEST(model_process_frames_become_labels)
{
	struct fg_folded *f = fg_folded__new();
	const char *comments[] = { "event: cpu-clock", NULL };
	struct fg_pprof_meta meta = { .values = FG_PPROF_SAMPLES,
				      .period_ns = 10000000,
				      .time_ns = 5,
				      .duration_ns = 7,
				      .roots = FG_PPROF_ROOTS_PROCESS,
				      .pid = true,
				      .comments = comments };
	struct profile pr;
	const struct sample *s;

	ASSERT_TRUE(f);
	add(f, "my-app-12;main;work;do_syscall_64_[k]", 3);
	add(f, "my-app-12;main;jitted_[j]", 2);
	add(f, "swapper-0;cpu_idle_[k]", 4);
	/* Not in the comm-pid form: all of it is comm. */
	add(f, "odd-name;main", 1);
	/* The window's samples of no process: one frame, no labels. */
	add(f, "[other processes]", 6);
	/* A sample without frames: its labels, and an "[unknown]" frame. */
	add(f, "lonely-7", 2);
	model_profile(f, &meta, &pr);

	ASSERT_EQ((int)pr.n_types, 2);
	ASSERT_STREQ(str(&pr, pr.types[1][0]), "cpu");
	ASSERT_U64_EQ(pr.period, 10000000);
	ASSERT_U64_EQ(pr.time, 5);
	ASSERT_U64_EQ(pr.duration, 7);
	ASSERT_STREQ(str(&pr, pr.comments[0]), "event: cpu-clock");
	ASSERT_EQ((int)pr.n_samples, 6);

	/* Leaf first, the kernel frame named without its suffix in the kernel's mapping. */
	s = sample_with_leaf(&pr, "do_syscall_64");
	ASSERT_EQ((int)s->n_locs, 3);
	ASSERT_STREQ(line_name(&pr, s->locs[1], 0), "work");
	ASSERT_STREQ(line_name(&pr, s->locs[2], 0), "main");
	ASSERT_STREQ(label(&pr, s, "comm"), "my-app");
	ASSERT_STREQ(label(&pr, s, "pid"), "12");
	ASSERT_TRUE(label(&pr, s, "thread_id") == NULL);
	ASSERT_U64_EQ(s->values[0], 3);
	ASSERT_U64_EQ(s->values[1], 30000000);
	ASSERT_TRUE(loc(&pr, s->locs[0])->mapping != 0);
	ASSERT_STREQ(str(&pr, pr.mappings[loc(&pr, s->locs[0])->mapping - 1].filename),
		     "[kernel.kallsyms]");
	ASSERT_U64_EQ(loc(&pr, s->locs[1])->mapping, 0);

	s = sample_with_leaf(&pr, "jitted");
	ASSERT_STREQ(str(&pr, pr.mappings[loc(&pr, s->locs[0])->mapping - 1].filename), "[jit]");
	/* One location per distinct frame: main is shared. */
	ASSERT_U64_EQ(s->locs[1], sample_with_leaf(&pr, "do_syscall_64")->locs[2]);

	s = sample_with_leaf(&pr, "cpu_idle");
	ASSERT_STREQ(label(&pr, s, "comm"), "swapper");
	ASSERT_STREQ(label(&pr, s, "pid"), "0");
	s = sample_with_leaf(&pr, "main");
	ASSERT_STREQ(label(&pr, s, "comm"), "odd-name");
	ASSERT_TRUE(label(&pr, s, "pid") == NULL);
	s = sample_with_leaf(&pr, "[other processes]");
	ASSERT_EQ((int)s->n_labels, 0);
	ASSERT_U64_EQ(s->values[0], 6);
	s = sample_with_leaf(&pr, "[unknown]");
	ASSERT_EQ((int)s->n_locs, 1);
	ASSERT_STREQ(label(&pr, s, "comm"), "lonely");
	ASSERT_STREQ(label(&pr, s, "pid"), "7");
	free_profile(&pr);
	fg_folded__free(f);
}

TEST(model_cgroup_thread_and_microseconds)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_pprof_meta meta = { .values = FG_PPROF_OFF_CPU,
				      .roots = FG_PPROF_ROOTS_CGROUP_PROCESS,
				      .pid = true,
				      .tid = true };
	struct profile pr;
	const struct sample *s;

	ASSERT_TRUE(f);
	add(f, "/system.slice/x.service;x-7/9;main;poll", 1500.4);
	/* Without frames: the cgroup is still the cgroup, the process the process. */
	add(f, "/system.slice/y.service;y-8/8", 3);
	model_profile(f, &meta, &pr);
	s = sample_with_leaf(&pr, "[unknown]");
	ASSERT_STREQ(label(&pr, s, "cgroup"), "/system.slice/y.service");
	ASSERT_STREQ(label(&pr, s, "comm"), "y");
	ASSERT_EQ((int)pr.n_types, 1);
	ASSERT_STREQ(str(&pr, pr.types[0][0]), "off_cpu");
	ASSERT_STREQ(str(&pr, pr.types[0][1]), "microseconds");
	s = sample_with_leaf(&pr, "poll");
	ASSERT_EQ((int)s->n_locs, 2);
	ASSERT_STREQ(label(&pr, s, "cgroup"), "/system.slice/x.service");
	ASSERT_STREQ(label(&pr, s, "comm"), "x");
	ASSERT_STREQ(label(&pr, s, "pid"), "7");
	ASSERT_STREQ(label(&pr, s, "thread_id"), "9");
	/* pprof's values are integers: rounded. */
	ASSERT_U64_EQ(s->values[0], 1500);
	free_profile(&pr);
	fg_folded__free(f);
}

TEST(model_without_roots_or_period)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_pprof_meta meta = { .values = FG_PPROF_SAMPLES };
	struct profile pr;
	const struct sample *s;

	ASSERT_TRUE(f);
	add(f, "prog-1;main", 2);
	model_profile(f, &meta, &pr);
	/* No period: counts alone, and every frame stays a frame. */
	ASSERT_EQ((int)pr.n_types, 1);
	s = sample_with_leaf(&pr, "main");
	ASSERT_EQ((int)s->n_locs, 2);
	ASSERT_STREQ(line_name(&pr, s->locs[1], 0), "prog-1");
	ASSERT_EQ((int)s->n_labels, 0);
	free_profile(&pr);
	fg_folded__free(f);
}

/* A locator for frames "#ADDR": a location at ADDR in one mapping, with two lines. */
static int locate_hex(void *ctx, struct fg_pprof *p, const struct fg_folded *model, uint32_t id,
		      uint64_t *ret)
{
	uint64_t *map = ctx, fns[2];
	const char *name = fg_folded__name(model, id);
	struct fg_pprof_mapping m = { .filename = "/bin/app", .has_functions = true };
	uint64_t addr;

	if (name[0] != '#')
		return -ENOENT;
	addr = strtoull(name + 1, NULL, 16);
	if (!*map)
		ASSERT_OK(fg_pprof__mapping(p, &m, map));
	ASSERT_OK(fg_pprof__mapping_cover(p, *map, addr));
	ASSERT_OK(fg_pprof__function(p, "inner", 5, NULL, NULL, &fns[0]));
	ASSERT_OK(fg_pprof__function(p, "outer", 5, NULL, NULL, &fns[1]));
	return fg_pprof__location(p, *map, addr, fns, 2, ret);
}

TEST(model_with_a_locator)
{
	struct fg_folded *f = fg_folded__new();
	uint64_t map = 0;
	struct fg_pprof_meta meta = { .values = FG_PPROF_SAMPLES,
				      .roots = FG_PPROF_ROOTS_PROCESS,
				      .pid = true,
				      .locate = locate_hex,
				      .locate_ctx = &map };
	struct profile pr;
	const struct sample *s;

	ASSERT_TRUE(f);
	add(f, "app-3;#1100;#1200", 4);
	/* A frame that is only a name: the default, a function of that name. */
	add(f, "[other processes]", 1);
	model_profile(f, &meta, &pr);
	s = sample_with_leaf(&pr, "inner");
	ASSERT_EQ((int)s->n_locs, 2);
	/* Leaf first: the location of #1200, its lines innermost first. */
	ASSERT_U64_EQ(loc(&pr, s->locs[0])->address, 0x1200);
	ASSERT_U64_EQ(loc(&pr, s->locs[1])->address, 0x1100);
	ASSERT_STREQ(line_name(&pr, s->locs[0], 1), "outer");
	ASSERT_STREQ(label(&pr, s, "pid"), "3");
	ASSERT_EQ((int)pr.n_mappings, 1);
	ASSERT_U64_EQ(pr.mappings[0].start, 0x1100);
	ASSERT_U64_EQ(pr.mappings[0].limit, 0x1201);
	s = sample_with_leaf(&pr, "[other processes]");
	ASSERT_U64_EQ(loc(&pr, s->locs[0])->mapping, 0);
	free_profile(&pr);
	fg_folded__free(f);
}

TEST(model_differential_is_refused)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_pprof_meta meta = { .values = FG_PPROF_SAMPLES };
	uint8_t *data;
	size_t len;

	ASSERT_TRUE(f);
	ASSERT_OK(fg_folded__add_line(f, "a;b 1 2", 7));
	ASSERT_ERR(fg_pprof_from_model(f, &meta, &data, &len), -EINVAL);
	fg_folded__free(f);
}
