/*
 * The configuration loader as `tlblabd -n -c FILE` shows it: every key of a
 * full lab read back, the defaults of a minimal one, and the exact
 * "FILE:LINE:COL: message" lines of each class of error, several at once.
 * Fixtures are written one YAML line per C line, with the line number in a
 * comment, so each expected position can be checked by eye.
 */
#include "testlib.h"

#include <errno.h>
#include <math.h>
#include <unistd.h>

#include "config.h"
#include "util.h"
#include "banned.h"

#define L(s) s "\n"

/* Writes content to a new temporary file; returns its path (free it, unlink it). */
static char *temp_file(const char *content, size_t len)
{
	char *path = strdup("/tmp/tlblab-test-config-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	close(fd);
	return path;
}

static void temp_remove(char *path)
{
	unlink(path);
	free(path);
}

/* Loads text as `name` and expects failure with exactly `expected` in err. */
static void expect_errors(const char *name, const char *text, const char *expected)
{
	struct strbuf err = STRBUF_INIT;
	struct lab_config *cfg = NULL;

	if (config_load_string(name, text, strlen(text), &cfg, &err) == 0) {
		config_free(cfg);
		fail_msg("%s loaded, expected:\n%s", name, expected);
	}
	assert_null(cfg);
	assert_string_equal(err.buf, expected);
	strbuf_release(&err);
}

static struct lab_config *expect_ok(const char *name, const char *text)
{
	struct strbuf err = STRBUF_INIT;
	struct lab_config *cfg = NULL;

	if (config_load_string(name, text, strlen(text), &cfg, &err) < 0)
		fail_msg("%s did not load:\n%s", name, err.buf);
	assert_non_null(cfg);
	assert_int_equal(err.len, 0);
	strbuf_release(&err);
	return cfg;
}

#define KEY1 "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"
#define KEY2 "SHA256:+/0123456789abcdefghijklmnopqrstuvwxyzABCDE="

/*
 * Every load that must fail with nothing but a fixed text: one row each,
 * in the order of the tests that run them (the first field, the test's
 * name without test_). The loads whose text is made at run time stay in
 * their tests.
 */
struct error_case {
	const char *test;
	const char *name;	/* the file name the messages carry */
	const char *text;
	const char *expected;	/* the whole of err */
};

static const struct error_case error_cases[] = {
	/* test_compare_rules */
	{ "compare_rules", "c.yaml",
	  L("lab:")						/* 1 */
	  L("  data_dir: /d")				/* 2 */
	  L("suites:")					/* 3 */
	  L("  - name: s")					/* 4 */
	  L("    workloads: [{workload: mprotect}]")	/* 5 */
	  L("    compare:")					/* 6 */
	  L("      alpha: 1.5")				/* 7 */
	  L("      min_change: 150%")			/* 8 */
	  L("      same_band: two")				/* 9 */
	  L("      typo: 1")				/* 10 */
	  L("      metrics:")				/* 11 */
	  L("        'a;b': {alpha: 0.1}")			/* 12 */
	  L("        x.y: {min_change: 3%, bogus: 1}")	/* 13 */
	  L("        z: 5"),	/* 14 */
	  "c.yaml:7:14: alpha: must be a significance level above 0 and below 1, like 0.01\n"
	  "c.yaml:8:19: min_change: must be a percentage like 2% or a fraction from 0 to 1\n"
	  "c.yaml:9:18: same_band: must be a percentage like 2% or a fraction from 0 to 1\n"
	  "c.yaml:10:7: unknown key 'typo' in the compare section of suite 's'\n"
	  "c.yaml:12:9: metrics: must be a metric name or pattern of 1 to 128 letters, "
	  "digits and '._-*?[]'\n"
	  "c.yaml:13:31: unknown key 'bogus' in the rule for 'x.y' in the compare section of "
	  "suite 's'\n"
	  "c.yaml:14:12: metrics: 'z': must be a mapping with alpha, min_change or same_band" },
	/* test_reboot_section */
	{ "reboot_section", "r.yaml",
	  L("lab: {data_dir: /d}")					/* 1 */
	  L("machines:")						/* 2 */
	  L("  - {name: k, transport: local, boot: kexec, reboot: {}}")	/* 3 */
	  L("  - name: r")						/* 4 */
	  L("    transport: local")					/* 5 */
	  L("    boot: reboot")					/* 6 */
	  L("    reboot:")						/* 7 */
	  L("      grub_dir: /boot dir")				/* 8 */
	  L("      initrd: ../initrd")				/* 9 */
	  L("      once: []")					/* 10 */
	  L("      bogus: 1"),	/* 11 */
	  "r.yaml:3:46: reboot: only for boot: reboot (in machine 'k')\n"
	  "r.yaml:8:17: grub_dir: must be an absolute path of letters, digits and '._/-'\n"
	  "r.yaml:9:15: initrd: must be a file name of 1 to 64 letters, digits, '.', '_' or '-'\n"
	  "r.yaml:10:13: once: must be a command as a list of strings (argv), with a non-empty "
	  "program name first\n"
	  "r.yaml:11:7: unknown key 'bogus' in the reboot section of machine 'r'" },
	/* test_unknown_key */
	{ "unknown_key", "lab.yaml",
	  L("lab:")					/* 1 */
	  L("  data_dir: /d")			/* 2 */
	  L("  listen_on: 127.0.0.1:80")		/* 3 */
	  L("machines:")				/* 4 */
	  L("  - name: m1")				/* 5 */
	  L("    transport: local")			/* 6 */
	  L("    hots: 127.0.0.2")			/* 7 */
	  L("  - transport: local")			/* 8 */
	  L("    bogus: 1")				/* 9 */
	  L("    name: -bad")			/* 10 */
	  L("machine: []"),	/* 11 */
	  "lab.yaml:3:3: unknown key 'listen_on' in lab\n"
	  "lab.yaml:7:5: unknown key 'hots' in machine 'm1'\n"
	  /* without a valid name, the item is named by its index */
	  "lab.yaml:9:5: unknown key 'bogus' in machines[1]\n"
	  "lab.yaml:10:11: name: must be a name of 1 to 64 letters, digits, '.', '_' "
	  "or '-', not starting with '-' or '.'\n"
	  "lab.yaml:11:1: unknown section 'machine' in the configuration (sections: "
	  "lab, machines, builders, trees, suites)" },
	/*
	 * test_many_errors: One load reports every error, sorted by position,
	 * whatever the section order.
	 */
	{ "many_errors", "t.yaml",
	  L("trees:")				/* 1 */
	  L("  - name: linux")			/* 2 */
	  L("    url: /src/linux")			/* 3 */
	  L("    builder: nope")			/* 4: value col 14 */
	  L("lab:")					/* 5 */
	  L("  data_dir: /var/lib/tlblab")		/* 6 */
	  L("  workers: 0")				/* 7: value col 12 */
	  L("machines:")				/* 8 */
	  L("    - name: m1")			/* 9: mapping col 7 */
	  L("      transport: ssh")			/* 10 */
	  L("      port: abc")			/* 11: value col 13 */
	  L("      hots: 127.0.0.2")		/* 12 */
	  L("      identity: /k")			/* 13 */
	  L("      known_hosts: /kh")		/* 14 */
	  L("    - name: m1")			/* 15: name value col 13 */
	  L("      transport: local")		/* 16 */
	  L("      host: 127.0.0.1;reboot")		/* 17: key col 7, value col 13 */
	  L("      cpus: 5000")			/* 18: value col 13 */
	  L("      boot: pxe")			/* 19: value col 13 */
	  L("      tags: [ok, 'bad tag']")		/* 20: item col 18 */
	  L("builders:")				/* 21 */
	  L("  - name: b")				/* 22: mapping col 5 */
	  L("    transport: ftp")			/* 23: value col 16 */
	  L("    jobs: 0")				/* 24: value col 11 */
	  L("suites:")				/* 25 */
	  L("  - name: s")				/* 26 */
	  L("    timeout: 0")			/* 27: value col 14 */
	  L("    workloads:")			/* 28 */
	  L("      - duration: 5")			/* 29: item col 9 */
	  L("      - workload: mprotect"),	/* 30 */
	  "t.yaml:4:14: builder: no builder named 'nope'\n"
	  "t.yaml:7:12: workers: must be an integer from 1 to 64\n"
	  "t.yaml:9:7: missing key 'host' in machine 'm1' (required with transport ssh)\n"
	  "t.yaml:11:13: port: must be an integer from 1 to 65535\n"
	  "t.yaml:12:7: unknown key 'hots' in machine 'm1'\n"
	  "t.yaml:15:13: duplicate machine name 'm1' (first defined at line 9)\n"
	  "t.yaml:17:7: host: only used with transport ssh (in machine 'm1')\n"
	  "t.yaml:17:13: host: must be an IP address or a host name of letters, "
	  "digits, '.' and '-'\n"
	  "t.yaml:18:13: cpus: must be an integer from 0 to 4096\n"
	  "t.yaml:19:13: boot: must be none, qemu, kexec or reboot\n"
	  "t.yaml:20:18: tags[1]: must be a name of 1 to 64 letters, digits, '.', '_' "
	  "or '-', not starting with '-' or '.'\n"
	  "t.yaml:23:16: transport: must be local or ssh\n"
	  "t.yaml:24:11: jobs: must be an integer from 1 to 256\n"
	  "t.yaml:27:14: timeout: must be a number from 1 to 604800 seconds, or one "
	  "followed by ms, s, m or h like 500ms, 2s or 10m\n"
	  "t.yaml:29:9: workloads[0]: missing key 'workload' (the name of the "
	  "workload to run)" },
	/*
	 * test_yaml_syntax: libyaml's own problem text, at its problem mark; a
	 * parser error carries its context too; the reader's errors have only
	 * an offset: still a line and column.
	 */
	{ "yaml_syntax", "lab.yaml",
	  L("lab:")
	  L("  data_dir: /d")
	  L("a: b: c"),
	  "lab.yaml:3:5: mapping values are not allowed in this context" },
	{ "yaml_syntax", "lab.yaml",
	  L("lab:")
	  L("  data_dir: /d")
	  L(" workers: 2"),
	  "lab.yaml:3:2: did not find expected key (while parsing a block mapping "
	  "at line 1, column 1)" },
	{ "yaml_syntax", "lab.yaml",
	  L("lab:")
	  L("  data_dir: \"/d"),
	  "lab.yaml:3:1: found unexpected end of stream (while scanning a quoted "
	  "scalar at line 2, column 13)" },
	{ "yaml_syntax", "lab.yaml",
	  L("lab: *nothing"),
	  "lab.yaml:1:6: found undefined alias" },
	{ "yaml_syntax", "bin.yaml",
	  "lab:\n  data_dir: /d\xff\n",
	  "bin.yaml:2:15: invalid leading UTF-8 octet (byte 0xff)" },
	/* test_document_shape */
	{ "document_shape", "e.yaml",
	  "",
	  "e.yaml:1:1: empty configuration (lab.data_dir is required)" },
	{ "document_shape", "e.yaml",
	  L("# nothing but a comment"),
	  "e.yaml:1:1: empty configuration (lab.data_dir is required)" },
	{ "document_shape", "e.yaml",
	  L("- lab"),
	  "e.yaml:1:1: the configuration must be a mapping with the sections lab, "
	  "machines, builders, trees and suites" },
	{ "document_shape", "e.yaml",
	  L("machines: []"),
	  "e.yaml:1:1: missing section 'lab' (lab.data_dir is required)" },
	{ "document_shape", "e.yaml",
	  L("lab:"),
	  "e.yaml:1:5: lab: must be a mapping (lab.data_dir is required)" },
	{ "document_shape", "e.yaml",
	  L("lab:")
	  L("  workers: 2"),
	  "e.yaml:2:3: missing key 'data_dir' in lab (where the store and artifacts live)" },
	{ "document_shape", "e.yaml",
	  L("lab: {data_dir: /d}")
	  L("---")
	  L("lab: {data_dir: /e}"),
	  "e.yaml:3:1: only one YAML document is allowed" },
	{ "document_shape", "e.yaml",
	  L("lab: {data_dir: /d}")
	  L("lab: {data_dir: /e}"),
	  "e.yaml:2:1: duplicate key 'lab' in the configuration (sections: lab, "
	  "machines, builders, trees, suites) (first at line 1)" },
	{ "document_shape", "e.yaml",
	  L("lab: {data_dir: /d}")
	  L("machines: {name: m1}")
	  L("builders: [m1]"),
	  "e.yaml:2:11: machines: must be a list of mappings\n"
	  "e.yaml:3:12: builders[0]: must be a mapping" },
	{ "document_shape", "e.yaml",
	  L("lab: {data_dir: /d}")
	  L("suites:")
	  L("  - name: s"),
	  "e.yaml:3:5: missing key 'workloads' in suite 's'" },
	{ "document_shape", "e.yaml",
	  L("lab: {data_dir: /d}")
	  L("suites:")
	  L("  - {name: s, workloads: []}")
	  L("  - {name: t, workloads: [mprotect, {workload: [a]}]}"),
	  "e.yaml:3:26: workloads: must be a non-empty list of workload specs "
	  "(mappings with a 'workload' key)\n"
	  "e.yaml:4:27: workloads[0]: must be a mapping with a 'workload' key\n"
	  "e.yaml:4:48: workload: must be the name of a workload" },
	/* test_required_keys */
	{ "required_keys", "r.yaml",
	  L("lab: {data_dir: /d}")			/* 1 */
	  L("machines:")				/* 2 */
	  L("  - transport: ssh")			/* 3: mapping col 5 */
	  L("  - name: m2")				/* 4 */
	  L("    host: h")				/* 5 */
	  L("builders:")				/* 6 */
	  L("  - name: b")				/* 7 */
	  L("    transport: ssh")			/* 8 */
	  L("    host: b.example.org")		/* 9 */
	  L("    identity: /k")			/* 10 */
	  L("trees:")				/* 11 */
	  L("  - name: t"),	/* 12 */
	  "r.yaml:3:5: missing key 'name' in machines[0]\n"
	  "r.yaml:3:5: missing key 'host' in machines[0] (required with transport ssh)\n"
	  "r.yaml:3:5: missing key 'identity' in machines[0] (required with transport ssh)\n"
	  "r.yaml:3:5: missing key 'known_hosts' or 'host_key' in machines[0] "
	  "(transport ssh checks the host key strictly)\n"
	  "r.yaml:4:5: missing key 'transport' in machine 'm2' (local or ssh)\n"
	  "r.yaml:7:5: missing key 'known_hosts' or 'host_key' in builder 'b' "
	  "(transport ssh checks the host key strictly)\n"
	  "r.yaml:12:5: missing key 'url' in tree 't' (a path or git URL)\n"
	  "r.yaml:12:5: missing key 'builder' in tree 't'" },
	/*
	 * test_injection: Values that reach commands: no shell metacharacters,
	 * no options.
	 */
	{ "injection", "i.yaml",
	  L("lab: {data_dir: /d}")			/* 1 */
	  L("machines:")				/* 2 */
	  L("  - name: m1;reboot")			/* 3: value col 11 */
	  L("    transport: ssh")			/* 4 */
	  L("    host: 127.0.0.1;reboot")		/* 5: value col 11 */
	  L("    user: root$(id)")			/* 6: value col 11 */
	  L("    identity: -oProxyCommand=x")	/* 7: value col 15 */
	  L("    host_key: SHA256:short")		/* 8: value col 15 */
	  L("  - name: m2")				/* 9 */
	  L("    transport: ssh")			/* 10 */
	  L("    host: -oProxyCommand=x")		/* 11: value col 11 */
	  L("    identity: \"/k\\nx\"")		/* 12: value col 15 */
	  L("    known_hosts: \"\"")			/* 13: value col 18 */
	  L("    workdir: \"/a\\0b\"")		/* 14: value col 14 */
	  L("builders:")				/* 15 */
	  L("  - {name: .hidden, transport: local}")	/* 16: value col 12 */
	  L("trees:")				/* 17 */
	  L("  - {name: t, url: --upload-pack=x, builder: x}"),
	  /* 18: 20, 46 */
	  "i.yaml:3:11: name: must be a name of 1 to 64 letters, digits, '.', '_' or "
	  "'-', not starting with '-' or '.'\n"
	  "i.yaml:5:11: host: must be an IP address or a host name of letters, digits, "
	  "'.' and '-'\n"
	  "i.yaml:6:11: user: must be a user name of letters, digits, '.', '_' and '-', "
	  "not starting with '-'\n"
	  "i.yaml:7:15: identity: must be a non-empty path without control characters, "
	  "not starting with '-'\n"
	  "i.yaml:8:15: host_key: must be SHA256: followed by 43 base64 characters "
	  "(as ssh-keygen -lf prints)\n"
	  "i.yaml:11:11: host: must be an IP address or a host name of letters, digits, "
	  "'.' and '-'\n"
	  "i.yaml:12:15: identity: must be a non-empty path without control characters, "
	  "not starting with '-'\n"
	  "i.yaml:13:18: known_hosts: must be a non-empty path without control "
	  "characters, not starting with '-'\n"
	  "i.yaml:14:14: workdir: must be a non-empty path without control characters, "
	  "not starting with '-'\n"
	  "i.yaml:16:12: name: must be a name of 1 to 64 letters, digits, '.', '_' or "
	  "'-', not starting with '-' or '.'\n"
	  "i.yaml:18:20: url: must be a path or git URL without control characters, "
	  "not starting with '-'\n"
	  "i.yaml:18:46: builder: no builder named 'x'" },
	/* test_values */
	{ "values", "v.yaml",
	  L("lab:")
	  L("  data_dir: /d")
	  L("  listen: localhost:8080"),
	  "v.yaml:3:11: listen: must be IPV4:PORT or [IPV6]:PORT (an IP literal and a "
	  "port from 1 to 65535)" },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, listen: 127.0.0.1}"),
	  "v.yaml:1:29: listen: must be IPV4:PORT or [IPV6]:PORT (an IP literal and a "
	  "port from 1 to 65535)" },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, listen: '127.0.0.1:0'}"),
	  "v.yaml:1:29: listen: must be IPV4:PORT or [IPV6]:PORT (an IP literal and a "
	  "port from 1 to 65535)" },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, listen: '::1:80'}"),
	  "v.yaml:1:29: listen: must be IPV4:PORT or [IPV6]:PORT (an IP literal and a "
	  "port from 1 to 65535)" },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, max_body: 1023, workers: 65, stage_timeout: 604801}"),
	  "v.yaml:1:31: max_body: must be a number of bytes from 1K to 1G: an integer, or "
	  "one followed by K, M or G (powers of 1024; KiB, MiB, GiB also) like 64K or 8M\n"
	  "v.yaml:1:46: workers: must be an integer from 1 to 64\n"
	  "v.yaml:1:65: stage_timeout: must be a number from 1 to 604800 seconds, or one "
	  "followed by ms, s, m or h like 500ms, 2s or 10m" },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, read_requires_token: maybe, workers: [1], stage_timeout: nan}"),
	  "v.yaml:1:42: read_requires_token: must be true or false\n"
	  "v.yaml:1:58: workers: must be an integer from 1 to 64\n"
	  "v.yaml:1:78: stage_timeout: must be a number from 1 to 604800 seconds, or one "
	  "followed by ms, s, m or h like 500ms, 2s or 10m" },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, max_body: 2G, stage_timeout: 8d}"),
	  "v.yaml:1:31: max_body: must be a number of bytes from 1K to 1G: an integer, or "
	  "one followed by K, M or G (powers of 1024; KiB, MiB, GiB also) like 64K or 8M\n"
	  "v.yaml:1:50: stage_timeout: must be a number from 1 to 604800 seconds, or one "
	  "followed by ms, s, m or h like 500ms, 2s or 10m" },
	{ "values", "v.yaml",
	  L("lab:")
	  L("  data_dir: /d")
	  L("  tokens: [0123456789abcdef, short-secret]"),
	  "v.yaml:3:30: tokens[1]: must be a token of 16 to 4096 printable characters "
	  "without spaces" },
	{ "values", "v.yaml",
	  L("lab: {data_dir: /d, tokens: 0123456789abcdef}"),
	  "v.yaml:1:29: tokens: must be a list, each item a token of 16 to 4096 "
	  "printable characters without spaces" },
	/* test_client_limits */
	{ "client_limits", "v.yaml",
	  L("lab: {data_dir: /d, max_connections_per_address: 0, header_timeout: 301,")
	  L("      max_jobs_per_token: 100001, max_boots_per_token: 0}"),
	  "v.yaml:1:50: max_connections_per_address: must be an integer from 1 to 512\n"
	  "v.yaml:1:69: header_timeout: must be a number from 1 to 300 seconds, or one "
	  "followed by ms, s, m or h like 500ms, 2s or 10m\n"
	  "v.yaml:2:27: max_jobs_per_token: must be an integer from 1 to 100000\n"
	  "v.yaml:2:56: max_boots_per_token: must be an integer from 1 to 1000000" },
	{ "client_limits", "v.yaml",
	  L("lab: {data_dir: /d, max_connections_per_address: 513, header_timeout: 0.5s}"),
	  "v.yaml:1:50: max_connections_per_address: must be an integer from 1 to 512\n"
	  "v.yaml:1:71: header_timeout: must be a number from 1 to 300 seconds, or one "
	  "followed by ms, s, m or h like 500ms, 2s or 10m" },
	/* test_fetch_allow */
	{ "fetch_allow", "f.yaml",
	  L("lab: {data_dir: /d, fetch_allow: [127.0.0.0/33, 'x y', '-h', 'fd00::/129', 1.2.3.4/]}"),
	  "f.yaml:1:35: fetch_allow[0]: must be an IP address, a CIDR (10.0.0.0/8, fd00::/8) or a "
	  "host name of letters, digits, '.' and '-'\n"
	  "f.yaml:1:49: fetch_allow[1]: must be an IP address, a CIDR (10.0.0.0/8, fd00::/8) or a "
	  "host name of letters, digits, '.' and '-'\n"
	  "f.yaml:1:56: fetch_allow[2]: must be an IP address, a CIDR (10.0.0.0/8, fd00::/8) or a "
	  "host name of letters, digits, '.' and '-'\n"
	  "f.yaml:1:62: fetch_allow[3]: must be an IP address, a CIDR (10.0.0.0/8, fd00::/8) or a "
	  "host name of letters, digits, '.' and '-'\n"
	  "f.yaml:1:76: fetch_allow[4]: must be an IP address, a CIDR (10.0.0.0/8, fd00::/8) or a "
	  "host name of letters, digits, '.' and '-'" },
	{ "fetch_allow", "f.yaml",
	  L("lab: {data_dir: /d, fetch_allow: 127.0.0.1}"),
	  "f.yaml:1:34: fetch_allow: must be a list, each item an IP address, a CIDR (10.0.0.0/8, "
	  "fd00::/8) or a host name of letters, digits, '.' and '-'" },
	/*
	 * test_boot_section_errors: a section that is not a mapping; binaries
	 * that are neither a name nor absolute; kexec's initrd is a path on
	 * the machine, judged like any other path.
	 */
	{ "boot_section_errors", "q.yaml",
	  L("lab: {data_dir: /d}")			/* 1 */
	  L("machines:")				/* 2 */
	  L("  - name: q1")				/* 3 */
	  L("    transport: local")			/* 4 */
	  L("    boot: qemu")			/* 5 */
	  L("    qemu:")				/* 6 */
	  L("      binary: qemu;reboot")		/* 7: mapping col 7, value col 15 */
	  L("      memory: 63")			/* 8: value col 15 */
	  L("      accel: hvf")			/* 9: value col 14 */
	  L("      guest_host: localhost")		/* 10: value col 19 */
	  L("      ssh_port: 0")			/* 11: value col 17 */
	  L("      append: \"root='x'\"")		/* 12: value col 15 */
	  L("      memroy: 2048")			/* 13: key col 7 */
	  L("  - name: q2")				/* 14: mapping col 5 */
	  L("    transport: local")			/* 15 */
	  L("    boot: qemu")			/* 16 */
	  L("  - name: k1")				/* 17 */
	  L("    transport: local")			/* 18 */
	  L("    boot: kexec")			/* 19 */
	  L("    qemu: {ssh_port: 1}")		/* 20: key col 5 */
	  L("    kexec: {append: '', extra: 1}")	/* 21: value col 21, key col 25 */
	  L("  - name: n1")				/* 22 */
	  L("    transport: local")			/* 23 */
	  L("    kexec: {}"),
	  /* 24: key col 5 */
	  "q.yaml:7:7: missing key 'initrd' in the qemu section of machine 'q1' "
	  "(the guest's initramfs)\n"
	  "q.yaml:7:7: missing key 'identity' in the qemu section of machine 'q1' "
	  "(the private key for root on the guest)\n"
	  "q.yaml:7:7: missing key 'known_hosts' or 'host_key' in the qemu section of "
	  "machine 'q1' (the guest's host key is checked strictly)\n"
	  "q.yaml:7:15: binary: must be a program name or an absolute path of letters, "
	  "digits, '.', '_', '+', '-' and '/', not starting with '-' or '.'\n"
	  "q.yaml:8:15: memory: must be an integer from 64 to 1048576\n"
	  "q.yaml:9:14: accel: must be auto, kvm or tcg\n"
	  "q.yaml:10:19: guest_host: must be an IPv4 or IPv6 address (without brackets)\n"
	  "q.yaml:11:17: ssh_port: must be an integer from 1 to 65535\n"
	  "q.yaml:12:15: append: must be a kernel command line of at most 1024 "
	  "characters: words of letters, digits and '._,=:/+-' separated by spaces\n"
	  "q.yaml:13:7: unknown key 'memroy' in the qemu section of machine 'q1'\n"
	  "q.yaml:14:5: missing key 'qemu' in machine 'q2' (required with boot: qemu)\n"
	  "q.yaml:20:5: qemu: only for boot: qemu (in machine 'k1')\n"
	  "q.yaml:21:21: append: must be a kernel command line of at most 1024 "
	  "characters: words of letters, digits and '._,=:/+-' separated by spaces\n"
	  "q.yaml:21:25: unknown key 'extra' in the kexec section of machine 'k1'\n"
	  "q.yaml:24:5: kexec: only for boot: kexec (in machine 'n1')" },
	{ "boot_section_errors", "q.yaml",
	  L("lab: {data_dir: /d}")			/* 1 */
	  L("machines:")				/* 2 */
	  L("  - {name: a, transport: local, boot: qemu, qemu: ~}")		/* 3: col 51 */
	  L("  - {name: b, transport: local, boot: kexec, kexec: [x]}")	/* 4: col 53 */
	  L("  - name: c")				/* 5 */
	  L("    transport: local")			/* 6 */
	  L("    boot: qemu")			/* 7 */
	  L("    qemu:")				/* 8 */
	  L("      binary: bin/qemu")		/* 9: value col 15 */
	  L("      initrd: -i")			/* 10: value col 15 */
	  L("      ssh_port: 22")			/* 11 */
	  L("      identity: /k")			/* 12 */
	  L("      host_key: SHA256:x")		/* 13: value col 17 */
	  L("  - {name: d, transport: local, boot: qemu, qemu: {binary: /usr/bin/,")	/* 14: col 60 */
	  L("     initrd: /i, ssh_port: 22, identity: /k, known_hosts: /kh}}")	/* 15 */
	  L("  - {name: e, transport: local, boot: pxe, qemu: {}}"),
	  /* 16: col 39 */
	  "q.yaml:3:51: qemu: must be a mapping (initrd, ssh_port, identity, and "
	  "host_key or known_hosts are required)\n"
	  "q.yaml:4:53: kexec: must be a mapping (with the optional keys append and "
	  "initrd)\n"
	  "q.yaml:9:15: binary: must be a program name or an absolute path of letters, "
	  "digits, '.', '_', '+', '-' and '/', not starting with '-' or '.'\n"
	  "q.yaml:10:15: initrd: must be a non-empty path without control characters, "
	  "not starting with '-'\n"
	  "q.yaml:13:17: host_key: must be SHA256: followed by 43 base64 characters "
	  "(as ssh-keygen -lf prints)\n"
	  "q.yaml:14:60: binary: must be a program name or an absolute path of letters, "
	  "digits, '.', '_', '+', '-' and '/', not starting with '-' or '.'\n"
	  /* an unknown boot method: its section is not judged */
	  "q.yaml:16:39: boot: must be none, qemu, kexec or reboot" },
	{ "boot_section_errors", "q.yaml",
	  L("lab: {data_dir: /d}")
	  L("machines:")
	  L("  - {name: k, transport: local, boot: kexec, kexec: {initrd: -i}}")	/* 3: col 62 */
	  L("  - {name: k2, transport: local, boot: kexec, kexec: {initrd: ''}}"),
	  /* 4: col 63 */
	  "q.yaml:3:62: initrd: must be a non-empty path without control characters, "
	  "not starting with '-'\n"
	  "q.yaml:4:63: initrd: must be a non-empty path without control characters, "
	  "not starting with '-'" },
	/* test_power_cycle_and_local */
	{ "power_cycle_and_local", "p.yaml",
	  L("lab: {data_dir: /d}")				/* 1 */
	  L("machines:")					/* 2 */
	  L("  - name: m")					/* 3 */
	  L("    transport: local")				/* 4 */
	  L("    power_cycle: reboot")			/* 5: col 18 */
	  L("    port: 22")					/* 6: col 5 */
	  L("  - name: n")					/* 7 */
	  L("    transport: local")				/* 8 */
	  L("    power_cycle: []")				/* 9: col 18 */
	  L("  - name: o")					/* 10 */
	  L("    transport: local")				/* 11 */
	  L("    power_cycle: [[x]]"),
	  /* 12: item col 19 */
	  "p.yaml:5:18: power_cycle: must be a list, each item a string of at most 4096 bytes\n"
	  "p.yaml:6:5: port: only used with transport ssh (in machine 'm')\n"
	  "p.yaml:9:18: power_cycle: must be a command as a list of strings (argv), "
	  "with a non-empty program name first\n"
	  "p.yaml:12:19: power_cycle[0]: must be a string of at most 4096 bytes" },
	/* test_builder_ccache */
	{ "builder_ccache", "c.yaml",
	  L("lab: {data_dir: /d}")
	  L("builders:")
	  L("  - {name: b, transport: local, ccache: [a]}"),
	  "c.yaml:3:41: ccache: must be a non-empty path without control characters, "
	  "not starting with '-'" },
	/* test_host_groups */
	{ "host_groups", "h.yaml",
	  L("lab: {data_dir: /d}")
	  L("builders:")
	  L("  - {name: b, transport: local, host_group: 'a b'}"),
	  "h.yaml:3:45: host_group: must be a name of 1 to 64 letters, digits, '.', '_' or '-', "
	  "not starting with '-' or '.'" },
	/* test_pin_vcpus */
	{ "pin_vcpus", "p.yaml",
	  L("lab: {data_dir: /d}")
	  L("machines:")
	  L("  - name: vm")
	  L("    transport: local")
	  L("    boot: qemu")
	  L("    qemu: {initrd: /i, identity: /k, ssh_port: 2222, known_hosts: /h, pin_vcpus: yes}"),
	  "p.yaml:6:82: pin_vcpus: must be auto, on or off" },
	/* test_token_file */
	{ "token_file", "tok.yaml",
	  L("lab: {data_dir: /d, token_file: /tmp}"),
	  "tok.yaml:1:33: token_file: cannot read /tmp: Is a directory" },
	/* test_workload_conversion */
	{ "workload_conversion", "w.yaml",
	  L("lab: {data_dir: /d}")				/* 1 */
	  L("suites:")					/* 2 */
	  L("  - name: s")					/* 3 */
	  L("    workloads:")				/* 4 */
	  L("      - workload: fault-write")		/* 5 */
	  L("        rounds: 99999999999999999999")		/* 6: col 17 */
	  L("      - workload: mprotect")			/* 7 */
	  L("        profile: yes")				/* 8: col 18 */
	  L("      - workload: mprotect")			/* 9 */
	  L("        duration: .inf")			/* 10: col 19 */
	  L("      - workload: mprotect")			/* 11 */
	  L("        id: ~")				/* 12: col 13 */
	  L("      - workload: mprotect")			/* 13 */
	  L("        workers: '4'"),
	  /* 14: col 18 */
	  "w.yaml:6:17: rounds: must be an integer from 0 to 1000000000000\n"
	  "w.yaml:8:18: profile: must be true or false\n"
	  "w.yaml:10:19: duration: must be a number from 0.1 to 86400 seconds, or one "
	  "followed by ms, s, m or h like 500ms, 2s or 10m (got '.inf')\n"
	  "w.yaml:12:13: id: must be a string of at most 128 bytes\n"
	  "w.yaml:14:18: workers: must be an integer from 1 to 1024" },
	{ "workload_conversion", "w.yaml",
	  L("lab: {data_dir: /d}")				/* 1 */
	  L("suites:")					/* 2 */
	  L("  - name: s")					/* 3 */
	  L("    workloads:")				/* 4 */
	  L("      - workload: mprotect")			/* 5 */
	  L("        workers: 1")				/* 6 */
	  L("        workers: 2")				/* 7: col 9 */
	  L("        ? [a]")					/* 8: complex key col 11 */
	  L("        : b")					/* 9 */
	  L("  - name: s")					/* 10: col 11 */
	  L("    workloads: [{workload: ~}]"),
	  /* 11: col 28 */
	  "w.yaml:7:9: duplicate key 'workers'\n"
	  "w.yaml:8:11: keys must be strings\n"
	  "w.yaml:10:11: duplicate suite name 's' (first defined at line 3)\n"
	  "w.yaml:11:28: workload: must be the name of a workload" },
	/* test_suite_specs */
	{ "suite_specs", "u.yaml",
	  L("lab: {data_dir: /d}")				/* 1 */
	  L("suites:")					/* 2 */
	  L("  - name: s")					/* 3 */
	  L("    workloads:")				/* 4 */
	  L("      - workload: fault-write")		/* 5 */
	  L("        size: 8Q"),
	  /* 6: col 15 */
	  "u.yaml:6:15: size: must be a number of bytes from 4K to 64G: an integer, or one "
	  "followed by K, M or G (powers of 1024; KiB, MiB, GiB also) like 64K or 8M "
	  "(got '8Q')" },
	{ "suite_specs", "u.yaml",
	  L("lab: {data_dir: /d}")				/* 1 */
	  L("suites:")					/* 2 */
	  L("  - name: s")					/* 3 */
	  L("    workloads:")				/* 4 */
	  L("      - workload: mprotect")			/* 5 */
	  L("        workers: 2")				/* 6 */
	  L("        sise: 8M")				/* 7: col 9 */
	  L("      - {workload: mprotect, request_size: 1K}")	/* 8: col 30 */
	  L("      - workload: mremap")			/* 9 */
	  L("        size: [4M, 8M, 2x]")			/* 10: col 24 */
	  L("      - workload: tcp-rr")			/* 11 */
	  L("        request_size:")			/* 12 */
	  L("          - 1K")				/* 13 */
	  L("          - 2M")				/* 14: col 13 */
	  L("      - workload: mprotect")			/* 15 */
	  L("        monitors: [vmstat, dmesg]"),
	  /* 16: col 28 */
	  "u.yaml:7:9: sise: unknown field\n"
	  "u.yaml:8:30: request_size: not a parameter of mprotect\n"
	  "u.yaml:10:24: size[2]: must be a number of bytes from 4K to 64G: an integer, or "
	  "one followed by K, M or G (powers of 1024; KiB, MiB, GiB also) like 64K or 8M "
	  "(got '2x')\n"
	  "u.yaml:14:13: request_size[1]: must be a number of bytes from 1 to 1M: an "
	  "integer, or one followed by K, M or G (powers of 1024; KiB, MiB, GiB also) like "
	  "64K or 8M (got '2M')\n"
	  "u.yaml:16:28: monitors[1]: unknown monitor (one of interrupts, vmstat, "
	  "tracepoints, procstat, profile)" },
	{ "suite_specs", "u.yaml",
	  L("lab: {data_dir: /d}")				/* 1 */
	  L("suites:")					/* 2 */
	  L("  - name: s")					/* 3 */
	  L("    workloads:")				/* 4 */
	  L("      - workload: mprotect")			/* 5 */
	  L("        neighbour:")				/* 6 */
	  L("          workload: mremap")			/* 7 */
	  L("          workers: 0")				/* 8: col 20 */
	  L("      - workload: mprotect")			/* 9 */
	  L("        neighbour: {workers: 2}")		/* 10: col 20 */
	  L("      - {workload: mprotect, neighbour: mremap}")	/* 11: col 41 */
	  L("      - workload: mprotect")			/* 12 */
	  L("        neighbour: {workload: mremap}")	/* 13 */
	  L("        neighbour.workers: 2")			/* 14: col 9 */
	  L("  - name: t")					/* 15 */
	  L("    workloads:")				/* 16 */
	  L("      - workload: mprotect")			/* 17 */
	  L("        neighbour: {workload: stencil, grid: 5x9x9, workers: 4}"),
	  /* 18: grid value col 46 */
	  "u.yaml:8:20: neighbour.workers: must be an integer from 1 to 1024\n"
	  "u.yaml:10:20: neighbour.workload: missing (one of mprotect, mremap, fault-write, "
	  "tcp-rr, stencil, exec)\n"
	  "u.yaml:11:41: neighbour: must be an object with a workload\n"
	  "u.yaml:14:9: neighbour.workers: unknown field\n"
	  "u.yaml:18:46: neighbour.grid: 4 workers need at least 6 points along x" },
	{ "suite_specs", "u.yaml",
	  L("lab: {data_dir: /d, workers: 0}")		/* 1: col 30 */
	  L("suites:")					/* 2 */
	  L("  - name: s")					/* 3 */
	  L("    workloads:")				/* 4 */
	  L("      - workload: exec")			/* 5: col 9 */
	  L("        parser: none")				/* 6 */
	  L("      - workload: mprotect")			/* 7 */
	  L("        duration: 0.01")			/* 8: col 19 */
	  L("        workers: 0"),	/* 9 */
	  "u.yaml:1:30: workers: must be an integer from 1 to 64\n"
	  "u.yaml:5:9: command: missing (exec needs the command to run)\n"
	  "u.yaml:8:19: duration: must be a number from 0.1 to 86400 seconds, or one "
	  "followed by ms, s, m or h like 500ms, 2s or 10m" },
	/*
	 * test_alias_bomb: Aliases are expanded into JSON: a "billion laughs"
	 * must hit the limit; the 33rd '[' (col 47) is one level too deep.
	 */
	{ "alias_bomb", "b.yaml",
	  L("lab: {data_dir: /d}")
	  L("x: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"),
	  "b.yaml:2:1: unknown section 'x' in the configuration (sections: lab, "
	  "machines, builders, trees, suites)" },
	{ "alias_bomb", "b.yaml",
	  L("lab: {data_dir: /d}")
	  L("suites:")
	  L("  - name: s")
	  L("    workloads:")
	  L("      - workload: exec")
	  L("        a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]")
	  L("        b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]")
	  L("        c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]")
	  L("        d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]")
	  L("        e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]")
	  L("        f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]"),
	  "b.yaml:6:40: workload spec too large or nested deeper than 32 levels" },
	{ "alias_bomb", "b.yaml",
	  L("lab: {data_dir: /d}")
	  L("suites:")
	  L("  - name: s")
	  L("    workloads:")
	  L("      - workload: exec")
	  L("        deep: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"),
	  "b.yaml:6:47: workload spec too large or nested deeper than 32 levels" },
	/* test_allowed_hosts */
	{ "allowed_hosts", "h.yaml",
	  L("lab:") L("  data_dir: /d") L("  allowed_hosts: [ok.example, \"bad name\", a/b]"),
	  "h.yaml:3:31: allowed_hosts[1]: must be an IP address or a host name of letters, "
	  "digits, '.' and '-'\n"
	  "h.yaml:3:43: allowed_hosts[2]: must be an IP address or a host name of letters, "
	  "digits, '.' and '-'" },
	{ "allowed_hosts", "h.yaml",
	  L("lab:") L("  data_dir: /d") L("  allowed_hosts: lab.example"),
	  "h.yaml:3:18: allowed_hosts: must be a list, each item an IP address or a host "
	  "name of letters, digits, '.' and '-'" },
};

