/*
 * The reader of the QEMU instruction plugin's file (daemon/stages/insn.h)
 * on any bytes. QEMU writes the file as the guest runs, the kernel under
 * test decides when, and it may end mid-line when QEMU dies. The run
 * stage counts the markers before a spec, then reads the windows after
 * them and makes each one's rows; here the windows after none, half and
 * all of the markers, each made into rows. Whatever the file holds:
 *  - a refusal says why;
 *  - the windows are at most half the markers read, and their rows per
 *    operation are never below 0 (a count that went backwards is refused);
 *  - no operations in a window is an error, not a division by zero.
 * The file is a C string to the reader (run.c reads it into a strbuf), so
 * the input ends at its first NUL.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "insn.h"
#include "util.h"
#include "banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void rows_of(const struct insn_window *w)
{
	json_t *metrics = json_object(), *info = json_object(), *unavailable = json_object(), *v;
	struct strbuf err = STRBUF_INIT;
	const char *key;

	if (insn_metrics(w, 0, "wl", INSN_ALL_VCPUS, 0, metrics, info, unavailable, &err) == 0 || !err.len)
		abort();	/* no operations: nothing per operation */
	strbuf_reset(&err);
	if (insn_metrics(w, 3, "wl", INSN_ALL_VCPUS, 0, metrics, info, unavailable, &err) < 0)
		abort();
	if (json_object_size(metrics) + json_object_size(unavailable) != INSN_COLS)
		abort();
	json_object_foreach(metrics, key, v)
		if (!(json_real_value(v) >= 0) || !json_object_get(info, key))
			abort();
	json_decref(metrics);
	json_decref(info);
	json_decref(unavailable);
	strbuf_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size + 1);
	struct strbuf err = STRBUF_INIT;
	size_t markers, skips[3], i, k;

	memcpy(text, data, size);
	text[size] = '\0';
	if (insn_count_markers(text, &markers, &err) < 0) {
		if (!err.len)
			abort();
		goto out;
	}
	skips[0] = 0, skips[1] = markers / 2, skips[2] = markers;
	for (i = 0; i < 3; i++) {
		struct insn_window *w = NULL;
		size_t n = 0;

		strbuf_reset(&err);
		if (insn_windows(text, skips[i], &w, &n, &err) < 0) {
			if (!err.len || w)
				abort();
			continue;
		}
		if (n > (markers - skips[i]) / 2)
			abort();
		for (k = 0; k < n; k++)
			rows_of(&w[k]);
		free(w);
	}
out:
	strbuf_release(&err);
	free(text);
	return 0;
}
