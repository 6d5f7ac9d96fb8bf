#!/usr/bin/env bash
# Example Slurm job array: one sweep split into N shards, one shard per array task, then
# a dependent job that merges them. Not run by the tests; adapt the partition, time and
# paths to your cluster. meshsim needs no GPU: each task uses the CPUs it is given.
#
#   sbatch --array=0-15 scripts/slurm_sweep.sh workloads/sweeps/gpt3-175b-1024-a100.yaml
#   # when all tasks are done (or chain it: sbatch --dependency=afterok:JOBID ...):
#   ./build/meshsim merge results/sweeps/NAME/shard-* -o results/sweeps/NAME/merged
#
# Each task writes results/sweeps/NAME/shard-I (results.csv, sweep.json, pareto.csv).
# A task that was preempted or timed out can be resubmitted as is: --resume keeps the
# rows it had written and runs the rest. `merge` fails (exit 2) if any configuration is
# missing or repeated, naming it and the shard it belongs to.
#
#SBATCH --job-name=meshsim-sweep
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
#SBATCH --output=meshsim-sweep-%A_%a.out
set -euo pipefail

sweep=${1:?usage: sbatch --array=0-(N-1) scripts/slurm_sweep.sh SWEEP.yaml [MESHSIM]}
meshsim=${2:-./build/meshsim}
index=${SLURM_ARRAY_TASK_ID:?run this as a Slurm job array (sbatch --array=0-N)}
count=${SLURM_ARRAY_TASK_COUNT:?run this as a Slurm job array (sbatch --array=0-N)}
name=$(sed -n 's/^name:[[:space:]]*//p' "$sweep" | head -n 1)
outdir=results/sweeps/$name/shard-$index

"$meshsim" sweep "$sweep" --shard "$index/$count" -o "$outdir" \
  -j "${SLURM_CPUS_PER_TASK:-1}" --resume -q
