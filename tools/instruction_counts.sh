#!/usr/bin/env bash
# Instructions per element of every float32 kernel, counted, for kernel sets
# this machine can only emulate: tools/instruction_count.c, built for aarch64
# (scalar and neon sets) and for x86-64 (scalar and avx2: qemu does not
# emulate AVX-512), runs one
# kernel under qemu-user with each executed instruction logged (-singlestep
# -d exec,nochain: one log line per instruction), calling it once and
# twice on 512 elements; the difference over 512 is the kernel's
# instructions per element, start-up and set-up excluded. A count, not a time: it says how much work each
# set does per element, which with a core's instructions per cycle estimates
# its speed (README: platforms). Prints a Markdown table.
#
#   tools/instruction_counts.sh [OP_NAME...]     (default: every op)
#
# Needs gcc, aarch64-linux-gnu-gcc and qemu-user (qemu-aarch64, qemu-x86_64).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/fastact-instruction-counts.XXXXXX")
trap 'rm -rf "$work"' EXIT

flags=(-O3 -std=gnu11 -ffp-contract=off -fno-tree-vectorize -fno-math-errno -pthread -Isrc_c -static)
build() {  # CC OUT [flags...]
    local cc=$1 out=$2; shift 2
    mkdir -p "$out"
    local src pids=()
    for src in src_c/*/*.c tools/instruction_count.c; do
        "$cc" "${flags[@]}" "$@" -c "$src" -o "$out/$(basename "$src" .c).o" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    "$cc" "${flags[@]}" -o "$out/count" "$out"/*.o -lm
}
build aarch64-linux-gnu-gcc "$work/aarch64"
build gcc "$work/x86" -DFA_HAVE_X86_KERNELS=1

count() {  # QEMU CPU PROGRAM ISA OP DIRECTION TIER N CALLS: instructions executed
    local log=$work/log
    "$1" -cpu "$2" -singlestep -d exec,nochain -D "$log" "$3" "$4" "$5" "$6" "$7" "$8" "$9" \
        2> >(grep -v "TCG doesn't support requested feature" >&2)
    grep -c '^Trace' "$log"
}
per_element() {  # QEMU CPU PROGRAM ISA OP DIRECTION TIER
    local n=512 once twice
    once=$(count "$@" $n 1) twice=$(count "$@" $n 2)
    python3 -c "print(f'{($twice - $once) / $n:.2f}')"
}

names=" $* "
echo "| op | direction | tier | aarch64 scalar | aarch64 neon | x86-64 scalar | x86-64 avx2 |"
echo "|---|---|---|---:|---:|---:|---:|"
"$work/x86/count" --list | while read -r op direction tier name; do
    [[ $# == 0 || $names == *" $name "* ]] || continue
    row="| $name | $([[ $direction == 0 ]] && echo forward || echo backward) | $([[ $tier == 0 ]] && echo accurate || echo fast)"
    for isa in scalar neon; do
        row+=" | $(per_element qemu-aarch64 max "$work/aarch64/count" $isa "$op" "$direction" "$tier")"
    done
    for isa in scalar avx2; do
        row+=" | $(per_element qemu-x86_64 Haswell "$work/x86/count" $isa "$op" "$direction" "$tier")"
    done
    echo "$row |"
done
