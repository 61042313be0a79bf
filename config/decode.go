package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// decoder walks a YAML node tree into a Go value by the yaml tags of its
// fields. yaml.v3's own decoder with KnownFields reports unknown keys by line
// only and type errors in Go terms; walking the nodes lets every message
// name the full key path, and lets ${...} be expanded per value.
type decoder struct {
	assertions *[]Assertion // where the evaluators' assertions go
	file       string
	dir        string // the run file's folder, for files it names; "" when there is none
	getenv     func(string) string
	lines      map[string]int // key path → line of its key, for later checks
	refs       map[string]ref // string values written as ${...} references, by key path
	errs       []error
}

// setLine records where path is written: the line of its key, or for a list
// item or the document, of the value itself.
func (d *decoder) setLine(path string, line int) {
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = line
	}
}

// field is one YAML key of a struct.
type field struct {
	index int
	keyed bool // a mapping read into a list of structs, in file order
	raw   bool // ${...} kept as written in this subtree
}

func (d *decoder) fail(line int, path, format string, args ...any) {
	d.errs = append(d.errs, &FieldError{File: d.file, Line: line, Key: path, Err: fmt.Errorf(format, args...)})
}

// expand is decode's raw argument at the top of a file: ${...} references
// are expanded except in subtrees marked raw.
const expand = false

// decode stores n in v. Keys absent from the file, and null values, leave v
// as it was, which is how defaults survive.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string, raw bool) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.setLine(path, n.Line)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		d.decode(n, p.Elem(), path, raw)
		v.Set(p)
	case reflect.Struct:
		d.decodeStruct(n, v, path, raw)
	case reflect.Map:
		d.decodeMap(n, v, path, raw)
	case reflect.Slice:
		d.decodeList(n, v, path, raw)
	default:
		d.decodeScalar(n, v, path, raw)
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string, raw bool) {
	if !d.want(n, yaml.MappingNode, v.Type(), path) {
		return
	}
	fields, names := fieldsOf(v.Type())
	d.eachPair(n, path, func(key string, keyLine int, val *yaml.Node, p string) {
		f, ok := fields[key]
		if !ok {
			d.fail(keyLine, p, "unknown key%s", suggest(key, names))
			return
		}
		if f.keyed {
			d.decodeKeyed(val, v.Field(f.index), p, raw || f.raw)
			return
		}
		d.decode(val, v.Field(f.index), p, raw || f.raw)
	})
}

// decodeKeyed reads a mapping of name → struct into a slice, in file order,
// setting each element's Name field to its key.
func (d *decoder) decodeKeyed(n *yaml.Node, v reflect.Value, path string, raw bool) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.setLine(path, n.Line)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if !d.want(n, yaml.MappingNode, reflect.TypeFor[map[string]any](), path) {
		return
	}
	out := reflect.MakeSlice(v.Type(), 0, len(n.Content)/2)
	d.eachPair(n, path, func(key string, _ int, val *yaml.Node, p string) {
		elem := reflect.New(v.Type().Elem()).Elem()
		elem.FieldByName("Name").SetString(key)
		d.decode(val, elem, p, raw)
		out = reflect.Append(out, elem)
	})
	v.Set(out)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string, raw bool) {
	if n.Kind == yaml.SequenceNode && strings.HasSuffix(path, ".env") && v.Type() == reflect.TypeFor[map[string]string]() {
		d.decodeEnvNames(n, v, path)
		return
	}
	if !d.want(n, yaml.MappingNode, v.Type(), path) {
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	d.eachPair(n, path, func(key string, _ int, val *yaml.Node, p string) {
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, elem, p, raw)
		v.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), elem)
	})
}

// decodeEnvNames reads an env written as a list of variables' names
// (env: [CLAUDE_CODE_USE_VERTEX, CLOUD_ML_REGION]): each is passed on from
// the environment, as NAME: ${NAME} would be.
func (d *decoder) decodeEnvNames(n *yaml.Node, v reflect.Value, path string) {
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		if item.Kind != yaml.ScalarNode || !validVarName(item.Value) {
			d.fail(item.Line, p, "want the name of an environment variable, such as CLOUD_ML_REGION")
			continue
		}
		v.SetMapIndex(reflect.ValueOf(item.Value), reflect.ValueOf("${"+item.Value+"}"))
	}
}

