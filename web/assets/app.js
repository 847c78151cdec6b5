// atmlab's live view: draws the lab's topology from /api/topology and its
// counters from /api/stats a few times a second. Plain JS and SVG; nothing
// comes from the network but this server.
'use strict';

const token = new URLSearchParams(location.search).get('token') || '';
const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const POLL_MS = 250, HIST_MS = 60000;

let spec = null;        // the lab's topology
let prev = null;        // the snapshot before the latest
let selected = null;    // {kind: 'node'|'link', id}
const hist = {};        // key -> [[t, a, b], ...] of the last minute
const live = {};        // key -> {label: value} of the latest rates
let polls = 0;
// Script errors are kept for the browser tests to read.
window.atmlabErrors = [];
window.addEventListener('error', (e) => window.atmlabErrors.push(String(e.message)));
window.addEventListener('unhandledrejection', (e) => window.atmlabErrors.push(String(e.reason)));

function el(tag, attrs, parent, text) {
  const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function fmtRate(bps) {
  if (!isFinite(bps)) return '–';
  if (bps >= 1e9) return (bps / 1e9).toFixed(2) + ' G';
  if (bps >= 1e6) return (bps / 1e6).toFixed(2) + ' M';
  if (bps >= 1e3) return (bps / 1e3).toFixed(1) + ' k';
  return bps.toFixed(0) + ' ';
}
const pct = (f) => (100 * f).toFixed(1) + '%';
const us = (ns) => (ns / 1000).toFixed(1) + ' µs';
const nodeOf = (ep) => ep.split(':')[0];

// layout places the nodes with a small force simulation started from a
// circle in file order, so a lab is drawn the same way every time.
function layout(s) {
  const n = s.nodes.length, pos = {};
  s.nodes.forEach((nd, i) => {
    const a = 2 * Math.PI * i / Math.max(n, 1);
    pos[nd.name] = {x: 500 + 250 * Math.cos(a), y: 320 + 200 * Math.sin(a)};
  });
  const edges = s.links.map((l) => [nodeOf(l.a), nodeOf(l.b)]);
  for (let it = 0; it < 400; it++) {
    const f = {};
    s.nodes.forEach((nd) => { f[nd.name] = {x: 0, y: 0}; });
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) {
      const a = pos[s.nodes[i].name], b = pos[s.nodes[j].name];
      let dx = a.x - b.x, dy = a.y - b.y, d2 = dx * dx + dy * dy + 0.01;
      const k = 40000 / d2, d = Math.sqrt(d2);
      f[s.nodes[i].name].x += k * dx / d; f[s.nodes[i].name].y += k * dy / d;
      f[s.nodes[j].name].x -= k * dx / d; f[s.nodes[j].name].y -= k * dy / d;
    }
    for (const [u, v] of edges) {
      if (u === v || !pos[u] || !pos[v]) continue;
      const a = pos[u], b = pos[v], dx = b.x - a.x, dy = b.y - a.y;
      const d = Math.sqrt(dx * dx + dy * dy) + 0.01, k = 0.05 * (d - 200);
      f[u].x += k * dx / d; f[u].y += k * dy / d; f[v].x -= k * dx / d; f[v].y -= k * dy / d;
    }
    // a weak pull to the middle keeps a lab's separate parts (an ATM
    // corner beside an Ethernet one) near each other, so that the fit
    // below can draw its links long enough for their labels
    for (const nd of s.nodes) {
      f[nd.name].x += 0.008 * (500 - pos[nd.name].x);
      f[nd.name].y += 0.008 * (320 - pos[nd.name].y);
    }
    const step = 1 - it / 400;
    for (const nd of s.nodes) {
      const p = pos[nd.name], q = f[nd.name];
      p.x += Math.max(-20, Math.min(20, q.x)) * step;
      p.y += Math.max(-20, Math.min(20, q.y)) * step;
    }
  }
  // fit into the view box
  const xs = Object.values(pos).map((p) => p.x), ys = Object.values(pos).map((p) => p.y);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  // the labels are wide: a lab taller than the view is stretched across
  // it, up to 1.6 times as wide as tall
  const sc = Math.min(860 / Math.max(x1 - x0, 1), 520 / Math.max(y1 - y0, 1), 3);
  const sx = Math.min(860 / Math.max(x1 - x0, 1), 1.6 * sc);
  for (const p of Object.values(pos)) {
    p.x = 500 + (p.x - (x0 + x1) / 2) * sx;
    p.y = 320 + (p.y - (y0 + y1) / 2) * sc;
  }
  return pos;
}

