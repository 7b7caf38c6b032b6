package envs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/evolverl/evolve/internal/nearest"
)

// Options are the keyword arguments of Make, as read from a config file
// (TOML integers arrive as int64, JSON numbers as float64; both are
// accepted wherever a number is expected).
//
// The key "max_episode_steps" is handled by Make itself: a positive value
// replaces the registered time limit, 0 removes it. Every other key goes to
// the env's constructor, which must reject keys it does not know (see
// Options.Only) so that a typo in a config never passes silently.
type Options map[string]any

// Float returns the number under key, or def when the key is absent.
func (o Options) Float(key string, def float64) (float64, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	var f float64
	switch v := v.(type) {
	case float64:
		f = v
	case float32:
		f = float64(v)
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	default:
		return 0, fmt.Errorf("option %q = %v (%T): want a number", key, v, v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("option %q = %v: want a finite number", key, f)
	}
	return f, nil
}

// Int returns the integer under key, or def when the key is absent. Floats
// with an integral value are accepted.
func (o Options) Int(key string, def int) (int, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	switch v := v.(type) {
	case int:
		return v, nil
	case int64:
		return int(v), nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int(v), nil
		}
	}
	return 0, fmt.Errorf("option %q = %v (%T): want an integer", key, v, v)
}

// Bool returns the boolean under key, or def when the key is absent.
func (o Options) Bool(key string, def bool) (bool, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, fmt.Errorf("option %q = %v (%T): want true or false", key, v, v)
}

// Text returns the string under key, or def when the key is absent. With
// allowed given, the string must be one of them (def need not be).
func (o Options) Text(key, def string, allowed ...string) (string, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	s, ok := v.(string)
	if ok && (len(allowed) == 0 || slices.Contains(allowed, s)) {
		return s, nil
	}
	want := "a string"
	if len(allowed) > 0 {
		want = "one of " + strings.Join(quoteAll(allowed), ", ")
	}
	return "", fmt.Errorf("option %q = %v (%T): want %s", key, v, v, want)
}

// quoteAll returns each of ss quoted.
func quoteAll(ss []string) []string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return q
}

