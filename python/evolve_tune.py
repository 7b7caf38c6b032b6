"""Tune evolve's PPO with Optuna the way rl-baselines3-zoo's tuner does.

A reproducible driver for a baseline: single-agent evolve runs whose PPO
hyperparameters and network are sampled by Optuna (TPE or random) and pruned by
Optuna's MedianPruner, with the settings of rl-baselines3-zoo (rl_zoo3/train.py,
exp_manager.py, hyperparams_opt.py), and every env step counted: training,
evaluation and confirmation. Only the standard library and optuna are needed
(Debian's python3-optuna: run with /usr/bin/python3).

    /usr/bin/python3 python/evolve_tune.py -config BASE.toml -sampler tpe -seed 1 \\
        -out runs/tune-tpe-1 -budget 2_000_000 -anchor 500 [-trials N] [-trial-steps N] \\
        [-evaluations N] [-eval-episodes 5] [-confirm-episodes 100] [-space ppo|ppo_lstm] \\
        [-startup-trials 10] [-pruner median|halving|none] [-evolve PATH] [-resume]

The study. Each trial is one evolve run of a single agent ([population]
size = 1, independent = true) on BASE's [env], trained for -trial-steps env
steps (default: BASE's max_steps / size, the zoo's budget per agent) in
-evaluations generations (default: the zoo's max(1, trial_steps // 100_000));
after each generation the agent's fitness (the mean return of -eval-episodes
deterministic episodes, the zoo's n_eval_episodes = 5) is reported to Optuna
at step = generation, and the trial is stopped (SIGINT) and recorded as pruned
when the pruner says so. A trial that runs to its end is worth its last
fitness (the zoo's objective returns the last mean reward). Its agent is
then confirmed on -confirm-episodes fresh episodes with `evolve play`, from a
confirmation seed that is the same for every trial of the study, if its last
fitness reaches that of the best confirmed trial so far (-confirm best, the
default: as evolve confirms a generation's best only when its fitness reaches
the elite's, so that both count confirmation steps alike; -confirm all
confirms every completed trial). With
elite_episodes = 0 the run's elite.safetensors, the agent `evolve play -agent
RUN` plays, is the agent of the run's best-fitness generation (ties: the
first), which is not always its last one.

Sampler: TPESampler(n_startup_trials=-startup-trials, multivariate=True,
seed=-seed) or RandomSampler(seed=-seed). Pruner: MedianPruner(
n_startup_trials=-startup-trials, n_warmup_steps=evaluations // 3); the zoo
uses its one --n-startup-trials (default 10) for both. Trial n (Optuna's
number, from 0) trains with seed = seed*1000 + n.

The search space is the zoo's sample_ppo_params as the tuning issue states it
(see sample_params for where the zoo differs). n_steps is per env, so evolve's
learn_step = n_steps * BASE's [env] num_envs; batch_size is clamped to
learn_step (a bigger minibatch is the whole rollout in SB3, too). The zoo's
nets map onto evolve's encoder -> latent -> head: tiny (pi = vf = [64]) is an
MLP encoder without hidden layers, a 64-unit latent and a head without hidden
layers; small ([64, 64]) is an encoder of [64] and a 64-unit latent; medium
([256, 256]) an encoder of [256] and a 256-unit latent. For a BASE whose
encoder is a CNN the zoo's net_arch follows its CNN features extractor: BASE's
[net.cnn] is kept and net_arch is the latent and the head's hidden layers
(tiny: a 64-unit latent; small: 64 and a head of [64]; medium: 256 and
[256]), the activation theirs. -space ppo_lstm
samples the LSTM's hidden size too and puts the LSTM in the encoder's place
(the zoo's RecurrentPPO puts net_arch after the LSTM: here the latent and the
head's hidden layers).

Budget. Steps of a trial = its run's global_steps in metrics.csv (training +
evaluation + elite confirmation, when evolve writes that column) + the steps
of its confirmation episodes. Without a global_steps column only training and
confirmation steps are counted (steps_basis = "training+confirm" in
trials.csv and summary.json). The study stops after -trials trials, once
the cumulative steps reach -budget, or with -stop-at-anchor MIN_STEPS once a
trial has reached the anchor and MIN_STEPS are spent; a trial is never trained for more than
the budget left (max_steps and evo_steps are capped at it, so the budget is
overshot by at most that trial's evaluation and confirmation steps and its
last rollout). A pruned trial counts the steps up to the generation at which
it was pruned: a run may have got further before the SIGINT reached it, and
those steps, which depend on timing, are not counted.

Outputs in -out: trial-NNNN/ (config.toml, run/, evolve.log, play.log),
trials.csv (one row per trial: sampled parameters, evolve's values, steps,
last fitness, confirmed score), curve.csv (cumulative steps and the best
confirmed score so far, one row per trial), summary.json, and
timing.csv (wall time per trial, the one output that differs between two
runs of the same study). The same arguments and seed give the same
trials.csv, curve.csv and summary.json (with the same optuna and evolve).

Resume. A study stopped before its end (SIGINT or SIGTERM, a failure, a
lost machine) goes on with the same command and -resume, as if it had not
stopped: its trials are drawn again from a new sampler of the same seed,
each checked against trials.csv and its config.toml (a changed base config,
or an Optuna that draws otherwise, is refused), given the fitness values
its run gave the pruner and told its end, so that the sampler and the
pruner stand where they stood; the trial it stopped in is drawn again and
its evolve run goes on from its last checkpoint (evolve -resume, bit for
bit). trials.csv, curve.csv and summary.json then end as the study's
would have without the stop. -budget, -trials, -stop-at-anchor and -evolve
may differ from the first command (without -evolve the study's own
DIR/evolve, which its trials ran with, runs on); the other settings may
not, and the -config path is recorded as given. A study that ended on its
budget goes on to a bigger one, but is then not the study the bigger budget
would have run: its last trial keeps the max_steps the first budget cut it
to. For the trial a study stopped in, timing.csv holds only the wall time
of the session it ended in.

Exit status: 0 done, 1 a failure (evolve failed, a file could not be
written), 2 bad arguments or no optuna, 130 interrupted (SIGINT or SIGTERM:
the outputs then hold the trials that ended; -resume goes on with the one
that was running).
"""

