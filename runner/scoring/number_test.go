package scoring

import (
	"errors"
	"math"
	"testing"
)

func TestExtractNumber(t *testing.T) {
	tests := []struct {
		name, response string
		wantText       string
		want           float64
	}{
		{"answer statement with unit", "The answer is 72 clips.", "72", 72},
		{"hashes with commas", "She pays 400 * 4 = 1600.\n#### 1,600", "1,600", 1600},
		{"currency", "So she makes $1,450,000 in total.", "1,450,000", 1450000},
		{"negative alone", "-3", "-3", -3},
		{"decimal zero", "72.0", "72.0", 72},
		{"equation result", "16 - 3 - 4 = 9 eggs; 9 * 2 = 18", "18", 18},
		{"bold", "Adding it up gives **18**", "18", 18},
		{"boxed", "Hence \\boxed{18}.", "18", 18},
		{"final answer label", "Final answer: 18", "18", 18},
		{"currency with cents", "The answer is: $18.00", "18.00", 18},
		{"statement after reasoning", "First, 48 / 2 = 24 clips in May. Then 48 + 24 = 72. The answer is 72", "72", 72},
		{"statement with arithmetic", "The answer is 5 + 3 = 8 apples.", "8", 8},
		{"statement before explanation", "Answer: 42\n\nExplanation: 6 times 7 gives 42, checked with 2 methods.", "42", 42},
		{"unicode minus", "The temperature dropped to −5 degrees.", "-5", -5},
		{"subtraction is not a sign", "She has 16-3-4=9 eggs left", "9", 9},
		{"boxed with commas in latex", "The final answer is $\\boxed{1,200}$.", "1,200", 1200},
		{"last number wins without a statement", "It costs 3.5 dollars each, so the total is 7.", "7", 7},
		{"negative in statement", "The answer is -12.", "-12", -12},
		{"assignment", "x = -3", "-3", -3},
		{"answer on the next line", "The final answer is:\n\n**1,234,567** people", "1,234,567", 1234567},
		{"hashes after an earlier number", "#### 5\nI mean 6", "5", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, v, ok := ExtractNumber(tt.response)
			if !ok || text != tt.wantText || math.Abs(v-tt.want) > 1e-9 {
				t.Errorf("ExtractNumber(%q) = %q, %v, %v; want %q, %v", tt.response, text, v, ok, tt.wantText, tt.want)
			}
		})
	}
	if text, _, ok := ExtractNumber("I do not know."); ok {
		t.Errorf("ExtractNumber found %q in a response without numbers", text)
	}
}

func TestReferenceNumber(t *testing.T) {
	tests := []struct {
		reference string
		want      float64
		wantErr   bool
	}{
		{"4 * 400 = 1600\n#### 1,600", 1600, false},
		{"#### -3", -3, false},
		{"#### 0.5", 0.5, false},
		{"18", 18, false},
		{"no number here", 0, true},
		{"#### ", 0, true},
	}
	for _, tt := range tests {
		got, err := ReferenceNumber(tt.reference)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ReferenceNumber(%q) = %v, %v; want %v (error %v)", tt.reference, got, err, tt.want, tt.wantErr)
		}
		if tt.wantErr && !errors.Is(err, errNoNumber) {
			t.Errorf("ReferenceNumber(%q) error %v does not wrap errNoNumber", tt.reference, err)
		}
	}
}

func TestNumericMatch(t *testing.T) {
	tests := []struct {
		response, reference string
		want                float64
		wantDetail          string
	}{
		{"The answer is 1600.", "#### 1,600", 1, ""},
		{"The answer is 1,600.00", "#### 1,600", 1, ""},
		{"The answer is 1601.", "#### 1,600", 0, "answered 1601, reference is 1600"},
		{"I cannot tell.", "#### 3", 0, "no number found"},
		{"-3", "#### -3", 1, ""},
	}
	for _, tt := range tests {
		out := NumericMatch(tt.response, tt.reference)
		if out.Value != tt.want || out.Detail != tt.wantDetail || out.Metric != MetricNumericMatch {
			t.Errorf("NumericMatch(%q, %q) = %+v; want value %v, detail %q", tt.response, tt.reference, out, tt.want, tt.wantDetail)
		}
	}
}

func TestNumericMatchGSM8K(t *testing.T) {
	eachDataset(t, "gsm8k.jsonl", "gsm8k_sample.jsonl", checkNumericMatch)
}

// checkNumericMatch scores each reference against itself, and an answer off by one.
func checkNumericMatch(t *testing.T, rows []gsm8kSample) {
	for i, s := range rows {
		if out := NumericMatch(s.Answer, s.Answer); out.Value != 1 {
			t.Errorf("row %d: its own reference answer scored %+v", i+1, out)
		}
		want, err := ReferenceNumber(s.Answer)
		if err != nil {
			t.Fatalf("row %d: %v", i+1, err)
		}
		if out := NumericMatch("The answer is "+formatFloat(want+1)+".", s.Answer); out.Value != 0 {
			t.Errorf("row %d: an answer off by one scored %+v", i+1, out)
		}
	}
}