/* Loads each row of error_cases[] whose test is `test`; there must be one. */
static void expect_table_errors(const char *test)
{
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(error_cases); i++) {
		if (strcmp(error_cases[i].test, test) != 0)
			continue;
		expect_errors(error_cases[i].name, error_cases[i].text, error_cases[i].expected);
		n++;
	}
	assert_true(n > 0);
}

/* A test that is nothing but its rows of error_cases[]: named test_NAME,
 * its state the rows' NAME. */
static void test_error_table(void **state)
{
	expect_table_errors(*state);
}

#define error_table_test(name) \
	{ "test_" #name, test_error_table, NULL, NULL, (void *)#name }

static const char full_fmt[] =
	L("lab:")						/*  1 */
	L("  data_dir: /var/lib/tlblab")			/*  2 */
	L("  listen: \"[::1]:9090\"")				/*  3 */
	L("  tokens: [aaaaaaaaaaaaaaaa1, bbbbbbbbbbbbbbbb2]")	/*  4 */
	L("  token_file: %s")					/*  5 */
	L("  read_requires_token: true")			/*  6 */
	L("  max_body: 2048")					/*  7 */
	L("  workers: 8")					/*  8 */
	L("  stage_timeout: 90.5")				/*  9 */
	L("machines:")						/* 10 */
	L("  - name: m1")					/* 11 */
	L("    transport: ssh")					/* 12 */
	L("    host: 127.0.0.2")				/* 13 */
	L("    port: 2222")					/* 14 */
	L("    user: tlb.user")					/* 15 */
	L("    identity: /keys/id_ed25519")			/* 16 */
	L("    known_hosts: /keys/known_hosts")			/* 17 */
	L("    host_key: " KEY1)				/* 18 */
	L("    arch: aarch64")					/* 19 */
	L("    cpus: 4")					/* 20 */
	L("    tags: [qemu, small]")				/* 21 */
	L("    boot: qemu")					/* 22 */
	L("    power_cycle: [ipmitool, chassis, power, cycle]")	/* 23 */
	L("    agent_path: /opt/agent")				/* 24 */
	L("    workdir: /scratch")				/* 25 */
	L("    qemu:")						/* 26 */
	L("      binary: /opt/qemu/bin/qemu-system-x86_64")	/* 27 */
	L("      memory: 4096")					/* 28 */
	L("      accel: kvm")					/* 29 */
	L("      initrd: /guest/initramfs.cpio")		/* 30 */
	L("      guest_host: \"::1\"")				/* 31 */
	L("      ssh_port: 10022")				/* 32 */
	L("      identity: /guest/lab_key")			/* 33 */
	L("      host_key: " KEY2)				/* 34 */
	L("      known_hosts: /guest/known_hosts")		/* 35 */
	L("      append: \"mitigations=off  nokaslr\"")	/* 36 */
	L("  - name: m2")					/* 37 */
	L("    transport: local")				/* 38 */
	L("builders:")						/* 39 */
	L("  - name: b1")					/* 40 */
	L("    transport: ssh")					/* 41 */
	L("    host: builder.example.org")			/* 42 */
	L("    port: 22")					/* 43 */
	L("    user: build")					/* 44 */
	L("    identity: /keys/b")				/* 45 */
	L("    host_key: " KEY2)				/* 46 */
	L("    jobs: 16")					/* 47 */
	L("    workdir: /build")				/* 48 */
	L("trees:")						/* 49 */
	L("  - name: linux")					/* 50 */
	L("    url: https://git.kernel.org/torvalds/linux.git")	/* 51 */
	L("    builder: b1")					/* 52 */
	L("    config_base: defconfig")				/* 53 */
	L("    fragments: [a.config, /abs/b.config]")		/* 54 */
	L("suites:")						/* 55 */
	L("  - name: tlb")					/* 56 */
	L("    timeout: 600")					/* 57 */
	L("    workloads:")					/* 58 */
	L("      - workload: mprotect")				/* 59 */
	L("        mode: [threads, processes]")			/* 60 */
	L("        workers: 2")					/* 61 */
	L("        duration: 2.5")				/* 62 */
	L("        id: \"42\"")					/* 63 */
	L("        profile: true")				/* 64 */
	L("        neighbour: {workload: mremap, size: 8M}")	/* 65 */
	L("        interval: 500ms")				/* 66 */
	L("        monitors: [vmstat, interrupts]")		/* 67 */
	L("      - workload: exec")				/* 68 */
	L("        command: [sh, -c, 'echo 1']");		/* 69 */

static const char token_file_text[] =
	"# lab tokens\n"
	"\n"
	"  cccccccccccccccc3  \n"
	"\t# an indented comment\n"
	"dddddddddddddddd4\r\n"
	"eeeeeeeeeeeeeeee5";	/* no final newline */

static void test_full(void **state)
{
	char *tokpath = temp_file(token_file_text, strlen(token_file_text));
	struct strbuf text = STRBUF_INIT;
	const struct cfg_machine *m;
	const struct cfg_builder *b;
	const struct cfg_tree *t;
	const struct cfg_suite *s;
	struct lab_config *cfg;
	json_t *want;
	json_error_t jerr;

	(void)state;
	strbuf_addf(&text, full_fmt, tokpath);
	cfg = expect_ok("full.yaml", text.buf);

	assert_string_equal(cfg->path, "full.yaml");
	assert_string_equal(cfg->data_dir, "/var/lib/tlblab");
	assert_string_equal(cfg->listen_host, "::1");
	assert_int_equal(cfg->listen_port, 9090);
	assert_int_equal(cfg->ntokens, 5);
	assert_string_equal(cfg->tokens[0], "aaaaaaaaaaaaaaaa1");
	assert_string_equal(cfg->tokens[1], "bbbbbbbbbbbbbbbb2");
	assert_string_equal(cfg->tokens[2], "cccccccccccccccc3");
	assert_string_equal(cfg->tokens[3], "dddddddddddddddd4");
	assert_string_equal(cfg->tokens[4], "eeeeeeeeeeeeeeee5");
	assert_null(cfg->tokens[5]);
	assert_int_equal(cfg->read_requires_token, 1);
	assert_int_equal(cfg->max_body, 2048);
	assert_int_equal(cfg->workers, 8);
	assert_true(cfg->stage_timeout == 90.5);

	assert_int_equal(cfg->nmachines, 2);
	m = config_machine(cfg, "m1");
	assert_ptr_equal(m, &cfg->machines[0]);
	assert_int_equal(m->line, 11);
	assert_int_equal(m->ep.transport, TRANSPORT_SSH);
	assert_string_equal(m->ep.host, "127.0.0.2");
	assert_int_equal(m->ep.port, 2222);
	assert_string_equal(m->ep.user, "tlb.user");
	assert_string_equal(m->ep.identity, "/keys/id_ed25519");
	assert_string_equal(m->ep.known_hosts, "/keys/known_hosts");
	assert_string_equal(m->ep.host_key, KEY1);
	assert_string_equal(m->arch, "aarch64");
	assert_int_equal(m->cpus, 4);
	assert_int_equal(m->ntags, 2);
	assert_string_equal(m->tags[0], "qemu");
	assert_string_equal(m->tags[1], "small");
	assert_null(m->tags[2]);
	assert_true(config_machine_has_tag(m, "small"));
	assert_false(config_machine_has_tag(m, "big"));
	assert_int_equal(m->boot, BOOT_QEMU);
	assert_non_null(m->power_cycle);
	assert_string_equal(m->power_cycle[0], "ipmitool");
	assert_string_equal(m->power_cycle[3], "cycle");
	assert_null(m->power_cycle[4]);
	assert_string_equal(m->agent_path, "/opt/agent");
	assert_string_equal(m->workdir, "/scratch");
	assert_non_null(m->qemu);
	assert_string_equal(m->qemu->binary, "/opt/qemu/bin/qemu-system-x86_64");
	assert_int_equal(m->qemu->memory, 4096);
	assert_string_equal(m->qemu->accel, "kvm");
	assert_string_equal(m->qemu->initrd, "/guest/initramfs.cpio");
	assert_string_equal(m->qemu->guest_host, "::1");
	assert_int_equal(m->qemu->ssh_port, 10022);
	assert_string_equal(m->qemu->identity, "/guest/lab_key");
	assert_string_equal(m->qemu->host_key, KEY2);
	assert_string_equal(m->qemu->known_hosts, "/guest/known_hosts");
	assert_string_equal(m->qemu->append, "mitigations=off  nokaslr");
	assert_null(m->kexec);

	m = config_machine(cfg, "m2");
	assert_ptr_equal(m, &cfg->machines[1]);
	assert_int_equal(m->line, 37);
	assert_int_equal(m->ep.transport, TRANSPORT_LOCAL);
	assert_null(m->ep.host);
	assert_null(m->qemu);

	assert_int_equal(cfg->nbuilders, 1);
	b = config_builder(cfg, "b1");
	assert_non_null(b);
	assert_int_equal(b->line, 40);
	assert_int_equal(b->ep.transport, TRANSPORT_SSH);
	assert_string_equal(b->ep.host, "builder.example.org");
	assert_int_equal(b->ep.port, 22);
	assert_string_equal(b->ep.user, "build");
	assert_string_equal(b->ep.identity, "/keys/b");
	assert_null(b->ep.known_hosts);
	assert_string_equal(b->ep.host_key, KEY2);
	assert_int_equal(b->jobs, 16);
	assert_string_equal(b->workdir, "/build");

	assert_int_equal(cfg->ntrees, 1);
	t = config_tree(cfg, "linux");
	assert_non_null(t);
	assert_int_equal(t->line, 50);
	assert_string_equal(t->url, "https://git.kernel.org/torvalds/linux.git");
	assert_string_equal(t->builder, "b1");
	assert_string_equal(t->config_base, "defconfig");
	assert_int_equal(t->nfragments, 2);
	assert_string_equal(t->fragments[0], "a.config");
	assert_string_equal(t->fragments[1], "/abs/b.config");
	assert_null(t->fragments[2]);

	assert_int_equal(cfg->nsuites, 1);
	s = config_suite(cfg, "tlb");
	assert_non_null(s);
	assert_int_equal(s->line, 56);
	assert_true(s->timeout == 600);
	/* integers, reals, booleans; quoted and non-numeric stay strings, units
	 * too: the agent reads them with the parser that checked them here */
	want = json_loads("[{\"workload\": \"mprotect\", \"mode\": [\"threads\", \"processes\"],"
			  " \"workers\": 2, \"duration\": 2.5, \"id\": \"42\", \"profile\": true,"
			  " \"neighbour\": {\"workload\": \"mremap\", \"size\": \"8M\"},"
			  " \"interval\": \"500ms\", \"monitors\": [\"vmstat\", \"interrupts\"]},"
			  " {\"workload\": \"exec\", \"command\": [\"sh\", \"-c\", \"echo 1\"]}]",
			  0, &jerr);
	assert_non_null(want);
	if (!json_equal(want, s->workloads)) {
		char *got = json_dumps(s->workloads, JSON_SORT_KEYS);

		fail_msg("workloads: %s", got);
	}
	assert_true(json_is_integer(json_object_get(json_array_get(s->workloads, 0), "workers")));
	assert_true(json_is_real(json_object_get(json_array_get(s->workloads, 0), "duration")));
	json_decref(want);

	assert_null(config_machine(cfg, "m3"));
	assert_null(config_builder(cfg, "m1"));
	assert_null(config_tree(cfg, NULL));
	assert_null(config_suite(NULL, "tlb"));

	config_free(cfg);
	strbuf_release(&text);
	temp_remove(tokpath);
}

static void test_defaults(void **state)
{
	struct lab_config *cfg;
	const struct cfg_machine *m;

	(void)state;
	cfg = expect_ok("min.yaml",
			L("lab:")
			L("  data_dir: data")
			L("machines:")
			L("  - name: q")
			L("    transport: ssh")
			L("    host: 127.0.0.2")
			L("    identity: k")
			L("    known_hosts: kh")
			L("builders:")
			L("  - {name: local, transport: local}")
			L("trees:")
			L("  - {name: linux, url: /src/linux, builder: local}")
			L("suites:")
			L("  - name: s")
			L("    workloads: [{workload: mprotect}]"));
	assert_string_equal(cfg->data_dir, "data");
	assert_string_equal(cfg->listen_host, "127.0.0.1");
	assert_int_equal(cfg->listen_port, 8080);
	assert_int_equal(cfg->ntokens, 0);
	assert_non_null(cfg->tokens);
	assert_null(cfg->tokens[0]);
	assert_int_equal(cfg->read_requires_token, 0);
	assert_int_equal(cfg->max_body, 1 << 20);
	assert_int_equal(cfg->workers, 4);
	assert_true(cfg->stage_timeout == 1800);
	assert_int_equal(cfg->quiet_host, 1);
	assert_int_equal(cfg->max_connections_per_address, 64);
	assert_true(cfg->header_timeout == 10);
	assert_int_equal(cfg->max_jobs_per_token, 20);
	assert_int_equal(cfg->max_boots_per_token, 200);

	m = config_machine(cfg, "q");
	assert_non_null(m);
	assert_int_equal(m->ep.port, 22);
	assert_string_equal(m->ep.user, "root");
	assert_null(m->ep.host_key);
	assert_string_equal(m->arch, "x86_64");
	assert_int_equal(m->cpus, 0);
	assert_int_equal(m->ntags, 0);
	assert_non_null(m->tags);
	assert_null(m->tags[0]);
	assert_false(config_machine_has_tag(m, "qemu"));
	assert_int_equal(m->boot, BOOT_NONE);
	assert_null(m->qemu);
	assert_null(m->kexec);
	assert_null(m->power_cycle);
	assert_string_equal(m->agent_path, "/tmp/tlblab-agent");
	assert_string_equal(m->workdir, "/tmp/tlblab");

	assert_int_equal(config_builder(cfg, "local")->jobs, 2);
	assert_string_equal(config_builder(cfg, "local")->workdir, "/var/cache/tlblab");
	assert_int_equal(config_builder(cfg, "local")->ep.transport, TRANSPORT_LOCAL);
	assert_string_equal(config_tree(cfg, "linux")->config_base, "tinyconfig");
	assert_int_equal(config_tree(cfg, "linux")->nfragments, 0);
	assert_null(config_tree(cfg, "linux")->fragments[0]);
	/* a suite without timeout takes the lab's stage_timeout */
	assert_true(config_suite(cfg, "s")->timeout == 1800);
	config_free(cfg);

	/* only lab.data_dir is required; the stage timeout reaches suites above it */
	cfg = expect_ok("lab-only.yaml",
			L("suites:")
			L("  - {name: s, workloads: [{workload: exec, command: [\"true\"]}]}")
			L("lab: {data_dir: /d, stage_timeout: 60}"));
	assert_int_equal(cfg->nmachines, 0);
	assert_null(cfg->machines);
	assert_true(config_suite(cfg, "s")->timeout == 60);
	config_free(cfg);
}

/* The position of a bad value is the value's, not the key's. */
static void test_bad_port_position(void **state)
{
	(void)state;
	expect_errors("t.yaml",
		      L("lab:")					/* 1 */
		      L("  data_dir: /d")			/* 2 */
		      L("machines:")				/* 3 */
		      L("    - name: m1")			/* 4 */
		      L("      transport: ssh")			/* 5 */
		      L("      host: 127.0.0.2")		/* 6 */
		      L("      port: abc")			/* 7: key col 7, value col 13 */
		      L("      identity: /k")			/* 8 */
		      L("      host_key: " KEY1),		/* 9 */
		      "t.yaml:7:13: port: must be an integer from 1 to 65535");
}

/* Verdict rules per suite and per metric. */
static void test_compare_rules(void **state)
{
	struct lab_config *cfg;
	const struct cfg_suite *s;

	(void)state;
	cfg = expect_ok("c.yaml",
			L("lab:")
			L("  data_dir: /d")
			L("suites:")
			L("  - name: plain")
			L("    workloads: [{workload: mprotect}]")
			L("  - name: strict")
			L("    workloads: [{workload: mprotect}]")
			L("    compare:")
			L("      alpha: 0.001")
			L("      min_change: 1%")
			L("      min_change_counter: 0.1")
			L("      same_band: 0.5%")
			L("      metrics:")
			L("        'interrupts.*': {min_change: 20%}")
			L("        mprotect.ops_per_sec: {alpha: 0.05, same_band: 3%}"));
	s = config_suite(cfg, "plain");
	assert_float_equal(s->rules.alpha, 0.01, 1e-12);
	assert_float_equal(s->rules.min_change_headline, 0.02, 1e-12);
	assert_int_equal(s->rules.noverrides, 0);
	s = config_suite(cfg, "strict");
	assert_float_equal(s->rules.alpha, 0.001, 1e-12);
	assert_float_equal(s->rules.min_change_headline, 0.01, 1e-12);
	assert_float_equal(s->rules.min_change_counter, 0.1, 1e-12);
	assert_float_equal(s->rules.same_band, 0.005, 1e-12);
	assert_int_equal(s->rules.noverrides, 2);
	assert_string_equal(s->rules.overrides[0].metric, "interrupts.*");
	assert_float_equal(s->rules.overrides[0].min_change, 0.2, 1e-12);
	assert_true(isnan(s->rules.overrides[0].alpha));
	assert_string_equal(s->rules.overrides[1].metric, "mprotect.ops_per_sec");
	assert_float_equal(s->rules.overrides[1].alpha, 0.05, 1e-12);
	assert_float_equal(s->rules.overrides[1].same_band, 0.03, 1e-12);
	assert_true(isnan(s->rules.overrides[1].min_change));
	config_free(cfg);

	expect_table_errors("compare_rules");
}

/* boot: reboot takes an optional reboot: section; every default filled in. */
static void test_reboot_section(void **state)
{
	struct lab_config *cfg;
	const struct cfg_machine *m;

	(void)state;
	cfg = expect_ok("r.yaml",
			L("lab: {data_dir: /d}")
			L("machines:")
			L("  - {name: r1, transport: local, boot: reboot}")
			L("  - name: r2")
			L("    transport: local")
			L("    boot: reboot")
			L("    boot_timeout: 900")
			L("    reboot:")
			L("      append: console=ttyS0 panic=-1")
			L("      kernel_dir: /boot/lab")
			L("      initrd: initrd.img-6.1")
			L("      entry_file: /boot/grub/custom.cfg")
			L("      once: [grub-editenv, /boot/grub/grubenv, set, 'next_entry={entry}']")
			L("      command: [systemctl, reboot]"));
	m = config_machine(cfg, "r1");
	assert_non_null(m->reboot);
	assert_null(m->reboot->append);
	assert_string_equal(m->reboot->kernel_dir, "/boot");
	assert_string_equal(m->reboot->grub_dir, "/boot");
	assert_null(m->reboot->initrd);
	assert_string_equal(m->reboot->entry_file, "/boot/grub/custom.cfg");
	assert_string_equal(m->reboot->once[0], "grub-reboot");
	assert_string_equal(m->reboot->once[1], "{entry}");
	assert_null(m->reboot->once[2]);
	assert_string_equal(m->reboot->command[0], "reboot");
	assert_null(m->reboot->command[1]);
	assert_true(m->boot_timeout == 0);	/* the method's default */
	m = config_machine(cfg, "r2");
	assert_true(m->boot_timeout == 900);
	assert_string_equal(m->reboot->append, "console=ttyS0 panic=-1");
	assert_string_equal(m->reboot->kernel_dir, "/boot/lab");
	assert_string_equal(m->reboot->grub_dir, "/boot/lab");	/* kernel_dir by default */
	assert_string_equal(m->reboot->initrd, "initrd.img-6.1");
	assert_string_equal(m->reboot->once[3], "next_entry={entry}");
	assert_string_equal(m->reboot->command[1], "reboot");
	assert_null(config_machine(cfg, "r2")->kexec);
	config_free(cfg);

	expect_table_errors("reboot_section");
}

static void test_values(void **state)
{
	struct lab_config *cfg;

	(void)state;
	/* listen forms */
	cfg = expect_ok("v.yaml", L("lab: {data_dir: /d, listen: '0.0.0.0:1'}"));
	assert_string_equal(cfg->listen_host, "0.0.0.0");
	assert_int_equal(cfg->listen_port, 1);
	config_free(cfg);
	cfg = expect_ok("v.yaml", L("lab: {data_dir: /d, listen: '[fe80::1]:65535'}"));
	assert_string_equal(cfg->listen_host, "fe80::1");
	assert_int_equal(cfg->listen_port, 65535);
	config_free(cfg);
	expect_table_errors("values");

	/* numeric ranges at their edges */
	cfg = expect_ok("v.yaml",
			L("lab: {data_dir: /d, max_body: 1073741824, workers: 64, stage_timeout: 604800}"));
	assert_int_equal(cfg->max_body, 1u << 30);
	assert_int_equal(cfg->workers, 64);
	config_free(cfg);
	/* the lab's sizes and times take the units suites take */
	cfg = expect_ok("v.yaml", L("lab: {data_dir: /d, max_body: 64K, stage_timeout: 45m}"));
	assert_int_equal(cfg->max_body, 64u << 10);
	assert_true(cfg->stage_timeout == 2700);
	config_free(cfg);

	/* inline tokens: at least 16 characters, never echoed */
}

/* boot: qemu takes a qemu: section with its defaults; boot: kexec an optional kexec:. */
/* The limits on what one client or one token may hold of the daemon. */
static void test_client_limits(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("v.yaml", L("lab: {data_dir: /d, max_connections_per_address: 512, header_timeout: 2500ms,")
				  L("      max_jobs_per_token: 1, max_boots_per_token: 1000000}"));
	assert_int_equal(cfg->max_connections_per_address, 512);
	assert_true(cfg->header_timeout == 2.5);
	assert_int_equal(cfg->max_jobs_per_token, 1);
	assert_int_equal(cfg->max_boots_per_token, 1000000);
	config_free(cfg);
	cfg = expect_ok("v.yaml", L("lab: {data_dir: /d, max_connections_per_address: 1, header_timeout: 5m,")
				  L("      max_jobs_per_token: 100000, max_boots_per_token: 1}"));
	assert_int_equal(cfg->max_connections_per_address, 1);
	assert_true(cfg->header_timeout == 300);
	assert_int_equal(cfg->max_jobs_per_token, 100000);
	assert_int_equal(cfg->max_boots_per_token, 1);
	config_free(cfg);
	expect_table_errors("client_limits");
}

static void test_fetch_allow(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("f.yaml", L("lab: {data_dir: /d}"));
	assert_null(cfg->fetch_allow);
	config_free(cfg);
	cfg = expect_ok("f.yaml", L("lab: {data_dir: /d, fetch_allow: [127.0.0.0/8, '::1', 'fd00::/8', 10.1.2.3,")
				  L("      lore.lab.internal]}"));
	assert_non_null(cfg->fetch_allow);
	assert_string_equal(cfg->fetch_allow[0], "127.0.0.0/8");
	assert_string_equal(cfg->fetch_allow[1], "::1");
	assert_string_equal(cfg->fetch_allow[2], "fd00::/8");
	assert_string_equal(cfg->fetch_allow[3], "10.1.2.3");
	assert_string_equal(cfg->fetch_allow[4], "lore.lab.internal");
	assert_null(cfg->fetch_allow[5]);
	config_free(cfg);
	expect_table_errors("fetch_allow");
}

static void test_boot_sections(void **state)
{
	struct lab_config *cfg;
	const struct cfg_machine *m;
	char append[1100];

	(void)state;
	cfg = expect_ok("q.yaml",
			L("lab: {data_dir: /d}")
			L("machines:")
			L("  - name: vm")
			L("    transport: local")
			L("    boot: qemu")
			L("    qemu:")
			L("      initrd: guest/initramfs.cpio")
			L("      ssh_port: 10022")
			L("      identity: guest/lab_key")
			L("      known_hosts: guest/known_hosts")
			L("  - name: k1")
			L("    transport: local")
			L("    boot: kexec")
			L("    kexec: {append: 'console=ttyS0,115200 root=/dev/vda1 ro'}")
			L("  - {name: k2, transport: local, boot: kexec}")
			L("  - {name: k3, transport: local, boot: kexec, kexec: ~}")
			L("  - {name: k4, transport: local, boot: kexec, kexec: {initrd: /boot/initrd.img}}"));
	m = config_machine(cfg, "vm");
	assert_int_equal(m->boot, BOOT_QEMU);
	assert_non_null(m->qemu);
	assert_string_equal(m->qemu->binary, "qemu-system-x86_64");
	assert_int_equal(m->qemu->memory, 1024);
	assert_string_equal(m->qemu->accel, "auto");
	assert_string_equal(m->qemu->initrd, "guest/initramfs.cpio");
	assert_string_equal(m->qemu->guest_host, "127.0.0.1");
	assert_int_equal(m->qemu->ssh_port, 10022);
	assert_string_equal(m->qemu->identity, "guest/lab_key");
	assert_null(m->qemu->host_key);
	assert_string_equal(m->qemu->known_hosts, "guest/known_hosts");
	assert_null(m->qemu->append);
	assert_null(m->kexec);
	m = config_machine(cfg, "k1");
	assert_null(m->qemu);
	assert_non_null(m->kexec);
	assert_string_equal(m->kexec->append, "console=ttyS0,115200 root=/dev/vda1 ro");
	assert_null(m->kexec->initrd);
	/* an initrd on the machine, with the running kernel's command line */
	m = config_machine(cfg, "k4");
	assert_non_null(m->kexec);
	assert_null(m->kexec->append);
	assert_string_equal(m->kexec->initrd, "/boot/initrd.img");
	/* no section, or an empty one: the running kernel's command line */
	assert_null(config_machine(cfg, "k2")->kexec);
	assert_null(config_machine(cfg, "k3")->kexec);
	config_free(cfg);

	/* the edges of each value */
	memset(append, 'a', 1024);
	append[1024] = '\0';
	{
		struct strbuf text = STRBUF_INIT;

		strbuf_addf(&text,
			    L("lab: {data_dir: /d}")
			    L("machines:")
			    L("  - name: vm")
			    L("    transport: local")
			    L("    boot: qemu")
			    L("    qemu: {binary: qemu-system-aarch64, memory: 64, accel: tcg,")
			    L("           initrd: /i, guest_host: 'fe80::1', ssh_port: 65535,")
			    L("           identity: /k, host_key: " KEY1 ", append: %s, pin_vcpus: off}")
			    L("  - name: vm2")
			    L("    transport: local")
			    L("    boot: qemu")
			    L("    qemu: {memory: 1048576, initrd: /i, ssh_port: 1, identity: /k,")
			    L("           host_key: " KEY2 ",")
			    L("           append: ' a.b_c,d=e:f/g+h-0 '}"), append);
		cfg = expect_ok("q.yaml", text.buf);
		m = config_machine(cfg, "vm");
		assert_string_equal(m->qemu->binary, "qemu-system-aarch64");
		assert_int_equal(m->qemu->memory, 64);
		assert_string_equal(m->qemu->accel, "tcg");
		assert_string_equal(m->qemu->guest_host, "fe80::1");
		assert_int_equal(m->qemu->ssh_port, 65535);
		assert_string_equal(m->qemu->append, append);
		assert_int_equal(m->qemu->pin_vcpus, QEMU_PIN_OFF);
		m = config_machine(cfg, "vm2");
		assert_int_equal(m->qemu->pin_vcpus, QEMU_PIN_AUTO);
		assert_int_equal(m->qemu->memory, 1048576);
		assert_int_equal(m->qemu->ssh_port, 1);
		assert_string_equal(m->qemu->append, " a.b_c,d=e:f/g+h-0 ");
		config_free(cfg);
		strbuf_release(&text);
	}
	append[1024] = 'a';
	append[1025] = '\0';
	{
		struct strbuf text = STRBUF_INIT;

		strbuf_addf(&text,
			    L("lab: {data_dir: /d}")
			    L("machines:")
			    L("  - {name: k, transport: local, boot: kexec, kexec: {append: %s}}"),
			    append);
		expect_errors("q.yaml", text.buf,
			      "q.yaml:3:62: append: must be a kernel command line of at most 1024 "
			      "characters: words of letters, digits and '._,=:/+-' separated by spaces");
		strbuf_release(&text);
	}
}

static void test_power_cycle_and_local(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("p.yaml",
			L("lab: {data_dir: /d}")
			L("machines:")
			L("  - name: m")
			L("    transport: local")
			L("    power_cycle: [/usr/bin/pdu, 'off; on', '']")
			L("    tags: ~"));
	assert_string_equal(cfg->machines[0].power_cycle[1], "off; on");
	assert_string_equal(cfg->machines[0].power_cycle[2], "");
	assert_null(cfg->machines[0].power_cycle[3]);
	assert_int_equal(cfg->machines[0].ntags, 0);
	config_free(cfg);
	expect_table_errors("power_cycle_and_local");
}

/* A builder's ccache: a path passed to build.sh, or NULL for its default. */
static void test_builder_ccache(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("c.yaml",
			L("lab: {data_dir: /d}")
			L("builders:")
			L("  - {name: local, transport: local}")
			L("  - {name: shared, transport: local, ccache: /var/cache/ccache}"));
	assert_null(config_builder(cfg, "local")->ccache);
	assert_string_equal(config_builder(cfg, "shared")->ccache, "/var/cache/ccache");
	config_free(cfg);
	expect_table_errors("builder_ccache");
}

/* Which machines and builders share a host's CPUs (the quiet-host rule). */
static void test_host_groups(void **state)
{
	struct lab_config *cfg;
	const struct cfg_builder *b;

	(void)state;
	cfg = expect_ok("h.yaml",
			L("lab: {data_dir: /d}")
			L("machines:")
			L("  - {name: here, transport: local}")
			L("  - {name: far, transport: ssh, host: 10.0.0.2, identity: /k, known_hosts: /h}")
			L("  - {name: far2, transport: ssh, host: 10.0.0.2, identity: /k, known_hosts: /h}")
			L("  - {name: rack, transport: ssh, host: 10.0.0.3, identity: /k, known_hosts: /h,")
			L("     host_group: box1}")
			L("builders:")
			L("  - {name: local, transport: local}")
			L("  - {name: b1, transport: ssh, host: 10.0.0.9, identity: /k, known_hosts: /h,")
			L("     host_group: box1}"));
	b = config_builder(cfg, "local");
	assert_true(config_same_host(&config_machine(cfg, "here")->ep, &b->ep));
	assert_false(config_same_host(&config_machine(cfg, "far")->ep, &b->ep));
	assert_true(config_same_host(&config_machine(cfg, "far")->ep, &config_machine(cfg, "far2")->ep));
	b = config_builder(cfg, "b1");
	assert_true(config_same_host(&config_machine(cfg, "rack")->ep, &b->ep));
	assert_false(config_same_host(&config_machine(cfg, "far")->ep, &b->ep));
	config_free(cfg);
	expect_table_errors("host_groups");
}

static void test_pin_vcpus(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("q.yaml", L("lab: {data_dir: /d, quiet_host: false}"));
	assert_int_equal(cfg->quiet_host, 0);
	config_free(cfg);
	expect_table_errors("pin_vcpus");
}

static void test_token_file(void **state)
{
	static const char bad[] =
		"# first line is a comment\n"
		"short\n"
		"0123456789abcdef\n"
		"has a space in it ok?\n";
	char *good = temp_file(token_file_text, strlen(token_file_text));
	char *badpath = temp_file(bad, strlen(bad));
	struct strbuf text = STRBUF_INIT, want = STRBUF_INIT;
	struct lab_config *cfg;

	(void)state;
	strbuf_addf(&text, L("lab:") L("  data_dir: /d") L("  token_file: %s"), good);
	cfg = expect_ok("tok.yaml", text.buf);
	/* kept: tlblabd makes it 0600 at start-up */
	assert_string_equal(cfg->token_file, good);
	assert_int_equal(cfg->ntokens, 3);
	assert_string_equal(cfg->tokens[0], "cccccccccccccccc3");
	assert_string_equal(cfg->tokens[2], "eeeeeeeeeeeeeeee5");
	config_free(cfg);

	/* each bad line is reported with the token file's line, at the key's value */
	strbuf_reset(&text);
	strbuf_addf(&text, L("lab:") L("  data_dir: /d") L("  token_file: %s"), badpath);
	strbuf_addf(&want, "tok.yaml:3:15: token_file: %s:2: must be a token of 16 to 4096 "
		    "printable characters without spaces\n"
		    "tok.yaml:3:15: token_file: %s:4: must be a token of 16 to 4096 "
		    "printable characters without spaces", badpath, badpath);
	expect_errors("tok.yaml", text.buf, want.buf);

	strbuf_reset(&text);
	strbuf_addf(&text, L("lab:") L("  data_dir: /d") L("  token_file: /nonexistent/tokens"));
	expect_errors("tok.yaml", text.buf,
		      "tok.yaml:3:15: token_file: cannot read /nonexistent/tokens: No such file "
		      "or directory");
	expect_table_errors("token_file");

	strbuf_release(&text);
	strbuf_release(&want);
	temp_remove(good);
	temp_remove(badpath);
}

/* YAML scalars become JSON types as the agent's spec parser expects them. */
static void test_workload_conversion(void **state)
{
	struct lab_config *cfg;
	json_t *w;

	(void)state;
	cfg = expect_ok("w.yaml",
			L("lab: {data_dir: /d}")
			L("suites:")
			L("  - name: s")
			L("    workloads:")
			L("      - workload: tcp-rr")
			L("        workers: +5")
			L("        duration: 5e-1")
			L("        request_size: 1K")
			L("        response_size: '4096'")
			L("        id: 'true'")
			L("        profile: false")
			L("      - workload: mprotect")
			L("        id: |")
			L("          12")
			L("      - {workload: mprotect, id: ''}"));
	w = json_array_get(cfg->suites[0].workloads, 0);
	assert_int_equal(json_integer_value(json_object_get(w, "workers")), 5);
	assert_true(json_real_value(json_object_get(w, "duration")) == 0.5);
	assert_string_equal(json_string_value(json_object_get(w, "request_size")), "1K");
	assert_string_equal(json_string_value(json_object_get(w, "response_size")), "4096");
	assert_string_equal(json_string_value(json_object_get(w, "id")), "true");
	assert_true(json_is_false(json_object_get(w, "profile")));
	w = json_array_get(cfg->suites[0].workloads, 1);
	assert_string_equal(json_string_value(json_object_get(w, "id")), "12\n");
	w = json_array_get(cfg->suites[0].workloads, 2);
	assert_string_equal(json_string_value(json_object_get(w, "id")), "");
	config_free(cfg);

	/* what YAML 1.1 would read as numbers or booleans stays text, and the
	 * agent's parser says so at load: a number too big for an integer is a
	 * real, "yes" and ".inf" are strings, ~ is null, a quoted number a string */
	expect_table_errors("workload_conversion");

}

/*
 * Each workload spec is checked at load by the agent's own parser, so a
 * spec the agent would refuse after a build and a boot fails `tlblabd -n`,
 * at the position of the field the parser names.
 */
static void test_suite_specs(void **state)
{
	const struct cfg_suite *s;
	struct lab_config *cfg;
	json_t *w;

	(void)state;
	/* units as users write them; the suite keeps the text for the agent */
	cfg = expect_ok("u.yaml",
			L("lab: {data_dir: /d}")
			L("suites:")
			L("  - name: s")
			L("    timeout: 10m")
			L("    workloads:")
			L("      - workload: fault-write")
			L("        size: 32M")
			L("        duration: 2s")
			L("      - workload: mremap")
			L("        size: [4M, 8MiB, 16777216]")
			L("        interval: 500ms")
			L("        neighbour: {workload: tcp-rr, response_size: 64K}")
			L("      - {workload: exec, command: [sleep, '1'], timeout: 1m}"));
	s = config_suite(cfg, "s");
	assert_true(s->timeout == 600);
	w = json_array_get(s->workloads, 0);
	assert_string_equal(json_string_value(json_object_get(w, "size")), "32M");
	assert_string_equal(json_string_value(json_object_get(w, "duration")), "2s");
	w = json_array_get(s->workloads, 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(w, "size"), 2)), 16 << 20);
	config_free(cfg);

	/* a bad value: its own position */
	expect_table_errors("suite_specs");

	/* an unknown parameter, or one of another workload: the key's position;
	 * a matrix list: the bad element's, in flow and in block style */

	/* neighbours: a bad value inside, a missing workload (the neighbour's
	 * mapping), not a mapping at all; a key with a dot is not a path */

	/* a field that is missing: the workload's mapping; one error per spec,
	 * sorted with the others of the file */
}

