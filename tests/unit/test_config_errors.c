/*
 * How the configuration loader reports what is wrong: the exact
 * "FILE:LINE:COL: message" lines of each class of error (YAML syntax, the
 * document's shape, unknown and missing keys, values that would reach a
 * command), several at once, sorted by position, and the limit on what
 * aliases may expand to.
 */
#include "testlib.h"

#include "fixture_config.h"
#include "banned.h"

static const struct error_case error_cases[] = {
	/* test_bad_port_position: the position of a bad value is the value's,
	 * not the key's */
	{ "bad_port_position", "t.yaml",
	  L("lab:")					/* 1 */
	  L("  data_dir: /d")				/* 2 */
	  L("machines:")				/* 3 */
	  L("    - name: m1")				/* 4 */
	  L("      transport: ssh")			/* 5 */
	  L("      host: 127.0.0.2")			/* 6 */
	  L("      port: abc")				/* 7: key col 7, value col 13 */
	  L("      identity: /k")			/* 8 */
	  L("      host_key: " KEY1),			/* 9 */
	  "t.yaml:7:13: port: must be an integer from 1 to 65535" },
	/* test_unknown_key */
	{ "unknown_key", "lab.yaml",
	  LAB_BLOCK				/* 1-2 */
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
	  "lab.yaml:10:11: name: " MUST_BE_NAME "\n"
	  "lab.yaml:11:1: unknown section 'machine' in the configuration " SECTIONS },
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
	  "t.yaml:7:12: workers: must be an integer from 1 to 256\n"
	  "t.yaml:9:7: missing key 'host' in machine 'm1' (required with transport ssh)\n"
	  "t.yaml:11:13: port: must be an integer from 1 to 65535\n"
	  "t.yaml:12:7: unknown key 'hots' in machine 'm1'\n"
	  "t.yaml:15:13: duplicate machine name 'm1' (first defined at line 9)\n"
	  "t.yaml:17:7: host: only used with transport ssh (in machine 'm1')\n"
	  "t.yaml:17:13: host: " MUST_BE_HOST "\n"
	  "t.yaml:18:13: cpus: must be an integer from 0 to 4096\n"
	  "t.yaml:19:13: boot: must be kexec, none, qemu or reboot\n"
	  "t.yaml:20:18: tags[1]: " MUST_BE_NAME "\n"
	  "t.yaml:23:16: transport: must be local or ssh\n"
	  "t.yaml:24:11: jobs: must be an integer from 1 to 256\n"
	  "t.yaml:27:14: timeout: " MUST_BE_SECONDS("1 to 604800") "\n"
	  "t.yaml:29:9: workloads[0]: missing key 'workload' (the name of the workload to run)" },
	/*
	 * test_yaml_syntax: libyaml's own problem text, at its problem mark; a
	 * parser error carries its context too; the reader's errors have only
	 * an offset: still a line and column.
	 */
	{ "yaml_syntax", "lab.yaml",
	  LAB_BLOCK
	  L("a: b: c"),
	  "lab.yaml:3:5: mapping values are not allowed in this context" },
	{ "yaml_syntax", "lab.yaml",
	  LAB_BLOCK
	  L(" workers: 2"),
	  "lab.yaml:3:2: did not find expected key (while parsing a block mapping at line 1, "
	  "column 1)" },
	{ "yaml_syntax", "lab.yaml",
	  L("lab:")
	  L("  data_dir: \"/d"),
	  "lab.yaml:3:1: found unexpected end of stream (while scanning a quoted scalar at line 2, "
	  "column 13)" },
	{ "yaml_syntax", "lab.yaml",
	  L("lab: *nothing"),
	  "lab.yaml:1:6: found undefined alias" },
	{ "yaml_syntax", "bin.yaml",
	  "lab:\n"
	  "  data_dir: /d\xff\n",
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
	  "e.yaml:1:1: the configuration must be a mapping with the sections lab, machines, "
	  "builders, trees, suites, notify, tracks and defaults" },
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
	  LAB
	  L("---")
	  L("lab: {data_dir: /e}"),
	  "e.yaml:3:1: only one YAML document is allowed" },
	{ "document_shape", "e.yaml",
	  LAB
	  L("lab: {data_dir: /e}"),
	  "e.yaml:2:1: duplicate key 'lab' in the configuration " SECTIONS " (first at line 1)" },
	{ "document_shape", "e.yaml",
	  LAB
	  L("machines: {name: m1}")
	  L("builders: [m1]"),
	  "e.yaml:2:11: machines: must be a list of mappings\n"
	  "e.yaml:3:12: builders[0]: must be a mapping" },
	{ "document_shape", "e.yaml",
	  LAB
	  L("suites:")
	  L("  - name: s"),
	  "e.yaml:3:5: missing key 'workloads' in suite 's'" },
	{ "document_shape", "e.yaml",
	  LAB
	  L("suites:")
	  L("  - {name: s, workloads: []}")
	  L("  - {name: t, workloads: [mprotect, {workload: [a]}]}"),
	  "e.yaml:3:26: workloads: must be a non-empty list of workload specs (mappings with a "
	  "'workload' key)\n"
	  "e.yaml:4:27: workloads[0]: must be a mapping with a 'workload' key\n"
	  "e.yaml:4:48: workload: must be the name of a workload" },
	/* test_required_keys */
	{ "required_keys", "r.yaml",
	  MACHINES				/* 1-2 */
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
	  "r.yaml:3:5: missing key 'known_hosts' or 'host_key' in machines[0] (transport ssh "
	  "checks the host key strictly)\n"
	  "r.yaml:4:5: missing key 'transport' in machine 'm2' (local or ssh)\n"
	  "r.yaml:7:5: missing key 'known_hosts' or 'host_key' in builder 'b' (transport ssh "
	  "checks the host key strictly)\n"
	  "r.yaml:12:5: missing key 'url' in tree 't' (a path or git URL)\n"
	  "r.yaml:12:5: missing key 'builder' in tree 't'" },
	/*
	 * test_injection: Values that reach commands: no shell metacharacters,
	 * no options.
	 */
	{ "injection", "i.yaml",
	  MACHINES				/* 1-2 */
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
	  "i.yaml:3:11: name: " MUST_BE_NAME "\n"
	  "i.yaml:5:11: host: " MUST_BE_HOST "\n"
	  "i.yaml:6:11: user: must be a user name of letters, digits, '.', '_' and '-', not "
	  "starting with '-'\n"
	  "i.yaml:7:15: identity: " MUST_BE_PATH "\n"
	  "i.yaml:8:15: host_key: " MUST_BE_HOST_KEY "\n"
	  "i.yaml:11:11: host: " MUST_BE_HOST "\n"
	  "i.yaml:12:15: identity: " MUST_BE_PATH "\n"
	  "i.yaml:13:18: known_hosts: " MUST_BE_PATH "\n"
	  "i.yaml:14:14: workdir: " MUST_BE_PATH "\n"
	  "i.yaml:16:12: name: " MUST_BE_NAME "\n"
	  "i.yaml:18:20: url: must be a path or git URL without control characters, not starting "
	  "with '-'\n"
	  "i.yaml:18:46: builder: no builder named 'x'" },
	/*
	 * test_alias_bomb: Aliases are expanded into JSON: a "billion laughs"
	 * must hit the limit; the 33rd '[' (col 47) is one level too deep.
	 */
	{ "alias_bomb", "b.yaml",
	  LAB
	  L("x: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"),
	  "b.yaml:2:1: unknown section 'x' in the configuration " SECTIONS },
	{ "alias_bomb", "b.yaml",
	  SUITE_S
	  L("      - workload: exec")
	  L("        a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]")
	  L("        b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]")
	  L("        c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]")
	  L("        d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]")
	  L("        e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]")
	  L("        f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]"),
	  "b.yaml:6:40: workload spec too large or nested deeper than 32 levels" },
	{ "alias_bomb", "b.yaml",
	  SUITE_S
	  L("      - workload: exec")
	  L("        deep: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"),
	  "b.yaml:6:47: workload spec too large or nested deeper than 32 levels" },
};

int main(void)
{
	const struct CMUnitTest tests[] = {
		error_table_test(bad_port_position),
		error_table_test(unknown_key),
		error_table_test(many_errors),
		error_table_test(yaml_syntax),
		error_table_test(document_shape),
		error_table_test(required_keys),
		error_table_test(injection),
		error_table_test(alias_bomb),
	};

	return cmocka_run_group_tests_name("config_errors", tests, NULL, NULL);
}
