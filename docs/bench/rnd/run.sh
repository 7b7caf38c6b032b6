#!/usr/bin/env bash
# run.sh METHOD "SIZES" [SEEDS] — trains docs/bench/rnd/deepsea-METHOD.toml
# (METHOD: ppo, rnd or ppod) on Deep Sea of every size in SIZES, one run
# per seed (default "1 2 3"), the action mapping drawn from the run's seed,
# into bench/rnd/METHOD-N-sS. For ppod, 5 demonstrations of that Deep Sea
# solved are recorded first (deepsea-demos) into bench/rnd/demos-N-sS, the
# run's [demos] dir. A run already there is skipped. report.py reads them.
#
#   docs/bench/rnd/run.sh rnd "10 20 30 40"
#   docs/bench/rnd/run.sh ppo "6 8 10 12 20"
#   docs/bench/rnd/run.sh ppod "30 40 50"
set -euo pipefail
cd "$(dirname "$0")/../../.."
method=$1 sizes=$2 seeds=${3:-1 2 3}
out=${OUT:-bench/rnd}
evolve=${EVOLVE:-$out/evolve}
[ -x "$evolve" ] || go build -o "$evolve" ./cmd/evolve
for n in $sizes; do
	for s in $seeds; do
		dir=$out/$method-$n-s$s
		grep -qs '"finished": *true' "$dir/summary.json" && continue
		extra=()
		if [ "$method" = ppod ]; then
			demos=$out/demos-$n-s$s
			mkdir -p "$demos"
			go run ./docs/bench/rnd/deepsea-demos -size "$n" -mapping-seed "$s" -episodes 5 -o "$demos/solved.npz" >/dev/null
			extra=(-set "demos.dir=\"$demos\"")
		fi
		if [ -f "$dir/config.toml" ]; then # stopped: resumed
			"$evolve" -resume "$dir" -quiet -workers 1 >/dev/null
		else
			"$evolve" -config "docs/bench/rnd/deepsea-$method.toml" -set "env.options.size=$n" \
				-set "env.options.mapping_seed=$s" "${extra[@]}" -seed "$s" -out "$dir" -quiet -workers 1 >/dev/null
		fi
		echo "$method N=$n seed $s: $(grep -o '"elite_fitness":[^,]*' "$dir/summary.json"), $(grep -o '"global_steps": *[0-9]*' "$dir/summary.json")"
	done
done
