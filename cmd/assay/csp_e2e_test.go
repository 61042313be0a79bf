package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestContentSecurityPolicyHolds loads a report with its charts under a
// policy that allows no inline script, then shows that the browser does
// enforce it: an inline script put into the page does not run, and its
// violation is reported (which fails every other browser test).
func TestContentSecurityPolicyHolds(t *testing.T) {
	db, id := finishedRun(t, 3)
	base := startServer(t, "--db", db)
	resp, err := http.Get(base + "/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	policy := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(policy, "script-src 'self';") || strings.Contains(policy, "script-src 'self' 'unsafe-inline'") {
		t.Fatalf("policy %q lets inline scripts run", policy)
	}
	ctx := newBrowser(t)
	err = chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, id)),
		chromedp.WaitVisible(chromedp.CSS("#summary")),
		chromedp.Poll[chromedp.Void](`document.readyState === 'complete'`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('.chart').scrollIntoView(); true`),
		chromedp.WaitVisible(chromedp.CSS(".chart canvas")), // report.js drew the chart reached
	)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	if v := cspViolations(ctx); len(v) > 0 {
		t.Fatalf("the report page violates its own policy: %q", v)
	}
	ran, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const s = document.createElement("script");
		s.textContent = "window.__inline = true";
		document.body.appendChild(s);
		return window.__inline === true;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("an inline script ran")
	}
	for len(cspViolations(ctx)) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the blocked inline script was not reported")
		}
		chromedp.Run(ctx, chromedp.Evaluate[bool](`true`)) // let the browser's events arrive
	}
}
