#ifndef TLBLAB_FUZZ_SUBJECT_H
#define TLBLAB_FUZZ_SUBJECT_H

/*
 * What patch.h promises of a subject, whatever the text was: at most
 * PATCH_SUBJECT_MAX bytes of valid UTF-8 on one line, without control
 * characters or NULs. Checked byte by byte here, apart from the
 * strbuf code that made it.
 */
#include <stddef.h>
#include <string.h>

#include "patch.h"

static inline int fuzz_subject_valid(const char *subject, size_t len)
{
	const unsigned char *s = (const unsigned char *)subject;
	size_t i = 0;

	if (len > PATCH_SUBJECT_MAX || strlen(subject) != len)
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

#endif
