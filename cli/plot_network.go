package cli

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
)

// widthRE matches the layer widths in netconf.Spec.String's description:
// "mlp[64 64]", "cnn[32 32]" (channels), "head[64]", "latent 32", "lstm 2x64".
var widthRE = regexp.MustCompile(`(?:mlp|cnn|head)\[([0-9 ]*)\]|latent ([0-9]+)|lstm ([0-9]+)x([0-9]+)`)

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

// networkPlot charts every agent's hidden units over generations, or
// returns nil when a net description has no widths to read.
func networkPlot(m *evo.Metrics) *plot.Plot {
	units := map[string]int{}
	for _, r := range m.Rows {
		n, ok := hiddenUnits(r.Net)
		if !ok {
			return nil
		}
		units[r.Net] = n
	}
	p := newPlot()
	p.Title.Text = "Network size of every agent (lines follow parent → child)"
	p.X.Label.Text = "generation"
	p.X.Tick.Marker = integerTicks{}
	p.Y.Label.Text = "hidden units (encoder + latent + head)"
	p.Y.Tick.Marker = plainTicks{}
	newLineages(m).plot(p, func(r evo.MetricsRow) float64 { return float64(units[r.Net]) })
	padY(p)
	return p
}
