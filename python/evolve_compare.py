"""Evolution against hyperparameter tuners, counted in global env steps.

One command per env reproduces a table of docs/bench/tuner:

    /usr/bin/python3 python/evolve_compare.py -config configs/cartpole.toml \\
        -anchor 500 -out bench/tuner/cartpole [-seeds 5] [-studies 3] \\
        [-methods pb2,pbt,pbt-sample,tournament,fixed,pb2-lr0.1,pb2-lr10,tpe,random] \\
        [-study-budget N] [-workers N] [-evolve PATH]

Global env steps are every env step any agent takes: training, evaluation
and elite confirmation (AgileRL's definition). evolve writes them per
generation (metrics.csv's global_steps); python/evolve_tune.py counts them per
trial, its confirmation episodes included.

The methods, all on evolve's own PPO from the same config (BASE), so that
only the search differs:
  pbt          Population Based Training from BASE's [ppo] values with PBT's
               perturbation ([pbt] explore = "perturb")
  pbt-sample   PBT with every agent's hyperparameters drawn from the ranges
  tournament   evolve before PBT: AgileRL's tournament with one mutation per
               clone ([mutation] defaults), fitness from 10 evaluation episodes
  fixed        BASE's [ppo] values as independent agents (no selection)
  fixed-sample independent agents, each drawn from the ranges: random search
               with the population's trials side by side and no pruning; its
               seed draws the same starts as pbt-sample's (and pb2-sample's)
  pbt-lrF      PBT from F x BASE's lr (e.g. pbt-lr0.1, pbt-lr10)
  ...-xK       any evolve method with K x BASE's budget (e.g. pbt-x10, what a
               study spends; fixed-x0.2); left out of the equal budget B
  pb2...       any pbt method with PB2's explore ([pbt] explore = "pb2", as
               the shipped configs have it): pb2, pb2-sample, pb2-lr0.1,
               pb2-x10
  ...-popN     any evolve method with N agents and the same budget per
               agent (e.g. pb2-pop4); left out of the equal budget B
  tpe, random  Optuna studies of single-agent trials (python/evolve_tune.py)
Each evolve method runs -seeds seeds (1..N; "method:N" in -methods for
another count) with no target, spending population.max_steps of training.
Each study (-studies; TPE seeded 1..N, random search 101..) stops at
-study-budget global steps (default 10x the median steps to the anchor of
pb2, or of pbt where pb2 is not run, or 10x B if it did not reach it:
evolution's goal is a tenth of a tuner's steps), or sooner once one of its
trials has reached the anchor and B is spent; studies alone need
-study-budget. Studies run -jobs at a time. The report gives the budget
each study ran with (a study reused from -out keeps its own).

The pbt and pb2 methods select by PBT whatever BASE's [population]
selection is (a config without [pbt] gets evolve's [pbt] defaults).

-import CURVES adds the runs of a curves.csv written before (by this
script): every method not run now, whole, so that a comparison gains a
method without training its peers again; and of a method run now, the
finished seeds the import has, which are not trained again, so that an
earlier report gains seeds (-methods pb2:5 with seeds 1-2 imported trains
seeds 3-5). The report says what was imported.

Measured: the global steps at which a run's elite, confirmed on
elite_episodes fresh episodes, first reaches -anchor (for a study: the end of
its first trial whose confirmed score reaches it), and the best confirmed score
at the equal global budget B = the smallest final global steps of the evolve
runs on BASE's budget (of all evolve runs where every method has its own). Runs and studies already in -out are reused. The report (REPORT.md,
results.csv, curves.csv, curves.png with matplotlib) goes to -out.
"""

import argparse
import concurrent.futures
import csv
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evolve_tune  # noqa: E402  (the TOML writer, the base loader, the build)
from evolve_report import STUDY_METHODS, is_study, median_steps, report, to_anchor  # noqa: E402

PROG = "evolve_compare"
EVOLVE_METHODS = ("pbt", "pbt-sample", "tournament", "fixed", "fixed-sample")