import argparse
import copy
import csv
import hashlib
import io
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import tomllib
import warnings

PROG = "evolve_tune"

# rl-baselines3-zoo's settings (rl_zoo3/train.py and exp_manager.py).
ZOO_STARTUP_TRIALS = 10  # --n-startup-trials: TPE's random trials and MedianPruner's unpruned ones
ZOO_EVAL_EPISODES = 5  # --eval-episodes: n_eval_episodes of TrialEvalCallback
ZOO_STEPS_PER_EVALUATION = 100_000  # n_evaluations defaults to max(1, n_timesteps // 1e5)

MAX_LEARN_STEP = 100_000_000  # evolve's bound on ppo.learn_step
LSTM_HIDDEN_SIZES = [16, 32, 64, 128, 256, 512]

# evolve's defaults (configs/pop.toml) for the keys the driver reads from the
# base config.
EVOLVE_NUM_ENVS = 8
EVOLVE_POP_SIZE = 4
EVOLVE_MAX_STEPS = 1_000_000
EVOLVE_MAX_SEQ_LEN = 16
EVOLVE_MAX_LATENT = 128

# Tables of the base config that a single independent agent does not use.
DROPPED_TABLES = ("hp", "mutation", "tournament", "pbt")

ACTIVATIONS = {"tanh": "Tanh", "relu": "ReLU"}

POLL_S = 0.02  # how often a running trial's metrics.csv is read


class Failure(Exception):
    """A failure of the study (exit status 1)."""


class BadInput(Exception):
    """Bad arguments or base config (exit status 2)."""


# ---------------------------------------------------------------- arguments


def int_arg(s):
    """An integer flag value: 1000000, 1_000_000 or 1e6."""
    try:
        return int(s.replace("_", ""))
    except ValueError:
        pass
    try:
        f = float(s.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
    if not math.isfinite(f) or f != int(f):
        raise argparse.ArgumentTypeError(f"{s!r} is not an integer")
    return int(f)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        allow_abbrev=False,
        description="Tune evolve's PPO with Optuna as rl-baselines3-zoo's tuner does "
        "(run with /usr/bin/python3 where optuna is Debian's python3-optuna).",
    )

    def add(name, **kw):
        p.add_argument("-" + name, "--" + name, dest=name.replace("-", "_"), **kw)

    add("config", required=True, metavar="BASE.toml", help="base evolve config: its [env], [ppo] and budget per agent")
    add("sampler", required=True, choices=["tpe", "random"], help="Optuna sampler")
    add("seed", required=True, type=int_arg, help="study seed (sampler; trial n trains with seed*1000+n)")
    add("out", required=True, metavar="DIR", help="directory for the study's files (new or empty)")
    add("budget", required=True, type=int_arg, metavar="GLOBAL_STEPS",
        help="stop once the study's env steps (training, evaluation, confirmation) reach this")
    add("anchor", required=True, type=float, metavar="X", help="score whose first confirmed reach is steps_to_anchor")
    add("trials", type=int_arg, default=None, metavar="N", help="stop after N trials (default: the budget only)")
    add("stop-at-anchor", type=int_arg, default=None, metavar="MIN_STEPS",
        help="stop once a trial's confirmed score has reached the anchor and the study has spent MIN_STEPS "
        "(a comparison needs the study only that far; default: run to the budget)")
    add("trial-steps", type=int_arg, default=None, metavar="N",
        help="training env steps per trial (default: the base config's max_steps / population size)")
    add("evaluations", type=int_arg, default=None, metavar="N",
        help="evaluations (generations) per trial (default: the zoo's max(1, trial_steps // 100000))")
    add("eval-episodes", type=int_arg, default=ZOO_EVAL_EPISODES, metavar="N",
        help=f"episodes per evaluation (default {ZOO_EVAL_EPISODES}, the zoo's)")
    add("confirm-episodes", type=int_arg, default=100, metavar="N",
        help="fresh episodes that confirm a completed trial's agent (default 100)")
    add("confirm", choices=["best", "all"], default="best",
        help="which completed trials are confirmed: best (default: those whose last fitness reaches the last "
        "fitness of the confirmed trial with the best confirmed score so far, as evolve confirms a generation's "
        "best against its elite's fitness) or all")
    add("confirm-margin", type=float, default=0.0, metavar="K",
        help="with -confirm best: confirm a trial whose last fitness plus K standard errors of its last "
        "evaluation's episodes reaches the bar (evolve's population.confirm_margin; default 0)")
    add("space", choices=["ppo", "ppo_lstm"], default="ppo", help="search space: the zoo's ppo or ppo_lstm")
    add("startup-trials", type=int_arg, default=ZOO_STARTUP_TRIALS, metavar="N",
        help=f"TPE's random trials and the pruner's completed trials before pruning (default {ZOO_STARTUP_TRIALS}, the zoo's)")
    add("pruner", choices=["median", "halving", "none"], default="median", help="Optuna pruner, as the zoo sets it up")
    add("evolve", default=None, metavar="PATH", help="the evolve binary (default: go build -o DIR/evolve ./cmd/evolve)")
    add("resume", action="store_true",
        help="go on with the study in -out that stopped before its end (interrupted or failed) as if it had not "
        "stopped: the same arguments, but -budget, -trials, -stop-at-anchor and -evolve may change")
    a = p.parse_args(argv)
    checks = [
        (a.seed >= 0, f"-seed {a.seed}: want >= 0"),
        (a.budget >= 1, f"-budget {a.budget}: want >= 1"),
        (not math.isnan(a.anchor), "-anchor: want a number"),
        (a.trials is None or a.trials >= 1, f"-trials {a.trials}: want >= 1"),
        (a.stop_at_anchor is None or a.stop_at_anchor >= 0, f"-stop-at-anchor {a.stop_at_anchor}: want >= 0"),
        (a.trial_steps is None or a.trial_steps >= 1, f"-trial-steps {a.trial_steps}: want >= 1"),
        (a.evaluations is None or a.evaluations >= 1, f"-evaluations {a.evaluations}: want >= 1"),
        (a.eval_episodes >= 1, f"-eval-episodes {a.eval_episodes}: want >= 1"),
        (a.confirm_episodes >= 1, f"-confirm-episodes {a.confirm_episodes}: want >= 1"),
        (0 <= a.confirm_margin <= 10, f"-confirm-margin {a.confirm_margin}: want 0 to 10"),
        (a.startup_trials >= 0, f"-startup-trials {a.startup_trials}: want >= 0"),
    ]
    for ok, msg in checks:
        if not ok:
            p.error(msg)
    return a


