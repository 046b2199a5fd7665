#!/usr/bin/env bash
# Where a checker's first test spends its time: CUDA context creation alone and with 8 or 16
# processes at once, a checker's first test unconfined and confined, 8 checkers at once.
#   tools/maint/startup_probe.sh [BUILD]   (BUILD: a grading build folder, default build-gpu-grade)
#   GRADER: the reduce-grade binary whose `confine` makes the confined runs (default: on PATH)
set -u
B=${1:-build-gpu-grade}
C=$B/course/bin
LIB=$(ls $B/lib/*04_sequential*sum*.so $B/submission/lib/*04*.so 2>/dev/null | head -1)
[ -n "$LIB" ] || LIB=$(find $B -name "*04_sequential*.so" | head -1)
echo "lib: $LIB"; ls $C | head -20
nvidia-smi -q | grep -i -A1 "persistence\|compute mode" | head -6
since() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }'; }
t() { local s=$(date +%s.%N); "$@" >/tmp/probe.out 2>&1; local rc=$?; echo "$(since "$s") s rc=$rc: $*" | cut -c1-200; }
cat >/tmp/ctx.cu <<'X'
#include <cstdio>
#include <chrono>
#include <cuda_runtime.h>
int main(){auto a=std::chrono::steady_clock::now(); cudaFree(0); auto b=std::chrono::steady_clock::now();
void*p; cudaMalloc(&p, 1<<20); cudaIpcMemHandle_t h; cudaIpcGetMemHandle(&h,p); auto c=std::chrono::steady_clock::now();
printf("ctx %.3f s, malloc+ipc %.3f s\n", std::chrono::duration<double>(b-a).count(), std::chrono::duration<double>(c-b).count());}
X
nvcc -arch=sm_90 -o /tmp/ctx /tmp/ctx.cu && for i in 1 2 3; do t /tmp/ctx; cat /tmp/probe.out; done
echo "8 at once:"; s=$(date +%s.%N); for i in $(seq 8); do /tmp/ctx & done; wait; echo "$(since "$s") s"
echo "16 at once:"; s=$(date +%s.%N); for i in $(seq 16); do /tmp/ctx >/dev/null & done; wait; echo "$(since "$s") s"
t $C/course_test --gtest_list_tests
F=SumTest.EmptyInputIsPositiveZero
for i in 1 2; do t $C/course_test --lab=$LIB --gtest_filter=$F; grep -m4 "OK \]\|FAILED \]\|Failure\|error\|runner" /tmp/probe.out; done
# The runner's sandbox as the grader starts it: reduce-grade confine, the course hidden.
# One --runner-prefix per word, in order.
PREFIX=()
for word in "${GRADER:-reduce-grade}" confine --hide=/tmp --hide="$PWD" --show="$(cd "$B" && pwd)" --; do PREFIX+=("--runner-prefix=$word"); done
for i in 1 2; do t $C/course_test --lab=$LIB "${PREFIX[@]}" --gtest_filter=$F; grep -m4 "OK \]\|FAILED \]\|Failure\|error\|runner" /tmp/probe.out; done
echo "8 checkers at once (confined):"; s=$(date +%s.%N); for i in $(seq 8); do $C/course_test --lab=$LIB "${PREFIX[@]}" --gtest_filter=$F > /tmp/p$i.out 2>&1 & done; wait; echo "$(since "$s") s"; grep -h "OK \]" /tmp/p*.out
if command -v strace >/dev/null; then
  strace -f -tt -e trace=execve,exit_group,clone,clone3,unshare,mount -o /tmp/strace.txt $C/course_test --lab=$LIB "${PREFIX[@]}" --gtest_filter=$F >/dev/null 2>&1
  head -60 /tmp/strace.txt; wc -l /tmp/strace.txt
else echo "no strace"; fi