function linkLabel(l) {
  if (l.phy) return `${l.phy.toUpperCase()} ${(l.aal || '').toUpperCase()} ${l.encap || ''}`.trim();
  let t = l.ab.rate === l.ba.rate ? l.ab.rate : `${l.ab.rate}/${l.ba.rate}`;
  if (l.ab.delay_ms) t += ` ${l.ab.delay_ms}ms`;
  if (l.ab.loss) t += ` loss ${(100 * l.ab.loss).toFixed(2)}%`;
  return t;
}

function draw() {
  const svg = $('topo');
  svg.textContent = '';
  const pos = layout(spec);
  // link labels go on top of the nodes, so that a short link's rates stay
  // readable (their white halo keeps them apart from what lies under them)
  const links = el('g', {}, svg), nodes = el('g', {}, svg), labels = el('g', {class: 'labels'}, svg);
  spec.links.forEach((l, i) => {
    const a = pos[nodeOf(l.a)], b = pos[nodeOf(l.b)];
    const g = el('g', {class: 'link', id: 'link-' + i, 'data-link': l.a, 'data-b': l.b}, links);
    el('line', {class: 'wire', x1: a.x, y1: a.y, x2: b.x, y2: b.y}, g);
    el('line', {class: 'hit', x1: a.x, y1: a.y, x2: b.x, y2: b.y}, g);
    const mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2;
    const lg = el('g', {class: 'link-label', 'data-for': 'link-' + i}, labels);
    el('text', {x: mx, y: my - 6}, lg, linkLabel(l));
    // each direction named by its ends: "h1 → sw1 61.53 Mbit/s"
    lg.addEventListener('click', () => select('link', i));
    const lv = el('text', {class: 'live', id: 'live-' + i, x: mx, y: my + 10}, lg);
    el('tspan', {class: 'dir', 'data-dir': 'ab', x: mx}, lv, '');
    el('tspan', {class: 'dir', 'data-dir': 'ba', x: mx, dy: 13}, lv, '');
    g.addEventListener('click', () => select('link', i));
  });
  for (const nd of spec.nodes) {
    const p = pos[nd.name];
    const g = el('g', {class: 'node ' + nd.kind, 'data-node': nd.name, transform: `translate(${p.x},${p.y})`}, nodes);
    switch (nd.kind) {
      case 'host': el('rect', {x: -34, y: -18, width: 68, height: 36, rx: 8}, g); break;
      case 'switch': el('rect', {x: -38, y: -16, width: 76, height: 32}, g); break;
      case 'hub': el('polygon', {points: '-40,0 -20,-20 20,-20 40,0 20,20 -20,20'}, g); break;
      case 'atm-switch': el('polygon', {points: '-42,0 -26,-22 26,-22 42,0 26,22 -26,22'}, g); break;
      default: el('circle', {r: 26}, g);
    }
    el('text', {y: 0}, g, nd.name);
    el('text', {class: 'kind', y: 12}, g, nd.kind);
    g.addEventListener('click', () => select('node', nd.name));
  }
  // the set form's link ends
  const sel = $('set-endpoint');
  sel.textContent = '';
  for (const l of spec.links) for (const ep of [l.a, l.b]) {
    const o = document.createElement('option');
    o.value = o.textContent = ep;
    sel.appendChild(o);
  }
  directions();
}

function linkOfEndpoint(ep) { return spec.links.find((l) => l.a === ep || l.b === ep); }

function directions() {
  const l = linkOfEndpoint($('set-endpoint').value), d = $('set-direction');
  d.textContent = '';
  const add = (v, t) => { const o = document.createElement('option'); o.value = v; o.textContent = t; d.appendChild(o); };
  add('', 'both');
  if (l) { add(l.a, `${l.a} → ${l.b}`); add(l.b, `${l.b} → ${l.a}`); }
}

