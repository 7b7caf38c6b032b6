package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// inspection is what `evolve inspect -json` prints; docs/command.md documents
// its field names, which scripts rely on: add fields, never rename them.
type inspection struct {
	File             string          `json:"file"`
	Env              *agent.EnvRef   `json:"env"` // null when the file predates recording it
	ObservationSpace json.RawMessage `json:"observation_space"`
	ActionSpace      json.RawMessage `json:"action_space"`
	Network          networkInfo     `json:"network"`
	Config           agent.Config    `json:"config"`
	Steps            int             `json:"steps"`
	Updates          int             `json:"updates"`
	TotalSteps       int             `json:"total_steps"`
	NormalizeObs     bool            `json:"normalize_obs"`
	NormCount        *float64        `json:"norm_count"` // null when normalize_obs is off
	// RewardStd is what training rewards are divided by (normalize_reward
	// only).
	RewardStd *float64 `json:"reward_std,omitempty"`
	// ValueMean and ValueStd de-standardise the critic's output
	// (normalize_value only): value = ValueStd·clip(output, ±5) + ValueMean.
	ValueMean *float64 `json:"value_mean,omitempty"`
	ValueStd  *float64 `json:"value_std,omitempty"`
	// AdaptedLR is the KL-adaptive rate the next update starts from (null
	// without kl_threshold).
	AdaptedLR *float64 `json:"adapted_lr"`
	History   []string `json:"history"`
	// Summary is the run's summary.json, for a run directory that has one.
	Summary json.RawMessage `json:"summary,omitempty"`

	obs, act envs.Space // for the text form
	summary  []kv       // Summary's fields in file order, for the text form
}

type networkInfo struct {
	Description    string  `json:"description"`
	Encoder        string  `json:"encoder"`
	Latent         int     `json:"latent"`
	Head           []int   `json:"head"`
	HeadActivation string  `json:"head_activation"`
	Output         int     `json:"output"`
	OutputGain     float64 `json:"output_gain"`
	ActorParams    int     `json:"actor_params"`
	CriticParams   int     `json:"critic_params"`
	TotalParams    int     `json:"total_params"`
	// RNDParams counts RND's target, predictor and intrinsic critic
	// (rnd_coef > 0), not in TotalParams.
	RNDParams     int          `json:"rnd_params,omitempty"`
	ShareEncoders bool         `json:"share_encoders"`
	Backend       string       `json:"backend"`
	Actor         netconf.Spec `json:"actor"`
	Critic        netconf.Spec `json:"critic"`
}

type kv struct{ key, value string }

// inspectCmd is `evolve inspect [-json] FILE`: it describes an agent file,
// or the elite of a run directory and the run's summary.
func inspectCmd(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("evolve inspect", "usage: evolve inspect [-json] FILE|DIR\n\n"+
		"Describes an agent file, or the elite.safetensors and summary.json of a run directory.\n\n", stderr)
	asJSON := c.fs.Bool("json", false, "print one JSON object instead of text")
	pos, status, ok := c.parseInterspersed(args)
	switch {
	case !ok:
		return status
	case len(pos) == 0:
		return c.misuse("give an agent file or a run directory")
	case len(pos) > 1:
		return c.misuse("unexpected argument %q", pos[1])
	}
	path := pos[0]

	in, err := inspect(path)
	if err != nil {
		fmt.Fprintf(stderr, "evolve inspect: %v\n", err)
		return exitBadInput
	}
	if *asJSON {
		b, err := json.MarshalIndent(in, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "evolve inspect: %s: %v\n", in.File, err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return exitOK
	}
	printInspection(stdout, in)
	return exitOK
}

// inspect loads the agent at path (a run directory's elite.safetensors if
// path is a directory) and describes it. Every error names the file.
func inspect(path string) (*inspection, error) {
	file := path
	var summary []byte
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if file, err = runElite(path); err != nil {
			return nil, err
		}
		sp := filepath.Join(path, "summary.json")
		summary, err = os.ReadFile(sp)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if summary != nil && !json.Valid(summary) {
			return nil, fmt.Errorf("%s: not valid JSON", sp)
		}
	}
	a, err := agent.Load(file)
	if err != nil {
		return nil, err
	}
	in := &inspection{File: file, obs: a.ObservationSpace(), act: a.ActionSpace(),
		Config: a.Config(), Steps: a.Steps, Updates: a.Updates, TotalSteps: a.TotalSteps,
		History: slices.Clone(a.History)}
	if in.History == nil {
		in.History = []string{}
	}
	if in.Config.KLThreshold > 0 {
		lr := a.LearningRate()
		in.AdaptedLR = &lr
	}
	if a.Env.Known() {
		in.Env = &a.Env
	}
	if in.ObservationSpace, err = envs.MarshalSpace(in.obs); err == nil {
		in.ActionSpace, err = envs.MarshalSpace(in.act)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if c, ok := a.NormCount(); ok {
		in.NormalizeObs, in.NormCount = true, &c
	}
	if s, ok := a.RewardStd(); ok {
		in.RewardStd = &s
	}
	if m, s, ok := a.ValueScale(); ok {
		in.ValueMean, in.ValueStd = &m, &s
	}

	actor, critic := a.Specs()
	na, nc := a.ParamCounts()
	backend := in.Config.Backend
	if backend == "" {
		backend = nn.DefaultBackend
	}
	desc := actor.String()
	encoder := string(actor.Encoder)
	if actor.Dict() {
		encoder = "dict"
	}
	in.Network = networkInfo{Description: desc, Encoder: encoder, Latent: actor.Latent.Size,
		Head: slices.Clone(actor.Head.Hidden), HeadActivation: string(actor.Head.Activation),
		Output: actor.Output, OutputGain: actor.OutputGain,
		ActorParams: na, CriticParams: nc, TotalParams: na + nc, RNDParams: a.RNDParamCount(),
		ShareEncoders: in.Config.ShareEncoders, Backend: backend, Actor: actor, Critic: critic}
	if in.Network.Head == nil {
		in.Network.Head = []int{}
	}

	if summary != nil {
		in.Summary = bytes.TrimSpace(summary)
		if in.summary, err = objectFields(in.Summary); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(path, "summary.json"), err)
		}
	}
	return in, nil
}

