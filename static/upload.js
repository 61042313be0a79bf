// Drag and drop onto the upload zone; show the chosen file's name.
(function () {
  var drop = document.getElementById("drop");
  var input = document.getElementById("file");
  var label = document.getElementById("file-name");
  var name = document.getElementById("name");
  if (!drop || !input) return;
  function show() {
    if (input.files.length === 0) return;
    var f = input.files[0];
    label.textContent = f.name + " (" + Math.max(1, Math.round(f.size / 1024)) + " KiB) — ready to upload";
    drop.classList.remove("missing");
    drop.classList.add("over");
  }
  input.addEventListener("change", show);
  // The input is hidden behind the zone, so the browser cannot point at it
  // when the form is sent without a file: the zone says so instead.
  function missing(e) {
    if (input.files.length > 0) return;
    e.preventDefault();
    label.textContent = "Choose a file first: drop one here, or click to pick it.";
    drop.classList.add("missing");
    drop.scrollIntoView({ block: "center" });
  }
  input.addEventListener("invalid", missing);
  if (drop.closest("form")) drop.closest("form").addEventListener("submit", missing);
  ["dragenter", "dragover"].forEach(function (ev) {
    drop.addEventListener(ev, function (e) { e.preventDefault(); drop.classList.add("over"); });
  });
  drop.addEventListener("dragleave", function () { drop.classList.remove("over"); });
  drop.addEventListener("drop", function (e) {
    e.preventDefault();
    if (e.dataTransfer.files.length === 0) return;
    input.files = e.dataTransfer.files;
    show();
  });
})();
