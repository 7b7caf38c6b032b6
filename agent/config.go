package agent

import (
	"errors"
	"fmt"
	"math"

	"github.com/evolverl/evolve/buffer"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// Config holds a PPO agent's hyperparameters. The zero value of a field
// means "default" only through DefaultConfig; Validate checks every value.
type Config struct {
	// BatchSize is the minibatch size in steps (for recurrent agents a
	// minibatch holds max(1, BatchSize/MaxSeqLen) sequences).
	BatchSize int `toml:"batch_size" json:"batch_size"`
	// LR is Adam's learning rate.
	LR float64 `toml:"lr" json:"lr"`
	// LearnStep is the number of env steps per rollout, across all envs of
	// the vector (a rollout is LearnStep/num_envs steps of each env).
	LearnStep int `toml:"learn_step" json:"learn_step"`
	// Gamma is the discount factor.
	Gamma float64 `toml:"gamma" json:"gamma"`
	// GAELambda is GAE's λ; 1 gives discounted returns.
	GAELambda float64 `toml:"gae_lambda" json:"gae_lambda"`
	// ClipCoef clips the probability ratio to [1−c, 1+c] and the value
	// change to ±c.
	ClipCoef float64 `toml:"clip_coef" json:"clip_coef"`
	// EntCoef weights the entropy bonus.
	EntCoef float64 `toml:"ent_coef" json:"ent_coef"`
	// VFCoef weights the value loss.
	VFCoef float64 `toml:"vf_coef" json:"vf_coef"`
	// MaxGradNorm bounds the global gradient norm over all parameters.
	MaxGradNorm float64 `toml:"max_grad_norm" json:"max_grad_norm"`
	// ValueLoss is the critic's loss: "clipped" (or "", the default) is
	// CleanRL's ½·max((V − R)², (V_old + clip(V − V_old, ±clip_coef) − R)²);
	// "mse" is Stable-Baselines3's default, (V − R)² unclipped, so that
	// vf_coef weighs twice what it weighs with "clipped". Clipping the
	// value's change to ±clip_coef slows a critic whose returns are large
	// (Pendulum's reach −150).
	ValueLoss string `toml:"value_loss,omitzero" json:"value_loss,omitempty"`
	// Advantage is the estimator of advantages and value targets: "gae" (or
	// "", the default) is GAE with GAELambda; "mc" is discounted returns
	// bootstrapped at the rollout's end; "vtrace" is V-trace (Espeholt et
	// al. 2018; see buffer.ComputeVTrace) with GAELambda as its trace λ,
	// which corrects for data collected by an older policy μ (ActorLag):
	// before an update the learner's log-probabilities and values of the
	// rollout are recomputed, the value targets are V-trace's with the
	// importance weights π/μ clipped at VTraceRhoClip and VTraceCClip, and
	// the advantage of a step is r + γ·v_next − V(s); PPO's ratio, taken
	// against μ as always, is the importance weight of the policy
	// gradient. Not with recurrent encoders.
	Advantage string `toml:"advantage,omitzero" json:"advantage,omitempty"`
	// VTraceRhoClip is V-trace's ρ̄, the clip of the importance weights in
	// its temporal differences and advantages; VTraceCClip is c̄, the clip
	// of its trace coefficients. Both > 0, set with advantage "vtrace"
	// (IMPALA's are 1; a run config fills 1 where they are absent).
	VTraceRhoClip float64 `toml:"vtrace_rho_clip,omitzero" json:"vtrace_rho_clip,omitempty"`
	VTraceCClip   float64 `toml:"vtrace_c_clip,omitzero" json:"vtrace_c_clip,omitempty"`
	// ActorLag makes the agent act with the weights it had ActorLag updates
	// ago, as asynchronous actors do (IMPALA's actors, or remote workers
	// with a stale copy): the lag between the policy that collects and the
	// one that learns, for measuring an estimator's tolerance to stale
	// data. It counts within one Train's rollouts on one vector env (a
	// generation in a run), starting from the weights the agent had when
	// the vector was bound. 0 (the default) acts with the current weights.
	ActorLag int `toml:"actor_lag,omitzero" json:"actor_lag,omitempty"`
	// RNDCoef turns on Random Network Distillation (Burda et al. 2019; see
	// rnd.go) when > 0: an intrinsic reward for observations a trained
	// predictor cannot yet tell from a fixed random network, learnt by a
	// second critic as a non-episodic return, its advantages added to the
	// extrinsic ones with weight RNDCoef (theirs: 1). 0 (the default) is
	// plain PPO.
	RNDCoef float64 `toml:"rnd_coef,omitzero" json:"rnd_coef,omitempty"`
	// RNDExtCoef weights the extrinsic advantages with RND; 0 means 2
	// (Burda et al.'s).
	RNDExtCoef float64 `toml:"rnd_ext_coef,omitzero" json:"rnd_ext_coef,omitempty"`
	// RNDGamma discounts the intrinsic return; 0 means 0.99.
	RNDGamma float64 `toml:"rnd_gamma,omitzero" json:"rnd_gamma,omitempty"`
	// RNDHidden is the width of the two hidden layers of RND's target,
	// predictor and intrinsic critic, and RNDEmbed the width of the target's
	// and the predictor's output; 0 means 64 each.
	RNDHidden int `toml:"rnd_hidden,omitzero" json:"rnd_hidden,omitempty"`
	RNDEmbed  int `toml:"rnd_embed,omitzero" json:"rnd_embed,omitempty"`
	// RNDUpdateProportion is the fraction of each minibatch's observations
	// the predictor learns from (drawn per row), which keeps the intrinsic
	// reward from vanishing as fast when many envs run; 0 means 0.25.
	RNDUpdateProportion float64 `toml:"rnd_update_proportion,omitzero" json:"rnd_update_proportion,omitempty"`
	// DemoRho and DemoPhi turn on PPO with demonstrations (PPO+D; see
	// demos.go) when either is > 0: the probabilities that an env's next
	// episode in a rollout is a replay of a reward demonstration (given by
	// SetDemos, or the agent's own best episodes) or of a value
	// demonstration (its own episodes of highest value). DemoAlpha sharpens
	// the choice among value demos (0 means 10) and DemoCapacity bounds the
	// demos held (0 means 51).
	DemoRho      float64 `toml:"demo_rho,omitzero" json:"demo_rho,omitempty"`
	DemoPhi      float64 `toml:"demo_phi,omitzero" json:"demo_phi,omitempty"`
	DemoAlpha    float64 `toml:"demo_alpha,omitzero" json:"demo_alpha,omitempty"`
	DemoCapacity int     `toml:"demo_capacity,omitzero" json:"demo_capacity,omitempty"`
	// UpdateEpochs is the number of passes over each rollout.
	UpdateEpochs int `toml:"update_epochs" json:"update_epochs"`
	// TargetKL stops an update early, after the minibatch whose approximate
	// KL divergence exceeds it; 0 turns it off.
	TargetKL float64 `toml:"target_kl" json:"target_kl"`
	// AnnealLR decays the learning rate linearly to 0 over TotalSteps.
	AnnealLR bool `toml:"anneal_lr" json:"anneal_lr"`
	// KLThreshold turns on the KL-adaptive learning rate (see KLAdaptLR):
	// after each epoch of an update the rate is divided or multiplied by
	// LRFactor when the epoch's mean approximate KL is above
	// KLFactor×KLThreshold or below KLThreshold/KLFactor, within [MinLR,
	// MaxLR]. LR is where it starts; the adapted rate is the agent's state.
	// 0 turns it off.
	KLThreshold float64 `toml:"kl_threshold,omitzero" json:"kl_threshold,omitempty"`
	// KLFactor, LRFactor, MinLR and MaxLR tune the KL-adaptive rate; 0
	// means skrl's defaults: 2, 1.5, 1e-6 and 1e-2.
	KLFactor float64 `toml:"kl_factor,omitzero" json:"kl_factor,omitempty"`
	LRFactor float64 `toml:"lr_factor,omitzero" json:"lr_factor,omitempty"`
	MinLR    float64 `toml:"min_lr,omitzero" json:"min_lr,omitempty"`
	MaxLR    float64 `toml:"max_lr,omitzero" json:"max_lr,omitempty"`
	// ShareEncoders makes the critic a second head on the actor's encoder.
	ShareEncoders bool `toml:"share_encoders" json:"share_encoders"`
	// NormalizeObs normalises observations with running statistics kept
	// in (and saved with) the agent.
	NormalizeObs bool `toml:"normalize_obs" json:"normalize_obs"`
	// NormalizeReward scales rewards for training as Stable-Baselines3's
	// VecNormalize does (norm_reward): each env keeps its discounted return
	// (with Gamma, zeroed at episode ends), a running variance of those
	// returns is kept in (and saved with) the agent, and a reward is divided
	// by its standard deviation and clipped to ±ClipReward. Episode returns,
	// evaluation and fitness stay raw.
	NormalizeReward bool `toml:"normalize_reward,omitzero" json:"normalize_reward,omitempty"`
	// NormalizeValue makes the critic predict standardised values, as skrl's
	// PPO with a RunningStandardScaler value preprocessor does (see
	// valuescale.go): the statistics of the rollouts' values and returns
	// are kept in (and saved with) the agent; acting and GAE use values in
	// return units. With it, the value clip of value_loss "clipped" acts
	// on standardised values.
	NormalizeValue bool `toml:"normalize_value,omitzero" json:"normalize_value,omitempty"`
	// ClipReward bounds scaled rewards; 0 means SB3's 10.
	ClipReward float64 `toml:"clip_reward,omitzero" json:"clip_reward,omitempty"`
	// ActionStdInit is the initial log standard deviation of Gaussian
	// (Box) policies.
	ActionStdInit float64 `toml:"action_std_init" json:"action_std_init"`
	// UseSDE makes a Box policy explore with generalized state-dependent
	// exploration (gSDE; Raffin et al. 2021, as Stable-Baselines3 has it):
	// an action is the mean plus the actor's features times an exploration
	// matrix drawn from N(0, σ²), with a learnt log σ per feature and action
	// dimension (initialised to ActionStdInit) in place of the
	// state-independent log-std. The noise is smooth within an episode and
	// scales with the state; its log-probability is that of
	// N(mean, Σ_i feature_i²·σ_i²). Box action spaces only.
	UseSDE bool `toml:"use_sde,omitzero" json:"use_sde,omitempty"`
	// SDESampleFreq redraws gSDE's exploration matrices every SDESampleFreq
	// steps of a rollout (per env); 0 or -1 (SB3's spelling): once per
	// rollout.
	SDESampleFreq int `toml:"sde_sample_freq,omitzero" json:"sde_sample_freq,omitempty"`
	// BPTT is how recurrent rollouts are cut into sequences: "chunked",
	// "maximum" or "overlap50".
	BPTT string `toml:"bptt" json:"bptt"`
	// MaxSeqLen is the length of BPTT sequences.
	MaxSeqLen int `toml:"max_seq_len" json:"max_seq_len"`
	// Net is the architecture of the actor's and the critic's networks
	// (their input, output and output gain are set from the env's spaces).
	Net netconf.Spec `toml:"net" json:"net"`
	// Backend names the network backend that computes the networks (see
	// package nn): "" or "go" for the plain-Go one, "gorgonia" for the
	// reference backend, which a program makes available by importing
	// github.com/evolverl/evolve/nn/gorgonia. The loss and the optimizer are
	// the same whatever the backend.
	Backend string `toml:"-" json:"backend,omitempty"`
}

// The value losses of Config.ValueLoss.
const (
	ValueLossClipped = "clipped"
	ValueLossMSE     = "mse"
)

// DefaultConfig returns the documented defaults: batch 64, lr 3e-4, learn
// step 2048, γ 0.99, λ 0.95, clip 0.2, entropy 0.01, value 0.5, gradient
// norm 0.5, 4 epochs, no target KL, no annealing, separate encoders, no
// observation normalisation, log-std 0, chunked BPTT of 16 steps, and
// netconf's default MLP network.
func DefaultConfig() Config {
	return Config{
		BatchSize: 64, LR: 3e-4, LearnStep: 2048, Gamma: 0.99, GAELambda: 0.95,
		ClipCoef: 0.2, EntCoef: 0.01, VFCoef: 0.5, MaxGradNorm: 0.5, UpdateEpochs: 4,
		BPTT: string(buffer.Chunked), MaxSeqLen: 16,
		Net: netconf.DefaultSpec(netconf.EncoderMLP),
	}
}

// MaxUpdateEpochs bounds update_epochs: the zoo searches 1–20, and PPO's
// published settings stay below 100.
const MaxUpdateEpochs = 1000

// Validate checks every hyperparameter and returns all problems, each
// naming the key, the value and what is allowed.
func (c Config) Validate() error {
	var errs []error
	bad := func(key string, v any, want string) {
		errs = append(errs, fmt.Errorf("%s = %v: want %s", key, v, want))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if c.BatchSize < 1 {
		bad("batch_size", c.BatchSize, ">= 1")
	}
	if !(c.LR > 0) || !finite(c.LR) {
		bad("lr", c.LR, "> 0")
	}
	if c.LearnStep < 1 {
		bad("learn_step", c.LearnStep, ">= 1")
	}
	if !(c.Gamma >= 0 && c.Gamma <= 1) {
		bad("gamma", c.Gamma, "in [0, 1]")
	}
	if !(c.GAELambda >= 0 && c.GAELambda <= 1) {
		bad("gae_lambda", c.GAELambda, "in [0, 1]")
	}
	if !(c.ClipCoef > 0) || !finite(c.ClipCoef) {
		bad("clip_coef", c.ClipCoef, "> 0")
	}
	if !(c.EntCoef >= 0) || !finite(c.EntCoef) {
		bad("ent_coef", c.EntCoef, ">= 0")
	}
	if !(c.VFCoef >= 0) || !finite(c.VFCoef) {
		bad("vf_coef", c.VFCoef, ">= 0")
	}
	if !(c.MaxGradNorm > 0) || !finite(c.MaxGradNorm) {
		bad("max_grad_norm", c.MaxGradNorm, "> 0")
	}
	if c.UpdateEpochs < 1 || c.UpdateEpochs > MaxUpdateEpochs {
		// Bounded: a stop signal is heard between updates, and an update of
		// a huge count would never end.
		bad("update_epochs", c.UpdateEpochs, fmt.Sprintf("1 to %d", MaxUpdateEpochs))
	}
	if !(c.TargetKL >= 0) || !finite(c.TargetKL) {
		bad("target_kl", c.TargetKL, ">= 0 (0 turns it off)")
	}
	errs = append(errs, c.validateKLAdaptive()...)
	errs = append(errs, c.validateAdvantage()...)
	errs = append(errs, c.validateRND()...)
	errs = append(errs, c.validateDemos()...)
	if !finite(c.ActionStdInit) || math.Abs(c.ActionStdInit) > 20 {
		bad("action_std_init", c.ActionStdInit, "a log standard deviation in [-20, 20]")
	}
	if c.ValueLoss != "" && c.ValueLoss != ValueLossClipped && c.ValueLoss != ValueLossMSE {
		bad("value_loss", fmt.Sprintf("%q", c.ValueLoss), `"clipped" or "mse"`)
	}
	if !(c.ClipReward >= 0) || !finite(c.ClipReward) {
		bad("clip_reward", c.ClipReward, "> 0 (0: 10)")
	}
	if c.ClipReward != 0 && !c.NormalizeReward {
		bad("clip_reward", c.ClipReward, "0 unless normalize_reward = true")
	}
	if c.SDESampleFreq < -1 {
		bad("sde_sample_freq", c.SDESampleFreq, ">= 1, or 0 or -1 for once per rollout")
	}
	if c.SDESampleFreq != 0 && !c.UseSDE {
		bad("sde_sample_freq", c.SDESampleFreq, "0 unless use_sde = true")
	}
	if _, err := buffer.ParseMode(c.BPTT); err != nil {
		bad("bptt", fmt.Sprintf("%q", c.BPTT), `"chunked", "maximum" or "overlap50"`)
	}
	if c.MaxSeqLen < 1 {
		bad("max_seq_len", c.MaxSeqLen, ">= 1")
	}
	if c.Backend != "" {
		if _, err := nn.Lookup(c.Backend); err != nil {
			errs = append(errs, fmt.Errorf("backend = %q: %w", c.Backend, err))
		}
	}
	if err := c.Net.ValidateArchitecture(); err != nil {
		errs = append(errs, fmt.Errorf("net: %w", err))
	}
	return errors.Join(errs...)
}
