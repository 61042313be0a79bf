package llmtest

import (
	"encoding/json"
	"sync/atomic"
)

// Text returns a handler that always answers content.
func Text(content string) Handler {
	return func(*ChatRequest) Reply { return Reply{Content: content} }
}

// Script returns a handler that gives replies in order, one per call, and
// then repeats the last. It counts its own calls, so requests answered by
// an injected fault or by WithoutStructuredOutput do not use up a reply.
func Script(replies ...Reply) Handler {
	var calls atomic.Int64
	return func(*ChatRequest) Reply {
		if len(replies) == 0 {
			return Reply{}
		}
		i := min(int(calls.Add(1))-1, len(replies)-1)
		return replies[i]
	}
}

// Judge returns a handler that answers as an LLM judge: a JSON object valid
// under the schema the request carries (see JudgeAnswer). A request without
// a schema gets a polite non-JSON answer, as a confused model would give.
func Judge(values map[string]any) Handler {
	return func(req *ChatRequest) Reply {
		answer, ok := JudgeAnswer(req, values)
		if !ok {
			return Reply{Content: "I need a JSON schema to answer as a judge."}
		}
		return Reply{Content: answer}
	}
}

// JudgeAndAgent sends requests that carry an answer schema (in
// response_format or in the prompt) to judge and all others to agent, so
// one server can play both parts of a run.
func JudgeAndAgent(judge, agent Handler) Handler {
	return func(req *ChatRequest) Reply {
		if _, _, ok := req.Schema(); ok {
			return judge(req)
		}
		return agent(req)
	}
}

// JudgeAnswer builds an answer valid under req's schema: values[name] for
// the properties named there, and for the others the last enum value or
// the maximum of a number, a short sentence for a string, an empty list for
// an array. Asked through response_format, the answer is bare JSON; asked
// through the prompt, it comes in a ```json fence after a line of prose,
// as chat models tend to answer. ok is false when req carries no schema.
func JudgeAnswer(req *ChatRequest, values map[string]any) (answer string, ok bool) {
	schema, structured, ok := req.Schema()
	if !ok {
		return "", false
	}
	obj := fill(schema, values)
	if structured {
		b, _ := json.Marshal(obj)
		return string(b), true
	}
	b, _ := json.MarshalIndent(obj, "", "  ")
	return "Here is my evaluation.\n\n```json\n" + string(b) + "\n```\n", true
}

// fill builds an object for an object schema.
func fill(schema, values map[string]any) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	out := make(map[string]any, len(props))
	for name, p := range props {
		if v, ok := values[name]; ok {
			out[name] = v
			continue
		}
		ps, _ := p.(map[string]any)
		out[name] = example(name, ps, values)
	}
	return out
}

// example is a valid value for one property schema.
func example(name string, p, values map[string]any) any {
	if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
		return enum[len(enum)-1]
	}
	switch p["type"] {
	case "integer", "number":
		if m, ok := p["maximum"]; ok {
			return m
		}
		return 1
	case "string":
		return "The response agrees with the reference on " + name + "."
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return fill(p, values)
	}
	return nil
}
