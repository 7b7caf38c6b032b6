package cli

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
)

// widthRE matches the layer widths in netconf.Spec.String's description:
// "mlp[64 64]", "cnn[32 32]" (channels), "head[64]", "latent 32", "lstm 2x64",
// "gru 2x64".
var widthRE = regexp.MustCompile(`(?:mlp|cnn|head)\[([0-9 ]*)\]|latent ([0-9]+)|(?:lstm|gru|transformer) ([0-9]+)x([0-9]+)`)

// hiddenUnits sums the widths of a net description's hidden layers
// (encoder, latent and head; CNN channels count as units), and reports
// whether the description held any.
func hiddenUnits(net string) (int, bool) {
	ms := widthRE.FindAllStringSubmatch(net, -1)
	sum := 0
	for _, m := range ms {
		switch {
		case m[3] != "":
			layers, _ := strconv.Atoi(m[3])
			width, _ := strconv.Atoi(m[4])
			sum += layers * width
		case m[2] != "":
			n, _ := strconv.Atoi(m[2])
			sum += n
		default:
			for _, f := range strings.Fields(m[1]) {
				n, _ := strconv.Atoi(f)
				sum += n
			}
		}
	}
	return sum, len(ms) > 0
}

// netPartRE matches the parts of netconf.Spec.String's description that
// mutations change: "mlp[64 64] ReLU ln" and "head[64] ReLU" (widths,
// activation, layer norm), "cnn[32 32] k[3 3] s[2 2] ReLU" (channels,
// kernel sizes, strides, activation), "lstm 2x64" or "gru 2x64" (layers × hidden),
// "transformer 1x64 h4 f128 k16" (layers × width, heads, MLP units, context) and
// "latent 32"; a Dict network's encoders carry their key ("img: cnn[...]").
var netPartRE = regexp.MustCompile(`(?:([^\s:{},]+): )?(mlp|head)(\[[0-9 ]*\]) (\w+)( ln)?` +
	`|(?:([^\s:{},]+): )?cnn(\[[0-9 ]*\]) k(\[[0-9 ]*\]) s(\[[0-9 ]*\]) (\w+)` +
	`|(lstm|gru) ([0-9]+)x([0-9]+)|latent ([0-9]+)` +
	`|transformer ([0-9]+)x([0-9]+) h([0-9]+) f([0-9]+) k([0-9]+)`)

// netPart is one part of a network's description: what it is ("cnn
// kernels", "img: mlp widths") and its value ("[3 3]").
type netPart struct{ name, value string }

// netParts splits a net description into its parts, in order (encoder,
// latent, head), and reports whether it held any. An encoder with memory
// gives its model first ("memory model" lstm, gru or transformer: what a
// memory gene switches), then its sizes; an LSTM's and a GRU's are one
// part, which a switch between the two keeps.
func netParts(net string) ([]netPart, bool) {
	var parts []netPart
	for _, m := range netPartRE.FindAllStringSubmatch(net, -1) {
		key := func(k string) string {
			if k == "" {
				return ""
			}
			return k + ": "
		}
		switch {
		case m[2] != "":
			pre := key(m[1]) + m[2]
			parts = append(parts, netPart{pre + " widths", m[3]}, netPart{pre + " activation", m[4] + m[5]})
		case m[7] != "":
			pre := key(m[6]) + "cnn"
			parts = append(parts, netPart{pre + " channels", m[7]}, netPart{pre + " kernels", m[8]},
				netPart{pre + " strides", m[9]}, netPart{pre + " activation", m[10]})
		case m[11] != "":
			parts = append(parts, netPart{"memory model", m[11]}, netPart{"lstm/gru layers×hidden", m[12] + "×" + m[13]})
		case m[15] != "":
			parts = append(parts, netPart{"memory model", "transformer"}, netPart{"transformer layers×width", m[15] + "×" + m[16]},
				netPart{"transformer heads", m[17]}, netPart{"transformer mlp", m[18]}, netPart{"transformer context", m[19]})
		default:
			parts = append(parts, netPart{"latent size", m[14]})
		}
	}
	return parts, len(parts) > 0
}

// partOrder orders the values of a part by size, so that up on the chart
// is bigger: by the sum of their numbers, then how many there are (layers),
// then as text (activations).
func partOrder(a, b string) int {
	nums := func(s string) (sum, n int) {
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
			v, _ := strconv.Atoi(f)
			sum, n = sum+v, n+1
		}
		return sum, n
	}
	sa, na := nums(a)
	sb, nb := nums(b)
	return cmp.Or(cmp.Compare(sa, sb), cmp.Compare(na, nb), strings.Compare(a, b))
}

// networkPlots charts every slot's hidden units (hiddenUnits) against the
// population's env steps, then each part of the network that changed
// during the run (netParts: CNN channels and kernel sizes, LSTM size,
// widths, ...) with its values as categories; it also returns the parts
// that never changed, "unchanged:" then "name value" each, for the legend. It returns no plots,
// and why, when a net description has no widths to read or no network changed
// (PBT's runs: it changes hyperparameters only).
func networkPlots(m *evo.Metrics, t *slotTable) (plots []*plot.Plot, unchanged []string, why string) {
	units := map[string]int{}
	values := map[string][]string{} // by part name, distinct values
	var names []string
	for _, r := range m.Rows {
		if _, seen := units[r.Net]; seen {
			continue
		}
		n, ok := hiddenUnits(r.Net)
		if !ok {
			return nil, nil, "no layer widths in the net column"
		}
		units[r.Net] = n
		parts, _ := netParts(r.Net)
		for _, pt := range parts {
			if _, ok := values[pt.name]; !ok {
				names = append(names, pt.name)
			}
			if !slices.Contains(values[pt.name], pt.value) {
				values[pt.name] = append(values[pt.name], pt.value)
			}
		}
	}
	if len(units) == 1 {
		return nil, nil, "no network changed during the run (" + m.Rows[0].Net + ")"
	}
	p := newPlot()
	p.Title.Text = "hidden units: encoder + latent + head"
	stepsAxis(p)
	p.Y.Tick.Marker = plainTicks{}
	t.plot(p, func(r evo.MetricsRow) float64 { return float64(units[r.Net]) })
	padY(p)
	plots = append(plots, p)
	for _, name := range names {
		if vs := values[name]; len(vs) == 1 {
			if len(unchanged) == 0 {
				unchanged = []string{"unchanged:"}
			}
			unchanged = append(unchanged, name+" "+vs[0])
		} else {
			slices.SortFunc(vs, partOrder)
			plots = append(plots, partPlot(t, name, vs))
		}
	}
	return plots, unchanged, ""
}

// partPlot charts the value of the network part name of every slot, one
// row per value in values' order, labelled with the value.
func partPlot(t *slotTable, name string, values []string) *plot.Plot {
	p := newPlot()
	p.Title.Text = name
	stepsAxis(p)
	p.Y.Tick.Marker = categoryTicks(values)
	t.plot(p, func(r evo.MetricsRow) float64 {
		parts, _ := netParts(r.Net)
		for _, pt := range parts {
			if pt.name == name {
				return float64(slices.Index(values, pt.value))
			}
		}
		return math.NaN() // not in this agent's network: not drawn
	})
	p.Y.Min, p.Y.Max = -0.5, float64(len(values))-0.5
	return p
}
