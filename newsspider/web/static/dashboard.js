/* The dashboard's charts (Apache ECharts, vendored beside this file). The data is the JSON
   block the page carries (id="dashboard-data"), the same as /api/dashboard. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("dashboard-data").textContent);
  var font = '"Noto Sans CJK SC", "WenQuanYi Micro Hei", sans-serif';
  var charts = [];

  function chart(id, option) {
    var el = document.getElementById(id);
    var c = echarts.init(el, null, { renderer: "canvas" });
    option.textStyle = { fontFamily: font };
    option.animation = false;
    c.setOption(option);
    charts.push(c);
    return c;
  }

  // Articles per day, one stacked bar series per site.
  var sites = Object.keys(data.articles_per_day);
  chart("chart-articles", {
    tooltip: { trigger: "axis" },
    legend: { top: 0 },
    grid: { left: 50, right: 20, top: 40, bottom: 40 },
    xAxis: { type: "category", data: data.day_list },
    yAxis: { type: "value", minInterval: 1 },
    series: sites.map(function (s) {
      return { name: s, type: "bar", stack: "articles", data: data.articles_per_day[s] };
    })
  });

  // Crawl runs over time: pages fetched per run, per site; runs not finished in red.
  var bySite = {};
  data.crawl_runs.forEach(function (r) {
    (bySite[r.site] = bySite[r.site] || []).push(r);
  });
  chart("chart-runs", {
    tooltip: {
      trigger: "item",
      formatter: function (p) {
        var r = p.data.run;
        return echarts.format.encodeHTML(
          r.site + " run " + r.id + ": " + r.status + ", " + r.pages_fetched + " pages, " +
          r.items_new + " new, " + r.items_dropped + " dropped, " + r.fetch_failures + " failed fetches");
      }
    },
    legend: { top: 0 },
    grid: { left: 50, right: 20, top: 40, bottom: 40 },
    xAxis: { type: "time", min: Date.parse(data.first + "T00:00:00+08:00"),
             max: Date.parse(data.last + "T24:00:00+08:00") },
    yAxis: { type: "value", name: "pages", minInterval: 1 },
    series: Object.keys(bySite).map(function (s) {
      return {
        name: s, type: "line", showAllSymbol: true, symbolSize: 7,
        data: bySite[s].map(function (r) {
          var bad = r.status !== "finished" && r.status !== "running";
          return { value: [Date.parse(r.started_at), r.pages_fetched], run: r,
                   itemStyle: bad ? { color: "#d62728" } : undefined,
                   symbol: bad ? "triangle" : "circle" };
        })
      };
    })
  });

  // Drops by reason and failed fetches per day (Asia/Shanghai days, all sites), stacked.
  var days = data.day_list, reasons = data.drops_per_day, failures = data.fetch_failures_per_day;
  var dropSeries = Object.keys(reasons).map(function (k) {
    return { name: "dropped: " + k, type: "bar", stack: "drops", data: reasons[k] };
  });
  dropSeries.push({ name: "failed fetches", type: "line", data: failures });
  chart("chart-drops", {
    tooltip: { trigger: "axis" },
    legend: { top: 0, type: "scroll" },
    grid: { left: 50, right: 20, top: 40, bottom: 40 },
    xAxis: { type: "category", data: days },
    yAxis: { type: "value", minInterval: 1 },
    series: dropSeries
  });

  window.addEventListener("resize", function () { charts.forEach(function (c) { c.resize(); }); });
  document.body.setAttribute("data-charts", "ready");
})();