def import_optuna():
    try:
        import optuna
    except ImportError as e:
        print(f"{PROG}: optuna is not importable by {sys.executable} ({e}): "
              "apt-get install python3-optuna and run this script with /usr/bin/python3", file=sys.stderr)
        sys.exit(2)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    return optuna


# --------------------------------------------------------------------- TOML


BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(k):
    return k if BARE_KEY.match(k) else toml_string(k)


def toml_string(s):
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_value(v, where):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)  # 0.001, 1e-05, 1e+16: all TOML floats
    if isinstance(v, str):
        return toml_string(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x, where) for x in v) + "]"
    raise Failure(f"{where}: cannot write a {type(v).__name__} as TOML")


def toml_dumps(table):
    """TOML for nested tables of numbers, strings, booleans and arrays of them."""
    lines = []

    def emit(t, path):
        subs = []
        for k, v in t.items():
            if isinstance(v, dict):
                subs.append((k, v))
            else:
                if isinstance(v, list) and any(isinstance(x, dict) for x in v):
                    raise Failure(f"{'.'.join(path + [k])}: arrays of tables are not supported")
                lines.append(f"{toml_key(k)} = {toml_value(v, '.'.join(path + [k]))}")
        for k, v in subs:
            p = path + [k]
            if lines:
                lines.append("")
            lines.append("[" + ".".join(toml_key(x) for x in p) + "]")
            emit(v, p)

    emit(table, [])
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------- search space


def sample_params(trial, space):
    """The zoo's sample_ppo_params (and sample_ppo_lstm_params), as the
    tuning issue states them, under the zoo's parameter names.

    Where rl-baselines3-zoo (rl_zoo3/hyperparams_opt.py, 2026-04) differs:
    - clip_range: the zoo draws from the categories [0.1, 0.2, 0.3, 0.4];
      here it is uniform in [0.1, 0.4], as the issue says.
    - n_epochs: the zoo draws from the categories [1, 5, 10, 20]; here it is
      an integer in [1, 20], as the issue says.
    - lstm_hidden_size (ppo_lstm): the zoo's sample_ppo_lstm_params has had
      its lstm_hidden_size (and enable_critic_lstm) commented out since its
      2025 refactor, leaving sb3-contrib's default of 256; the zoo before it
      drew lstm_hidden_size from [16, 32, 64, 128, 256, 512], which is what
      this does, as the issue says. enable_critic_lstm is not sampled: evolve's
      critic has its own LSTM unless [ppo] share_encoders is set.
    - batch_size: the zoo no longer clamps it to n_steps (a TODO in
      convert_onpolicy_params); SB3 then uses the whole rollout as the
      minibatch, which is what clamping to learn_step does here.
    The zoo does not seed its trials' training (seed=None); here trial n
    trains with seed*1000 + n, so that a study is reproducible.
    """
    p = {}
    p["batch_size_pow"] = trial.suggest_int("batch_size_pow", 2, 10)
    p["n_steps_pow"] = trial.suggest_int("n_steps_pow", 5, 12)
    p["one_minus_gamma"] = trial.suggest_float("one_minus_gamma", 1e-4, 0.03, log=True)
    p["one_minus_gae_lambda"] = trial.suggest_float("one_minus_gae_lambda", 1e-4, 0.1, log=True)
    p["learning_rate"] = trial.suggest_float("learning_rate", 1e-5, 2e-3, log=True)
    p["ent_coef"] = trial.suggest_float("ent_coef", 1e-8, 0.1, log=True)
    p["clip_range"] = trial.suggest_float("clip_range", 0.1, 0.4)
    p["n_epochs"] = trial.suggest_int("n_epochs", 1, 20)
    p["max_grad_norm"] = trial.suggest_float("max_grad_norm", 0.3, 2.0)
    p["net_arch"] = trial.suggest_categorical("net_arch", ["tiny", "small", "medium"])
    p["activation_fn"] = trial.suggest_categorical("activation_fn", ["tanh", "relu"])
    if space == "ppo_lstm":
        p["lstm_hidden_size"] = trial.suggest_categorical("lstm_hidden_size", LSTM_HIDDEN_SIZES)
    return p


def param_names(space):
    names = ["batch_size_pow", "n_steps_pow", "one_minus_gamma", "one_minus_gae_lambda", "learning_rate",
             "ent_coef", "clip_range", "n_epochs", "max_grad_norm", "net_arch", "activation_fn"]
    return names + ["lstm_hidden_size"] if space == "ppo_lstm" else names


def evolve_values(p, num_envs):
    """evolve's [ppo] values of the sampled parameters p."""
    n_steps = 2 ** p["n_steps_pow"]
    learn_step = min(n_steps * num_envs, MAX_LEARN_STEP)
    return {
        "n_steps": n_steps,
        "learn_step": learn_step,
        "batch_size": min(2 ** p["batch_size_pow"], learn_step),
        "gamma": 1 - p["one_minus_gamma"],
        "gae_lambda": 1 - p["one_minus_gae_lambda"],
    }


DERIVED_NAMES = ["n_steps", "learn_step", "batch_size", "gamma", "gae_lambda"]