// runElite returns the path of the elite.safetensors of the run directory
// dir. When there is none it says why: dir is not a run directory (it has
// no config.toml), the run has not finished a generation yet, or none of
// its agents has had a finite fitness yet.
func runElite(dir string) (string, error) {
	file := filepath.Join(dir, "elite.safetensors")
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		return file, nil // other errors are the loader's to report
	}
	if _, err := os.Stat(filepath.Join(dir, "config.toml")); err != nil {
		return "", fmt.Errorf("%s: no such file, and %s is not a run directory (no config.toml)", file, dir)
	}
	if sum, err := evo.ReadSummary(dir); err == nil && sum.EliteFile != "" {
		return "", fmt.Errorf("%s: no such file, though the run's summary.json records an elite (fitness %.6g): removed?", file, sum.EliteFitness)
	}
	metrics := filepath.Join(dir, "metrics.csv")
	if b, err := os.ReadFile(metrics); err != nil || bytes.Count(b, []byte("\n")) < 2 {
		return "", fmt.Errorf("run %s has not finished a generation yet: no elite to load (%s is written after the first generation)", dir, file)
	}
	return "", fmt.Errorf("run %s has no elite yet: none of its agents has had a finite fitness (%s is written when one has)", dir, file)
}

// objectFields returns the fields of a JSON object in their order, strings
// unquoted and other values as written.
func objectFields(obj []byte) ([]kv, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []kv
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, kv{fmt.Sprint(t), fieldText(fmt.Sprint(t), v)})
	}
	return out, nil
}

// printInspection prints in as aligned text.
func printInspection(w io.Writer, in *inspection) {
	var l kvList
	l.add("file", "%s", in.File)
	if in.Env != nil {
		l.add("env", "%s%s", in.Env.ID, envOptionsText(in.Env.Options))
	} else {
		l.add("env", "not recorded (an agent saved without one, or by a build before agent files held it)")
	}
	l.add("observation space", "%v", in.obs)
	l.add("action space", "%v", in.act)
	l.network(in.Network)
	l.hyperparameters(in)
	l.training(in)
	if in.summary != nil {
		l.add("run summary", "summary.json")
		for _, f := range in.summary {
			l.add("  "+f.key, "%s", summaryText(f.key, f.value))
		}
	}
	l.print(w)
}

// summaryText is a summary.json value as the text form shows it: counts
// of steps with thousands separators, seconds and rates rounded; any other
// value (or one that does not parse) as written.
func summaryText(key, value string) string {
	f, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return value
	}
	switch key {
	case "total_steps", "global_steps":
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return commas(int(f))
		}
	case "wall_s":
		return fmt.Sprintf("%.1f", f)
	case "steps_per_s":
		return commas(int(math.Round(f)))
	}
	return value
}

// kvList is the text form's lines, key and value, in order.
type kvList []kv

func (l *kvList) add(key, format string, a ...any) {
	*l = append(*l, kv{key, fmt.Sprintf(format, a...)})
}

// network adds the network's lines.
func (l *kvList) network(n networkInfo) {
	l.add("network", "%s", n.Description)
	// Spec.String is "<encoder> latent N head[...] ...".
	enc := n.Description
	if i := strings.LastIndex(enc, " latent "); i >= 0 {
		enc = enc[:i]
	}
	l.add("  encoder", "%s", enc)
	if m := n.Actor.Memories; len(m) > 1 {
		l.add("  memory gene", "%v (memory.switch moves the agent between them)", m)
	}
	l.add("  latent", "%d", n.Latent)
	l.add("  head", "%v %s", n.Head, n.HeadActivation)
	l.add("  output", "%d (gain %g)", n.Output, n.OutputGain)
	l.add("  parameters", "actor %s, critic %s, total %s", commas(n.ActorParams), commas(n.CriticParams), commas(n.TotalParams))
	if n.RNDParams > 0 {
		l.add("  RND", "%s more (target, predictor and intrinsic critic)", commas(n.RNDParams))
	}
	l.add("  shared encoders", "%s", yesNo(n.ShareEncoders))
	l.add("  backend", "%s", n.Backend)
}

