package eee

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Fields the files hold that assay does not read are kept with the run
// (store.RunImport.Extra), so that nothing another tool wrote is lost by
// an import: the aggregate's by their path in it, each instance line's by
// its number and path.

// maxExtra bounds what is kept; past it, fields are counted, not kept.
const maxExtra = 16 << 20

// extra gathers the unread fields of an import.
type extra struct {
	results   map[string]json.RawMessage
	instances map[string]map[string]json.RawMessage // by line number
	size      int
	leftOut   int
}

// keepResults keeps what the aggregate file holds beyond what v reads.
func (x *extra) keepResults(raw []byte, v any) {
	unread(raw, reflect.TypeOf(v), "", func(path string, val json.RawMessage) {
		if x.fits(len(path) + len(val)) {
			if x.results == nil {
				x.results = map[string]json.RawMessage{}
			}
			x.results[path] = val
		}
	})
}

// keepLine keeps the fields of an instance line that lineFields left unread.
func (x *extra) keepLine(line int, fields map[string]json.RawMessage) {
	if len(fields) == 0 {
		return
	}
	size := 0
	for k, v := range fields {
		size += len(k) + len(v)
	}
	if !x.fits(size) {
		return
	}
	if x.instances == nil {
		x.instances = map[string]map[string]json.RawMessage{}
	}
	x.instances[strconv.Itoa(line)] = fields
}

func (x *extra) fits(n int) bool {
	if x.size+n > maxExtra {
		x.leftOut++
		return false
	}
	x.size += n
	return true
}

// count is how many fields the files held unread.
func (x *extra) count() int {
	n := len(x.results) + x.leftOut
	for _, f := range x.instances {
		n += len(f)
	}
	return n
}

// JSON is what is kept, or nil when the files held nothing unread.
func (x *extra) JSON() json.RawMessage {
	if x.results == nil && x.instances == nil && x.leftOut == 0 {
		return nil
	}
	out := struct {
		Results   map[string]json.RawMessage            `json:"results,omitempty"`
		Instances map[string]map[string]json.RawMessage `json:"instances,omitempty"`
		LeftOut   int                                   `json:"left_out,omitempty"`
	}{x.results, x.instances, x.leftOut}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

// lineFields are the fields of an instance line that v does not read.
func lineFields(raw []byte, v any) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	unread(raw, reflect.TypeOf(v), "", func(path string, val json.RawMessage) {
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[path] = val
	})
	return out
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// unread calls fn with the path and value of each field of raw that a
// value of type t does not read, in the order of the keys.
func unread(raw json.RawMessage, t reflect.Type, path string, fn func(path string, v json.RawMessage)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return // it reads what it likes
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return
		}
		known := fieldsOf(t)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			ft, ok := known[strings.ToLower(k)]
			if !ok {
				fn(p, obj[k])
				continue
			}
			unread(obj[k], ft, p, fn)
		}
	case reflect.Slice, reflect.Array:
		if !nested(t.Elem()) {
			return
		}
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) != nil {
			return
		}
		for i, v := range arr {
			unread(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case reflect.Map:
		if !nested(t.Elem()) {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			unread(obj[k], t.Elem(), path+"."+k, fn)
		}
	}
}

// nested says whether a value of type t may hold fields it does not read.
func nested(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Slice, reflect.Array, reflect.Map:
		return nested(t.Elem())
	}
	return false
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// fieldsOf are the JSON names t reads (lower case, as encoding/json
// matches them) and their types; embedded structs' fields are t's.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range fieldsOf(ft) {
					m[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		m[strings.ToLower(name)] = f.Type
	}
	fieldCache.Store(t, m)
	return m
}
