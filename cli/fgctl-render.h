/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgctl's offline verbs, which need no daemon: render (folded stacks or
 * perf script text in, a flame graph or folded stacks out) and diff (two
 * profiles in, a differential flame graph out).
 */

int fgctl_verb_render(int argc, char **argv);
int fgctl_verb_diff(int argc, char **argv);