/* The token everyone has read in configs/lab.example.yaml opens nothing:
 * refused inline and in a token file, at its line. */
static void test_example_token(void **state)
{
	static const char file_text[] = "# tokens\n" "ffffffffffffffff6\n" "  " CONFIG_EXAMPLE_TOKEN "  \n";
	char *path = temp_file(file_text, strlen(file_text));
	struct strbuf text = STRBUF_INIT, want = STRBUF_INIT;
	struct lab_config *cfg;

	(void)state;
	expect_errors("ex.yaml",
		      L("lab:")
		      L("  data_dir: /d")
		      L("  tokens: [aaaaaaaaaaaaaaaa1, " CONFIG_EXAMPLE_TOKEN "]"),
		      "ex.yaml:3:31: tokens[1]: it is the example token of configs/lab.example.yaml, "
		      "known to everyone; make a token of your own (e.g. head -c 24 /dev/urandom | "
		      "od -An -tx1 | tr -d ' \\n')");
	strbuf_addf(&text, L("lab:") L("  data_dir: /d") L("  token_file: %s"), path);
	strbuf_addf(&want, "ex.yaml:3:15: token_file: %s:3: it is the example token of "
		    "configs/lab.example.yaml, known to everyone; make a token of your own (e.g. "
		    "head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \\n')", path);
	expect_errors("ex.yaml", text.buf, want.buf);
	/* a token that merely starts like it is the operator's own */
	cfg = expect_ok("ex.yaml", L("lab:") L("  data_dir: /d")
			L("  tokens: [" CONFIG_EXAMPLE_TOKEN "-but-mine]"));
	assert_int_equal(cfg->ntokens, 1);
	config_free(cfg);
	strbuf_release(&text);
	strbuf_release(&want);
	temp_remove(path);
}

