package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// A config is parsed once. Its string values come expanded, ready for the
// estimate and the checks; where a value was written with a ${NAME}
// reference, the reference is remembered, and the snapshot a run stores
// (Redacted) writes the reference back, never its value. When the run
// starts, Resolve expands every reference of the stored snapshot, in this
// process's environment.

// ref is a string value as written and as it was expanded.
type ref struct{ raw, expanded string }

// stringField is one string value of a config, named by its key path as in
// the file: agent.model, conditions.baseline.system_prompt, agent.command[2].
type stringField struct {
	path string
	v    reflect.Value // settable, of a string kind
}

// stringFields lists the string values of c outside mcp_servers, whose
// values are resolved when a server starts (see ResolveMCPServer).
func stringFields(c *Config) []stringField {
	var out []stringField
	walkStrings(reflect.ValueOf(c).Elem(), "", &out)
	return out
}

func walkStrings(v reflect.Value, path string, out *[]stringField) {
	switch v.Kind() {
	case reflect.String:
		*out = append(*out, stringField{path: path, v: v})
	case reflect.Slice:
		for i := range v.Len() {
			walkStrings(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			name, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if name == "" || name == "-" || strings.Contains(opts, "raw") || !t.Field(i).IsExported() {
				continue
			}
			walkField(v.Field(i), joinPath(path, name), strings.Contains(opts, "keyed"), out)
		}
	}
}

// walkField walks one field; a keyed list's items are named by their Name.
func walkField(v reflect.Value, path string, keyed bool, out *[]stringField) {
	if !keyed {
		walkStrings(v, path, out)
		return
	}
	for i := range v.Len() {
		item := v.Index(i)
		walkStrings(item, joinPath(path, item.FieldByName("Name").String()), out)
	}
}

// clone is a deep copy of c with the same folder and references.
func (c *Config) clone() *Config {
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("config: clone: %v", err)) // a Config always encodes
	}
	out := &Config{}
	if err := json.Unmarshal(b, out); err != nil {
		panic(fmt.Sprintf("config: clone: %v", err))
	}
	out.Dir, out.refs = c.Dir, c.refs
	return out
}

// withReferences is a copy of c with every value that was written as a
// ${...} reference, and has not been changed since, written so again.
func (c *Config) withReferences() *Config {
	out := c.clone()
	for _, f := range stringFields(out) {
		if r, ok := c.refs[f.path]; ok && f.v.String() == r.expanded {
			f.v.SetString(r.raw)
		}
	}
	out.refs = nil
	return out
}

// unresolved are the keys of a stored config that Resolve leaves as they
// are: what the run file said of its dataset, which is stored already, and
// the run's name.
var unresolved = []string{"name", "version", "dataset."}

// Resolve returns a copy of a stored run config with every ${NAME} and
// ${NAME:-default} reference expanded from getenv: the config a run
// executes with. Its error joins one *FieldError per reference that cannot
// be expanded, naming the key.
func (c *Config) Resolve(getenv func(string) string) (*Config, error) {
	out := c.clone()
	out.refs = nil
	var errs []error
	for _, f := range stringFields(out) {
		if skipResolve(f.path) || !strings.Contains(f.v.String(), "${") {
			continue
		}
		v, err := Expand(f.v.String(), getenv)
		if err != nil {
			errs = append(errs, &FieldError{File: "run config", Key: f.path, Err: err})
			continue
		}
		f.v.SetString(v)
	}
	return out, errors.Join(errs...)
}

func skipResolve(path string) bool {
	for _, u := range unresolved {
		if path == u || strings.HasPrefix(path, u) && strings.HasSuffix(u, ".") {
			return true
		}
	}
	return false
}

// Stored decodes the config a run stored, over the defaults of an empty
// file, so that a run stored before a setting existed gets its default.
func Stored(raw []byte) (*Config, error) {
	c := Defaults()
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, fmt.Errorf("run config: %w", err)
	}
	return c, nil
}
