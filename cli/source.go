package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/evolverl/evolve/configs"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/internal/nearest"
	"github.com/evolverl/evolve/internal/readcap"
)

// configSource is the text of the config a new run starts from and what
// to call it in messages.
type configSource struct {
	name string // "config configs/cartpole.toml", "shipped config cartpole", …
	text []byte
	note string // for the user before training, or ""
	// generated: the text was written here (-env without a shipped
	// config), so its line numbers mean nothing to the user.
	generated bool
}

// sourceConfig finds the config of -config or -env: a file; else, for
// -config, the shipped config of that name; for -env, the shipped config
// that trains that env, else the defaults with that env.
func (f *trainFlags) sourceConfig() (configSource, error) {
	if f.set["env"] {
		return envSource(f.env)
	}
	b, err := readcap.File(f.config, evo.MaxConfigBytes)
	if err == nil {
		return configSource{name: "config " + f.config, text: b}, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if b, serr := configs.Read(filepath.ToSlash(f.config)); serr == nil {
			return configSource{name: "shipped config " + f.config, text: b,
				note: fmt.Sprintf("%s: no such file; training the shipped config %s (evolve configs %s prints it)", f.config, f.config, f.config)}, nil
		}
	}
	var names []string
	for _, c := range configs.List() {
		names = append(names, c.Name)
	}
	if near := nearest.Name(strings.TrimSuffix(f.config, ".toml"), names, 2); near != "" && !strings.ContainsAny(f.config, `/\`) {
		return configSource{}, fmt.Errorf("config: %w; did you mean the shipped config %s?%w", err, near, errBadInput)
	}
	// A mistyped file name beside existing configs: the nearest of them.
	dir, base := filepath.Split(f.config)
	if entries, derr := os.ReadDir(filepath.Clean(dir + ".")); derr == nil {
		var files []string
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".toml") {
				files = append(files, e.Name())
			}
		}
		if near := nearest.Name(base, files, 2); near != "" {
			return configSource{}, fmt.Errorf("config: %w; did you mean %s?%w", err, filepath.Join(dir, near), errBadInput)
		}
	}
	return configSource{}, fmt.Errorf("config: %w (evolve configs lists the shipped ones)%w", err, errBadInput)
}

// envSource is the shipped config that trains env id, or evolve's
// defaults on it.
func envSource(id string) (configSource, error) {
	if c, ok := configs.ForEnv(id); ok {
		b, err := configs.Read(c.Name)
		if err != nil {
			return configSource{}, err
		}
		return configSource{name: "shipped config " + c.Name, text: b,
			note: fmt.Sprintf("-env %s: training the shipped config %s (evolve configs %s prints it)", id, c.Name, c.Name)}, nil
	}
	text := fmt.Sprintf("out_dir = %q\n\n[env]\nid = %q\n", "runs/"+dirName(id), id)
	how := ""
	if spec, ok := envs.Lookup(id); ok && spec.MaxEpisodeSteps == 0 {
		// Without a time limit an untrained agent may never end an episode
		// (MinAtar's Seaquest at the surface): the default cut, 100,000
		// steps per evaluation episode, would cost far more than training.
		text += fmt.Sprintf("eval_max_steps = %d\n", noLimitEvalSteps)
		how = fmt.Sprintf(", evaluation episodes cut at %s steps as it has no time limit (env.eval_max_steps)", commas(noLimitEvalSteps))
	}
	if imageObservations(id) { // the default MLP cannot read images
		text += "\n[net]\nencoder = \"cnn\"\n"
		how += ", with a CNN encoder for its images"
	}
	also := ""
	if twin, ok := strings.CutPrefix(id, "gym:"); ok {
		if c, ok := configs.ForEnv(twin); ok {
			// Gymnasium's twin of a built-in env: its shipped config fits.
			also = fmt.Sprintf("; the built-in %s's shipped config trains it too: -config %s -set env.id='%q'", twin, c.Name, id)
		}
	}
	return configSource{name: "-env " + id, text: []byte(text), generated: true,
		note: fmt.Sprintf("-env %s: no shipped config trains it; training evolve's defaults on it%s (configs/pop.toml lists them)%s", id, how, also)}, nil
}

// noLimitEvalSteps is eval_max_steps for -env on an env without a time
// limit and without a shipped config: the shipped MinAtar configs' value.
const noLimitEvalSteps = 10_000

// dirName turns an env id into a directory name: "gym:MinAtar/Breakout-v1"
// gives "gym-minatar-breakout-v1".
func dirName(id string) string {
	return strings.Trim(regexp.MustCompile(`[^a-z0-9.-]+`).ReplaceAllString(strings.ToLower(id), "-"), "-")
}

// loadConfig reads the run's config from its source with the -set
// overrides, checked as the file is.
func (f *trainFlags) loadConfig(ctx context.Context) (evo.Config, configSource, error) {
	src, err := f.sourceConfig()
	if err != nil {
		return evo.Config{}, src, err
	}
	// The file's own keys first, so that its errors name its lines; without
	// -set, all of the file's problems at once.
	if _, err := evo.DecodeConfig(src.text); err != nil {
		if len(f.sets) == 0 {
			_, err = evo.ParseConfigContext(ctx, src.text)
		}
		if src.generated {
			err = withoutLines{err}
		}
		return evo.Config{}, src, fmt.Errorf("%s: %w", src.name, err)
	}
	text, good, err := applySets(src.text, f.sets)
	if err != nil {
		// The good overrides' values are checked too, so that one run names
		// every bad -set.
		if text != nil {
			if _, perr := evo.ParseConfigContext(ctx, text); perr != nil {
				err = fmt.Errorf("%w\n%w", err, mergedError(src, good, perr))
			}
		}
		return evo.Config{}, src, err
	}
	cfg, err := evo.ParseConfigContext(ctx, text)
	if err != nil {
		return evo.Config{}, src, mergedError(src, good, err)
	}
	return cfg, src, nil
}

// mergedError is err of the config src with the overrides sets, naming
// where.
func mergedError(src configSource, sets setFlags, err error) error {
	where := src.name
	if len(sets) > 0 {
		where += " with " + strings.Join(sets.flags(), " ")
	}
	if len(sets) > 0 || src.generated {
		err = withoutLines{err}
	}
	return fmt.Errorf("%s: %w%s", where, err, sets.removeHint(src, err))
}

// imageObservations reports whether env id (registered, made with its
// defaults) observes [C, H, W] images; gym: ids are not made here.
func imageObservations(id string) bool {
	if _, ok := envs.Lookup(id); !ok {
		return false
	}
	env, err := envs.Make(id, nil)
	if err != nil {
		return false
	}
	defer envs.Close(env)
	box, ok := env.ObservationSpace().(envs.Box)
	return ok && len(box.Dims) == 3
}

// withoutLines is a config error without its "line N" notes: with -set the
// config is parsed from the overrides written into the file's table form
// again, whose lines are not the file's.
type withoutLines struct{ err error }

var lineNote = regexp.MustCompile(` \(line \d+\)|line \d+, `)

func (e withoutLines) Error() string { return lineNote.ReplaceAllString(e.err.Error(), "") }
func (e withoutLines) Unwrap() error { return e.err }
