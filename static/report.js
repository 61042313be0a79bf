// report.js draws a report's charts from the ECharts options the server put
// in their data-option attributes, each as it comes near the window; follows
// the paired-comparison selects, and copies share links. It runs on the run
// page, a share link's page and in an exported file, with the embedded
// echarts.min.js; it loads nothing.
(function () {
  "use strict";

  function escapeHTML(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  // The server writes tooltips as templates, since JSON holds no functions:
  // {a} is the series, {@[n]} the n-th value of a point, {v} a value.
  function withTooltips(opt) {
    var t = opt.tooltip;
    if (!t) return opt;
    if (typeof t.formatter === "string" && t.formatter.indexOf("{@[") >= 0) {
      var tpl = t.formatter;
      t.formatter = function (p) {
        return tpl.replace("{a}", escapeHTML(p.seriesName)).replace(/\{@\[(\d+)\]\}/g, function (_, i) {
          return escapeHTML(p.value[+i]);
        });
      };
    }
    if (typeof t.valueFormatter === "string") {
      var unit = t.valueFormatter;
      t.valueFormatter = function (v) { return unit.replace("{v}", v); };
    }
    return opt;
  }

  // draw draws a chart; still, without its opening animation (for print).
  function draw(el, still) {
    if (echarts.getInstanceByDom(el)) return;
    var chart = echarts.init(el, null, { renderer: "canvas" });
    var opt = withTooltips(JSON.parse(el.getAttribute("data-option")));
    if (still) opt.animation = false;
    chart.setOption(opt);
  }

  // A chart is drawn when it comes within half a screen of the window: a
  // report of a dozen charts is ready to read and scroll at once, and
  // draws the others as they are reached (all of them before printing).
  var nearView = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      if (!e.isIntersecting) return;
      nearView.unobserve(e.target);
      draw(e.target);
    });
  }, { rootMargin: "50% 0px" }) : null;

  function initCharts(root) {
    root.querySelectorAll(".chart[data-option]").forEach(function (el) {
      if (nearView) nearView.observe(el);
      else draw(el);
    });
  }

  function drawAll() {
    document.querySelectorAll(".chart[data-option]").forEach(function (el) {
      if (nearView) nearView.unobserve(el);
      draw(el, true);
    });
  }

  function disposeCharts(root) {
    root.querySelectorAll(".chart[data-option]").forEach(function (el) {
      if (nearView) nearView.unobserve(el);
      var chart = echarts.getInstanceByDom(el);
      if (chart) chart.dispose();
    });
  }

  function resizeCharts() {
    document.querySelectorAll(".chart[data-option]").forEach(function (el) {
      var chart = echarts.getInstanceByDom(el);
      if (chart) chart.resize();
    });
  }

  // The paired comparison lives in the URL, so that a link reproduces it.
  // Choosing for one side the condition of the other swaps them.
  function followPair(event) {
    var sel = event.target.closest("select[data-pair]");
    if (!sel) return;
    var params = new URLSearchParams(location.search);
    document.querySelectorAll("select[data-pair]").forEach(function (s) {
      if (s !== sel && s.value === sel.value) s.value = sel.getAttribute("data-was");
      params.set(s.getAttribute("data-pair"), s.value);
    });
    location.href = location.pathname + "?" + params.toString() + "#paired";
  }

  function copy(event) {
    var btn = event.target.closest("button[data-copy]");
    if (!btn) return;
    var text = btn.getAttribute("data-copy");
    var done = function () {
      btn.textContent = "Copied";
      setTimeout(function () { btn.textContent = "Copy"; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done);
      return;
    }
    var input = btn.parentElement.querySelector("input");
    input.select();
    if (document.execCommand("copy")) done();
  }

  function start() {
    initCharts(document);
    window.addEventListener("resize", resizeCharts);
    // A chart drawn while folded (for print) takes its size when opened.
    document.addEventListener("toggle", resizeCharts, true);
    window.addEventListener("beforeprint", drawAll);
    document.addEventListener("change", followPair);
    document.addEventListener("click", copy);
    document.body.addEventListener("htmx:beforeSwap", function (e) { disposeCharts(e.detail.target); });
    document.body.addEventListener("htmx:load", function (e) { initCharts(e.detail.elt); });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
