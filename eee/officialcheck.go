package eee

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The fields the official EEE schemas require (in each of 0.2.1, 0.2.3
// and 0.3.0; model_info's additional_details from 0.2.3), and the values
// some may take: a file of another tool is checked against them before
// anything of it is read, and a missing or wrong one named.
var (
	aggregateRequired = []string{
		"schema_version", "evaluation_id", "retrieved_timestamp",
		"source_metadata", "source_metadata.source_type", "source_metadata.source_organization_name", "source_metadata.evaluator_relationship",
		"model_info", "model_info.name", "model_info.id",
		"eval_library", "eval_library.name", "eval_library.version",
		"evaluation_results", "evaluation_results[].evaluation_name", "evaluation_results[].source_data",
		"evaluation_results[].source_data.dataset_name", "evaluation_results[].source_data.source_type",
		"evaluation_results[].metric_config", "evaluation_results[].metric_config.lower_is_better",
		"evaluation_results[].score_details", "evaluation_results[].score_details.score",
	}
	aggregateRequiredSince023 = []string{"model_info.additional_details",
		"model_info.additional_details.deployment_type", "model_info.additional_details.model_availability"}
	instanceRequired = []string{
		"schema_version", "evaluation_id", "model_id", "evaluation_name", "sample_id", "interaction_type",
		"input", "input.raw", "input.reference",
		"answer_attribution", "answer_attribution[].turn_idx", "answer_attribution[].source", "answer_attribution[].extracted_value",
		"answer_attribution[].extraction_method", "answer_attribution[].is_terminal",
		"evaluation", "evaluation.score", "evaluation.is_correct",
	}
	officialEnums = map[string][]string{
		"source_metadata.source_type":                      {"documentation", "evaluation_run"},
		"source_metadata.evaluator_relationship":           {"first_party", "third_party", "collaborative", "other"},
		"evaluation_results[].source_data.source_type":     {"url", "hf_dataset", "other"},
		"evaluation_results[].metric_config.score_type":    {"binary", "continuous", "levels"},
		"model_info.additional_details.deployment_type":    {"self_deployed", "externally_managed", "unknown"},
		"model_info.additional_details.model_availability": {"open_weights", "closed_weights", "unknown"},
		"interaction_type":                                 {"single_turn", "multi_turn", "agentic"},
		"detailed_evaluation_results.format":               {"jsonl"},
		"detailed_evaluation_results.hash_algorithm":       {"sha256", "md5"},
	}
)

// checkOfficial names the first field of doc (an aggregate file, or one
// instance line) that the official schema of version requires and it
// lacks, or whose value is not one the schema allows.
func checkOfficial(raw []byte, aggregate bool, version string) error {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	required := instanceRequired
	if aggregate {
		required = aggregateRequired
		if version != OlderVersion {
			required = append(slices.Clip(required), aggregateRequiredSince023...)
		}
	}
	for _, path := range required {
		if where := missingAt(doc, path, ""); where != "" {
			return fmt.Errorf("%s: required by the EEE schema %s", where, version)
		}
	}
	for path, allowed := range officialEnums {
		if where, got := notAllowed(doc, path, "", allowed); where != "" {
			return fmt.Errorf("%s: %s is not one of %s (EEE schema %s)", where, got, strings.Join(allowed, ", "), version)
		}
	}
	if !aggregate {
		var line struct {
			InteractionType string            `json:"interaction_type"`
			Output          json.RawMessage   `json:"output"`
			Messages        []json.RawMessage `json:"messages"`
		}
		_ = json.Unmarshal(raw, &line)
		switch {
		case line.InteractionType == "single_turn" && (len(line.Output) == 0 || string(line.Output) == "null"):
			return fmt.Errorf("output: required of a single_turn line by the EEE schema %s", version)
		case line.InteractionType != "single_turn" && line.Messages == nil:
			return fmt.Errorf("messages: required of a %s line by the EEE schema %s", line.InteractionType, version)
		}
	}
	return nil
}

// missingAt is where path (a.b, a[].b: every element) is missing in v,
// written as the schema's path with indexes; "" when it is there.
func missingAt(v any, path, at string) string {
	head, rest, _ := strings.Cut(path, ".")
	name, each := strings.CutSuffix(head, "[]")
	m, ok := v.(map[string]any)
	if !ok {
		return strings.TrimPrefix(at, ".")
	}
	child, ok := m[name]
	if !ok {
		return strings.TrimPrefix(at+"."+name, ".")
	}
	if rest == "" {
		return ""
	}
	if !each {
		return missingAt(child, rest, at+"."+name)
	}
	list, _ := child.([]any)
	for i, e := range list {
		if where := missingAt(e, rest, fmt.Sprintf("%s.%s[%d]", at, name, i)); where != "" {
			return where
		}
	}
	return ""
}

// notAllowed is where a value at path is present and not one of allowed,
// and the value; "" when every one is allowed or none is there.
func notAllowed(v any, path, at string, allowed []string) (string, string) {
	head, rest, _ := strings.Cut(path, ".")
	name, each := strings.CutSuffix(head, "[]")
	m, ok := v.(map[string]any)
	if !ok {
		return "", ""
	}
	child, ok := m[name]
	if !ok || child == nil {
		return "", ""
	}
	here := strings.TrimPrefix(at+"."+name, ".")
	if rest == "" {
		s, isString := child.(string)
		if !isString || !slices.Contains(allowed, s) {
			b, _ := json.Marshal(child)
			return here, string(b)
		}
		return "", ""
	}
	if !each {
		return notAllowed(child, rest, here, allowed)
	}
	list, _ := child.([]any)
	for i, e := range list {
		if where, got := notAllowed(e, rest, fmt.Sprintf("%s[%d]", here, i), allowed); where != "" {
			return where, got
		}
	}
	return "", ""
}
