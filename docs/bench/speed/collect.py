"""Collects the summary.json of each run of run.sh (OUT/<config>-w<workers>) into CSV."""
import csv
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["config", "workers", "generations", "total_steps", "global_steps", "wall_s", "steps_per_s", "elite_fitness"])
for d in sorted(out.glob("*-w[12]"), key=lambda p: (p.name.rsplit("-w", 1)[0], p.name)):
    s = json.loads((d / "summary.json").read_text())
    config, workers = d.name.rsplit("-w", 1)
    w.writerow([config, workers, s["generations"], s["total_steps"], s["global_steps"],
                f"{s['wall_s']:.2f}", f"{s['steps_per_s']:.0f}", s.get("elite_fitness", "")])
