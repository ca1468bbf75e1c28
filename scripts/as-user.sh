#!/bin/sh
# as-user.sh USER CMD [ARG]...: runs CMD as USER, for root's set-up steps
# that touch what USER owns (docs/security.md, "One owner per directory").
#
# Root never writes, and never reads, through a path that the daemon's user
# controls: such a path may be a link to any file of root's. So the step
# runs as that user instead, with that user's rights alone: its own uid and
# gid, no supplementary groups, no capability, no way to gain one back
# (no_new_privs), and an environment of its own (PATH, HOME, LC_ALL; root's
# GIT_*, SSH_* and the rest stay behind). Run as USER already, it only
# clears the environment the same way. Any other user gets an error.
set -eu
usage="usage: as-user.sh USER CMD [ARG]..."
user=${1:?$usage}
shift
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
entry=$(getent passwd "$user") || { echo "as-user: no user $user" >&2; exit 1; }
uid=$(echo "$entry" | cut -d: -f3)
gid=$(echo "$entry" | cut -d: -f4)
home=$(echo "$entry" | cut -d: -f6)
set -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" LC_ALL=C "$@"
if [ "$(id -u)" = "$uid" ]; then
	exec "$@"
fi
if [ "$(id -u)" != 0 ]; then
	echo "as-user: running as uid $(id -u), cannot become $user (uid $uid)" >&2
	exit 1
fi
[ "$uid" != 0 ] || { echo "as-user: $user is root" >&2; exit 1; }
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all \
	--no-new-privs -- "$@"
