package cli

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/evolverl/evolve/evo"
)

// findRuns returns the run directories that args name: each argument is a
// run directory (it holds a metrics.csv) or a directory with runs below it,
// such as a bench's -out, walked in lexical order (a run's own
// subdirectories are not). An argument that is neither is an error naming
// it.
func findRuns(args []string) ([]string, error) {
	var dirs []string
	for _, arg := range args {
		fi, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s: not a run directory", arg)
		}
		found := 0
		err = filepath.WalkDir(arg, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if _, err := os.Stat(filepath.Join(path, "metrics.csv")); err == nil {
				if !slices.Contains(dirs, path) {
					dirs = append(dirs, path)
				}
				found++
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if found == 0 {
			return nil, fmt.Errorf("%s: no metrics.csv in it or below: not a run directory, nor one holding runs", arg)
		}
	}
	return dirs, nil
}

// plotRun is one run of a comparison.
type plotRun struct {
	dir   string
	label string // dir relative to the runs' common directory
	m     *evo.Metrics
	rc    runConfig
	// group identifies the run's group of seeds, groupName names it in
	// the legend (seedGroup), and seed is the run's seed ("" unknown).
	group, groupName, seed string
}

// readRuns reads the runs in dirs: metrics.csv (an error names the file),
// config.toml and their group of seeds.
func readRuns(dirs []string) ([]*plotRun, error) {
	runs := make([]*plotRun, len(dirs))
	labels := runLabels(dirs)
	for i, dir := range dirs {
		m, err := evo.ReadMetrics(filepath.Join(dir, "metrics.csv"))
		if err != nil {
			return nil, err
		}
		r := &plotRun{dir: dir, label: labels[i], m: m, rc: readRunConfig(dir)}
		r.group, r.groupName, r.seed = seedGroup(dir, labels[i])
		runs[i] = r
	}
	return runs, nil
}

// runLabels names each of dirs by its path below their common directory
// ("cartpole/evo/seed-1" for a bench), or its base name when that leaves
// nothing.
func runLabels(dirs []string) []string {
	split := make([][]string, len(dirs))
	common := -1
	for i, d := range dirs {
		split[i] = strings.Split(filepath.ToSlash(filepath.Clean(d)), "/")
		if common < 0 {
			common = len(split[i])
		}
		n := 0
		for n < common && n < len(split[i]) && split[i][n] == split[0][n] {
			n++
		}
		common = n
	}
	labels := make([]string, len(dirs))
	for i, parts := range split {
		labels[i] = strings.Join(parts[min(common, len(parts)-1):], "/")
	}
	return labels
}

// benchSeedRE matches a bench run's directory: runs/<config>/<variant>/seed-<N>.
var benchSeedRE = regexp.MustCompile(`(?:^|/)runs/([^/]+)/([^/]+)/seed-([0-9]+)$`)

// seedGroup returns the group of seeds of the run in dir (labelled label):
// in a bench's layout, runs/<config>/<variant>/seed-<N>, its variant's
// directory, named "<config>/<variant>"; else the run's config without its
// seed and out_dir (evo.Config.Digest), named by the label; else, without
// a config.toml to read, the run alone. It returns the seed too.
func seedGroup(dir, label string) (key, name, seed string) {
	clean := filepath.ToSlash(filepath.Clean(dir))
	if m := benchSeedRE.FindStringSubmatch(clean); m != nil {
		return "bench:" + filepath.Dir(clean), m[1] + "/" + m[2], m[3]
	}
	cfg, err := evo.ReadRunConfig(dir)
	if err != nil {
		return "dir:" + clean, label, ""
	}
	seed = strconv.FormatInt(cfg.Seed, 10)
	cfg.Seed = 0
	d, err := cfg.Digest()
	if err != nil {
		return "dir:" + clean, label, seed
	}
	return "config:" + d, label, seed
}

// runGroup is a group of runs that differ only in their seed.
type runGroup struct {
	name string
	runs []*plotRun
}

// groupSeeds groups runs by seedGroup's key, in order of first appearance,
// each group's runs by seed, and names each group by its first run's group
// name; a group of several adds its seeds ("cartpole/evo: seeds 1, 2, 3"),
// named by its runs when grouped by config ("a, b, c: seeds 1, 2, 3"). Runs
// of the same seed are not seeds of one group: each stands alone.
func groupSeeds(runs []*plotRun) []runGroup {
	var groups []runGroup
	index := map[string]int{}
	for _, r := range runs {
		i, ok := index[r.group]
		// A run whose seed the group holds already (the same config run
		// twice) is not another seed: it stands alone.
		if ok && slices.ContainsFunc(groups[i].runs, func(o *plotRun) bool { return o.seed == r.seed }) {
			groups = append(groups, runGroup{name: r.label, runs: []*plotRun{r}})
			continue
		}
		if !ok {
			i = len(groups)
			index[r.group] = i
			groups = append(groups, runGroup{name: r.groupName})
		}
		groups[i].runs = append(groups[i].runs, r)
	}
	seedOrder := func(a, b *plotRun) int {
		x, errA := strconv.Atoi(a.seed)
		y, errB := strconv.Atoi(b.seed)
		if errA != nil || errB != nil {
			return 0
		}
		return cmp.Compare(x, y)
	}
	for i, g := range groups {
		if len(g.runs) < 2 {
			continue
		}
		slices.SortStableFunc(g.runs, seedOrder)
		var seeds []string
		for _, r := range g.runs {
			seeds = append(seeds, cmp.Or(r.seed, "?"))
		}
		if !strings.HasPrefix(g.runs[0].group, "bench:") {
			var labels []string
			for _, r := range g.runs {
				labels = append(labels, r.label)
			}
			groups[i].name = strings.Join(labels, ", ")
		}
		groups[i].name += ": seeds " + strings.Join(seeds, ", ")
	}
	return groups
}