function select(kind, id) {
  selected = {kind, id};
  document.querySelectorAll('.sel').forEach((e) => e.classList.remove('sel'));
  const e = kind === 'link' ? $('link-' + id) : document.querySelector(`[data-node="${CSS.escape(id)}"]`);
  if (e) e.classList.add('sel');
  if (kind === 'link') { $('set-endpoint').value = spec.links[id].a; directions(); }
  detail();
}

const delta = (c, p, f) => (p ? f(c) - f(p) : 0);

// update computes every link's and node's rates from two snapshots.
function update(snap) {
  const st = snap.stats;
  if (!st) return;
  const ports = {}, pports = {};
  for (const p of st.ports || []) ports[p.port] = p;
  const ps = prev && prev.stats;
  if (ps) for (const p of ps.ports || []) pports[p.port] = p;
  const dt = ps ? (st.emulator.uptime_ns - ps.emulator.uptime_ns) / 1e9 : 0;
  const t = snap.at_ms;
  const rec = (key, a, b, vals) => {
    live[key] = vals;
    const h = hist[key] || (hist[key] = []);
    h.push([t, a, b]);
    while (h.length && h[0][0] < t - HIST_MS) h.shift();
  };
  const rate = (name, f) => {
    const c = ports[name], p = pports[name];
    if (!c || !p || dt <= 0) return 0;
    return (f(c) - f(p)) / dt;
  };
  const tx = (p) => p.tx_bytes * 8, busy = (p) => p.busy_ns / 1e9;
  const drops = (p) => p.drops + p.impair_drops + (p.host_drops || 0) + (p.cpu_drops || 0);
  const cellsTx = (p) => (p.atm ? p.atm.tx_cells : 0);
  const atmSum = (p, k) => (p && p.atm ? p.atm[k] || 0 : 0);
  // A hub has no ports of its own: what it sends a station is what the
  // hub's other stations sent on the medium.
  const kind = {};
  for (const nd of spec.nodes) kind[nd.name] = nd.kind;
  const stationsOf = (hub) => spec.links.filter((l) => nodeOf(l.a) === hub || nodeOf(l.b) === hub)
    .map((l) => (nodeOf(l.a) === hub ? l.b : l.a));
  const sent = (ep, other) => {
    if (kind[nodeOf(ep)] !== 'hub') return rate(ep, tx);
    return stationsOf(nodeOf(ep)).filter((s) => s !== other).reduce((sum, s) => sum + rate(s, tx), 0);
  };
  spec.links.forEach((l, i) => {
    const ab = sent(l.a, l.b), ba = sent(l.b, l.a);
    const v = {
      [`${l.a} → ${l.b} bit/s`]: fmtRate(ab) + 'bit/s', [`${l.b} → ${l.a} bit/s`]: fmtRate(ba) + 'bit/s',
      [`utilisation ${l.a} →`]: pct(rate(l.a, busy)), [`utilisation ${l.b} →`]: pct(rate(l.b, busy)),
      [`queue at ${l.a}`]: ((ports[l.a] || {}).queue_bytes || 0) + ' B', [`queue at ${l.b}`]: ((ports[l.b] || {}).queue_bytes || 0) + ' B',
      [`drops at ${l.a}`]: ports[l.a] ? drops(ports[l.a]) : 0, [`drops at ${l.b}`]: ports[l.b] ? drops(ports[l.b]) : 0,
    };
    if (l.phy) {
      v[`cells/s ${l.a} →`] = rate(l.a, cellsTx).toFixed(0);
      v[`cells/s ${l.b} →`] = rate(l.b, cellsTx).toFixed(0);
      for (const k of ['hec_corrected', 'crc_errors', 'epd_drops', 'ppd_drops']) {
        v[k.replace('_', ' ')] = atmSum(ports[l.a], k) + atmSum(ports[l.b], k);
      }
    }
    rec('link:' + i, ab, ba, v);
    const g = $('link-' + i);
    if (g) {
      g.dataset.ab = ab.toFixed(0);
      g.dataset.ba = ba.toFixed(0);
      const [tab, tba] = $('live-' + i).children;
      tab.textContent = `${nodeOf(l.a)} → ${nodeOf(l.b)} ${fmtRate(ab)}bit/s`;
      tba.textContent = `${nodeOf(l.b)} → ${nodeOf(l.a)} ${fmtRate(ba)}bit/s`;
      const u = Math.max(rate(l.a, busy), rate(l.b, busy));
      const wire = g.querySelector('line.wire');
      wire.style.stroke = u > 0.9 ? '#c00' : u > 0.5 ? '#e80' : u > 0.05 ? '#07c' : '';
      wire.style.strokeWidth = 2 + 6 * Math.min(u, 1);
    }
  });
  for (const nd of spec.nodes) {
    const mine = Object.keys(ports).filter((n) => nodeOf(n) === nd.name);
    const sum = (f) => mine.reduce((s, n) => s + rate(n, f), 0);
    const total = (f) => mine.reduce((s, n) => s + f(ports[n]), 0);
    let v = {}, a = sum(tx), b = mine.reduce((s, n) => s + rate(n, (p) => p.rx_bytes * 8), 0);
    v['sent bit/s'] = fmtRate(a) + 'bit/s';
    v['received bit/s'] = fmtRate(b) + 'bit/s';
    v['drops'] = total(drops);
    if (nd.kind === 'hub') {
      const h = (st.hubs || {})[nd.name], ph = ps && (ps.hubs || {})[nd.name];
      const l = spec.links.find((l) => nodeOf(l.a) === nd.name || nodeOf(l.b) === nd.name);
      const stations = spec.links.filter((l) => nodeOf(l.a) === nd.name || nodeOf(l.b) === nd.name)
        .map((l) => (nodeOf(l.a) === nd.name ? l.b : l.a));
      const hd = (p) => (p && p.half_duplex ? p.half_duplex : {collisions: 0, deferred: 0});
      if (h) {
        const util = ph && dt > 0 && l ? (h.frame_bits - ph.frame_bits) / (l.ab.rate_bps * dt) : 0;
        const coll = ph && dt > 0 ? (h.collisions - ph.collisions) / dt : 0;
        a = util; b = coll;
        v = {utilisation: pct(util), 'collisions/s': coll.toFixed(1),
          deferrals: stations.reduce((s, n) => s + hd(ports[n]).deferred, 0),
          'utilisation since up': pct(h.utilization), 'collision time since up': pct(h.collision_fraction)};
      }
    }
    if (nd.kind === 'atm-switch' || (nd.kind === 'host' && mine.some((n) => ports[n].atm))) {
      const ci = mine.reduce((s, n) => s + rate(n, (p) => (p.atm ? p.atm.rx_cells : 0)), 0);
      const co = sum(cellsTx);
      v['cells/s in'] = ci.toFixed(0);
      v['cells/s out'] = co.toFixed(0);
      for (const k of ['hec_corrected', 'crc_errors', 'epd_drops', 'ppd_drops', 'queue_drops']) {
        v[k.replace('_', ' ')] = mine.reduce((s, n) => s + atmSum(ports[n], k), 0);
      }
      if (nd.kind === 'atm-switch') { a = ci; b = co; }
    }
    if (nd.kind === 'router') {
      const r = (p) => p.router || {};
      for (const k of ['forwarded', 'pushed', 'swapped', 'popped', 'ttl_expired']) {
        v[k.replace('_', ' ')] = total((p) => r(p)[k] || 0);
      }
      a = sum((p) => r(p).forwarded || 0);
      b = sum((p) => r(p).ttl_expired || 0);
      v['forwarded/s'] = a.toFixed(0);
    }
    // what the device itself counts (control.Stats' nodes), whatever its
    // kind: a kind this page draws no panel for still shows its counters
    const own = ((st.nodes || {})[nd.name] || {}).counters || {};
    for (const [k, x] of Object.entries(own)) {
      const name = k.replaceAll('_', ' ');
      if (!(name in v)) v[name] = x;
    }
    const hk = (st.hosts || {})[nd.name];
    if (hk) {
      v['UDP receive buffer drops'] = hk.udp_rcvbuf_errors;
      v['TCP retransmitted'] = hk.tcp_retrans_segs;
    }
    rec('node:' + nd.name, a, b, v);
  }
  const e = st.emulator, pe = ps && ps.emulator;
  const cpu = pe && dt > 0 ? (e.cpu_time_ns - pe.cpu_time_ns) / 1e9 / dt : e.cpu;
  $('emu').textContent = emuText(cpu, e);
  $('emu').dataset.cpu = cpu;
  const ch = $('changes');
  ch.textContent = '';
  if (st.changes && st.changes.length) {
    const h = document.createElement('h2');
    h.textContent = 'Changes (atmlab set)';
    ch.appendChild(h);
    for (const c of st.changes) {
      const d = document.createElement('div');
      d.textContent = `at ${(c.at_ns / 1e9).toFixed(1)} s: ${c.endpoint} ${c.change} → ${c.directions.join('; ')}`;
      ch.appendChild(d);
    }
  }
}

