#!/usr/bin/env bash
# Wall time and peak memory of `meshsim run` on GPT-1T (workloads/experiments/gpt-1t-3072.yaml:
# tp 4, pp 64, 64 micro-batches per pipeline) with more data parallelism: dp 12, 64 and 384
# (3,072, 16,384 and 98,304 GPUs), in four modes: default (flow network, symmetric
# replay), alpha-beta symmetric, full replay alpha-beta, full replay flow. One process per
# row, measured with /usr/bin/time (elapsed seconds, maximum resident set), median of
# REPEAT runs. A run past LIMIT seconds is stopped and shown as "> LIMIT s".
#
# Usage: scripts/scale_bench.sh MESHSIM_BINARY [REPEAT=3] [LIMIT=120] [MODES...]
#   MODES: default ab full-ab full-flow (default: all four); GPUS=3072,16384 limits the sizes.
# Prints a Markdown table (results/scale.md holds the recorded ones).
set -euo pipefail
bin=$(realpath "$1")
repeat=${2:-3}
limit=${3:-120}
shift $(($# < 3 ? $# : 3))
modes=("$@")
[[ ${#modes[@]} -eq 0 ]] && modes=(default ab full-ab full-flow)
cd "$(dirname "$0")/.."
sizes=${GPUS:-3072,16384,98304}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mode_args() {
  case $1 in
    default) echo "" ;;
    ab) echo "--set cluster.network_model=alpha_beta" ;;
    full-ab) echo "--set cluster.network_model=alpha_beta --full-replay" ;;
    full-flow) echo "--full-replay" ;;
  esac
}

echo "| GPUs | mode | wall s (median of $repeat) | peak RSS MiB | exit |"
echo "|---|---|---|---|---|"
for gpus in ${sizes//,/ }; do
  dp=$((gpus / 256))
  nodes=$((gpus / 8))
  batch=$((dp * 256))  # 64 micro-batches of 4 per pipeline, as at dp 12
  for mode in "${modes[@]}"; do
    times=() rss=() code=0
    for _ in $(seq "$repeat"); do
      set +e
      # shellcheck disable=SC2046
      /usr/bin/time -f "%e %M" -o "$work/time" timeout "$limit" "$bin" run \
        workloads/experiments/gpt-1t-3072.yaml --no-trace --summary "$work/summary.json" \
        --set plan.dp=$dp --set cluster.nodes=$nodes --set plan.global_batch=$batch \
        $(mode_args "$mode") > "$work/out" 2> "$work/err"
      code=$?
      set -e
      read -r t m < <(tail -1 "$work/time")
      times+=("$t") rss+=("$m")
      [[ $code -eq 124 || $code -eq 2 ]] && break  # stopped or refused: once is enough
    done
    if [[ $code -eq 124 ]]; then
      echo "| $gpus | $mode | > $limit | > $(( ${rss[0]} / 1024 )) | stopped |"
      continue
    fi
    t=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(( (${#times[@]} + 1) / 2 ))p")
    m=$(printf '%s\n' "${rss[@]}" | sort -g | sed -n "$(( (${#rss[@]} + 1) / 2 ))p")
    echo "| $gpus | $mode | $t | $((m / 1024)) | $code |"
  done
done
