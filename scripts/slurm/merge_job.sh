#!/usr/bin/env bash
# sweep_array.sh's last job: joins the N shards' files in DIR into DIR/sweep.csv and DIR/sweep.json.
#   merge_job.sh SPMDSIM N DIR
set -euo pipefail
spmdsim=$1 shards=$2 out=$3
csv=()
json=()
for ((k = 0; k < shards; k++)); do
  csv+=("$out/shard-$k.csv")
  json+=("$out/shard-$k.json")
done
"$spmdsim" merge --csv "$out/sweep.csv" "${csv[@]}"
"$spmdsim" merge --json "$out/sweep.json" "${json[@]}"
