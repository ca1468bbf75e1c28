#!/bin/sh
# Import Debian's linux-source-6.1 tarball into a git repository, once.
#
# The embedded lab needs a kernel tree it can check out, patch with git am and
# build incrementally. Debian ships the source as a tarball; this turns it into
# a repository with one commit, tagged v6.1-debian (a stable name for configs)
# and vX.Y.Z-debian (the exact sublevel). A second run finds the tag and
# returns at once, so callers need not check.
#
# usage: import-tree.sh DEST [TARBALL]
set -eu

dest=${1:?usage: import-tree.sh DEST [TARBALL]}
tarball=${2:-/usr/src/linux-source-6.1.tar.xz}

if git -C "$dest" rev-parse -q --verify refs/tags/v6.1-debian >/dev/null 2>&1; then
	echo "import-tree: $dest already has v6.1-debian"
	exit 0
fi
if [ ! -r "$tarball" ]; then
	echo "import-tree: $tarball not found (apt-get install linux-source-6.1)" >&2
	exit 1
fi

tmp="$dest.import.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
echo "import-tree: unpacking $tarball"
tar -xJf "$tarball" -C "$tmp" --strip-components=1
cd "$tmp"
ver=$(make -s kernelversion 2>/dev/null || echo 6.1)
git init -q -b master
git config user.name "tlblab import"
git config user.email "tlblab@localhost"
git config gc.auto 0
git add -A -f .
GIT_AUTHOR_DATE="2023-01-01T00:00:00Z" GIT_COMMITTER_DATE="2023-01-01T00:00:00Z" \
	git commit -q -m "Linux $ver from Debian linux-source-6.1"
git tag v6.1-debian
git tag "v$ver-debian"
cd - >/dev/null
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "import-tree: $dest at v$ver-debian"
