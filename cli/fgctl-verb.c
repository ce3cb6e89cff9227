/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "fgctl-client.h"
#include "fgctl-output.h"
#include "fgctl-verb.h"
#include "fgctl.h"

const char fgctl_help_socket[] =
	"  -s, --socket PATH        fgd's socket (default $FGD_SOCKET or " FG_DEFAULT_SOCKET ")\n";
const char fgctl_help_socket_short[] = "  -s, --socket PATH        fgd's socket\n";

void fgctl_getopt_reset(void)
{
	optind = 0;
}

static int common_option(struct fgctl_common *co, int c, const char *arg, FILE *err)
{
	switch (c) {
	case 's':
		co->socket = arg;
		return 1;
	case 'o':
		co->output = arg;
		return 1;
	case 'f':
		if (fgctl_format_arg(arg, &co->format, err) != FGCTL_EXIT_OK)
			return -1;
		co->format_given = true;
		return 1;
	case 'q':
		co->quiet = true;
		return 1;
	case FGCTL_OPT_JSON:
		co->json = true;
		return 1;
	case 'h':
		co->help = true;
		return 1;
	}
	fprintf(err, "Try 'fgctl %s --help'.\n", co->verb);
	return -1;
}

int fgctl_parse_options(const struct fgctl_ctx *ctx, int argc, char **argv, const char *shorts,
			const struct option *options, fgctl_option_fn option, void *args,
			struct fgctl_common *co, FILE *err)
{
	int c, r;

	*co = (struct fgctl_common){ .verb = argv[0], .socket = ctx->socket };
	fgctl_getopt_reset();
	while ((c = getopt_long(argc, argv, shorts, options, NULL)) >= 0) {
		r = option ? option(args, c, optarg, err) : 0;
		if (r == 0)
			r = common_option(co, c, optarg, err);
		if (r < 0)
			return FGCTL_EXIT_USAGE;
		if (co->help)
			return FGCTL_EXIT_OK;
	}
	co->operands = argv + optind;
	co->n_operands = argc - optind;
	return FGCTL_EXIT_OK;
}

int fgctl_no_operands(const struct fgctl_common *co, FILE *err)
{
	if (co->n_operands == 0)
		return FGCTL_EXIT_OK;
	fprintf(err, "fgctl: unexpected argument '%s'\n", co->operands[0]);
	return FGCTL_EXIT_USAGE;
}

int fgctl_check_json_output(const struct fgctl_common *co, const char *output, FILE *err)
{
	if (!co->json || strcmp(output, "-") != 0)
		return FGCTL_EXIT_OK;
	fprintf(err, "fgctl: --json writes the summary to stdout: give -o FILE for the profile\n");
	return FGCTL_EXIT_USAGE;
}
