package readmodel

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"assay"
	"assay/store"
	"assay/templates"
)

// This file turns domain types into the plain view data that templates take.

func DatasetRow(d store.Dataset) templates.DatasetRow {
	return templates.DatasetRow{
		ID:          d.ID,
		Name:        d.Name,
		Kind:        string(d.Kind),
		SHA256:      d.SHA256,
		Format:      d.Format,
		Filename:    d.Filename,
		Size:        d.Size,
		QuestionKey: d.QuestionKey,
		AnswerKey:   d.AnswerKey,
		Samples:     d.Samples,
		CreatedAt:   d.CreatedAt,
		Imported:    d.Origin == store.OriginEEE,
	}
}

func SampleRow(s store.Sample) templates.SampleRow {
	row := templates.SampleRow{
		Ordinal:    s.Ordinal,
		SampleID:   s.SampleID,
		Input:      s.Input,
		Reference:  s.Reference,
		Choices:    s.Choices,
		Test:       s.Test,
		EntryPoint: s.EntryPoint,
	}
	for _, k := range sortedKeys(s.Metadata) {
		v := s.Metadata[k]
		if str, ok := v.(string); ok {
			row.Metadata = append(row.Metadata, k+": "+str)
			continue
		}
		b, _ := json.Marshal(v)
		row.Metadata = append(row.Metadata, k+": "+string(b))
	}
	return row
}

func ConditionRow(c assay.Condition) templates.ConditionRow {
	row := templates.ConditionRow{
		ID:                    c.ID,
		Name:                  c.Name,
		SystemPrompt:          c.SystemPrompt,
		RequireMCPToolUse:     c.RequireMCPToolUse,
		RequireMCPToolSuccess: c.RequireMCPToolSuccess,
		UpdatedAt:             templates.When(c.UpdatedAt),
	}
	for _, srv := range c.MCPServers {
		row.Servers = append(row.Servers, fmt.Sprintf("%s (%s)", srv.Name, srv.Transport))
	}
	return row
}

func ConditionForm(c assay.Condition) templates.ConditionForm {
	f := templates.ConditionForm{
		ID:                    c.ID,
		Name:                  c.Name,
		SystemPrompt:          c.SystemPrompt,
		RequireMCPToolUse:     c.RequireMCPToolUse,
		RequireMCPToolSuccess: c.RequireMCPToolSuccess,
	}
	for _, srv := range c.MCPServers {
		f.Servers = append(f.Servers, templates.ServerForm{
			Name:      srv.Name,
			Transport: string(srv.Transport),
			Command:   srv.Command,
			Args:      strings.Join(srv.Args, "\n"),
			Env:       joinPairs(srv.Env, "="),
			URL:       srv.URL,
			Headers:   joinPairs(srv.Headers, ": "),
		})
	}
	return f
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
