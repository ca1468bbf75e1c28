/*
 * What a kernel's console says about trouble. Shared by the boot stage (a
 * kernel that panics or oopses is a result of the patch) and the run stage
 * (the lines that tell why a process died, in the message of a failed spec).
 */
#include "console.h"

#include <string.h>

#include "util.h"
#include "banned.h"

static const char *const panic_markers[] = {
	"Kernel panic", "end Kernel panic",
};
static const char *const trouble_markers[] = {
	"BUG:", "Oops", "WARNING:", "blocked for more than", "rcu_sched self-detected stall",
	"rcu: INFO: rcu_sched detected stalls", "self-detected stall", "general protection fault",
	"Unable to handle kernel", "invalid opcode",
#define KERNEL_TROUBLE_MARKERS 10	/* the ones above: the kernel's own */
	/* a process the kernel killed or saw die: the agent or its workload */
	"segfault at", "traps:", "Out of memory", "Killed process", "oom-kill",
};

int console_scan(const char *text, struct strbuf *out, int max)
{
	const char *line = text;
	int found = 0, n = 0;
	size_t i;

	while (*line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		int hit = 0;

		for (i = 0; i < ARRAY_SIZE(panic_markers) && !hit; i++)
			if (memmem(line, len, panic_markers[i], strlen(panic_markers[i])))
				hit = 2;
		for (i = 0; i < ARRAY_SIZE(trouble_markers) && !hit; i++)
			if (memmem(line, len, trouble_markers[i], strlen(trouble_markers[i])))
				hit = 1;
		if (hit) {
			if (hit > found)
				found = hit;
			if (out && n++ < max) {
				strbuf_add(out, line, len < 300 ? len : 300);
				strbuf_addch(out, '\n');
			}
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	return found;
}

int console_oops(const char *text, struct strbuf *out, int max)
{
	const char *line = text, *from = NULL;
	size_t i;
	int n = 0;

	while (*line && !from) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);

		for (i = 0; i < ARRAY_SIZE(panic_markers) && !from; i++)
			if (memmem(line, len, panic_markers[i], strlen(panic_markers[i])))
				from = line;
		for (i = 0; i < KERNEL_TROUBLE_MARKERS && !from; i++)
			if (memmem(line, len, trouble_markers[i], strlen(trouble_markers[i])))
				from = line;
		if (!eol)
			break;
		line = eol + 1;
	}
	for (line = from; line && *line && n < max;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);

		strbuf_add(out, line, len < 300 ? len : 300);
		strbuf_addch(out, '\n');
		n++;
		if (!eol)
			break;
		line = eol + 1;
	}
	return n;
}
