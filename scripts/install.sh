#!/bin/sh
# Builds intermem and installs it into Claude Code from this checkout.
#
#   scripts/install.sh                  build bin/, then register and install the plugin
#   CLAUDE=/path/to/claude scripts/install.sh
#
# Steps, each skipped (and said so) when already done:
#   1. scripts/build.sh builds every binary into bin/;
#   2. `claude plugin marketplace add <this checkout>`: the repository is its
#      own marketplace (.claude-plugin/marketplace.json);
#   3. `claude plugin install <plugin>@<marketplace>` for the current user.
# Without claude on PATH (or CLAUDE) it stops after the build and says how
# to load the plugin by hand.
set -eu

root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)

die() {
	echo "intermem: error: $1" >&2
	shift
	for hint in "$@"; do echo "intermem: hint: $hint" >&2; done
	exit 1
}

# json_name prints the first "name" value of a JSON manifest: the
# top-level name in the manifests this repository ships.
json_name() {
	sed -n 's/^ *"name": *"\([^"]*\)".*/\1/p' "$1" | head -n 1
}

plugin=$(json_name "$root/.claude-plugin/plugin.json")
market=$(json_name "$root/.claude-plugin/marketplace.json")
if [ -z "$plugin" ] || [ -z "$market" ]; then
	die "cannot read the plugin and marketplace names from $root/.claude-plugin" \
		"check .claude-plugin/plugin.json and .claude-plugin/marketplace.json"
fi

echo "intermem: building the binaries"
"$root/scripts/build.sh" ||
	die "building the binaries failed (see above)" "Go 1.26 or later is needed: https://go.dev/dl/"

claude=${CLAUDE:-$(command -v claude 2>/dev/null || true)}
if [ -z "$claude" ]; then
	echo "intermem: claude is not on PATH: built bin/ but did not install the plugin"
	echo "intermem: hint: install Claude Code and run scripts/install.sh again, or try it for one session with: claude --plugin-dir \"$root\""
	exit 0
fi

# 2. The marketplace. Adding one under a name that is taken repoints it.
markets=$("$claude" plugin marketplace list --json 2>&1) ||
	die "\`claude plugin marketplace list\` failed${markets:+: $markets}" "check that $claude runs: $claude --version"
if printf '%s\n' "$markets" | grep -qF "\"name\": \"$market\"" &&
	printf '%s\n' "$markets" | grep -qF "\"path\": \"$root\""; then
	echo "intermem: marketplace $market is already added from $root"
else
	if printf '%s\n' "$markets" | grep -qF "\"name\": \"$market\""; then
		echo "intermem: marketplace $market is registered from another path; pointing it at $root"
	fi
	out=$("$claude" plugin marketplace add "$root" 2>&1) ||
		die "\`claude plugin marketplace add $root\` failed${out:+: $out}" \
			"validate the manifests with: $claude plugin validate --strict \"$root\""
	echo "intermem: added marketplace $market from $root"
fi

# 3. The plugin.
plugins=$("$claude" plugin list --json 2>&1) ||
	die "\`claude plugin list\` failed${plugins:+: $plugins}" "check that $claude runs: $claude --version"
if printf '%s\n' "$plugins" | grep -qF "\"id\": \"$plugin@$market\""; then
	echo "intermem: plugin $plugin@$market is already installed"
else
	out=$("$claude" plugin install "$plugin@$market" 2>&1) ||
		die "\`claude plugin install $plugin@$market\` failed${out:+: $out}" \
			"update the marketplace with: $claude plugin marketplace update $market"
	echo "intermem: installed plugin $plugin@$market (user scope)"
fi
echo "intermem: done; new Claude Code sessions run intermem's hooks"
