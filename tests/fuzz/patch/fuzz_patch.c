/*
 * Patch and mbox intake (daemon/intake/patch.h) on any bytes: the subject found is
 * at most PATCH_SUBJECT_MAX bytes of valid UTF-8 on one line without
 * control characters, whatever the text was. Inputs go up to 1 MiB, a
 * job body's size (lab.max_body): the reading must stay linear there
 * (a header of RFC 2047 openings without an end once took minutes).
 */
#include <stdint.h>
#include <stdlib.h>

#include "../fuzz_subject.h"
#include "patch.h"
#include "banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf subject = STRBUF_INIT;
	enum patch_subject_kind k;

	strbuf_addstr(&subject, "previous");
	k = patch_subject((const char *)data, size, &subject);
	if (k == PATCH_SUBJECT_NONE ? subject.len != 0 : !fuzz_subject_valid(subject.buf, subject.len))
		abort();
	strbuf_release(&subject);
	return 0;
}
