package judge

import (
	"encoding/json"
	"testing"

	"assay/config"
)

// A score is a JSON number within its scale, whole on a whole scale; a
// string, a list or broken JSON is named for what it is.
func TestNumberReadsAScore(t *testing.T) {
	for _, c := range []struct {
		raw     string
		scale   config.Scale
		want    float64
		problem string
	}{
		{raw: "4", scale: config.ScaleLikert, want: 4},
		{raw: " 4.0 ", scale: config.ScaleLikert, want: 4},
		{raw: "5e0", scale: config.ScaleLikert, want: 5},
		{raw: "0.25", scale: config.ScaleUnit, want: 0.25},
		{raw: "-0", scale: config.ScalePass, want: 0},
		{raw: "4.5", scale: config.ScaleLikert, problem: "4.5 is not an integer"},
		{raw: "7", scale: config.ScaleLikert, problem: "7 is outside 1–5"},
		{raw: "-0.5", scale: config.ScaleUnit, problem: "-0.5 is outside 0–1"},
		{raw: `"4"`, scale: config.ScaleLikert, problem: `"4" is not a number`},
		{raw: "[4]", scale: config.ScaleLikert, problem: "[4] is not a number"},
		{raw: "true", scale: config.ScalePass, problem: "true is not a number"},
		{raw: "1e400", scale: config.ScaleUnit, problem: "1e400 is not a number"},
		{raw: "0x1", scale: config.ScalePass, problem: "not valid JSON"},
		{raw: "4 5", scale: config.ScaleLikert, problem: "not valid JSON"},
		{raw: "", scale: config.ScaleLikert, problem: "not valid JSON"},
	} {
		got, problem := number(json.RawMessage(c.raw), c.scale)
		if problem != c.problem || problem == "" && got != c.want {
			t.Errorf("number(%q) = %v, %q; want %v, %q", c.raw, got, problem, c.want, c.problem)
		}
	}
}
