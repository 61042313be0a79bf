package ingest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// qaFile is n question/answer rows as a JSON array (one item per line) or JSONL.
func qaFile(n int, array bool) []byte {
	var b strings.Builder
	if array {
		b.WriteString("[\n")
	}
	for i := range n {
		if array && i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id": "q%d", "question": "What is %d + %d?", "answer": "%d"}`, i, i, i, 2*i)
		if !array {
			b.WriteByte('\n')
		}
	}
	if array {
		b.WriteString("\n]\n")
	}
	return []byte(b.String())
}

// BenchmarkParse prints the time per item of a JSON array and of JSONL at
// 10k and 40k items: flat per item when parsing is linear.
func BenchmarkParse(b *testing.B) {
	for _, array := range []bool{true, false} {
		for _, n := range []int{10_000, 40_000} {
			name, file := "jsonl", "qa.jsonl"
			if array {
				name, file = "json_array", "qa.json"
			}
			data := qaFile(n, array)
			b.Run(fmt.Sprintf("%s/%dk", name, n/1000), func(b *testing.B) {
				start := time.Now()
				for range b.N {
					if _, err := Parse(data, Options{Filename: file}); err != nil {
						b.Fatal(err)
					}
				}
				per := time.Since(start) / time.Duration(b.N)
				b.ReportMetric(float64(per.Microseconds())/float64(n), "µs/item")
			})
		}
	}
}

func TestJSONArrayErrorsKeepTheirLine(t *testing.T) {
	data := qaFile(3000, true)
	broken := strings.Replace(string(data), `"question": "What is 2500 + 2500?"`, `"question": "What is 2500 + 2500?`, 1)
	_, err := Parse([]byte(broken), Options{Filename: "qa.json"})
	if err == nil || !strings.Contains(err.Error(), "item 2501 (line 2502)") {
		t.Errorf("err = %v, want item 2501 on line 2502", err)
	}
	bad := strings.Replace(string(data), `{"id": "q2999"`, `["q2999"], {"id": "q2999"`, 1)
	if _, err := Parse([]byte(bad), Options{Filename: "qa.json"}); err == nil || !strings.Contains(err.Error(), "item 3000 (line 3001)") {
		t.Errorf("err = %v, want item 3000 on line 3001", err)
	}
}