BadInput = evolve_tune.BadInput


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-config", required=True, help="the PBT config of the env (configs/cartpole.toml, acrobot, lunarlander, pendulum)")
    p.add_argument("-anchor", required=True, type=float, help="the tuned score to reach")
    p.add_argument("-out", required=True, help="directory of the runs, studies and report")
    p.add_argument("-seeds", type=int, default=5, help="seeds (1..N) of each evolve method without its own :N")
    p.add_argument("-studies", type=int, default=3, help="studies of each tuner (tpe, random) without its own :N")
    p.add_argument("-methods", default="pb2,pbt,pbt-sample,tournament,fixed,pb2-lr0.1,pb2-lr10,tpe,random",
                   help="comma-separated METHOD or METHOD:N (N seeds or studies), as listed above")
    p.add_argument("-study-budget", type=evolve_tune.int_arg, default=0,
                   help="global steps a study may spend (default: 10x pb2's median steps to the anchor, or 10x B)")
    p.add_argument("-workers", type=int, default=0, help="evolve -workers (never changes results)")
    p.add_argument("-evolve", default="", help="the evolve binary (default: go build into -out)")
    p.add_argument("-space", default="ppo", choices=("ppo", "ppo_lstm"))
    p.add_argument("-import", dest="imported", default="",
                   help="a curves.csv of an earlier report: its methods not in -methods join this report whole, "
                        "and its finished seeds of a method in -methods join it instead of being trained")
    p.add_argument("-report-only", action="store_true",
                   help="train nothing: report the runs and studies in -out as they are (unfinished ones marked)")
    p.add_argument("-jobs", type=int, default=os.cpu_count() or 1,
                   help="studies run at once (a study trains one agent at a time; default: the CPUs)")
    a = p.parse_args(argv)
    # "method:N" runs N seeds (or studies) of that method instead of -seeds.
    a.counts = {}
    for item in a.methods.split(","):
        m, _, n = item.strip().partition(":")
        if m:
            try:
                a.counts[m] = int(n) if n else None
            except ValueError:
                raise BadInput(f"-methods: {item!r}: want METHOD or METHOD:N") from None
            if a.counts[m] is not None and a.counts[m] < 1:
                raise BadInput(f"-methods: {item!r}: want N >= 1 runs (leave the method out to run none)")
    a.methods = list(a.counts)
    a.imported_methods, a.imported_seeds = [], {}
    for m in a.methods:
        if m in STUDY_METHODS:
            continue
        b, _ = split_pop(m)
        b = pbt_name(split_budget(b)[0])
        if b not in EVOLVE_METHODS and not lr_factor(b):
            raise BadInput(f"-methods: {m!r}: want one of {', '.join(EVOLVE_METHODS + STUDY_METHODS)} or pbt-lrF, "
                           "pb2 for pbt in any of those, then -xK (K times the budget) and -popN after an evolve method")
    if not math.isfinite(a.anchor):
        raise BadInput(f"-anchor {a.anchor}: want a finite score")
    if a.seeds < 1 or a.studies < 0:
        raise BadInput("-seeds must be >= 1 and -studies >= 0")
    if a.study_budget < 0:
        raise BadInput(f"-study-budget {a.study_budget}: want >= 1 global steps (or 0 for the default)")
    a.imported_runs = {}
    if a.imported:
        # Read now, not after hours of training.
        try:
            a.imported_runs = import_curves(a.imported, a.anchor)
        except (OSError, UnicodeDecodeError) as e:
            raise BadInput(f"-import {a.imported}: {e.strerror if isinstance(e, OSError) and e.strerror else e}") from None
        except (KeyError, ValueError) as e:
            raise BadInput(f"-import {a.imported}: not a curves.csv of this script (want the columns method, run, "
                           f"global_steps, best_confirmed): {e!r}") from None
    evolve_runs = [m for m in a.methods if m not in STUDY_METHODS] or [m for m in a.imported_runs if not is_study(m)]
    if any(m in STUDY_METHODS for m in a.methods) and not evolve_runs and not a.study_budget:
        raise BadInput("studies without an evolve method need -study-budget N: the default is 10x the steps "
                       "the PBT runs took to the anchor, or 10x their budget")
    if not a.report_only and any(m in STUDY_METHODS for m in a.methods):
        # The studies run last: say now, not after hours of evolve runs, that they cannot.
        try:
            import optuna  # noqa: F401
        except ImportError as e:
            raise BadInput(f"-methods {','.join(m for m in a.methods if m in STUDY_METHODS)}: optuna is not importable by "
                           f"{sys.executable} ({e}): apt-get install python3-optuna and run this script with "
                           "/usr/bin/python3") from None
    return a


