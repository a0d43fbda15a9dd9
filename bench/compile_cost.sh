#!/usr/bin/env bash
# What including loupe costs the compiler: wall and CPU time (user + sys) and
# peak memory (max RSS) of compiling the translation units of
# bench/compile_cost/ at -O2 -std=c++17 -c, the median of N runs each, with
# each unit's preprocessed line count; and the ratios of CPU time and peak
# memory to std_only.cpp (the standard headers an instrumenting file needs
# and the same small amount of work, no loupe).
#
#   std_only.cpp          the baseline
#   one_zone.cpp          <loupe/loupe.hpp> and one LOUPE_ZONE around the same work
#   instrumenting.cpp     <loupe/loupe.hpp>: zone, instant, counter, context, flow
#   method_site.cpp       + <loupe/params.hpp> and <loupe/io.hpp>: one method site, one wrapped read
#   session_starting.cpp  <loupe/session.hpp>: start a session with a file sink, stop it
#   compiled_out.cpp      one_zone.cpp with -DLOUPE_ENABLED=0
#   *_separate            the same files with -DLOUPE_SEPARATE_IMPLEMENTATION=1
#                         (base/config.hpp), and implementation.cpp: the one
#                         file of such a program that compiles the shared parts
#
# usage: bash bench/compile_cost.sh [-n RUNS] [-i]   (from the repository root)
#   CXX    the compiler (default g++), e.g. CXX=clang++ or CXX="ccache g++"
#          (ccache would measure the cache: don't)
#   -n     runs per unit (default 3; the median is printed)
#   -i     also count the instructions the compiler executes (the driver and
#          every process it starts, under valgrind's callgrind; one run per
#          unit): the same on every run and under any load, so the figure to
#          compare two versions by. Not for session_starting (minutes under
#          valgrind).
# Needs GNU time (/usr/bin/time; Debian/Ubuntu: apt-get install time), and
# valgrind for -i.
set -euo pipefail

usage() {
    echo "usage: bash bench/compile_cost.sh [-n RUNS] [-i]   (run from the repository root; CXX picks the compiler, default g++)" >&2
    exit 2
}

runs=3
count_instructions=0
while getopts ":n:ih" opt; do
    case $opt in
        n) runs=$OPTARG ;;
        i) count_instructions=1 ;;
        h) usage ;;
        :) echo "error: -$OPTARG needs a value" >&2; usage ;;
        *) echo "error: unknown option -$OPTARG" >&2; usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "error: unexpected argument: $1" >&2; usage; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "error: -n wants a positive number of runs, not '$runs'" >&2; exit 2; }

if [ ! -f include/loupe/loupe.hpp ] || [ ! -d bench/compile_cost ]; then
    echo "error: run this from the repository root (the folder holding include/loupe/ and bench/compile_cost/):" >&2
    echo "       cd <loupe> && bash bench/compile_cost.sh" >&2
    exit 2
fi

time_bin=/usr/bin/time
if [ ! -x "$time_bin" ] || ! "$time_bin" --version 2>&1 | grep -q GNU; then
    echo "error: GNU time ($time_bin) is missing; it measures CPU time and peak memory." >&2
    echo "       Install it: apt-get install time   (Fedora: dnf install time; macOS: brew install gnu-time)" >&2
    exit 2
fi

if [ $count_instructions -eq 1 ] && ! command -v valgrind >/dev/null; then
    echo "error: -i counts instructions with valgrind, which is missing (Debian/Ubuntu: apt-get install valgrind)" >&2
    exit 2
fi