def net_table(base_net, p, space):
    """evolve's [net] for the zoo's net_arch and activation_fn (and the LSTM)."""
    arch, act = p["net_arch"], ACTIVATIONS[p["activation_fn"]]
    width = 256 if arch == "medium" else 64
    hidden = [] if arch == "tiny" else [width]  # the zoo's second layer (small, medium)
    net = {}
    if "backend" in base_net:
        net["backend"] = base_net["backend"]
    latent = {"size": width}
    if width > EVOLVE_MAX_LATENT:
        latent["max"] = width
    if space == "ppo" and base_net.get("encoder") == "cnn":
        # Images: the zoo's net_arch follows its CNN features extractor (a fixed
        # ReLU CNN), as here the latent and the head's hidden layers follow BASE's
        # [net.cnn], kept as it is.
        net["encoder"] = "cnn"
        net["cnn"] = copy.deepcopy(base_net.get("cnn", {}))
        net["latent"] = latent
        head = {"hidden": hidden, "activation": act}
        if not hidden:
            head["min_layers"] = 0
        net["head"] = head
    elif space == "ppo":
        net["encoder"] = "mlp"
        mlp = {"hidden": hidden, "activation": act}
        if not hidden:
            mlp["min_layers"] = 0
        net["mlp"] = mlp
        net["latent"] = latent
        net["head"] = {"hidden": [], "min_layers": 0, "activation": act}
    else:
        net["encoder"] = "lstm"
        net["lstm"] = {"hidden": p["lstm_hidden_size"], "layers": 1}
        net["latent"] = latent
        head = {"hidden": hidden, "activation": act}
        if not hidden:
            head["min_layers"] = 0
        net["head"] = head
    return net


