#!/bin/sh
# Installs the Debian packages a make target needs (configs/packages.txt),
# only those missing, so a fresh Debian 12 machine needs nothing by hand.
# Then the dashboard's npm packages (uPlot; playwright-core for its tests):
# `npm ci` in web/ when web/node_modules is missing or older than
# web/package-lock.json. nodejs and npm come from Debian only when there is
# no node or npm on PATH (a newer one installed otherwise is kept).
# usage: scripts/deps.sh TARGET
set -eu
target=${1:-all}
top=$(cd "$(dirname "$0")/.." && pwd)
list="$top/configs/packages.txt"
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

# every target serves or tests the dashboard, so every one needs its npm packages,
web="$top/web"
npm_needed=
# but make fuzz, which runs no daemon, and make agent-arm64, which builds the agent only
if [ "$target" != fuzz ] && [ "$target" != agent-arm64 ] && [ -f "$web/package-lock.json" ] &&
	{ [ ! -f "$web/node_modules/.package-lock.json" ] ||
	[ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; }; then
	npm_needed=1
fi
# the tests run node even when node_modules is up to date
case "$target" in test|check|bench|all) node_needed=1 ;; *) node_needed=$npm_needed ;; esac
if [ -n "$node_needed" ] && ! command -v node >/dev/null 2>&1; then
	missing="$missing nodejs"
fi
if [ -n "$npm_needed" ] && ! command -v npm >/dev/null 2>&1; then
	missing="$missing npm"
fi

if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing packages:$missing (run as root, or apt-get install them)" >&2
		exit 1
	fi
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# the lab's QEMU: 8.1 or later from backports for its deterministic mode
# (scripts/qemu-backports.sh; TLBLAB_QEMU_BACKPORTS=no keeps the release's)
case "$target" in test|check|demo|bench|all) sh "$top/scripts/qemu-backports.sh" ;; esac

# the daemon's own user (lab.user in configs/local.yaml): tlblabd starts as
# root and becomes it (daemon/tlblabd.c, drop_root); no login, no shell,
# its home the lab's data directory
case "$target" in test|check|demo|bench|all)
	if ! id -u tlblab >/dev/null 2>&1; then
		if [ "$(id -u)" != 0 ]; then
			echo "deps: the user tlblab is missing (run as root)" >&2
			exit 1
		fi
		echo "deps: adding the system user tlblab"
		useradd --system --home-dir /var/lib/tlblab --no-create-home --shell /usr/sbin/nologin tlblab
	fi ;;
esac

if [ -n "$npm_needed" ]; then
	echo "deps: npm ci in web/ (uPlot, playwright-core)"
	(cd "$web" && npm ci --no-audit --no-fund --loglevel=error) >&2
	touch "$web/node_modules/.package-lock.json"
fi
