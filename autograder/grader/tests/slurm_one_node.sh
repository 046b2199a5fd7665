#!/usr/bin/env bash
# One-node Slurm, CPU only, started here (munged, slurmctld and slurmd with a configuration of
# their own): three submissions of lab 04 graded with --no-gpu through `reduce-grade slurm`, the
# job array and `reduce-grade merge`; each task asks for 2 CPUs (--cpus-per-task; 1 on a one-CPU
# host) and must be given them (SLURM_CPUS_PER_TASK in its log). Exits 77 (skipped) where Slurm
# or root is missing.
#
#   slurm_one_node.sh GRADER COURSE_ROOT WORK_DIR
set -euo pipefail
grader=$1 root=$2 work=$3
skip() { echo "SKIPPED: $*"; exit 77; }
for program in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$program" >/dev/null || skip "$program is not installed (Debian: slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "starting slurmd needs root"

rm -rf "$work"
mkdir -p "$work"/{state,spool,log,munge}
node=$(hostname -s)
cleanup() {
  [ -f "$work/slurmd.pid" ] && kill "$(cat "$work/slurmd.pid")" 2>/dev/null || true
  [ -f "$work/slurmctld.pid" ] && kill "$(cat "$work/slurmctld.pid")" 2>/dev/null || true
  [ -f "$work/munge/munged.pid" ] && kill "$(cat "$work/munge/munged.pid")" 2>/dev/null || true
}
trap cleanup EXIT

# munge: a key and a socket of this test's own.
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
  --seed-file="$work/munge/munged.seed"

port=$((20000 + RANDOM % 20000))
cat >"$work/slurm.conf" <<CONF
ClusterName=reduce-test
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=grading Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N "$node"
for _ in $(seq 60); do
  sinfo -h -o %t 2>/dev/null | grep -qE "^idle" && break
  sleep 1
done
sinfo -h -o %t | grep -qE "^idle" || { tail -20 "$work"/log/*.log; echo "FAILED: the node never became idle"; exit 1; }

# Three submissions: lab 04 solved, left as the stub, and broken.
subs=$work/submissions
mkdir -p "$subs"/{solved,stub,broken}
cp -r "$root/solutions/04_sequential" "$subs/solved/"
cp -r "$root/labs/04_sequential" "$subs/stub/"
cp -r "$root/solutions/04_sequential" "$subs/broken/"
echo "this is not C++;" >>"$subs/broken/04_sequential/sum.cu"

out=$work/class
# Not the default 8: the node is this host, which may have fewer (sbatch refuses more).
cpus=$(( $(nproc) >= 2 ? 2 : 1 ))
"$grader" --root "$root" slurm "$subs" --out "$out" --labs 04 --no-gpu --per-task 1 \
  --cpus-per-task "$cpus"
grep -qx "#SBATCH --cpus-per-task=$cpus" "$out/slurm/grade.sbatch" || {
  cat "$out/slurm/grade.sbatch"; echo "FAILED: grade.sbatch does not ask for $cpus CPUs"; exit 1; }
job=$(sbatch --parsable "$out/slurm/grade.sbatch")
echo "job array $job submitted"
for _ in $(seq 900); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 1
done
[ -z "$(squeue -h -j "$job")" ] || { echo "FAILED: the job array did not finish in 15 minutes"; exit 1; }
status=0
"$grader" merge "$out" || status=$?
cat "$out/gradebook.csv"
[ "$status" = 0 ] || { tail -30 "$out"/slurm/task-*.log; echo "FAILED: merge exit $status"; exit 1; }
grep -q '^solved,1,10,1,.*graded (no GPU)' "$out/gradebook.csv" || { echo "FAILED: solved"; exit 1; }
grep -q '^stub,0,10,0,' "$out/gradebook.csv" || { echo "FAILED: stub"; exit 1; }
grep -q '^broken,0,10,0,' "$out/gradebook.csv" || { echo "FAILED: broken"; exit 1; }
for task in 0 1 2; do
  grep -qx "task $task: SLURM_CPUS_PER_TASK=$cpus, batch -j $cpus" "$out/slurm/task-$task.log" || {
    head -5 "$out/slurm/task-$task.log"; echo "FAILED: task $task was not given $cpus CPUs"; exit 1; }
done
echo "PASSED: three submissions graded through a one-node Slurm job array ($cpus CPUs a task)," \
  "and merged"
