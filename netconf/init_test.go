package netconf

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestInitIsReproducibleBitForBit(t *testing.T) {
	for _, kind := range []EncoderKind{EncoderMLP, EncoderCNN, EncoderLSTM, EncoderGRU, EncoderTransformer} {
		s := validSpec(kind)
		a, err := Init(s, rand.New(rand.NewPCG(42, 7)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Init(s, rand.New(rand.NewPCG(42, 7)))
		c, _ := Init(s, rand.New(rand.NewPCG(43, 7)))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: same seed gave different weights", kind)
		}
		if reflect.DeepEqual(a, c) {
			t.Errorf("%s: different seeds gave the same weights", kind)
		}
	}
}

func TestParamNamesAreStableAndReadable(t *testing.T) {
	s := smallSpec(EncoderLSTM, ReLU, false)
	s.LSTM.Layers = 1
	s.Head.LayerNorm = true
	p, err := Zeros(s)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, q := range []string{"i", "f", "g", "o"} {
		want = append(want, "encoder.lstm.0.w_ih."+q, "encoder.lstm.0.w_hh."+q, "encoder.lstm.0.b_ih."+q, "encoder.lstm.0.b_hh."+q)
	}
	want = append(want, "latent.weight", "latent.bias", "head.0.weight", "head.0.bias", "head.0.norm.weight",
		"head.0.norm.bias", "out.weight", "out.bias")
	if got := p.Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("names\n%v\nwant\n%v", got, want)
	}
	g := smallSpec(EncoderGRU, ReLU, false)
	g.GRU.Layers = 1
	pg, _ := Zeros(g)
	for i, q := range []string{"r", "z", "n"} {
		for j, kind := range []string{"w_ih", "w_hh", "b_ih", "b_hh"} {
			if got, want := pg[4*i+j].Name, "encoder.gru.0."+kind+"."+q; got != want {
				t.Fatalf("GRU tensor %d is %s, want %s", 4*i+j, got, want)
			}
		}
	}
	c := validSpec(EncoderCNN) // 3×16×16 → 32×7×7 → 32×3×3
	pc, _ := Zeros(c)
	if got := pc.Tensor("latent.weight").Shape; !reflect.DeepEqual(got, []int{32, 3, 3, 32}) {
		t.Fatalf("latent weight after a CNN has shape %v, want [C H W latent] = [32 3 3 32]", got)
	}
	if got := pc.Tensor("encoder.cnn.1.weight").Shape; !reflect.DeepEqual(got, []int{32, 32, 3, 3}) {
		t.Fatalf("conv weight shape %v, want [out in k k]", got)
	}
}

// gram returns the maximum deviation of MᵀM (or MMᵀ, whichever is smaller) from gain²·I.
func gramError(d []float32, rows, cols int, gain float64) float64 {
	k, n := min(rows, cols), max(rows, cols)
	at := func(v, i int) float64 { // element i of vector v
		if rows >= cols {
			return float64(d[i*cols+v])
		}
		return float64(d[v*cols+i])
	}
	e := 0.0
	for a := range k {
		for b := range k {
			dot := 0.0
			for i := range n {
				dot += at(a, i) * at(b, i)
			}
			want := 0.0
			if a == b {
				want = gain * gain
			}
			e = max(e, math.Abs(dot-want)/(gain*gain))
		}
	}
	return e
}

func TestInitIsOrthogonalWithTheRightGains(t *testing.T) {
	for _, kind := range []EncoderKind{EncoderMLP, EncoderCNN, EncoderLSTM, EncoderGRU, EncoderTransformer} {
		s := validSpec(kind)
		s.Head.LayerNorm = true
		p, err := Init(s, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range p {
			var gain float64
			switch {
			case tn.Name == "out.weight":
				gain = PolicyGain
			case strings.Contains(tn.Name, ".w_"),
				strings.HasPrefix(tn.Name, "encoder.transformer.") && strings.HasSuffix(tn.Name, "weight") && !strings.HasSuffix(tn.Name, "norm.weight"),
				strings.HasSuffix(tn.Name, ".pos"):
				gain = 1
			case strings.HasSuffix(tn.Name, "norm.weight"):
				for _, v := range tn.Data {
					if v != 1 {
						t.Fatalf("%s: LayerNorm scale %v, want 1", tn.Name, v)
					}
				}
				continue
			case strings.Contains(tn.Name, "bias") || strings.Contains(tn.Name, ".b_"):
				for _, v := range tn.Data {
					if v != 0 {
						t.Fatalf("%s: bias %v, want 0", tn.Name, v)
					}
				}
				continue
			default:
				gain = math.Sqrt2
			}
			rows := tn.Shape[0]
			if len(tn.Shape) == 4 && tn.Name == "latent.weight" {
				rows = tn.Shape[0] * tn.Shape[1] * tn.Shape[2]
			}
			if e := gramError(tn.Data, rows, len(tn.Data)/rows, gain); e > 1e-5 {
				t.Errorf("%s %s: not orthogonal with gain %v (error %.2g)", kind, tn.Name, gain, e)
			}
		}
	}
}
