package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"assay/internal/fixture"
	"assay/web"
)

// mathRows is n GSM8K-shaped samples, the answer of each ending in #### N.
func mathRows(n int) []byte {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "{\"question\": \"Ann has %d apples and buys %d more. How many has she?\", \"answer\": \"%d+%d=<<%d+%d=%d>>%d\\n#### %d\"}\n",
			i, i, i, i, i, i, 2*i, 2*i, 2*i)
	}
	return []byte(b.String())
}

func TestUploadShowsCountAndHash(t *testing.T) {
	data := mathRows(50)
	sum := sha256.Sum256(data)
	checkUpload(t, "math.jsonl", data, "50", hex.EncodeToString(sum[:]))
}

// The same over GSM8K's own rows, whose hash is published with the conformance set.
func TestUploadGSM8KSample(t *testing.T) {
	data := fixture.ReadShared(t, "gsm8k_sample.jsonl")
	checkUpload(t, "gsm8k_sample.jsonl", data, "50", "4718cc77e7d7b11c3fc2a049d7a0dbda483fc4bd37e5432488c9f9d0f2cf181a")
}

// checkUpload uploads a file of 50 samples, then the same bytes again, and
// reads the dataset page and its second page.
func checkUpload(t *testing.T, name string, data []byte, count, sha string) {
	b, db := newServer(t, web.Config{})
	b.get("/datasets")
	resp, doc := b.upload(name, data, nil)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Request.URL.Path, "/datasets/") {
		t.Fatalf("upload should land on the dataset page, got %d %s", resp.StatusCode, resp.Request.URL)
	}
	if got := text(doc, "#sample-count"); got != count {
		t.Errorf("sample count: got %q", got)
	}
	if got := text(doc, "#sha256"); got != sha {
		t.Errorf("sha256: got %q, want %s", got, sha)
	}
	if n := doc.Find("#samples tbody tr").Length(); n != 25 {
		t.Errorf("first page shows %d samples, want 25", n)
	}
	first := resp.Request.URL.Path

	resp, doc = b.upload("copy.jsonl", data, map[string]string{"name": "another name"})
	if resp.Request.URL.Path != first || !strings.Contains(text(doc, ".flash"), "uploaded before") {
		t.Fatalf("the same bytes should lead to the existing dataset, got %s %q", resp.Request.URL, text(doc, ".flash"))
	}
	if list, _ := db.Datasets(context.Background()); len(list) != 1 {
		t.Fatalf("want 1 dataset, got %d", len(list))
	}
	_, doc = b.get(first + "?page=2")
	if n := doc.Find("#samples tbody tr").Length(); n != 25 || !strings.Contains(text(doc, ".pager"), "Page 2 of 2") {
		t.Errorf("page 2: %d rows, pager %q", n, text(doc, ".pager"))
	}
}

func TestUploadErrorsStoreNothing(t *testing.T) {
	cases := []struct {
		name, file, body, want string
		status                 int
	}{
		{"empty", "e.jsonl", "", "empty", 422},
		{"not json", "q.jsonl", "{\"question\":\"a\",\"answer\":\"b\"}\n{oops\n", "line 2", 422},
		{"missing answer", "q.jsonl", "{\"question\":\"a\",\"answer\":\"b\"}\n{\"question\":\"c\"}\n", "line 2", 422},
		{"bad letter", "m.jsonl", "{\"question\":\"q\",\"choices\":[\"a\",\"b\",\"c\",\"d\"],\"answer\":\"E\"}\n", "A–D", 422},
		{"binary", "b.jsonl", "\x00\x01\x02binary", "binary", 422},
		{"far too large", "huge.jsonl", strings.Repeat("{\"question\":\"q\",\"answer\":\"a\"}\n", 100000), "larger than the upload limit of 1 MiB", 413},
		{"too large", "big.jsonl", strings.Repeat("{\"question\":\"q\",\"answer\":\"a\"}\n", 3000), "larger than the upload limit of 1 MiB", 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, db := newServer(t, web.Config{MaxUpload: 1 << 20})
			b.get("/datasets")
			body := tc.body
			if tc.name == "too large" {
				body = strings.Repeat(body, 15)
			}
			resp, doc := b.upload(tc.file, []byte(body), map[string]string{"name": "kept name"})
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if list, _ := db.Datasets(context.Background()); len(list) != 0 {
				t.Errorf("a failed upload stored %d datasets", len(list))
			}
			if tc.name == "far too large" {
				// Past the limit's slack the form cannot be read at all: a page says why.
				if msg := text(doc, "main"); !strings.Contains(msg, tc.want) {
					t.Errorf("page %q should contain %q", msg, tc.want)
				}
				return
			}
			msg := text(doc, "#upload-error")
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "Nothing was imported") {
				t.Errorf("message %q should contain %q", msg, tc.want)
			}
			if v, _ := doc.Find("#name").Attr("value"); v != "kept name" {
				t.Errorf("the form should keep the user's input, name=%q", v)
			}
		})
	}
}

func TestDatasetTextIsEscaped(t *testing.T) {
	b, _ := newServer(t, web.Config{})
	b.get("/datasets")
	data := `{"question": "<script>alert(1)</script> and <img src=x onerror=alert(2)>", "answer": "[x](javascript:alert(3))"}` + "\n"
	resp, doc := b.upload("xss.jsonl", []byte(data), map[string]string{"name": "<b>bold</b>"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if doc.Find("main script").Length() != 0 || doc.Find("main img").Length() != 0 || doc.Find("main b:contains(bold)").Length() != 0 {
		t.Fatal("dataset text was rendered as HTML")
	}
	if !strings.Contains(text(doc, "#samples"), "<script>alert(1)</script>") {
		t.Fatal("the question should show as text")
	}
}

func TestNotFound(t *testing.T) {
	b, _ := newServer(t, web.Config{})
	for _, path := range []string{"/datasets/999", "/datasets/abc", "/conditions/5/edit"} {
		resp, _ := b.get(path)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", path, resp.StatusCode)
		}
	}
}
