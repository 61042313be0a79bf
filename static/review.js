// Keyboard review of a sample's scores: j/k move between scores, a agrees,
// a digit overrides with that value, n writes a note, u undoes the last
// verdict, ] opens the next sample in the review queue. Verdicts go through
// htmx without reloading; the forms work without this script. The focused
// score is outlined; after a verdict the focus moves to the next score and
// the bar at the bottom (#review-said) says what was recorded and what is
// next. n notes the score just decided (until the focus is moved by hand),
// else the focused one, and says which; Enter in a note saves the note
// alone, never a verdict. A browser without a reviewer's name is asked it
// once, at the top (#reviewer-name); every verdict carries it.
(function () {
  var current = -1;
  var focusOnKeyUp = null;
  var decided = null; // {id, metric, prior}: the last verdict given here, while n and u are about it
  var sent = null;    // {kind: "verdict" | "note" | "undo", id}: the request under way
  document.addEventListener("keyup", function () {
    if (focusOnKeyUp) { focusOnKeyUp.focus(); focusOnKeyUp = null; }
  });
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("tr.score.reviewable")); }
  function metricOf(r) { var c = r && r.querySelector("td"); return c ? c.textContent.trim() : ""; }
  function say(text) { var s = document.getElementById("review-said"); if (s) s.textContent = text; }
  function select(i) {
    var list = rows();
    if (!list.length) return;
    current = Math.max(0, Math.min(i, list.length - 1));
    list.forEach(function (r, j) { r.classList.toggle("current", j === current); });
    list[current].scrollIntoView({ block: "center" });
  }
  function row() { var list = rows(); return current >= 0 ? list[current] : null; }
  function byID(id) { return document.getElementById("score-" + id); }
  function typing(t) { return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT"); }
  function askedName() {
    var name = document.getElementById("reviewer-name");
    return name && name.value.trim() === "" ? name : null;
  }
  // mine is the reader's own verdict on a row, as its data says, or null.
  function mine(r) {
    var v = r.querySelector(".verdict.mine");
    return v ? { verdict: v.dataset.verdict, value: v.dataset.value, note: v.dataset.note } : null;
  }
  function scoreID(r) { return r.getAttribute("data-score"); }

  // The name asked at the top goes with every verdict; none goes without it.
  document.body.addEventListener("htmx:configRequest", function (e) {
    var name = document.getElementById("reviewer-name");
    if (!name || !e.detail.elt.closest || !e.detail.elt.closest(".review-form")) return;
    if (name.value.trim() === "") { e.preventDefault(); name.focus(); return; }
    e.detail.parameters["reviewer"] = name.value.trim();
  });

  // verdict gives r's form a verdict: agree, or value.
  function verdict(r, value) {
    var form = r.querySelector(".review-form");
    decided = { id: scoreID(r), metric: metricOf(r), prior: mine(r) };
    sent = { kind: "verdict", id: decided.id };
    if (value === null) { form.querySelector(".agree").click(); return; }
    form.querySelector(".override-value").value = value;
    form.querySelector(".override").click();
  }
  // saveNote keeps the note of form's row with the verdict it has.
  function saveNote(form) {
    var r = form.closest("tr.score");
    var button = form.querySelector(".save-note");
    if (!button) { say("A note goes with a verdict: press a, or a value, for " + metricOf(r) + " first."); return; }
    sent = { kind: "note", id: scoreID(r) };
    button.click();
  }
  // undo takes the last verdict given here back: the one before it again,
  // or none.
  function undo() {
    var r = decided && byID(decided.id);
    if (!r) { say("Nothing to undo."); return; }
    var form = r.querySelector(".review-form"), prior = decided.prior;
    sent = { kind: "undo", id: decided.id };
    if (prior) {
      form.querySelector(".note").value = prior.note || "";
      if (prior.verdict === "override") {
        form.querySelector(".override-value").value = prior.value;
        form.querySelector(".override").click();
      } else {
        form.querySelector(".agree").click();
      }
    } else if (form.querySelector(".withdraw")) {
      form.querySelector(".withdraw").click();
    }
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (typing(e.target)) {
      if (e.target.id === "reviewer-name" && e.key === "Enter" && e.target.value.trim() !== "") {
        e.preventDefault();
        e.target.blur();
        if (current < 0) select(0);
        return;
      }
      if (e.key === "Escape") e.target.blur();
      if (e.key === "Enter" && e.target.classList.contains("note")) {
        e.preventDefault();
        e.target.blur();
        saveNote(e.target.form);
      }
      return;
    }
    var r = row();
    if (e.key === "j" || e.key === "k") {
      select(current + (e.key === "j" ? 1 : -1));
      decided = decided && { id: decided.id, metric: decided.metric, prior: decided.prior, moved: true };
      e.preventDefault();
      return;
    }
    if (e.key === "]") {
      var next = document.getElementById("next-in-queue");
      if (next) { window.location.href = next.href; e.preventDefault(); }
      return;
    }
    if (e.key === "u") { e.preventDefault(); undo(); return; }
    if (!r) { if ("an0123456789".indexOf(e.key) >= 0) select(0); r = row(); if (!r) return; }
    if (!r.querySelector(".review-form")) return;
    var name = askedName();
    if (name && "an0123456789".indexOf(e.key) >= 0) { e.preventDefault(); focusOnKeyUp = name; return; }
    if (e.key === "a") { e.preventDefault(); verdict(r, null); return; }
    if (e.key === "n") {
      // The score just decided, unless the focus was moved since; the note
      // field is focused once the key is released, so that its letter does
      // not land in it.
      e.preventDefault();
      var target = decided && !decided.moved && byID(decided.id) || r;
      say("Note for " + metricOf(target) + ": Enter saves it with your verdict, Escape leaves it.");
      focusOnKeyUp = target.querySelector(".note");
      return;
    }
    if (/^[0-9]$/.test(e.key)) { e.preventDefault(); verdict(r, e.key); }
  });

  // After a request the row is swapped: once its form takes requests again
  // (htmx settles new content a moment after the swap), say what happened,
  // and where the focus is now.
  document.body.addEventListener("htmx:afterSettle", function (e) {
    var target = e.detail.target && e.detail.target.id || "";
    if (target.indexOf("score-") !== 0) return; // another part of the page
    var list = rows(), what = sent && "score-" + sent.id === target ? sent : null;
    if (what) sent = null;
    var i = list.indexOf(document.getElementById(target));
    if (i < 0) i = current;
    var r = list[i];
    var failed = r && r.querySelector(".review-error");
    if (!r || failed || !what) { select(i); if (failed) say("Not recorded: " + failed.textContent.trim()); return; }
    var metric = metricOf(r), v = mine(r);
    if (what.kind === "note") { select(current); say("Note saved for " + metric + "."); return; }
    if (what.kind === "undo") {
      select(i);
      decided = null;
      say("Undone: " + metric + (v ? " is back to " + (v.verdict === "override" ? "→ " + v.value : "✓ agrees") : " has no verdict of yours") + ".");
      return;
    }
    r.classList.add("decided");
    var recorded = "Recorded " + (v && v.verdict === "override" ? "→ " + v.value : "✓ agrees") + " for " + metric + ".";
    if (i + 1 < list.length) {
      select(i + 1);
      say(recorded + " Next: " + metricOf(list[i + 1]) + " · n notes " + metric + " · u undoes.");
    } else {
      select(i);
      say(recorded + " That was the last score here: ] opens the next sample · n notes " + metric + " · u undoes.");
    }
  });
})();
