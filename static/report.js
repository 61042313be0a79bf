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
    var animate = !still && opt.animation !== false;
    // Laid out still first, to measure the title and legend and make room
    // for them; then drawn with its opening animation, in that room.
    opt.animation = false;
    chart.setOption(opt);
    fitLegend(el, chart);
    if (animate) {
      var laidOut = chart.getOption();
      laidOut.animation = true;
      chart.clear();
      chart.setOption(laidOut);
    }
  }

  // fitLegend makes room for the title and the legend on as many lines as
  // they wrap onto, by growing the chart: a long title is broken rather
  // than cut at both ends, and every series stays named (a scrolling legend
  // hid the fourth condition of four).
  function fitLegend(el, chart) {
    var opt = chart.getOption();
    var width = Math.max(120, el.clientWidth - 24);
    chart.setOption({ title: { textStyle: { width: width, overflow: "break", lineHeight: 19 }, subtextStyle: { width: width, overflow: "break", lineHeight: 15 } } });
    var model = chart.getModel();
    var title = model.getComponent("title");
    var titleView = title && chart.getViewOfComponentModel(title);
    var legend = model.getComponent("legend");
    var legendView = legend && legend.get("show") !== false && chart.getViewOfComponentModel(legend);
    var grid = opt.grid && opt.grid[0];
    if (!grid) return;
    if (!el.hasAttribute("data-height")) {
      el.setAttribute("data-height", el.clientHeight);
      el.setAttribute("data-grid-top", parseFloat(grid.top) || 0);
      el.setAttribute("data-legend-top", legendView ? parseFloat(opt.legend[0].top) || 0 : 0);
    }
    var gridTop = +el.getAttribute("data-grid-top");
    var legendTop = +el.getAttribute("data-legend-top");
    var titleBottom = titleView ? titleView.group.getBoundingRect().height + 8 : 0;
    var top = Math.max(legendTop, titleBottom + 6);
    var needed = legendView ? top + legendView.group.getBoundingRect().height + 12 : titleBottom + 20;
    var extra = Math.max(0, needed - gridTop);
    var height = +el.getAttribute("data-height") + extra;
    if (el.clientHeight !== height || chart.getHeight() !== height) {
      el.style.height = height + "px";
      chart.resize({ height: height });
    }
    var change = { grid: { top: gridTop + extra } };
    if (legendView) change.legend = { top: top };
    chart.setOption(change);
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
      if (chart) {
        chart.resize();
        fitLegend(el, chart);
      }
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
