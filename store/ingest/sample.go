package ingest

import (
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"

	"assay"
	"assay/store"
)

// builder turns the records of one file into samples of one kind.
type builder struct {
	name       string
	kind       assay.Kind
	qKey, aKey string            // for qa, math and mcq
	idKey      string            // task_id, id, or "" for line numbers
	seen       map[string]string // sample id → where it was first seen
}

// settle settles the kind, the keys and the id field of a file's records.
func settle(name string, s *survey, opts Options) (*builder, error) {
	b := &builder{name: name, kind: opts.Kind, seen: make(map[string]string, s.count)}
	if err := b.chooseKind(s, opts); err != nil {
		return nil, err
	}
	first := s.first.fields
	for _, k := range []string{fieldTaskID, "id"} {
		if _, ok := first[k]; ok {
			b.idKey = k
			break
		}
	}
	return b, nil
}

// samples decodes the records again and turns them into samples one at a
// time, in order, stopping at the first bad one.
func (b *builder) samples(rs records) iter.Seq2[store.Sample, error] {
	return func(yield func(store.Sample, error) bool) {
		i := 0
		for r, err := range rs {
			if err != nil {
				yield(store.Sample{}, err)
				return
			}
			i++
			s, err := b.sample(r, i)
			if err != nil {
				yield(s, err)
				return
			}
			if !yield(s, nil) {
				return
			}
		}
	}
}

// chooseKind settles the kind and, unless it is code, the question and answer keys.
func (b *builder) chooseKind(s *survey, opts Options) error {
	if b.kind == "" && s.code {
		b.kind = assay.KindCode
	}
	if b.kind == assay.KindCode {
		return nil
	}
	var err error
	if b.qKey, err = resolveKey(b.name, s, opts.QuestionKey, questionKeys, "question"); err != nil {
		return err
	}
	if b.aKey, err = resolveKey(b.name, s, opts.AnswerKey, answerKeys, "answer"); err != nil {
		return err
	}
	if b.qKey == b.aKey {
		return assay.Errorf(assay.EINVALID, "%s: the question key and the answer key are both %q", b.name, b.qKey)
	}
	if b.kind == "" {
		b.kind = s.detectKind(b.aKey)
	}
	return nil
}

// sample turns one record into a sample; fields it does not use become metadata.
func (b *builder) sample(r record, ordinal int) (store.Sample, error) {
	s := store.Sample{Ordinal: ordinal}
	var (
		used []string
		err  error
	)
	if s.SampleID, err = b.sampleID(r); err != nil {
		return s, err
	}
	switch b.kind {
	case assay.KindCode:
		used, err = b.fillCode(&s, r)
	case assay.KindMCQ:
		used, err = b.fillMCQ(&s, r)
	default:
		used, err = b.fillQA(&s, r)
	}
	if err != nil {
		return s, err
	}
	s.Metadata = make(map[string]any, len(r.fields))
	for k, v := range r.fields {
		if k != b.idKey && !slices.Contains(used, k) {
			s.Metadata[k] = v
		}
	}
	return s, nil
}

// sampleID returns the record's own id, or its position when the file has
// none, and rejects an id seen before.
func (b *builder) sampleID(r record) (string, error) {
	id := strconv.Itoa(r.seq)
	if b.idKey != "" {
		v, ok := r.fields[b.idKey]
		if !ok {
			return "", b.errorf(r, "missing %q (the first sample has one, so every sample needs one)", b.idKey)
		}
		switch v := v.(type) {
		case string:
			id = v
		case json.Number:
			id = numberID(v)
		default:
			return "", b.errorf(r, "%q is %s, want a string or a number", b.idKey, describe(v))
		}
		if strings.TrimSpace(id) == "" {
			return "", b.errorf(r, "%q is empty", b.idKey)
		}
	}
	if prev, dup := b.seen[id]; dup {
		return "", b.errorf(r, "duplicate sample id %q, first seen at %s", id, prev)
	}
	b.seen[id] = r.where
	return id, nil
}

// numberID is the id a numeric id stands for, written the shortest way:
// 1, 1.0 and 1e0 are one id, "1", the same as the string "1". Two samples
// whose ids differ only in how the number is written are duplicates.
func numberID(n json.Number) string {
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return n.String()
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// fillQA reads a qa or math sample and returns the keys it used.
func (b *builder) fillQA(s *store.Sample, r record) ([]string, error) {
	var err error
	if s.Input, err = b.text(r, b.qKey, " (the question key)", false); err != nil {
		return nil, err
	}
	if s.Reference, err = b.text(r, b.aKey, " (the answer key)", b.kind == assay.KindQA); err != nil {
		return nil, err
	}
	if _, ok := MathAnswer(s.Reference); b.kind == assay.KindMath && !ok {
		return nil, b.errorf(r, "%q does not end with a line \"#### N\" giving the final number, as a math answer must", b.aKey)
	}
	return []string{b.qKey, b.aKey}, nil
}

// fillCode reads a code (HumanEval) sample and returns the keys it used.
func (b *builder) fillCode(s *store.Sample, r record) ([]string, error) {
	const role = " (a code sample needs prompt, canonical_solution, test and entry_point)"
	var err error
	fields := []struct {
		key string
		dst *string
	}{
		{fieldPrompt, &s.Input},
		{fieldSolution, &s.Reference},
		{fieldTest, &s.Test},
		{fieldEntryPoint, &s.EntryPoint},
	}
	used := make([]string, 0, len(fields))
	for _, f := range fields {
		if *f.dst, err = b.text(r, f.key, role, false); err != nil {
			return nil, err
		}
		used = append(used, f.key)
	}
	return used, nil
}

// text returns the non-blank string in field key; numberOK lets a JSON number
// stand for its decimal text. role is appended to "missing" messages.
func (b *builder) text(r record, key, role string, numberOK bool) (string, error) {
	v, ok := r.fields[key]
	if !ok {
		return "", b.errorf(r, "missing %q%s; this sample has: %s", key, role, fieldList(r.fields))
	}
	s, ok := v.(string)
	if n, isNum := v.(json.Number); isNum && numberOK {
		s, ok = n.String(), true
	}
	if !ok {
		return "", b.errorf(r, "%q is %s, want a string", key, describe(v))
	}
	if strings.TrimSpace(s) == "" {
		return "", b.errorf(r, "%q is empty", key)
	}
	return s, nil
}

// errorf returns an EINVALID error that names the file and the record.
func (b *builder) errorf(r record, format string, args ...any) error {
	return assay.Errorf(assay.EINVALID, "%s: %s: %s", b.name, r.where, fmt.Sprintf(format, args...))
}
