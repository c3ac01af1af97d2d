#!/usr/bin/env bash
# Builds and runs Herald's libFuzzer targets (the package in Fuzz/), one after the other, and
# prints the executions and findings (crashes, hangs, out-of-memory) of each.
#
#   scripts/fuzz.sh [seconds-per-target] [target...]     (default: 60 s, every target)
#
# Targets: FuzzEventXML FuzzEventJSON FuzzResx FuzzEventMetadata FuzzAMQPURL FuzzPostgresURL
# FuzzAPIBody. FuzzAPIBody needs PostgreSQL: it migrates a scratch database created here from
# HERALD_TEST_DATABASE_URL (`source /tmp/herald-local/env`) and dropped at the end.
# The corpus grows in Fuzz/.build/corpus/<target> from run to run (seeded from Fuzz/Corpus and
# templates/); a failing input is saved in Fuzz/.build/findings/<target>/ and the run of that
# target stops there. Replay one with: Fuzz/.build/debug/<target> <file>. Inputs that once failed
# are kept as regression-* seeds in Fuzz/Corpus/<target>/ (and as unit tests of their module).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
fuzz="$root/Fuzz"
seconds=${1:-60}
[[ $# -gt 0 ]] && shift
all=(FuzzEventXML FuzzEventJSON FuzzResx FuzzEventMetadata FuzzAMQPURL FuzzPostgresURL FuzzAPIBody)
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all[@]}")

for target in "${targets[@]}"; do
    [[ " ${all[*]} " == *" $target "* ]] || { echo "fuzz.sh: unknown target $target (known: ${all[*]})" >&2; exit 2; }
done

echo "== building ${targets[*]}"
# SwiftPM notices files added to a path dependency (the main package) only when it plans the
# build again, which a change of this manifest's date makes it do.
touch "$fuzz/Package.swift"
for target in "${targets[@]}"; do
    swift build --package-path "$fuzz" --product "$target" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library >&2
done
bin=$(swift build --package-path "$fuzz" -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --show-bin-path)

database=""
cleanup() {
    if [[ -n $database ]]; then
        psql -q "$HERALD_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null || true
    fi
}
trap cleanup EXIT
if [[ " ${targets[*]} " == *" FuzzAPIBody "* ]]; then
    : "${HERALD_TEST_DATABASE_URL:?FuzzAPIBody needs HERALD_TEST_DATABASE_URL (source /tmp/herald-local/env)}"
    database="herald_fuzz_$$"
    psql -q "$HERALD_TEST_DATABASE_URL" -c "CREATE DATABASE $database" >/dev/null
    export HERALD_FUZZ_DATABASE_URL="${HERALD_TEST_DATABASE_URL%/*}/$database"
fi

# Swift's own crash backtracer would run inside ASan's handler; libFuzzer reports crashes.
export SWIFT_BACKTRACE=enable=no
summary=()
status=0
for target in "${targets[@]}"; do
    corpus="$fuzz/.build/corpus/$target"
    findings="$fuzz/.build/findings/$target"
    log="$fuzz/.build/logs/$target.log"
    mkdir -p "$corpus" "$findings" "$(dirname "$log")"
    seeds=("$fuzz/Corpus/$target")
    options=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
    case $target in
        FuzzEventXML) options+=(-dict="$fuzz/Dictionaries/xml.dict") ;;
        FuzzResx) options+=(-dict="$fuzz/Dictionaries/xml.dict"); seeds+=("$root/templates") ;;
        FuzzEventJSON|FuzzAPIBody) options+=(-dict="$fuzz/Dictionaries/json.dict") ;;
        FuzzEventMetadata) options+=(-dict="$fuzz/Dictionaries/json.dict") ;;
        FuzzAMQPURL|FuzzPostgresURL) options+=(-dict="$fuzz/Dictionaries/url.dict" -max_len=512) ;;
    esac
    if [[ $target == FuzzResx || $target == FuzzEventMetadata ]]; then
        # Only the files of the target's kind from templates/.
        mkdir -p "$fuzz/.build/seeds/$target"
        if [[ $target == FuzzResx ]]; then cp "$root"/templates/*.resx "$fuzz/.build/seeds/$target/"
        else cp "$root/templates/events.json" "$fuzz/.build/seeds/$target/"; fi
        seeds=("$fuzz/Corpus/$target" "$fuzz/.build/seeds/$target")
    fi
    before=$(ls "$findings" | wc -l)
    echo "== $target: ${seconds}s (log: $log)"
    set +e
    "$bin/$target" "${options[@]}" -max_total_time="$seconds" -artifact_prefix="$findings/" \
        "$corpus" "${seeds[@]}" >"$log" 2>&1
    code=$?
    set -e
    runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    [[ -z $runs ]] && runs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    after=$(ls "$findings" | wc -l)
    found=$((after - before))
    if [[ $code -ne 0 || $found -gt 0 ]]; then
        status=1
        echo "   FOUND: exit $code; new in $findings:"; ls -t "$findings" | head -n "$((found > 0 ? found : 1))" | sed 's/^/     /'
        grep -m3 -E 'ERROR: |Fatal error|SUMMARY' "$log" | sed 's/^/     /' || true
    fi
    summary+=("$(printf '%-18s %12s runs  %4s findings  corpus %5s' "$target" "${runs:-?}" "$found" "$(ls "$corpus" | wc -l)")")
done

echo "== summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
exit $status
