/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/budget.h"
#include "base/hash.h"
#include "base/macro.h"
#include "fgd-clock.h"
#include "fgd-loader.h"
#include "perf/kallsyms.h"
#include "proto/status-types.h"
#include "symbols/fgd-kernelsyms.h"

/* Kernel reloads forced by unresolved addresses are at most this frequent. */
#define KALLSYMS_MIN_INTERVAL_NS (10ULL * 1000000000ULL)

struct fg_kernel_syms {
	struct fg_kallsyms *kallsyms; /* owned */
	uint64_t modules_hash;
	uint64_t kallsyms_loaded_at; /* CLOCK_MONOTONIC ns of the last read started; 0 = never */
	bool kallsyms_loading;       /* a read is on the loader's thread */
	int kallsyms_error;          /* of the last read */
	uint64_t kernel_reloads;
	/* the kernel's build-id in hex ("": unknown), once kernel_build_id_read */
	char kernel_build_id[2 * 64 + 1];
	bool kernel_build_id_read;
	struct fg_loader *loader; /* borrowed; NULL: reads happen in the caller */
	struct fg_budget *budget; /* borrowed; NULL: none */
	uint64_t kallsyms_charged;
};

int fg_kernel_syms__new(struct fg_kernel_syms **ret)
{
	struct fg_kernel_syms *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	*ret = k;
	return 0;
}

struct fg_kernel_syms *fg_kernel_syms__free(struct fg_kernel_syms *k)
{
	if (!k)
		return NULL;
	fg_kernel_syms__set_budget(k, NULL);
	fg_kallsyms__free(k->kallsyms);
	free(k);
	return NULL;
}

void fg_kernel_syms__set_loader(struct fg_kernel_syms *k, struct fg_loader *loader)
{
	k->loader = loader;
}

static uint64_t kallsyms_bytes(const struct fg_kernel_syms *k)
{
	return k->kallsyms ? fg_kallsyms__bytes(k->kallsyms) : 0;
}

void fg_kernel_syms__set_budget(struct fg_kernel_syms *k, struct fg_budget *budget)
{
	fg_budget__account(k->budget, FG_BUDGET_SYMBOLS, &k->kallsyms_charged, 0);
	k->budget = budget;
	fg_budget__account(budget, FG_BUDGET_SYMBOLS, &k->kallsyms_charged, kallsyms_bytes(k));
}

/* What the loader built goes back to it to be freed (see fg_loader__dispose()). */
static void dispose_kallsyms(void *p)
{
	fg_kallsyms__free(p);
}

const char *fg_kernel_syms__name(const struct fg_kernel_syms *k, uint64_t addr)
{
	int64_t idx;

	if (!k->kallsyms)
		return NULL;
	idx = fg_kallsyms__lookup(k->kallsyms, addr);
	return idx >= 0 ? fg_kallsyms__name(k->kallsyms, (size_t)idx) : NULL;
}

/*
 * Reads a whole /proc or /sys file (they give no size); *ret is caller-freed.
 * The bound is far above any real one (kallsyms is some 10 MiB).
 */
static int read_proc_file(const char *path, char **ret, size_t *ret_len)
{
	return fg_read_file(path, 1ULL << 30, ret, ret_len);
}

const char *fg_kernel_syms__build_id(struct fg_kernel_syms *k)
{
	_cleanup_free_ char *notes = NULL;
	const uint8_t *id;
	size_t len, id_len;

	if (k->kernel_build_id_read)
		return k->kernel_build_id;
	k->kernel_build_id_read = true;
	if (read_proc_file("/sys/kernel/notes", &notes, &len) < 0 ||
	    fg_kernel_build_id((const uint8_t *)notes, len, &id, &id_len) < 0)
		return k->kernel_build_id;
	for (size_t i = 0; i < id_len; i++)
		snprintf(k->kernel_build_id + 2 * i, 3, "%02x", id[i]);
	return k->kernel_build_id;
}

static uint64_t modules_hash(void)
{
	_cleanup_free_ char *text = NULL;
	size_t len;

	/* Kernels without module support have no /proc/modules: hash as empty. */
	if (read_proc_file("/proc/modules", &text, &len) < 0)
		return 0;
	return fg_hash_bytes(text, len, 1);
}

/* One read of /proc/kallsyms, parsed on the loader's thread (about 100 ms for 120,000 lines). */
struct kallsyms_load {
	struct fg_loader_job job;
	struct fg_kernel_syms *ks; /* borrowed: only done() touches it; the loader is freed first */
	struct fg_kallsyms *k;     /* owned until installed */
	int error;
};

static void kallsyms_work(struct fg_loader_job *j)
{
	struct kallsyms_load *job = (struct kallsyms_load *)j;
	_cleanup_free_ char *text = NULL;
	size_t len;

	job->error = read_proc_file("/proc/kallsyms", &text, &len);
	if (job->error >= 0)
		job->error = fg_kallsyms__parse(text, len, &job->k);
}

static void kallsyms_done(struct fg_loader_job *j, bool cancelled)
{
	struct kallsyms_load *job = (struct kallsyms_load *)j;
	struct fg_kernel_syms *k = job->ks;

	k->kallsyms_loading = false;
	k->kallsyms_error = cancelled ? -ECANCELED : job->error;
	if (!cancelled && job->error >= 0) {
		fg_loader__dispose(k->loader, dispose_kallsyms, k->kallsyms);
		k->kallsyms = TAKE_PTR(job->k);
		fg_budget__account(k->budget, FG_BUDGET_SYMBOLS, &k->kallsyms_charged,
				   kallsyms_bytes(k));
		k->kernel_reloads++;
	}
	free(job);
}

int fg_kernel_syms__refresh(struct fg_kernel_syms *k, bool force)
{
	struct kallsyms_load *job;
	uint64_t now = fgd_now(), mh;

	if (k->kallsyms_loading)
		return -EINPROGRESS;
	mh = modules_hash();
	if (k->kallsyms && mh == k->modules_hash &&
	    (!force || now - k->kallsyms_loaded_at < KALLSYMS_MIN_INTERVAL_NS))
		return 0;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->ks = k;
	/* Tried now, whatever comes of it: a failing read is not retried on every sample. */
	k->modules_hash = mh;
	k->kallsyms_loaded_at = now;
	k->kallsyms_loading = true;
	fg_loader__submit(k->loader, &job->job, kallsyms_work, kallsyms_done);
	if (k->kallsyms_loading)
		return -EINPROGRESS;
	return k->kallsyms_error < 0 ? k->kallsyms_error : 1;
}

void fg_kernel_syms__stats(const struct fg_kernel_syms *k, struct fg_status_symbols *ret)
{
	ret->kernel_symbols = k->kallsyms ? fg_kallsyms__count(k->kallsyms) : 0;
	ret->kernel_reloads = k->kernel_reloads;
	ret->kernel_restricted = k->kallsyms ? fg_kallsyms__restricted(k->kallsyms) : false;
	ret->symbols_bytes += k->kallsyms_charged;
}
