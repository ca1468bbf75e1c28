#ifndef TLBLAB_FUZZ_BODY_H
#define TLBLAB_FUZZ_BODY_H

/*
 * What every parser of an API request body promises (api.h, submit.h),
 * whatever bytes it is given: a request it takes (rc 0) comes with its
 * body; a refusal says why in err and keeps no body. The harness checks
 * the fields of a request taken itself, then hands the rest here.
 */
#include <jansson.h>
#include <stdlib.h>

#include "strbuf.h"

/* Aborts when the parser that returned rc broke that promise; frees body
 * and err. */
static inline void fuzz_body_kept(int rc, json_t *body, struct strbuf *err)
{
	if (rc == 0 ? !body : !err->len || body)
		abort();
	json_decref(body);
	strbuf_release(err);
}

#endif