def trial_config(base, p, d, seed, max_steps, evo_steps, args):
    """The config of one trial: base's [env] and [ppo] with the sampled values."""
    num_envs = base.get("env", {}).get("num_envs", EVOLVE_NUM_ENVS)
    cfg = {"seed": seed}
    env = copy.deepcopy(base.get("env", {}))
    env["eval_episodes"] = args.eval_episodes
    cfg["env"] = env
    cfg["population"] = {
        "size": 1,
        "independent": True,
        "max_steps": max_steps,
        "evo_steps": evo_steps,
        "elite_episodes": 0,
        "target": math.inf,
        "min_generations": 1,
        "workers": 1,
    }
    ppo = copy.deepcopy(base.get("ppo", {}))
    ppo.update({
        "lr": p["learning_rate"],
        "learn_step": d["learn_step"],
        "batch_size": d["batch_size"],
        "gamma": d["gamma"],
        "gae_lambda": d["gae_lambda"],
        "ent_coef": p["ent_coef"],
        "clip_coef": p["clip_range"],
        "update_epochs": p["n_epochs"],
        "max_grad_norm": p["max_grad_norm"],
        # The zoo's sampled learning_rate is a constant (its lr_schedule is
        # commented out), replacing any schedule of the env's hyperparameters.
        "anneal_lr": False,
    })
    if args.space == "ppo_lstm":
        ppo["max_seq_len"] = max(1, min(ppo.get("max_seq_len", EVOLVE_MAX_SEQ_LEN), d["learn_step"] // num_envs))
    cfg["ppo"] = ppo
    cfg["net"] = net_table(base.get("net", {}), p, args.space)
    for k, v in base.items():
        if k in cfg or k in DROPPED_TABLES or k == "out_dir":
            continue
        cfg[k] = copy.deepcopy(v)
    return cfg


# ------------------------------------------------------------------- trials


class MetricsTail:
    """Reads the complete rows an evolve run of one agent writes to
    metrics.csv, each generation once, in order. It reads the whole file
    each time (a row per generation): a resumed run first rewrites it
    without the rows after its checkpoint, and a row read before that is the
    one the run writes again, since it repeats the generation bit for bit."""

    def __init__(self, path):
        self.path, self.seen = path, 0

    def read(self):
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")  # a last line without its newline is still being written
        header, rows = None, []
        for rec in csv.reader(io.StringIO(data[: end + 1].decode())):
            if not rec:
                continue
            if header is None:
                header = rec
                continue
            if len(rec) != len(header):
                raise Failure(f"{self.path}: a row of {len(rec)} fields under a header of {len(header)}")
            row = dict(zip(header, rec))
            g = to_int(row["generation"])
            if g > self.seen + 1:
                raise Failure(f"{self.path}: generation {g} follows generation {self.seen}: the rows between, "
                              "fitness values the pruner needs, are lost (remove the trial's directory to start it over)")
            if g == self.seen + 1:
                self.seen += 1
                rows.append(row)
        return rows


def to_int(s):
    try:
        return int(s)
    except ValueError:
        return int(float(s))


def stop(proc):
    """Stops a running evolve as a user's Ctrl-C does and waits for it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()
    except KeyboardInterrupt:
        # A second Ctrl-C while it stops: do not leave it running.
        proc.kill()
        proc.wait()
        raise


def tail_log(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:]).rstrip()
    except OSError:
        return ""


def run_evolve(evolve, tdir, trial):
    """Runs the trial's evolve, reports each generation's fitness to the trial
    and stops the run when the pruner says so. Returns the rows used (up to
    the pruning generation) and whether it was pruned. A run the study
    began before it was stopped goes on from its last checkpoint."""
    run, log = os.path.join(tdir, "run"), os.path.join(tdir, "evolve.log")
    tail = MetricsTail(os.path.join(run, "metrics.csv"))
    used, pruned = [], False
    if os.path.exists(os.path.join(run, "config.toml")):
        cmd = [evolve, "-resume", run, "-quiet"]
    else:
        if os.path.isdir(run) and not os.listdir(run):
            os.rmdir(run)  # made, and nothing written, when the study stopped
        cmd = [evolve, "-config", os.path.join(tdir, "config.toml"), "-out", run, "-quiet"]
    with open(log, "ab") as logf:
        proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            while True:
                finished = proc.poll() is not None  # before reading: every row it wrote is read
                for row in tail.read():
                    used.append(row)
                    trial.report(float(row["fitness"]), to_int(row["generation"]))
                    if trial.should_prune():
                        pruned = True
                        break
                if pruned or finished:
                    break
                time.sleep(POLL_S)
        finally:
            rc = stop(proc)
    if not pruned and rc in (130, 143, -signal.SIGINT, -signal.SIGTERM):
        raise KeyboardInterrupt  # a signal meant for the study (its process group) reached evolve first
    if not pruned and rc != 0:
        raise Failure(f"{' '.join(cmd)} failed (exit {rc}):\n{tail_log(log)}")
    if not used:
        raise Failure(f"{run}/metrics.csv: no generation written (exit {rc}):\n{tail_log(log)}")
    return used, pruned


PLAY_EPISODE = re.compile(r"^episode (\d+)\s+return (\S+)\s+length (\d+)", re.M)
PLAY_MEAN = re.compile(r"^mean return (\S+) ± (\S+) over (\d+) episodes? \(length (\S+) ± ", re.M)


def last_std_err(tdir):
    """The standard error of the mean of the episodes behind the trial's
    last fitness (its newest checkpoint's member returns), 0 without two."""
    ckpt = os.path.join(tdir, "run", "checkpoints")
    try:
        with open(os.path.join(ckpt, "latest")) as f:
            name = f.read().strip()
        with open(os.path.join(ckpt, name, "population.json")) as f:
            returns = json.load(f)["members"][0].get("returns") or []
    except (OSError, ValueError, KeyError, IndexError):
        return 0.0
    if len(returns) < 2:
        return 0.0
    return statistics.stdev(returns) / math.sqrt(len(returns))


def confirm(evolve, tdir, episodes, seed):
    """Plays the run's elite on the confirmation episodes: (mean return, steps)."""
    cmd = [evolve, "play", "-agent", os.path.join(tdir, "run"), "-episodes", str(episodes), "-seed", str(seed)]
    r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    with open(os.path.join(tdir, "play.log"), "w") as f:
        f.write(r.stdout + r.stderr)
    m = PLAY_MEAN.search(r.stdout)
    if r.returncode != 0 or not m:
        raise Failure(f"{' '.join(cmd)} failed (exit {r.returncode}):\n{(r.stdout + r.stderr)[-2000:]}")
    lengths = [int(x.group(3)) for x in PLAY_EPISODE.finditer(r.stdout)]
    n = int(m.group(3))
    steps = sum(lengths) if len(lengths) == n else round(float(m.group(4)) * n)
    return float(m.group(1)), steps


# ------------------------------------------------------------------ outputs


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def write_csv(path, header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([fmt(r.get(h)) for h in header])
    write_atomic(path, buf.getvalue())


def json_safe(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, dict):
        return {k: json_safe(x) for k, x in v.items()}
    if isinstance(v, list):
        return [json_safe(x) for x in v]
    return v


# --------------------------------------------------------------------- main


def load_base(path):
    try:
        with open(path, "rb") as f:
            base = tomllib.load(f)
    except OSError as e:
        raise BadInput(f"-config {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise BadInput(f"-config {path}: {e}") from None
    for t in ("env", "population", "ppo", "net"):
        if not isinstance(base.get(t, {}), dict):
            raise BadInput(f"-config {path}: {t} is not a table")
    return base


def build_evolve(out):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binary = os.path.join(os.path.abspath(out), "evolve")
    before = file_digest(binary)
    print(f"{PROG}: building {binary} (go build ./cmd/evolve in {root})", file=sys.stderr)
    try:
        r = subprocess.run(["go", "build", "-o", binary, "./cmd/evolve"], cwd=root, capture_output=True, text=True)
    except FileNotFoundError:
        raise Failure("go is not on PATH: build evolve yourself and give -evolve PATH") from None
    if r.returncode != 0:
        raise Failure(f"go build ./cmd/evolve failed:\n{r.stderr.rstrip()}")
    if before is not None and file_digest(binary) != before:
        # Runs it resumes go on with other code than they began with.
        print(f"{PROG}: note: {binary} is not the build that was there: the code changed since it was built, "
              "and runs resumed now go on with the new build", file=sys.stderr)
    return binary


def file_digest(path):
    """The SHA-256 of a file's bytes, or None when there is no file."""
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except FileNotFoundError:
        return None


def study_objects(optuna, args, evaluations):
    if args.sampler == "tpe":
        sampler = optuna.samplers.TPESampler(n_startup_trials=args.startup_trials, multivariate=True, seed=args.seed)
    else:
        sampler = optuna.samplers.RandomSampler(seed=args.seed)
    if args.pruner == "median":
        pruner = optuna.pruners.MedianPruner(n_startup_trials=args.startup_trials, n_warmup_steps=evaluations // 3)
    elif args.pruner == "halving":
        pruner = optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=4, min_early_stopping_rate=0)
    else:
        pruner = optuna.pruners.NopPruner()
    return optuna.create_study(sampler=sampler, pruner=pruner, direction="maximize")


# What a resumed study must share with the study it goes on with (the stop
# rules and the binary may change), and the value of a key that summaries
# written before it was recorded held.
SAME_ON_RESUME = ("sampler", "pruner", "seed", "space", "anchor", "trial_steps", "evaluations", "eval_episodes",
                  "confirm", "confirm_episodes", "confirm_margin", "startup_trials")
RECORDED_LATER = {"confirm": "best"}


def check_resumable(args, settings):
    """The summary of the study in -out, which -resume goes on with; refused
    when there is none or it ran with other settings."""
    path = os.path.join(args.out, "summary.json")
    try:
        with open(path) as f:
            before = json.load(f)
    except FileNotFoundError:
        raise BadInput(f"-resume: {args.out} holds no study (no summary.json)") from None
    except (OSError, ValueError) as e:
        raise BadInput(f"-resume: {path}: {e}") from None
    if not os.path.exists(os.path.join(args.out, "trials.csv")):
        raise BadInput(f"-resume: {args.out} holds no trials.csv")
    differ = [f"{k} {before.get(k, RECORDED_LATER.get(k))!r} then, {settings[k]!r} now" for k in SAME_ON_RESUME
              if before.get(k, RECORDED_LATER.get(k)) != settings[k]]
    if differ:
        raise BadInput(f"-resume: the study in {args.out} ran with other settings ({'; '.join(differ)}): "
                       "give the arguments it was started with")
    return before


def read_rows(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        return []


def parse_cell(v):
    """A value of trials.csv as the study had it before fmt wrote it."""
    if v == "":
        return None
    if re.fullmatch(r"-?[0-9]+", v):
        return int(v)
    try:
        return float(v)  # repr of a float, which reads back exactly
    except ValueError:
        return v


def replay(optuna, study, args, base, num_envs, evo_steps, names, header, before):
    """Puts the trials of the study in -out into study, a new one of the same
    sampler and seed, so that its sampler and pruner stand where the
    stopped study's stood: each trial is drawn again and checked against
    trials.csv and its files, reported the fitness values its run gave the
    pruner (whose decisions must be the same again), and told its end.
    Returns trials.csv's rows."""
    path = os.path.join(args.out, "trials.csv")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        stored = list(reader)
        if reader.fieldnames != header:
            raise BadInput(f"-resume: {path}: its columns are not those of this study's trials.csv")
    rows, cumulative = [], 0
    for line, r in enumerate(stored, start=2):
        where = f"-resume: {path} line {line}"
        if None in r or None in r.values():
            raise BadInput(f"{where}: not as many fields as the header has")
        row = {h: parse_cell(v) for h, v in r.items()}
        trial = study.ask()
        try:
            replay_trial(optuna, trial, row, args, base, num_envs, evo_steps, names, before)
        except (TypeError, KeyError, ValueError) as e:
            raise BadInput(f"{where}: {type(e).__name__}: {e}: not as this driver wrote it") from None
        except BadInput as e:
            raise BadInput(f"{where}: {e}") from None
        cumulative += row["trial_global_steps"]
        if row["cumulative_global_steps"] != cumulative:
            raise BadInput(f"{where}: cumulative_global_steps {row['cumulative_global_steps']}, where the trials' "
                           f"steps add up to {cumulative}")
        rows.append(row)
    return rows


def replay_trial(optuna, trial, row, args, base, num_envs, evo_steps, names, before):
    """Replays one trial of a study into trial (see replay); refuses a row
    that its trial's files do not bear out."""
    n = trial.number
    if row["trial"] != n:
        raise BadInput(f"trial {row['trial']!r}, want {n}")
    p = sample_params(trial, args.space)
    drawn = [k for k in names if p[k] != row[k]]
    if drawn:
        raise BadInput(f"trial {n} draws {', '.join(f'{k} {p[k]!r}' for k in drawn)} now, where the row has "
                       f"{', '.join(f'{k} {row[k]!r}' for k in drawn)}: the sampler does not repeat the study "
                       f"(optuna {optuna.__version__} now, {before.get('optuna_version')} when it ran)")
    d = evolve_values(p, num_envs)
    tdir = os.path.join(args.out, f"trial-{n:04d}")
    cfg = trial_config(base, p, d, args.seed * 1000 + n, row["max_steps"], min(evo_steps, row["max_steps"]), args)
    try:
        with open(os.path.join(tdir, "config.toml")) as f:
            same = f.read() == toml_dumps(cfg)
    except OSError as e:
        raise BadInput(f"trial {n}: {e}") from None
    if not same:
        raise BadInput(f"{tdir}/config.toml is not the config trial {n} has now: "
                       f"{args.config} (or this driver) changed since the study ran")
    try:
        used = [u for u in MetricsTail(os.path.join(tdir, "run", "metrics.csv")).read()
                if to_int(u["generation"]) <= row["generations"]]
    except Failure as e:
        raise BadInput(str(e)) from None
    if not used or len(used) != row["generations"]:
        raise BadInput(f"{tdir}/run/metrics.csv holds {len(used)} generations where the row says "
                       f"{row['generations']}: the fitness values its pruner was given are lost")
    fitness = float(used[-1]["fitness"])
    if not (fitness == row["last_fitness"] or (math.isnan(fitness) and math.isnan(row["last_fitness"]))):
        raise BadInput(f"last_fitness {row['last_fitness']!r}, where {tdir}/run/metrics.csv has {fitness!r}")
    pruned_by_pruner = row["state"] == "pruned" and str(row["note"]).startswith("pruned")
    for i, u in enumerate(used):
        trial.report(float(u["fitness"]), to_int(u["generation"]))
        # Asked as the trial was: a pruner may keep state on the trial when
        # asked (successive halving's rungs), and must decide as then.
        if trial.should_prune() != (pruned_by_pruner and i == len(used) - 1):
            raise BadInput(f"trial {n}'s pruner decides otherwise at generation {u['generation']} now than the row "
                           f"says it did ({row['state']}{', ' + row['note'] if row['note'] else ''})")
    if row["confirmed_score"] is not None:
        m = PLAY_MEAN.search(tail_log(os.path.join(tdir, "play.log"), 10**6))
        if not m or float(m.group(1)) != row["confirmed_score"]:
            raise BadInput(f"confirmed_score {row['confirmed_score']!r}, where {tdir}/play.log has "
                           f"{m.group(1) if m else 'no mean return'}")
    if row["state"] == "pruned":
        trial.study.tell(trial, state=optuna.trial.TrialState.PRUNED)
    else:
        trial.study.tell(trial, fitness)


def standing(rows, anchor):
    """Where the study stands after rows, as its loop leaves it: cumulative
    steps, the confirmation bar, the best confirmed score and its row, the
    row that reached the anchor, the steps' bases and the curve."""
    cumulative, bar, best, best_row, anchor_row, bases, curve = 0, -math.inf, None, None, None, set(), []
    for row in rows:
        cumulative = row["cumulative_global_steps"]
        bases.add(row["steps_basis"])
        score = row["confirmed_score"]
        if score is not None:
            if best is None or score > best:
                bar, best, best_row = row["last_fitness"], score, row
            if anchor_row is None and score >= anchor:
                anchor_row = row
        curve.append({"cumulative_global_steps": cumulative, "best_confirmed_so_far": best})
    return cumulative, bar, best, best_row, anchor_row, bases, curve


def start_trial_dir(tdir, config, n):
    """Makes trial n's directory with its config.toml. The trial a resumed
    study stopped in keeps its directory, and its run goes on, when its
    config is the same; a changed -budget can cut its max_steps: then it
    starts over. Any other change is refused."""
    path = os.path.join(tdir, "config.toml")
    if os.path.isdir(tdir):
        try:
            with open(path) as f:
                if f.read() == config:
                    return
        except FileNotFoundError:
            pass
        try:
            with open(path, "rb") as f:
                began = tomllib.load(f)
        except FileNotFoundError:
            began = None  # stopped before it was written: the trial had not begun
        except tomllib.TOMLDecodeError as e:
            raise BadInput(f"-resume: {path}: {e}") from None
        if began is not None:
            now = tomllib.loads(config)
            for c in (began, now):
                for k in ("max_steps", "evo_steps"):
                    c.get("population", {}).pop(k, None)
            if began != now:
                raise BadInput(f"-resume: {path} is not the config trial {n} has now: the base config "
                               "(or this driver) changed since the study ran")
            print(f"{PROG}: trial {n}, which the study stopped in, starts over: the budget left cuts its max_steps",
                  file=sys.stderr, flush=True)
        shutil.rmtree(tdir)
    os.makedirs(tdir)
    write_atomic(path, config)


def interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    signal.signal(signal.SIGTERM, interrupt)  # SIGTERM ends a study as Ctrl-C does
    args = parse_args(argv)
    optuna = import_optuna()
    base = load_base(args.config)
    env, pop = base.get("env", {}), base.get("population", {})
    num_envs = env.get("num_envs", EVOLVE_NUM_ENVS)
    if not isinstance(num_envs, int) or num_envs < 1:
        raise BadInput(f"-config {args.config}: env.num_envs = {num_envs!r}: want an integer >= 1")
    trial_steps = args.trial_steps
    if trial_steps is None:
        size, max_steps = pop.get("size", EVOLVE_POP_SIZE), pop.get("max_steps", EVOLVE_MAX_STEPS)
        if not isinstance(size, int) or not isinstance(max_steps, int) or size < 1 or max_steps < size:
            raise BadInput(f"-config {args.config}: population size {size!r}, max_steps {max_steps!r}: give -trial-steps")
        trial_steps = max_steps // size
    evaluations = args.evaluations or max(1, trial_steps // ZOO_STEPS_PER_EVALUATION)
    evo_steps = -(-trial_steps // evaluations)
    confirm_seed = 1_000_000_000 + args.seed  # one for the whole study; no trial trains with it

    settings = {"sampler": args.sampler, "pruner": args.pruner, "seed": args.seed, "space": args.space,
                "anchor": args.anchor, "trial_steps": trial_steps, "evaluations": evaluations,
                "eval_episodes": args.eval_episodes, "confirm": args.confirm, "confirm_episodes": args.confirm_episodes,
                "confirm_margin": args.confirm_margin, "startup_trials": args.startup_trials}
    if args.resume:
        before = check_resumable(args, settings)
    elif os.path.exists(os.path.join(args.out, "trials.csv")) or (
            os.path.isdir(args.out) and any(n.startswith("trial-") for n in os.listdir(args.out))):
        raise BadInput(f"-out {args.out}: already holds a study; give a new directory, or -resume to go on with it")
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise BadInput(f"-out {args.out}: {e.strerror or e} (want a new or empty directory)") from None
    own = os.path.join(os.path.abspath(args.out), "evolve")
    if args.evolve:
        evolve = os.path.abspath(args.evolve)
    elif args.resume and os.path.isfile(own):
        # The binary the study's trials ran with: the stopped trial's run
        # then goes on bit for bit, and the later trials train as they would have.
        evolve = own
        print(f"{PROG}: -resume runs the study's own {own}; give -evolve to run another", file=sys.stderr, flush=True)
    else:
        evolve = build_evolve(args.out)
    if not os.access(evolve, os.X_OK):
        raise BadInput(f"-evolve {args.evolve}: not an executable file")

    study = study_objects(optuna, args, evaluations)
    names = param_names(args.space)
    header = (["trial", "state", "seed", "max_steps"] + names + DERIVED_NAMES +
              ["generations", "training_steps", "eval_steps", "confirm_steps", "trial_global_steps",
               "cumulative_global_steps", "last_fitness", "confirmed_score", "steps_basis", "note"])
    rows, timing = [], []
    if args.resume:
        try:
            rows = replay(optuna, study, args, base, num_envs, evo_steps, names, header, before)
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted while replaying the study's trials; nothing was written", file=sys.stderr)
            return 130
        timing = read_rows(os.path.join(args.out, "timing.csv"))[: len(rows)]
    cumulative, bar, best, best_row, anchor_row, bases, curve = standing(rows, args.anchor)
    stop_reason = "running"  # what summary.json says until the study stops
    t_study = time.monotonic()

    def write_outputs():
        write_csv(os.path.join(args.out, "trials.csv"), header, rows)
        write_csv(os.path.join(args.out, "curve.csv"), ["cumulative_global_steps", "best_confirmed_so_far"], curve)
        write_csv(os.path.join(args.out, "timing.csv"), ["trial", "wall_s"], timing)
        summary = {
            "sampler": args.sampler,
            "pruner": args.pruner,
            "seed": args.seed,
            "space": args.space,
            "anchor": args.anchor,
            "budget": args.budget,
            "base_config": args.config,
            "trials_limit": args.trials,
            "trial_steps": trial_steps,
            "evaluations": evaluations,
            "evo_steps": evo_steps,
            "eval_episodes": args.eval_episodes,
            "confirm": args.confirm,
            "confirm_episodes": args.confirm_episodes,
            "confirm_margin": args.confirm_margin,
            "confirm_seed": confirm_seed,
            "startup_trials": args.startup_trials,
            "n_warmup_steps": evaluations // 3,
            "optuna_version": optuna.__version__,
            "trials": len(rows),
            "complete": sum(r["state"] == "complete" for r in rows),
            "pruned": sum(r["state"] == "pruned" for r in rows),
            "stop_reason": stop_reason,
            "total_global_steps": cumulative,
            "steps_basis": "+".join(sorted(bases)) if bases else None,
            "steps_to_anchor": anchor_row["cumulative_global_steps"] if anchor_row else None,
            "anchor_trial": anchor_row["trial"] if anchor_row else None,
            "best_confirmed_score": best,
            "best_trial": best_row["trial"] if best_row else None,
            "best_params": {k: best_row[k] for k in names} if best_row else None,
            "best_evolve_values": {k: best_row[k] for k in DERIVED_NAMES} if best_row else None,
        }
        write_atomic(os.path.join(args.out, "summary.json"), json.dumps(json_safe(summary), indent=2) + "\n")

    try:
        write_outputs()  # from now on a stop, even a kill, leaves a study -resume goes on with
        while True:
            if cumulative >= args.budget:
                stop_reason = "budget"
                break
            if args.trials is not None and len(rows) >= args.trials:
                stop_reason = "trials"
                break
            if args.stop_at_anchor is not None and anchor_row is not None and cumulative >= args.stop_at_anchor:
                stop_reason = "anchor"
                break
            t0 = time.monotonic()
            max_steps = min(trial_steps, args.budget - cumulative)
            trial = study.ask()
            n = trial.number
            p = sample_params(trial, args.space)
            d = evolve_values(p, num_envs)
            seed = args.seed * 1000 + n
            tdir = os.path.join(args.out, f"trial-{n:04d}")
            cfg = trial_config(base, p, d, seed, max_steps, min(evo_steps, max_steps), args)
            start_trial_dir(tdir, toml_dumps(cfg), n)
            try:
                used, pruned = run_evolve(evolve, tdir, trial)
            except BaseException:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                raise
            last = used[-1]
            gen, fitness = to_int(last["generation"]), float(last["fitness"])
            training = to_int(last["total_steps"])
            if "global_steps" in last:
                run_global, basis = to_int(last["global_steps"]), "global_steps"
            else:
                run_global, basis = training, "training+confirm"
            if "eval_steps" in last:
                eval_steps = sum(to_int(r["eval_steps"]) for r in used)
            elif "global_steps" in last:
                eval_steps = run_global - training
            else:
                eval_steps = None
            note, score, confirm_steps = "", None, 0
            if pruned:
                note = f"pruned at generation {gen}"
            elif not math.isfinite(fitness):
                # The zoo prunes the trials whose hyperparameters give NaNs.
                pruned, note = True, "diverged: non-finite fitness"
            elif args.confirm == "all" or fitness + args.confirm_margin * last_std_err(tdir) >= bar:
                try:
                    score, confirm_steps = confirm(evolve, tdir, args.confirm_episodes, confirm_seed)
                except BaseException:
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    raise
                if best is None or score > best:
                    bar = fitness
            else:
                note = f"not confirmed: last fitness {fitness:g} (margin {args.confirm_margin:g} s.e.) < {bar:g}, the best confirmed trial's"
            if pruned:
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            else:
                study.tell(trial, fitness)
            trial_global = run_global + confirm_steps
            cumulative += trial_global
            bases.add(basis)
            row = {"trial": n, "state": "pruned" if pruned else "complete", "seed": seed, "max_steps": max_steps,
                   **p, **d, "generations": gen, "training_steps": training, "eval_steps": eval_steps,
                   "confirm_steps": confirm_steps, "trial_global_steps": trial_global,
                   "cumulative_global_steps": cumulative, "last_fitness": fitness, "confirmed_score": score,
                   "steps_basis": basis, "note": note}
            rows.append(row)
            if score is not None:
                if best is None or score > best:
                    best, best_row = score, row
                if anchor_row is None and score >= args.anchor:
                    anchor_row = row
            curve.append({"cumulative_global_steps": cumulative, "best_confirmed_so_far": best})
            timing.append({"trial": n, "wall_s": round(time.monotonic() - t0, 3)})
            write_outputs()
            what = (f"pruned at generation {gen}, fitness {fitness:g}" if pruned and note.startswith("pruned")
                    else f"pruned ({note})" if pruned
                    else f"complete, fitness {fitness:g}, {note}" if score is None
                    else f"complete, fitness {fitness:g}, confirmed {score:g} on {args.confirm_episodes} episodes")
            print(f"trial {n:4d} {what}; steps {trial_global:,} (training {training:,}, evaluation "
                  f"{'?' if eval_steps is None else f'{eval_steps:,}'}, confirmation {confirm_steps:,}); "
                  f"cumulative {cumulative:,}; best confirmed {'-' if best is None else f'{best:g}'}", flush=True)
    except KeyboardInterrupt:
        stop_reason = "interrupted"
        write_outputs()
        print(f"{PROG}: interrupted after {len(rows)} trials", file=sys.stderr)
        return 130
    except Failure:
        # The trials so far stay readable, and summary.json says the study
        # did not end by its rules.
        stop_reason = "failed"
        write_outputs()
        raise
    write_outputs()
    best_text = "-" if best_row is None else f"{best:g} (trial {best_row['trial']})"
    anchor_text = "not reached" if anchor_row is None else f"{anchor_row['cumulative_global_steps']:,}"
    print(f"{PROG}: {len(rows)} trials, {cumulative:,} steps (stopped by {stop_reason}); best confirmed "
          f"{best_text}; steps to anchor {args.anchor:g}: {anchor_text}; "
          f"wall {time.monotonic() - t_study:.1f}s", flush=True)
    return 0


def run(prog, main):
    """Runs main(argv) as a command: exit 2 on bad input, 1 on a failure,
    130 on Ctrl-C, each with a one-line message."""
    try:
        sys.exit(main(sys.argv[1:]))
    except BadInput as e:
        print(f"{prog}: {e}", file=sys.stderr)
        sys.exit(2)
    except Failure as e:
        print(f"{prog}: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    run(PROG, main)
