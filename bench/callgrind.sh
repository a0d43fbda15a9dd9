#!/usr/bin/env bash
# Instruction counts per iteration of the hot paths, from callgrind.
# usage: bench/callgrind.sh path/to/loupe_bench_instructions
set -euo pipefail
exe=${1:?usage: bench/callgrind.sh path/to/loupe_bench_instructions}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$exe" >"$out/stdout" 2>"$out/stderr" || {
    cat "$out/stderr" >&2
    exit 1
}
iterations=$(sed -n 's/^iterations \([0-9]*\),.*/\1/p' "$out/stdout")
io_iterations=$(sed -n 's/.*io_iterations \([0-9]*\),.*/\1/p' "$out/stdout")
callgrind_annotate --inclusive=yes --threshold=100 "$out/cg.out" 2>/dev/null |
    awk -v n="$iterations" -v io_n="$io_iterations" '
        /case_[a-z_]+\(\)/ {
            gsub(",", "", $1)
            match($0, /case_[a-z_]+/)
            name = substr($0, RSTART + 5, RLENGTH - 5)
            ir[name] = $1 / (name ~ /^(io_|method_recorded|method_runtime|zone_named_two_args|outgoing_call_recorded)/ ? io_n : n)
        }
        END {
            printf "%-28s %10s %12s\n", "case", "Ir/iter", "minus empty"
            n = split("empty zone_idle zone_filtered_out annotate_one_field floor_two_tsc_ring_write zone_recorded zone_named_two_args zone_recorded_push_metric flow_idle flow_recorded outgoing_call_idle outgoing_call_recorded", order, " ")
            for (i = 1; i <= n; i++) {
                c = order[i]
                printf "%-28s %10.2f %12.2f\n", c, ir[c], ir[c] - ir["empty"]
            }
            printf "\n%-28s %10s %12s\n", "I/O case (user space)", "Ir/iter", "minus plain"
            n = split("io_read_plain io_read_wrapped_idle io_read_wrapped_recorded", order, " ")
            for (i = 1; i <= n; i++) printf "%-28s %10.2f %12.2f\n", order[i], ir[order[i]], ir[order[i]] - ir["io_read_plain"]
            n = split("io_openclose_plain io_openclose_wrapped", order, " ")
            for (i = 1; i <= n; i++) printf "%-28s %10.2f %12.2f\n", order[i], ir[order[i]], ir[order[i]] - ir["io_openclose_plain"]
            printf "\n%-28s %10s %12s\n", "method case", "Ir/iter", "minus plain"
            n = split("method_plain method_idle method_recorded_three_params method_runtime_three_params", order, " ")
            for (i = 1; i <= n; i++) printf "%-28s %10.2f %12.2f\n", order[i], ir[order[i]], ir[order[i]] - ir["method_plain"]
        }'
