#ifndef TLBLAB_CONSOLE_H
#define TLBLAB_CONSOLE_H

#include "strbuf.h"

/* Scans console text for trouble: panics, BUG, Oops, WARNING, hung tasks,
 * RCU stalls, and processes the kernel saw die (a segfault, the OOM killer).
 * Appends "<line>\n" per finding (at most max lines, each cut at 300 bytes)
 * to out (may be NULL); returns 2 for a panic, 1 for other trouble, 0 for
 * none. */
int console_scan(const char *text, struct strbuf *out, int max);

/* The kernel's own report, for a log: from the first line of a panic, BUG,
 * Oops, WARNING or fault (not a process the kernel killed) on, at most max
 * lines (each cut at 300 bytes), call trace and all. Returns the lines
 * appended to out: 0 when the kernel reported nothing. */
int console_oops(const char *text, struct strbuf *out, int max);

#endif
