/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgctl's rendering verbs: render (folded stacks or perf script text in, a
 * flame graph or folded stacks out) and diff (two profiles in, a
 * differential flame graph out), which need no daemon; except diff
 * --baseline, which fetches both profiles from fgd's always-on sampling
 * through socket (borrowed for the call).
 */

int fgctl_verb_render(int argc, char **argv);
int fgctl_verb_diff(int argc, char **argv, const char *socket);