func (d *decoder) decodeList(n *yaml.Node, v reflect.Value, path string, raw bool) {
	if !d.want(n, yaml.SequenceNode, v.Type(), path) {
		return
	}
	if v.Type() == reflect.TypeFor[[]Evaluator]() && d.assertions != nil {
		d.decodeEvaluators(n, v, path, raw)
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, out.Index(i), fmt.Sprintf("%s[%d]", path, i), raw)
	}
	v.Set(out)
}

// eachPair calls fn for every key of mapping n, rejecting duplicate and
// non-scalar keys.
func (d *decoder) eachPair(n *yaml.Node, path string, fn func(key string, keyLine int, val *yaml.Node, p string)) {
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.fail(k.Line, path, "keys must be plain strings, got %s", describe(k))
			continue
		}
		p := joinPath(path, k.Value)
		if seen[k.Value] {
			d.fail(k.Line, p, "duplicate key")
			continue
		}
		seen[k.Value] = true
		d.setLine(p, k.Line)
		fn(k.Value, k.Line, val, p)
	}
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string, raw bool) {
	if !d.want(n, yaml.ScalarNode, v.Type(), path) {
		return
	}
	s := n.Value
	if !raw {
		var err error
		if s, err = Expand(s, d.getenv); err != nil {
			d.fail(n.Line, path, "%w", err)
			return
		}
		if v.Kind() == reflect.String && strings.Contains(n.Value, "${") {
			d.refs[path] = ref{raw: n.Value, expanded: s}
		}
	}
	if err := setScalar(v, s); err != nil {
		d.fail(n.Line, path, "want %s, got %q", kindName(v.Type()), s)
	}
}

// setScalar parses s into v by v's kind.
func setScalar(v reflect.Value, s string) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return err
		}
		v.SetInt(i)
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("not a finite number")
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, ok := map[string]bool{"true": true, "false": false}[strings.ToLower(strings.TrimSpace(s))]
		if !ok {
			return fmt.Errorf("not a boolean")
		}
		v.SetBool(b)
	default:
		return fmt.Errorf("unsupported kind %s", v.Kind())
	}
	return nil
}

// want reports whether n is of kind k, recording a type error if not.
func (d *decoder) want(n *yaml.Node, k yaml.Kind, t reflect.Type, path string) bool {
	if n.Kind == k {
		return true
	}
	d.fail(n.Line, path, "want %s, got %s", kindName(t), describe(n))
	return false
}

// fieldsOf returns the YAML keys of struct type t and their sorted names.
func fieldsOf(t reflect.Type) (map[string]field, []string) {
	fields := make(map[string]field, t.NumField())
	var names []string
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		fields[name] = field{index: i, keyed: strings.Contains(opts, "keyed"), raw: strings.Contains(opts, "raw")}
		names = append(names, name)
	}
	return fields, names
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// kindName says in a user's words what a value of type t looks like.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return kindName(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Int:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	default:
		return "a mapping"
	}
}

// describe says in a user's words what node n is.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return strconv.Quote(n.Value)
	}
}

// decodeEvaluators reads the evaluators list: names of evaluators, and
// assertions written as one-key mappings, which go to Config.Assertions.
func (d *decoder) decodeEvaluators(n *yaml.Node, v reflect.Value, path string, raw bool) {
	var out []Evaluator
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.setLine(p, item.Line)
		if item.Kind == yaml.MappingNode && len(item.Content) == 2 && item.Content[0].Value == "judge" {
			if v := item.Content[1]; v.Kind != yaml.ScalarNode || v.Value == "" {
				d.fail(v.Line, p+".judge", "want the name of a rubric under rubrics")
			} else {
				out = append(out, JudgeWith(v.Value))
			}
			continue
		}
		if item.Kind == yaml.MappingNode || item.Kind == yaml.ScalarNode && slices.Contains(AssertionKinds, item.Value) {
			if a, ok := d.decodeAssertion(item, p); ok {
				*d.assertions = append(*d.assertions, a)
			}
			continue
		}
		var e Evaluator
		d.decode(item, reflect.ValueOf(&e).Elem(), p, raw)
		out = append(out, e)
	}
	v.Set(reflect.ValueOf(out))
}