read -r -a cxx <<<"${CXX:-g++}"
[ ${#cxx[@]} -gt 0 ] || { echo "error: CXX is empty" >&2; exit 2; }
command -v "${cxx[0]}" >/dev/null || { echo "error: compiler '${cxx[0]}' not found (set CXX)" >&2; exit 2; }

flags=(-O2 -std=c++17 -Iinclude)
# name|source|extra flags
units=(
    "std_only|bench/compile_cost/std_only.cpp|"
    "one_zone|bench/compile_cost/one_zone.cpp|"
    "instrumenting|bench/compile_cost/instrumenting.cpp|"
    "method_site|bench/compile_cost/method_site.cpp|"
    "session_starting|bench/compile_cost/session_starting.cpp|"
    "compiled_out|bench/compile_cost/compiled_out.cpp|-DLOUPE_ENABLED=0"
    "one_zone_separate|bench/compile_cost/one_zone.cpp|-DLOUPE_SEPARATE_IMPLEMENTATION=1"
    "instrumenting_separate|bench/compile_cost/instrumenting.cpp|-DLOUPE_SEPARATE_IMPLEMENTATION=1"
    "method_site_separate|bench/compile_cost/method_site.cpp|-DLOUPE_SEPARATE_IMPLEMENTATION=1"
    "implementation|bench/compile_cost/implementation.cpp|-DLOUPE_SEPARATE_IMPLEMENTATION=1"
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# median of the numbers on stdin (the mean of the two middle ones for an even count)
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "compiler: $("${cxx[@]}" --version | head -n 1)"
echo "flags:    ${flags[*]} -c   (median of $runs runs)"
echo

failed=0
results=()  # name lines wall cpu peak_kib instructions, or name FAILED
for unit in "${units[@]}"; do
    IFS='|' read -r name source extra <<<"$unit"
    [ -f "$source" ] || { echo "error: $source is missing" >&2; exit 1; }
    extra_flags=()
    [ -z "$extra" ] || read -r -a extra_flags <<<"$extra"

    if ! "${cxx[@]}" -E "${flags[@]}" ${extra_flags[@]+"${extra_flags[@]}"} "$source" >"$work/pre.ii" 2>"$work/err"; then
        echo "warning: $name: the preprocessor failed:" >&2
        head -n 20 "$work/err" >&2
        results+=("$name FAILED")
        failed=1
        continue
    fi
    lines=$(wc -l <"$work/pre.ii")

    : >"$work/samples"
    ok=1
    for ((i = 0; i < runs; i++)); do
        if ! "$time_bin" -f '%e %U %S %M' -o "$work/time" \
            "${cxx[@]}" "${flags[@]}" ${extra_flags[@]+"${extra_flags[@]}"} -c "$source" -o "$work/out.o" 2>"$work/err"; then
            echo "warning: $name: the compiler failed:" >&2
            head -n 20 "$work/err" >&2
            ok=0
            break
        fi
        # The last line is the format's (GNU time may write a status line first).
        tail -n 1 "$work/time" >>"$work/samples"
    done
    if [ $ok -eq 0 ]; then
        results+=("$name FAILED")
        failed=1
        continue
    fi
    wall=$(awk '{ print $1 }' "$work/samples" | median)
    cpu=$(awk '{ print $2 + $3 }' "$work/samples" | median)
    peak=$(awk '{ print $4 }' "$work/samples" | median)
    instructions=-
    if [ $count_instructions -eq 1 ] && [ "$name" != session_starting ]; then
        rm -f "$work"/callgrind.*
        if valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$work/callgrind.%p" \
            "${cxx[@]}" "${flags[@]}" ${extra_flags[@]+"${extra_flags[@]}"} -c "$source" -o "$work/out.o" \
            >/dev/null 2>"$work/err"; then
            instructions=$(cat "$work"/callgrind.* | awk '/^summary:/ { s += $2 } END { printf "%.0f", s }')
        else
            echo "warning: $name: the compiler failed under valgrind:" >&2
            tail -n 20 "$work/err" >&2
        fi
    fi
    results+=("$name $lines $wall $cpu $peak $instructions")
done

base_cpu=""
base_peak=""
base_instructions=""
for r in "${results[@]}"; do
    read -r name lines wall cpu peak instructions <<<"$r"
    if [ "$name" = std_only ] && [ "$lines" != FAILED ]; then
        base_cpu=$cpu
        base_peak=$peak
        base_instructions=$instructions
    fi
done

header=("TU" "pp lines" "wall s" "cpu s" "peak MiB" "cpu/std_only" "peak/std_only")
[ $count_instructions -eq 0 ] || header+=("M instr" "instr/std_only")
printf '%-24s %12s %8s %8s %9s %12s %13s' "${header[@]:0:7}"
[ $count_instructions -eq 0 ] || printf ' %9s %14s' "${header[@]:7}"
echo
for r in "${results[@]}"; do
    read -r name lines wall cpu peak instructions <<<"$r"
    if [ "$lines" = FAILED ]; then
        printf '%-24s %12s\n' "$name" "(does not compile: see above)"
        continue
    fi
    awk -v name="$name" -v lines="$lines" -v wall="$wall" -v cpu="$cpu" -v peak="$peak" \
        -v bcpu="$base_cpu" -v bpeak="$base_peak" -v ins="$instructions" -v bins="$base_instructions" \
        -v show_ins="$count_instructions" 'BEGIN {
            rc = (bcpu != "" && bcpu > 0) ? sprintf("%.1fx", cpu / bcpu) : "-"
            rp = (bpeak != "" && bpeak > 0) ? sprintf("%.1fx", peak / bpeak) : "-"
            printf "%-24s %12d %8.2f %8.2f %9.1f %12s %13s", name, lines, wall, cpu, peak / 1024, rc, rp
            if (show_ins == 1) {
                mi = (ins != "-") ? sprintf("%.0f", ins / 1e6) : "-"
                ri = (ins != "-" && bins != "-" && bins > 0) ? sprintf("%.2fx", ins / bins) : "-"
                printf " %9s %14s", mi, ri
            }
            printf "\n"
        }'
done

if [ $failed -ne 0 ]; then
    echo >&2
    echo "error: some translation units did not compile (the tree may be mid-edit); their rows are empty" >&2
    exit 1
fi
