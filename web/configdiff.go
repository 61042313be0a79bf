package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"assay/readmodel"
	"assay/templates"
)

// configDiff lists the settings in which two runs differ: their configs as
// kept (references, never secrets) and their conditions, flattened to one
// line per key. Same counts the settings they share.
func configDiff(a, b *readmodel.Viewed) (rows []templates.ConfigDiffRow, same int, err error) {
	fa, err := flatConfig(a)
	if err != nil {
		return nil, 0, err
	}
	fb, err := flatConfig(b)
	if err != nil {
		return nil, 0, err
	}
	keys := slices.Sorted(maps.Keys(fa))
	for k := range fb {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		va, oka := fa[k]
		vb, okb := fb[k]
		if oka && okb && va == vb {
			same++
			continue
		}
		row := templates.ConfigDiffRow{Key: k, A: va, B: vb}
		if !oka {
			row.A = "—"
		}
		if !okb {
			row.B = "—"
		}
		rows = append(rows, row)
	}
	return rows, same, nil
}

// flatConfig is a run's settings as key → value: its config's keys, and
// conditions.NAME.… for each of its conditions.
func flatConfig(r *readmodel.Viewed) (map[string]string, error) {
	raw, err := r.Scope.Run.Config.Redacted()
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	delete(tree, "name") // a run's name is not a setting
	delete(tree, "conditions")
	out := map[string]string{}
	flatten("", tree, out)
	for _, c := range r.Scope.Run.Conditions {
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("condition %s: %w", c.Name, err)
		}
		var ct map[string]any
		if err := json.Unmarshal(raw, &ct); err != nil {
			return nil, fmt.Errorf("condition %s: %w", c.Name, err)
		}
		delete(ct, "name")
		flatten("conditions."+c.Name, ct, out)
	}
	return out, nil
}

func flatten(prefix string, v any, out map[string]string) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			flatten(join(k), sub, out)
		}
	case []any:
		if len(x) == 0 {
			out[prefix] = "[]"
		}
		for i, sub := range x {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), sub, out)
		}
	case string:
		if strings.HasSuffix(prefix, "url") {
			x = readmodel.WithoutCredentials(x) // a URL's user and password are never shown
		}
		out[prefix] = x
	case nil:
		// unset: absent
	default:
		b, _ := json.Marshal(x)
		out[prefix] = strings.TrimSpace(string(b))
	}
}
