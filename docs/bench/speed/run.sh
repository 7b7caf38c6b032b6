#!/usr/bin/env bash
# Speed of the shipped configs: each trains its first generations (GENS, default 3;
# MinAtar 1) with 1 and with 2 workers, without its target, and the runs' summary.json
# files are collected into OUT/results.csv (collect.py).
#
#   docs/bench/speed/run.sh OUT [CONFIG ...]
set -euo pipefail
out=${1:?usage: run.sh OUT [CONFIG ...]}
shift
configs=("$@")
if [ ${#configs[@]} -eq 0 ]; then
	configs=(cartpole acrobot pendulum mountaincar mountaincar-continuous lunarlander lunarlander-continuous
		cartpole-novel-lstm cartpole-novel-memory pendulum-novel-lstm probe7-lstm catch-cnn connect4
		deepsea-rnd minatar-breakout)
fi
gens=${GENS:-3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
evolve=${EVOLVE:-$out/evolve}
mkdir -p "$out"
[ -x "$evolve" ] || (cd "$root" && go build -o "$evolve" ./cmd/evolve)
for c in "${configs[@]}"; do
	g=$gens
	case $c in minatar-*) g=1 ;; esac
	# One generation is population.size × population.evo_steps env steps.
	steps=$(/usr/bin/python3 -c "
import tomllib
p = tomllib.load(open('$root/configs/$c.toml', 'rb')).get('population', {})
print($g * p['size'] * p['evo_steps'])")
	for w in 1 2; do
		dir=$out/$c-w$w
		rm -rf "$dir"
		echo "$c, $w worker(s), $steps steps" >&2
		"$evolve" -config "$root/configs/$c.toml" -out "$dir" -workers "$w" -max-steps "$steps" -no-target -quiet >/dev/null
	done
done
/usr/bin/python3 "$here/collect.py" "$out" > "$out/results.csv"
cat "$out/results.csv"
