# tlblab: make | make test | make demo | make bench | make check
#
# Every target that needs packages first installs the missing ones
# (tests/deps.sh, from configs/packages.txt), so each works alone on a fresh
# Debian 12 machine as root.

CC       ?= gcc
BUILD    ?= build
CFLAGS   ?= -O2 -g
WERROR   ?=
SANITIZE ?=
# the agent runs inside a busybox initramfs: static unless sanitized
STATIC   ?= -static

WARNINGS  = -Wall -Wextra -Wformat=2 -Wno-format-nonliteral -Wshadow -Wstrict-prototypes $(WERROR)
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -pthread $(WARNINGS) $(CFLAGS) $(SANITIZE) \
	-Idaemon -Iagents -Iagents/monitors -MMD -MP
LDLIBS_AGENT = -ljansson -lm -pthread

UTIL_SRCS  = daemon/strbuf.c daemon/util.c
AGENT_LIB_SRCS = agents/spec.c agents/runner.c agents/facts.c \
	$(wildcard agents/monitors/*.c) $(wildcard agents/workloads/*.c) $(UTIL_SRCS)
AGENT_SRCS = agents/agent.c $(AGENT_LIB_SRCS)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

AGENT      = $(BUILD)/tlblab-agent
UNIT_TESTS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

.PHONY: all deps-build test check bench demo clean

all: deps-build $(AGENT)

deps-build:
	@sh tests/deps.sh build

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(AGENT): $(call obj,$(AGENT_SRCS))
	$(CC) $(ALL_CFLAGS) $(STATIC) -o $@ $^ $(LDLIBS_AGENT)

$(BUILD)/tests/test_%: tests/unit/test_%.c $(call obj,$(AGENT_LIB_SRCS))
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka $(LDLIBS_AGENT)

test:
	@sh tests/deps.sh test
	@$(MAKE) --no-print-directory $(AGENT) $(UNIT_TESTS)
	@BUILD=$(BUILD) sh tests/run.sh

# warnings are errors, and the whole suite runs under ASan and UBSan
check:
	@sh tests/deps.sh check
	@$(MAKE) --no-print-directory BUILD=build/check WERROR=-Werror STATIC= \
		CFLAGS="-O1 -g -fno-omit-frame-pointer" \
		SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
		build/check/tlblab-agent $(patsubst $(BUILD)/%,build/check/%,$(UNIT_TESTS))
	@BUILD=build/check ASAN_OPTIONS=detect_leaks=1 sh tests/run.sh

bench:
	@sh tests/deps.sh bench
	@$(MAKE) --no-print-directory $(AGENT)
	@BUILD=$(BUILD) sh tests/bench/run.sh

demo:
	@sh tests/deps.sh demo
	@$(MAKE) --no-print-directory $(AGENT)
	@BUILD=$(BUILD) sh tests/demo.sh

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
