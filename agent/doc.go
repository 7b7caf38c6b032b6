// Package agent is the PPO agent: acting, learning, evaluation, cloning and
// saving to a single safetensors file that agent.Load reads back.
package agent
