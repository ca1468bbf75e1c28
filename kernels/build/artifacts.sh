# shellcheck shell=sh
# build.sh's part "artifacts": OUT/<build_id>/, the build's result. The
# build id makes OUT a cache: a second request for the same kernel returns
# at once (cached 1) while its image keeps the hash its build recorded. An
# image is stored only if it is this build's kernel (check_image): a stale
# object from ccache once put an earlier commit's kernel in a bzImage,
# which only the boot's /proc/version check saw. The image, config,
# System.map, build.log, meta.json (+ vmlinux) are gathered in
# OUT/.tmp-PID-ID and appear by rename, complete or not at all. Sourced by
# build.sh (parts.list).

# meta_field NAME: a field of an existing meta.json (one field per line).
meta_field() {
	sed -n "/^  \"$1\": /{s/^  \"$1\": //; s/,\$//; s/^\"//; s/\"\$//; p; q}" "$dest/meta.json" 2>/dev/null
}

# cached_reuse: a kernel already in OUT/<build_id>/ is the answer (exits).
# A cached kernel is reused only while its image still has the hash its
# build recorded; one without a recorded hash predates the sandbox (x86_64
# kernels built before --arch recorded it as bzimage_sha256).
cached_reuse() {
	if [ -f "$dest/$image" ] && { [ "$want_vmlinux" = 0 ] || [ -f "$dest/vmlinux" ]; }; then
		image_sha256=$(sha256sum <"$dest/$image" | cut -c1-64)
		recorded=$(meta_field image_sha256)
		[ -n "$recorded" ] || recorded=$(meta_field bzimage_sha256)
		# A tree's own kernel is reused only once its object directory has been
		# built too: the patched builds that follow copy it to be incremental,
		# and a recipe whose fragments were reorganised (same .config, new
		# object directory) would otherwise leave every one of them a full build.
		if [ "$recorded" = "$image_sha256" ] && { [ "$trusted" = 0 ] || [ -f "$OBJ/vmlinux" ]; }; then
			say "$dest exists: cached, objects in $OBJ"
			emit_ok 1 "$(meta_field warnings)" "$(meta_field kernelrelease)"
		elif [ "$recorded" = "$image_sha256" ]; then
			say "$dest exists, but $OBJ was never built: building it (ccache) for the patched builds that follow"
		else
			say "$dest exists but its $image ${recorded:+does not match its recorded hash}${recorded:-has no recorded hash}: building again"
		fi
	fi
}

# le_num FILE OFFSET NBYTES: the little-endian number at OFFSET of FILE.
le_num() {
	od -An -tu1 -j "$2" -N "$3" -- "$1" | awk '{ for (i = NF; i >= 1; i--) v = v * 256 + $i } END { print v + 0 }'
}

# check_image IMAGE: IMAGE is this build's kernel, or nothing is stored.
# A stale object from a cache is otherwise seen only at the boot, by the
# /proc/version check, and fails every boot of a build stored as good.
# The image names this build's host (x86's setup code carries the version
# string; arm64's Image is the kernel itself). x86's payload, which
# piggy.S pulls in with .incbin, must be byte for byte the compressed
# vmlinux this make wrote: its place and length are in the boot header
# (setup_sects at 0x1f1, payload_offset and payload_length at 0x248 and
# 0x24c, from the end of the setup code).
check_image() {
	grep -qaF "(tlblab@$build_host)" "$1" ||
		fail infra "the $image this build made does not name its build host $build_host: a stale image, not stored"
	[ "$karch" = x86 ] || return 0
	case $(sed -nE 's/^CONFIG_KERNEL_(GZIP|BZIP2|LZMA|XZ|LZO|LZ4|ZSTD)=y$/\1/p' "$final") in
	GZIP) _z=gz ;;
	BZIP2) _z=bz2 ;;
	LZMA) _z=lzma ;;
	XZ) _z=xz ;;
	LZO) _z=lzo ;;
	LZ4) _z=lz4 ;;
	ZSTD) _z=zst ;;
	*) fail infra "the .config chooses no kernel compression (CONFIG_KERNEL_GZIP, CONFIG_KERNEL_XZ, ...)" ;;
	esac
	_payload=arch/x86/boot/compressed/vmlinux.bin.$_z
	sb_cat "$OBJ/$_payload" >"$WORK/.payload" || fail infra "the build left no $_payload"
	_sects=$(le_num "$1" 497 1)
	[ "$_sects" != 0 ] || _sects=4
	_off=$(((_sects + 1) * 512 + $(le_num "$1" 584 4)))
	_len=$(le_num "$1" 588 4)
	if [ "$_len" != "$(($(wc -c <"$WORK/.payload")))" ] ||
		! tail -c +"$((_off + 1))" -- "$1" | head -c "$_len" | cmp -s - "$WORK/.payload"; then
		fail infra "the bzImage's payload is not the $_payload this make wrote (a stale piggy.o from a cache?): not stored"
	fi
	rm -f -- "$WORK/.payload"
}

