/* Runs compare_sides on a JSON document from stdin, for tests.
 * stdin: {"base": DOC, "patched": DOC, "base_side": S|null, "patched_side": S|null}
 * stdout: the comparison (one line).
 * With --classes: the classes this build registered, as the Markdown table
 * docs/statistics.md shows (compare_class_table), and nothing read. */
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "compare.h"
#include "compare_class.h"
#include "jsonget.h"

int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	json_error_t jerr;
	json_t *in, *out;

	if (argc > 1 && !strcmp(argv[1], "--classes")) {
		compare_class_table(&err);
		fputs(err.buf, stdout);
		strbuf_release(&err);
		return 0;
	}
	in = json_loadf(stdin, 0, &jerr);

	if (!in) {
		fprintf(stderr, "driver: %s\n", jerr.text);
		return 2;
	}
	out = compare_sides(json_object_get(in, "base"),
			    jsonget_str(in, "base_side"),
			    json_object_get(in, "patched"),
			    jsonget_str(in, "patched_side"), NULL, &err);
	if (!out) {
		fprintf(stderr, "driver: %s\n", err.buf);
		return 1;
	}
	json_dumpf(out, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(out);
	json_decref(in);
	strbuf_release(&err);
	return 0;
}
