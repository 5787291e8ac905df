#!/bin/sh
# Builds every cmd/* as a static, stripped binary into bin/.
#
#   scripts/build.sh            build all binaries
#   GO=/path/to/go scripts/build.sh
#
# Binaries are built into a temporary directory and renamed into bin/ one
# by one, so a hook never runs a half-written binary.
set -eu
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
cd "$root"
GO=${GO:-}
if [ -z "$GO" ]; then
	if command -v go >/dev/null 2>&1; then GO=go
	elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
	else echo "intermem: error: Go is not installed (https://go.dev/dl/); it is needed to build the binaries" >&2; exit 1
	fi
fi
version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' .claude-plugin/plugin.json | head -n 1)
mkdir -p bin
tmp=$(mktemp -d bin/.build-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w -X github.com/intermem/intermem/pkg/clienv.Version=${version:-dev} -X github.com/intermem/intermem/pkg/mcpserver.Version=${version:-dev}" -o "$tmp/" ./cmd/...
for f in "$tmp"/*; do
	mv -f "$f" "bin/$(basename "$f")"
done
echo "intermem: built into bin/: $(cd bin && ls | grep "^intermem" | tr "\n" " ")"
