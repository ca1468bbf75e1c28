# shellcheck shell=sh
# build.sh's part "compile": make in the sandbox. The kernel is built out
# of tree in WORK/obj-<key>, one object directory per config recipe (base +
# fragment contents), so the patched build that follows a base build
# recompiles only what the patch touched, and two recipes built in turn do
# not rebuild each other's objects. An untrusted commit builds in a private
# copy of it (sandbox.sh's trust). A failed make is class build, with the
# compiler's errors made relative to the tree. Sourced by build.sh
# (parts.list).

# obj_prepare: OBJ, the recipe's object dir, the build user's; for an
# untrusted commit, private_obj, its copy. The object dir belongs to the
# config recipe, so a patched build after its base build is incremental.
obj_prepare() {
	objkey=$({
		[ -z "$cross" ] || printf 'arch %s\n' "$arch"
		printf 'base %s\n' "$base"
		if [ -n "$base_file" ]; then cat -- "$base_file"; fi
		cat "$REQ"
	} | sha256sum | cut -c1-16)
	OBJ=$WORK/obj-$objkey
	mkdir -p -- "$OBJ"
	sb_own "$OBJ"
	if [ "$trusted" = 0 ]; then
		# A copy keeps the build incremental (cp -a copies links as links). The
		# sandbox sees it at the shared directory's own path: objtool and the
		# .cmd files record absolute paths, and another path rebuilds it all.
		private_obj=$WORK/objp-$objkey
		rm -rf -- "$private_obj"
		cp -a -- "$OBJ" "$private_obj" || fail infra "cannot copy $OBJ for a private build"
		SB_RW_HOST=$private_obj
	fi
}

# obj_config: final into OBJ's .config, only when it differs: a new mtime
# alone makes kconfig and kbuild redo work.
obj_config() {
	SB_RW=$OBJ
	sb_exec sh -c 'cat >.config.new && if cmp -s .config.new .config; then rm -f .config.new; else mv -f .config.new .config; fi' \
		<"$final" || fail infra "cannot put the .config into $OBJ"
}

# compile: make IMAGE in OBJ (warnings counted), or class build.
compile() {
	step="building"
	say "make -j$jobs $image${cross:+ (ARCH=$karch CROSS_COMPILE=$cross)} in $OBJ${private_obj:+ (a private copy)} (ccache $CCACHE_DIR)"
	make_from=$(($(wc -l <"$LOG") + 1))
	build_rc=0
	run kmake "$OBJ" -j"$jobs" \
		KBUILD_BUILD_USER=tlblab KBUILD_BUILD_HOST="$build_host" \
		KBUILD_BUILD_TIMESTAMP="$BUILD_TIMESTAMP" KBUILD_BUILD_VERSION=1 \
		"$image" || build_rc=$?
	tail -n +"$make_from" "$LOG" >"$WORK/.make.out"
	warnings=$(grep -c 'warning:' "$WORK/.make.out" || true)

	if [ "$build_rc" != 0 ]; then
		# Paths are made relative to the tree: "arch/x86/mm/tlb.c:1046:3: error".
		# gcc names the source as make passed it: absolute, or relative to OBJ
		# ("../src/...") once ccache's BASEDIR has rewritten it.
		awk -v src="$SRC/" -v obj="$OBJ/" '
		function strip(s, p,   i) {
			while ((i = index(s, p)) > 0)
				s = substr(s, 1, i - 1) substr(s, i + length(p))
			return s
		}
		function clean(s) {
			s = strip(strip(s, src), obj)
			while (sub(/(^|[ \t(])\.\.\/src\//, "&\001", s))
				sub(/\.\.\/src\/\001/, "", s)
			return s
		}
		/: (fatal )?error: |: Error: |undefined reference to |^ld: / {
			if (n < 20) { print clean($0); n++ }
		}
		# make[4]: *** [/src/scripts/Makefile.build:250: arch/x86/mm/tlb.o] Error 1
		/^make(\[[0-9]+\])?: \*\*\* \[/ && target == "" {
			t = substr($0, index($0, "*** [") + 5)
			t = substr(t, 1, index(t, "]") - 1)
			k = split(t, a, ": ")
			target = clean(a[k])
		}
		END { if (target != "") print "make target: " target }
		' "$WORK/.make.out" >"$WORK/.excerpt"
		if grep -Eq 'No space left on device|Cannot allocate memory|virtual memory exhausted|Killed signal terminated program|please install' "$WORK/.make.out"; then
			grep -Em3 'No space left on device|Cannot allocate memory|virtual memory exhausted|Killed signal terminated program|please install' "$WORK/.make.out" >"$WORK/.excerpt"
			fail infra "the builder ran out of resources or lacks a tool: $(head -n 1 "$WORK/.excerpt")" "$WORK/.excerpt"
		fi
		if [ ! -s "$WORK/.excerpt" ]; then
			tail -n 15 "$WORK/.make.out" >"$WORK/.excerpt"
		fi
		first=$(grep -m1 -E 'error|Error|undefined reference' "$WORK/.excerpt" || head -n 1 "$WORK/.excerpt")
		fail build "build failed (make exit $build_rc): $first" "$WORK/.excerpt"
	fi
}
