/*
 * Suites in the configuration: YAML scalars become the JSON types the
 * agent's spec parser expects, each workload spec is checked at load by
 * that parser, and a suite's verdict rules (compare:).
 */
#include "testlib.h"

#include <math.h>

#include "fixture_config.h"
#include "boot_qemu.h"
#include "jsonget.h"
#include "banned.h"

static const struct error_case error_cases[] = {
	/* test_compare_rules */
	{ "compare_rules", "c.yaml",
	  LAB_BLOCK				/* 1-2 */
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
	  "c.yaml:12:9: metrics: must be a metric name or pattern of 1 to 128 letters, digits and "
	  "'._-*?[]'\n"
	  "c.yaml:13:31: unknown key 'bogus' in the rule for 'x.y' in the compare section of suite "
	  "'s'\n"
	  "c.yaml:14:12: metrics: 'z': must be a mapping with alpha, min_change or same_band" },
	/*
	 * test_workload_conversion: what YAML 1.1 would read as numbers or
	 * booleans stays text, and the agent's parser says so at load: a number
	 * too big for an integer is a real, "yes" and ".inf" are strings, ~ is
	 * null, a quoted number a string
	 */
	{ "workload_conversion", "w.yaml",
	  SUITE_S				/* 1-4 */
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
	  "w.yaml:10:19: duration: " MUST_BE_SECONDS("0.1 to 86400") " (got '.inf')\n"
	  "w.yaml:12:13: id: must be a string of at most 128 bytes\n"
	  "w.yaml:14:18: workers: must be an integer from 1 to 1024, or cpus (one a CPU it may run on)" },
	{ "workload_conversion", "w.yaml",
	  SUITE_S				/* 1-4 */
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
	/* test_suite_specs: a bad value: its own position */
	{ "suite_specs", "u.yaml",
	  SUITE_S				/* 1-4 */
	  L("      - workload: fault-write")		/* 5 */
	  L("        size: 8Q"),
	  /* 6: col 15 */
	  "u.yaml:6:15: size: " MUST_BE_BYTES("4K to 64G") " (got '8Q')" },
	/* an unknown parameter, or one of another workload: the key's position;
	 * a matrix list: the bad element's, in flow and in block style */
	{ "suite_specs", "u.yaml",
	  SUITE_S				/* 1-4 */
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
	  "u.yaml:10:24: size[2]: " MUST_BE_BYTES("4K to 64G") " (got '2x')\n"
	  "u.yaml:14:13: request_size[1]: " MUST_BE_BYTES("1 to 1M") " (got '2M')\n"
	  "u.yaml:16:28: monitors[1]: unknown monitor (one of interrupts, procstat, profile, "
	  "tracepoints, vmstat)" },
	/* neighbours: a bad value inside, a missing workload (the neighbour's
	 * mapping), not a mapping at all; a key with a dot is not a path */
	{ "suite_specs", "u.yaml",
	  SUITE_S				/* 1-4 */
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
	  "u.yaml:8:20: neighbour.workers: must be an integer from 1 to 1024, or cpus (one a CPU it may run on)\n"
	  "u.yaml:10:20: neighbour.workload: missing (one of mprotect, mremap, fault-write, "
	  "tcp-rr, stencil, exec)\n"
	  "u.yaml:11:41: neighbour: must be an object with a workload\n"
	  "u.yaml:14:9: neighbour.workers: unknown field\n"
	  "u.yaml:18:46: neighbour.grid: 4 workers need at least 6 points along x" },
	/* a field that is missing: the workload's mapping; one error per spec,
	 * sorted with the others of the file */
	{ "suite_specs", "u.yaml",
	  L("lab: {data_dir: /d, workers: 0}")		/* 1: col 30 */
	  L("suites:")					/* 2 */
	  L("  - name: s")					/* 3 */
	  L("    workloads:")				/* 4 */
	  L("      - workload: exec")			/* 5: col 9 */
	  L("        parser: none")				/* 6 */
	  L("      - workload: mprotect")			/* 7 */
	  L("        duration: 0.01")			/* 8: col 19 */
	  L("        workers: 0")				/* 9 */
	  L("  - {name: t, tlb_model: yes, workloads: [{workload: mprotect}]}"),	/* 10: col 26 */
	  "u.yaml:1:30: workers: must be an integer from 1 to 256\n"
	  "u.yaml:5:9: command: missing (exec needs the command to run)\n"
	  "u.yaml:8:19: duration: " MUST_BE_SECONDS("0.1 to 86400") "\n"
	  "u.yaml:10:26: tlb_model: must be on or off (the instruction plugin's TLB model in this suite's boots, "
	  "where a machine allows it; in suite 't')" },
	/* test_guest_cpus: a count no qemu machine allows, twice, out of
	 * bounds, not a list of counts; a sweep whose run would outlast the
	 * suite's timeout, at the count that does */
	{ "guest_cpus", "g.yaml",
	  MACHINES				/* 1-2 */
	  L("  - name: q1")					/* 3 */
	  L("    transport: local")			/* 4 */
	  L("    boot: qemu")				/* 5 */
	  L("    qemu: {accel: icount, initrd: /i, ssh_port: 2222, identity: /k, known_hosts: /h, max_cpus: 65}")	/* 6: col 96 */
	  L("  - name: q2")					/* 7 */
	  L("    transport: local")			/* 8 */
	  L("    boot: qemu")				/* 9 */
	  L("    qemu: {accel: icount, initrd: /i, ssh_port: 2223, identity: /k, known_hosts: /h}")	/* 10 */
	  L("suites:")					/* 11 */
	  L("  - name: s")					/* 12 */
	  L("    guest_cpus: [2, 0, 2, 17, many]")		/* 13: cols 21, 24, 27, 31 */
	  L("    workloads: [{workload: mprotect, duration: 2}]")	/* 14 */
	  L("  - name: t")					/* 15 */
	  L("    timeout: 100")				/* 16 */
	  L("    guest_cpus: [2, 16]")			/* 17: col 21 */
	  L("    workloads: [{workload: mprotect, mode: [threads, processes], duration: 5, iterations: 4}]")	/* 18 */
	  L("  - {name: u, guest_cpus: [], workloads: [{workload: mprotect}]}")	/* 19: col 27 */
	  L("  - {name: v, guest_cpus: {a: 1}, workloads: [{workload: mprotect}]}"),	/* 20: col 27 */
	  "g.yaml:6:96: max_cpus: must be an integer from 1 to 64\n"
	  "g.yaml:13:21: guest_cpus: must be an integer from 1 to 64\n"
	  "g.yaml:13:24: guest_cpus: 2 is listed twice (in suite 's')\n"
	  "g.yaml:13:27: guest_cpus: 17 vCPUs is more than any qemu machine of the lab allows (at most 16, "
	  "machine 'q1'; its qemu section's max_cpus) (in suite 's')\n"
	  "g.yaml:13:31: guest_cpus: must be an integer from 1 to 64\n"
	  "g.yaml:17:21: guest_cpus: a run at 16 vCPUs is estimated at 400 s (50 s of windows x 16 vCPUs x "
	  "0.5 host s per guest s and vCPU under icount), over the suite's timeout of 100 s (in suite 't')\n"
	  "g.yaml:19:27: guest_cpus: must be a vCPU count from 1 to 64, or a list of at most 8 of them like "
	  "[2, 8] (in suite 'u')\n"
	  "g.yaml:20:27: guest_cpus: must be a vCPU count from 1 to 64, or a list of at most 8 of them like "
	  "[2, 8] (in suite 'v')" },
	/* a lab without a qemu machine has nothing to boot at a count */
	{ "guest_cpus", "g.yaml",
	  SUITE_S				/* 1-4 */
	  L("      - workload: mprotect")			/* 5 */
	  L("    guest_cpus: 4"),			/* 6: col 17 */
	  "g.yaml:6:17: guest_cpus: the lab has no qemu machine to boot a guest at these counts "
	  "(in suite 's')" },
};

/* YAML scalars become JSON types as the agent's spec parser expects them. */
CONFIG_TEST(workload_conversion, "w.yaml",
	    SUITE_S
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
	    L("      - {workload: mprotect, id: ''}"))
{
	json_t *w;

	w = json_array_get(cfg->suites[0].workloads, 0);
	assert_int_equal(jsonget_int_or(w, "workers", 0), 5);
	assert_true(json_real_value(json_object_get(w, "duration")) == 0.5);
	assert_string_equal(jsonget_str(w, "request_size"), "1K");
	assert_string_equal(jsonget_str(w, "response_size"), "4096");
	assert_string_equal(jsonget_str(w, "id"), "true");
	assert_true(json_is_false(json_object_get(w, "profile")));
	w = json_array_get(cfg->suites[0].workloads, 1);
	assert_string_equal(jsonget_str(w, "id"), "12\n");
	w = json_array_get(cfg->suites[0].workloads, 2);
	assert_string_equal(jsonget_str(w, "id"), "");
}

/*
 * Each workload spec is checked at load by the agent's own parser, so a
 * spec the agent would refuse after a build and a boot fails `tlblabd -n`,
 * at the position of the field the parser names. Units are as users write
 * them; the suite keeps the text for the agent.
 */
CONFIG_TEST(suite_specs, "u.yaml",
	    LAB
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
	    L("      - {workload: exec, command: [sleep, '1'], timeout: 1m}"))
{
	const struct cfg_suite *s;
	json_t *w;

	s = config_suite(cfg, "s");
	assert_true(s->timeout == 600);
	w = json_array_get(s->workloads, 0);
	assert_string_equal(jsonget_str(w, "size"), "32M");
	assert_string_equal(jsonget_str(w, "duration"), "2s");
	w = json_array_get(s->workloads, 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(w, "size"), 2)), 16 << 20);
}

