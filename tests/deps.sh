#!/bin/sh
# Installs the Debian packages a make target needs (configs/packages.txt),
# only those missing, so a fresh Debian 12 machine needs nothing by hand.
# usage: tests/deps.sh TARGET
set -eu
target=${1:-all}
list="$(dirname "$0")/../configs/packages.txt"
missing=""
while read -r pkg targets; do
	case "$pkg" in ''|'#'*) continue ;; esac
	if [ -n "$targets" ] && [ "$target" != all ]; then
		case ",$targets," in *",$target,"*) ;; *) continue ;; esac
	fi
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $pkg"
	fi
done < "$list"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing (run as root, or apt-get install them)" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
