#ifndef TLBLAB_FUZZ_LAB_H
#define TLBLAB_FUZZ_LAB_H

/*
 * The small lab the fuzzers of API bodies read requests against (one
 * machine m1, one tree linux, one suite tlb), so that a valid request
 * gets past the configuration's lookups. Loaded once, into fuzz_cfg, by
 * the LLVMFuzzerInitialize defined here (a harness that includes this has
 * no other); a lab that does not load is the harness's bug.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "strbuf.h"

static inline struct lab_config *fuzz_lab(void)
{
	static const char yaml[] =
		"lab:\n"
		"  data_dir: /tmp/tlblab-fuzz\n"
		"machines:\n"
		"  - name: m1\n"
		"    transport: local\n"
		"builders:\n"
		"  - name: local\n"
		"    transport: local\n"
		"trees:\n"
		"  - name: linux\n"
		"    url: /tmp/linux\n"
		"    builder: local\n"
		"suites:\n"
		"  - name: tlb\n"
		"    workloads:\n"
		"      - workload: mprotect\n";
	struct strbuf err = STRBUF_INIT;
	struct lab_config *cfg;

	if (config_load_string("fuzz.yaml", yaml, strlen(yaml), &cfg, &err) < 0) {
		fprintf(stderr, "fuzz: the lab does not load: %s\n", err.buf);
		abort();
	}
	strbuf_release(&err);
	return cfg;
}

static struct lab_config *fuzz_cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_cfg = fuzz_lab();
	return 0;
}

#endif
