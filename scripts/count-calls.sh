#!/usr/bin/env bash
# Calls per delivery of swift_retain, swift_allocObject, malloc and Hasher._finalize (one per hash
# computed: a dictionary or set lookup, or a key made) in the worker during one pipeline drain of
# `herald bench` (20,000 events, 45,000 deliveries), counted with perf uprobes; then, in a second
# drain without the probes (their traps would slow the threads and change how work coalesces),
# the worker's system calls and context switches, counted in the threads that exist when the
# drain starts (the Swift pool and the broker connection's thread, not the database
# connections' threads).
# Exact counts, unlike CPU time on this shared host: the way to compare two builds' reference
# counting and allocations (docs/performance.md). The kernel counts vary from run to run with how
# many messages one read or one wake carries: compare them over several runs. Needs root
# (uprobes) and Debian's linux-perf; uses the configured broker and a scratch database with the
# templates imported, as `herald bench`.
#   scripts/count-calls.sh [HERALD_BINARY...]        (default .build/release/herald)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || binaries=(.build/release/herald)
events=20000
deliveries=45000 # the bench workload: 2.25 deliveries per event

swift_core=$(ldd "${binaries[0]}" | awk '/libswiftCore/ {print $3}')
jemalloc=$(ldd "${binaries[0]}" | awk '/libjemalloc/ {print $3}')
work=$(mktemp -d)
cleanup() {
    rm -rf "$work"
    for probe in "${added[@]}"; do perf probe -q -d "$probe" 2>/dev/null || true; done
}
trap cleanup EXIT
probes=()
added=() # the probes this run defined (one that was there before stays), removed on exit
add_probe() { # library function event
    if perf probe -q -x "$1" --add "$2" 2>/dev/null; then added+=("$3"); fi
    probes+=("$3")
}
add_probe "$swift_core" swift_retain probe_libswiftCore:swift_retain
add_probe "$swift_core" swift_allocObject probe_libswiftCore:swift_allocObject
add_probe "$swift_core" 'hasher_finalize=$ss6HasherV9_finalizeSiyF' probe_libswiftCore:hasher_finalize
[ -n "$jemalloc" ] && add_probe "$jemalloc" malloc probe_libjemalloc:malloc
events_list=$(
    IFS=,
    echo "${probes[*]}"
)

wait_for() { # file text seconds
    for _ in $(seq 1 $(($3 * 20))); do
        grep -q "$2" "$1" && return 0
        sleep 0.05
    done
    echo "count-calls: no \"$2\" in the bench's output" >&2
    return 1
}

count_drain() { # binary events output
    "$1" bench --events "$events" --rounds 1 --latency-events 10 >"$work/bench.txt" 2>&1 &
    bench=$!
    wait_for "$work/bench.txt" "pipeline1: draining" 120
    perf stat -x, -e "$2" -o "$3" -p "$bench" &
    stat=$!
    wait_for "$work/bench.txt" "latency run" 300
    kill -INT "$stat"
    wait "$stat" || true
    wait "$bench"
}

for binary in "${binaries[@]}"; do
    count_drain "$binary" "$events_list" "$work/counts.txt"
    count_drain "$binary" raw_syscalls:sys_enter,context-switches "$work/kernel.txt"
    printf '%s:' "$binary"
    awk -F, -v n="$deliveries" '/probe_/ { split($3, name, ":"); printf "  %s %.1f", name[2], $1 / n }' "$work/counts.txt"
    awk -F, -v n="$deliveries" '/sys_enter|context-switches/ { k = split($3, name, ":"); printf "  %s %.2f", name[k], $1 / n }' "$work/kernel.txt"
    echo "  (per delivery)"
done
