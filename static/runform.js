// The run form shows the fields of the chosen kind of agent.
(function () {
  var form = document.getElementById("run-form");
  if (!form) return;
  form.addEventListener("change", function (e) {
    if (e.target.name === "agent_type") form.setAttribute("data-agent", e.target.value);
  });
})();
