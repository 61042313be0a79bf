// The exported report's list of samples: a text filter and "with errors
// only". Runs in the exported file, where the list is; elsewhere does nothing.
(function () {
  var input = document.getElementById("transcript-filter");
  var errorsOnly = document.getElementById("transcript-errors");
  var count = document.getElementById("transcript-count");
  if (!input || !errorsOnly) return;
  var items = Array.prototype.slice.call(document.querySelectorAll("#transcript-list .transcript"));
  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    items.forEach(function (el) {
      var text = el.getAttribute("data-search") || "";
      var ok = words.every(function (w) { return text.indexOf(w) >= 0; }) &&
        (!errorsOnly.checked || el.getAttribute("data-errors") !== "0");
      el.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = shown + " of " + items.length + " samples";
  }
  input.addEventListener("input", apply);
  errorsOnly.addEventListener("change", apply);
})();