def factor(method, prefix):
    """F of a method named prefix + F (pbt-lr0.1, pbt-x10), or None."""
    if not method.startswith(prefix):
        return None
    try:
        f = float(method[len(prefix):])
    except ValueError:
        return None
    return f if math.isfinite(f) and f > 0 else None


def split_pop(method):
    """(the method without its -popN suffix, N or None)."""
    head, sep, n = method.rpartition("-pop")
    if sep and head and n.isdigit() and int(n) > 0:
        return head, int(n)
    return method, None


def pbt_name(method):
    """The pbt method a pb2 method is PB2's explore of (pb2-lr0.1 -> pbt-lr0.1)."""
    return "pbt" + method[3:] if method.startswith("pb2") else method


def own_budget(method):
    """Whether a method's runs have their own budget, left out of B."""
    return bool(budget_factor(method) or split_pop(method)[1])


def split_budget(method):
    """(the method without its -xK suffix, K or None): pbt-x10 is PBT with
    ten times the budget, fixed-x0.2 fixed defaults with a fifth of it."""
    head, sep, k = method.rpartition("-x")
    if sep and head:
        try:
            f = float(k)
        except ValueError:
            return method, None
        if f > 0:
            return head, f
    return method, None


def budget_factor(method):
    """K of a method ending in -xK (before any -popN): K times the budget."""
    return split_budget(split_pop(method)[0])[1]


def lr_factor(method):
    """F of pbt-lrF: PBT from F times the config's lr."""
    return factor(method, "pbt-lr")


def variant(base, method):
    """The config of an evolve method, from the PBT config base."""
    c = json.loads(json.dumps(base))  # a deep copy of plain tables
    pop = c.setdefault("population", {})
    method, n = split_pop(method)
    if n:
        per_agent = pop["max_steps"] / pop["size"]
        pop["size"], pop["max_steps"] = n, int(round(per_agent * n))
    method, k = split_budget(method)
    if k:
        pop["max_steps"] = int(pop["max_steps"] * k)
    # The shipped configs explore by PB2: a pbt method is the same config
    # with PBT's perturbation instead. A config written for the tournament
    # gets PBT's selection with evolve's [pbt] defaults (Ray Tune's), so that
    # the methods differ as their names say.
    if pbt_name(method).startswith("pbt"):
        pop["selection"] = "pbt"
        for k in ("tournament", "mutation"):
            c.pop(k, None)
        b = c.setdefault("pbt", {})
        if method.startswith("pb2"):
            b["explore"] = "pb2"
        else:
            b["explore"] = "perturb"
            b.pop("pb2_region", None)
    method = pbt_name(method)
    if method == "pbt-sample":
        pop["init"] = "sample"
    elif method == "tournament":
        for k in ("selection", "fitness", "init"):
            pop.pop(k, None)
        c.pop("pbt", None)
        c["env"]["eval_episodes"] = 10
    elif method in ("fixed", "fixed-sample"):
        for k in ("selection", "init"):
            pop.pop(k, None)
        c.pop("pbt", None)
        pop["independent"] = True
        if method == "fixed-sample":
            pop["init"] = "sample"
    elif lr_factor(method):
        lr = c["ppo"]["lr"] * lr_factor(method)
        c["ppo"]["lr"] = float(f"{lr:.6g}")
        r = c.setdefault("hp", {}).setdefault("lr", {})
        # The start must lie in the range: widen it as far as needed.
        r["min"] = min(r.get("min", lr), c["ppo"]["lr"])
        r["max"] = max(r.get("max", lr), c["ppo"]["lr"])
    return c


