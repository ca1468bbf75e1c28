/* Runs compare_sides on a JSON document from stdin, for tests.
 * stdin: {"base": DOC, "patched": DOC, "base_side": S|null, "patched_side": S|null}
 * stdout: the comparison (one line). */
#include <stdio.h>
#include <jansson.h>
#include "compare.h"
#include "jsonget.h"

int main(void)
{
	struct strbuf err = STRBUF_INIT;
	json_error_t jerr;
	json_t *in = json_loadf(stdin, 0, &jerr), *out;

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
