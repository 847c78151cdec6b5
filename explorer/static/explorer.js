// The sawtooth explorer's page: it asks the server for the figures
// (figures?size=...; the server's Go code is atmlab calc's) and draws them.
// It computes no figure itself; it only scales them to pixels and prints them.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const KINDS = ["phy", "atm", "sar", "cpcs", "llc", "ip", "udp", "payload", "pad", "trailer"];
const NAMES = { phy: "ATM25 command", atm: "cell header", sar: "SAR header/trailer", cpcs: "CPCS header",
  llc: "LLC/SNAP", ip: "IP header", udp: "UDP header", payload: "payload", pad: "pad", trailer: "CPCS trailer" };

let asked = 0;   // the latest request's number: older answers are dropped
let shown = 0;
const sel = { phy: "oc3", aal: "aal5", encap: "llc" };

function mbit(bps) { return (bps / 1e6).toFixed(3); }

function el(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function cell(tr, text) {
  const td = document.createElement("td");
  td.textContent = text;
  tr.appendChild(td);
  return td;
}

async function refresh() {
  const n = ++asked;
  const q = new URLSearchParams({ size: $("sizeNum").value, mtu: $("mtu").value,
    phy: sel.phy, aal: sel.aal, encap: sel.encap, ethmtu: $("ethmtu").value });
  let f;
  try {
    const r = await fetch("figures?" + q, { cache: "no-store" });
    const body = await r.text();
    if (!r.ok) throw new Error(body.trim());
    f = JSON.parse(body);
  } catch (e) {
    if (n === asked) $("error").textContent = e.message;
    return;
  }
  if (n < shown) return;
  shown = n;
  $("error").textContent = "";
  draw(f);
}

function draw(f) {
  if ($("phy").options.length === 0) {
    for (const p of f.phys) $("phy").appendChild(new Option(p, p, p === sel.phy, p === sel.phy));
  }
  $("r-size").textContent = f.size_bytes;
  const tb = $("rows").tBodies[0];
  tb.replaceChildren();
  for (const r of f.rows) {
    const tr = document.createElement("tr");
    tr.dataset.key = r.phy + "/" + r.aal + "/" + r.encap;
    tr.dataset.cells = r.cells;
    tr.dataset.goodput = r.ceiling.goodput_bps;
    if (r.phy === sel.phy && r.aal === sel.aal && r.encap === sel.encap) tr.className = "selected";
    cell(tr, r.phy); cell(tr, r.aal); cell(tr, r.encap); cell(tr, mbit(r.line_rate_bps));
    cell(tr, r.ceiling.frames_per_message); cell(tr, r.cells); cell(tr, r.ceiling.wire_bytes);
    cell(tr, r.ceiling.efficiency.toFixed(4)); cell(tr, mbit(r.ceiling.goodput_bps));
    tr.onclick = () => { select(r.phy, r.aal, r.encap); };
    tb.appendChild(tr);
  }
  $("e-size").textContent = f.size_bytes;
  $("e-mtu").textContent = f.ether_mtu;
  const eb = $("ether").tBodies[0];
  eb.replaceChildren();
  for (const r of f.ethernet) {
    const tr = document.createElement("tr");
    tr.dataset.rate = r.rate_bps;
    tr.dataset.goodput = r.ceiling.goodput_bps;
    tr.dataset.frames = r.ceiling.frames_per_message;
    cell(tr, mbit(r.rate_bps)); cell(tr, r.ceiling.frames_per_message); cell(tr, r.ceiling.wire_bytes);
    cell(tr, r.ceiling.efficiency.toFixed(4)); cell(tr, mbit(r.ceiling.goodput_bps));
    eb.appendChild(tr);
  }
  const d = f.detail;
  $("d-path").textContent = d.phy + " " + d.aal + " " + d.encap;
  $("d-size").textContent = f.size_bytes;
  $("d-cells").textContent = d.cells;
  $("d-cells").dataset.value = d.cells;
  $("d-eff").textContent = d.ceiling.efficiency.toFixed(4);
  $("d-ceiling").textContent = mbit(d.ceiling.goodput_bps);
  $("d-ceiling").dataset.value = d.ceiling.goodput_bps;
  drawLayout(d.packets);
  drawSaw(f, d);
  $("s-from").textContent = f.from;
  $("s-to").textContent = f.to;
  const st = $("steps").tBodies[0];
  st.replaceChildren();
  for (const s of d.steps) {
    const tr = document.createElement("tr");
    cell(tr, s.size_bytes); cell(tr, s.cells); cell(tr, mbit(s.goodput_bps));
    cell(tr, s.cells + 1); cell(tr, mbit(s.next_goodput_bps)); cell(tr, (100 * s.drop).toFixed(1) + " %");
    st.appendChild(tr);
  }
  $("measured-box").hidden = !d.results;
  $("m-count").textContent = d.measured.length;
  $("m-dir").textContent = d.results || "";
  const mt = $("measured").tBodies[0];
  mt.replaceChildren();
  const line = new Map(d.line.map((p) => [p.size_bytes, p]));
  for (const m of d.measured) {
    const tr = document.createElement("tr");
    cell(tr, m.variant); cell(tr, m.experiment); cell(tr, m.test); cell(tr, m.size_bytes);
    cell(tr, mbit(m.throughput_bps)); cell(tr, m.ceiling_bps ? mbit(m.ceiling_bps) : "");
    const p = line.get(m.size_bytes);
    cell(tr, p ? mbit(p.goodput_bps) : "(outside the window)");
    tr.onclick = () => { setSize(m.size_bytes); };
    mt.appendChild(tr);
  }
  // What the page shows now, for tests to wait on.
  document.body.dataset.path = d.phy + "/" + d.aal + "/" + d.encap;
  document.body.dataset.size = f.size_bytes;
}

// drawLayout draws each packet's cells as boxes of 2 px an octet, eight to a
// row; long packets show their first and last cells around an ellipsis.
function drawLayout(packets) {
  const svg = $("layout");
  svg.replaceChildren();
  const W = 2, perRow = 8, gap = 8, h = 16, rowH = h + 6;
  let y = 0;
  for (const [i, pk] of packets.entries()) {
    svg.appendChild(el("text", { x: 0, y: y + 12 }, (packets.length > 1 ? "fragment " + (i + 1) + ": " : "") +
      pk.ip_bytes + "-byte IP packet, AAL SDU " + pk.sdu_bytes + " B, " + pk.cells.length + " cells"));
    y += 18;
    let list = pk.cells.map((c, j) => [j, c]);
    let skipped = 0;
    if (list.length > 40) {
      skipped = list.length - 32;
      list = list.slice(0, 24).concat([null], list.slice(-8));
    }
    let col = 0;
    for (const item of list) {
      const x0 = col * (53 * W + gap);
      if (item === null) {
        svg.appendChild(el("text", { x: x0 + 4, y: y + 12 }, "… " + skipped + " more"));
      } else {
        let x = x0;
        for (const p of item[1]) {
          const r = el("rect", { x: x, y: y, width: p.bytes * W, height: h, class: "k-" + p.kind, stroke: "#999", "stroke-width": 0.5 });
          r.appendChild(el("title", {}, "cell " + (item[0] + 1) + ": " + NAMES[p.kind] + ", " + p.bytes + " B"));
          svg.appendChild(r);
          x += p.bytes * W;
        }
      }
      if (++col === perRow) { col = 0; y += rowH; }
    }
    if (col !== 0) y += rowH;
    y += 6;
  }
  svg.setAttribute("height", y);
  const lg = $("legend");
  if (lg.childElementCount === 0) {
    for (const k of KINDS) {
      const s = document.createElement("span");
      const sw = document.createElementNS(SVG, "svg");
      sw.setAttribute("width", 12); sw.setAttribute("height", 12);
      sw.style.display = "inline"; sw.style.margin = "0 4px 0 0";
      sw.appendChild(el("rect", { width: 12, height: 12, class: "k-" + k, stroke: "#999" }));
      s.appendChild(sw);
      s.appendChild(document.createTextNode(NAMES[k]));
      lg.appendChild(s);
    }
  }
}

// COLOURS are the measured paths' colours, curve by curve.
const COLOURS = ["#c0392b", "#1f77b4", "#2ca02c", "#9467bd", "#e67e22", "#17becf"];

// drawSaw draws the chosen path's ceiling over the window, the chosen
// size, the steps, and the measured points that fall in the window, each
// on its own path's ceiling (a variant's curve), with the axis and round
// ticks the server chose and a legend.
function drawSaw(f, d) {
  const svg = $("saw");
  svg.replaceChildren();
  const W = +svg.getAttribute("width"), H = +svg.getAttribute("height");
  const L = 70, R = 10, T = 10, B = 30;
  const meas = d.measured.filter((m) => m.size_bytes >= f.from && m.size_bytes <= f.to);
  const ax = d.axis, lo = ax.y_min_bps, hi = ax.y_max_bps;
  const span = Math.max(1, f.to - f.from);
  const X = (s) => L + (s - f.from) / span * (W - L - R);
  const Y = (g) => T + (hi - g) / (hi - lo) * (H - T - B);
  svg.appendChild(el("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }));
  svg.appendChild(el("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
  for (const t of ax.y_ticks) {
    svg.appendChild(el("line", { x1: L - 4, y1: Y(t.value), x2: W - R, y2: Y(t.value), class: "grid" }));
    svg.appendChild(el("text", { x: L - 6, y: Y(t.value) + 4, "text-anchor": "end", class: "ytick" }, t.label));
  }
  for (const t of ax.x_ticks) {
    svg.appendChild(el("line", { x1: X(t.value), y1: H - B, x2: X(t.value), y2: H - B + 4, class: "axis" }));
    svg.appendChild(el("text", { x: X(t.value), y: H - 10, "text-anchor": "middle", class: "xtick" }, t.label));
  }
  svg.appendChild(el("text", { x: L + 8, y: T + 10 }, "goodput ceiling, Mbit/s, by UDP payload, bytes"));
  svg.appendChild(el("polyline", { class: "line", points: d.line.map((p) => X(p.size_bytes) + "," + Y(p.goodput_bps)).join(" ") }));
  const shown = new Set(meas.map((m) => m.curve));
  d.curves.forEach((c, i) => {
    if (!shown.has(i)) return;
    svg.appendChild(el("polyline", { class: "curve", "data-curve": i, stroke: COLOURS[i % COLOURS.length],
      points: c.line.map((p) => X(p.size_bytes) + "," + Y(p.goodput_bps)).join(" ") }));
  });
  for (const s of d.steps) {
    const c = el("circle", { cx: X(s.size_bytes), cy: Y(s.goodput_bps), r: 2.5, class: "step" });
    c.appendChild(el("title", {}, s.size_bytes + " B: " + s.cells + " cells, " + mbit(s.goodput_bps) + " Mbit/s; one byte more: " + mbit(s.next_goodput_bps)));
    svg.appendChild(c);
  }
  for (const m of meas) {
    const c = el("circle", { cx: X(m.size_bytes), cy: Y(m.throughput_bps), r: 4, class: "meas", "data-curve": m.curve,
      fill: m.curve >= 0 ? COLOURS[m.curve % COLOURS.length] : "#888" });
    c.appendChild(el("title", {}, m.variant + " " + m.experiment + " " + m.test + " " + m.size_bytes + " B: " + mbit(m.throughput_bps) + " Mbit/s measured"));
    svg.appendChild(c);
  }
  svg.appendChild(el("line", { x1: X(f.size_bytes), y1: T, x2: X(f.size_bytes), y2: H - B, class: "marker" }));
  // the legend: what each line and colour is
  const lg = $("saw-legend");
  lg.replaceChildren();
  const item = (cls, colour, text, curve) => {
    const s = document.createElement("span");
    s.className = "item " + cls;
    if (curve !== undefined) s.dataset.curve = curve;
    const sw = document.createElement("i");
    sw.style.background = colour;
    s.append(sw, text);
    lg.appendChild(s);
  };
  item("chosen", "#222", "ceiling of the path chosen above: " + d.phy + " " + d.aal + " " + d.encap);
  d.curves.forEach((c, i) => {
    if (shown.has(i)) item("measured", COLOURS[i % COLOURS.length], "measured, " + c.variant + " (" + c.test + ", " + c.path + "), on its own ceiling", i);
  });
  if (shown.has(-1)) item("unknown", "#888", "measured, path not known (no lab in the results folder)");
}

function select(phy, aal, encap) {
  sel.phy = phy; sel.aal = aal; sel.encap = encap;
  $("phy").value = phy; $("aal").value = aal; $("encap").value = encap;
  refresh();
}

function setSize(n) {
  $("sizeNum").value = n;
  if (n <= +$("size").max) $("size").value = n;
  refresh();
}

$("size").addEventListener("input", () => { $("sizeNum").value = $("size").value; refresh(); });
$("sizeNum").addEventListener("change", () => setSize(+$("sizeNum").value));
$("mtu").addEventListener("change", refresh);
$("ethmtu").addEventListener("change", refresh);
for (const k of ["phy", "aal", "encap"]) $(k).addEventListener("change", () => { sel[k] = $(k).value; refresh(); });
const start = new URLSearchParams(location.search);
if (start.get("size")) setSize(+start.get("size")); else refresh();
