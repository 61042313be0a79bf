// The run form shows the fields of the chosen kind of agent. Changing the
// dataset swaps the whole form in place, so the listener sits on the
// document and finds the form each time.
(function () {
  document.addEventListener("change", function (e) {
    if (e.target.name !== "agent_type") return;
    var form = e.target.closest("#run-form");
    if (form) form.setAttribute("data-agent", e.target.value);
  });
})();