/* Which Host headers the API answers (DNS rebinding: a name of the
 * attacker's resolving to 127.0.0.1 must not reach the lab). */
static void test_allowed_hosts(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("h.yaml", L("lab:") L("  data_dir: /d") L("  listen: 127.0.0.5:8080"));
	assert_null(cfg->allowed_hosts);
	assert_true(config_host_allowed(cfg, "127.0.0.5:8080"));
	assert_true(config_host_allowed(cfg, "127.0.0.5"));
	assert_true(config_host_allowed(cfg, "localhost:8080"));
	assert_true(config_host_allowed(cfg, "LocalHost"));
	assert_true(config_host_allowed(cfg, "localhost.:8080"));
	assert_true(config_host_allowed(cfg, "127.0.0.1:8080"));
	assert_true(config_host_allowed(cfg, "[::1]:8080"));
	assert_true(config_host_allowed(cfg, NULL));	/* HTTP/1.0 without Host */
	assert_false(config_host_allowed(cfg, "evil.example"));
	assert_false(config_host_allowed(cfg, "evil.example:8080"));
	assert_false(config_host_allowed(cfg, "localhost.evil.example"));
	assert_false(config_host_allowed(cfg, "127.0.0.1.evil.example"));
	assert_false(config_host_allowed(cfg, "localhost:8080@evil.example"));
	assert_false(config_host_allowed(cfg, "localhost:"));
	assert_false(config_host_allowed(cfg, "[::1"));
	assert_false(config_host_allowed(cfg, "[::1]x"));
	assert_false(config_host_allowed(cfg, ""));
	assert_false(config_host_allowed(cfg, ":8080"));
	config_free(cfg);

	cfg = expect_ok("h.yaml", L("lab:") L("  data_dir: /d") L("  listen: \"[::]:8080\"")
			L("  allowed_hosts: [tlblab.example.org, 192.0.2.7, \"2001:db8::7\"]"));
	assert_true(config_host_allowed(cfg, "tlblab.example.org"));
	assert_true(config_host_allowed(cfg, "TLBLAB.example.org:443"));
	assert_true(config_host_allowed(cfg, "192.0.2.7:8080"));
	assert_true(config_host_allowed(cfg, "[2001:db8::7]:8080"));
	assert_true(config_host_allowed(cfg, "[::]:8080"));
	assert_false(config_host_allowed(cfg, "example.org"));
	assert_false(config_host_allowed(cfg, "192.0.2.8"));
	config_free(cfg);

	expect_table_errors("allowed_hosts");
}

