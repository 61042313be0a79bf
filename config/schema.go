package config

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"assay"
)

// SchemaID names the run file's JSON Schema; its committed copy is
// docs/run-file.schema.json, which an editor's yaml-language-server reads.
const SchemaID = "urn:assay:run-file"

// Schema is the run file's JSON Schema (draft 2020-12), made from Config's
// fields as the decoder reads them: their YAML keys, types, the values a
// field takes, defaults (an empty file's) and descriptions (the fields'
// doc comments). An unknown key is refused, as the decoder refuses it.
func Schema() ([]byte, error) {
	root := schemaOf(reflect.TypeFor[Config](), reflect.ValueOf(*Defaults()), "", false)
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = SchemaID
	root["title"] = "assay run file"
	root["description"] = "A run of an agent over a dataset under named conditions, scored by evaluators: what assay run --config reads (a superset of k-eval's config)."
	return json.MarshalIndent(root, "", "  ")
}

// fieldEnums are the values a field of a given type takes.
var fieldEnums = map[reflect.Type][]string{
	reflect.TypeFor[AgentType]():       {string(AgentOpenAI), string(AgentAnthropic), string(AgentClaudeCode), string(AgentClaudeCodeSDK), string(AgentCommand)},
	reflect.TypeFor[Provider]():        {string(ProviderOpenAI), string(ProviderAnthropic)},
	reflect.TypeFor[assay.Kind]():      kindNames(),
	reflect.TypeFor[assay.Transport](): {string(assay.TransportStdio), string(assay.TransportHTTP), string(assay.TransportSSE)},
}

// keyEnums are the values of string fields named by their key path.
var keyEnums = map[string][]string{
	"panel":     {PanelMean, PanelMedian, PanelFirst},
	"stop.when": {StopDecided, StopPrecise},
}

func kindNames() []string {
	var out []string
	for _, k := range assay.Kinds {
		out = append(out, string(k))
	}
	return out
}

// schemaOf is the schema of a value of type t at key path, whose default
// is def (the zero Value for none); keyed lists are mappings by name.
func schemaOf(t reflect.Type, def reflect.Value, path string, keyed bool) map[string]any {
	if s := special(path); s != nil {
		return s
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := schemaOf(t.Elem(), derefValue(def), path, false)
		return s
	case reflect.Struct:
		return structSchema(t, def, path)
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), reflect.Value{}, path+".*", false)}
	case reflect.Slice:
		if keyed {
			return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), reflect.Value{}, path+".*", false)}
		}
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), reflect.Value{}, path+"[]", false)}
	}
	s := scalarSchema(t, path)
	if def.IsValid() && !def.IsZero() {
		s["default"] = def.Interface()
	}
	return s
}

// structSchema is an object of t's fields by their YAML keys, nothing else.
func structSchema(t reflect.Type, def reflect.Value, path string) map[string]any {
	props := map[string]any{}
	for i := range t.NumField() {
		f := t.Field(i)
		key, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" || key == "-" || !f.IsExported() {
			continue
		}
		var fdef reflect.Value
		if def.IsValid() {
			fdef = def.Field(i)
		}
		s := schemaOf(f.Type, fdef, joinPath(path, key), slices.Contains(strings.Split(opts, ","), "keyed"))
		if d := fieldDocs[t.Name()+"."+f.Name]; d != "" {
			s["description"] = d
		}
		props[key] = s
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

// scalarSchema is a string, number, integer or boolean; a number may be
// written as a ${NAME} reference too, expanded when the file is read.
func scalarSchema(t reflect.Type, path string) map[string]any {
	reference := map[string]any{"type": "string", "pattern": `\$\{`}
	switch t.Kind() {
	case reflect.Int:
		return map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, reference}}
	case reflect.Float64:
		return map[string]any{"anyOf": []any{map[string]any{"type": "number"}, reference}}
	case reflect.Bool:
		return map[string]any{"anyOf": []any{map[string]any{"type": "boolean"}, reference}}
	}
	s := map[string]any{"type": "string"}
	if e := fieldEnums[t]; e != nil {
		s["enum"] = e
	}
	if e := keyEnums[path]; e != nil {
		s["enum"] = e
	}
	return s
}

// special are the keys the decoder reads in more than one form.
func special(path string) map[string]any {
	strs := map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	switch path {
	case "agent.env":
		// A mapping of variables, or a list of names passed on as they are.
		return map[string]any{"anyOf": []any{map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}, strs}}
	case "evaluators":
		var names []string
		for _, e := range Evaluators {
			names = append(names, string(e))
		}
		names = append(names, AssertJSONValid)
		one := map[string]any{"type": "object", "minProperties": 1, "maxProperties": 1,
			"propertyNames": map[string]any{"enum": append(slices.Clone(AssertionKinds), "judge")}}
		return map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"type": "string", "enum": names}, one}},
			"description": "How answers are scored: evaluators by name, assertions as one-key mappings ({contains: \"text\"}), and a run's own rubric as {judge: NAME}; empty: the dataset kind's."}
	}
	return nil
}

func derefValue(v reflect.Value) reflect.Value {
	if v.IsValid() && v.Kind() == reflect.Pointer && !v.IsNil() {
		return v.Elem()
	}
	return reflect.Value{}
}
