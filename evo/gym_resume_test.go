package evo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evolverl/evolve/internal/pytest"
	"github.com/evolverl/evolve/internal/runtest"
)

// gymMaskedConfig is a small run on the standard-library test env
// gymtest:Masked.
const gymMaskedConfig = `
seed = 3
out_dir = "unused"
[env]
id = "gym:masked"
num_envs = 2
eval_episodes = 2
[env.options]
module_env = "gymtest:Masked"
[population]
size = 2
max_steps = 3072
evo_steps = 512
[ppo]
learn_step = 128
batch_size = 64
update_epochs = 1
[net.mlp]
hidden = [16]
`

// TestGymRunResumesWithItsPythonMoved: a gym: run resumes after its
// config.toml names another interpreter path or other timeouts (which do
// not change what the env computes) and trains the generations it would
// have; a change of what the env is (its time limit) is still refused.
func TestGymRunResumesWithItsPythonMoved(t *testing.T) {
	pytest.StdlibEnvs(t, "../envs/testdata/gymtest")
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	parse := func() Config {
		cfg, err := ParseConfig([]byte(gymMaskedConfig))
		if err != nil {
			t.Fatal(err)
		}
		cfg.OutDir = filepath.Join(t.TempDir(), "run")
		return cfg
	}
	straight := parse()
	if _, err := run(t, straight, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	split := parse()
	if _, err := run(t, split, Options{}, func(r GenerationReport) bool { return r.Generation == 1 }); err == nil {
		t.Fatal("the stopped run did not stop")
	}
	path := filepath.Join(split.OutDir, "config.toml")
	text := string(runtest.ReadFile(t, path))
	moved := strings.Replace(text, "module_env =", "python = "+tomlQuote(python)+"\ntimeout = 45.0\nstart_timeout = 90.0\nmodule_env =", 1)
	if moved == text {
		t.Fatalf("no [env.options] module_env in %s:\n%s", path, text)
	}
	other := strings.Replace(text, "module_env =", "max_episode_steps = 7\nmodule_env =", 1)
	if err := os.WriteFile(path, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(split.OutDir, Options{}); err == nil || !strings.Contains(err.Error(), "env.options.max_episode_steps") {
		t.Errorf("resume with another max_episode_steps: %v, want the change named", err)
	}
	if err := os.WriteFile(path, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := Resume(split.OutDir, Options{})
	if err != nil {
		t.Fatalf("resume with python, timeout and start_timeout changed: %v", err)
	}
	if _, err := tr.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	runtest.SameMetrics(t, runtest.Metrics(t, straight.OutDir), runtest.Metrics(t, split.OutDir))
}

// TestCheckpointOfTheOldDigestResumes: a checkpoint recorded before a
// gym: env's runtime options were left out of the digest (they were in
// it) still matches its config.
func TestCheckpointOfTheOldDigestResumes(t *testing.T) {
	pytest.StdlibEnvs(t, "../envs/testdata/gymtest")
	cfg, err := ParseConfig([]byte(strings.Replace(gymMaskedConfig, "module_env =", "timeout = 40.0\nmodule_env =", 1)))
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := cfg.legacyGenerationsTOML()
	if err != nil {
		t.Fatal(err)
	}
	digest, err := cfg.GenerationsDigest()
	if err != nil {
		t.Fatal(err)
	}
	if tomlDigest(legacy) == digest {
		t.Fatal("the digest still holds the timeout")
	}
	p := population{ConfigDigest: tomlDigest(legacy), Generation: 1, Members: make([]memberJSON, cfg.Population.Size)}
	if err := checkPopulation(p, cfg, digest, 1); err != nil {
		t.Errorf("a checkpoint of the old digest: %v", err)
	}
}

// tomlQuote quotes s as a TOML basic string.
func tomlQuote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// TestGymImportErrorsNameTheirOption: a module of import that fails to
// import (a missing dependency, an exception) or a missing module_env is
// named under its own key, with its line, not under python's.
func TestGymImportErrorsNameTheirOption(t *testing.T) {
	pytest.StdlibEnvs(t, "../envs/testdata/gymtest")
	for _, tc := range []struct{ options, key, want string }{
		{`import = ["gymtest", "no_such_plugin"]` + "\nmodule_env = \"gymtest:Masked\"", "env.options.import: ", "import[1] = 'no_such_plugin': ModuleNotFoundError"},
		{`module_env = "no_such_module:Env"`, "env.options.module_env: ", "No module named 'no_such_module'"},
		{`module_env = "gymtest:Masked"` + "\nwrappers = [\"gymtest.NoSuchWrapper\"]", "env.options.wrappers: ", "wrappers[0] (gymtest.NoSuchWrapper)"},
	} {
		text := strings.Replace(gymMaskedConfig, `module_env = "gymtest:Masked"`, tc.options, 1)
		_, err := ParseConfig([]byte(text))
		if err == nil || !strings.HasPrefix(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "(line ") {
			t.Errorf("%s: %v\nwant it led by %q, with %q and its line", tc.options, err, tc.key, tc.want)
		}
	}
}