static void test_example_file(void **state)
{
	struct strbuf err = STRBUF_INIT, text = STRBUF_INIT, fixed = STRBUF_INIT, want = STRBUF_INIT;
	struct lab_config *cfg = NULL;
	const char *tok, *bol;
	size_t line = 1;

	(void)state;
	/* as shipped, it is refused for its token alone, at the token */
	if (strbuf_read_file(&text, "configs/lab.example.yaml", 1 << 20) < 0)
		fail_msg("configs/lab.example.yaml: run from the repository root");
	tok = strstr(text.buf, "tokens: [" CONFIG_EXAMPLE_TOKEN "]");
	assert_non_null(tok);
	bol = text.buf;
	for (const char *p = text.buf; p < tok; p++)
		if (*p == '\n') {
			line++;
			bol = p + 1;
		}
	assert_int_equal(config_load("configs/lab.example.yaml", &cfg, &err), -1);
	assert_null(cfg);
	strbuf_addf(&want, "configs/lab.example.yaml:%zu:%zu: tokens[0]: it is the example token of "
		    "configs/lab.example.yaml, known to everyone; make a token of your own (e.g. "
		    "head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \\n')", line,
		    (size_t)(tok + strlen("tokens: [") - bol) + 1);
	assert_string_equal(err.buf, want.buf);
	/* with a token of the operator's, every other key of it is valid */
	strbuf_add(&fixed, text.buf, (size_t)(tok - text.buf));
	strbuf_addstr(&fixed, "tokens: [a-token-of-our-own-0123456789]");
	strbuf_addstr(&fixed, tok + strlen("tokens: [" CONFIG_EXAMPLE_TOKEN "]"));
	if (config_load_string("lab.example.yaml", fixed.buf, fixed.len, &cfg, &err) < 0)
		fail_msg("configs/lab.example.yaml with its token replaced:\n%s", err.buf);
	assert_string_equal(cfg->allowed_hosts[0], "tlblab.lab.example.org");
	assert_null(cfg->allowed_hosts[1]);
	strbuf_release(&text);
	strbuf_release(&fixed);
	strbuf_release(&want);
	assert_int_equal(cfg->nmachines, 3);
	assert_int_equal(config_machine(cfg, "skylake-2s")->boot, BOOT_KEXEC);
	assert_non_null(config_machine(cfg, "skylake-2s")->kexec->append);
	assert_int_equal(config_machine(cfg, "skylake-2s")->ep.transport, TRANSPORT_SSH);
	assert_string_equal(config_machine(cfg, "skylake-2s")->power_cycle[0], "ipmitool");
	assert_int_equal(config_machine(cfg, "nuc-1")->boot, BOOT_REBOOT);
	assert_int_equal(config_machine(cfg, "vm-1")->boot, BOOT_QEMU);
	assert_int_equal(config_machine(cfg, "vm-1")->qemu->ssh_port, 10022);
	assert_int_equal(config_builder(cfg, "local")->ep.transport, TRANSPORT_LOCAL);
	assert_string_equal(config_tree(cfg, "linux")->builder, "local");
	assert_int_equal(json_array_size(config_suite(cfg, "tlb")->workloads), 2);
	config_free(cfg);
	strbuf_release(&err);
}

