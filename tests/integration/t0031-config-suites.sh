#!/bin/sh
# A suite's workload specs are checked when the configuration loads, by the
# agent's own spec parser: `tlblabd -n` (and start-up, which loads the same
# way) refuses a spec the agent would refuse, at FILE:LINE:COL, instead of
# a run stage failing after a kernel build and a boot. Sizes and times take
# units (8M, 2s). Only `tlblabd -n` and a start-up that must stop at the
# configuration run here: no ports, no machines.
. "$(dirname "$0")/../lib.sh"

DAEMON=$BUILD/tlblabd

cat >"$TMP/units.yaml" <<EOF
lab: {data_dir: $TMP/data}
suites:
  - name: tlb
    timeout: 10m
    workloads:
      - workload: fault-write
        size: 32M
        duration: 2s
      - workload: mremap
        size: [4M, 8MiB]
        interval: 500ms
EOF
check "sizes and times with units pass tlblabd -n" \
	sh -c "'$DAEMON' -n -c '$TMP/units.yaml' | grep -qx 'configuration OK'"

# the file of issue 10, with a typo in the unit
cat >"$TMP/bad-size.yaml" <<EOF
lab: {data_dir: $TMP/data}
suites:
  - name: tlb
    workloads:
      - workload: mremap
        workers: 2
        size: [4M, 8Q]
EOF
check_fails "a bad size fails tlblabd -n at the element's line and column" 1 \
	"bad-size\.yaml:7:20: size\[1\]: must be a number of bytes from 4K to 64G: .*KiB.* \(got '8Q'\)" \
	"$DAEMON" -n -c "$TMP/bad-size.yaml"

cat >"$TMP/bad-param.yaml" <<EOF
lab: {data_dir: $TMP/data}
suites:
  - name: quick
    workloads:
      - workload: mprotect
        workers: 2
      - workload: mremap
        sise: 8M
EOF
check_fails "an unknown parameter fails tlblabd -n at its key" 1 \
	"bad-param\.yaml:8:9: sise: unknown field" \
	"$DAEMON" -n -c "$TMP/bad-param.yaml"
check "tlblabd -n prints no 'configuration OK' for it" \
	sh -c "! '$DAEMON' -n -c '$TMP/bad-param.yaml' 2>/dev/null | grep -q 'configuration OK'"

# start-up goes through the same loader and stops there (the timeout only
# bounds a daemon that would wrongly start)
check_fails "start-up refuses the suite too" 1 "bad-size\.yaml:7:20: size\[1\]" \
	timeout 20 "$DAEMON" -c "$TMP/bad-size.yaml"

# the demo writes /var/lib/tlblab/token before it starts the daemon; a fresh
# machine has none yet, so the file is read with a token of the test's own
(umask 077; echo "a-token-of-the-test-0123456789" >"$TMP/token")
sed "s|/var/lib/tlblab/token|$TMP/token|" "$TOP/configs/local.yaml" >"$TMP/local.yaml"
check "configs/local.yaml passes tlblabd -n (its token file written as the demo does)" \
	sh -c "cd '$TOP' && '$DAEMON' -n -c '$TMP/local.yaml' | grep -qx 'configuration OK'"
# the example's token is refused (t0032); with one of the operator's, it
# passes (relative paths are the working directory's: run from $TOP)
sed 's/example-token-change-me-0001/a-token-of-our-own-0123456789/' "$TOP/configs/lab.example.yaml" >"$TMP/lab.example.yaml"
check "configs/lab.example.yaml passes tlblabd -n once its token is replaced" \
	sh -c "cd '$TOP' && '$DAEMON' -n -c '$TMP/lab.example.yaml' | grep -qx 'configuration OK'"

# one setting, one row: -n prints each lab setting in force from the table
# the parser reads, and docs/lab-settings.md is that table as -S prints it
printf 'lab:\n  data_dir: /tmp/d\n  workers: 7\n  max_body: 2M\n  tokens: [a-token-of-the-test-0123456789]\n' >"$TMP/settings.yaml"
"$DAEMON" -n -c "$TMP/settings.yaml" >"$TMP/n.out" 2>&1
check "tlblabd -n prints a set value, a default and the tokens counted, not shown" \
	sh -c "grep -qx 'lab.workers: 7' '$TMP/n.out' && grep -qx 'lab.max_body: 2M' '$TMP/n.out' &&
	       grep -qx 'lab.header_timeout: 10s' '$TMP/n.out' && grep -qx 'lab.tokens: 1 token(s)' '$TMP/n.out' &&
	       ! grep -q a-token-of-the-test '$TMP/n.out'"
rows=$("$DAEMON" -S | grep -c '^| `lab\.')
check "tlblabd -n prints one line per setting of the reference ($rows)" \
	sh -c "[ \$(grep -c '^lab\.' '$TMP/n.out') -eq $rows ] && [ $rows -gt 10 ]"
"$DAEMON" -S >"$TMP/ref.md"
grep '^|' "$TOP/docs/lab-settings.md" >"$TMP/doc.md"
if cmp -s "$TMP/ref.md" "$TMP/doc.md"; then
	pass "docs/lab-settings.md is the table tlblabd -S prints"
else
	fail "docs/lab-settings.md is the table tlblabd -S prints" \
		"$(diff "$TMP/doc.md" "$TMP/ref.md" | head -n 5 | tr '\n' ' ') (write it again with build/tlblabd -S)"
fi
