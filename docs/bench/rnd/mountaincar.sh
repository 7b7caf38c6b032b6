#!/usr/bin/env bash
# mountaincar.sh [SEEDS] [METHODS] — trains docs/bench/rnd/mountaincar-METHOD.toml
# (default METHODS "rnd ppo"; also rnd4), one run per seed (default "1 2 3"), into
# bench/rnd/mc-METHOD-sS; a run already there is skipped. report.py reads
# them.
set -euo pipefail
cd "$(dirname "$0")/../../.."
seeds=${1:-1 2 3}
methods=${2:-rnd ppo}
out=${OUT:-bench/rnd}
evolve=${EVOLVE:-$out/evolve}
[ -x "$evolve" ] || go build -o "$evolve" ./cmd/evolve
for s in $seeds; do
	for method in $methods; do
		dir=$out/mc-$method-s$s
		grep -qs '"finished": *true' "$dir/summary.json" && continue
		if [ -f "$dir/config.toml" ]; then # stopped: resumed
			"$evolve" -resume "$dir" -quiet -workers 1 >/dev/null
		else
			"$evolve" -config "docs/bench/rnd/mountaincar-$method.toml" -seed "$s" -out "$dir" -quiet -workers 1 >/dev/null
		fi
		echo "$method seed $s: $(grep -o '"elite_fitness":[^,]*' "$dir/summary.json"), $(grep -o '"global_steps": *[0-9]*' "$dir/summary.json")"
	done
done
