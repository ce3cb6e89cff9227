/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What fgctl heatmap's sources share (cli/fgctl-heatmap.c): the output
 * formats and the writer of a timed profile in one of them.
 */

#include <stdbool.h>

#include "profile/timed.h"
#include "render/heatmap-html.h"

enum fgctl_heatmap_format {
	FGCTL_HEATMAP_HTML,
	FGCTL_HEATMAP_JSON,
	FGCTL_HEATMAP_SVG,
	FGCTL_HEATMAP_TIMED, /* the profile itself, for --from timed later */
};

/* The format an output's extension names: .html, .json, .svg, .timed. 0 or -EINVAL. */
int fgctl_heatmap_format_for_path(const char *path, enum fgctl_heatmap_format *ret);
/* -f's argument; says what is wrong on stderr. 0 or -EINVAL. */
int fgctl_heatmap_format_arg(const char *arg, enum fgctl_heatmap_format *ret);

/*
 * Writes t (sorted here) to path ("-": stdout) in format to, drawn as opts
 * says, with a one-line summary on stderr unless quiet. Returns fgctl's exit
 * status.
 */
int fgctl_heatmap_write(struct fg_timed *t, const struct fg_heatmap_html_opts *opts,
			enum fgctl_heatmap_format to, const char *path, bool quiet);