/* Verdict rules per suite and per metric. */
CONFIG_TEST(compare_rules, "c.yaml",
	    LAB_BLOCK
	    L("suites:")
	    L("  - name: plain")
	    L("    workloads: [{workload: mprotect}]")
	    L("  - name: strict")
	    L("    workloads: [{workload: mprotect}]")
	    L("    tlb_model: on")
	    L("    compare:")
	    L("      alpha: 0.001")
	    L("      min_change: 1%")
	    L("      min_change_counter: 0.1")
	    L("      same_band: 0.5%")
	    L("      min_change_work: 3%")
	    L("      metrics:")
	    L("        'interrupts.*': {min_change: 20%}")
	    L("        mprotect.ops_per_sec: {alpha: 0.05, same_band: 3%}"))
{
	const struct cfg_suite *s;

	s = config_suite(cfg, "plain");
	assert_float_equal(s->rules.alpha, 0.01, 1e-12);
	assert_float_equal(compare_rules_get(&s->rules, "min_change_headline"), 0.02, 1e-12);
	assert_int_equal(s->rules.noverrides, 0);
	assert_false(s->tlb_model);
	s = config_suite(cfg, "strict");
	/* a suite asks for the TLB model in its boots */
	assert_true(s->tlb_model);
	assert_float_equal(s->rules.alpha, 0.001, 1e-12);
	assert_float_equal(compare_rules_get(&s->rules, "min_change_headline"), 0.01, 1e-12);
	assert_float_equal(compare_rules_get(&s->rules, "min_change_counter"), 0.1, 1e-12);
	assert_float_equal(compare_rules_get(&s->rules, "same_band"), 0.005, 1e-12);
	/* a class's own key (class_work.c names it), the others' untouched */
	assert_float_equal(compare_rules_get(&s->rules, "min_change_work"), 0.03, 1e-12);
	assert_float_equal(compare_rules_get(&s->rules, "same_band_work"), 0.01, 1e-12);
	assert_float_equal(compare_rules_get(&s->rules, "min_change_wait"), 0.05, 1e-12);
	assert_int_equal(s->rules.noverrides, 2);
	assert_string_equal(s->rules.overrides[0].metric, "interrupts.*");
	assert_float_equal(s->rules.overrides[0].min_change, 0.2, 1e-12);
	assert_true(isnan(s->rules.overrides[0].alpha));
	assert_string_equal(s->rules.overrides[1].metric, "mprotect.ops_per_sec");
	assert_float_equal(s->rules.overrides[1].alpha, 0.05, 1e-12);
	assert_float_equal(s->rules.overrides[1].same_band, 0.03, 1e-12);
	assert_true(isnan(s->rules.overrides[1].min_change));
}

