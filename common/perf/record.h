/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Decoder for perf_event ring records. It reads fields in place without
 * copying and bounds-checks every one against the record's own size: a
 * truncated or inconsistent record yields -EFAULT (field past the end) or
 * -EINVAL (impossible value), never a read outside the record.
 *
 * Pointers in a decoded record (callchain, strings, stack dump) are borrowed
 * from the record and valid as long as it is (see ring.h).
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the decoder must know about the event that produced a record. */
struct fg_record_fmt {
	uint64_t sample_type;      /* attr.sample_type */
	uint64_t sample_regs_user; /* attr.sample_regs_user */
	bool sample_id_all;        /* attr.sample_id_all */
};

/* The sample_id trailer of non-sample records (sample_id_all), and the same fields of samples. */
struct fg_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint32_t cpu;
};

struct fg_sample {
	struct fg_sample_id sid;
	uint64_t ip;
	uint64_t period;
	uint64_t nr;          /* callchain entries, PERF_CONTEXT_* markers included */
	const uint64_t *ips;  /* borrowed; leaf first */
	uint64_t regs_abi;    /* PERF_SAMPLE_REGS_ABI_*; 0 = no user regs */
	const uint64_t *regs; /* borrowed; one per bit of sample_regs_user */
	uint32_t n_regs;
	const uint8_t *stack; /* borrowed; user stack dump */
	uint64_t stack_size;  /* valid bytes of the dump (dyn_size) */
};

struct fg_mmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	bool has_build_id;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint8_t build_id_size;
	const uint8_t *build_id; /* borrowed; build_id_size bytes */
	uint32_t prot, flags;
	const char *filename; /* borrowed; NUL-terminated */
};

struct fg_comm {
	uint32_t pid, tid;
	bool exec;        /* PERF_RECORD_MISC_COMM_EXEC: the task called execve */
	const char *comm; /* borrowed; NUL-terminated */
};

/* PERF_RECORD_FORK and PERF_RECORD_EXIT */
struct fg_task {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct fg_record {
	uint32_t type; /* PERF_RECORD_* */
	uint16_t misc;
	struct fg_sample_id sid; /* trailer, when sample_id_all (and always for samples) */
	union {
		struct fg_sample sample; /* PERF_RECORD_SAMPLE */
		struct fg_mmap2 mmap2;   /* PERF_RECORD_MMAP2 */
		struct fg_comm comm;     /* PERF_RECORD_COMM */
		struct fg_task task;     /* PERF_RECORD_FORK, PERF_RECORD_EXIT */
		uint64_t lost;           /* PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES */
		uint64_t throttle_time;  /* PERF_RECORD_THROTTLE, PERF_RECORD_UNTHROTTLE */
	};
};

/*
 * Decodes h (which must be 8-byte aligned) for an event described by fmt.
 * Record types fgd does not use decode to just type, misc and the trailer.
 * Returns 0, -EFAULT for a field past the end of the record, -EINVAL for an
 * impossible value or a sample_type this decoder does not support.
 */
int fg_record_parse(const struct perf_event_header *h, const struct fg_record_fmt *fmt,
		    struct fg_record *ret);

/* Sample types the decoder understands; anything else makes it refuse. */
#define FG_SAMPLE_TYPES_SUPPORTED                                                               \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |         \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |          \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | \
	 PERF_SAMPLE_STACK_USER)
