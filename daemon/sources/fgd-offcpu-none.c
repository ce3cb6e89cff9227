/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fgd-offcpu.h in a build without BPF (meson -Dbpf=disabled, or nothing to build it with). */
#include <errno.h>

#include "sources/fgd-offcpu.h"

#define WHY \
	"this fgd was built without BPF (clang, bpftool, libbpf-dev or the build machine's BTF were missing)"

int fg_offcpu_probe(const char **ret_why)
{
	*ret_why = WHY;
	return -EOPNOTSUPP;
}

int fg_offcpu__new(const struct fg_offcpu_opts *opts, struct fg_offcpu **ret, const char **ret_why)
{
	*ret_why = WHY;
	return -EOPNOTSUPP;
}

struct fg_offcpu *fg_offcpu__free(struct fg_offcpu *o)
{
	return NULL;
}

int fg_offcpu__fd(const struct fg_offcpu *o)
{
	return -EBADF;
}

int fg_offcpu__drain(struct fg_offcpu *o, fg_offcpu_fn fn, void *ctx, uint64_t deadline)
{
	return -EOPNOTSUPP;
}

bool fg_offcpu__behind(const struct fg_offcpu *o)
{
	return false;
}

void fg_offcpu__stop(struct fg_offcpu *o)
{
}

uint64_t fg_offcpu__abandon(struct fg_offcpu *o)
{
	return 0;
}

int fg_offcpu__flush(struct fg_offcpu *o, fg_offcpu_fn fn, void *ctx)
{
	return 0;
}

void fg_offcpu__stats(const struct fg_offcpu *o, struct fg_offcpu_stats *ret)
{
	*ret = (struct fg_offcpu_stats){};
}

size_t fg_offcpu__bytes(const struct fg_offcpu *o)
{
	return 0;
}

bool fg_offcpu__copies_direct(const struct fg_offcpu *o)
{
	return false;
}

bool fg_offcpu__away(const struct fg_offcpu *o, pid_t tid)
{
	return false;
}

size_t fg_offcpu__ring_bytes(const struct fg_offcpu *o)
{
	return 0;
}
