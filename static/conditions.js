// The MCP server rows of the condition form: add, remove, and show the fields of the chosen transport.
(function () {
  var list = document.getElementById("servers");
  var tpl = document.getElementById("server-template");
  var none = document.getElementById("no-servers");
  if (!list || !tpl) return;
  function sync(server) {
    var stdio = server.querySelector(".transport").value === "stdio";
    server.querySelector(".stdio-only").style.display = stdio ? "" : "none";
    server.querySelector(".remote-only").style.display = stdio ? "none" : "";
  }
  function refresh() {
    none.style.display = list.children.length === 0 ? "" : "none";
    Array.prototype.forEach.call(list.children, sync);
  }
  document.getElementById("add-server").addEventListener("click", function () {
    list.appendChild(tpl.content.cloneNode(true));
    refresh();
    var inputs = list.lastElementChild.querySelectorAll("input[name=server_name]");
    if (inputs.length) inputs[0].focus();
  });
  list.addEventListener("click", function (e) {
    if (!e.target.classList.contains("remove-server")) return;
    e.target.closest(".server").remove();
    refresh();
  });
  list.addEventListener("change", function (e) {
    if (e.target.classList.contains("transport")) sync(e.target.closest(".server"));
  });
  refresh();
})();
