#!/usr/bin/env bash
# Runs every test intermem has, in the order a failure is cheapest to find:
#   1. gofmt and go vet (Linux, and the macOS and FreeBSD builds)
#   2. go test -race ./...   (unit tests, testscripts driving the real
#      binaries, corpus tests, crash matrices and the other proofs)
#   3. a short run of every fuzz target (INTERMEM_FUZZTIME, default 4s each)
#   4. the demo (scripts/demo.sh), which must run start to finish
#   5. the end-to-end suite against the real Claude Code (scripts/e2e.sh),
#      unless INTERMEM_E2E=0
set -euo pipefail
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
cd "$root"
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
start=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$1" "$(( $(date +%s) - start ))"; }
# Logs go to a directory of this run's own: two runs at once (or another
# user's run) never write over each other's. It is removed when everything
# passed and kept, and named, when something failed.
logs=$(mktemp -d "${TMPDIR:-/tmp}/intermem-test.XXXXXX")
trap 'status=$?; if [ "$status" -eq 0 ]; then rm -rf "$logs"; else echo "logs of this run: $logs"; fi' EXIT
exec 3>&1 # the terminal, for progress lines from inside redirected steps
# heartbeat LABEL CMD…: runs CMD, printing a line every 30 s while it runs,
# so a long step (the race tests, the proofs, the demo) shows it is alive.
heartbeat() {
	local label=$1; shift
	local t0; t0=$(date +%s)
	( while sleep 30; do printf '  … %s still running (%ss)\n' "$label" "$(( $(date +%s) - t0 ))" >&3; done ) &
	local hb=$!
	local rc=0
	"$@" || rc=$?
	kill "$hb" 2>/dev/null || true
	wait "$hb" 2>/dev/null || true
	return "$rc"
}

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...
go vet -tags failpoint ./...
# Claude Code runs on macOS as much as on Linux: the other Unix builds are
# checked too (their system-call files, *_other.go and *_bsd.go, are
# compiled nowhere else). Windows is not a target.
for os in darwin freebsd; do
	GOOS=$os GOARCH=arm64 go vet ./...
done

step "go test -race"
# The end-to-end suite runs once, below, in its network namespace. The
# proofs run real binaries many times over; on a loaded machine their
# package takes longer than go test's default 10-minute limit, which would
# kill it for no fault of its own.
heartbeat "go test -race" env INTERMEM_E2E=0 go test -race -count=1 -timeout 30m ./...

step "fuzz (${INTERMEM_FUZZTIME:-4s} per target)"
# Go 1.26's fuzz coordinator can report a bare "context deadline exceeded"
# when -fuzztime expires while a worker is busy (go.dev/issue/75804, fixed
# in Go 1.27). That is no finding: a real one prints "Failing input written
# to testdata/fuzz/...". Such a run is repeated, at most twice; anything
# else that fails, fails.
fuzz_flake() {
	grep -q 'context deadline exceeded' "$1" && ! grep -q 'Failing input written' "$1" &&
		! grep -qE '^\s+[a-z_]+_test\.go:[0-9]+:|panic:' "$1"
}
grep -rl --include='*_test.go' '^func Fuzz' pkg | while read -r f; do
	dir=$(dirname "$f")
	for fn in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
		echo "  $dir $fn"
		for try in 1 2 3; do
			if go test -run='^$' -fuzz="^${fn}\$" -fuzztime="${INTERMEM_FUZZTIME:-4s}" "./$dir" >"$logs/fuzz.log" 2>&1; then
				break
			fi
			if [ "$try" -lt 3 ] && fuzz_flake "$logs/fuzz.log"; then
				echo "    the fuzz coordinator's deadline race (go.dev/issue/75804), no failing input; again"
				continue
			fi
			cat "$logs/fuzz.log"; exit 1
		done
	done
done

step "demo"
heartbeat "scripts/demo.sh" scripts/demo.sh >"$logs/demo.log" 2>&1 || { cat "$logs/demo.log"; echo "scripts/demo.sh failed"; exit 1; }
for want in "intermem synthesis plan:" "Kept private: holds a secret" "[REDACTED:stripe-key]" "Promoted 11 entries" "API key sk_live_DEMOdemoDEMOdemoDEMOdemo42 (rotate in March)" "Added \"@AGENTS.md\" to CLAUDE.md" "intermem validate:" "intermem sweep:"; do
	grep -qF "$want" "$logs/demo.log" || { cat "$logs/demo.log"; echo "demo output lacks: $want"; exit 1; }
done
echo "  demo ran: $(grep -c '━━' "$logs/demo.log") steps"

if [ "${INTERMEM_E2E:-1}" != "0" ]; then
	step "end-to-end against the real Claude Code"
	heartbeat "scripts/e2e.sh" scripts/e2e.sh
fi
step "all tests passed"