// hyperparameters adds every Config field but the network's, in declaration
// order, under its config key.
func (l *kvList) hyperparameters(in *inspection) {
	l.add("hyperparameters", "")
	cv := reflect.ValueOf(in.Config)
	for i := range cv.NumField() {
		key, opts, _ := strings.Cut(cv.Type().Field(i).Tag.Get("json"), ",")
		if def, ok := shownDefaults[key]; ok && cv.Field(i).IsZero() {
			l.add("  "+key, "%s", def) // the default, shown: the choices differ much
			continue
		}
		if key == "" || key == "-" || key == "net" || key == "backend" || opts == "omitempty" && cv.Field(i).IsZero() {
			continue // options added later show only where set
		}
		l.add("  "+key, "%v", cv.Field(i).Interface())
	}
	if in.AdaptedLR != nil {
		l.add("  adapted lr", "%v (kl_threshold: where the next update starts)", *in.AdaptedLR)
	}
}

// training adds what training left in the agent: its counters, the
// statistics that scale its inputs and outputs, and its lineage.
func (l *kvList) training(in *inspection) {
	l.add("steps", "%s", commas(in.Steps))
	l.add("updates", "%s", commas(in.Updates))
	if in.Config.AnnealLR {
		// TotalSteps matters only as the horizon of the lr's annealing.
		l.add("total steps", "%s (lr annealing horizon)", commas(in.TotalSteps))
	}
	if in.NormalizeObs {
		l.add("obs normalisation", "on (%.0f observations seen)", *in.NormCount)
	} else {
		l.add("obs normalisation", "off")
	}
	if in.RewardStd != nil {
		l.add("reward scaling", "on (÷ %.4g, the discounted return's std)", *in.RewardStd)
	}
	if in.ValueStd != nil {
		l.add("value normalisation", "on (value = %.4g × critic output %+.4g)", *in.ValueStd, *in.ValueMean)
	}
	if len(in.History) == 0 {
		l.add("lineage", "no mutations")
		return
	}
	l.add("lineage", "%d mutations, oldest first", len(in.History))
	for i, h := range in.History {
		l.add(fmt.Sprintf("  mutation %d", i+1), "%s", h)
	}
}

// print writes the lines with their values aligned.
func (l kvList) print(w io.Writer) {
	width := 0
	for _, x := range l {
		width = max(width, len(x.key))
	}
	for _, x := range l {
		if x.value == "" {
			fmt.Fprintln(w, x.key)
		} else {
			fmt.Fprintf(w, "%-*s  %s\n", width, x.key, x.value)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// envOptionsText is " {k = v, ...}" in key order, or "" without options.
func envOptionsText(o envs.Options) string {
	if len(o) == 0 {
		return ""
	}
	parts := make([]string, 0, len(o))
	for _, k := range slices.Sorted(maps.Keys(o)) {
		parts = append(parts, k+" = "+inlineTOML(o[k]))
	}
	return " {" + strings.Join(parts, ", ") + "}"
}

// inlineTOML writes an option's value as a config file's one line would:
// strings quoted, arrays in brackets, tables inline in key order (Go's %v
// printed a table as map[k:v]). Numbers print as Go prints them, 30 for
// 30.0: an agent file's options are JSON, whose numbers do not say which
// were integers.
func inlineTOML(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = inlineTOML(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, k+" = "+inlineTOML(x[k]))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return fmt.Sprint(v)
}

// fieldText is a summary.json value as text: strings unquoted, the elite's
// record as one line, other objects as compact JSON.
func fieldText(key string, v json.RawMessage) string {
	s := string(v)
	if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
		return u
	}
	var e evo.EliteRecord
	if key == "elite" && json.Unmarshal(v, &e) == nil {
		hp := make([]string, 0, len(e.HP))
		for _, n := range slices.Sorted(maps.Keys(e.HP)) {
			hp = append(hp, fmt.Sprintf("%s %g", n, e.HP[n]))
		}
		return fmt.Sprintf("agent %d saved after generation %d: %s; %s", e.Index, e.Generation, e.Net, strings.Join(hp, ", "))
	}
	var b bytes.Buffer
	if json.Compact(&b, v) == nil {
		return b.String()
	}
	return s
}

// shownDefaults are the defaults of the agent's options that inspect shows
// even where an agent file leaves them out.
var shownDefaults = map[string]string{"value_loss": agent.ValueLossClipped, "advantage": agent.AdvantageGAE}