def run_evolve(evolve, rdir, config, seed, workers, report_only=False):
    """Trains one run (or reuses a finished one); returns its curve and
    whether the run is finished."""
    run = os.path.join(rdir, "run")
    summary = os.path.join(run, "summary.json")
    check_same_config(rdir, config)
    done = False
    if os.path.exists(summary):
        with open(summary) as f:
            done = json.load(f).get("finished", False)
    if report_only:
        path = os.path.join(run, "metrics.csv")
        return (evolve_curve(path) if os.path.exists(path) else []), done
    if not done:
        os.makedirs(rdir, exist_ok=True)
        cpath = os.path.join(rdir, "config.toml")
        with open(cpath, "w") as f:
            f.write(evolve_tune.toml_dumps(config))
        if os.path.exists(os.path.join(run, "config.toml")):  # stopped: resume (or restart) it
            cmd = [evolve, "-resume", run, "-quiet"]
        else:
            cmd = [evolve, "-config", cpath, "-out", run, "-seed", str(seed), "-no-target", "-quiet"]
        if workers:
            cmd += ["-workers", str(workers)]
        print(f"{PROG}: {' '.join(cmd)}", file=sys.stderr, flush=True)
        with open(os.path.join(rdir, "evolve.log"), "w") as log:
            rc = run_child(cmd, stdout=log, stderr=subprocess.STDOUT)
        if rc != 0:
            with open(os.path.join(rdir, "evolve.log")) as log:
                tail = log.read()[-2000:]
            raise evolve_tune.Failure(f"{' '.join(cmd)} failed (exit {rc}):\n{tail}")
    return evolve_curve(os.path.join(run, "metrics.csv")), True


# The evolve runs and studies running, so that a stop of this script stops
# them, and whether it is stopping (no child starts then).
CHILDREN = set()
CHILDREN_LOCK = threading.Lock()
STOPPING = threading.Event()


class Stopped(Exception):
    """A child not started because the script is stopping."""


def run_child(cmd, **kw):
    """Runs cmd (stdin closed) to its end and returns its exit status; a
    stop of this script (halt, or Ctrl-C while the main thread waits here)
    stops it too."""
    with CHILDREN_LOCK:
        if STOPPING.is_set():
            raise Stopped(" ".join(cmd))
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, **kw)
        CHILDREN.add(p)
    try:
        return p.wait()
    except KeyboardInterrupt:
        halt()
        raise
    finally:
        with CHILDREN_LOCK:
            CHILDREN.discard(p)


def halt():
    """Stops the script's children: SIGTERM to each (evolve checkpoints and
    stops; a study stops its trial), then waits for them, so that none runs
    on alone holding its run directory; none starts after."""
    with CHILDREN_LOCK:
        STOPPING.set()
        running = list(CHILDREN)
    for p in running:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in running:
        p.wait()


def check_same_config(rdir, config):
    """Refuses a run directory that holds a run of another config: reusing it
    would report its numbers under this config's name (evolve bench refuses
    the same)."""
    cpath = os.path.join(rdir, "config.toml")
    if not os.path.exists(cpath):
        return
    with open(cpath) as f:
        before = f.read()
    if before != evolve_tune.toml_dumps(config):
        raise BadInput(f"{rdir} holds a run of another config ({cpath} differs from what this "
                       "invocation would run): give another -out, or remove the directory to run it again")


def evolve_curve(path):
    """(global steps, elite's confirmed score) after each generation. A last
    line without its newline is a row being written (or cut off by a crash)
    and is left out, as evolve itself leaves a torn last generation out."""
    with open(path, newline="") as f:
        text = f.read()
    if text and not text.endswith("\n"):
        text = text[:text.rfind("\n") + 1]
    curve = {}
    for row in csv.DictReader(text.splitlines()):
        curve[int(row["generation"])] = (int(row["global_steps"]), float(row["elite_fitness"]))
    return [curve[g] for g in sorted(curve)]


