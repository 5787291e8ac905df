#!/bin/sh
# intermem's main job, start to finish, on the embedded sample project
# (testdata/demo): a small Go invoicing CLI with realistic Claude Code
# auto-memory in both formats (a MEMORY.md of facts and pointers, and
# one-memory-per-file topic files), a CLAUDE.md and an AGENTS.md.
#
# Needs only this repository and Go. Everything happens in a throwaway
# directory with its own HOME; nothing of yours is read or changed.
#
#   scripts/demo.sh            run it
#   KEEP=1 scripts/demo.sh     keep the throwaway directory to look around
set -eu
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	PATH=/usr/local/go/bin:$PATH
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/intermem-demo.XXXXXX")
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$tmp"' EXIT INT TERM; fi

step() { printf '\n\033[1m━━ %s\033[0m\n' "$*"; }
run() { printf '\033[2m$ %s\033[0m\n' "$*"; "$@"; }

step "Building the binaries"
"$root/scripts/build.sh"
bin=$root/bin
export HOME="$tmp/home" PATH="$bin:$PATH"
unset CLAUDE_CONFIG_DIR INTERMEM_MEMORY_DIR INTERMEM_LAYOUT 2>/dev/null || true
mkdir -p "$HOME"

step "A sample project with a git history"
proj=$tmp/ledgerline
cp -R "$root/testdata/demo/project" "$proj"
cd "$proj"
# The history renames the mail sender and deletes the PDF renderer, so two
# memories cite files that are gone.
mkdir -p internal/render
cp internal/mail/smtp.go internal/mail/sendgrid.go
rm internal/mail/smtp.go
printf 'package render\n' > internal/render/pdf.go
git init -q
git -c user.name=demo -c user.email=demo@example.com add .
git -c user.name=demo -c user.email=demo@example.com commit -qm "ledgerline v0.3"
git mv internal/mail/sendgrid.go internal/mail/smtp.go
git rm -q internal/render/pdf.go
git -c user.name=demo -c user.email=demo@example.com commit -qm "Send mail over SMTP; drop the PDF renderer"
echo "$proj: $(git ls-files | wc -l | tr -d ' ') files, $(git rev-list --count HEAD) commits"

mem=$(intermem status --json | sed -n 's/^ *"memory_dir": "\(.*\)",$/\1/p')
mkdir -p "$mem"
cp "$root"/testdata/demo/memory/*.md "$mem/"
echo "Claude Code's auto-memory for it: $mem"
ls "$mem"

step "Three Claude Code sessions (hook payloads replayed: SessionStart, two Stops per session, SessionEnd)"
day=1
for sid in 6f1c2a9e-0b1d-4c55-9f1a-3d2b7c8e9a01 a3e9d4b2-7c61-4f0e-8a2d-5b9c1e6f7d02 c8b7a6f5-1e2d-4c3b-9a8f-7e6d5c4b3a03; do
	export INTERMEM_NOW="2026-11-0${day}T09:00:00Z"
	printf '{"session_id":"%s","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}\n' "$sid" "$proj" | intermem-inject >/dev/null
	for turn in 1 2; do
		printf '{"session_id":"%s","cwd":"%s","hook_event_name":"Stop","stop_hook_active":false}\n' "$sid" "$proj" | intermem-snapshot
	done
	printf '{"session_id":"%s","cwd":"%s","hook_event_name":"SessionEnd","reason":"other"}\n' "$sid" "$proj" | intermem-snapshot
	echo "session $day ($sid): recorded"
	day=$((day + 1))
done
export INTERMEM_NOW=2026-11-04T09:00:00Z

step "1. What the SessionStart hook injects now (intermem context)"
run intermem context

step "2. Status"
run intermem status

step "3. The synthesis plan (what /intermem:synthesize shows you)"
# The staging credentials hold a secret: the plan shows them redacted and
# keeps them private, apart from the numbered candidates.
run intermem-synthesize plan

step "4. One batch answer: approve every candidate, add the @AGENTS.md import"
run intermem-synthesize apply --approve all --import-agents --dry-run | head -n 12
echo "…"
run intermem-synthesize apply --approve all --import-agents

step "5. The result"
run git status --short
echo
run git diff -- CLAUDE.md
echo
run cat AGENTS.md
echo
run cat docs/intermem/architecture.md
echo
# What is left in auto-memory: what was not promoted, and the credentials,
# which were never candidates and are not pruned.
run cat "$mem/MEMORY.md"

step "6. Validation: what promoted facts and memories cite, checked against the code"
# validate exits 1 when it finds a stale entry (it does here: the memory
# citing the deleted PDF renderer), so scripts and CI can use it as a check.
run intermem validate || echo "(exit status $?: stale entries found)"

step "7. A day later: sweep keeps promoted knowledge true"
export INTERMEM_NOW=2026-11-05T09:00:00Z
run intermem sweep

step "8. Search everything intermem knows"
run intermem search invoice numbers

step "9. The next session starts: what SessionStart injects now"
run intermem context

printf '\nDone. The sample project was in %s%s.\n' "$tmp" "$( [ -n "${KEEP:-}" ] && echo ' (kept)' || echo ' (removed)')"