// Only returns an error naming every key of o that is not in known, every
// option allowed and, for a key a typo away from one, which it may have
// meant. (Make adds the options it handles itself to the list.)
func (o Options) Only(known ...string) error {
	var bad []string
	for k := range o {
		if !slices.Contains(known, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return &UnknownOptionsError{Unknown: bad, Allowed: slices.Clone(known)}
}

// UnknownOptionsError is the error of options an env does not take.
type UnknownOptionsError struct {
	Unknown, Allowed []string
}

// Error names the unknown options, the allowed ones and what a typo may have meant.
func (e *UnknownOptionsError) Error() string {
	allowed := "none"
	if len(e.Allowed) > 0 {
		allowed = strings.Join(e.Allowed, ", ")
	}
	msg := fmt.Sprintf("unknown option(s) %s (allowed: %s)", strings.Join(e.Unknown, ", "), allowed)
	for _, k := range e.Unknown {
		if near := nearest.Name(k, e.Allowed, 3); near != "" {
			msg += fmt.Sprintf("; %s: did you mean %s?", k, near)
		}
	}
	return msg
}

// Spec describes how to build a registered environment.
type Spec struct {
	// ID names the env, e.g. "CartPole-v1".
	ID string
	// New builds one instance, without the time limit.
	New func(opts Options) (Env, error)
	// MaxEpisodeSteps is the registered time limit (0: none). Make wraps the
	// env in a TimeLimit of this length.
	MaxEpisodeSteps int
	// Summary is a one-line description for listings.
	Summary string
}

// registry maps ids to specs. It is the package's only shared state: it is
// filled with the built-in envs when the package loads and grows only by
// Register, under a lock, like database/sql's drivers.
var registry = struct {
	sync.RWMutex
	specs map[string]Spec
}{specs: map[string]Spec{}}

// Register adds a user's environment under spec.ID so that Make (and every
// config file) can build it. Registering an id twice is an error.
func Register(spec Spec) error {
	if spec.ID == "" || spec.New == nil {
		return fmt.Errorf("envs: register %q: need an id and a constructor", spec.ID)
	}
	if spec.MaxEpisodeSteps < 0 {
		return fmt.Errorf("envs: register %q: max episode steps %d is negative", spec.ID, spec.MaxEpisodeSteps)
	}
	if strings.HasPrefix(spec.ID, GymPrefix) {
		return fmt.Errorf("envs: register %q: ids beginning \"gym:\" name Gymnasium envs through the Python bridge", spec.ID)
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.specs[spec.ID]; dup {
		return fmt.Errorf("envs: register %q: id already registered", spec.ID)
	}
	registry.specs[spec.ID] = spec
	return nil
}

// mustRegister registers a built-in env.
func mustRegister(spec Spec) {
	if err := Register(spec); err != nil {
		panic(err)
	}
}

// Lookup returns the spec registered under id.
func Lookup(id string) (Spec, bool) {
	registry.RLock()
	defer registry.RUnlock()
	s, ok := registry.specs[id]
	return s, ok
}

// IDs returns the registered ids, sorted.
func IDs() []string {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Sorted(maps.Keys(registry.specs))
}

// Make builds the env registered under id, wrapped in its time limit.
//
// Ids of the form "gym:ID" run Gymnasium's env ID in a child Python process
// (see GymEnv); close such envs when done.
func Make(id string, opts Options) (Env, error) {
	return MakeContext(context.Background(), id, opts)
}

// MakeContext is Make that gives up, with an error matching
// ErrInterrupted, once ctx is done: a gym: env's Python child, which may
// take long to import and build its env, is killed then.
func MakeContext(ctx context.Context, id string, opts Options) (Env, error) {
	spec, ok := Lookup(id)
	if gymID, isGym := strings.CutPrefix(id, GymPrefix); isGym && !ok {
		// The child applies max_episode_steps itself.
		h, err := startGym(ctx, gymID, 1, opts)
		if err != nil {
			return nil, fmt.Errorf("envs: make %s: %w", id, err)
		}
		return &GymEnv{h: h}, nil
	}
	if !ok {
		if near := nearest.Name(id, IDs(), 3); near != "" {
			return nil, fmt.Errorf("envs: unknown env id %q: did you mean %q?", id, near)
		}
		return nil, fmt.Errorf("envs: unknown env id %q (registered: %s; or \"gym:<id>\" for a Gymnasium env; "+
			"an env of your own must be registered with envs.Register in this program too)", id, strings.Join(IDs(), ", "))
	}
	limit := spec.MaxEpisodeSteps
	rest := Options{}
	for k, v := range opts {
		rest[k] = v
	}
	if _, ok := rest["max_episode_steps"]; ok {
		n, err := rest.Int("max_episode_steps", 0)
		if err == nil && n < 0 {
			err = fmt.Errorf("option \"max_episode_steps\" = %d: want >= 0 (0 removes the limit)", n)
		}
		if err != nil {
			return nil, fmt.Errorf("envs: make %s: %w", id, err)
		}
		limit = n
		delete(rest, "max_episode_steps")
	}
	env, err := spec.New(rest)
	if err != nil {
		var unknown *UnknownOptionsError
		if errors.As(err, &unknown) {
			unknown.Allowed = append(unknown.Allowed, "max_episode_steps")
		}
		return nil, fmt.Errorf("envs: make %s: %w", id, err)
	}
	if env == nil || reflect.ValueOf(env).Kind() == reflect.Pointer && reflect.ValueOf(env).IsNil() {
		return nil, fmt.Errorf("envs: make %s: its constructor returned no env and no error", id)
	}
	if env.ObservationSpace() == nil || env.ActionSpace() == nil {
		Close(env)
		return nil, fmt.Errorf("envs: make %s: the env has no observation or no action space", id)
	}
	if err := env.ObservationSpace().Validate(); err != nil {
		Close(env)
		return nil, fmt.Errorf("envs: make %s: observation space: %w", id, err)
	}
	if err := env.ActionSpace().Validate(); err != nil {
		Close(env)
		return nil, fmt.Errorf("envs: make %s: action space: %w", id, err)
	}
	if limit > 0 {
		env = NewTimeLimit(env, limit)
	}
	return env, nil
}

// MakeVector builds n copies of the env registered under id in a Vector.
// For a "gym:ID" id one Python child runs all n (see NewGymVector).
func MakeVector(id string, n int, opts Options) (*Vector, error) {
	return MakeVectorContext(context.Background(), id, n, opts)
}

// MakeVectorContext is MakeVector that gives up, with an error matching
// ErrInterrupted, once ctx is done (see MakeContext).
func MakeVectorContext(ctx context.Context, id string, n int, opts Options) (*Vector, error) {
	if n <= 0 {
		return nil, fmt.Errorf("envs: make vector of %s: %d envs, want at least 1", id, n)
	}
	if gymID, isGym := strings.CutPrefix(id, GymPrefix); isGym {
		if _, registered := Lookup(id); !registered {
			v, err := newGymVector(ctx, gymID, n, opts)
			if err != nil {
				return nil, fmt.Errorf("envs: make %s: %w", id, err)
			}
			return v, nil
		}
	}
	list := make([]Env, n)
	for i := range list {
		e, err := Make(id, opts)
		if err != nil {
			for _, made := range list[:i] {
				Close(made)
			}
			return nil, err
		}
		list[i] = e
	}
	return NewVector(list)
}

// Close releases what env holds beyond memory — a gym env's child
// process — by calling its Close if it has one (wrappers pass it on).
func Close(env Env) error {
	if c, ok := env.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
