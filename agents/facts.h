#ifndef TLBLAB_FACTS_H
#define TLBLAB_FACTS_H

#include <jansson.h>

#include "version.h"

#define AGENT_PROTOCOL 1

/*
 * The host facts of the hello line: kernel release and /proc/version, the
 * command line (where a boot id shows which kernel is running), CPUs, CPU
 * model, tlb_single_page_flush_ceiling when debugfs shows it, the CPU
 * vulnerability and mitigation states, the boot id. Returns a new object
 * (the caller owns it); a fact that cannot be read is null.
 */
json_t *facts_collect(void);

/* The whole hello line: {"type":"hello","protocol":...,"host":{...}}. */
json_t *facts_hello(void);

#endif
