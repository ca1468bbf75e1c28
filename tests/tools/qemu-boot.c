/*
 * Boots QEMU lab machines the way tlblabd does, for tests and benches that
 * need the lab's own guest (the same command line, KVM probe and vCPU
 * pinning, from daemon/stages/boot_qemu.c) without a job around it.
 *
 * usage: qemu-boot CONFIG MACHINE [auto|on|off]
 *   The machine (boot: qemu) comes from the lab config; the optional last
 *   argument overrides its qemu pin_vcpus. Commands on stdin, one a line:
 *     boot KERNEL [auto|on|off]
 *                   boots KERNEL (a path without spaces), pinning as given;
 *                   prints the "[tlblab: ...]" notes the boot log would
 *                   get, then "ready" or "failed: MESSAGE"
 *     stop          ends the VM; prints "stopped"
 *   End of input stops a VM still running. As in the daemon, the KVM probe's
 *   outcome is remembered for the process's lifetime.
 * usage: qemu-boot CONFIG --specs SUITE
 *   prints the suite's workload specs as the daemon sends them to the agent,
 *   one JSON object a line
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "boot_qemu.h"
#include "config.h"
#include "util.h"

static void print_notes(const char *console)
{
	const char *p = console;

	while ((p = strstr(p, "[tlblab: ")) != NULL) {
		const char *eol = strchr(p, '\n');
		int len = eol ? (int)(eol - p) : (int)strlen(p);

		printf("%.*s\n", len, p);
		p += len;
	}
}

static int pin_mode(const char *s, const char *const *modes, enum qemu_pin *ret)
{
	int k;

	for (k = 0; k < QEMU_PIN_MAX; k++)
		if (!strcmp(s, modes[k])) {
			*ret = (enum qemu_pin)k;
			return 0;
		}
	return -1;
}

int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT, console = STRBUF_INIT, message = STRBUF_INIT;
	struct lab_config *cfg = NULL;
	struct boot_session *sess = NULL;
	struct cfg_machine *m = NULL;
	static const char *const modes[] = { [QEMU_PIN_AUTO] = "auto", [QEMU_PIN_ON] = "on",
					     [QEMU_PIN_OFF] = "off" };
	enum qemu_pin pin;
	char line[4096];
	int nboot = 0;
	size_t i;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: qemu-boot CONFIG MACHINE [auto|on|off]\n");
		return 2;
	}
	if (config_load(argv[1], &cfg, &err) < 0) {
		fprintf(stderr, "qemu-boot: %s\n", err.buf);
		return 2;
	}
	if (argc == 4 && !strcmp(argv[2], "--specs")) {
		const struct cfg_suite *suite = config_suite(cfg, argv[3]);
		json_t *spec;

		if (!suite) {
			fprintf(stderr, "qemu-boot: no suite %s in %s\n", argv[3], argv[1]);
			return 2;
		}
		json_array_foreach(suite->workloads, i, spec) {
			char *text = json_dumps(spec, JSON_COMPACT);

			printf("%s\n", text);
			free(text);
		}
		config_free(cfg);
		return 0;
	}
	for (i = 0; i < cfg->nmachines; i++)
		if (!strcmp(cfg->machines[i].name, argv[2]))
			m = &cfg->machines[i];
	if (!m || !qemu_conf(m)) {
		fprintf(stderr, "qemu-boot: no machine %s with boot: qemu in %s\n", argv[2], argv[1]);
		return 2;
	}
	if (argc == 4 && pin_mode(argv[3], modes, &pin) < 0) {
		fprintf(stderr, "qemu-boot: pinning must be auto, on or off, not %s\n", argv[3]);
		return 2;
	}
	pin = argc == 4 ? pin : (enum qemu_pin)qemu_conf(m)->pin_vcpus;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "boot ", 5)) {
			const struct boot_ask ask = { 0 };
			struct cfg_machine guest;
			char boot_id[32], *sp = strchr(line + 5, ' ');
			enum qemu_pin pin_now = pin;

			if (sp) {
				*sp = '\0';
				if (pin_mode(sp + 1, modes, &pin_now) < 0) {
					printf("failed: pinning must be auto, on or off, not %s\n", sp + 1);
					continue;
				}
			}
			qemu_conf_mut(m)->pin_vcpus = pin_now;
			boot_qemu.stop(sess);
			sess = NULL;
			strbuf_reset(&console);
			strbuf_reset(&message);
			snprintf(boot_id, sizeof(boot_id), "qemu-boot-%d", ++nboot);
			if (boot_qemu.start(m, &ask, line + 5, boot_id, mono_now() + 600, NULL, &sess, &guest, &console,
					    &message) == BOOT_OK) {
				print_notes(console.buf);
				printf("ready\n");
			} else {
				print_notes(console.buf);
				printf("failed: %s\n", message.buf);
			}
		} else if (!strcmp(line, "stop")) {
			boot_qemu.stop(sess);
			sess = NULL;
			printf("stopped\n");
		} else {
			printf("failed: unknown command: %s\n", line);
		}
	}
	boot_qemu.stop(sess);
	config_free(cfg);
	strbuf_release(&err);
	strbuf_release(&console);
	strbuf_release(&message);
	return 0;
}
