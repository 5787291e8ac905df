#!/bin/sh
# Installs the pinned Claude Code (the npm package @anthropic-ai/claude-code)
# into a cache directory when it is not there yet, and prints the path of its
# `claude` binary on stdout. Progress and errors go to stderr.
#
#   scripts/claude-code.sh                          install if missing, print path
#   INTERMEM_CLAUDE_VERSION=2.1.332 scripts/claude-code.sh
#   INTERMEM_CLAUDE_DIR=/some/dir scripts/claude-code.sh
#
# The version is pinned because the registry's latest declares Node >= 22:
# on Node 20 npm silently resolves an unpinned install to an older release.
# A cached install is reused without touching the network.
set -eu

version=${INTERMEM_CLAUDE_VERSION:-2.1.197}
dir=${INTERMEM_CLAUDE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/intermem/claude-code-$version}
claude=$dir/node_modules/.bin/claude

die() {
	echo "intermem: error: $1" >&2
	shift
	for hint in "$@"; do echo "intermem: hint: $hint" >&2; done
	exit 1
}

# installed_version prints the version of the cached install, if any.
installed_version() {
	pkg=$dir/node_modules/@anthropic-ai/claude-code/package.json
	[ -f "$pkg" ] || return 0
	sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$pkg" | head -n 1
}

if [ -x "$claude" ] && [ "$(installed_version)" = "$version" ]; then
	echo "$claude"
	exit 0
fi

command -v npm >/dev/null 2>&1 ||
	die "npm is not installed; it is needed to install Claude Code $version" \
		"install Node.js and npm (apt-get install nodejs npm), or set INTERMEM_CLAUDE_DIR to an existing install"

echo "intermem: installing @anthropic-ai/claude-code@$version into $dir" >&2
mkdir -p "$(dirname -- "$dir")"
# Install next to the final directory and rename it into place, so that an
# interrupted install never leaves a half-populated cache that looks valid.
tmp=$(mktemp -d "$dir.tmp-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '{"name":"intermem-claude-code","private":true}\n' >"$tmp/package.json"
if ! (cd "$tmp" && npm install --no-audit --no-fund --loglevel=error \
	"@anthropic-ai/claude-code@$version" >&2); then
	die "npm could not install @anthropic-ai/claude-code@$version" \
		"check that the npm registry is reachable (npm ping) and that the version exists (npm view @anthropic-ai/claude-code@$version version)"
fi
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
[ -x "$claude" ] || die "the install finished but $claude is missing" \
	"remove $dir and try again"
got=$(installed_version)
[ "$got" = "$version" ] || die "npm installed Claude Code $got, not $version" \
	"remove $dir and try again"
"$claude" --version >&2 || die "$claude does not run" "remove $dir and try again"
echo "$claude"
