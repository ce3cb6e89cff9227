/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bytes become the data area of a BPF ring buffer, mapped twice in a row
 * as the kernel maps it, between a consumer and a producer position the
 * first 16 bytes choose (so that records wrap anywhere, and the producer may
 * be anywhere, even behind or too far ahead); the fuzzer walks it the way
 * the off-CPU source does, touching every byte of every sample it is given.
 */
#include <stdlib.h>
#include <string.h>

#include "perf/bpfring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define DATA 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *mem;
	uint64_t consumer, producer, sum = 0;
	struct fg_bpfring ring;

	if (size < 16 || size > 16 + DATA)
		return 0;
	if (!mem && !(mem = aligned_alloc(8, 2 * DATA)))
		abort();
	memcpy(&consumer, data, 8);
	memcpy(&producer, data + 8, 8);
	/* Mostly a producer ahead by what the bytes hold; the rest as they come. */
	if (producer & 1)
		producer = consumer + (size - 16);
	memset(mem, 0, 2 * DATA);
	for (size_t i = 0; i < size - 16; i++)
		mem[(consumer + i) & (DATA - 1)] = mem[((consumer + i) & (DATA - 1)) + DATA] =
			data[16 + i];
	if (fg_bpfring_init(&ring, &consumer, &producer, mem, DATA) < 0)
		abort();
	for (int round = 0; round < 2; round++) {
		const void *sample;
		uint32_t len;

		fg_bpfring_read_init(&ring);
		while (fg_bpfring_read(&ring, &sample, &len) > 0)
			for (uint32_t i = 0; i < len; i++)
				sum += ((const uint8_t *)sample)[i];
		fg_bpfring_read_done(&ring);
	}
	/* Every sample lay inside the two copies of the data area (ASan checks the reads). */
	return sum == UINT64_MAX;
}