// late says how late the emulator let frames go, in the unit that reads
// best: "0.2 ms", "16 ms", "40 µs".
function late(ns) {
  if (ns >= 10e6) return (ns / 1e6).toFixed(0) + ' ms';
  if (ns >= 1e5) return (ns / 1e6).toFixed(1) + ' ms';
  return (ns / 1e3).toFixed(0) + ' µs';
}

// emuText is the header's line on the emulator, in plain words: how busy
// it is, how late it lets frames go (typically, and for the worst 1 %),
// and what a ping over a plain veth pair takes on this machine (the
// kernel's own cost, for comparison with the lab's pings).
function emuText(cpu, e) {
  return `emulator busy ${pct(cpu)} of a CPU core · frames sent late by ${late(e.lateness.p50_ns)} typically, ` +
    `up to ${late(e.lateness.p99_ns)} (99th percentile) · a ping between two namespaces over a plain veth pair, ` +
    `no emulator: ${us(e.veth_rtt_ns)} · up ${(e.uptime_ns / 1e9).toFixed(0)} s`;
}

// chart draws a key's last minute, each series on its own scale.
function chart(parent, key, names) {
  const h = hist[key] || [];
  const svg = el('svg', {class: 'chart', viewBox: '0 0 400 140', preserveAspectRatio: 'none'}, parent);
  const now = h.length ? h[h.length - 1][0] : 0;
  const maxOf = (j) => Math.max(1e-9, ...h.map((r) => r[j]));
  const ma = maxOf(1), mb = maxOf(2);
  const pts = (j, max) => h.map((r) => `${(400 - (now - r[0]) / HIST_MS * 400).toFixed(1)},${(132 - r[j] / max * 110).toFixed(1)}`).join(' ');
  el('polyline', {class: 'a', points: pts(1, ma)}, svg);
  el('polyline', {class: 'b', points: pts(2, mb)}, svg);
  el('text', {x: 4, y: 11}, svg, `blue: ${names.a}, max ${names.fmt(ma)}`);
  el('text', {x: 4, y: 22}, svg, `orange: ${names.b}, max ${names.fmtB ? names.fmtB(mb) : names.fmt(mb)} · last minute`);
}