def run_study(args, evolve, sdir, sampler, seed, budget, min_steps):
    summary = os.path.join(sdir, "summary.json")
    done = False
    if os.path.exists(summary):
        with open(summary) as f:
            done = json.load(f).get("stop_reason") in ("budget", "anchor", "trials")
    if not done and args.report_only:
        if not os.path.exists(summary):
            return [], {}, False
    elif not done:
        cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "evolve_tune.py"),
               "-config", args.config, "-sampler", sampler, "-seed", str(seed), "-out", sdir,
               "-budget", str(budget), "-anchor", repr(args.anchor), "-evolve", evolve, "-space", args.space,
               "-stop-at-anchor", str(min_steps), "-confirm-margin", repr(args.confirm_margin)]
        if os.path.exists(summary):
            # A study cut short goes on where it stopped, as if it had not.
            print(f"{PROG}: {sdir} holds a study that was stopped before its end: it goes on", file=sys.stderr, flush=True)
            cmd.append("-resume")
        elif os.path.exists(sdir):
            shutil.rmtree(sdir)  # stopped before it wrote anything it could go on from
        print(f"{PROG}: {' '.join(cmd)}", file=sys.stderr, flush=True)
        os.makedirs(os.path.dirname(sdir), exist_ok=True)
        with open(sdir + ".log", "a" if "-resume" in cmd else "w") as log:
            rc = run_child(cmd, stdout=log, stderr=subprocess.STDOUT)
        if rc != 0:
            with open(sdir + ".log") as log:
                tail = log.read()[-2000:]
            raise evolve_tune.Failure(f"{' '.join(cmd)} failed (exit {rc}); the end of {sdir}.log:\n{tail}")
    curve = []
    with open(os.path.join(sdir, "curve.csv"), newline="") as f:
        for row in csv.DictReader(f):
            best = row["best_confirmed_so_far"]
            curve.append((int(row["cumulative_global_steps"]), float(best) if best else -math.inf))
    with open(summary) as f:
        s = json.load(f)
    return curve, s, done or s.get("stop_reason") in ("budget", "anchor", "trials")


def import_curves(path, anchor):
    """The runs of a curves.csv by method: (label, curve, steps to anchor)."""
    runs = {}
    with open(path, newline="") as f:
        for n, row in enumerate(csv.DictReader(f), start=2):
            method, run, steps, score = (row[k] for k in ("method", "run", "global_steps", "best_confirmed"))
            if None in (method, run, steps, score):
                raise ValueError(f"line {n}: fewer fields than the header's")
            curve = runs.setdefault(method, {}).setdefault(run, [])
            steps = int(steps)
            if curve and steps <= curve[-1][0]:
                continue  # a curve's steps only grow: a run written twice (an import of an import) is read once
            curve.append((steps, float(score)))
    if not runs:
        raise ValueError("no rows")
    return {m: [(label, c, to_anchor(c, anchor)) for label, c in r.items()] for m, r in runs.items()}


def main(argv):
    try:
        args = parse_args(argv)
        base = evolve_tune.load_base(args.config)
        # The studies confirm a trial by the gate evolve's runs use.
        args.confirm_margin = float(base.get("population", {}).get("confirm_margin", 0))
        if args.evolve and not (os.path.isfile(args.evolve) and os.access(args.evolve, os.X_OK)):
            raise BadInput(f"-evolve {args.evolve}: not an executable file (build one with go build -o PATH ./cmd/evolve)")
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise BadInput(f"-out {args.out}: a file, not a directory")
        # Everything that can be refused is refused before hours of training.
        configs = {m: method_config(base, m) for m in args.methods if m not in STUDY_METHODS}
        imported = imported_seeds(args)
        for m, k in study_jobs(args):
            check_same_study(os.path.join(args.out, m, f"study-{k}"), args)
        if args.report_only and not os.path.isdir(args.out):
            raise BadInput(f"-out {args.out}: no such directory: -report-only reports the runs already there")
    except BadInput as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, evolve_tune.interrupt)  # stops the runs and studies as Ctrl-C does
    try:
        return compare(args, base, configs, imported)
    except KeyboardInterrupt:
        halt()
        print(f"{PROG}: stopped, and its runs and studies with it: the same command again resumes the evolve runs "
              "where they stopped, and the studies too", file=sys.stderr)
        raise