# artifacts_collect: the image (checked), config, System.map (and vmlinux)
# in tmpout; kernelrelease and image_sha256.
artifacts_collect() {
	step="collecting the artifacts"
	kernelrelease=$(kmake "$OBJ" -s kernelrelease 2>/dev/null | tail -n 1)
	[ -n "$kernelrelease" ] || fail infra "make kernelrelease printed nothing"
	tmpout=$OUT/.tmp-$$-$build_id
	rm -rf -- "$tmpout"
	mkdir -- "$tmpout"
	sb_cat "$OBJ/arch/$karch/boot/$image" >"$tmpout/$image" || fail infra "the build left no arch/$karch/boot/$image"
	check_image "$tmpout/$image"
	cp -- "$final" "$tmpout/config"
	sb_cat "$OBJ/System.map" >"$tmpout/System.map" || fail infra "the build left no System.map"
	if [ "$want_vmlinux" = 1 ]; then
		sb_cat "$OBJ/vmlinux" >"$tmpout/vmlinux" || fail infra "the build left no vmlinux"
	fi
	SB_RW=
	SB_RW_HOST=
	if [ -n "$private_obj" ]; then
		rm -rf -- "$private_obj"
		private_obj=
	fi
	image_sha256=$(sha256sum <"$tmpout/$image" | cut -c1-64)
}

# json_str S: S as a JSON string (one safe line).
json_str() {
	printf '"%s"' "$(oneline "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"
}

# artifacts_publish: meta.json and the build log in tmpout, then tmpout
# renamed to dest; the success facts (exits).
artifacts_publish() {
	duration=$(($(date +%s) - start))
	say "built in ${duration}s with $warnings warning(s): $kernelrelease"
	cp -- "$LOG" "$tmpout/build.log"
	{
		printf '{\n'
		printf '  "build_id": %s,\n' "$(json_str "$build_id")"
		printf '  "commit": %s,\n' "$(json_str "$commit")"
		printf '  "base_ref": %s,\n' "$(json_str "$ref")"
		printf '  "base_commit": %s,\n' "$(json_str "$base_commit")"
		printf '  "config_hash": %s,\n' "$(json_str "$config_hash")"
		printf '  "compiler": %s,\n' "$(json_str "$compiler")"
		printf '  "duration_s": %s,\n' "$duration"
		printf '  "warnings": %s,\n' "$warnings"
		printf '  "kernelrelease": %s,\n' "$(json_str "$kernelrelease")"
		printf '  "build_host": %s,\n' "$(json_str "$build_host")"
		printf '  "arch": %s,\n' "$(json_str "$arch")"
		printf '  "image": %s,\n' "$(json_str "$image")"
		printf '  "image_sha256": %s,\n' "$(json_str "$image_sha256")"
		printf '  "cached": 0\n'
		printf '}\n'
	} >"$tmpout/meta.json"

	# Publish by rename. A directory already there without vmlinux (asked for
	# now) is replaced; one that appeared meanwhile is kept.
	if [ -d "$dest" ]; then
		mv -T -- "$dest" "$OUT/.tmp-$$-old" 2>/dev/null || true
		rm -rf -- "$OUT/.tmp-$$-old"
	fi
	if ! mv -T -- "$tmpout" "$dest" 2>/dev/null; then
		[ -f "$dest/$image" ] || fail infra "cannot publish $dest"
	fi
	tmpout=
	emit_ok 0 "$warnings" "$kernelrelease"
}
