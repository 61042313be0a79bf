// Keyboard review of a sample's scores: j/k move between scores, a agrees,
// a digit overrides with that value, n writes a note, ] opens the next
// sample in the review queue. Verdicts go through htmx without reloading;
// the forms work without this script. A browser without a reviewer's name
// is asked it once, at the top (#reviewer-name); every verdict carries it.
(function () {
  var current = -1;
  var focusOnKeyUp = null;
  document.addEventListener("keyup", function () {
    if (focusOnKeyUp) { focusOnKeyUp.focus(); focusOnKeyUp = null; }
  });
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("tr.score.reviewable")); }
  function select(i) {
    var list = rows();
    if (!list.length) return;
    current = Math.max(0, Math.min(i, list.length - 1));
    list.forEach(function (r, j) { r.classList.toggle("current", j === current); });
    list[current].scrollIntoView({ block: "center" });
  }
  function row() { var list = rows(); return current >= 0 ? list[current] : null; }
  function typing(t) { return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT"); }
  function askedName() {
    var name = document.getElementById("reviewer-name");
    return name && name.value.trim() === "" ? name : null;
  }
  // The name asked at the top goes with every verdict; none goes without it.
  document.body.addEventListener("htmx:configRequest", function (e) {
    var name = document.getElementById("reviewer-name");
    if (!name || !e.detail.elt.closest || !e.detail.elt.closest(".review-form")) return;
    if (name.value.trim() === "") { e.preventDefault(); name.focus(); return; }
    e.detail.parameters["reviewer"] = name.value.trim();
  });
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
        var f = e.target.form, v = f.querySelector(".override-value");
        (v && v.value !== "" ? f.querySelector(".override") : f.querySelector(".agree")).click();
      }
      return;
    }
    var r = row();
    if (e.key === "j") { select(current + 1); e.preventDefault(); return; }
    if (e.key === "k") { select(current - 1); e.preventDefault(); return; }
    if (e.key === "]") {
      var next = document.getElementById("next-in-queue");
      if (next) { window.location.href = next.href; e.preventDefault(); }
      return;
    }
    if (!r) { if ("an0123456789".indexOf(e.key) >= 0) select(0); r = row(); if (!r) return; }
    var form = r.querySelector(".review-form");
    if (!form) return;
    var name = askedName();
    if (name && "an0123456789".indexOf(e.key) >= 0) { e.preventDefault(); focusOnKeyUp = name; return; }
    if (e.key === "a") { form.querySelector(".agree").click(); e.preventDefault(); return; }
    if (e.key === "n") {
      // Focus once the key is released, so that its letter does not land in the note.
      e.preventDefault();
      focusOnKeyUp = form.querySelector(".note");
      return;
    }
    if (/^[0-9]$/.test(e.key)) {
      var input = form.querySelector(".override-value");
      input.value = e.key;
      form.querySelector(".override").click();
      e.preventDefault();
    }
  });
  // After a verdict the row is swapped: keep the place, and move on.
  document.body.addEventListener("htmx:afterSwap", function (e) {
    var list = rows();
    var i = list.indexOf(e.detail.elt.closest ? e.detail.elt.closest("tr.score") || e.detail.elt : e.detail.elt);
    if (i < 0) i = current;
    var failed = list[i] && list[i].querySelector(".review-error");
    select(failed ? i : i + 1);
  });
})();
