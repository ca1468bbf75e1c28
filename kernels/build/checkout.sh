# shellcheck shell=sh
# build.sh's part "checkout": the source and the commit to build. WORK/src
# is one checkout of the tree (a `git clone --shared` of a local tree, a
# plain clone of a URL) that every build resets; REF is resolved there,
# origin asked when a name may have moved; --fetch brings the submitter's
# branch (bounded in time and size, class ref whatever stops it); --resolve
# ends here with the facts of the commit (ref_facts). Sourced by build.sh
# (parts.list).

# g GIT-ARGS...: git in the checkout, without hooks, stdin closed.
g() { git -C "$SRC" -c advice.detachedHead=false -c core.hooksPath=/dev/null "$@" </dev/null; }

# src_prepare: WORK/src, a checkout of the tree, cloned when missing or of
# another tree, and cleared of what a killed run left.
src_prepare() {
	step="preparing the source checkout"
	if [ -d "$SRC" ]; then
		# A checkout of another tree, or a broken one, is replaced.
		cur=$(git -C "$SRC" config --get remote.origin.url 2>/dev/null || true)
		if [ "$cur" != "$tree" ] || ! git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
			say "replacing $SRC (was a checkout of '$cur')"
			rm -rf -- "$SRC"
		fi
	fi
	if [ ! -d "$SRC" ]; then
		rm -rf -- "$SRC.new"
		if [ "$tree_is_url" = 1 ]; then
			say "cloning $tree"
			run git clone --no-checkout -- "$tree" "$SRC.new" ||
				fail infra "git clone of $tree failed"
		else
			# git clone of a local path runs upload-pack in the tree with
			# the GIT_CONFIG_* environment cleared: it is told on its own
			# command line that the tree is safe (the daemon's user clones
			# a tree that root imported), as the fetches below are
			say "cloning $tree (shared objects)"
			run git clone --shared --no-checkout --upload-pack "git -c safe.directory=* upload-pack" \
				-- "$tree" "$SRC.new" ||
				fail infra "git clone --shared of $tree failed"
		fi
		mv -- "$SRC.new" "$SRC"
		# Every file of a new checkout is newer than what an object dir built
		# from the old one holds: those dirs would rebuild everything, and a
		# cached base would leave them so for each patched build that copies
		# them. Removed, the next build of a tree's own commit makes them again.
		rm -rf -- "$WORK"/obj-*
	fi
	# A killed run may have left a lock or a git am in progress; we hold the lock.
	rm -f -- "$SRC/.git/index.lock"
	if [ -d "$SRC/.git/rebase-apply" ]; then
		g am --abort >/dev/null 2>&1 || rm -rf -- "$SRC/.git/rebase-apply"
	fi
}

