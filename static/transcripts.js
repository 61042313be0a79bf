// The exported report's list of samples: a text filter and "with errors
// only". Runs in the exported file, where the list is; elsewhere does nothing.
(function () {
  var input = document.getElementById("transcript-filter");
  var errorsOnly = document.getElementById("transcript-errors");
  var count = document.getElementById("transcript-count");
  if (!input || !errorsOnly) return;
  var list = document.getElementById("transcript-list");
  var cut = document.getElementById("transcripts-cut"); // written last: shown first
  if (cut) list.parentNode.insertBefore(cut, list);
  var items = Array.prototype.slice.call(list.querySelectorAll(".transcript"));
  var texts = null; // each sample's text, lower-cased, read at the first filtering
  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length && !texts) {
      texts = items.map(function (el) { return el.textContent.toLowerCase(); });
    }
    var shown = 0;
    items.forEach(function (el, i) {
      var ok = words.every(function (w) { return texts[i].indexOf(w) >= 0; }) &&
        (!errorsOnly.checked || el.getAttribute("data-errors") !== "0");
      el.hidden = !ok;
      if (ok) shown++;
    });
    // Counts as the pages write them: 150,000.
    count.textContent = shown.toLocaleString("en-US") + " of " + items.length.toLocaleString("en-US") + " samples";
  }
  input.addEventListener("input", apply);
  errorsOnly.addEventListener("change", apply);
  apply();
})();
