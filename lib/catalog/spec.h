#ifndef TLBLAB_SPEC_H
#define TLBLAB_SPEC_H

#include <jansson.h>
#include <stdint.h>

#include "strbuf.h"
#include "workload_catalog.h"

/*
 * A run spec: one workload, its parameters (any of mode, workers, size,
 * rounds, vma, request_size, response_size and grid may be a list, and the
 * lists expand to a matrix of cases), how many iterations of what duration, which
 * monitors, and optionally a neighbour workload that runs beside every case
 * on the other CPUs. The JSON form is what the daemon sends on stdin; the
 * command line is turned into the same JSON, so there is one validator
 * (the daemon runs it too, on every suite, when it loads its configuration).
 * It lives in the catalog (lib/catalog/) with the tables it reads -- the
 * workloads and their parameters (workload_catalog.h), the monitors
 * (monitor_catalog.h) -- so both binaries link it without the code that
 * runs a workload or reads the kernel.
 *
 * Errors start with the field's path and ": " -- "workers", "workers[1]"
 * (element 1 of a list), "neighbour.size" -- so a caller holding the spec's
 * source can point at it: "workers[1]: must be an integer from 1 to 1024".
 * The messages "unknown field" and "not a parameter of W" are about the key;
 * every other message is about the value. A field that is missing is named
 * ("command: missing ...") and is found in none of the spec's keys.
 */

#define SPEC_MAX_CASES 256

struct spec_case {
	struct wl_params p;
	json_t *params;		/* the case's parameters as given (units as plain
				 * numbers), for output */
};

struct spec {
	struct spec_case *cases;
	size_t ncases;
	int has_neighbour;
	struct wl_params neighbour;
	json_t *neighbour_params;
	int iterations, warmup;
	double interval;
	int live_samples;	/* a window's samples written as taken, not held to its end */
	unsigned monitors;	/* bits from monitor_bit() (monitor_catalog.h) */
	int profile;
	char id[129];
	char **argv;		/* exec's command, shared by the cases */
};

/* Parses and validates; on error returns -1 with err naming the field and
 * leaves s released. root is not modified. A case's params are root's with
 * the case's list elements, and with a value written with a unit ("8M",
 * "2s") replaced by the plain number (8388608, 2.0): the output shows one
 * spelling per case, whatever the spec said. */
int spec_from_json(struct spec *s, json_t *root, struct strbuf *err);
int spec_parse(struct spec *s, const char *text, size_t len, struct strbuf *err);
void spec_release(struct spec *s);

const char *spec_mode_name(enum wl_mode m);

/*
 * Numbers with units, read the same way in a spec, on the agent's command
 * line and in the daemon's configuration. The whole string must match;
 * anything else, an overflow included, returns -1 and leaves *ret alone.
 *
 * Bytes: an integer, or an integer followed by K, M or G (k, m, g and
 * KiB, MiB, GiB too), all powers of 1024: "64K" is 65536, "8M" 8388608.
 * Seconds: a number (digits, optionally a fraction), or one followed by
 * ms, s, m or h: "500ms" is 0.5, "2s" 2, "1.5m" 90. Units are lower case
 * there, so "1M" (a size) is never read as a minute.
 */
int spec_parse_bytes(const char *s, uint64_t *ret);
int spec_parse_seconds(const char *s, double *ret);

/* The accepted forms, for messages: "size: must be a number of bytes from
 * 4K to 64G: " SPEC_BYTES_FORMS. */
#define SPEC_BYTES_FORMS "an integer, or one followed by K, M or G " \
	"(powers of 1024; KiB, MiB, GiB also) like 64K or 8M"
#define SPEC_SECONDS_FORMS "or one followed by ms, s, m or h like 500ms, 2s or 10m"

#endif