def compare(args, base, configs, imported):
    """Trains (or reuses) the runs and studies and writes the report; the
    exit status."""
    os.makedirs(args.out, exist_ok=True)
    evolve = args.evolve or ("" if args.report_only else evolve_tune.build_evolve(args.out))
    results = {}  # method -> list of (label, curve, steps_to_anchor)
    for m, cfg in configs.items():
        for s in range(1, (args.counts[m] or args.seeds) + 1):
            if s in imported.get(m, ()):
                continue  # joins from the import below
            curve, done = run_evolve(evolve, os.path.join(args.out, m, f"seed-{s}"), cfg, s, args.workers, args.report_only)
            if curve:
                label = f"seed {s}" + ("" if done else " (unfinished)")
                results.setdefault(m, []).append((label, curve, to_anchor(curve, args.anchor)))
    args.imported_methods, args.imported_seeds = join_imported(results, args.imported_runs, args.methods, imported)
    budget, args.budget_of = shared_budget(results)
    # A study need go no further than 10x the steps PBT took to the anchor
    # (evolution's goal is a tenth of a tuner's steps) and no further than
    # its anchor once it has covered the equal budget B.
    study_budget, args.why_budget = default_study_budget(args, results, budget)
    if study_budget < 1 and any(m in STUDY_METHODS for m in args.methods) and not args.report_only:
        print(f"{PROG}: no evolve run ended with global steps to set the studies' budget: give -study-budget N",
              file=sys.stderr)
        return 2
    jobs = study_jobs(args)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        # Random search's studies are seeded 101, 102, ...: TPE's start-up
        # trials are random search's with the same seed, and a study that
        # reaches the anchor within them would only repeat TPE's.
        done = pool.map(lambda j: run_study(args, evolve, os.path.join(args.out, j[0], f"study-{j[1]}"), j[0],
                                            j[1] + (100 if j[0] == "random" else 0), study_budget, budget), jobs)
        try:
            done = list(done)
        except KeyboardInterrupt:
            halt()  # before the pool's end waits for studies that would run on
            raise
        args.study_budgets = []  # each study's own, from its summary.json: a reused study keeps the one it ran with
        for (m, k), (curve, s, finished) in zip(jobs, done):
            if s.get("budget"):
                args.study_budgets.append(int(s["budget"]))
            if curve:
                label = f"study {k}" + ("" if finished else " (unfinished)")
                results.setdefault(m, []).append((label, curve, s.get("steps_to_anchor")))
    if args.report_only and not any(results.values()):
        held = sorted(d for d in os.listdir(args.out) if os.path.isdir(os.path.join(args.out, d)))
        print(f"{PROG}: -report-only: {args.out} holds no run of {','.join(args.methods)}"
              + (f" (it holds {', '.join(held)})" if held else "") + "; the report there is left as it is",
              file=sys.stderr)
        return 2
    report(args, results, budget, study_budget)
    return 0


def study_jobs(args):
    """The studies to run or reuse: (method, number) pairs."""
    return [(m, k) for m in args.methods if m in STUDY_METHODS for k in range(1, (args.counts[m] or args.studies) + 1)]


def check_same_study(sdir, args):
    """Refuses a study directory that holds a study of another anchor, space
    or config: reused, its steps to the anchor (and where it stopped) would
    be reported under this comparison's."""
    path = os.path.join(sdir, "summary.json")
    if not os.path.exists(path):
        return
    try:
        with open(path) as f:
            s = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"{path}: {e}: not a study's summary (remove {sdir} to run the study again)") from None
    why = []
    if s.get("anchor") != args.anchor:
        why.append(f"anchor {s.get('anchor')!r}, not {args.anchor:g}")
    if s.get("space", "ppo") != args.space:
        why.append(f"space {s.get('space')!r}, not {args.space!r}")
    if s.get("base_config") and os.path.realpath(s["base_config"]) != os.path.realpath(args.config):
        why.append(f"config {s['base_config']}, not {args.config}")
    if why:
        raise BadInput(f"{sdir} holds a study of another comparison ({'; '.join(why)}): give another -out, "
                       "or remove the directory to run it again")


