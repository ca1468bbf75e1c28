/*
 * Patch and mbox intake (daemon/intake/patch.h) on any bytes: the subject found is
 * at most PATCH_SUBJECT_MAX bytes of valid UTF-8 on one line without
 * control characters, whatever the text was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "patch.h"
#include "banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int valid_subject(const unsigned char *s, size_t len)
{
	size_t i = 0;

	if (len > PATCH_SUBJECT_MAX || strlen((const char *)s) != len)
		return 0;
	while (i < len) {
		unsigned char c = s[i];
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		size_t k;

		if (!n || i + n > len || c < 0x20 || c == 0x7f)
			return 0;
		for (k = 1; k < n; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
		i += n;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf subject = STRBUF_INIT;
	enum patch_subject_kind k;

	strbuf_addstr(&subject, "previous");
	k = patch_subject((const char *)data, size, &subject);
	if (k == PATCH_SUBJECT_NONE ? subject.len != 0 : !valid_subject((const unsigned char *)subject.buf, subject.len))
		abort();
	strbuf_release(&subject);
	return 0;
}
