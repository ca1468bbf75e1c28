# shellcheck shell=sh
# build.sh's part "config": the kernel's .config and the build id. The
# .config is made in WORK/cfg-tmp (the BASE target or file, the fragments
# merged with merge_config.sh, olddefconfig), in the sandbox, and
# remembered in WORK/config-cache under a hash of everything kconfig reads,
# so a patch that touches no Kconfig input skips kconfig's ~15 s of
# compiler probes. Every option a fragment sets must survive olddefconfig,
# or the build fails with class config and the names: a silently dropped
# option would make the measurement meaningless. The build id hashes the
# commit, the final .config and the compiler (and the arch when it is not
# x86_64). Sourced by build.sh (parts.list).

# merge_fragments: the fragments (CFG/frag-N.config) merged into CFG's
# .config, in the sandbox.
merge_fragments() {
	set --
	_i=0
	while [ "$_i" -lt "$nmerge" ]; do
		_i=$((_i + 1))
		set -- "$@" "frag-$_i.config"
	done
	[ $# -gt 0 ] || return 0
	say "config: merging $# fragment(s)"
	# merge_config.sh makes its temp files in the current directory
	# (the sandbox starts in SB_RW, the config directory).
	run sb sh "$SRC/scripts/kconfig/merge_config.sh" -m -O . .config "$@"
}

# config_make: FINAL (and final), the .config of this build: from the
# cache, or made by kconfig.
config_make() {
	step="generating the config"
	CFG=$WORK/cfg-tmp
	REQ=$WORK/.requested.config
	FINAL=$WORK/.final.config
	# a fresh directory each time: the last build's sandbox could write the old one
	rm -rf -- "$CFG"
	mkdir -- "$CFG"

	# The fragments, in order: copies with plain names for merge_config.sh
	# (it splits its file list on spaces), and all of them in one file for the
	# check below and for the keys.
	nmerge=0
	rest=$fragments
	: >"$REQ"
	while [ -n "$rest" ]; do
		f=${rest%%"$NL"*}
		rest=${rest#*"$NL"}
		nmerge=$((nmerge + 1))
		cp -- "$f" "$CFG/frag-$nmerge.config"
		cat -- "$f" >>"$REQ"
		printf '\n' >>"$REQ"
	done

	# kconfig takes ~15 s here, most of it compiler probes, and its result
	# depends only on these inputs: the recipe, the toolchain, and the files
	# kconfig reads (every Kconfig*, the defconfigs and fragments, scripts/,
	# the Makefiles). A patch to a .c file reuses the base build's config; a
	# patch to a Kconfig file gets a fresh one. TLBLAB_NO_CONFIG_CACHE=1
	# always regenerates.
	cfgkey=$({
		printf 'base %s\n' "$base"
		if [ -n "$base_file" ]; then cat -- "$base_file"; fi
		cat "$REQ"
		uname -m
		[ -z "$cross" ] || printf 'arch %s\n' "$arch"
		"$kcc" --version
		"${cross}ld" --version | head -n 1
		rustc --version 2>/dev/null || true
		g ls-tree HEAD -- Makefile scripts "arch/$karch/Makefile" "arch/$karch/configs" kernel/configs
		g ls-tree -r HEAD | awk -F '\t' '$2 ~ /(^|\/)Kconfig[^\/]*$/'
	} | sha256sum | cut -c1-64)
	CFGCACHE=$WORK/config-cache
	mkdir -p -- "$CFGCACHE"
	find "$CFGCACHE" -type f -mtime +30 -exec rm -f {} + 2>/dev/null || true
	if [ "${TLBLAB_NO_CONFIG_CACHE:-0}" != 1 ] && [ -s "$CFGCACHE/$cfgkey" ]; then
		say "config: same kconfig inputs as an earlier build, reusing its .config"
		cp -- "$CFGCACHE/$cfgkey" "$FINAL"
		touch -- "$CFGCACHE/$cfgkey"
	else
		sb_own "$CFG"
		SB_RW=$CFG
		case $base in
		tinyconfig | defconfig)
			say "config: make $base"
			run kmake "$CFG" "$base" || fail infra "make $base failed"
			;;
		*)
			say "config: base $base_file"
			cp -- "$base_file" "$CFG/.config"
			;;
		esac
		merge_fragments || fail infra "merge_config.sh failed"
		run kmake "$CFG" olddefconfig || fail infra "make olddefconfig failed"
		sb_cat "$CFG/.config" >"$FINAL" || fail infra "kconfig left no .config"
		SB_RW=
		# only the tree's own kconfig fills the cache another build reads
		if [ "$trusted" = 1 ]; then
			cp -- "$FINAL" "$CFGCACHE/$cfgkey.tmp"
			mv -- "$CFGCACHE/$cfgkey.tmp" "$CFGCACHE/$cfgkey"
		fi
	fi
	final=$FINAL
}

# config_check: every option the fragments set is in final, or class config.
config_check() {
	# Every option the fragments set (the last setting wins, as when merging)
	# must be in the final .config with the same value; "is not set" and =n
	# must not be set.
	awk '
	function trim(s) { sub(/[ \t\r]+$/, "", s); return s }
	NR == FNR {
		line = trim($0)
		if (line ~ /^CONFIG_[A-Za-z0-9_]+=/) {
			name = substr(line, 1, index(line, "=") - 1)
			val = substr(line, index(line, "=") + 1)
		} else if (line ~ /^# CONFIG_[A-Za-z0-9_]+ is not set$/) {
			name = line; sub(/^# /, "", name); sub(/ is not set$/, "", name)
			val = "n"
		} else
			next
		if (!(name in want)) order[++n] = name
		want[name] = val
		next
	}
	/^CONFIG_[A-Za-z0-9_]+=/ {
		line = trim($0)
		have[substr(line, 1, index(line, "=") - 1)] = substr(line, index(line, "=") + 1)
	}
	END {
		for (i = 1; i <= n; i++) {
			name = order[i]
			if (want[name] == "n") {
				if (name in have)
					printf "%s is not set requested, final .config has %s=%s\n", name, name, have[name]
			} else if (!(name in have)) {
				printf "%s=%s requested, final .config has it not set\n", name, want[name]
			} else if (have[name] != want[name]) {
				printf "%s=%s requested, final .config has %s=%s\n", name, want[name], name, have[name]
			}
		}
	}' "$REQ" "$final" >"$WORK/.dropped"
	if [ -s "$WORK/.dropped" ]; then
		tee -a "$LOG" <"$WORK/.dropped"
		names=$(awk '{ sub(/[= ].*/, ""); printf "%s%s", sep, $0; sep = " " }' "$WORK/.dropped")
		fail config "$(wc -l <"$WORK/.dropped") option(s) from the fragments did not survive olddefconfig (unmet dependencies?): $names" "$WORK/.dropped"
	fi
}

# build_identify: config_hash, compiler, build_id, build_host and dest
# (OUT/BUILD_ID).
build_identify() {
	config_hash=$(sha256sum <"$final" | cut -c1-64)
	compiler=$("$kcc" --version | head -n 1)
	build_id=$({
		[ -z "$cross" ] || printf 'arch %s\n' "$arch"
		printf '%s\n' "$commit"
		cat "$final"
		printf '\n%s' "$compiler"
	} | sha256sum | cut -c1-64)
	build_host=b-$(printf '%s' "$build_id" | cut -c1-12)
	dest=$OUT/$build_id
	say "build id $build_id (config $config_hash)"
}
