#ifndef TLBLAB_SPEC_H
#define TLBLAB_SPEC_H

#include <jansson.h>

#include "strbuf.h"
#include "workloads/workload.h"

/*
 * A run spec: one workload, its parameters (any of mode, workers, size,
 * rounds, vma, request_size, response_size and grid may be a list, and the
 * lists expand to a matrix of cases), how many iterations of what duration,
 * which monitors, and optionally a neighbour workload that runs beside every
 * case on the other CPUs. The JSON form is what the daemon sends on stdin;
 * the command line is turned into the same JSON, so there is one validator.
 * Errors name the field: "workers[1]: must be an integer from 1 to 1024".
 */

#define SPEC_MAX_CASES 256

struct spec_case {
	struct wl_params p;
	json_t *params;		/* the case's parameters as given, for output */
};

struct spec {
	struct spec_case *cases;
	size_t ncases;
	int has_neighbour;
	struct wl_params neighbour;
	json_t *neighbour_params;
	int iterations, warmup;
	double interval;
	unsigned monitors;	/* bits from monitor_bit() */
	int profile;
	char id[129];
	char **argv;		/* exec's command, shared by the cases */
};

/* Parses and validates; on error returns -1 with err naming the field and
 * leaves s released. */
int spec_from_json(struct spec *s, json_t *root, struct strbuf *err);
int spec_parse(struct spec *s, const char *text, size_t len, struct strbuf *err);
void spec_release(struct spec *s);

const char *wl_mode_name(enum wl_mode m);

#endif