def method_config(base, method):
    """variant(base, method), refusing a base config that lacks what the
    method changes (its lr, its budget)."""
    try:
        return variant(base, method)
    except KeyError as e:
        raise BadInput(f"-methods {method}: the config sets no {e.args[0]!r} where this method needs it "
                       "(write [ppo] lr and [population] max_steps, size into the config)") from None


def imported_seeds(args):
    """Per evolve method run now, the seeds (numbers) -import gives it: its
    finished seeds within the method's count. A seed the import gives whose
    run directory is in -out too is refused: which of the two to report
    would be a guess."""
    out = {}
    for m in args.methods:
        if m in STUDY_METHODS:
            continue
        n = args.counts[m] or args.seeds
        seeds = sorted(run_number(label) for label, _, _ in args.imported_runs.get(m, [])
                       if "unfinished" not in label and label.startswith("seed ") and run_number(label) <= n)
        for s in seeds:
            rdir = os.path.join(args.out, m, f"seed-{s}")
            if os.path.exists(rdir):
                raise BadInput(f"-import {args.imported} has {m}'s seed {s}, and {rdir} holds a run of it too: "
                               "remove the one not to report (or give another -out)")
        out[m] = set(seeds)
    return out


def join_imported(results, imported, methods, seeds_of):
    """Adds imported runs to results: a method not in methods whole, and of
    an evolve method in methods the seeds seeds_of gives it (an earlier
    report's), in seed order. Returns the methods imported whole and, per
    method in methods, the labels of the runs it took from the import."""
    whole, seeds = [], {}
    for m, runs in imported.items():
        if m not in methods:
            if m not in results:
                results[m] = runs
                whole.append(m)
            continue
        if is_study(m):
            continue  # a study run now is trained in full: its trials' budget follows this invocation's runs
        extra = [r for r in runs if "unfinished" not in r[0] and r[0].startswith("seed ")
                 and run_number(r[0]) in seeds_of.get(m, ())]
        if extra:
            results[m] = sorted(results.get(m, []) + extra, key=lambda r: run_number(r[0]))
            seeds[m] = [label for label, _, _ in extra]
    return whole, seeds


def run_number(label):
    """The N of a run's label "seed N" or "study N" (sorting seed 10 after seed 9)."""
    try:
        return int(label.split()[1])
    except (IndexError, ValueError):
        return math.inf


def pbt_reference(results):
    """The PBT method whose median steps to the anchor set the studies'
    default budget: pb2 (the shipped configs' explore) or pbt, or None."""
    return next((m for m in ("pb2", "pbt") if results.get(m)), None)


def default_study_budget(args, results, budget):
    """The studies' budget and why: -study-budget, or 10x the median steps
    the reference PBT method took to the anchor, or 10x B."""
    if args.study_budget:
        return args.study_budget, "the budget given"
    ref = pbt_reference(results)
    med = median_steps([sta for _, _, sta in results[ref]]) if ref else None
    if med:
        return 10 * med, f"10x {ref}'s median steps to the anchor"
    if ref:
        return 10 * budget, f"10x B: {ref} did not reach the anchor in half of its runs"
    return 10 * budget, "10x B: no pb2 or pbt method ran"


def shared_budget(results):
    """B and what it is the end of: the smallest final global steps of the
    evolve runs on the config's budget, or of all evolve runs where every
    method has its own budget (an imported study, cut short or not, is no
    run); (0, "") when there is no evolve run."""
    def finals(keep, finished=True):
        return [c[-1][0] for m, runs in results.items() if keep(m) and not is_study(m)
                for label, c, _ in runs if c and (not finished or "unfinished" not in label)]
    if on_base := finals(lambda m: not own_budget(m)):
        return min(on_base), "the smallest of the evolve runs on the config's budget"
    if own := finals(lambda m: True):
        return min(own), "the smallest of the evolve runs; every method here has its own budget"
    # Only unfinished runs: B is where the furthest of them has got to, for now.
    if some := finals(lambda m: not own_budget(m), finished=False) or finals(lambda m: True, finished=False):
        return max(some), "no evolve run has finished: the furthest of the unfinished runs so far"
    return 0, ""


if __name__ == "__main__":
    evolve_tune.run(PROG, main)
