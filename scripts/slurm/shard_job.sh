#!/usr/bin/env bash
# One task of sweep_array.sh's job array: shard K = SLURM_ARRAY_TASK_ID of N of the sweep.
#   shard_job.sh SPMDSIM N DIR COMMAND [OPTION...]
set -euo pipefail
spmdsim=$1 shards=$2 out=$3
shift 3
k=${SLURM_ARRAY_TASK_ID:?shard_job.sh runs as a task of a job array (sbatch --array=0-(N-1))}
exec "$spmdsim" "$@" --shard "$k/$shards" --csv "$out/shard-$k.csv" --json "$out/shard-$k.json"
