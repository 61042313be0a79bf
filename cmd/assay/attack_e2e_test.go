package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"assay"
	"assay/store/ingest"
	"assay/tally"
)

// attackPage is a hostile page. Served under a name that the browser resolves
// to 127.0.0.1 (as after DNS rebinding), it reads the run form from "its own"
// origin to get a form token, then posts a command agent run; it also posts
// straight to assay's real address, cross-origin, and submits a plain form
// there. It writes what each attempt got into #done.
const attackPage = `<!doctype html><html><body>
<iframe name="sink" id="sink"></iframe>
<form id="plain" method="post" action="%[1]s/runs" target="sink">%[2]s</form>
<pre id="done"></pre>
<script>
const fields = %[3]s;
async function attack() {
	const log = [];
	let token = "";
	try {
		const r = await fetch("/runs/new");
		const m = (await r.text()).match(/name="_csrf" value="([^"]+)"/);
		token = m ? m[1] : "";
		log.push("rebound GET " + r.status + (token ? " with a form token" : ""));
	} catch (e) { log.push("rebound GET failed"); }
	try {
		const r = await fetch("/runs", {method: "POST", body: new URLSearchParams({...fields, _csrf: token})});
		log.push("rebound POST " + r.status);
	} catch (e) { log.push("rebound POST failed"); }
	try {
		await fetch("%[1]s/runs", {method: "POST", mode: "no-cors", body: new URLSearchParams({...fields, _csrf: token})});
		log.push("cross-origin POST sent");
	} catch (e) { log.push("cross-origin POST failed"); }
	document.getElementById("sink").onload = () => {
		log.push("plain form answered");
		document.getElementById("done").textContent = log.join("; ");
	};
	document.getElementById("plain").submit();
}
attack();
</script></body></html>`

func TestBrowserAnotherOriginCannotStartARun(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "assay.db")
	marker := filepath.Join(t.TempDir(), "pwned")
	seedDatasetAndCondition(t, dbPath)
	// The worst case: a server that lets its own form start commands.
	base := startServer(t, "--db", dbPath, "--allow-command-agents")
	target, _ := url.Parse(base)

	fields := url.Values{"dataset": {"1"}, "condition": {"1"}, "agent_type": {"command"},
		"agent_command": {"/bin/sh\n-c\ntouch " + marker}, "repetitions": {"1"}, "concurrency": {"1"},
		"evaluator": {"rubric"}, "judge_model": {"j"}, "judge_temperature": {"0"}, "judge_seed": {"1"},
		"judge_sample_rate": {"1"}, "judge_repetitions": {"1"}, "agent_timeout": {"10"}}
	var inputs, js strings.Builder
	js.WriteString("{")
	for k, vs := range fields {
		fmt.Fprintf(&inputs, `<input type="hidden" name="%s" value="%s">`, k, vs[0])
		fmt.Fprintf(&js, "%q: %q,", k, vs[0])
	}
	js.WriteString("}")
	page := fmt.Sprintf(attackPage, base, inputs.String(), js.String())

	// The attacker's server answers its page at /, and passes everything else
	// to assay with the Host unchanged: what the browser meets once the
	// attacker's name resolves to 127.0.0.1.
	proxy := httputil.NewSingleHostReverseProxy(target)
	rebound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, page)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer rebound.Close()
	_, port, _ := strings.Cut(strings.TrimPrefix(rebound.URL, "http://"), ":")

	ctx := newBrowser(t, chromedp.Flag("host-resolver-rules", "MAP attacker.test 127.0.0.1"))
	var log string
	err := chromedp.Do(ctx,
		chromedp.Navigate("http://attacker.test:"+port+"/"),
		chromedp.WaitVisible(chromedp.CSS("#done:not(:empty)")),
	)
	if err == nil {
		log = textOf(t, ctx, "#done")
	}
	if err != nil {
		t.Fatalf("the attack page did not finish: %v", err)
	}
	t.Logf("attack: %s", log)
	if strings.Contains(log, "with a form token") || !strings.Contains(log, "rebound GET 421") {
		t.Errorf("the rebound page read the run form: %s", log)
	}
	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if runs, _ := tally.Of(db).Runs(context.Background()); len(runs) != 0 {
		t.Errorf("the attack made %d runs", len(runs))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the attack's command ran")
	}
	// The attack page's frame of assay was refused by assay's policy: that
	// violation is the policy at work; any other is a defect.
	for _, v := range cspViolations(ctx) {
		if !strings.Contains(v, "frame-ancestors 'none'") {
			t.Errorf("policy violation: %s", v)
		}
	}
}

// seedDatasetAndCondition stores a two-sample qa dataset (id 1) and a condition (id 1).
func seedDatasetAndCondition(t *testing.T, dbPath string) {
	t.Helper()
	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	data := []byte("{\"question\": \"2+2?\", \"answer\": \"4\"}\n{\"question\": \"3+3?\", \"answer\": \"6\"}\n")
	if _, _, err := ingest.Import(context.Background(), db, data, ingest.Options{Filename: "qa.jsonl"}, "qa"); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCondition(context.Background(), &assay.Condition{Name: "baseline", MCPServers: []assay.MCPServer{}}); err != nil {
		t.Fatal(err)
	}
}