/*
 * guest_cpus: each boot once per count, on a qemu machine that allows it
 * (max_cpus: 16 under icount by default, else the host's CPUs, or the
 * machine's cpus: over SSH); one count or a list, in the order written.
 */
CONFIG_TEST(guest_cpus, "g.yaml",
	    MACHINES
	    L("  - name: q1")
	    L("    transport: local")
	    L("    boot: qemu")
	    L("    qemu: {accel: icount, initrd: /i, ssh_port: 2222, identity: /k, known_hosts: /h}")
	    L("  - name: q2")
	    L("    transport: local")
	    L("    boot: qemu")
	    L("    qemu: {accel: icount, initrd: /i, ssh_port: 2223, identity: /k, known_hosts: /h, max_cpus: 32}")
	    L("  - {name: r1, transport: ssh, host: 10.0.0.1, identity: /k, known_hosts: /h, cpus: 4, boot: qemu,")
	    L("     qemu: {accel: tcg, initrd: /i, ssh_port: 2224, identity: /k, known_hosts: /h}}")
	    L("suites:")
	    L("  - name: s")
	    L("    timeout: 600")
	    L("    guest_cpus: [8, 2]")
	    L("    workloads: [{workload: mprotect, mode: [threads, processes], duration: 5, iterations: 4}]")
	    L("  - {name: one, guest_cpus: 32, workloads: [{workload: mprotect, duration: 1}]}")
	    L("  - {name: plain, workloads: [{workload: mprotect}]}"))
{
	const struct cfg_suite *s;

	assert_int_equal(qemu_conf(config_machine(cfg, "q1"))->max_cpus, 16);
	assert_int_equal(qemu_conf(config_machine(cfg, "q2"))->max_cpus, 32);
	assert_int_equal(qemu_conf(config_machine(cfg, "r1"))->max_cpus, 4);
	s = config_suite(cfg, "s");
	assert_int_equal(s->nguest_cpus, 2);
	assert_int_equal(s->guest_cpus[0], 8);
	assert_int_equal(s->guest_cpus[1], 2);
	s = config_suite(cfg, "one");
	assert_int_equal(s->nguest_cpus, 1);
	assert_int_equal(s->guest_cpus[0], 32);
	assert_int_equal(config_suite(cfg, "plain")->nguest_cpus, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workload_conversion),
		cmocka_unit_test(test_suite_specs),
		cmocka_unit_test(test_compare_rules),
		cmocka_unit_test(test_guest_cpus),
	};

	return cmocka_run_group_tests_name("config_suites", tests, NULL, NULL);
}
