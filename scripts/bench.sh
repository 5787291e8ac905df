#!/bin/sh
# Measures intermem's hook binaries exec-to-exit and prints one table:
# p50/p95 wall time of each row (the SessionStart hook on a generated
# project of about 1,000 memory entries, warm and cold, and on the demo),
# the floor (a static Go binary that does nothing, built here the same
# way), binary sizes, and how much of the token budget the context fills.
#
#   scripts/bench.sh                     300 runs per row
#   INTERMEM_BENCH_RUNS=1000 scripts/bench.sh
#   INTERMEM_BENCH_HOOKS=1 scripts/bench.sh   the hook rows alone
#   INTERMEM_BENCH_LARGE=0 scripts/bench.sh   without the 20,000-entry and 100,000-file scales
#   INTERMEM_BENCH_LARGE=20k scripts/bench.sh without the 100,000-file scale
#   INTERMEM_BENCH_SRC=DIR scripts/bench.sh   time the binaries of another checkout (a
#                                             before/after comparison in one table's terms)
#
# Binaries are built into a temporary directory (static, stripped, as
# scripts/build.sh builds them); bin/ is not touched. Rows are defined in
# scripts/bench/main.go; INTERMEM_BENCH_ROWS=REGEXP keeps only the rows it
# matches. Timings are reported, never asserted.
set -eu
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
runs=${INTERMEM_BENCH_RUNS:-300}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/intermem-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/bin" "$tmp/floor"
src=${INTERMEM_BENCH_SRC:-$root}
(cd "$src" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$tmp/bin/" ./cmd/...)
printf 'package main\n\nfunc main() {}\n' > "$tmp/floor/main.go"
(cd "$tmp/floor" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$tmp/bin/floor" main.go)
"$GO" build -o "$tmp/bench" ./scripts/bench
echo "intermem bench: $(uname -sm), $(nproc 2>/dev/null || echo '?') CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
echo
"$tmp/bench" -bin "$tmp/bin" -work "$tmp/work" -runs "$runs" -demo "$root/testdata/demo"
