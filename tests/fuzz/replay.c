/*
 * The fuzzers' corpora as an ordinary test: built with the normal compiler
 * in place of libFuzzer's main, it feeds every file of each directory given
 * to the harness's LLVMFuzzerTestOneInput, once, and prints
 * "replayed N inputs". A crash, a sanitizer report (make check) or an
 * unreadable file fails it.
 * usage: fuzz-NAME DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	long n = 0;
	int i;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		char **names = NULL;
		size_t nnames = 0, k;

		if (!d) {
			fprintf(stderr, "%s: cannot open\n", argv[i]);
			return 1;
		}
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			names = realloc(names, (nnames + 1) * sizeof(*names));
			if (!names || !(names[nnames++] = strdup(e->d_name)))
				abort();
		}
		closedir(d);
		qsort(names, nnames, sizeof(*names), by_name);
		for (k = 0; k < nnames; k++) {
			struct strbuf path = STRBUF_INIT, data = STRBUF_INIT;

			strbuf_addf(&path, "%s/%s", argv[i], names[k]);
			if (strbuf_read_file(&data, path.buf, 1 << 20) < 0) {
				fprintf(stderr, "%s: cannot read\n", path.buf);
				return 1;
			}
			LLVMFuzzerTestOneInput((const uint8_t *)data.buf, data.len);
			n++;
			strbuf_release(&path);
			strbuf_release(&data);
			free(names[k]);
		}
		free(names);
	}
	printf("replayed %ld inputs\n", n);
	return 0;
}
