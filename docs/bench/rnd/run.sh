#!/usr/bin/env bash
# run.sh METHOD "SIZES" [SEEDS] — trains docs/bench/rnd/deepsea-METHOD.toml
# (METHOD: ppo or rnd) on Deep Sea of every size in SIZES, one run per seed
# (default "1 2 3"), the action mapping drawn from the run's seed, into
# bench/rnd/METHOD-N-sS. A run already there is skipped. report.py reads
# them.
#
#   docs/bench/rnd/run.sh rnd "10 20 30 40"
#   docs/bench/rnd/run.sh ppo "6 8 10 12 20"
set -euo pipefail
cd "$(dirname "$0")/../../.."
method=$1 sizes=$2 seeds=${3:-1 2 3}
out=${OUT:-bench/rnd}
evolve=${EVOLVE:-$out/evolve}
[ -x "$evolve" ] || go build -o "$evolve" ./cmd/evolve
for n in $sizes; do
	for s in $seeds; do
		dir=$out/$method-$n-s$s
		[ -f "$dir/summary.json" ] && continue
		"$evolve" -config "docs/bench/rnd/deepsea-$method.toml" -set "env.options.size=$n" \
			-set "env.options.mapping_seed=$s" -seed "$s" -out "$dir" -quiet -workers 1 >/dev/null
		echo "$method N=$n seed $s: $(grep -o '"elite_fitness":[^,]*' "$dir/summary.json"), $(grep -o '"global_steps": *[0-9]*' "$dir/summary.json")"
	done
done
