package nn

import (
	"fmt"

	"github.com/evolverl/evolve/netconf"
)

// binding maps a part's tensor names to their indices in one Params, cached by the identity
// of the Params' backing array so a lookup by name happens only when another Params comes.
type binding struct {
	first *netconf.Tensor
	n     int
	idx   []int
	names []string
	sizes []int
}

// add registers a tensor of the part by name and size and returns its slot.
func (b *binding) add(name string, size int) int {
	b.names = append(b.names, name)
	b.sizes = append(b.sizes, size)
	return len(b.names) - 1
}

// resolve returns the data of the part's tensors in p, checking names and sizes.
func (b *binding) resolve(p netconf.Params) error {
	if len(p) == 0 {
		return fmt.Errorf("dense evaluator: no params, want %q and more", b.names[0])
	}
	if b.first != &p[0] || b.n != len(p) {
		if b.idx == nil {
			b.idx = make([]int, len(b.names))
		}
		for i, name := range b.names {
			b.idx[i] = -1
			for j := range p {
				if p[j].Name == name {
					b.idx[i] = j
					break
				}
			}
			if b.idx[i] < 0 {
				b.first = nil
				return fmt.Errorf("param %q: missing", name)
			}
		}
		b.first, b.n = &p[0], len(p)
	}
	for i, j := range b.idx {
		if len(p[j].Data) != b.sizes[i] || p[j].Name != b.names[i] {
			b.first = nil
			return fmt.Errorf("param %q: %d values, want %d", b.names[i], len(p[j].Data), b.sizes[i])
		}
	}
	return nil
}

// data returns the values of the tensor in slot, as resolve found it in p.
func (b *binding) data(p netconf.Params, slot int) []float32 { return p[b.idx[slot]].Data }
