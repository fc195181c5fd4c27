#!/usr/bin/env bash
# A sharded sweep on a real Slurm: starts a one-node cluster on this machine (its own munged, slurmctld and
# slurmd, on free ports, every file in one temporary folder), submits a small `spmdsim collectives` sweep with
# scripts/slurm/sweep_array.sh as a job array of shards and its merge job, waits, and compares the merged
# CSV byte for byte, and the merged JSON but its wall and simulated times, with the single-process run; then
# submits it again with a shard that fails, whose merge job must be cancelled. Stops the daemons and removes
# the folder however it ends.
#
#   tests/slurm/slurm_sweep_test.sh SPMDSIM REPOSITORY
#
# Exits 77 (ctest's SKIP_RETURN_CODE) when Slurm or munge is not installed (Debian: slurm-wlm, munge). A
# munged or Slurm of the machine's own is left alone: the daemons get their own socket, key and slurm.conf,
# and the client commands find that slurm.conf through SLURM_CONF.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 SPMDSIM REPOSITORY" >&2
  exit 2
fi
spmdsim=$(realpath "$1")
repository=$(realpath "$2")

for program in munged mungekey slurmctld slurmd sbatch squeue sinfo scancel; do
  if ! command -v "$program" > /dev/null; then
    echo "SKIP: no $program (Debian packages slurm-wlm and munge)"
    exit 77
  fi
done

# Only this test's Slurm: nothing from a Slurm job this test might run in, no sbatch defaults.
while read -r name; do unset "$name"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SALLOC|SRUN)_' || true)

started=$SECONDS
# What munged's socket needs: every folder above it searchable by all.
work=$(mktemp -d "${TMPDIR:-/tmp}/spmdsim-slurm-XXXXXX")
chmod 755 "$work"
pids=()

stop() {
  local status=$?
  set +e
  if [[ -f "$work/slurm.conf" ]]; then
    # Jobs first, while slurmctld and slurmd can still end them.
    scancel --quiet --user="$(id -un)" 2> /dev/null
    for _ in $(seq 50); do
      [[ -z "$(squeue --noheader 2> /dev/null)" ]] && break
      sleep 0.2
    done
  fi
  # The daemons, newest first, each by the id it was started with.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2> /dev/null
    for _ in $(seq 50); do
      kill -0 "${pids[i]}" 2> /dev/null || break
      sleep 0.1
    done
    kill -9 "${pids[i]}" 2> /dev/null
    wait "${pids[i]}" 2> /dev/null
  done
  if [[ $status -ne 0 && $status -ne 77 ]]; then
    for log in "$work"/*.log "$work"/sweep/*.log; do
      [[ -f "$log" ]] && { echo "--- $log"; tail -n 30 "$log"; }
    done
  fi
  rm -rf "$work"
  echo "slurm_sweep_test: $((SECONDS - started)) s"
  exit "$status"
}
trap stop EXIT
trap 'exit 1' INT TERM HUP

# Waits up to $1 seconds for "$2 ..." to succeed.
wait_for() {
  local seconds=$1
  shift
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      echo "FAIL: gave up after ${seconds} s waiting for: $*" >&2
      return 1
    fi
    sleep 0.5
  done
}

# munge, with its own key and socket.
mkdir -m 755 "$work/munge"
mungekey --create --keyfile="$work/munge/munge.key"
munged --foreground --socket="$work/munge/munge.socket" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge/munged.seed" \
  > /dev/null 2>&1 &
pids+=($!)
wait_for 20 test -S "$work/munge/munge.socket"

# Two free ports for slurmctld and slurmd.
read -r controller_port node_port < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))')

# One node of this machine's CPUs, reached on 127.0.0.1; no cgroups: processes tracked by their parent ids,
# tasks not bound. Root runs the daemons here; another user runs them as itself.
user=$(id -un)
host=$(uname -n)
host=${host%%.*}  # the short name, as slurmctld compares it with SlurmctldHost
mkdir "$work/state" "$work/spool"
cat > "$work/slurm.conf" << EOF
ClusterName=spmdsimtest
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${controller_port}
SlurmdPort=${node_port}
SlurmUser=${user}
SlurmdUser=${user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${work}/munge/munge.socket
StateSaveLocation=${work}/state
SlurmdSpoolDir=${work}/spool
SlurmctldPidFile=${work}/slurmctld.pid
SlurmdPidFile=${work}/slurmd.pid
SlurmctldLogFile=${work}/slurmctld.log
SlurmdLogFile=${work}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
NodeName=spmdsimnode NodeHostname=${host} NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=spmdsim Nodes=spmdsimnode Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf

slurmctld -D -f "$SLURM_CONF" > "$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N spmdsimnode > "$work/slurmd.out" 2>&1 &
pids+=($!)
node_idle() { [[ "$(sinfo --noheader --nodes=spmdsimnode --format=%T 2> /dev/null)" == idle ]]; }
wait_for 60 node_idle
echo "slurm up after $((SECONDS - started)) s"

# The sweep: two collectives, five sizes, two device counts: 20 rows, in 3 shards.
sweep=(collectives -b 1K -e 256K -f 4 --devices 2,4 --collectives all_reduce,all_gather --algorithms ring
  --abstract-above 64K --check --cfg=network/model:CM02 --cfg=network/crosstraffic:0)
"$spmdsim" "${sweep[@]}" --csv "$work/whole.csv" --json "$work/whole.json" > "$work/whole.txt"

# The merge job ends the array's work: --wait returns with its status. Each wait is bounded so that the whole
# test ends, its daemons stopped, before ctest's TIMEOUT.
timeout 120 bash "$repository/scripts/slurm/sweep_array.sh" --wait --shards 3 --out "$work/sweep" \
  --spmdsim "$spmdsim" "${sweep[@]}"

rows=$(($(wc -l < "$work/whole.csv") - 1))
for k in 0 1 2; do
  head -n 1 "$work/sweep/shard-$k.csv" | grep -q "^# spmdsim shard: command=collectives shard=$k/3 sweep_rows=$rows "
done
cmp "$work/whole.csv" "$work/sweep/sweep.csv"
times='s/"\(wall_time_s\|simulated_time_s\)": [0-9.e+-]*/"\1": <time>/'
cmp <(sed "$times" "$work/whole.json") <(sed "$times" "$work/sweep/sweep.json")
echo "PASS: $rows rows in 3 shards on Slurm merge into the single-process run's CSV and JSON"

# A shard that fails: Slurm cancels the merge job, and sweep_array.sh --wait says so.
cat > "$work/failing_spmdsim" << EOF
#!/usr/bin/env bash
[[ "\${SLURM_ARRAY_TASK_ID:-}" != 1 ]] || { echo "shard 1 fails on purpose" >&2; exit 3; }
exec "$spmdsim" "\$@"
EOF
chmod +x "$work/failing_spmdsim"
if timeout 120 bash "$repository/scripts/slurm/sweep_array.sh" --wait --shards 3 --out "$work/failing" \
  --spmdsim "$work/failing_spmdsim" "${sweep[@]}" 2> "$work/failing.err"; then
  echo "FAIL: sweep_array.sh --wait succeeded though shard 1 failed" >&2
  exit 1
fi
grep -q "the merge job wrote no" "$work/failing.err"
[[ ! -e "$work/failing/merge.log" && ! -e "$work/failing/sweep.csv" ]]
echo "PASS: a failing shard cancels the merge job"
