package judge

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// hostile are answers built to make a naive extraction try a decode at
// every brace, each reading to the end.
func hostile(size int) map[string]string {
	return map[string]string{
		"unclosed keys":   strings.Repeat(`{"k":`, size/5),
		"nested arrays":   strings.Repeat(`{"k":[`, size/6) + "x",
		"lone braces":     strings.Repeat("{", size),
		"closed but junk": strings.Repeat(`{"k":{`, size/12) + strings.Repeat("}", size/12) + "}",
	}
}

func TestExtractStopsWhenCancelled(t *testing.T) {
	for name, content := range hostile(5 << 20) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan string, 1)
			go func() {
				_, _, problem := rubricForm.read(ctx, content+rubricAnswer(5, 4, 3), "")
				done <- problem
			}()
			time.Sleep(20 * time.Millisecond) // let it start; it may already be done
			cancel()
			cancelled := time.Now()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the parse went on after cancellation")
			}
			if d := time.Since(cancelled); d > time.Second {
				t.Errorf("the parse stopped %s after cancellation, want within a second", d)
			}
		})
	}
}

func TestExtractFindsTheAnswerAfterSomeHostileText(t *testing.T) {
	for name, junk := range hostile(2 << 10) {
		if name == "closed but junk" || name == "lone braces" {
			continue // past the budget of work: the answer after them is not looked for, and the judge is asked again
		}
		t.Run(name, func(t *testing.T) {
			metrics, _, problem := rubricForm.read(context.Background(), junk+"\n"+rubricAnswer(5, 4, 3), "")
			if problem != "" || len(metrics) != 3 {
				t.Errorf("after 2 KiB of %s: %q", name, problem)
			}
		})
	}
}

func TestExtractSkipsStrayBracesInProse(t *testing.T) {
	prose := "In JS, `function f() { return \"}\"; }` and a set {a, b}; a quote \" opens nothing. {unclosed\n"
	metrics, _, problem := rubricForm.read(context.Background(), prose+rubricAnswer(5, 4, 3)+" {trailing", "")
	if problem != "" || len(metrics) != 3 {
		t.Errorf("the answer after stray braces: %q", problem)
	}
}

// BenchmarkExtract prints how long extraction takes on hostile answers of
// growing size: time per byte stays flat when it is linear.
func BenchmarkExtract(b *testing.B) {
	for _, size := range []int{256 << 10, 1 << 20, 5 << 20} {
		for name, content := range hostile(size) {
			b.Run(fmt.Sprintf("%s/%dKiB", strings.ReplaceAll(name, " ", "_"), size>>10), func(b *testing.B) {
				start := time.Now()
				for range b.N {
					rubricForm.read(context.Background(), content, "")
				}
				per := time.Since(start) / time.Duration(b.N)
				b.ReportMetric(float64(per.Nanoseconds())/float64(len(content)), "ns/byte")
			})
		}
	}
}