static void test_load_file(void **state)
{
	static const char ok[] = "lab: {data_dir: /d}\n";
	struct strbuf err = STRBUF_INIT, want = STRBUF_INIT;
	struct lab_config *cfg = NULL;
	char *path = temp_file(ok, strlen(ok));
	char *big;
	size_t bigsz = (4u << 20) + 1;

	(void)state;
	assert_int_equal(config_load(path, &cfg, &err), 0);
	assert_string_equal(cfg->path, path);
	config_free(cfg);
	cfg = NULL;
	temp_remove(path);

	assert_int_equal(config_load("/nonexistent/lab.yaml", &cfg, &err), -1);
	assert_null(cfg);
	assert_string_equal(err.buf, "/nonexistent/lab.yaml: cannot read: No such file or directory");

	/* a position is in the message of a file too, and err is replaced, not appended */
	path = temp_file("lab: {data_dir: /d, workers: 0}\n", 32);
	assert_int_equal(config_load(path, &cfg, &err), -1);
	strbuf_addf(&want, "%s:1:30: workers: must be an integer from 1 to 64", path);
	assert_string_equal(err.buf, want.buf);
	temp_remove(path);

	big = malloc(bigsz);
	assert_non_null(big);
	memset(big, '#', bigsz);
	path = temp_file(big, bigsz);
	assert_int_equal(config_load(path, &cfg, &err), -1);
	assert_null(cfg);
	strbuf_reset(&want);
	strbuf_addf(&want, "%s: cannot read: larger than 4096 KiB", path);
	assert_string_equal(err.buf, want.buf);
	assert_int_equal(config_load_string("big.yaml", big, bigsz, &cfg, &err), -1);
	assert_string_equal(err.buf, "big.yaml: larger than 4096 KiB");
	temp_remove(path);
	free(big);

	/* more errors than are worth showing are cut, and say so */
	{
		struct strbuf many = STRBUF_INIT;

		strbuf_addstr(&many, "lab:\n  data_dir: /d\nmachines:\n");
		for (int i = 0; i < 150; i++)
			strbuf_addf(&many, "  - {name: m%d, transport: nope}\n", i);
		assert_int_equal(config_load_string("many.yaml", many.buf, many.len, &cfg, &err), -1);
		assert_contains(err.buf, "many.yaml:4:27: transport: must be local or ssh\n");
		assert_contains(err.buf, "many.yaml:103:28: transport: must be local or ssh\n"
				"many.yaml: 50 more errors not shown");
		strbuf_release(&many);
	}
	strbuf_release(&err);
	strbuf_release(&want);
}

