package ingest

import (
	"encoding/json"
	"strconv"
	"strings"

	"assay/store"
)

// fillMCQ reads a multiple-choice (MMLU) sample: the question, four choices
// from a "choices" list or from columns A to D, and the answer as a letter.
func (b *builder) fillMCQ(s *store.Sample, r record) ([]string, error) {
	var err error
	if s.Input, err = b.text(r, b.qKey, " (the question key)", false); err != nil {
		return nil, err
	}
	used := []string{b.qKey, b.aKey}
	if _, ok := r.fields[fieldChoices]; ok || !hasLetterKeys(r) {
		s.Choices, err = b.choiceList(r)
		used = append(used, fieldChoices)
	} else {
		s.Choices, err = b.choiceColumns(r)
		used = append(used, letterKeys...)
	}
	if err != nil {
		return nil, err
	}
	if s.Reference, err = b.letter(r); err != nil {
		return nil, err
	}
	return used, nil
}

// choiceList reads the "choices" field: exactly four strings.
func (b *builder) choiceList(r record) ([]string, error) {
	v, ok := r.fields[fieldChoices]
	if !ok {
		return nil, b.errorf(r, "missing %q (a list of 4 strings) or the fields A, B, C and D; this sample has: %s",
			fieldChoices, fieldList(r.fields))
	}
	list, ok := v.([]any)
	if !ok {
		return nil, b.errorf(r, "%q is %s, want a list of 4 strings", fieldChoices, describe(v))
	}
	if len(list) != len(letterKeys) {
		return nil, b.errorf(r, "%q has %d items, want 4 (for A to D)", fieldChoices, len(list))
	}
	choices := make([]string, len(list))
	for i, c := range list {
		if choices[i], ok = c.(string); !ok {
			return nil, b.errorf(r, "%q item %d is %s, want a string", fieldChoices, i+1, describe(c))
		}
	}
	return choices, nil
}

// choiceColumns reads the choices from fields A, B, C and D (MMLU CSV columns).
func (b *builder) choiceColumns(r record) ([]string, error) {
	choices := make([]string, len(letterKeys))
	for i, k := range letterKeys {
		v := r.fields[k]
		var ok bool
		if choices[i], ok = v.(string); !ok {
			return nil, b.errorf(r, "%q is %s, want a string", k, describe(v))
		}
	}
	return choices, nil
}

// letter returns the answer as A–D, accepting a 0-based index 0–3 too.
func (b *builder) letter(r record) (string, error) {
	v, ok := r.fields[b.aKey]
	if !ok {
		return "", b.errorf(r, "missing %q (the answer key); this sample has: %s", b.aKey, fieldList(r.fields))
	}
	var s string
	switch v := v.(type) {
	case string:
		s = strings.ToUpper(strings.TrimSpace(v))
	case json.Number:
		s = v.String()
	default:
		return "", b.errorf(r, "%q is %s, want a letter A–D or an index 0–3", b.aKey, describe(v))
	}
	switch s {
	case "A", "B", "C", "D":
		return s, nil
	case "0", "1", "2", "3":
		return string(rune('A' + s[0] - '0')), nil
	}
	return "", b.errorf(r, "%q is %s, want a letter A–D or an index 0–3", b.aKey, quoteValue(v))
}

// quoteValue shows a short value the way the file wrote it.
func quoteValue(v any) string {
	switch v := v.(type) {
	case string:
		if r := []rune(v); len(r) > 40 {
			v = string(r[:40]) + "…"
		}
		return strconv.Quote(v)
	case json.Number:
		return v.String()
	}
	return describe(v)
}
