# tlblab: make | make test | make demo | make demo-track | make bench | make check | make fuzz
#
# Every target that needs packages first installs the missing ones
# (scripts/deps.sh, from configs/packages.txt), so each works alone on a fresh
# Debian 12 machine as root.

CC       ?= gcc
BUILD    ?= build
CFLAGS   ?= -O2 -g
WERROR   ?=
SANITIZE ?=
# the agent runs inside a busybox initramfs: static unless sanitized
STATIC   ?= -static
# when make started: make test, bench, demo and demo-track say how long they
# took in docs/measured/ (scripts/measured.sh), the docs cite those files
MAKE_START := $(shell date +%s.%N)

# the daemon's subsystems, one folder each (docs/design.md, Layout), and
# their backends' folders below them (daemon/store/sqlite/): a file
# includes another's header by its bare name, whichever folder holds it
DAEMON_DIRS = daemon $(patsubst %/,%,$(sort $(dir $(wildcard daemon/*/*.c daemon/*/*/*.c))))
WARNINGS  = -Wall -Wextra -Wformat=2 -Wno-format-nonliteral -Wshadow -Wstrict-prototypes $(WERROR)
# libpq's headers, for the store's PostgreSQL backend (daemon/store/postgres/)
PQ_CFLAGS := $(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -pthread $(WARNINGS) $(CFLAGS) $(SANITIZE) $(PQ_CFLAGS) \
	-iquote lib -iquote lib/catalog -iquote client $(addprefix -iquote ,$(DAEMON_DIRS)) -MMD -MP
# the agent's folders are on the include path of the agent's objects (and
# of the tests of its modules) only: no other binary can include its headers
AGENT_INCLUDES = -iquote agents -iquote agents/monitors
$(BUILD)/obj/agents/%.o $(BUILD)/aarch64/obj/agents/%.o: ALL_CFLAGS += $(AGENT_INCLUDES)
LDLIBS_AGENT = -ljansson -lm -pthread
LDLIBS_DAEMON = -lssh -lsqlite3 -lpq -lyaml -lmicrohttpd -lcurl -lcrypto -ljansson -lm -pthread
LDLIBS_CLIENT = -lcurl -ljansson -lm -pthread

# The folder says which binary a file is part of: lib/ all three (strbuf,
# util, log), agents/ tlblab-agent, client/ tlblab, daemon/ tlblabd. Each
# binary's main is one file; the rest of its folder is its modules, which the
# unit tests and tools link too.
LIB_SRCS = $(wildcard lib/*.c)
# the catalog the agent and the daemon share: the spec parser, the tables of
# workloads and monitors it reads, the TLB model's geometry, the PMU's
# counter names (docs/design.md); the code that runs a workload or reads
# the kernel is the agent's alone
CATALOG_SRCS = $(wildcard lib/catalog/*.c)
AGENT_LIB_SRCS = $(wildcard agents/monitors/*.c agents/workloads/*.c) agents/runner.c agents/facts.c \
		 $(CATALOG_SRCS) $(LIB_SRCS)
AGENT_SRCS = agents/agent.c $(AGENT_LIB_SRCS)
CLIENT_MAIN = client/tlblab.c
CLIENT_LIB_SRCS = $(filter-out $(CLIENT_MAIN),$(wildcard client/*.c))
CLIENT_SRCS = $(CLIENT_MAIN) $(CLIENT_LIB_SRCS) $(LIB_SRCS)
DAEMON_MAIN = daemon/tlblabd.c
DAEMON_LIB_SRCS = $(wildcard daemon/*/*.c daemon/*/*/*.c) $(STORE_MIGRATIONS) $(BUILD)/gen/compare_source.c
DAEMON_SRCS = $(DAEMON_MAIN) $(DAEMON_LIB_SRCS) $(CATALOG_SRCS) $(LIB_SRCS)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

STORE_BACKENDS = $(patsubst daemon/store/%/schema/,%,$(sort $(dir $(wildcard daemon/store/*/schema/*.sql))))
STORE_MIGRATIONS = $(patsubst %,$(BUILD)/gen/%_migrations.c,$(STORE_BACKENDS))

AGENT      = $(BUILD)/tlblab-agent
DAEMON     = $(BUILD)/tlblabd
CLIENT     = $(BUILD)/tlblab
# the QEMU TCG plugin that counts the guests' instructions per window
# (agents/qemu-plugin/insn.c): loaded by QEMU on the VM host, so shared,
# position-independent and never sanitized (QEMU is not)
PLUGIN     = $(BUILD)/tlblab-insn.so
BINARIES   = $(AGENT) $(PLUGIN) $(if $(wildcard $(DAEMON_MAIN)),$(DAEMON)) $(if $(wildcard $(CLIENT_MAIN)),$(CLIENT))
UNIT_TESTS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

.PHONY: all deps-build agent-arm64 lab-arm64 test check bench demo demo-track fuzz clean

# the packages first, then the build: under make -j a prerequisite beside
# the binaries would compile them before their headers are installed
all: deps-build
	@$(MAKE) --no-print-directory $(BINARIES)

deps-build:
	@sh scripts/deps.sh build

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

PLUGIN_SRCS = agents/qemu-plugin/insn.c agents/qemu-plugin/tlb_plugin.c agents/qemu-plugin/tlb_model.c \
	      lib/catalog/tlb_geom.c
$(PLUGIN): $(PLUGIN_SRCS) $(wildcard agents/qemu-plugin/*.h) agents/insn_marker.h lib/catalog/tlb_geom.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARNINGS) -O2 -g -fPIC -shared -fvisibility=hidden -pthread \
		-iquote agents -iquote lib/catalog -o $@ $(PLUGIN_SRCS)

$(AGENT): $(call obj,$(AGENT_SRCS))
	$(CC) $(ALL_CFLAGS) $(STATIC) -o $@ $^ $(LDLIBS_AGENT)

# The agent of the arm64 lab machines: cross-compiled and static like the
# host's, its objects apart from the host's. libc comes from the cross
# toolchain (libc6-dev-arm64-cross) and libjansson.a from the Debian arm64
# sysroot that kernels/arm64-sysroot.sh makes, linked by path so that nothing
# else is taken from there; its headers come after the toolchain's own.
# `make agent-arm64` makes (or checks) the sysroot, then the agent.
ARM64_CC      ?= aarch64-linux-gnu-gcc
ARM64_OUT     ?= /var/cache/tlblab/arm64
ARM64_SYSROOT  = $(ARM64_OUT)/sysroot
ARM64_JANSSON  = $(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu/libjansson.a
ARM64_AGENT    = $(BUILD)/aarch64/tlblab-agent
ARM64_CFLAGS   = $(ALL_CFLAGS) -idirafter $(ARM64_SYSROOT)/usr/include

$(BUILD)/aarch64/obj/%.o: %.c | $(ARM64_JANSSON)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(ARM64_CFLAGS) -c -o $@ $<

$(ARM64_AGENT): $(patsubst %.c,$(BUILD)/aarch64/obj/%.o,$(AGENT_SRCS)) $(ARM64_JANSSON)
	$(ARM64_CC) $(ARM64_CFLAGS) -static -o $@ $^ $(filter-out -ljansson,$(LDLIBS_AGENT))

$(ARM64_JANSSON):
	sh kernels/arm64-sysroot.sh $(ARM64_OUT)

agent-arm64:
	@sh scripts/deps.sh agent-arm64
	sh kernels/arm64-sysroot.sh $(ARM64_OUT)
	@$(MAKE) --no-print-directory $(ARM64_AGENT)

# qemu-arm1 of configs/local.yaml: the kernel tree (as make demo imports it),
# the aarch64 agent and the arm64 guests' initramfs and keys; tlblabd finds
# the agent beside its own (build/aarch64/) when it starts. The guests'
# directory is the daemon's user's: mkinitramfs.sh runs as that user there.
lab-arm64: agent-arm64
	@sh scripts/deps.sh demo
	sh scripts/lab-dirs.sh
	sh kernels/import-tree.sh /var/cache/tlblab/linux
	sh kernels/mkinitramfs.sh /var/cache/tlblab/guest-arm64 $(ARM64_AGENT) --arch arm64 --sysroot $(ARM64_SYSROOT)

$(BUILD)/obj/$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# each store backend's SQL migrations (daemon/store/BACKEND/schema/),
# compiled in so the daemon needs no data files
define migration_rules
$(BUILD)/gen/$(1)_migrations.c: $(sort $(wildcard daemon/store/$(1)/schema/*.sql)) scripts/embed.sh
	@mkdir -p $$(dir $$@)
	sh scripts/embed.sh $(1) $(sort $(wildcard daemon/store/$(1)/schema/*.sql)) >$$@.tmp && mv $$@.tmp $$@
endef
$(foreach b,$(STORE_BACKENDS),$(eval $(call migration_rules,$(b))))

# the comparison's source, hashed: a comparison kept in the store by a
# daemon built from other analysis code is computed again
COMPARE_SOURCES = $(sort $(wildcard daemon/analysis/*.c daemon/analysis/*.h))
$(BUILD)/gen/compare_source.c: $(COMPARE_SOURCES)
	@mkdir -p $(dir $@)
	printf '/* generated by the Makefile; do not edit */\nconst char compare_source_id[] = "%s";\n' \
		"$$(cat $(COMPARE_SOURCES) | sha256sum | cut -c1-16)" >$@.tmp && mv $@.tmp $@

$(DAEMON): $(call obj,$(DAEMON_SRCS))
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_DAEMON)

$(CLIENT): $(call obj,$(CLIENT_SRCS))
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_CLIENT)

# unit tests link the daemon's modules and the catalog; the tests of the
# agent's modules (and of the plugin's TLB model) link the agent's instead,
# so that nothing but the agent and its own tests links agents/
$(BUILD)/tests/test_%: tests/unit/test_%.c $(call obj,$(DAEMON_LIB_SRCS) $(CATALOG_SRCS) $(LIB_SRCS))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka $(LDLIBS_DAEMON)
AGENT_UNIT_TESTS = $(patsubst %,$(BUILD)/tests/test_%,kfunc parsers pmu procparse tlb_model workloads)
$(AGENT_UNIT_TESTS): private ALL_CFLAGS += $(AGENT_INCLUDES)
$(AGENT_UNIT_TESTS): $(BUILD)/tests/%: tests/unit/%.c $(call obj,$(AGENT_LIB_SRCS) agents/qemu-plugin/tlb_model.c)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka $(LDLIBS_AGENT)
# and test_client the client's modules too (all but its main)
$(BUILD)/tests/test_client: $(call obj,$(CLIENT_LIB_SRCS))

# tools of the tests and benches that link the daemon's modules: qemu-boot
# boots a lab machine with the daemon's own boot code (tests/guest.sh);
# verdict-sim measures the verdict rule by running compare on simulated
# jobs (tests/bench/b0008); changepoint-sim the nightly detector on
# synthetic series (b0011); intake-time what a job's body costs to read (b0015);
# store-fill a store of many finished jobs, made by the daemon's code (b0016)
TEST_TOOLS = $(BUILD)/tests/qemu-boot $(BUILD)/tests/verdict-sim $(BUILD)/tests/changepoint-sim \
	$(BUILD)/tests/intake-time $(BUILD)/tests/transport-cli $(BUILD)/tests/store-fill
$(TEST_TOOLS): $(BUILD)/tests/%: tests/tools/%.c $(call obj,$(DAEMON_LIB_SRCS) $(CATALOG_SRCS) $(LIB_SRCS))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter-out %.h,$^) $(LDLIBS_DAEMON)
# the daemon as the tests build it: TLBLAB_STORE_FAULT makes its store
# fail at one step (t0081); the daemon `make` builds honours no such switch
FAULT_DAEMON = $(BUILD)/tlblabd-faults
$(FAULT_DAEMON): $(DAEMON_MAIN) $(call obj,$(DAEMON_LIB_SRCS) $(CATALOG_SRCS) $(LIB_SRCS))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DTLBLAB_FAULTS -MF $@.d -o $@ $^ $(LDLIBS_DAEMON)
# the simulated lab (tests/sim/, docs/scale.md): the daemon with boot
# method and transport `sim` linked in (each registers itself, a
# constructor), for the tests and benches of a lab of many machines (t0086,
# b0016); the daemon `make` builds has neither
SIM_SRCS = $(wildcard tests/sim/*.c)
SIM_DAEMON = $(BUILD)/tlblabd-sim
$(SIM_DAEMON): $(call obj,$(DAEMON_MAIN) $(DAEMON_LIB_SRCS) $(CATALOG_SRCS) $(LIB_SRCS) $(SIM_SRCS))
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_DAEMON)
# store-fill reads a lab of simulated machines
$(BUILD)/tests/store-fill: $(call obj,$(SIM_SRCS))
# verdict-sim's other files (verdict-sim.h says which does what)
$(BUILD)/tests/verdict-sim: tests/tools/verdict-sim-gen.c tests/tools/verdict-sim-jobs.c tests/tools/verdict-sim.h

# the fuzzers (tests/fuzz/NAME/fuzz_NAME.c, one per parser of outside input):
# `make fuzz` links each with libFuzzer (clang) as $(BUILD)/fuzzer-NAME; every
# build links it with tests/fuzz/replay.c as an ordinary program,
# tests/fuzz-NAME, that replays its corpus in `make test` (t0090)
FUZZ_NAMES = $(patsubst tests/fuzz/%/,%,$(sort $(dir $(wildcard tests/fuzz/*/fuzz_*.c))))
FUZZ_REPLAY = $(patsubst %,$(BUILD)/tests/fuzz-%,$(FUZZ_NAMES))
FUZZ_LIB_OBJS = $(call obj,$(DAEMON_LIB_SRCS) $(CATALOG_SRCS) $(LIB_SRCS))
# what the harnesses share (the lab they read requests against, the checks
# of a subject, the promise of a body parser)
FUZZ_HEADERS = $(wildcard tests/fuzz/*.h)
FUZZ_SECONDS ?= 600
define fuzz_rules
$(BUILD)/tests/fuzz-$(1): tests/fuzz/$(1)/fuzz_$(1).c tests/fuzz/replay.c $(FUZZ_LIB_OBJS) $(FUZZ_HEADERS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_CFLAGS) -o $$@ $$(filter-out %.h,$$^) $$(LDLIBS_DAEMON)
$(BUILD)/fuzzer-$(1): tests/fuzz/$(1)/fuzz_$(1).c $(FUZZ_LIB_OBJS) $(FUZZ_HEADERS)
	$$(CC) $$(ALL_CFLAGS) -fsanitize=fuzzer -o $$@ $$(filter-out %.h,$$^) $$(LDLIBS_DAEMON)
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call fuzz_rules,$(n))))

test:
	@sh scripts/deps.sh test
	@$(MAKE) --no-print-directory $(BINARIES) $(UNIT_TESTS) $(TEST_TOOLS) $(FAULT_DAEMON) $(SIM_DAEMON) $(FUZZ_REPLAY)
	@BUILD=$(BUILD) TLBLAB_MAKE_START=$(MAKE_START) $(if $(TESTS),,TEST_RECORD=docs/measured/make-test.md) \
		sh tests/run.sh

# warnings are errors, and the whole suite runs under ASan and UBSan
check:
	@sh scripts/deps.sh check
	@$(MAKE) --no-print-directory build/tlblab-agent
	@$(MAKE) --no-print-directory BUILD=build/check WERROR=-Werror STATIC= \
		CFLAGS="-O1 -g -fno-omit-frame-pointer" \
		SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
		$(patsubst $(BUILD)/%,build/check/%,$(BINARIES) $(UNIT_TESTS) $(TEST_TOOLS) $(FAULT_DAEMON) $(SIM_DAEMON) $(FUZZ_REPLAY))
	@BUILD=build/check ASAN_OPTIONS=detect_leaks=1 sh tests/run.sh

# each fuzzer runs FUZZ_SECONDS (FUZZ=NAME: that one only), one after the
# other, niced, from its corpus; tests/fuzz/run.sh says what each found
fuzz:
	@sh scripts/deps.sh fuzz
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang STATIC= \
		CFLAGS="-O1 -g -fno-omit-frame-pointer" \
		SANITIZE="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
		$(patsubst %,build/fuzz/fuzzer-%,$(or $(FUZZ),$(FUZZ_NAMES)))
	@BUILD=build/fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh $(or $(FUZZ),$(FUZZ_NAMES))

bench:
	@sh scripts/deps.sh bench
	@$(MAKE) --no-print-directory $(BINARIES) $(TEST_TOOLS) $(SIM_DAEMON)
	@BUILD=$(BUILD) TLBLAB_MAKE_START=$(MAKE_START) sh tests/bench/run.sh

demo:
	@sh scripts/deps.sh demo
	@$(MAKE) --no-print-directory $(BINARIES)
	@BUILD=$(BUILD) TLBLAB_MAKE_START=$(MAKE_START) sh scripts/demo.sh

# the default lab's nightly track, watched: commits on a branch of the
# embedded tree, measured, an alert, its bisection to the culprit
demo-track:
	@sh scripts/deps.sh demo
	@$(MAKE) --no-print-directory $(BINARIES)
	@BUILD=$(BUILD) TLBLAB_MAKE_START=$(MAKE_START) sh scripts/demo-track.sh

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj $(BUILD)/aarch64/obj -name '*.d' 2>/dev/null)
