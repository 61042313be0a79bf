package scoring

import (
	"regexp"
	"strings"
)

// ExtractCompletion turns a response to a HumanEval prompt into the program
// that defines entryPoint, ready for the tests to be appended.
//
// The code is the response's fenced block (```python …```) when it has one,
// preferring a block that defines entryPoint, else the response itself. When
// the code defines entryPoint it is a full function: the program is the
// prompt's context before its own def (imports, helper functions) followed by
// the code. Otherwise the code is the function's body: the program is the
// prompt followed by the body, indented as a body when the model dropped the
// indentation.
func ExtractCompletion(prompt, response, entryPoint string) string {
	code := codeOf(response, entryPoint)
	def := defines(entryPoint)
	if def.MatchString(code) {
		context := prompt
		if loc := def.FindStringIndex(prompt); loc != nil {
			context = prompt[:loc[0]]
		}
		return withNewline(context) + dedent(code)
	}
	return withNewline(prompt) + indentBody(code)
}

// defines matches the line that defines function name.
func defines(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*def[ \t]+` + regexp.QuoteMeta(name) + `[ \t]*\(`)
}

// fence matches a fenced code block; group 1 is its language, group 2 its
// content. A block left open at the end of the response runs to the end.
var fence = regexp.MustCompile("(?s)```[ \\t]*([\\w+-]*)[^\\n]*\\n(.*?)(?:```|$)")

// codeOf returns the code in response: the fenced block that defines
// entryPoint, else the first Python (or untagged) block, else the first
// block, else the whole response without its leading blank lines.
func codeOf(response, entryPoint string) string {
	blocks := fence.FindAllStringSubmatch(response, -1)
	if len(blocks) == 0 {
		return trimBlankLines(response)
	}
	def := defines(entryPoint)
	for _, b := range blocks {
		if def.MatchString(b[2]) {
			return trimBlankLines(b[2])
		}
	}
	for _, b := range blocks {
		switch strings.ToLower(b[1]) {
		case "", "python", "py", "python3":
			return trimBlankLines(b[2])
		}
	}
	return trimBlankLines(blocks[0][2])
}

// trimBlankLines drops leading blank lines, keeping the first code line's
// indentation, and trailing space.
func trimBlankLines(s string) string {
	for {
		line, rest, found := strings.Cut(s, "\n")
		if !found || strings.TrimSpace(line) != "" {
			break
		}
		s = rest
	}
	return strings.TrimRight(s, " \t\r\n") + "\n"
}

// withNewline ends s with a line break.
func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// indentOf returns the width of a line's leading spaces and tabs.
func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " \t"))
}

// dedent removes the indentation common to all non-blank lines.
func dedent(code string) string {
	lines := strings.Split(code, "\n")
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && (common < 0 || indentOf(l) < common) {
			common = indentOf(l)
		}
	}
	if common <= 0 {
		return code
	}
	for i, l := range lines {
		if len(l) >= common {
			lines[i] = l[common:]
		}
	}
	return strings.Join(lines, "\n")
}

// indentBody makes code a function body. A body already indented is left
// alone. One whose first line alone lost its indentation (a trimmed
// response) gets that line indented. One written at the left margin is
// indented as a whole.
func indentBody(code string) string {
	lines := strings.Split(code, "\n")
	if indentOf(lines[0]) > 0 {
		return code
	}
	rest := nonBlank(lines[1:])
	trimmedFirst := true
	for _, l := range rest {
		trimmedFirst = trimmedFirst && indentOf(l) >= 4
	}
	if len(rest) > 0 && strings.HasSuffix(strings.TrimSpace(lines[0]), ":") && indentOf(rest[0]) < 8 {
		trimmedFirst = false // the block opened by the first line is at 4: all of it lost 4
	}
	for i, l := range lines {
		if strings.TrimSpace(l) != "" && (i == 0 || !trimmedFirst) {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n")
}

// nonBlank returns the lines that hold more than whitespace.
func nonBlank(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
