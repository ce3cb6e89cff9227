/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The verbs that query fgd's always-on window: snapshot and top. socket is
 * the path to connect to, borrowed for the call.
 */
int fgctl_verb_snapshot(int argc, char **argv, const char *socket);
int fgctl_verb_top(int argc, char **argv, const char *socket);
