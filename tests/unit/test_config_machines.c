/*
 * Machines and builders in the configuration: each boot method's section
 * (qemu, kexec, reboot) with its defaults and the edges of its values,
 * power cycling, which machines share a host, and a builder's ccache.
 */
#include "testlib.h"

#include "fixture_config.h"
#include "boot_qemu.h"
#include "banned.h"

static const struct error_case error_cases[] = {
	/* test_reboot_section */
	{ "reboot_section", "r.yaml",
	  MACHINES				/* 1-2 */
	  L("  - {name: k, transport: local, boot: kexec, reboot: {}}")	/* 3 */
	  LOCAL_MACHINE("r", "reboot")		/* 4-6 */
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
	/*
	 * test_boot_section_errors: a section that is not a mapping; binaries
	 * that are neither a name nor absolute; kexec's initrd is a path on
	 * the machine, judged like any other path.
	 */
	{ "boot_section_errors", "q.yaml",
	  MACHINES				/* 1-2 */
	  LOCAL_MACHINE("q1", "qemu")		/* 3-5 */
	  L("    qemu:")				/* 6 */
	  L("      binary: qemu;reboot")		/* 7: mapping col 7, value col 15 */
	  L("      memory: 63")			/* 8: value col 15 */
	  L("      accel: hvf")			/* 9: value col 14 */
	  L("      guest_host: localhost")		/* 10: value col 19 */
	  L("      ssh_port: 0")			/* 11: value col 17 */
	  L("      append: \"root='x'\"")		/* 12: value col 15 */
	  L("      memroy: 2048")			/* 13: key col 7 */
	  LOCAL_MACHINE("q2", "qemu")		/* 14-16: mapping col 5 */
	  LOCAL_MACHINE("k1", "kexec")		/* 17-19 */
	  L("    qemu: {ssh_port: 1}")		/* 20: key col 5 */
	  L("    kexec: {append: '', extra: 1}")	/* 21: value col 21, key col 25 */
	  L("  - name: n1")				/* 22 */
	  L("    transport: local")			/* 23 */
	  L("    kexec: {}"),
	  /* 24: key col 5 */
	  "q.yaml:7:7: missing key 'initrd' in the qemu section of machine 'q1' (the guest's "
	  "initramfs)\n"
	  "q.yaml:7:7: missing key 'identity' in the qemu section of machine 'q1' (the private key "
	  "for root on the guest)\n"
	  "q.yaml:7:7: missing key 'known_hosts' or 'host_key' in the qemu section of machine 'q1' "
	  "(the guest's host key is checked strictly)\n"
	  "q.yaml:7:15: binary: " MUST_BE_BINARY "\n"
	  "q.yaml:8:15: memory: must be an integer from 64 to 1048576\n"
	  "q.yaml:9:14: accel: must be auto, kvm, tcg or icount\n"
	  "q.yaml:10:19: guest_host: must be an IPv4 or IPv6 address (without brackets)\n"
	  "q.yaml:11:17: ssh_port: must be an integer from 1 to 65535\n"
	  "q.yaml:12:15: append: " MUST_BE_CMDLINE "\n"
	  "q.yaml:13:7: unknown key 'memroy' in the qemu section of machine 'q1'\n"
	  "q.yaml:14:5: missing key 'qemu' in machine 'q2' (required with boot: qemu)\n"
	  "q.yaml:20:5: qemu: only for boot: qemu (in machine 'k1')\n"
	  "q.yaml:21:21: append: " MUST_BE_CMDLINE "\n"
	  "q.yaml:21:25: unknown key 'extra' in the kexec section of machine 'k1'\n"
	  "q.yaml:24:5: kexec: only for boot: kexec (in machine 'n1')" },
	{ "boot_section_errors", "q.yaml",
	  MACHINES				/* 1-2 */
	  L("  - {name: a, transport: local, boot: qemu, qemu: ~}")		/* 3: col 51 */
	  L("  - {name: b, transport: local, boot: kexec, kexec: [x]}")	/* 4: col 53 */
	  LOCAL_MACHINE("c", "qemu")		/* 5-7 */
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
	  "q.yaml:3:51: qemu: must be a mapping (initrd, ssh_port, identity, and host_key or "
	  "known_hosts are required)\n"
	  "q.yaml:4:53: kexec: must be a mapping (with the optional keys append and initrd)\n"
	  "q.yaml:9:15: binary: " MUST_BE_BINARY "\n"
	  "q.yaml:10:15: initrd: " MUST_BE_PATH "\n"
	  "q.yaml:13:17: host_key: " MUST_BE_HOST_KEY "\n"
	  "q.yaml:14:60: binary: " MUST_BE_BINARY "\n"
	  /* an unknown boot method: its section is not judged */
	  "q.yaml:16:39: boot: must be kexec, none, qemu or reboot" },
	{ "boot_section_errors", "q.yaml",
	  MACHINES
	  L("  - {name: k, transport: local, boot: kexec, kexec: {initrd: -i}}")	/* 3: col 62 */
	  L("  - {name: k2, transport: local, boot: kexec, kexec: {initrd: ''}}"),
	  /* 4: col 63 */
	  "q.yaml:3:62: initrd: " MUST_BE_PATH "\n"
	  "q.yaml:4:63: initrd: " MUST_BE_PATH },
	/* test_power_cycle_and_local */
	{ "power_cycle_and_local", "p.yaml",
	  MACHINES				/* 1-2 */
	  L("  - name: m")					/* 3 */
	  L("    transport: local")				/* 4 */
	  L("    power_cycle: reboot")			/* 5: col 18 */
	  L("    port: 22")					/* 6: col 5 */
	  L("  - name: n")					/* 7 */
	  L("    transport: local")				/* 8 */
	  L("    power_cycle: []")				/* 9: col 18 */
	  L("  - name: o")					/* 10 */
	  L("    transport: local")				/* 11 */
	  L("    power_cycle: [[x]]")			/* 12: item col 19 */
	  L("  - {name: q, transport: local, power_cycle_timeout: 600}")	/* 13: col 33 */
	  L("  - {name: r, transport: local, power_cycle: [x], power_cycle_timeout: 0}"),
	  /* 14: col 72 */
	  "p.yaml:5:18: power_cycle: must be a list, each item a string of at most 4096 bytes\n"
	  "p.yaml:6:5: port: only used with transport ssh (in machine 'm')\n"
	  "p.yaml:9:18: power_cycle: must be a command as a list of strings (argv), with a "
	  "non-empty program name first\n"
	  "p.yaml:12:19: power_cycle[0]: must be a string of at most 4096 bytes\n"
	  "p.yaml:13:33: power_cycle_timeout: only with power_cycle (in machine 'q')\n"
	  "p.yaml:14:72: power_cycle_timeout: " MUST_BE_SECONDS("1 to 604800") },
	/* test_builder_ccache */
	{ "builder_ccache", "c.yaml",
	  BUILDERS
	  L("  - {name: b, transport: local, ccache: [a]}"),
	  "c.yaml:3:41: ccache: " MUST_BE_PATH },
	/* test_host_groups */
	{ "host_groups", "h.yaml",
	  BUILDERS
	  L("  - {name: b, transport: local, host_group: 'a b'}"),
	  "h.yaml:3:45: host_group: " MUST_BE_NAME },
	/* test_pin_vcpus */
	{ "pin_vcpus", "p.yaml",
	  MACHINES
	  LOCAL_MACHINE("vm", "qemu")
	  L("    qemu: {initrd: /i, identity: /k, ssh_port: 2222, known_hosts: /h, pin_vcpus: yes}"),
	  "p.yaml:6:82: pin_vcpus: must be auto, on or off" },
};

/* boot: qemu takes a qemu: section with its defaults; boot: kexec an optional kexec:. */
static void test_boot_sections(void **state)
{
	struct lab_config *cfg;
	const struct cfg_machine *m;
	char append[1100];

	(void)state;
	cfg = expect_ok("q.yaml",
			MACHINES
			LOCAL_MACHINE("vm", "qemu")
			L("    qemu:")
			L("      initrd: guest/initramfs.cpio")
			L("      ssh_port: 10022")
			L("      identity: guest/lab_key")
			L("      known_hosts: guest/known_hosts")
			LOCAL_MACHINE("k1", "kexec")
			L("    kexec: {append: 'console=ttyS0,115200 root=/dev/vda1 ro'}")
			L("  - {name: k2, transport: local, boot: kexec}")
			L("  - {name: k3, transport: local, boot: kexec, kexec: ~}")
			L("  - {name: k4, transport: local, boot: kexec, kexec: {initrd: /boot/initrd.img}}")
			L("  - {name: k5, transport: local, boot: kexec, power_cycle: [x], power_cycle_timeout: 15m}"));
	m = config_machine(cfg, "vm");
	assert_string_equal(config_boot_method_name(m), "qemu");
	assert_non_null(qemu_conf(m));
	assert_string_equal(qemu_conf(m)->binary, "qemu-system-x86_64");
	assert_int_equal(qemu_conf(m)->memory, 1024);
	assert_string_equal(qemu_conf(m)->accel, "auto");
	assert_string_equal(qemu_conf(m)->initrd, "guest/initramfs.cpio");
	assert_string_equal(qemu_conf(m)->guest_host, "127.0.0.1");
	assert_int_equal(qemu_conf(m)->ssh_port, 10022);
	assert_string_equal(qemu_conf(m)->identity, "guest/lab_key");
	assert_null(qemu_conf(m)->host_key);
	assert_string_equal(qemu_conf(m)->known_hosts, "guest/known_hosts");
	assert_null(qemu_conf(m)->append);
	assert_string_not_equal(config_boot_method_name(m), "kexec");
	m = config_machine(cfg, "k1");
	assert_null(qemu_conf(m));
	assert_string_equal(config_boot_method_name(m), "kexec");
	assert_string_equal(boot_set(m, "append"), "console=ttyS0,115200 root=/dev/vda1 ro");
	assert_string_equal(boot_set(m, "initrd"), "-");
	/* an initrd on the machine, with the running kernel's command line */
	m = config_machine(cfg, "k4");
	assert_string_equal(config_boot_method_name(m), "kexec");
	assert_string_equal(boot_set(m, "append"), "-");
	assert_string_equal(boot_set(m, "initrd"), "/boot/initrd.img");
	/* no section, or an empty one: the running kernel's command line */
	assert_string_equal(boot_set(config_machine(cfg, "k2"), "append"), "-");
	assert_string_equal(boot_set(config_machine(cfg, "k3"), "append"), "-");
	/* the wait after a power cycle: the boot timeout unless said */
	assert_true(config_machine(cfg, "k4")->power_cycle_timeout == 0);
	assert_true(config_machine(cfg, "k5")->power_cycle_timeout == 900);
	config_free(cfg);

	/* the edges of each value */
	memset(append, 'a', 1024);
	append[1024] = '\0';
	{
		struct strbuf text = STRBUF_INIT;

		strbuf_addf(&text,
			    MACHINES
			    LOCAL_MACHINE("vm", "qemu")
			    L("    qemu: {binary: qemu-system-aarch64, memory: 64, accel: tcg,")
			    L("           initrd: /i, guest_host: 'fe80::1', ssh_port: 65535,")
			    L("           identity: /k, host_key: " KEY1 ", append: %s, pin_vcpus: off}")
			    LOCAL_MACHINE("vm2", "qemu")
			    L("    qemu: {memory: 1048576, initrd: /i, ssh_port: 1, identity: /k,")
			    L("           host_key: " KEY2 ",")
			    L("           append: ' a.b_c,d=e:f/g+h-0 '}"), append);
		cfg = expect_ok("q.yaml", text.buf);
		m = config_machine(cfg, "vm");
		assert_string_equal(qemu_conf(m)->binary, "qemu-system-aarch64");
		assert_int_equal(qemu_conf(m)->memory, 64);
		assert_string_equal(qemu_conf(m)->accel, "tcg");
		assert_string_equal(qemu_conf(m)->guest_host, "fe80::1");
		assert_int_equal(qemu_conf(m)->ssh_port, 65535);
		assert_string_equal(qemu_conf(m)->append, append);
		assert_int_equal(qemu_conf(m)->pin_vcpus, QEMU_PIN_OFF);
		m = config_machine(cfg, "vm2");
		assert_int_equal(qemu_conf(m)->pin_vcpus, QEMU_PIN_AUTO);
		assert_int_equal(qemu_conf(m)->memory, 1048576);
		assert_int_equal(qemu_conf(m)->ssh_port, 1);
		assert_string_equal(qemu_conf(m)->append, " a.b_c,d=e:f/g+h-0 ");
		config_free(cfg);
		strbuf_release(&text);
	}
	append[1024] = 'a';
	append[1025] = '\0';
	{
		struct strbuf text = STRBUF_INIT;

		strbuf_addf(&text,
			    MACHINES
			    L("  - {name: k, transport: local, boot: kexec, kexec: {append: %s}}"),
			    append);
		expect_errors("q.yaml", text.buf,
			      "q.yaml:3:62: append: " MUST_BE_CMDLINE);
		strbuf_release(&text);
	}
}

/* arch: one the lab can build and boot for, named as the kernel or as
 * uname -m names it; it chooses a qemu machine's default binary. */
static void test_arch(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("a.yaml", MACHINES
			L("  - {name: x, transport: local}")
			L("  - {name: a, transport: local, arch: aarch64}")
			L("  - name: q")
			L("    transport: local")
			L("    arch: arm64")
			L("    boot: qemu")
			L("    qemu: {initrd: /i, ssh_port: 10032, identity: /k, host_key: " KEY1 "}"));
	assert_string_equal(config_machine(cfg, "x")->arch, "x86_64");
	assert_string_equal(config_machine(cfg, "a")->arch, "arm64");
	assert_string_equal(qemu_conf(config_machine(cfg, "q"))->binary, "qemu-system-aarch64");
	config_free(cfg);
	expect_errors("a.yaml", MACHINES L("  - {name: r, transport: local, arch: riscv64}"),
		      "a.yaml:3:39: arch: 'riscv64' is not one of x86_64, arm64 (in machine 'r')");
}

CONFIG_TEST(power_cycle_and_local, "p.yaml",
	    MACHINES
	    L("  - name: m")
	    L("    transport: local")
	    L("    power_cycle: [/usr/bin/pdu, 'off; on', '']")
	    L("    tags: ~"))
{
	assert_string_equal(cfg->machines[0].power_cycle[1], "off; on");
	assert_string_equal(cfg->machines[0].power_cycle[2], "");
	assert_null(cfg->machines[0].power_cycle[3]);
	assert_int_equal(cfg->machines[0].ntags, 0);
}

/* Which machines and builders share a host's CPUs (the quiet-host rule). */
CONFIG_TEST(host_groups, "h.yaml",
	    MACHINES
	    L("  - {name: here, transport: local}")
	    L("  - {name: far, transport: ssh, host: 10.0.0.2, identity: /k, known_hosts: /h}")
	    L("  - {name: far2, transport: ssh, host: 10.0.0.2, identity: /k, known_hosts: /h}")
	    L("  - {name: rack, transport: ssh, host: 10.0.0.3, identity: /k, known_hosts: /h,")
	    L("     host_group: box1}")
	    L("builders:")
	    L("  - {name: local, transport: local}")
	    L("  - {name: b1, transport: ssh, host: 10.0.0.9, identity: /k, known_hosts: /h,")
	    L("     host_group: box1}"))
{
	const struct cfg_builder *b;

	b = config_builder(cfg, "local");
	assert_true(config_same_host(&config_machine(cfg, "here")->ep, &b->ep));
	assert_false(config_same_host(&config_machine(cfg, "far")->ep, &b->ep));
	assert_true(config_same_host(&config_machine(cfg, "far")->ep, &config_machine(cfg, "far2")->ep));
	b = config_builder(cfg, "b1");
	assert_true(config_same_host(&config_machine(cfg, "rack")->ep, &b->ep));
	assert_false(config_same_host(&config_machine(cfg, "far")->ep, &b->ep));
}

CONFIG_TEST(pin_vcpus, "q.yaml", L("lab: {data_dir: /d, quiet_host: false}"))
{
	assert_int_equal(cfg->quiet_host, 0);
}

/* A builder's ccache: a path passed to build.sh, or NULL for its default. */
CONFIG_TEST(builder_ccache, "c.yaml",
	    BUILDERS
	    L("  - {name: local, transport: local}")
	    L("  - {name: shared, transport: local, ccache: /var/cache/ccache}"))
{
	assert_null(config_builder(cfg, "local")->ccache);
	assert_string_equal(config_builder(cfg, "shared")->ccache, "/var/cache/ccache");
}

/* boot: reboot takes an optional reboot: section; every default filled in. */
CONFIG_TEST(reboot_section, "r.yaml",
	    MACHINES
	    L("  - {name: r1, transport: local, boot: reboot}")
	    LOCAL_MACHINE("r2", "reboot")
	    L("    boot_timeout: 900")
	    L("    reboot:")
	    L("      append: console=ttyS0 panic=-1")
	    L("      kernel_dir: /boot/lab")
	    L("      initrd: initrd.img-6.1")
	    L("      entry_file: /boot/grub/custom.cfg")
	    L("      once: [grub-editenv, /boot/grub/grubenv, set, 'next_entry={entry}']")
	    L("      command: [systemctl, reboot]"))
{
	const struct cfg_machine *m;

	m = config_machine(cfg, "r1");
	assert_string_equal(config_boot_method_name(m), "reboot");
	assert_string_equal(boot_set(m, "append"), "-");
	assert_string_equal(boot_set(m, "kernel_dir"), "/boot");
	assert_string_equal(boot_set(m, "grub_dir"), "/boot");
	assert_string_equal(boot_set(m, "initrd"), "-");
	assert_string_equal(boot_set(m, "entry_file"), "/boot/grub/custom.cfg");
	assert_string_equal(boot_set(m, "once"), "grub-reboot {entry}");
	assert_string_equal(boot_set(m, "command"), "reboot");
	assert_true(m->boot_timeout == 0);	/* the method's default */
	m = config_machine(cfg, "r2");
	assert_true(m->boot_timeout == 900);
	assert_string_equal(boot_set(m, "append"), "console=ttyS0 panic=-1");
	assert_string_equal(boot_set(m, "kernel_dir"), "/boot/lab");
	assert_string_equal(boot_set(m, "grub_dir"), "/boot/lab");	/* kernel_dir by default */
	assert_string_equal(boot_set(m, "initrd"), "initrd.img-6.1");
	assert_string_equal(boot_set(m, "once"), "grub-editenv /boot/grub/grubenv set next_entry={entry}");
	assert_string_equal(boot_set(m, "command"), "systemctl reboot");
	assert_string_equal(config_boot_method_name(config_machine(cfg, "r2")), "reboot");
}

/* accel icount with its shift, and the instruction plugin's path or off;
 * a shift out of range is refused at its line. */
static void test_icount(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("q.yaml",
			MACHINES
			LOCAL_MACHINE("vm", "qemu")
			L("    qemu: {initrd: i, ssh_port: 1, identity: k, known_hosts: h, accel: icount, "
			  "icount_shift: 5, insn_plugin: /opt/tlblab-insn.so}")
			LOCAL_MACHINE("vm2", "qemu")
			L("    qemu: {initrd: i, ssh_port: 2, identity: k, known_hosts: h, insn_plugin: off}"));
	assert_string_equal(qemu_conf(config_machine(cfg, "vm"))->accel, "icount");
	assert_int_equal(qemu_conf(config_machine(cfg, "vm"))->icount_shift, 5);
	assert_string_equal(qemu_conf(config_machine(cfg, "vm"))->insn_plugin, "/opt/tlblab-insn.so");
	assert_string_equal(qemu_conf(config_machine(cfg, "vm2"))->insn_plugin, "off");
	config_free(cfg);
	expect_errors("q.yaml",
		      MACHINES
		      LOCAL_MACHINE("vm", "qemu")
		      L("    qemu: {initrd: i, ssh_port: 1, identity: k, known_hosts: h, icount_shift: 11}"),
		      "q.yaml:6:79: icount_shift: must be an integer from 0 to 10");
}

/* tlb_model: on, off, or its sizes (the plugin's arguments); a geometry
 * the model cannot take, or a model without its plugin, refused where it
 * is written. */
static void test_tlb_model(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("q.yaml",
			MACHINES
			LOCAL_MACHINE("vm", "qemu")
			L("    qemu: {initrd: i, ssh_port: 1, identity: k, known_hosts: h, tlb_model: on}")
			LOCAL_MACHINE("vm2", "qemu")
			L("    qemu: {initrd: i, ssh_port: 2, identity: k, known_hosts: h,")
			L("           tlb_model: {dtlb: 48x48, stlb: 1024x8}}")
			LOCAL_MACHINE("vm3", "qemu")
			L("    qemu: {initrd: i, ssh_port: 3, identity: k, known_hosts: h, tlb_model: off}")
			LOCAL_MACHINE("vm4", "qemu")
			L("    qemu: {initrd: i, ssh_port: 4, identity: k, known_hosts: h}"));
	/* on and sizes: every boot */
	assert_string_equal(qemu_conf(config_machine(cfg, "vm"))->tlb_model, "tlb=on");
	assert_true(qemu_conf(config_machine(cfg, "vm"))->tlb_always);
	assert_string_equal(qemu_conf(config_machine(cfg, "vm2"))->tlb_model, "tlb=on,dtlb=48x48,stlb=1024x8");
	assert_true(qemu_conf(config_machine(cfg, "vm2"))->tlb_always);
	/* off: none */
	assert_null(qemu_conf(config_machine(cfg, "vm3"))->tlb_model);
	/* no key: the boots of a suite that asks, at the default sizes */
	assert_string_equal(qemu_conf(config_machine(cfg, "vm4"))->tlb_model, "tlb=on");
	assert_false(qemu_conf(config_machine(cfg, "vm4"))->tlb_always);
	config_free(cfg);
	expect_errors("q.yaml",
		      MACHINES
		      LOCAL_MACHINE("vm", "qemu")
		      L("    qemu: {initrd: i, ssh_port: 1, identity: k, known_hosts: h, tlb_model: {stlb: 1536x8}}"),
		      "q.yaml:6:83: stlb: must be ENTRIESxWAYS (e.g. 64x4), the entries a multiple of the ways, "
		      "a power-of-two number of sets, at most 65536 entries (in the tlb_model of the qemu section of machine 'vm')");
	expect_errors("q.yaml",
		      MACHINES
		      LOCAL_MACHINE("vm", "qemu")
		      L("    qemu: {initrd: i, ssh_port: 1, identity: k, known_hosts: h, tlb_model: yes}"),
		      "q.yaml:6:76: tlb_model: must be on, off, or a mapping of dtlb, itlb and stlb "
		      "(ENTRIESxWAYS, e.g. 64x4)");
	expect_errors("q.yaml",
		      MACHINES
		      LOCAL_MACHINE("vm", "qemu")
		      L("    qemu: {initrd: i, ssh_port: 1, identity: k, known_hosts: h, insn_plugin: off,")
		      L("           tlb_model: on}"),
		      "q.yaml:7:23: tlb_model: the TLB model lives in the instruction plugin, which "
		      "insn_plugin: off turns off (in the qemu section of machine 'vm')");
}

/* A duet: two qemu machines that name each other, a host CPU each; a
 * partner that is missing, does not name it back or shares its CPU is
 * refused at the duet: line. */
static void test_duet(void **state)
{
	struct lab_config *cfg;

	(void)state;
	cfg = expect_ok("d.yaml",
			MACHINES
			LOCAL_MACHINE("a", "qemu")
			L("    qemu: {initrd: i, ssh_port: 1, identity: k, known_hosts: h, accel: icount, "
			  "host_cpu: 0, duet: b}")
			LOCAL_MACHINE("b", "qemu")
			L("    qemu: {initrd: i, ssh_port: 2, identity: k, known_hosts: h, accel: icount, "
			  "host_cpu: 1, duet: a}"));
	assert_string_equal(qemu_conf(config_machine(cfg, "a"))->duet, "b");
	assert_int_equal(qemu_conf(config_machine(cfg, "b"))->host_cpu, 1);
	config_free(cfg);
	expect_errors("d.yaml",
		      MACHINES
		      LOCAL_MACHINE("a", "qemu")
		      L("    qemu: {initrd: i, ssh_port: 1, identity: k, known_hosts: h, host_cpu: 0, duet: c}")
		      LOCAL_MACHINE("b", "qemu")
		      L("    qemu: {initrd: i, ssh_port: 2, identity: k, known_hosts: h, host_cpu: 0, duet: a}"),
		      "d.yaml:6:84: duet: 'c' is not a machine (in machine a)\n"
		      "d.yaml:10:84: duet: machine b names a, whose qemu section must name b back (duet: b)");
	expect_errors("d.yaml",
		      MACHINES
		      LOCAL_MACHINE("a", "qemu")
		      L("    qemu: {initrd: i, ssh_port: 1, identity: k, known_hosts: h, accel: icount, host_cpu: 0, duet: b}")
		      LOCAL_MACHINE("b", "qemu")
		      L("    qemu: {initrd: i, ssh_port: 2, identity: k, known_hosts: h, accel: icount, host_cpu: 0, duet: a}"),
		      "d.yaml:6:99: duet: machines a and b each need a host_cpu of their own\n"
		      "d.yaml:10:99: duet: machines b and a each need a host_cpu of their own");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot_sections),
		cmocka_unit_test(test_arch),
		error_table_test(boot_section_errors),
		cmocka_unit_test(test_power_cycle_and_local),
		cmocka_unit_test(test_host_groups),
		cmocka_unit_test(test_pin_vcpus),
		cmocka_unit_test(test_builder_ccache),
		cmocka_unit_test(test_reboot_section),
		cmocka_unit_test(test_icount),
		cmocka_unit_test(test_tlb_model),
		cmocka_unit_test(test_duet),
	};

	return cmocka_run_group_tests_name("config_machines", tests, NULL, NULL);
}
