#!/usr/bin/env bash
# Trains the POPGym benchmark: for each task and seed, evolve on
# popgym.toml with [env] id set to the task and BUDGET env steps per agent
# (4 agents). Runs already finished in OUT are kept. Usage:
#   docs/bench/popgym/run.sh OUT [BUDGET] [SEEDS] [TASKS...]
# e.g. docs/bench/popgym/run.sh /tmp/popgym 500000 "1 2 3"
# WORKERS sets evolve -workers (results do not depend on it; default: the CPUs);
# CONFIG another config of this folder (default popgym.toml).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:?usage: run.sh OUT [BUDGET] [SEEDS] [TASKS...]}
budget=${2:-500000}
seeds=${3:-1 2 3}
shift $(( $# < 3 ? $# : 3 ))
tasks=("$@")
if [ ${#tasks[@]} -eq 0 ]; then
	tasks=(RepeatPreviousEasy RepeatPreviousMedium CountRecallEasy AutoencodeEasy
		PositionOnlyCartPoleEasy PositionOnlyCartPoleMedium NoisyPositionOnlyCartPoleEasy)
fi
mkdir -p "$out"
evolve="$out/evolve"
[ -x "$evolve" ] || (cd "$root" && go build -o "$evolve" ./cmd/evolve)
for task in "${tasks[@]}"; do
	for seed in $seeds; do
		dir="$out/$task/seed-$seed"
		if [ -f "$dir/summary.json" ] && grep -q '"finished": *true' "$dir/summary.json"; then
			continue
		fi
		mkdir -p "$out/$task"
		cfg="$out/$task/config.toml"
		sed -e "s/^id = .*/id = \"popgym-$task-v0\"/" "$here/${CONFIG:-popgym.toml}" > "$cfg"
		if [ -f "$dir/config.toml" ]; then # stopped: resumed (one stopped before its first checkpoint starts again)
			"$evolve" -resume "$dir" -quiet ${WORKERS:+-workers "$WORKERS"}
		else
			"$evolve" -config "$cfg" -out "$dir" -seed "$seed" -max-steps $((budget * 4)) -no-target -quiet ${WORKERS:+-workers "$WORKERS"}
		fi
		echo "$task seed $seed: $(grep -o '"elite_fitness": *[-0-9.e]*' "$dir/summary.json" || true)"
	done
done
