package ingest

import (
	"regexp"
	"slices"
	"strings"

	"assay"
)

// questionKeys are the field names tried, in order, when Options.QuestionKey
// is empty; the first one present in the first row is used.
var questionKeys = []string{"question", "prompt", "input", "query", "instruction", "problem"}

// answerKeys are the field names tried, in order, when Options.AnswerKey is empty.
var answerKeys = []string{"answer", "response", "reference", "expected_output", "expected",
	"output", "target", "ground_truth", "golden_answer", "solution"}

// The fixed fields of a code (HumanEval) sample.
const (
	fieldTaskID     = "task_id"
	fieldPrompt     = "prompt"
	fieldSolution   = "canonical_solution"
	fieldTest       = "test"
	fieldEntryPoint = "entry_point"
	fieldChoices    = "choices"
)

// letterKeys are the MMLU CSV columns that hold the four choices.
var letterKeys = []string{"A", "B", "C", "D"}

// mathFinal matches the last line of a GSM8K answer: "#### 1,600", "#### -3.5".
var mathFinal = regexp.MustCompile(`^####\s*(-?\d[\d,]*(?:\.\d+)?)$`)

// MathAnswer returns N from a math reference whose last line is "#### N",
// with thousands commas removed, and whether there was such a line.
func MathAnswer(reference string) (string, bool) {
	s := strings.TrimRight(reference, " \t\r\n")
	s = strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
	m := mathFinal.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return strings.ReplaceAll(m[1], ",", ""), true
}

// survey is what settling a file's kind and keys needs of its records,
// gathered as they are decoded: the first record, how many there are,
// whether any has the fields of a kind, and whether every answer is a math
// answer.
type survey struct {
	format  string
	first   record
	count   int
	code    bool   // a field only HumanEval-style code samples have; "test" alone is too common a name to decide on
	choices bool   // a choices field, or fields A, B, C and D
	mathKey string // the answer key, as resolveKey will find it
	allMath bool   // every record's mathKey ends with a "#### N" line
}

// survey decodes every record of the file once, and counts them; a file
// without one is an error.
func (rs records) survey(name, format, answerKey string) (*survey, error) {
	s := &survey{format: format, allMath: true}
	for r, err := range rs {
		if err != nil {
			return nil, err
		}
		if s.count == 0 {
			s.first, s.mathKey = r, answerKey
			if s.mathKey == "" {
				s.mathKey = firstKey(r.fields, answerKeys)
			}
		}
		s.count++
		s.code = s.code || has(r, fieldSolution) || has(r, fieldEntryPoint)
		s.choices = s.choices || has(r, fieldChoices) || hasLetterKeys(r)
		if s.allMath {
			v, ok := r.fields[s.mathKey].(string)
			_, math := MathAnswer(v)
			s.allMath = ok && math
		}
	}
	if s.count == 0 {
		return nil, noRecords(name, format)
	}
	return s, nil
}

// detectKind says whether records that are not code are mcq, math or qa,
// given the answer key.
func (s *survey) detectKind(answerKey string) assay.Kind {
	switch {
	case s.choices:
		return assay.KindMCQ
	case answerKey != "" && answerKey == s.mathKey && s.allMath:
		return assay.KindMath
	}
	return assay.KindQA
}

// has reports whether r has the field key.
func has(r record, key string) bool {
	_, ok := r.fields[key]
	return ok
}

// firstKey is the first of candidates that fields has, or "".
func firstKey(fields map[string]any, candidates []string) string {
	for _, k := range candidates {
		if _, ok := fields[k]; ok {
			return k
		}
	}
	return ""
}

// hasLetterKeys reports whether r has fields A, B, C and D.
func hasLetterKeys(r record) bool {
	for _, k := range letterKeys {
		if _, ok := r.fields[k]; !ok {
			return false
		}
	}
	return true
}

// resolveKey returns the given key, or the first candidate present in the
// first record; role is "question" or "answer", for the error message.
func resolveKey(name string, s *survey, given string, candidates []string, role string) (string, error) {
	if given != "" {
		return given, nil
	}
	first := s.first.fields
	if k := firstKey(first, candidates); k != "" {
		return k, nil
	}
	where, hint := s.first.where, ""
	if s.format == FormatCSV {
		where, hint = "header (line 1)", " (the first row must be a header naming the columns)"
	}
	return "", assay.Errorf(assay.EINVALID, "%s: %s: no %s field (looked for %s); set the %s key to one of the fields%s: %s",
		name, where, role, strings.Join(candidates, ", "), role, hint, fieldList(first))
}

// fieldList names a record's fields, sorted, for error messages.
func fieldList(fields map[string]any) string {
	if len(fields) == 0 {
		return "(none)"
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 12 {
		keys = append(keys[:12], "…")
	}
	return strings.Join(keys, ", ")
}

// describe names the JSON type of v, with its article, for error messages.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a JSON array"
	case map[string]any:
		return "a JSON object"
	}
	return "a number"
}
