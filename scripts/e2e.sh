#!/bin/sh
# Runs the end-to-end suite (e2e/) against the real Claude Code, offline.
#
#   scripts/e2e.sh                        the whole suite
#   scripts/e2e.sh -test.run TestSessions one test (any test-binary flags)
#   INTERMEM_CLAUDE_VERSION=2.1.332 scripts/e2e.sh
#
# Steps:
#   1. build the binaries into bin/ (scripts/build.sh);
#   2. install the pinned Claude Code if it is not cached (scripts/claude-code.sh);
#   3. compile the test binary (go test -c), with network access;
#   4. run it in a fresh network namespace that has only loopback
#      (unshare -n; ip link set lo up), so neither Claude Code nor a hook
#      can reach anything but the fake API the tests start on 127.0.0.1.
# Needs root (for unshare -n), util-linux and iproute2.
set -eu

root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
cd "$root"

die() {
	echo "intermem: error: $1" >&2
	shift
	for hint in "$@"; do echo "intermem: hint: $hint" >&2; done
	exit 1
}

start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start ))s"; }

[ "$(id -u)" = 0 ] ||
	die "the end-to-end suite needs root to create a network namespace (unshare -n)" \
		"run it as root, e.g. in a container or CI"
for tool in unshare ip; do
	command -v "$tool" >/dev/null 2>&1 ||
		die "$tool is not installed; it isolates Claude Code from the network" \
			"apt-get install util-linux iproute2"
done
GO=${GO:-}
if [ -z "$GO" ]; then
	if command -v go >/dev/null 2>&1; then GO=go
	elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
	else die "Go is not installed" "https://go.dev/dl/"
	fi
fi
export GO

if ls cmd/*/*.go >/dev/null 2>&1; then
	scripts/build.sh
else
	echo "intermem: nothing in cmd/ to build yet"
fi

claude=$(scripts/claude-code.sh) ||
	die "Claude Code could not be installed, so the end-to-end suite cannot run" \
		"see the messages above; INTERMEM_CLAUDE_VERSION selects another version"
echo "intermem: Claude Code $("$claude" --version) at $claude ($(elapsed))"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$GO" test -c -o "$tmp/e2e.test" ./e2e
echo "intermem: compiled the suite ($(elapsed)); running it in a loopback-only network namespace"

cd e2e
export INTERMEM_E2E=1 INTERMEM_E2E_NETNS=1 INTERMEM_CLAUDE="$claude"
status=0
# shellcheck disable=SC2016 # $0 and $@ belong to the inner shell
unshare -n -- sh -c 'ip link set lo up && exec "$0" "$@"' \
	"$tmp/e2e.test" -test.v -test.timeout=20m "$@" || status=$?
echo "intermem: end-to-end suite finished with status $status in $(elapsed)"
exit "$status"
