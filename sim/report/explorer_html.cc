#include "sim/report/explorer_html.h"

namespace meshsim {
namespace {

constexpr const char* kHead = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>)HTML";

constexpr const char* kStyle = R"HTML(</title>
<style>
  :root { --w:#4e79a7; --g:#f28e2b; --o:#e15759; --a:#76b7b2; --b:#b07aa1; --ink:#1d2330; --muted:#667085; }
  * { box-sizing: border-box; }
  body { font: 14px/1.45 "DejaVu Sans", system-ui, sans-serif; color: var(--ink); margin: 0; background: #f6f7f9; }
  header { background: #1d2330; color: #fff; padding: 14px 24px; }
  header h1 { font-size: 19px; margin: 0 0 2px; font-weight: 600; }
  header p { margin: 0; color: #c9ced8; font-size: 13px; }
  main { padding: 16px 24px; display: grid; grid-template-columns: minmax(520px, 1.25fr) minmax(380px, 1fr); gap: 16px; }
  section { background: #fff; border: 1px solid #e3e6eb; border-radius: 8px; padding: 14px 16px; }
  h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: 0 0 10px; font-weight: 600; }
  .controls { display: flex; flex-wrap: wrap; gap: 10px 14px; }
  .controls label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
  .controls select { font: inherit; font-size: 14px; padding: 4px 6px; min-width: 76px; margin-top: 2px; }
  .stats { display: grid; grid-template-columns: repeat(4, 1fr); gap: 8px; margin-top: 14px; }
  .stat { background: #f6f7f9; border-radius: 6px; padding: 8px 10px; }
  .stat .k { font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
  .stat .v { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
  .badge { display: inline-block; padding: 2px 9px; border-radius: 10px; font-weight: 600; font-size: 12px; }
  .fits { background: #d9f2e3; color: #116b3a; } .over { background: #fde2e1; color: #a61b1b; } .pruned { background: #fdebd3; color: #8a4b00; }
  .planline { margin-top: 12px; color: var(--muted); }
  .barwrap { position: relative; height: 44px; margin: 26px 0 8px; background: #eef0f3; border-radius: 4px; }
  .seg { position: absolute; top: 0; height: 100%; }
  .budget { position: absolute; top: -20px; bottom: -6px; border-left: 2px dashed #1d2330; }
  .budget span { position: absolute; top: 0; left: 4px; font-size: 11px; white-space: nowrap; }
  .legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; color: var(--muted); }
  .legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
  .memtext { margin-top: 6px; font-variant-numeric: tabular-nums; }
  table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; font-size: 13px; }
  th, td { text-align: right; padding: 3px 6px; border-bottom: 1px solid #eef0f3; }
  th { color: var(--muted); font-weight: 600; font-size: 11px; text-transform: uppercase; }
  tbody tr { cursor: pointer; } tbody tr:hover { background: #f1f5fb; } tr.sel { background: #e4edf9; }
  svg text { font: 11px "DejaVu Sans", sans-serif; fill: var(--muted); }
  .msg { color: #a61b1b; margin-top: 6px; font-size: 13px; }
  .wide { grid-column: 1 / -1; }
</style>
</head>
<body>
<header><h1 id="title">)HTML";

constexpr const char* kBody = R"HTML(</h1><p id="subtitle"></p></header>
<main>
  <section>
    <h2>Plan</h2>
    <div class="controls" id="controls"></div>
    <div class="planline"><span id="status" class="badge"></span> <span id="plan-text"></span></div>
    <div class="stats">
      <div class="stat"><div class="k">step time</div><div class="v" id="step">–</div></div>
      <div class="stat"><div class="k">MFU</div><div class="v" id="mfu">–</div></div>
      <div class="stat"><div class="k">bubble</div><div class="v" id="bubble">–</div></div>
      <div class="stat"><div class="k">tokens / s</div><div class="v" id="tps">–</div></div>
    </div>
    <h2 style="margin-top:18px">Memory per GPU</h2>
    <div class="barwrap" id="bar"></div>
    <div class="legend" id="legend"></div>
    <div class="memtext" id="memory-text"></div>
    <div class="msg" id="message"></div>
  </section>
  <section>
    <h2>Step time vs peak memory</h2>
    <svg id="scatter" width="100%" viewBox="0 0 460 300" preserveAspectRatio="xMidYMid meet"></svg>
  </section>
  <section class="wide">
    <h2>Fastest plans that fit</h2>
    <table id="top"><thead><tr><th>#</th><th>tp</th><th>pp</th><th>dp</th><th>zero</th><th>mb</th><th>schedule</th><th>recompute</th><th>step s</th><th>MFU</th><th>bubble</th><th>GiB</th></tr></thead><tbody></tbody></table>
  </section>
</main>
<script type="application/json" id="data">)HTML";

constexpr const char* kScript = R"HTML(</script>
<script>
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var rows = data.rows;
  var colors = ["var(--w)", "var(--g)", "var(--o)", "var(--a)", "var(--b)"];
  var dims = [["tp", "TP"], ["pp", "PP"], ["dp", "DP"], ["zero", "ZeRO"], ["mb", "micro-batch"],
              ["cp", "CP"], ["ep", "EP"], ["schedule", "schedule"], ["v", "virtual stages"],
              ["recompute", "recompute"], ["sp", "seq. parallel"]];
  var meshDims = data.mesh_dims || [];  // a JAX-style sweep's mesh sizes and rules
  dims = dims.concat(meshDims);
  var always = {tp: 1, pp: 1, dp: 1, zero: 1, mb: 1};
  var shown = dims.filter(function (d) {
    if (always[d[0]]) return true;
    var seen = {};
    rows.forEach(function (r) { seen[String(r[d[0]])] = 1; });
    return Object.keys(seen).length > 1;
  });
  var current = null;
  var $ = function (id) { return document.getElementById(id); };
  // "stage 1×1 · data 8×2 · embed data": each mesh axis's ICI×DCN sizes, then the rules and knobs.
  function meshText(r) {
    var axes = [], sizes = {}, out = [];
    meshDims.forEach(function (d) {
      var m = /^plan\.mesh\.(ici|dcn)\.(.+)$/.exec(d[0]);
      if (!m) return;
      if (!sizes[m[2]]) { sizes[m[2]] = {}; axes.push(m[2]); }
      sizes[m[2]][m[1]] = r[d[0]];
    });
    axes.forEach(function (a) {
      var z = sizes[a];
      out.push(a + " " + (z.ici !== undefined && z.dcn !== undefined ? z.ici + "×" + z.dcn :
                          z.ici !== undefined ? "ici " + z.ici : "dcn " + z.dcn));
    });
    meshDims.forEach(function (d) {
      if (!/^plan\.mesh\./.test(d[0])) out.push(d[1].replace(/^(rule|XLA) /, "") + " " + r[d[0]]);
    });
    return out.join(" · ");
  }
  function text(id, s, value) {
    var el = $(id);
    el.textContent = s;
    if (value !== undefined) el.setAttribute("data-value", String(value));
  }
  function fmt(x, d) { return x.toLocaleString("en-US", {maximumFractionDigits: d, minimumFractionDigits: d}); }
  function better(a, b) {
    if (a.simulated !== b.simulated) return a.simulated;
    if (a.simulated && a.step !== b.step) return a.step < b.step;
    if (a.memory !== b.memory) return a.memory < b.memory;
    return a.config < b.config;
  }
  function sortValues(vals) {
    return vals.sort(function (a, b) {
      var x = Number(a), y = Number(b);
      if (!isNaN(x) && !isNaN(y)) return x - y;
      return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
    });
  }
  // The row that matches `want` best: `must` keys exactly, then as many others as possible.
  function choose(want, must) {
    var best = null, bestScore = -1;
    rows.forEach(function (r) {
      for (var i = 0; i < must.length; i++) if (String(r[must[i]]) !== String(want[must[i]])) return;
      var score = 0;
      Object.keys(want).forEach(function (k) { if (String(r[k]) === String(want[k])) score++; });
      if (score > bestScore || (score === bestScore && better(r, best))) { best = r; bestScore = score; }
    });
    return best;
  }
  function buildControls() {
    var box = $("controls");
    shown.forEach(function (d) {
      var label = document.createElement("label");
      label.textContent = d[1];
      var sel = document.createElement("select");
      sel.id = "ctl-" + d[0];
      var seen = {};
      rows.forEach(function (r) { seen[String(r[d[0]])] = 1; });
      sortValues(Object.keys(seen)).forEach(function (v) {
        var o = document.createElement("option");
        o.value = v; o.textContent = v;
        sel.appendChild(o);
      });
      sel.addEventListener("change", function () { change(d[0], sel.value); });
      label.appendChild(sel);
      box.appendChild(label);
    });
  }
  function want() {
    var w = {};
    shown.forEach(function (d) { if (current) w[d[0]] = String(current[d[0]]); });
    return w;
  }
  // A control changed (by the user, or by the URL hash): select the closest plan.
  function change(key, value) {
    var w = want();
    w[key] = String(value);
    var r = choose(w, [key]);
    if (r) select(r);
  }
  function select(r) {
    current = r;
    shown.forEach(function (d) { $("ctl-" + d[0]).value = String(r[d[0]]); });
    render();
    var h = shown.slice(0, 5).map(function (d) { return d[0] + "=" + encodeURIComponent(String(r[d[0]])); }).join("&");
    if (history.replaceState) history.replaceState(null, "", "#" + h);
  }
  function render() {
    var r = current;
    document.body.setAttribute("data-config", String(r.config));
    var status = $("status");
    var fits = r.status === "ok";
    status.className = "badge " + (fits ? "fits" : r.simulated ? "over" : "pruned");
    status.textContent = fits ? "fits" : r.simulated ? "over budget" : "over budget (pruned, not simulated)";
    text("plan-text", "tp " + r.tp + " · pp " + r.pp + " · dp " + r.dp + (r.cp > 1 ? " · cp " + r.cp : "") +
         (r.ep > 1 ? " · ep " + r.ep : "") +
         " · ZeRO-" + r.zero + " · micro-batch " + r.mb + " · " + r.schedule + (r.v > 1 ? " ×" + r.v : "") +
         " · " + r.recompute + " recompute" + (r.sp ? " · SP" : "") +
         (meshDims.length ? " · JAX mesh: " + meshText(r) : "") + "  (configuration " + r.config + ")");
    if (r.simulated) {
      text("step", fmt(r.step, 3) + " s", r.step);
      text("mfu", fmt(100 * r.mfu, 1) + " %", r.mfu);
      text("bubble", fmt(100 * r.bubble, 1) + " %", r.bubble);
      text("tps", fmt(r.tokens_per_s, 0), r.tokens_per_s);
    } else {
      ["step", "mfu", "bubble", "tps"].forEach(function (id) { text(id, "–", ""); });
    }
    var bar = $("bar");
    while (bar.firstChild) bar.removeChild(bar.firstChild);
    var scale = Math.max(r.budget, r.memory) * 1.08;
    var x = 0;
    r.breakdown.forEach(function (gib, i) {
      var seg = document.createElement("div");
      seg.className = "seg";
      seg.style.left = (100 * x / scale) + "%";
      seg.style.width = (100 * gib / scale) + "%";
      seg.style.background = colors[i];
      seg.title = data.categories[i] + ": " + fmt(gib, 2) + " GiB";
      bar.appendChild(seg);
      x += gib;
    });
    var line = document.createElement("div");
    line.className = "budget";
    line.style.left = (100 * r.budget / scale) + "%";
    var lab = document.createElement("span");
    lab.textContent = "budget " + fmt(r.budget, 0) + " GiB";
    line.appendChild(lab);
    bar.appendChild(line);
    var over = r.memory - r.budget;
    text("memory-text", (r.simulated ? "peak " : "at least ") + fmt(r.memory, 2) + " GiB of " + fmt(r.budget, 0) +
         " GiB" + (over > 0 ? " — over by " + fmt(over, 1) + " GiB (" + fmt(r.memory / r.budget, 1) + "×)"
                             : " — " + fmt(-over, 1) + " GiB to spare"), r.memory);
    text("message", r.message || "");
    drawScatter();
    document.querySelectorAll("#top tbody tr").forEach(function (tr) {
      tr.className = tr.getAttribute("data-config") === String(r.config) ? "sel" : "";
    });
  }
  function svgEl(name, attrs) {
    var el = document.createElementNS("http://www.w3.org/2000/svg", name);
    Object.keys(attrs).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    return el;
  }
  var sims = rows.filter(function (r) { return r.simulated; });
  function drawScatter() {
    var svg = $("scatter");
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    if (!sims.length) {
      var t = svgEl("text", {x: 20, y: 40}); t.textContent = "no simulated plan"; svg.appendChild(t); return;
    }
    var L = 52, R = 448, T = 12, B = 262;
    var xs = sims.map(function (r) { return r.memory; }).concat([data.budget_gib]);
    var ys = sims.map(function (r) { return r.step; });
    var x0 = 0, x1 = Math.max.apply(null, xs) * 1.05, y0 = 0, y1 = Math.max.apply(null, ys) * 1.05;
    var X = function (v) { return L + (R - L) * (v - x0) / (x1 - x0); };
    var Y = function (v) { return B - (B - T) * (v - y0) / (y1 - y0); };
    svg.appendChild(svgEl("line", {x1: L, y1: B, x2: R, y2: B, stroke: "#99a"}));
    svg.appendChild(svgEl("line", {x1: L, y1: T, x2: L, y2: B, stroke: "#99a"}));
    for (var i = 0; i <= 4; i++) {
      var tx = svgEl("text", {x: X(x0 + (x1 - x0) * i / 4), y: B + 14, "text-anchor": "middle"});
      tx.textContent = fmt(x0 + (x1 - x0) * i / 4, 0); svg.appendChild(tx);
      var ty = svgEl("text", {x: L - 5, y: Y(y0 + (y1 - y0) * i / 4) + 4, "text-anchor": "end"});
      ty.textContent = fmt(y0 + (y1 - y0) * i / 4, 2); svg.appendChild(ty);
    }
    var lx = svgEl("text", {x: (L + R) / 2, y: 292, "text-anchor": "middle"}); lx.textContent = "peak memory per GPU (GiB)"; svg.appendChild(lx);
    var ly = svgEl("text", {x: 12, y: (T + B) / 2, transform: "rotate(-90 12 " + (T + B) / 2 + ")", "text-anchor": "middle"}); ly.textContent = "step time (s)"; svg.appendChild(ly);
    svg.appendChild(svgEl("line", {x1: X(data.budget_gib), y1: T, x2: X(data.budget_gib), y2: B, stroke: "#1d2330", "stroke-dasharray": "4 3"}));
    sims.forEach(function (r) {
      var c = svgEl("circle", {cx: X(r.memory), cy: Y(r.step), r: r === current ? 6 : 3.5,
        fill: r.status === "ok" ? "#4e79a7" : "#e15759", "fill-opacity": r === current ? 1 : 0.55,
        stroke: r === current ? "#1d2330" : "none", "stroke-width": 2});
      c.style.cursor = "pointer";
      c.addEventListener("click", function () { select(r); });
      var tip = svgEl("title", {}); tip.textContent = "tp " + r.tp + " pp " + r.pp + " dp " + r.dp + " zero " + r.zero + " mb " + r.mb;
      c.appendChild(tip);
      svg.appendChild(c);
    });
  }
  function buildTop() {
    var ok = rows.filter(function (r) { return r.status === "ok"; });
    ok.sort(function (a, b) { return better(a, b) ? -1 : better(b, a) ? 1 : 0; });
    var body = document.querySelector("#top tbody");
    var head = document.querySelector("#top thead tr");
    if (meshDims.length) {
      var th = document.createElement("th");
      th.textContent = "JAX mesh (ICI×DCN)";
      head.insertBefore(th, head.children[1]);
    }
    // An ep column where the plans' expert parallelism varies (a MoE model's), after dp.
    var epVaries = rows.some(function (r) { return r.ep !== rows[0].ep; });
    if (epVaries) {
      var ep = document.createElement("th");
      ep.textContent = "ep";
      head.insertBefore(ep, head.children[(meshDims.length ? 1 : 0) + 4]);
    }
    ok.slice(0, 15).forEach(function (r, i) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-config", String(r.config));
      [i + 1].concat(meshDims.length ? [meshText(r)] : []).concat([r.tp, r.pp, r.dp])
       .concat(epVaries ? [r.ep] : []).concat([r.zero, r.mb,
       r.schedule + (r.v > 1 ? "×" + r.v : ""), r.recompute,
       fmt(r.step, 3), fmt(100 * r.mfu, 1) + "%", fmt(100 * r.bubble, 1) + "%", fmt(r.memory, 1)]).forEach(function (v) {
        var td = document.createElement("td"); td.textContent = String(v); tr.appendChild(td);
      });
      tr.addEventListener("click", function () { select(r); });
      body.appendChild(tr);
    });
  }
  function legend() {
    var box = $("legend");
    data.categories.forEach(function (c, i) {
      var s = document.createElement("span");
      var sw = document.createElement("i"); sw.style.background = colors[i];
      s.appendChild(sw); s.appendChild(document.createTextNode(c)); box.appendChild(s);
    });
  }
  // #tp=8&pp=4&...: the same as choosing these values with the controls.
  function applyHash() {
    var h = location.hash.replace(/^#/, "");
    if (!h) return false;
    var w = want(), keys = [];
    h.split("&").forEach(function (kv) {
      var p = kv.split("=");
      if (p.length === 2 && shown.some(function (d) { return d[0] === p[0]; })) {
        w[p[0]] = decodeURIComponent(p[1]); keys.push(p[0]);
      }
    });
    if (!keys.length) return false;
    var r = choose(w, []);
    if (r) { keys.forEach(function (k) { w[k] = String(r[k]); }); select(r); }
    return !!r;
  }
  text("title", data.title);
  text("subtitle", data.subtitle);
  document.title = data.title + " — meshsim explorer";
  if (!rows.length) { text("plan-text", "no plans to show"); return; }
  buildControls();
  legend();
  buildTop();
  var first = rows.slice().sort(function (a, b) { return better(a, b) ? -1 : better(b, a) ? 1 : 0; })[0];
  current = first;
  if (!applyHash()) select(first);
  window.addEventListener("hashchange", applyHash);
})();
</script>
</body>
</html>
)HTML";

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ScriptSafeJson(const nlohmann::ordered_json& data) {
  // ensure_ascii writes every non-ASCII character (U+2028 and U+2029 included) as \u
  // escapes; '<', '>' and '&' only occur inside JSON strings, where \u escapes are equal.
  const std::string json = data.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void WriteExplorerHtml(const nlohmann::ordered_json& data, std::ostream& out) {
  const std::string title = data.contains("title") && data["title"].is_string()
                                ? data["title"].get<std::string>()
                                : std::string("meshsim");
  out << kHead << HtmlEscape(title + " — meshsim explorer") << kStyle << HtmlEscape(title) << kBody
      << ScriptSafeJson(data) << kScript;
}

}  // namespace meshsim
