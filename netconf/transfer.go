package netconf

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Transfer returns weights for newSpec that keep what old learned, typically after a
// mutation changed the architecture. Tensor by tensor, in newSpec's layout order:
//
//   - The block a tensor has in common with old's tensor of the same name is copied (aligned
//     at index 0, except conv kernels, which are aligned at their centres). LSTM and GRU gates
//     are separate tensors, so they are transferred gate by gate and never mixed.
//   - New output units of a layer (new rows of a conv weight, new columns of a dense or gate
//     weight, new bias and LayerNorm entries) get a fresh init as in Init.
//   - Weights from new inputs to old units (the outgoing weights of units a previous layer
//     gained, new kernel taps, new positions of a CNN's feature map) are zero. So when a
//     hidden layer or the latent grows, the network computes exactly the same function as
//     before — unless LayerNorm normalises over that layer, since its mean and variance then
//     include the new units.
//   - A layer appended to an MLP or CNN stack starts as a pass-through: an identity matrix
//     (for a conv, the identity on the kernel's centre tap) and zero bias. Behind ReLU that
//     reproduces its input exactly (the input is already ≥ 0); behind other activations it
//     computes act(act(z)) instead of act(z), and a LayerNorm in the new layer normalises
//     its input. A new conv layer from cnn.add_layer has kernel 1 and stride 1, so the feature
//     map keeps its shape. An appended LSTM or GRU layer cannot pass its input through and gets
//     a fresh init. A layer appended to a Transformer gets a fresh init except the tensors
//     that end its two residual branches (attn.out and mlp.1), which start at zero: the
//     layer adds nothing, and the network computes what it did.
//   - In a Dict network the layer that reads the concatenated latents keeps each key's block
//     of rows with its key when the latent size changes, so growing the latent also keeps
//     the function.
//   - Any other tensor that old lacks gets a fresh init.
//
// rng is drawn from only for fresh parts, in layout order, so the result is reproducible.
func Transfer(old Params, newSpec Spec, rng *rand.Rand) (Params, error) {
	return transfer(old, newSpec, rng, true)
}

// Resize returns tensors laid out for newSpec holding the blocks they have in common with
// old's tensors of the same name (aligned as in Transfer) and zeros everywhere else. It
// resizes state kept per weight, such as Adam's moments, the same way Transfer moves the
// weights.
func Resize(old Params, newSpec Spec) (Params, error) {
	return transfer(old, newSpec, nil, false)
}

func transfer(old Params, newSpec Spec, rng *rand.Rand, initNew bool) (Params, error) {
	if err := old.Validate(); err != nil {
		return nil, fmt.Errorf("transfer from old params: %w", err)
	}
	l, err := layout(newSpec)
	if err != nil {
		return nil, fmt.Errorf("transfer to new spec: %w", err)
	}
	p := make(Params, len(l))
	for i, sl := range l {
		d := make([]float32, sl.Size())
		o := old.Tensor(sl.Name)
		if o != nil && len(o.Shape) != len(sl.Shape) {
			o = nil // a different kind of tensor under the same name: nothing to keep
		}
		switch {
		case o == nil && !initNew:
		case o == nil && sl.prev != "" && old.Tensor(sl.prev) != nil:
			passThrough(d, sl)
		case o == nil && sl.zeroAfter != "" && old.Tensor(sl.zeroAfter) != nil:
			// An appended residual layer's branch ends at zero: d stays zeros.
		case o == nil:
			d = fresh(sl, rng)
		default:
			if initNew && o.Shape[sl.outAxis] < sl.Shape[sl.outAxis] {
				freshUnits(d, sl, o.Shape[sl.outAxis], rng)
			}
			if len(sl.segs) == 0 || !copySegments(d, sl, o, old) {
				copyKept(d, sl, o)
			}
		}
		p[i] = Tensor{Name: sl.Name, Shape: slices.Clone(sl.Shape), Data: d}
	}
	return p, nil
}

// freshUnits writes a fresh init into the entries of output units from index from on.
func freshUnits(d []float32, sl slot, from int, rng *rand.Rand) {
	f := fresh(sl, rng)
	off := make([]int, len(sl.Shape))
	ext := append([]int(nil), sl.Shape...)
	off[sl.outAxis] = from
	ext[sl.outAxis] -= from
	copyBlock(d, sl.Shape, off, f, sl.Shape, off, ext)
}

// copyKept copies the block d shares with the old tensor o.
func copyKept(d []float32, sl slot, o *Tensor) {
	n := len(sl.Shape)
	doff, soff := make([]int, n), make([]int, n)
	ext := overlap(sl.Shape, o.Shape)
	if sl.newestLast {
		if diff := sl.Shape[0] - o.Shape[0]; diff >= 0 {
			doff[0] = diff
		} else {
			soff[0] = -diff
		}
	}
	if sl.centred {
		for _, a := range []int{2, 3} {
			if diff := sl.Shape[a] - o.Shape[a]; diff >= 0 {
				doff[a] = diff / 2
			} else {
				soff[a] = -diff / 2
			}
		}
	}
	copyBlock(d, sl.Shape, doff, o.Data, o.Shape, soff, ext)
}

// passThrough initialises an appended layer as the identity: weight[i][i] = 1 for a dense
// [in, out] weight, weight[o][o][k/2][k/2] = 1 for a conv weight [out, in, k, k].
func passThrough(d []float32, sl slot) {
	switch sl.Role {
	case RoleNormScale:
		for i := range d {
			d[i] = 1
		}
	case RoleWeight:
		if len(sl.Shape) == 4 {
			out, in, kh, kw := sl.Shape[0], sl.Shape[1], sl.Shape[2], sl.Shape[3]
			for o := range min(out, in) {
				d[((o*in+o)*kh+kh/2)*kw+kw/2] = 1
			}
			return
		}
		in, out := sl.Shape[0], sl.Shape[1]
		for i := range min(in, out) {
			d[i*out+i] = 1
		}
	}
}
