/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <unistd.h>

#include "base/macro.h"
#include "config.h"
#include "consumers/fgd-alwayson.h"
#include "server/fgd-status.h"

int fgd_status_fill(const struct fgd_config *conf, struct fgd_engine *e,
		    const struct fgd_loop *loop, struct fg_status *ret)
{
	_cleanup_(fg_status_done) struct fg_status st = {
		.version = FG_VERSION,
		.pid = (uint32_t)getpid(),
		.default_frequency = conf->default_frequency,
		.ring_pages = conf->ring_pages,
		.call_graph = fg_call_graph_name(conf->call_graph),
		.stack_dump = conf->stack_dump,
	};
	struct fgd_alwayson *alwayson = fgd_engine__alwayson(e);
	struct fgd_alwayson *offcpu_on = fgd_engine__offcpu_alwayson(e);
	int r;

	/* Each component fills its own part, under the reply's names. */
	r = fgd_engine__status(e, &st);
	if (r < 0)
		return r;
	st.has_loop = true;
	fgd_loop__status(loop, &st.loop);
	/* Off, always_on says only that (enabled is false); so does off_cpu of its always-on part. */
	if (alwayson) {
		r = fgd_alwayson__status(alwayson, &st.always_on);
		if (r < 0)
			return r;
	}
	if (offcpu_on) {
		r = fgd_alwayson__status_off_cpu(offcpu_on, &st.off_cpu);
		if (r < 0)
			return r;
	}
	*ret = st;
	st = (struct fg_status){};
	return 0;
}
