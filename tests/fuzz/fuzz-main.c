/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stand-in for libFuzzer's main: feeds every file named on the command line
 * (directories are walked one level deep) to LLVMFuzzerTestOneInput, so the
 * seed corpus and every past crash run as a regression test in every build.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "re");
	uint8_t *buf = NULL;
	size_t size = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (size == cap) {
			uint8_t *p = realloc(buf, cap = cap ? cap * 2 : 4096);

			if (!p) {
				fclose(f);
				free(buf);
				return -1;
			}
			buf = p;
		}
		n = fread(buf + size, 1, cap - size, f);
		size += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, size);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned ran = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct dirent *de;
		DIR *d;

		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) < 0)
				return 1;
			ran++;
			continue;
		}
		d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		while ((de = readdir(d))) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			if (run_file(path) < 0) {
				closedir(d);
				return 1;
			}
			ran++;
		}
		closedir(d);
	}
	printf("%u inputs ran without a crash\n", ran);
	return ran ? 0 : 77;
}
