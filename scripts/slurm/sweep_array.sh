#!/usr/bin/env bash
# Submits an spmdsim sweep to Slurm as a job array of N shards, and a merge job that runs once every shard
# has succeeded (docs/sweeps_on_slurm.md):
#
#   scripts/slurm/sweep_array.sh [--shards N] [--out DIR] [--spmdsim PATH] [--wait] COMMAND [OPTION...]
#
#   COMMAND     collectives, train or memory; OPTION... its options, but --shard, --csv, --json and --plot,
#               which the script sets or refuses
#   --shards N  the array's tasks (default 4): task K runs
#                 spmdsim COMMAND OPTION... --shard K/N --csv DIR/shard-K.csv --json DIR/shard-K.json
#               (K = SLURM_ARRAY_TASK_ID, from `sbatch --array=0-(N-1)`)
#   --out DIR   the shards' files and logs, and the merged DIR/sweep.csv and DIR/sweep.json (default
#               ./spmdsim-sweep); on a file system that every node sees
#   --spmdsim   the spmdsim program (default: spmdsim on PATH, else this checkout's build/experiments/spmdsim)
#   --wait      return when the merge job has ended: status 0 when it wrote DIR/sweep.csv and DIR/sweep.json,
#               1 when it failed or was cancelled (a shard failed)
#
# sbatch's own settings come from its environment: SBATCH_PARTITION, SBATCH_TIMELIMIT, SBATCH_ACCOUNT, ...
# (man sbatch, "INPUT ENVIRONMENT VARIABLES"). Prints the two jobs' ids as sbatch does.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The comment above, as help.
usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
}

die() {
  echo "sweep_array.sh: $*" >&2
  exit 2
}

shards=4
out=spmdsim-sweep
spmdsim=
wait=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shards) [[ $# -ge 2 ]] || die "--shards takes a number"; shards=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || die "--out takes a folder"; out=$2; shift 2 ;;
    --spmdsim) [[ $# -ge 2 ]] || die "--spmdsim takes a path"; spmdsim=$2; shift 2 ;;
    --wait) wait=(--wait); shift ;;
    -h | --help) usage; exit 0 ;;
    -*) usage; die "unknown option '$1' before COMMAND (valid: --shards, --out, --spmdsim, --wait)" ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { usage; die "no COMMAND (valid: collectives, train, memory)"; }
command=$1
case "$command" in
  collectives | train | memory) ;;
  *) die "unknown COMMAND '$command' (valid: collectives, train, memory)" ;;
esac
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "--shards must be a whole number from 1 (got '$shards')"
for option in "${@:2}"; do
  case "$option" in
    --shard | --shard=* | --csv | --csv=* | --json | --json=* | --plot | --plot=*)
      die "$option is not for the sweep's options: the script gives each task --shard, --csv and --json, and a shard makes no plot (plot DIR/sweep.json)" ;;
  esac
done

if [[ -z "$spmdsim" ]]; then
  spmdsim=$(command -v spmdsim || echo "$here/../../build/experiments/spmdsim")
fi
[[ -x "$spmdsim" ]] || die "no spmdsim program at '$spmdsim' (give --spmdsim PATH)"
# The jobs may start in another folder, on another node: absolute paths.
spmdsim=$(realpath "$spmdsim")
mkdir -p "$out"
out=$(realpath "$out")
# Files of an earlier sweep would be taken for this one's (and --wait tells success by the merged files).
shopt -s nullglob
earlier=("$out"/shard-*.csv "$out"/shard-*.json "$out"/sweep.[c]sv "$out"/sweep.[j]son)
shopt -u nullglob
[[ ${#earlier[@]} -eq 0 ]] || die "--out $out holds an earlier sweep's files (${earlier[0]}, ...): give another folder or remove them"

# --parsable prints "id" or "id;cluster".
array=$(sbatch --parsable --array="0-$((shards - 1))" --job-name="spmdsim-$command" \
  --output="$out/shard-%a.log" "$here/shard_job.sh" "$spmdsim" "$shards" "$out" "$@")
array=${array%%;*}
echo "Submitted batch job $array: the array of $shards shards of spmdsim $command, their files in $out"
echo "The merge job, once they all succeed, writes $out/sweep.csv and $out/sweep.json:"
status=0
sbatch "${wait[@]}" --dependency="afterok:$array" --kill-on-invalid-dep=yes --job-name="spmdsim-merge" \
  --output="$out/merge.log" "$here/merge_job.sh" "$spmdsim" "$shards" "$out" || status=$?
# sbatch --wait returns 0 for a merge job cancelled because a shard failed: the merged files tell.
if [[ ${#wait[@]} -gt 0 && ! ( -f "$out/sweep.csv" && -f "$out/sweep.json" ) ]]; then
  echo "sweep_array.sh: the merge job wrote no $out/sweep.csv and sweep.json (status $status): a shard failed" \
    "or was cancelled; see $out/shard-*.log and $out/merge.log" >&2
  exit 1
fi
exit "$status"