function detail() {
  const d = $('detail');
  d.textContent = '';
  if (!selected || !spec) return;
  let key, title, names;
  if (selected.kind === 'link') {
    const l = spec.links[selected.id];
    key = 'link:' + selected.id;
    title = `link ${l.a} — ${l.b} (${linkLabel(l)})`;
    names = {a: `${l.a} →`, b: `${l.b} →`, fmt: (x) => fmtRate(x) + 'bit/s'};
  } else {
    const nd = spec.nodes.find((n) => n.name === selected.id);
    key = 'node:' + nd.name;
    title = `${nd.kind} ${nd.name}` + (nd.interfaces ? ` (${nd.interfaces.join(', ')})` : '');
    names = {hub: {a: 'utilisation', b: 'collisions/s', fmt: pct, fmtB: (x) => x.toFixed(0)},
      'atm-switch': {a: 'cells/s in', b: 'cells/s out', fmt: (x) => x.toFixed(0)},
      router: {a: 'forwarded/s', b: 'TTL expired/s', fmt: (x) => x.toFixed(0)}}[nd.kind] ||
      {a: 'sent', b: 'received', fmt: (x) => fmtRate(x) + 'bit/s'};
  }
  const h = document.createElement('h2');
  h.textContent = title;
  d.appendChild(h);
  const tbl = document.createElement('table');
  tbl.className = 'counters';
  for (const [k, v] of Object.entries(live[key] || {})) {
    const tr = tbl.insertRow();
    tr.insertCell().textContent = k;
    tr.insertCell().textContent = v;
  }
  d.appendChild(tbl);
  chart(d, key, names);
}

