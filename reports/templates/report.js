/* compbench report: sorting, filters, charts (ECharts, embedded) and the drill-down.
   Data is inserted into the page as text only (textContent, never innerHTML), so no transcript can
   inject markup; the large data sets are inflated from their packed form when first needed. */
"use strict";
(function () {
  var S = JSON.parse(document.getElementById("summary-data").textContent);
  var ST = S.strategies;
  var H = S.headline || "net_savings", R = S.recall || "needed_recall";  /* compbench.decide.headline */
  var PAGE = 15;
  var cache = {};

  function blob(name) {
    if (!cache[name]) {
      var bin = atob(document.getElementById("blob-" + name).textContent.trim());
      var bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
      cache[name] = new Response(stream).text().then(JSON.parse);
    }
    return cache[name];
  }

  function el(tag, attrs) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === undefined || v === null) return;
      if (k === "text") e.textContent = v;
      else if (k === "class") e.className = v;
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v);
      else if (k === "style") e.setAttribute("style", v);
      else e.setAttribute(k, v);
    });
    for (var j = 2; j < arguments.length; j++) {
      var c = arguments[j];
      if (c === null || c === undefined) continue;
      (Array.isArray(c) ? c : [c]).forEach(function (x) {
        e.appendChild(typeof x === "string" || typeof x === "number" ? document.createTextNode(String(x)) : x);
      });
    }
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  function pct(v, d) { return v === null || v === undefined || isNaN(v) ? "–" : (v * 100).toFixed(d === undefined ? 1 : d) + "%"; }
  function permille(v) { return v < 0 ? "–" : (v / 10).toFixed(1) + "%"; }
  function num(v) { return Number(v).toLocaleString("en-US"); }
  function swatch(si) { return el("span", {"class": "swatch", style: "background:" + ST[si].color}); }
  function label(si) { return el("span", null, swatch(si), el("code", {text: ST[si].label})); }

  /* ---------- leaderboard and other server-rendered tables: sort and filter ---------- */
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, col) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0], rows = Array.from(body.rows), asc = !th.classList.contains("sorted-asc");
        table.querySelectorAll("th").forEach(function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(asc ? "sorted-asc" : "sorted-desc");
        rows.sort(function (a, b) {
          var x = a.cells[col].dataset.sort, y = b.cells[col].dataset.sort;
          if (x === undefined) x = a.cells[col].textContent;
          if (y === undefined) y = b.cells[col].textContent;
          var nx = parseFloat(String(x).replace(/[,%$]/g, "")), ny = parseFloat(String(y).replace(/[,%$]/g, ""));
          var bothNum = !isNaN(nx) && !isNaN(ny);
          if (!bothNum && (isNaN(nx) !== isNaN(ny)) && (String(x) === "nan" || String(y) === "nan")) return String(x) === "nan" ? 1 : -1;
          var r = bothNum ? nx - ny : String(x).localeCompare(String(y));
          return asc ? r : -r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.querySelectorAll("input.filter").forEach(function (input) {
    input.addEventListener("input", function () { filterBoard(); });
  });
  var sound = document.getElementById("lb-sound");
  if (sound) sound.addEventListener("change", filterBoard);
  function filterBoard() {
    var q = (document.querySelector('input.filter[data-table="lb"]') || {value: ""}).value.toLowerCase();
    document.querySelectorAll("#lb tbody tr").forEach(function (tr) {
      var show = tr.dataset.label.toLowerCase().indexOf(q) >= 0 && !(sound && sound.checked && tr.dataset.tier !== "0");
      tr.style.display = show ? "" : "none";
    });
  }
  document.querySelectorAll("#lb tbody tr").forEach(function (tr) {
    tr.addEventListener("click", function () { go({s: +tr.dataset.index}); });
  });

  /* ---------- charts ---------- */
  var charts = [], drawn = {frontier: null, nodata: 0};  /* drawn: what the layout check reports */
  function chart(node) { var c = echarts.init(node, null, {renderer: "canvas"}); charts.push(c); return c; }
  window.addEventListener("resize", function () {
    charts.forEach(function (c) { c.resize(); });
    if (drawn.relayout) drawn.relayout();
  });
  function tip(lines) { return lines.map(esc).join("<br>"); }

  function frontierChart() {
    var node = document.getElementById("chart-frontier");
    if (!node || typeof echarts === "undefined") return;
    var c = chart(node), fit = true;  /* fitted by default: from 0 every point sits in the top band */
    drawn.frontier = c;
    var BASE = S.baseline;  /* each tool as it ran: the baseline, drawn apart, never on the frontier */
    var front = S.frontier.filter(function (l) { return l !== BASE; }).map(function (l) {
      return ST.filter(function (s) { return s.label === l; })[0]; });
    function pt(s) { return [s.m[H].v, s.m[R].v]; }
    function has(s) { return s.m[H].v !== null && s.m[R].v !== null; }
    /* whose names are drawn: every point's when few, else the frontier's, each tool's own strategy's and the
       baseline's (the others on hover; the button names them all) */
    var every = ST.filter(has).length <= NAME_ALL, key = {};
    S.frontier.concat(S.tools || [], BASE ? [BASE] : []).forEach(function (l) { key[l] = true; });
    function named(s) { return every || key[s.label]; }
    drawn.named = function () { return ST.filter(function (s) { return has(s) && named(s); }).length; };
    var placed = {};  /* label -> where placeLabels put its name ({hidden} when no free spot was found) */
    function points(tier) {
      return ST.filter(function (s) { return s.tier === tier && has(s) && s.label !== BASE; }).map(function (s) {
        var at = placed[s.label], label = !at ? {show: false} : at.hidden ? {show: false} :
          {show: true, position: at.position, align: "left", verticalAlign: "top"};
        return {value: pt(s), name: s.label, label: label,
          itemStyle: tier === 2 ? {color: "#fff", borderColor: s.color, borderWidth: 2} : {color: s.color}};
      });
    }
    var bars = [];
    ST.forEach(function (s) {
      if (!has(s)) return;
      var x = s.m[H], y = s.m[R];
      if (x.lo !== null) bars.push([x.lo, y.v], [x.hi, y.v], "-");
      if (y.lo !== null) bars.push([x.v, y.lo], [x.v, y.hi], "-");
    });
    var all = ST.filter(has);
    function option() {
      var xs = all.map(function (s) { return s.m[H].v; }), ys = all.map(function (s) { return s.m[R].v; });
      var xmin = Math.min.apply(null, xs);  /* below 0 only when a point is (a strategy that costs more than none) */
      var xr = fit && xs.length ? nice(xmin, Math.max.apply(null, xs), xmin < 0 ? -Infinity : 0) : [Math.min(0, step(Math.min.apply(null, xs.concat([0])), 0.1, Math.floor)), 1, 0.1];
      var yr = fit && ys.length ? nice(Math.min.apply(null, ys), Math.max.apply(null, ys), 0) : [0, 1, 0.1];
      var lbl = {show: true, fontSize: LABEL_FONT, lineHeight: LABEL_HEIGHT, formatter: "{b}", color: "#1b1f24"};
      return {
        animation: false,
        grid: {left: 64, right: 40, top: 20, bottom: 72},
        legend: {bottom: 0, data: ["sound", "degenerate (compacts on most calls)", "calls over the window", "frontier"].concat(
          baseline().length ? [BASELINE] : [])},
        tooltip: {trigger: "item", formatter: function (p) {
          var s = ST.filter(function (x) { return x.label === p.name; })[0];
          if (!s) return "";
          return tip([s.label + (s.label === BASE ? " — the baseline: each tool as it ran, its own compactions replayed" :
            s.tier ? " — " + s.tier_name : ""), S.metrics[H].title + " " + s.m[H].text + " " + s.m[H].ci,
            S.metrics[R].title + " " + s.m[R].text + " " + s.m[R].ci, "calls over the window " + num(s.refused)].concat(
            s.flags.map(function (f) { return "! " + f.text; })));
        }},
        xAxis: {type: "value", name: S.metrics[H].title + " vs none", nameLocation: "middle", nameGap: 28, min: xr[0], max: xr[1], interval: xr[2],
          axisLabel: {formatter: function (v) { return pct(v, xr[2] < 0.01 ? 1 : 0); }}, splitLine: {lineStyle: {color: "#eee"}}},
        yAxis: {type: "value", name: S.metrics[R].title, nameLocation: "middle", nameGap: 46, min: yr[0], max: yr[1], interval: yr[2],
          axisLabel: {formatter: function (v) { return pct(v, yr[2] < 0.01 ? 1 : 0); }}, splitLine: {lineStyle: {color: "#eee"}}},
        dataZoom: [{type: "inside", xAxisIndex: 0, filterMode: "none"}, {type: "inside", yAxisIndex: 0, filterMode: "none"}],
        series: [
          {type: "line", name: "95% intervals", data: bars, symbol: "none", lineStyle: {color: "#8c959f", width: 1}, silent: true, z: 1, connectNulls: false},
          {type: "line", name: "frontier", data: front.filter(Boolean).map(pt).sort(function (a, b) { return a[0] - b[0]; }),
            symbol: "none", lineStyle: {type: "dashed", color: "#24292f", width: 1.2}, silent: true, z: 2},
          {type: "scatter", name: "sound", data: points(0), symbolSize: 11, label: lbl, z: 4,
            itemStyle: {color: "#57606a"}},
          {type: "scatter", name: "degenerate (compacts on most calls)", symbol: "triangle", data: points(1), symbolSize: 12,
            itemStyle: {color: "#9a6700"},
            label: Object.assign({}, lbl, {color: "#7d4e00"}), z: 3},
          {type: "scatter", name: "calls over the window", data: points(2), symbolSize: 11, symbol: "emptyCircle",
            itemStyle: {color: "#cf222e"},
            label: Object.assign({}, lbl, {color: "#82071e"}), z: 3},
          {type: "scatter", name: BASELINE, symbol: "diamond", data: baseline(), symbolSize: 15, z: 5,
            itemStyle: {color: "#fff", borderColor: "#1b1f24", borderWidth: 2.5},
            label: Object.assign({}, lbl, {fontWeight: "bold"})},
          /* from a point to its name where the name had to move away from it */
          {type: "line", name: "label lines", data: leaders(), symbol: "none", lineStyle: {color: "#8c959f", width: 0.8},
            silent: true, z: 2, connectNulls: false}
        ]
      };
    }
    function baseline() {  /* the one point of each tool as it ran, its name said as the baseline */
      return ST.filter(function (s) { return s.label === BASE && has(s); }).map(function (s) {
        var at = placed[s.label], label = !at || at.hidden ? {show: false} :
          {show: true, position: at.position, align: "left", verticalAlign: "top", formatter: BASE_NAME};
        return {value: pt(s), name: s.label, label: label};
      });
    }
    function leaders() {
      var out = [];
      Object.keys(placed).forEach(function (k) {
        var at = placed[k];
        if (at.line) out.push(at.line[0], at.line[1], "-");
      });
      return out;
    }
    function relayout() {  /* the names placed where the points now are (after a zoom, a resize, the axes button) */
      placed = placeLabels(c, ST.filter(has), pt, named);
      c.setOption(option(), true);
    }
    c.setOption(option());
    relayout();
    drawn.relayout = relayout;
    c.on("datazoom", relayout);
    var all = document.getElementById("frontier-names");
    if (all) {
      all.hidden = ST.filter(has).length <= NAME_ALL;
      all.addEventListener("click", function () {
        every = !every; all.classList.toggle("on", every);
        all.textContent = every ? "name the key points only" : "name every point";
        relayout();
      });
    }
    var b = document.getElementById("frontier-fit");
    if (b) b.addEventListener("click", function () {
      fit = !fit; b.classList.toggle("on", !fit);
      b.textContent = fit ? "axes from 0" : "fit the axes to the points";
      c.setOption(option(), true);
      relayout();
    });
  }

  /* Where each point's name goes: beside it (right, left, above, below, the four diagonals) where that spot
     overlaps no name already placed, no point and stays in the plot; else a few rows up or down, joined to its
     point by a thin line; else nowhere (its tooltip names it). Sound strategies first, the frontier's before
     them, so the names a reader needs most get the closest spots. Pixel space, measured with the labels' font. */
  var LABEL_FONT = 11, LABEL_HEIGHT = 14, DOT = 7, GAP = 3;
  var NAME_ALL = 12;  /* up to this many points every one is named; past it the names pile up */
  var BASELINE = "as it ran (recorded): the baseline", BASE_NAME = "as it ran (baseline)";
  var measure = document.createElement("canvas").getContext("2d");
  function placeLabels(c, strategies, pt, named) {
    measure.font = LABEL_FONT + "px sans-serif";
    var grid = c.getModel().getComponent("grid").coordinateSystem.getRect();
    var front = {};
    S.frontier.forEach(function (l) { front[l] = true; });
    var items = strategies.map(function (s) {
      var p = c.convertToPixel({xAxisIndex: 0, yAxisIndex: 0}, pt(s));
      var text = s.label === S.baseline ? BASE_NAME : s.label;
      return {s: s, x: p[0], y: p[1], w: Math.ceil(measure.measureText(text).width) + 2,
        inside: p[0] >= grid.x - 1 && p[0] <= grid.x + grid.width + 1 && p[1] >= grid.y - 1 && p[1] <= grid.y + grid.height + 1};
    });
    var dots = items.filter(function (i) { return i.inside; }).map(function (i) {
      return {x: i.x - DOT, y: i.y - DOT, w: 2 * DOT, h: 2 * DOT, owner: i.s.label};
    });
    var taken = [], out = {};
    function hits(r, owner) {
      if (r.x < grid.x || r.y < grid.y - 4 || r.x + r.w > grid.x + grid.width + 36 || r.y + r.h > grid.y + grid.height) return true;
      for (var k = 0; k < taken.length; k++) if (overlap(r, taken[k])) return true;
      for (var d = 0; d < dots.length; d++) if (dots[d].owner !== owner && overlap(r, dots[d])) return true;
      return false;
    }
    var order = items.slice().sort(function (a, b) {
      return (b.s.label === S.baseline) - (a.s.label === S.baseline) || (front[b.s.label] ? 1 : 0) - (front[a.s.label] ? 1 : 0)
        || a.s.tier - b.s.tier || a.s.rank - b.s.rank;
    });
    order.forEach(function (i) {
      if (!i.inside || !named(i.s)) { out[i.s.label] = {hidden: true}; return; }
      var h = LABEL_HEIGHT, w = i.w, mid = i.y - h / 2;
      var near = [[i.x + DOT + GAP, mid], [i.x - DOT - GAP - w, mid], [i.x - w / 2, i.y - DOT - GAP - h], [i.x - w / 2, i.y + DOT + GAP],
        [i.x + DOT, i.y - DOT - h], [i.x + DOT, i.y + DOT], [i.x - DOT - w, i.y - DOT - h], [i.x - DOT - w, i.y + DOT]];
      var far = [];
      for (var step = 1; step <= 5; step++) {
        [-1, 1].forEach(function (sign) {
          far.push([i.x + DOT + 2 * GAP + 8, mid + sign * step * h], [i.x - DOT - 2 * GAP - 8 - w, mid + sign * step * h]);
        });
      }
      var spot = null, line = false;
      for (var n = 0; n < near.length + far.length && !spot; n++) {
        var cand = n < near.length ? near[n] : far[n - near.length];
        var r = {x: cand[0], y: cand[1], w: w, h: h};
        if (!hits(r, i.s.label)) { spot = r; line = n >= near.length; }
      }
      if (!spot) { out[i.s.label] = {hidden: true}; return; }
      taken.push(spot);
      var at = {position: [Math.round(spot.x - (i.x - 5.5)), Math.round(spot.y - (i.y - 5.5))], rect: spot};
      if (line) {  /* to the near edge of the name, in data coordinates (the line series draws it) */
        var ex = spot.x > i.x ? spot.x - 1 : spot.x + spot.w + 1, ey = spot.y + h / 2;
        at.line = [c.convertFromPixel({xAxisIndex: 0, yAxisIndex: 0}, [i.x, i.y]),
                   c.convertFromPixel({xAxisIndex: 0, yAxisIndex: 0}, [ex, ey])];
      }
      out[i.s.label] = at;
    });
    return out;
  }
  function overlap(a, b) { return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h; }

  /* the names the chart really drew (zrender's text elements) and how many of them overlap: the layout check */
  function drawnLabels(c) {
    var names = {}, rects = [];
    ST.forEach(function (s) { names[s.label] = true; });
    names[BASE_NAME] = true;
    c.getZr().storage.getDisplayList(true).forEach(function (el) {
      var text = el.style && el.style.text;
      if ((el.type !== "tspan" && el.type !== "text") || !names[text] || el.ignore || el.invisible) return;
      var r = el.getBoundingRect().clone();
      r.applyTransform(el.getComputedTransform());
      rects.push({x: r.x, y: r.y, w: r.width, h: r.height, text: text});
    });
    var pairs = [];
    for (var a = 0; a < rects.length; a++) for (var b = a + 1; b < rects.length; b++)
      if (overlap(rects[a], rects[b])) pairs.push([rects[a].text, rects[b].text]);
    return {drawn: rects.length, overlaps: pairs.length, pairs: pairs.slice(0, 5),
      texts: rects.map(function (r) { return r.text; }).sort()};
  }

  /* an axis range around [lo, hi] on round ticks (a step of 1, 2, 5 or 10 pp, at most ~8 ticks), padded,
     never past 100% nor below `floor`: [min, max, step] */
  function step(v, s, round) { return Math.round(round(v / s - 1e-9) * s * 1e6) / 1e6; }
  function nice(lo, hi, floor) {
    var span = Math.max(hi - lo, 0.005), s = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2].filter(function (x) { return span / x <= 7; })[0] || 0.2;
    var a = step(lo - Math.max(s / 2, span * 0.08), s, Math.floor), b = step(hi + Math.max(s / 2, span * 0.08), s, Math.ceil);
    return [Math.max(a, floor), Math.min(b, 1), s];
  }

  function kindsChart() {
    var node = document.getElementById("chart-kinds");
    if (!node || typeof echarts === "undefined") return;
    if (!S.kinds.length) { node.style.display = "none"; return; }  /* no need of any kind was scored: said above */
    drawn.kinds = S.kinds.length;
    var c = chart(node), K = S.kinds.length, names = ST.map(function (s) { return s.label; }).reverse();
    var left = 230, gap = 36;  /* room between panels: one panel's 100% never runs into the next one's 0% */
    var titles = S.kind_titles || {};
    var option = {animation: false, tooltip: {trigger: "item", formatter: function (p) {
      var k = S.kinds[p.seriesIndex], none = p.data && p.data.missing;
      return tip([p.name, (titles[k] || k) + ": " + (none ? "no data (no need of this kind was scored)" : pct(p.value))]); }}};
    var width = node.clientWidth || 1300, plot = (width - left - gap * K) / K;
    option.grid = S.kinds.map(function (k, i) { return {left: left + i * (plot + gap), width: plot, top: 28, bottom: 24}; });
    option.title = S.kinds.map(function (k, i) { return {text: titles[k] || k, left: left + i * (plot + gap), top: 2, textStyle: {fontSize: 12, width: plot, overflow: "truncate"}}; });
    option.xAxis = S.kinds.map(function (k, i) { return {gridIndex: i, type: "value", min: 0, max: 1, interval: 0.25, axisLabel: {formatter: function (v) { return pct(v, 0); }, fontSize: 10}}; });
    option.yAxis = S.kinds.map(function (k, i) { return {gridIndex: i, type: "category", data: names, axisLabel: {show: i === 0, fontSize: 11, width: left - 12, overflow: "truncate"}}; });
    option.series = S.kinds.map(function (k, i) {
      return {type: "bar", xAxisIndex: i, yAxisIndex: i, barMaxWidth: 14, data: ST.slice().reverse().map(function (s) {
        var v = s.kinds[k];
        if (v === null || v === undefined || isNaN(v)) /* no need of this kind: said, never drawn as 0% */
          return (drawn.nodata += 1) && {value: 1, name: s.label, missing: true, itemStyle: {color: "rgba(0,0,0,0)"},  /* invisible: its label shows */
            label: {show: true, position: "insideLeft", formatter: "no data", color: "#8c959f", fontSize: 10}};
        return {value: v, name: s.label, itemStyle: {color: s.color, opacity: s.tier === 0 ? 1 : s.tier === 1 ? 0.55 : 0.3}};
      })};
    });
    c.setOption(option);
  }

  function contextPanels(host, entry, ti, events, mode) {
    clear(host);
    if (!entry) { host.appendChild(el("p", {"class": "small muted", text: "No context series embedded for this transcript (the report keeps those of the worst transcripts); steps.parquet in the run has it."})); return; }
    var grid = el("div", {"class": "multiples"});
    host.appendChild(grid);
    var shared = 0;
    Object.keys(entry.s).forEach(function (si) { entry.s[si].forEach(function (p) { shared = Math.max(shared, p[1]); }); });
    ST.forEach(function (s, si) {
      var pts = entry.s[String(si)];
      if (!pts) return;
      var panel = el("div", {"class": "panel"}, el("div", {"class": "title"}, label(si), s.tier ? el("span", {"class": "flag", text: s.tier_name}) : null));
      var plot = el("div", {"class": "plot"});
      panel.appendChild(plot);
      grid.appendChild(panel);
      var comps = events.filter(function (e) { return e.s === si; }).map(function (e) {
        var y = 0; pts.forEach(function (p) { if (p[0] <= e.step) y = p[1]; });
        return {value: [e.step, y], name: "compaction at step " + e.step + ": " + e.lost + " facts lost"};
      });
      var over = (entry.o[String(si)] || []).map(function (step) {
        var y = 0; pts.forEach(function (p) { if (p[0] <= step) y = p[1]; });
        return [step, y];
      });
      var c = chart(plot);
      var win = entry.w || null;
      c.setOption({
        animation: false, grid: {left: 46, right: 8, top: 8, bottom: 22},
        tooltip: {trigger: "axis", formatter: function (ps) { return ps.length ? tip(["step " + ps[0].value[0], num(ps[0].value[1]) + " tokens"]) : ""; }},
        xAxis: {type: "value", min: 0, max: entry.n, axisLabel: {fontSize: 9}},
        /* the window always in view: a panel whose context stays under it still shows where it is */
        yAxis: {type: mode === "log" ? "log" : "value", min: mode === "log" ? 100 : 0, logBase: 10,
          max: mode === "shared" ? Math.max(shared, win || 0) : win ? function (v) { return Math.max(v.max, win) * 1.04; } : null,
          axisLabel: {fontSize: 9, formatter: function (v) { return v >= 1000 ? (v / 1000).toFixed(0) + "k" : v; }}},
        series: [
          {type: "line", step: "end", data: pts, symbol: "none", lineStyle: {color: s.color, width: 1.4},
            markLine: win ? {symbol: "none", silent: true, label: {formatter: "window", fontSize: 9, position: "insideEndTop"}, lineStyle: {color: "#24292f", type: "dotted"}, data: [{yAxis: win}]} : undefined},
          {type: "scatter", data: comps, symbol: "triangle", symbolRotate: 180, symbolSize: 8, itemStyle: {color: s.color}},
          {type: "scatter", data: over, symbolSize: 4, itemStyle: {color: "#cf222e"}}
        ]
      });
    });
  }

  /* ---------- drill-down: state in the URL hash (#x=s:1,t:20,c:5): indices only ---------- */
  var state = {s: null, t: null, c: null, page: 0, q: "", only: {}, mode: "own"};
  function go(next, scroll) {
    var parts = [];
    ["s", "t", "c"].forEach(function (k) { if (next[k] !== null && next[k] !== undefined) parts.push(k + ":" + next[k]); });
    var h = "#x=" + parts.join(",");
    if (location.hash === h) route(scroll !== false); else location.hash = h;
  }
  function parse() {
    var m = /#x=([^&]*)/.exec(location.hash), out = {s: null, t: null, c: null};
    if (!m) return null;
    m[1].split(",").forEach(function (kv) { var p = kv.split(":"); if (p.length === 2 && /^\d+$/.test(p[1])) out[p[0]] = +p[1]; });
    return out;
  }
  window.addEventListener("hashchange", function () { route(true); });

  var data = {};
  function load() {
    return Promise.all([blob("rows"), blob("events"), blob("series"), blob("details")]).then(function (r) {
      data.rows = r[0]; data.events = r[1]; data.series = r[2]; data.details = r[3];
      var c = data.rows.cols, n = c.s.length;
      data.byStrategy = ST.map(function () { return []; });
      data.byTranscript = {};
      for (var i = 0; i < n; i++) {
        data.byStrategy[c.s[i]].push(i);
        (data.byTranscript[c.t[i]] = data.byTranscript[c.t[i]] || []).push(i);
      }
    });
  }

  function route(scroll) {
    var h = parse();
    if (h) { state.s = h.s; state.t = h.t; state.c = h.c; }
    if (state.s === null || state.s >= ST.length) state.s = 0;
    renderStrategies(); renderTranscripts(); renderTranscript(); renderCompaction();
    if (scroll && h) {
      var target = document.getElementById(h.c !== null ? "x-compaction" : h.t !== null ? "x-transcript" : "explore");
      if (target) target.scrollIntoView();
    }
  }

  function renderStrategies() {
    var host = clear(document.getElementById("x-strategies"));
    ST.forEach(function (s, si) {
      host.appendChild(el("button", {type: "button", "class": "chip" + (si === state.s ? " on" : "") + (s.tier === 2 ? " tier2" : ""),
        title: s.tier_name + (s.flags.length ? " — " + s.flags.map(function (f) { return f.text; }).join("; ") : ""),
        onclick: function () { state.page = 0; go({s: si}); }}, swatch(si), s.label, s.tier ? " (" + s.tier_name + ")" : ""));
    });
    var crumbs = clear(document.getElementById("x-crumbs"));
    crumbs.appendChild(el("span", null, "strategy ", label(state.s)));
    if (state.t !== null && data.rows) crumbs.appendChild(el("span", null, " → transcript ", el("code", {text: data.rows.tids[state.t]})));
    if (state.c !== null) crumbs.appendChild(el("span", null, " → compaction #" + (state.c + 1)));
  }

  var SORTS = {
    worst: ["worst first (needs missed, calls over window, compactions)", function (c, a, b) { return (c.missed[b] - c.missed[a]) || (c.ovf[b] - c.ovf[a]) || (c.comp[b] - c.comp[a]) || (c.t[a] - c.t[b]); }],
    recall: ["lowest recall", function (c, a, b) { return ((c.rec[a] < 0 ? 2000 : c.rec[a]) - (c.rec[b] < 0 ? 2000 : c.rec[b])) || (c.t[a] - c.t[b]); }],
    savings: ["highest effective savings", function (c, a, b) { return (c.net[b] - c.net[a]) || (c.t[a] - c.t[b]); }],
    compactions: ["most compactions", function (c, a, b) { return (c.comp[b] - c.comp[a]) || (c.t[a] - c.t[b]); }],
    peak: ["highest peak context", function (c, a, b) { return (c.peak[b] - c.peak[a]) || (c.t[a] - c.t[b]); }]
  };
  state.sort = "worst";

  function renderTranscripts() {
    var host = clear(document.getElementById("x-transcripts"));
    if (!data.rows) { host.appendChild(el("p", {"class": "small muted", text: "Loading transcripts…"})); return; }
    var c = data.rows.cols, tids = data.rows.tids, src = data.rows.sources;
    var q = state.q.toLowerCase();
    var rows = data.byStrategy[state.s].filter(function (i) {
      if (q && (tids[c.t[i]] + " " + src[c.t[i]]).toLowerCase().indexOf(q) < 0) return false;
      if (state.only.acted && !c.acted[i]) return false;
      if (state.only.ovf && !c.ovf[i]) return false;
      if (state.only.missed && !c.missed[i]) return false;
      if (state.only.comp && !c.comp[i]) return false;
      return true;
    });
    rows.sort(function (a, b) { return SORTS[state.sort][1](c, a, b); });
    var input = el("input", {"class": "filter", placeholder: "filter transcripts by id or agent…", value: state.q, "aria-label": "filter transcripts"});
    input.addEventListener("input", function () { state.q = input.value; state.page = 0; renderTranscripts(); var i2 = document.querySelector("#x-transcripts input.filter"); if (i2) { i2.focus(); i2.setSelectionRange(i2.value.length, i2.value.length); } });
    var sel = el("select", {"aria-label": "sort transcripts", onchange: function (e) { state.sort = e.target.value; state.page = 0; renderTranscripts(); }});
    Object.keys(SORTS).forEach(function (k) { var o = el("option", {value: k, text: SORTS[k][0]}); if (k === state.sort) o.selected = true; sel.appendChild(o); });
    function only(key, text) {
      var box = el("input", {type: "checkbox", onchange: function (e) { state.only[key] = e.target.checked; state.page = 0; renderTranscripts(); }});
      box.checked = !!state.only[key];
      return el("label", null, box, " " + text);
    }
    host.appendChild(el("div", {"class": "controls"}, input, sel, only("acted", "it acted"), only("comp", "it compacted"),
      only("missed", "needs missed"), only("ovf", "calls over the window")));
    var pages = Math.max(1, Math.ceil(rows.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    var table = el("table", {"class": "board", id: "x-table"});
    table.appendChild(el("colgroup", null, ["29%", "10%", "6%", "8%", "7%", "9%", "8%", "8%", "7%", "8%"].map(function (w) { return el("col", {style: "width:" + w}); })));
    table.appendChild(el("thead", null, el("tr", null, ["transcript", "agent", "acted", "compactions", "prunes", "calls over window", "peak context", "effective savings", "recall", "needs missed"].map(function (h, k) { return el("th", {"class": k > 1 ? "num" : "", text: h}); }))));
    var body = el("tbody");
    rows.slice(state.page * PAGE, state.page * PAGE + PAGE).forEach(function (i) {
      var ti = c.t[i];
      var tr = el("tr", {"class": "clickable" + (ti === state.t ? " selected" : ""), onclick: function () { go({s: state.s, t: ti}); }},
        el("td", null, el("code", {text: tids[ti]})), el("td", {text: src[ti]}), el("td", {"class": "num", text: c.acted[i] ? "yes" : "no"}),
        el("td", {"class": "num", text: num(c.comp[i])}), el("td", {"class": "num", text: num(c.prunes[i])}),
        el("td", {"class": "num" + (c.ovf[i] ? " bad" : ""), text: num(c.ovf[i])}),
        el("td", {"class": "num", text: num(c.peak[i])}), el("td", {"class": "num", text: permille(c.net[i])}),
        el("td", {"class": "num", text: permille(c.rec[i])}), el("td", {"class": "num", text: num(c.missed[i]) + " of " + num(c.needs[i])}));
      body.appendChild(tr);
    });
    table.appendChild(body);
    host.appendChild(table);
    host.appendChild(pager(rows.length, pages, function (p) { state.page = p; renderTranscripts(); }, "transcripts"));
  }

  function pager(total, pages, to, what) {
    var page = what === "compactions" ? wstate.page : state.page;
    return el("div", {"class": "pager"},
      el("button", {type: "button", onclick: function () { to(Math.max(0, page - 1)); }, disabled: page === 0 ? "" : null, text: "‹ previous"}),
      el("span", {text: "page " + (page + 1) + " of " + pages + " · " + num(total) + " " + what}),
      el("button", {type: "button", onclick: function () { to(Math.min(pages - 1, page + 1)); }, disabled: page >= pages - 1 ? "" : null, text: "next ›"}));
  }

  function eventsOf(ti) {
    var e = data.events.cols, out = [];
    if (!e.s) return out;
    for (var p = 0; p < e.s.length; p++) if (e.t[p] === ti) out.push({pos: p, s: e.s[p], step: e.step[p] + e.after[p], raw: e.step[p], lost: e.lost[p], ret: e.ret[p], before: e.before[p], afterTokens: e.after_tokens[p], ok: e.ok[p], guards: e.guards[p], after: e.after[p]});
    return out;
  }

  function renderTranscript() {
    var host = clear(document.getElementById("x-transcript"));
    if (state.t === null || !data.rows) return;
    var ti = state.t, c = data.rows.cols, rows = data.byTranscript[ti] || [];
    var box = el("div", {"class": "panelbox"});
    host.appendChild(box);
    box.appendChild(el("h3", null, "Transcript ", el("code", {text: data.rows.tids[ti]}), el("span", {"class": "muted small", text: "  (" + data.rows.sources[ti] + ", window " + num(c.window[rows[0]] || 0) + " tokens)"})));
    var t = el("table", {"class": "board"});
    /* the strategy column wide enough for the longest label on one line (equal columns wrapped it in three) */
    t.appendChild(el("colgroup", null, ["24%", "9%", "8%", "10%", "10%", "10%", "9%", "10%", "10%"].map(function (w) { return el("col", {style: "width:" + w}); })));
    t.appendChild(el("thead", null, el("tr", null, ["strategy", "compactions", "prunes", "calls over window", "peak context", "effective savings", "recall", "needs missed", "cost $"].map(function (h, k) { return el("th", {"class": k ? "num" : "", text: h}); }))));
    var body = el("tbody");
    rows.slice().sort(function (a, b) { return c.s[a] - c.s[b]; }).forEach(function (i) {
      body.appendChild(el("tr", {"class": "clickable tier" + ST[c.s[i]].tier + (c.s[i] === state.s ? " selected" : ""), onclick: function () { go({s: c.s[i], t: ti}); }},
        el("td", null, label(c.s[i])), el("td", {"class": "num", text: num(c.comp[i])}), el("td", {"class": "num", text: num(c.prunes[i])}),
        el("td", {"class": "num" + (c.ovf[i] ? " bad" : ""), text: num(c.ovf[i])}), el("td", {"class": "num", text: num(c.peak[i])}),
        el("td", {"class": "num", text: permille(c.net[i])}), el("td", {"class": "num", text: permille(c.rec[i])}),
        el("td", {"class": "num", text: num(c.missed[i]) + " of " + num(c.needs[i])}), el("td", {"class": "num", text: (c.cost[i] / 1e6).toFixed(4)})));
    });
    t.appendChild(body);
    box.appendChild(t);
    var evs = eventsOf(ti);
    box.appendChild(el("h3", {text: "Context over steps, one panel per strategy"}));
    var modes = el("div", {"class": "controls"});
    [["own", "each its own scale"], ["shared", "one shared scale"], ["log", "log scale"]].forEach(function (m) {
      modes.appendChild(el("button", {type: "button", "class": state.mode === m[0] ? "on" : "", text: m[1], onclick: function () { state.mode = m[0]; renderTranscript(); }}));
    });
    modes.appendChild(el("span", {"class": "small muted", text: "▼ compaction · red dots: calls over the window · dotted: the window"}));
    box.appendChild(modes);
    var panels = el("div");
    box.appendChild(panels);
    var entry = data.series[String(ti)];
    if (entry) entry.w = c.window[rows[0]];
    contextPanels(panels, entry, ti, evs, state.mode);
    var mine = evs.filter(function (e) { return e.s === state.s; });
    box.appendChild(el("h3", null, "Compactions of ", label(state.s), " in this transcript, worst first (" + mine.length + ")"));
    if (!mine.length) { box.appendChild(el("p", {"class": "small muted", text: "None: this strategy did not compact here."})); return; }
    box.appendChild(eventTable(mine.map(function (e) { return e.pos; }), false));
  }

  var GUARDS = [[1, "summary larger"], [2, "dropped constraint"], [4, "fabricated"]];
  function guardsOf(g) { return GUARDS.filter(function (x) { return g & x[0]; }).map(function (x) { return x[1]; }); }

  function eventTable(positions, withTranscript) {
    var e = data.events.cols, tids = data.rows.tids;
    var t = el("table", {"class": "board"});
    var heads = ["#", "strategy"].concat(withTranscript ? ["transcript"] : []).concat(["step", "tokens before → after", "facts lost", "retention", "flags"]);
    t.appendChild(el("thead", null, el("tr", null, heads.map(function (h) { return el("th", {text: h}); }))));
    var body = el("tbody");
    positions.forEach(function (p) {
      var cells = [el("td", {"class": "num", text: String(p + 1)}), el("td", null, label(e.s[p]))];
      if (withTranscript) cells.push(el("td", null, el("code", {text: tids[e.t[p]]})));
      cells.push(el("td", {"class": "num", text: e.step[p] + (e.after[p] ? " (after)" : "")}),
        el("td", {"class": "num" + (e.ok[p] ? "" : " bad"), text: e.ok[p] ? num(e.before[p]) + " → " + num(e.after_tokens[p]) : "failed"}),
        el("td", {"class": "num" + (e.lost[p] ? " bad" : ""), text: num(e.lost[p])}), el("td", {"class": "num", text: permille(e.ret[p])}),
        el("td", null, guardsOf(e.guards[p]).map(function (g) { return el("span", {"class": "flag", text: g}); })));
      body.appendChild(el("tr", {"class": "clickable" + (p === state.c ? " selected" : ""), onclick: function () { go({s: e.s[p], t: e.t[p], c: p}); }}, cells));
    });
    t.appendChild(body);
    return t;
  }

  function renderCompaction() {
    var host = clear(document.getElementById("x-compaction"));
    if (state.c === null || !data.events || !data.events.cols.s || state.c >= data.events.cols.s.length) return;
    var e = data.events.cols, p = state.c, d = data.details[String(p)];
    var box = el("div", {"class": "panelbox"});
    host.appendChild(box);
    box.appendChild(el("h3", null, "Compaction #" + (p + 1) + " of ", label(e.s[p]), " in ", el("code", {text: data.rows.tids[e.t[p]]}), " at step " + e.step[p] + (e.after[p] ? " (after the call)" : " (before the call)")));
    box.appendChild(el("p", {text: (e.ok[p] ? num(e.before[p]) + " → " + num(e.after_tokens[p]) + " tokens" : "failed") + " · " + e.lost[p] + " facts lost · retention " + permille(e.ret[p])}));
    if (!d) {
      box.appendChild(el("p", {"class": "small muted", text: "Its summary and facts are not embedded: the report keeps the details of the " + S.counts.details + " worst compactions (each strategy's worst in turn); compactions.parquet in the run has every one."}));
      return;
    }
    var ret = d.verbatim === null || d.verbatim === undefined ? "" : " (" + pct(d.verbatim, 0) + " verbatim, " + pct(d.carried, 0) + " carried by the summary)";
    box.appendChild(el("p", {text: "Trigger " + d.reason + "; replaced " + num(d.replaced) + " messages (" + num(d.replaced_tokens) + " tokens) with a " + num(d.summary_tokens) + "-token summary" + ret + "." +
      (d.cache_rewritten === null || d.cache_rewritten === undefined ? "" : " Cache broken: " + num(d.cache_rewritten) + " tokens re-written ($" + d.cache_dollars.toFixed(4) + " over reading them from the cache).") + (d.error ? " Error: " + d.error : "")}));
    if (d.guards.length) box.appendChild(el("p", null, d.guards.map(function (g) { return el("span", {"class": "flag", text: g}); })));
    box.appendChild(el("h3", {text: "Facts lost (" + d.lost.length + ")"}));
    if (d.lost.length) box.appendChild(el("ul", {"class": "lost"}, d.lost.map(function (f) { return el("li", null, el("span", {"class": "kind", text: f[0]}), " ", f[1]); })));
    else box.appendChild(el("p", {"class": "small muted", text: "None."}));
    if (d.fabricated.length) box.appendChild(el("p", null, el("strong", {text: "In the summary but nowhere in what it replaced: "}), d.fabricated.map(function (f) { return el("code", {text: f + " "}); })));
    box.appendChild(el("h3", {text: "Summary" + (d.summary_chars > d.summary.length ? " (first " + num(d.summary.length) + " of " + num(d.summary_chars) + " characters)" : "")}));
    box.appendChild(el("pre", {"class": "summary", text: d.summary || "(empty)"}));
    if (d.preview.length) {
      box.appendChild(el("h3", {text: "What it replaced (first messages)"}));
      box.appendChild(el("pre", {"class": "replaced", text: d.preview.join("\n")}));
    }
  }

  /* ---------- worst compactions, all strategies ---------- */
  var wstate = {page: 0, s: -1, q: "", guards: false, failed: false};
  function renderWorst() {
    var host = clear(document.getElementById("w-list"));
    var e = data.events.cols;
    if (!e.s || !e.s.length) { host.appendChild(el("p", {"class": "small muted", text: "No compaction in this run."})); return; }
    var tids = data.rows.tids, q = wstate.q.toLowerCase(), list = [];
    for (var p = 0; p < e.s.length; p++) {
      if (wstate.s >= 0 && e.s[p] !== wstate.s) continue;
      if (wstate.guards && !e.guards[p]) continue;
      if (wstate.failed && e.ok[p]) continue;
      if (q && tids[e.t[p]].toLowerCase().indexOf(q) < 0) continue;
      list.push(p);
    }
    var sel = el("select", {"aria-label": "strategy", onchange: function (ev) { wstate.s = +ev.target.value; wstate.page = 0; renderWorst(); }});
    sel.appendChild(el("option", {value: "-1", text: "every strategy"}));
    ST.forEach(function (s, si) { var o = el("option", {value: String(si), text: s.label}); if (si === wstate.s) o.selected = true; sel.appendChild(o); });
    var input = el("input", {"class": "filter", placeholder: "filter by transcript…", value: wstate.q, "aria-label": "filter compactions by transcript"});
    input.addEventListener("change", function () { wstate.q = input.value; wstate.page = 0; renderWorst(); });
    function box(key, text) { var b = el("input", {type: "checkbox", onchange: function (ev) { wstate[key] = ev.target.checked; wstate.page = 0; renderWorst(); }}); b.checked = wstate[key]; return el("label", null, b, " " + text); }
    host.appendChild(el("div", {"class": "controls"}, sel, input, box("guards", "with guard flags"), box("failed", "failed only")));
    var pages = Math.max(1, Math.ceil(list.length / PAGE));
    wstate.page = Math.min(wstate.page, pages - 1);
    host.appendChild(eventTable(list.slice(wstate.page * PAGE, wstate.page * PAGE + PAGE), true));
    host.appendChild(pager(list.length, pages, function (pg) { wstate.page = pg; renderWorst(); }, "compactions"));
  }

  function luminance(css) {
    var v = (css.match(/[\d.]+/g) || ["0", "0", "0"]).slice(0, 3).map(function (x) {
      x = Number(x) / 255;
      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  }

  function minContrast() {
    /* the lowest text/background contrast of a selected control (WCAG's ratio; AA asks 4.5) */
    var low = 21;
    document.querySelectorAll(".on").forEach(function (e) {
      var st = getComputedStyle(e), bg = st.backgroundColor;
      if (/rgba\(.*,\s*0\)$/.test(bg) || bg === "transparent") return;
      var a = luminance(st.color), b = luminance(bg);
      low = Math.min(low, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
    });
    return Math.round(low * 100) / 100;
  }

  /* "n=1, few" marks drawn on more than one line (a narrow column wrapped them): none should be */
  function fewWrapped() {
    var n = 0;
    document.querySelectorAll(".few").forEach(function (e) {
      var r = e.getBoundingClientRect(), line = parseFloat(getComputedStyle(e).fontSize) * 1.8;
      if (r.height > line) n += 1;
    });
    return n;
  }

  function layoutCheck() {
    /* measured by the browser test at 1400 px: a cut-off column, an unreadable selected control show here */
    var lb = document.getElementById("lb"), heads = lb ? lb.querySelectorAll("thead th") : [];
    var last = heads.length ? heads[heads.length - 1].getBoundingClientRect() : {right: 0};
    var fo = drawn.frontier ? drawn.frontier.getOption() : null;
    document.documentElement.setAttribute("data-layout", JSON.stringify({
      contrast: minContrast(), nodata: drawn.nodata, labels: drawn.frontier ? drawnLabels(drawn.frontier) : null,
      points: ST.filter(function (s) { return s.m[H].v !== null && s.m[R].v !== null; }).length,
      named: drawn.named ? drawn.named() : 0, kinds: drawn.kinds || null, fewWrapped: fewWrapped(),
      frontier: fo ? {x: [fo.xAxis[0].min, fo.xAxis[0].max], y: [fo.yAxis[0].min, fo.yAxis[0].max]} : null,
      viewport: document.documentElement.clientWidth, page: document.documentElement.scrollWidth,
      table: lb ? lb.scrollWidth : 0, box: lb ? lb.parentElement.clientWidth : 0,
      last: Math.round(last.right), lastTop: Math.round(last.top), lastBottom: Math.round(last.bottom),
      lastLeft: Math.round(last.left)}));
  }

  frontierChart();
  kindsChart();
  layoutCheck();
  load().then(function () {
    if (!parse()) {
      var start = S.start !== null ? ST.map(function (s) { return s.label; }).indexOf(S.start) : 0;
      state.s = Math.max(0, start);
      var worst = data.byStrategy[state.s].slice().sort(function (a, b) { return SORTS.worst[1](data.rows.cols, a, b); });
      state.t = worst.length ? data.rows.cols.t[worst[0]] : null;
      state.c = null;
      renderStrategies(); renderTranscripts(); renderTranscript(); renderCompaction();
    } else {
      route(true);
    }
    renderWorst();
    layoutCheck();
    document.documentElement.setAttribute("data-ready", "1");
  }).catch(function (err) {
    document.getElementById("x-transcripts").appendChild(el("p", {"class": "note", text: "Could not read the report's data: " + err}));
    document.documentElement.setAttribute("data-ready", "error");
  });
})();
