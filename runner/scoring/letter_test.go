package scoring

import (
	"strings"
	"testing"

	"assay/config"
)

func TestExtractLetter(t *testing.T) {
	choices := []string{"London", "Berlin", "Paris", "Madrid"}
	tests := []struct {
		name, response, want string
	}{
		{"letter alone", "C", "C"},
		{"parenthesised", "(C)", "C"},
		{"closing paren", "C)", "C"},
		{"period", "C.", "C"},
		{"bold", "**C**", "C"},
		{"lowercase alone", "c", "C"},
		{"answer colon", "Answer: C", "C"},
		{"answer is", "The answer is C.", "C"},
		{"correct option with text", "The correct option is (C) Paris", "C"},
		{"choice text alone", "Paris", "C"},
		{"choice text lowercase with period", "paris.", "C"},
		{"lowercase answer is", "the answer is c", "C"},
		{"article trap", "A good answer is C", "C"},
		{"negation then answer", "Not A. The answer is (C)", "C"},
		{"it's X not Y", "I think it's C, not A", "C"},
		{"changed mind", "The answer is B. Wait, no: the answer is C.", "C"},
		{"bold answer then rejected option", "**Answer:** C\n\nExplanation: Option A is wrong because London is in England.", "C"},
		{"options walked through", "Let's consider each option.\nA) London - no\nB) Berlin - no\nC) Paris - yes\nD) Madrid - no\n\nTherefore, the answer is C", "C"},
		{"boxed", "$\\boxed{C}$", "C"},
		{"I would choose", "I would choose C because Paris is the capital.", "C"},
		{"rejected letter last", "C is correct; A is wrong.", "C"},
		{"article in answer statement", "The answer is a bit tricky, but it is C.", "C"},
		{"answer is choice text", "The answer is Paris.", "C"},
		{"eliminated others", "After eliminating A, B and D, we are left with C.", "C"},
		{"brackets", "Final answer: [C]", "C"},
		{"option colon text", "Option C: Paris", "C"},
		{"it's lowercase wrapped", "It's (c).", "C"},
		{"answer on next line", "Answer:\n\nC", "C"},
		{"answer with rejected alternative", "My answer is (C) Paris, not (A) London.", "C"},
		{"shouting", "ANSWER: D", "D"},
		{"choice text in a sentence", "The capital of France is Paris, of course.", "C"},
		{"another letter", "B", "B"},
		{"choices restated then text", "A. London\nB. Berlin\nC. Paris\nD. Madrid\n\nThe capital of France is Paris.", "C"},
		{"choices restated inline then pick", "Options: (A) London, (B) Berlin, (C) Paris, (D) Madrid. I'd say C.", "C"},
		{"answer is not X", "The answer is not A, it's C", "C"},
		{"pronoun only", "I'm not sure.", ""},
		{"out of range", "The answer is E.", ""},
		{"two choice texts", "Berlin or Paris, I cannot decide.", ""},
		{"choices restated only", "A) London\nB) Berlin\nC) Paris\nD) Madrid", ""},
		{"nothing", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ExtractLetter(tt.response, choices)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("ExtractLetter(%q) = %q, %v; want %q", tt.response, got, ok, tt.want)
			}
			out := ExactMatch(tt.response, choices, "C")
			if want := pass(tt.want == "C"); out.Value != want || out.Metric != MetricExactMatch || out.Extracted != tt.want {
				t.Errorf("ExactMatch = %+v, want value %v and extracted %q", out, want, tt.want)
			}
			if tt.want == "" && out.Detail != "no letter found" {
				t.Errorf("Detail = %q, want %q", out.Detail, "no letter found")
			}
		})
	}
}

func TestExactMatchReferenceForms(t *testing.T) {
	choices := []string{"London", "Berlin", "Paris", "Madrid"}
	tests := []struct {
		reference string
		want      float64
	}{
		{"C", 1}, {" c ", 1}, {"2", 1}, {"Paris", 1}, {"B", 0}, {"E", 0}, {"Rome", 0},
	}
	for _, tt := range tests {
		if got := ExactMatch("The answer is (C).", choices, tt.reference); got.Value != tt.want {
			t.Errorf("reference %q: %+v, want value %v", tt.reference, got, tt.want)
		}
	}
}

func TestExactMatchMMLU(t *testing.T) {
	eachDataset(t, "mmlu.jsonl", "mmlu_sample.jsonl", checkExactMatch)
}

// checkExactMatch scores the right answer in many phrasings, and a wrong letter.
func checkExactMatch(t *testing.T, rows []mmluSample) {
	for i, s := range rows {
		idx := int(s.Answer[0] - 'A')
		wrong := string(rune('A' + (idx+1)%len(s.Choices)))
		correct := []string{
			s.Answer,
			"The answer is " + s.Answer + ".",
			"answer: " + strings.ToLower(s.Answer),
			s.Choices[idx],
			"**(" + s.Answer + ")** " + s.Choices[idx],
			"Not " + wrong + ". The correct answer is " + s.Choices[idx],
		}
		for _, response := range correct {
			if out := ExactMatch(response, s.Choices, s.Answer); out.Value != 1 {
				t.Errorf("row %d (%s): response %q scored %+v", i+1, s.Subject, response, out)
			}
		}
		if out := ExactMatch("The answer is "+wrong, s.Choices, s.Answer); out.Value != 0 || out.Extracted != wrong {
			t.Errorf("row %d (%s): wrong letter %s scored %+v", i+1, s.Subject, wrong, out)
		}
	}
}

// Each deterministic evaluator gives the one metric its evaluator lists.
func TestScorersGiveTheirEvaluatorsMetrics(t *testing.T) {
	for ev, metric := range map[config.Evaluator]string{config.EvalExactMatch: MetricExactMatch,
		config.EvalNumericMatch: MetricNumericMatch, config.EvalCodeExecution: MetricCodeExecution} {
		if got := ev.Metrics(); len(got) != 1 || got[0] != metric {
			t.Errorf("%s lists %v, its scorer gives %q", ev, got, metric)
		}
	}
}
