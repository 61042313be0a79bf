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
    drop.classList.add("over");
  }
  input.addEventListener("change", show);
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
