package config

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"assay"
)

// ErrUnsetVariable is wrapped by the error of a ${NAME} reference whose
// variable is unset or empty and has no default.
var ErrUnsetVariable = errors.New("not set")

// Expand replaces ${NAME} and ${NAME:-default} references in s with values
// from getenv. getenv cannot tell an unset variable from an empty one, so an
// empty value counts as unset: the default is used if there is one, and
// otherwise the reference is an error wrapping ErrUnsetVariable. $${ stands
// for a literal ${. A $ not followed by { is kept as it is.
func Expand(s string, getenv func(string) string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		s = s[i:]
		switch {
		case strings.HasPrefix(s, "$${"):
			b.WriteString("${")
			s = s[3:]
		case strings.HasPrefix(s, "${"):
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return "", fmt.Errorf("unclosed reference %q (write $${ for a literal ${)", s)
			}
			v, err := lookup(s[2:end], getenv)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			s = s[end+1:]
		default:
			b.WriteByte('$')
			s = s[1:]
		}
	}
}

// ReferencedNames are the variables s refers to with ${NAME} or
// ${NAME:-default}, in order ($${ is no reference).
func ReferencedNames(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		if i > 0 && s[i-1] == '$' {
			s = s[i+2:]
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return out
		}
		name, _, _ := strings.Cut(s[i+2:i+end], ":-")
		if validVarName(name) {
			out = append(out, name)
		}
		s = s[i+end+1:]
	}
}

// lookup resolves the inside of one ${...}: NAME or NAME:-default.
func lookup(ref string, getenv func(string) string) (string, error) {
	name, def, hasDef := strings.Cut(ref, ":-")
	if !validVarName(name) {
		return "", fmt.Errorf("bad reference ${%s}: want ${NAME} or ${NAME:-default}", ref)
	}
	if v := getenv(name); v != "" {
		return v, nil
	}
	if hasDef {
		return def, nil
	}
	return "", &UnsetError{Name: name}
}

// UnsetError is a ${NAME} reference to a variable that is unset or empty,
// without a default. It is ErrUnsetVariable for errors.Is.
type UnsetError struct{ Name string }

func (e *UnsetError) Error() string {
	return fmt.Sprintf("environment variable %s is not set (write ${%s:-value} for a default)", e.Name, e.Name)
}

// Is makes errors.Is(err, ErrUnsetVariable) hold.
func (e *UnsetError) Is(target error) bool { return target == ErrUnsetVariable }

func validVarName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ResolveMCPServer expands the ${...} references an MCP server keeps until a
// run starts: in its command, args, env values, URL and header values. The
// result holds secrets: hand it to the MCP client and nothing else.
func ResolveMCPServer(s assay.MCPServer, getenv func(string) string) (assay.MCPServer, error) {
	var errs []error
	x := func(field, v string) string {
		out, e := Expand(v, getenv)
		if e != nil {
			errs = append(errs, fmt.Errorf("mcp server %s: %s: %w", s.Name, field, e))
		}
		return out
	}
	out := s
	out.Command = x("command", s.Command)
	out.URL = x("url", s.URL)
	if s.Args != nil {
		out.Args = make([]string, len(s.Args))
		for i, a := range s.Args {
			out.Args[i] = x(fmt.Sprintf("args[%d]", i), a)
		}
	}
	out.Env = expandValues(s.Env, "env", x)
	out.Headers = expandValues(s.Headers, "headers", x)
	if len(errs) > 0 {
		return assay.MCPServer{}, errors.Join(errs...)
	}
	return out, nil
}

func expandValues(m map[string]string, field string, x func(field, v string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = x(field+"."+k, v)
	}
	return out
}