function drawRun(run) {
  $('run').hidden = false;
  const p = run.progress;
  $('run-variant').textContent = p.variant || 'base';
  $('run-point').textContent = p.point ? `${p.point.experiment} ${p.point.test} size ${p.point.size} buf ${p.point.sockbuf} #${p.point.repetition}` : 'done';
  $('run-done').textContent = `${p.done}/${p.total} points`;
  $('run-bar').style.width = p.total ? (100 * p.done / p.total) + '%' : '0';
  $('run-eta').textContent = p.eta_ns < 0 ? '?' : Math.round(p.eta_ns / 1e9) + ' s';
  const svg = $('run-chart');
  svg.textContent = '';
  // the experiment being measured, else the last one measured
  const last = run.results.length ? run.results[run.results.length - 1] : null;
  const exp = p.point ? p.point.experiment : last && last.experiment;
  const rs = run.results.filter((r) => r.throughput_bps > 0 && r.experiment === exp);
  $('run-exp').textContent = exp ? `${exp}: throughput against message size` : '';
  if (!rs.length) return;
  const sizes = rs.map((r) => r.size), ymax = Math.max(...rs.map((r) => Math.max(r.throughput_bps, r.ceiling_bps)));
  const lx0 = Math.log(Math.max(1, Math.min(...sizes))), lx1 = Math.log(Math.max(...sizes)) + 1e-9;
  const X = (s) => 40 + (Math.log(Math.max(s, 1)) - lx0) / (lx1 - lx0 || 1) * 540;
  const Y = (v) => 200 - v / ymax * 180;
  el('text', {x: 2, y: 12}, svg, `${fmtRate(ymax)}bit/s`);
  el('text', {x: 300, y: 216}, svg, 'message size (bytes, log)');
  for (const r of rs) {
    if (r.ceiling_bps > 0) el('line', {class: 'c', x1: X(r.size) - 6, x2: X(r.size) + 6, y1: Y(r.ceiling_bps), y2: Y(r.ceiling_bps)}, svg);
    el('circle', {class: 'm', cx: X(r.size), cy: Y(r.throughput_bps), r: 3}, svg, undefined)
      .appendChild(el('title', {}, null, `${r.variant} ${r.experiment} ${r.test} ${r.size} B: ${fmtRate(r.throughput_bps)}bit/s of ${fmtRate(r.ceiling_bps)}bit/s`));
  }
}

async function loadTopology() {
  for (;;) {
    try {
      const r = await fetch('api/topology');
      if (r.ok) {
        spec = await r.json();
        $('lab').textContent = spec.lab;
        draw();
        return;
      }
    } catch (e) { /* not up yet */ }
    await new Promise((res) => setTimeout(res, 1000));
  }
}

async function poll() {
  try {
    const r = await fetch('api/stats');
    if (r.ok) {
      const snap = await r.json();
      if (snap.stats && spec && snap.stats.lab !== spec.lab) { spec = null; prev = null; await loadTopology(); }
      if (!snap.up && spec) { $('emu').textContent = 'no lab is up (between two variants?)'; }
      if (snap.stats && spec && (!prev || prev.at_ms !== snap.at_ms)) {
        update(snap);
        prev = snap;
        if (selected) detail();
      }
      if (snap.run) drawRun(snap.run);
      polls++;
      document.body.dataset.polls = polls;
    }
  } catch (e) { $('emu').textContent = 'lost the lab: ' + e; }
  setTimeout(poll, POLL_MS);
}

$('set-endpoint').addEventListener('change', directions);
$('set').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const out = $('set-result');
  out.className = 'result';
  out.textContent = '…';
  const body = {endpoint: $('set-endpoint').value, direction: $('set-direction').value,
    settings: $('set-settings').value, reset: $('set-reset').checked};
  try {
    const r = await fetch('api/set', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Atmlab-Token': token}, body: JSON.stringify(body)});
    const j = await r.json();
    if (!r.ok) { out.className = 'result err'; out.textContent = j.error || r.statusText; out.dataset.status = r.status; return; }
    out.dataset.status = r.status;
    out.textContent = (j.directions || []).join('\n') || 'applied';
  } catch (e) { out.className = 'result err'; out.textContent = String(e); }
});
$('mode').textContent = token ? 'changes allowed (token given)' : 'read-only: open the URL with the token to change links';

loadTopology().then(poll);