static void test_names(void **state)
{
	char name64[66];

	(void)state;
	assert_true(config_valid_name("m1"));
	assert_true(config_valid_name("a.b_c-d"));
	assert_true(config_valid_name("_x"));
	assert_false(config_valid_name(NULL));
	assert_false(config_valid_name(""));
	assert_false(config_valid_name("-x"));
	assert_false(config_valid_name(".x"));
	assert_false(config_valid_name("a b"));
	assert_false(config_valid_name("a/b"));
	assert_false(config_valid_name("m1;reboot"));
	assert_false(config_valid_name("$(id)"));
	memset(name64, 'a', 64);
	name64[64] = '\0';
	assert_true(config_valid_name(name64));
	name64[64] = 'a';
	name64[65] = '\0';
	assert_false(config_valid_name(name64));

	assert_string_equal(config_transport_kind_name(TRANSPORT_LOCAL), "local");
	assert_string_equal(config_transport_kind_name(TRANSPORT_SSH), "ssh");
	assert_string_equal(config_boot_method_name(BOOT_NONE), "none");
	assert_string_equal(config_boot_method_name(BOOT_QEMU), "qemu");
	assert_string_equal(config_boot_method_name(BOOT_KEXEC), "kexec");
	assert_string_equal(config_boot_method_name(BOOT_REBOOT), "reboot");
	assert_false(config_machine_has_tag(NULL, "x"));
	config_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_bad_port_position),
		error_table_test(unknown_key),
		error_table_test(many_errors),
		error_table_test(yaml_syntax),
		error_table_test(document_shape),
		error_table_test(required_keys),
		error_table_test(injection),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_client_limits),
		cmocka_unit_test(test_fetch_allow),
		cmocka_unit_test(test_boot_sections),
		error_table_test(boot_section_errors),
		cmocka_unit_test(test_power_cycle_and_local),
		cmocka_unit_test(test_host_groups),
		cmocka_unit_test(test_pin_vcpus),
		cmocka_unit_test(test_builder_ccache),
		cmocka_unit_test(test_token_file),
		cmocka_unit_test(test_workload_conversion),
		cmocka_unit_test(test_suite_specs),
		error_table_test(alias_bomb),
		cmocka_unit_test(test_example_token),
		cmocka_unit_test(test_allowed_hosts),
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_compare_rules),
		cmocka_unit_test(test_reboot_section),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
