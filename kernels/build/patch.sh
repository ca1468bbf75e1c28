# shellcheck shell=sh
# build.sh's part "patch": --patch applied to the checkout. An mbox (one
# patch or a series) goes through git am --3way, a plain diff through git
# apply and a commit; both with the fixed identity and date (env.sh), so
# the same patch on the same base makes the same commit, and so the same
# build id. A patch that does not apply is class patch, with the file and
# hunk git names. Sourced by build.sh (parts.list).

# An mbox (git format-patch, a lore raw message, a series) starts with the
# mbox "From " line or with mail headers; anything else is a plain diff.
is_mbox() {
	head -n 1 -- "$1" | grep -Eq '^(From |(From|Subject|Date|Message-I[Dd]|Return-Path|Received|To|Cc|MIME-Version|Content-Type|X-[A-Za-z0-9-]+): )'
}

# The errors of a failed apply: the file and the hunk position, the way
# `git apply` words them, made relative to the tree.
apply_errors() {
	grep -E '^(error|fatal): |^Patch failed at |^Applying: |^CONFLICT|^Patch is empty|^No changes' "$1" |
		grep -v '^error: while searching for:' | head -n 30 || true
}

# patch_apply: with --patch, commit becomes the patched commit.
patch_apply() {
	if [ -n "$patch" ]; then
		step="applying the patch"
		if is_mbox "$patch"; then
			# a series' cover letter has no diff: git am drops it
			say "applying the mbox with git am --3way --empty=drop"
			if ! capture "$WORK/.apply.out" g am --3way --empty=drop -- "$patch"; then
				apply_errors "$WORK/.apply.out" >"$WORK/.excerpt"
				# With --3way, git am may only say that it could not build a
				# fake ancestor; git apply names the file and the hunk.
				failed=$(g rev-parse --git-path rebase-apply/patch)
				case $failed in /*) ;; *) failed=$SRC/$failed ;; esac
				if ! grep -q 'patch failed: ' "$WORK/.excerpt" && [ -s "$failed" ]; then
					g apply --check --verbose -- "$failed" 2>&1 | grep -E '^error: ' |
						grep -v '^error: while searching for:' >>"$WORK/.excerpt" || true
				fi
				g am --abort >/dev/null 2>&1 || true
				first=$(grep -m1 'patch failed: ' "$WORK/.excerpt" || grep -m1 -E '^(error|fatal): ' "$WORK/.excerpt" || echo "git am failed")
				# which patch of a series: "Patch failed at 0002 mm: subject"
				at=$(sed -n 's/^Patch failed at \([0-9]*\) \(.*\)$/patch \1 (\2)/p' "$WORK/.excerpt" | head -n 1)
				fail patch "${at:-patch} does not apply to $ref: $first" "$WORK/.excerpt"
			fi
		else
			say "applying the plain diff with git apply --index"
			if ! capture "$WORK/.apply.out" g apply --index -- "$patch"; then
				apply_errors "$WORK/.apply.out" >"$WORK/.excerpt"
				g reset -q --hard >/dev/null 2>&1 || true
				first=$(grep -m1 'patch failed: ' "$WORK/.excerpt" || grep -m1 -E '^(error|fatal): ' "$WORK/.excerpt" || echo "git apply failed")
				fail patch "patch does not apply to $ref: $first" "$WORK/.excerpt"
			fi
			if g diff --cached --quiet; then
				fail patch "the patch changes nothing in $ref"
			fi
			GIT_AUTHOR_NAME=tlblab GIT_AUTHOR_EMAIL=tlblab@localhost GIT_AUTHOR_DATE=$GIT_COMMITTER_DATE \
				run g commit -q --no-verify --no-gpg-sign -m "tlblab: apply a plain diff" ||
				fail infra "git commit of the applied diff failed"
		fi
		commit=$(g rev-parse --verify 'HEAD^{commit}')
		say "patched commit $commit"
	fi
}