# resolve NAME: the commit NAME names in the checkout, origin's view first.
resolve() {
	if is_hex_ref "$1" && g rev-parse -q --verify "$1^{commit}" 2>/dev/null; then
		return 0
	fi
	case $1 in
	refs/*) g rev-parse -q --verify "$1^{commit}" 2>/dev/null ;;
	*)
		g rev-parse -q --verify "refs/tags/$1^{commit}" 2>/dev/null ||
			g rev-parse -q --verify "refs/remotes/origin/$1^{commit}" 2>/dev/null ||
			g rev-parse -q --verify "refs/remotes/$1^{commit}" 2>/dev/null
		;;
	esac
}

# ref_resolve: commit (and base_commit), what REF names, origin asked
# first unless REF is a commit the checkout has.
ref_resolve() {
	step="resolving $ref"
	commit=
	if is_hex_ref "$ref"; then
		commit=$(resolve "$ref") || commit=
	fi
	if [ -z "$commit" ]; then
		# Branch names move: always ask origin. A tag we already have is
		# enough when origin cannot be reached.
		say "fetching from origin"
		if ! run g -c "$UPLOAD_PACK" fetch --prune --force --tags origin '+refs/heads/*:refs/remotes/origin/*'; then
			case $ref in refs/tags/*) tag=$ref ;; *) tag=refs/tags/$ref ;; esac
			g rev-parse -q --verify "$tag^{commit}" >/dev/null ||
				fail infra "git fetch from $tree failed"
			say "fetch failed; using the tag $ref already here"
		fi
		commit=$(resolve "$ref") || commit=
		# A full commit id that no branch or tag reaches: ask for it by name.
		if [ -z "$commit" ] && is_hex_ref "$ref" && [ ${#ref} = 40 ]; then
			run g -c "$UPLOAD_PACK" fetch --no-tags origin "$ref" || true
			commit=$(resolve "$ref") || commit=
		fi
		[ -n "$commit" ] ||
			fail ref "ref '$ref' not found in $tree (not a tag, branch or commit there)"
	fi
	base_commit=$commit
	say "$ref is $commit"
}

# ref_fetch: with --fetch, commit becomes FETCH_REF of FETCH_URL.
ref_fetch() {
	if [ -n "$fetch_url" ]; then
		step="fetching $fetch_ref from $fetch_url"
		say "fetching $fetch_ref from $fetch_url"
		# Whatever keeps the submitter's repository from giving the ref (a
		# wrong URL or ref, a host that does not answer, a pack too large) is
		# the submitter's to fix: class ref, never a retry.
		# --foreground: timeout stays in this script's process group, so the
		# daemon's cancel (a kill of the group) reaches the fetch too; and the
		# fetch does not hold WORK/lock (fd 9) should it outlive us.
		fetch_rc=0
		capture "$WORK/.fetch.out" timeout --foreground -k 5 "$FETCH_TIMEOUT" \
			prlimit --fsize=$((FETCH_MAX_KB * 1024)) -- \
			git -C "$SRC" -c advice.detachedHead=false -c core.hooksPath=/dev/null \
			-c fetch.unpackLimit=1 -c transfer.unpackLimit=1 -c http.followRedirects=false \
			fetch --no-tags -- "$fetch_url" "$fetch_ref" 9>&- || fetch_rc=$?
		if [ "$fetch_rc" != 0 ]; then
			grep -E '^(fatal|error): ' "$WORK/.fetch.out" | head -n 5 >"$WORK/.excerpt" || true
			if [ "$fetch_rc" = 124 ] || [ "$fetch_rc" = 137 ]; then
				fail ref "git fetch of $fetch_ref from $fetch_url did not finish within $FETCH_TIMEOUT s" "$WORK/.excerpt"
			fi
			# the file size limit stops index-pack as it writes the pack, and
			# git then says only "invalid index-pack output": the partial pack
			# at the limit says why (and goes)
			too_big=
			for p in "$SRC/.git/objects/pack"/tmp_pack_*; do
				[ -f "$p" ] || continue
				[ "$(wc -c <"$p")" -ge $((FETCH_MAX_KB * 1024)) ] && too_big=1
				rm -f "$p"
			done
			if [ -n "$too_big" ] || grep -Eq 'signal 25|File too large' "$WORK/.fetch.out"; then
				fail ref "git fetch of $fetch_ref from $fetch_url: the pack is larger than $FETCH_MAX_KB KB" "$WORK/.excerpt"
			fi
			first=$(head -n 1 "$WORK/.excerpt")
			fail ref "cannot fetch $fetch_ref from $fetch_url${first:+: $first}" "$WORK/.excerpt"
		fi
		commit=$(g rev-parse -q --verify 'FETCH_HEAD^{commit}') ||
			fail ref "$fetch_ref at $fetch_url is not a commit"
		say "$fetch_ref at $fetch_url is $commit"
	fi
}

# ref_facts: --resolve's answer (emit_resolved: report.sh), with GOOD's
# commit when --since names it; exits.
ref_facts() {
	step="reading the facts of $commit"
	good=
	if [ -n "$since" ]; then
		good=$(resolve "$since") || fail ref "--since '$since' is not a commit of $tree"
		g merge-base --is-ancestor "$good" "$commit" ||
			fail ref "--since '$since' ($good) is not an ancestor of $commit: there is no range between them"
	fi
	facts=$(g log -1 --format='%ct%x01%an%x01%s' "$commit") || fail infra "git log of $commit failed"
	emit_resolved
}

# src_checkout: the checkout at commit, every untracked file gone.
src_checkout() {
	step="checking out $commit"
	run g checkout -q --detach --force "$commit" || fail infra "git checkout of $commit failed"
	run g clean -fdxq || fail infra "git clean failed"
}
