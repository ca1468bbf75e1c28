/*
 * The configuration loader on a whole lab: every key of a full lab read
 * back, the defaults of a minimal one, token files, the example file
 * shipped in configs/, loading from a file, and the names it accepts. The
 * other test_config_*.c check one part each: how errors are reported
 * (errors), the lab section's values (lab), machines and builders
 * (machines), suites (suites).
 */
#include "testlib.h"

#include "fixture_config.h"
#include "backend.h"
#include "boot_qemu.h"
#include "banned.h"

static const struct error_case error_cases[] = {
	/* test_token_file */
	{ "token_file", "tok.yaml",
	  L("lab: {data_dir: /d, token_file: /tmp}"),
	  "tok.yaml:1:33: token_file: cannot read /tmp: Is a directory" },
};

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
	assert_string_equal(config_transport_name(&m->ep), "ssh");
	assert_string_equal(m->ep.host, "127.0.0.2");
	assert_int_equal(m->ep.port, 2222);
	assert_string_equal(m->ep.user, "tlb.user");
	assert_string_equal(m->ep.identity, "/keys/id_ed25519");
	assert_string_equal(m->ep.known_hosts, "/keys/known_hosts");
	assert_string_equal(m->ep.host_key, KEY1);
	/* aarch64 is accepted as what uname -m says, and kept as the arch's name */
	assert_string_equal(m->arch, "arm64");
	assert_int_equal(m->cpus, 4);
	assert_int_equal(m->ntags, 2);
	assert_string_equal(m->tags[0], "qemu");
	assert_string_equal(m->tags[1], "small");
	assert_null(m->tags[2]);
	assert_true(config_machine_has_tag(m, "small"));
	assert_false(config_machine_has_tag(m, "big"));
	assert_string_equal(config_boot_method_name(m), "qemu");
	assert_non_null(m->power_cycle);
	assert_string_equal(m->power_cycle[0], "ipmitool");
	assert_string_equal(m->power_cycle[3], "cycle");
	assert_null(m->power_cycle[4]);
	assert_string_equal(m->agent_path, "/opt/agent");
	assert_string_equal(m->workdir, "/scratch");
	assert_non_null(qemu_conf(m));
	assert_string_equal(qemu_conf(m)->binary, "/opt/qemu/bin/qemu-system-x86_64");
	assert_int_equal(qemu_conf(m)->memory, 4096);
	assert_string_equal(qemu_conf(m)->accel, "kvm");
	assert_string_equal(qemu_conf(m)->initrd, "/guest/initramfs.cpio");
	assert_string_equal(qemu_conf(m)->guest_host, "::1");
	assert_int_equal(qemu_conf(m)->ssh_port, 10022);
	assert_string_equal(qemu_conf(m)->identity, "/guest/lab_key");
	assert_string_equal(qemu_conf(m)->host_key, KEY2);
	assert_string_equal(qemu_conf(m)->known_hosts, "/guest/known_hosts");
	assert_string_equal(qemu_conf(m)->append, "mitigations=off  nokaslr");
	assert_string_not_equal(config_boot_method_name(m), "kexec");

	m = config_machine(cfg, "m2");
	assert_ptr_equal(m, &cfg->machines[1]);
	assert_int_equal(m->line, 37);
	assert_string_equal(config_transport_name(&m->ep), "local");
	assert_null(m->ep.host);
	assert_null(qemu_conf(m));

	assert_int_equal(cfg->nbuilders, 1);
	b = config_builder(cfg, "b1");
	assert_non_null(b);
	assert_int_equal(b->line, 40);
	assert_string_equal(config_transport_name(&b->ep), "ssh");
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
			  " \"workers\": 2, \"duration\": 2.5, \"id\": \"42\", \"profile\": true, "
			  "\"neighbour\": {\"workload\": \"mremap\", \"size\": \"8M\"}, "
			  "\"interval\": \"500ms\", \"monitors\": [\"vmstat\", \"interrupts\"]}, "
			  "{\"workload\": \"exec\", \"command\": [\"sh\", \"-c\", \"echo 1\"]}]",
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
	assert_string_equal(config_boot_method_name(m), "none");
	assert_null(qemu_conf(m));
	assert_string_not_equal(config_boot_method_name(m), "kexec");
	assert_null(m->power_cycle);
	assert_string_equal(m->agent_path, "/tmp/tlblab-agent");
	assert_string_equal(m->workdir, "/tmp/tlblab");

	assert_int_equal(config_builder(cfg, "local")->jobs, 2);
	assert_string_equal(config_builder(cfg, "local")->workdir, "/var/cache/tlblab");
	assert_string_equal(config_transport_name(&config_builder(cfg, "local")->ep), "local");
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
	strbuf_addf(&text, LAB_BLOCK L("  token_file: %s"), good);
	cfg = expect_ok("tok.yaml", text.buf);
	/* kept: tlblabd makes it 0600 at start-up */
	assert_string_equal(cfg->token_file, good);
	assert_int_equal(cfg->ntokens, 3);
	assert_string_equal(cfg->tokens[0], "cccccccccccccccc3");
	assert_string_equal(cfg->tokens[2], "eeeeeeeeeeeeeeee5");
	config_free(cfg);

	/* each bad line is reported with the token file's line, at the key's value */
	strbuf_reset(&text);
	strbuf_addf(&text, LAB_BLOCK L("  token_file: %s"), badpath);
	strbuf_addf(&want, "tok.yaml:3:15: token_file: %s:2: must be a token of 16 to 4096 "
		    "printable characters without spaces\n"
		    "tok.yaml:3:15: token_file: %s:4: " MUST_BE_TOKEN, badpath, badpath);
	expect_errors("tok.yaml", text.buf, want.buf);

	strbuf_reset(&text);
	strbuf_addf(&text, LAB_BLOCK L("  token_file: /nonexistent/tokens"));
	expect_errors("tok.yaml", text.buf,
		      "tok.yaml:3:15: token_file: cannot read /nonexistent/tokens: No such file or "
		      "directory");
	expect_table_errors("token_file");

	strbuf_release(&text);
	strbuf_release(&want);
	temp_remove(good);
	temp_remove(badpath);
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
	strbuf_addf(&want, "%s:1:30: workers: must be an integer from 1 to 256", path);
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
	strbuf_addf(&want, "configs/lab.example.yaml:%zu:%zu: tokens[0]: " EXAMPLE_TOKEN_MSG, line,
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
	assert_string_equal(config_boot_method_name(config_machine(cfg, "skylake-2s")), "kexec");
	assert_string_not_equal(boot_set(config_machine(cfg, "skylake-2s"), "append"), "-");
	assert_string_equal(config_transport_name(&config_machine(cfg, "skylake-2s")->ep), "ssh");
	assert_string_equal(config_machine(cfg, "skylake-2s")->power_cycle[0], "ipmitool");
	assert_string_equal(config_boot_method_name(config_machine(cfg, "nuc-1")), "reboot");
	assert_string_equal(config_boot_method_name(config_machine(cfg, "vm-1")), "qemu");
	assert_int_equal(qemu_conf(config_machine(cfg, "vm-1"))->ssh_port, 10022);
	assert_string_equal(config_transport_name(&config_builder(cfg, "local")->ep), "local");
	assert_string_equal(config_tree(cfg, "linux")->builder, "local");
	assert_int_equal(json_array_size(config_suite(cfg, "tlb")->workloads), 2);
	config_free(cfg);
	strbuf_release(&err);
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

	/* the registry's boot methods, in name order, and a name it lacks */
	{
		const char *want[] = { "kexec", "none", "qemu", "reboot" };

		for (size_t i = 0; i < ARRAY_SIZE(want); i++)
			assert_string_equal(backend_at(BACKEND_BOOT, i)->name, want[i]);
		assert_null(backend_at(BACKEND_BOOT, ARRAY_SIZE(want)));
		assert_null(backend_find(BACKEND_BOOT, "qemu2"));
		assert_string_equal(backend_at(BACKEND_TRANSPORT, 0)->name, "local");
		assert_string_equal(backend_at(BACKEND_TRANSPORT, 1)->name, "ssh");
		assert_null(backend_at(BACKEND_TRANSPORT, 2));
		assert_null(backend_find(BACKEND_TRANSPORT, "qemu"));
		assert_ptr_equal(backend_find(BACKEND_BOOT, "qemu")->ops, &boot_qemu);
	}
	assert_false(config_machine_has_tag(NULL, "x"));
	config_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_token_file),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
