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

  // Articles per UTC month, one stacked bar series per origin: live, or each web archive
  // (scrapy backfill), so the backfilled years show as they fill in.
  if (document.getElementById("chart-origins")) {
    // Live first (the bottom of each bar), then the archives by name: the page's JSON
    // has its keys sorted.
    var origins = Object.keys(data.articles_per_month_by_origin).sort();
    if (origins.indexOf("live") > 0) {
      origins.splice(origins.indexOf("live"), 1);
      origins.unshift("live");
    }
    chart("chart-origins", {
      tooltip: { trigger: "axis" },
      legend: { top: 0, type: "scroll" },
      grid: { left: 50, right: 20, top: 40, bottom: 60 },
      xAxis: { type: "category", data: data.month_list },
      yAxis: { type: "value", minInterval: 1 },
      dataZoom: [{ type: "slider", bottom: 10, height: 18 }],
      series: origins.map(function (o) {
        return { name: o, type: "bar", stack: "origins", data: data.articles_per_month_by_origin[o] };
      })
    });
  }

  // Crawl runs per site and day: pages fetched; a day with a run that did not finish in red.
  var runSites = Object.keys(data.pages_per_day);
  chart("chart-runs", {
    tooltip: { trigger: "axis" },
    legend: { top: 0, type: "scroll" },
    grid: { left: 50, right: 20, top: 40, bottom: 40 },
    xAxis: { type: "category", data: data.day_list },
    yAxis: { type: "value", name: "pages", minInterval: 1 },
    series: runSites.map(function (s) {
      var failed = data.failed_runs_per_day[s] || [];
      return {
        name: s, type: "line", connectNulls: false, showAllSymbol: true, symbolSize: 6,
        data: data.pages_per_day[s].map(function (v, i) {
          return failed[i] ? { value: v, symbol: "triangle", symbolSize: 11,
                               itemStyle: { color: "#d62728" } } : v;
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

  // Coverage per site and day, in percent: a gap where the site listed nothing that day
  // (coverage unknown), never a 100.
  if (document.getElementById("chart-coverage")) {
    var covSites = Object.keys(data.coverage_per_day);
    chart("chart-coverage", {
      tooltip: { trigger: "axis", valueFormatter: function (v) { return v == null ? "unknown" : v + " %"; } },
      legend: { top: 0, type: "scroll" },
      grid: { left: 50, right: 20, top: 40, bottom: 40 },
      xAxis: { type: "category", data: data.day_list },
      yAxis: { type: "value", name: "%", min: 0, max: 100 },
      series: covSites.map(function (s) {
        return { name: s, type: "line", connectNulls: false, showAllSymbol: true, symbolSize: 6,
                 data: data.coverage_per_day[s] };
      })
    });
  }

  window.addEventListener("resize", function () { charts.forEach(function (c) { c.resize(); }); });
  document.body.setAttribute("data-charts", "ready");
})();
