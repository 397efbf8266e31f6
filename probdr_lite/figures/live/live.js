/* Kernel-free live figures of the probdr-lite book.
 *
 * Each figure is a <div class="probdr-live"> holding a JSON spec (a <script type="application/json">
 * written by probdr_lite.figures.live at build time). This script builds, for each of them, labelled
 * controls (<input type=range>, <select>, <input type=checkbox>), one <canvas> per panel and a list of
 * the current numbers (aria-live), and redraws the canvases whenever a control moves.
 *
 * Data. Most figures are precomputed by probdr_lite over a grid of the controls: every array in the
 * spec names the controls it depends on ("dims"), and the current cell is found from the controls'
 * positions. Scatter coordinates are quantised per frame to 8 or 16 bits inside that frame's bounding
 * box (the largest code means "no point"). One figure, chapter 4's toy, is computed here instead,
 * from the same equations as probdr_lite.unrolled (see toyPath); the book's tests compare the two.
 *
 * No library: the figures are scatters and a few lines, a few hundred lines of Canvas 2D.
 */
(function () {
  "use strict";

  // ------------------------------------------------------------------------------------------------
  // Decoding

  function decode(ref) {
    if (ref === null || ref === undefined) return ref;
    if (ref._decoded) return ref._decoded;
    const bytes = Uint8Array.from(atob(ref.b64), (c) => c.charCodeAt(0));
    const T = {u8: Uint8Array, u16: Uint16Array, f32: Float32Array, f64: Float64Array}[ref.dtype];
    ref._decoded = new T(bytes.buffer, 0, bytes.length / T.BYTES_PER_ELEMENT);
    return ref._decoded;
  }

  // Offset (in items) of the current cell of an array that depends on the controls in ref.dims.
  function cellOf(ref, state, controls) {
    let cell = 0;
    for (const name of ref.dims || []) {
      const c = controls[name];
      cell = cell * c.values.length + state[name];
    }
    return cell;
  }

  function itemSize(ref) {
    return (ref.item || []).reduce((a, b) => a * b, 1);
  }

  // The current item of an array: a typed subarray.
  function current(ref, state, controls) {
    const size = itemSize(ref);
    const cell = cellOf(ref, state, controls);
    return decode(ref).subarray(cell * size, (cell + 1) * size);
  }

  // Scatter points of the current cell: {x, y} Float64Arrays (NaN = no point).
  function currentPoints(ref, state, controls) {
    const n = ref.item[0];
    const cell = cellOf(ref, state, controls);
    const q = decode(ref.q).subarray(cell * n * 2, (cell + 1) * n * 2);
    const box = decode(ref.box).subarray(cell * 4, cell * 4 + 4);
    const top = ref.q.dtype === "u8" ? 255 : 65535;
    const levels = top - 1;
    const x = new Float64Array(n), y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const a = q[2 * i], b = q[2 * i + 1];
      x[i] = a === top ? NaN : box[0] + (box[1] - box[0]) * a / levels;
      y[i] = b === top ? NaN : box[2] + (box[3] - box[2]) * b / levels;
    }
    return {x, y};
  }

  // ------------------------------------------------------------------------------------------------
  // Chapter 4's toy: the unrolled block in the 3-D span where it lives (probdr_lite.figures.block).
  //
  // The lifted latents are X = sqrt(d_q) Z Q with unit rows z_i in R^3 and Q orthonormal, orthogonal
  // to 1. Then (kappa / d_q) X X^T = kappa Z Z^T, A X = sqrt(d_q) (A Z) Q, LayerNorm only rescales
  // rows, and C^{-1} X = sqrt(d_q) Z (d_q Z^T Z + beta I_3)^{-1} Q, so one step is
  // z_i <- normalise(z_i + eta d_i) with d the variant's direction in Z coordinates.

  function toyStart(Y, offset) {
    const n = Y.length / 2, Z = new Float64Array(3 * n);
    for (let i = 0; i < n; i++) {
      const a = Y[2 * i], b = Y[2 * i + 1], r = Math.hypot(a, b, offset);
      Z[3 * i] = a / r; Z[3 * i + 1] = b / r; Z[3 * i + 2] = offset / r;
    }
    return Z;
  }

  function inverse3(M) {
    const [a, b, c, d, e, f, g, h, k] = M;
    const A = e * k - f * h, B = -(d * k - f * g), C = d * h - e * g;
    const det = a * A + b * B + c * C;
    return [A / det, -(b * k - c * h) / det, (b * f - c * e) / det,
            B / det, (a * k - c * g) / det, -(a * f - c * d) / det,
            C / det, -(a * h - b * g) / det, (a * e - b * d) / det];
  }

  // One block: returns the new Z (n, 3).
  // The logits S_ij = kappa z_i.z_j - beta [i = j] are at most kappa (unit rows), so every row's softmax
  // can be taken after subtracting kappa instead of the row's maximum: E_ij = exp(kappa (z_i.z_j - 1)),
  // E_ii = exp(-beta) >= exp(-10), so no row sum underflows. E is symmetric: one exp per pair. Under the
  // causal mask row i keeps only j <= i. A = E / rowsum; the symmetric graph is E_ij / sqrt(s_i s_j).
  let buffer = null;
  function toyStep(Z, n, p) {
    const {kappa, eta, beta, variant, causal, d_q} = p;
    if (!buffer || buffer.length !== n * n) buffer = new Float64Array(n * n);
    const E = buffer, s = new Float64Array(n), diag = Math.exp(-beta);
    for (let i = 0; i < n; i++) {
      const a = Z[3 * i], b = Z[3 * i + 1], c = Z[3 * i + 2];
      for (let j = 0; j < i; j++) {
        const e = Math.exp(kappa * (a * Z[3 * j] + b * Z[3 * j + 1] + c * Z[3 * j + 2] - 1));
        E[i * n + j] = e; E[j * n + i] = e;
      }
      E[i * n + i] = diag;
    }
    for (let i = 0; i < n; i++) {
      const c = causal ? i + 1 : n;
      let sum = 0;
      for (let j = 0; j < c; j++) sum += E[i * n + j];
      s[i] = sum;
    }
    const D = new Float64Array(3 * n), keep = new Float64Array(n).fill(1);
    const AZ = new Float64Array(3 * n), AtZ = variant === "exact" ? new Float64Array(3 * n) : null;
    const sym = variant === "symmetric", rs = sym ? s.map(Math.sqrt) : null;
    for (let i = 0; i < n; i++) {
      const c = causal ? i + 1 : n, Ei = i * n;
      // "symmetric" with a mask: exp(T_ij) = E_ij / sqrt(s_i s_j) can exceed 1; row i is then divided by
      // exp(g_i), g_i = max(0, max_j T_ij), as probdr_lite does (LayerNorm ignores the row's scale)
      let scale = 1 / s[i];
      if (sym) {
        let g = 0;
        for (let j = 0; j < c; j++) { const t = E[Ei + j] / (rs[i] * rs[j]); if (t > g) g = t; }
        keep[i] = g > 1 ? 1 / g : 1;
        scale = keep[i] / rs[i];
      }
      let x = 0, y = 0, w = 0;
      const zi0 = Z[3 * i], zi1 = Z[3 * i + 1], zi2 = Z[3 * i + 2];
      for (let j = 0; j < c; j++) {
        const v = sym ? E[Ei + j] * scale / rs[j] : E[Ei + j] * scale;
        x += v * Z[3 * j]; y += v * Z[3 * j + 1]; w += v * Z[3 * j + 2];
        if (AtZ) { AtZ[3 * j] += v * zi0; AtZ[3 * j + 1] += v * zi1; AtZ[3 * j + 2] += v * zi2; }
      }
      AZ[3 * i] = x; AZ[3 * i + 1] = y; AZ[3 * i + 2] = w;
    }
    if (variant === "attention") {
      for (let i = 0; i < 3 * n; i++) D[i] = 2 * AZ[i];
    } else if (variant === "diffusion" || variant === "paper") {
      const ff = variant === "paper" ? 2 / (d_q + beta) : 0;  // the feed-forward term 2 X / (d_q + beta)
      for (let i = 0; i < 3 * n; i++) D[i] = 2 * (AZ[i] - Z[i]) + ff * Z[i];
    } else if (sym) {  // 2 (A_sym - I) Z, row i divided by exp(g_i)
      for (let i = 0; i < n; i++) for (let k = 0; k < 3; k++) D[3 * i + k] = 2 * (AZ[3 * i + k] - keep[i] * Z[3 * i + k]);
    } else if (variant === "exact") {  // 2 C^{-1} X - (L + L^T) X = 2 C^{-1} X - 2 X + A X + A^T X
      const G = new Array(9).fill(0);  // d_q Z^T Z + beta I_3
      for (let i = 0; i < n; i++) for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) G[3 * a + b] += d_q * Z[3 * i + a] * Z[3 * i + b];
      for (let a = 0; a < 3; a++) G[4 * a] += beta;
      const Gi = inverse3(G);
      for (let i = 0; i < n; i++) {
        for (let b = 0; b < 3; b++) {
          let r = 0;
          for (let a = 0; a < 3; a++) r += Z[3 * i + a] * Gi[3 * a + b];
          D[3 * i + b] = 2 * r - 2 * Z[3 * i + b] + AZ[3 * i + b] + AtZ[3 * i + b];
        }
      }
    } else {
      throw new Error("unknown variant " + variant);
    }
    const next = new Float64Array(3 * n);  // LayerNorm: back to unit rows
    for (let i = 0; i < n; i++) {
      const a = keep[i] * Z[3 * i] + eta * D[3 * i], b = keep[i] * Z[3 * i + 1] + eta * D[3 * i + 1];
      const c = keep[i] * Z[3 * i + 2] + eta * D[3 * i + 2], r = Math.hypot(a, b, c);
      next[3 * i] = a / r; next[3 * i + 1] = b / r; next[3 * i + 2] = c / r;
    }
    return next;
  }

  // Back to the plane: offset (z1, z2) / z3, NaN past the equator (probdr_lite's LiftedToy.unlift).
  function unlift(Z, n, offset) {
    const x = new Float64Array(n), y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const c = Z[3 * i + 2];
      x[i] = c > 1e-6 ? offset * Z[3 * i] / c : NaN;
      y[i] = c > 1e-6 ? offset * Z[3 * i + 1] / c : NaN;
    }
    return {x, y};
  }

  // The positions after 0..depth blocks, cached per (kappa, eta, beta, variant, mask).
  function makeToy(spec) {
    const Y = Float64Array.from(spec.Y), n = Y.length / 2, cache = new Map();
    const start = toyStart(Y, spec.offset);
    return function path(p) {
      const key = [p.kappa, p.eta, p.beta, p.variant, p.causal].join("|");
      let steps = cache.get(key);
      if (!steps) { steps = [start]; cache.set(key, steps); if (cache.size > 64) cache.delete(cache.keys().next().value); }
      while (steps.length <= p.depth) steps.push(toyStep(steps[steps.length - 1], n, Object.assign({d_q: spec.d_q}, p)));
      return steps.slice(0, p.depth + 1).map((Z) => unlift(Z, n, spec.offset));
    };
  }

  // ------------------------------------------------------------------------------------------------
  // Colours and formatting

  // viridis at 9 stops (perceptually uniform, readable with colour-vision deficiencies)
  const VIRIDIS = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"];

  function hexToRgb(h) { return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)); }

  function viridis(t) {
    const u = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1), i = Math.min(VIRIDIS.length - 2, Math.floor(u)), f = u - i;
    const a = hexToRgb(VIRIDIS[i]), b = hexToRgb(VIRIDIS[i + 1]);
    return "rgb(" + a.map((v, k) => Math.round(v + f * (b[k] - v))).join(",") + ")";
  }

  function fmt(v, digits) {
    if (typeof v === "string") return v;
    if (typeof v === "boolean") return v ? "on" : "off";
    if (Number.isNaN(v)) return "—";
    if (!Number.isFinite(v)) return String(v);
    if (v !== 0 && (Math.abs(v) >= 1e5 || Math.abs(v) < 1e-3)) return v.toExponential(digits - 1).replace("e+", "e");
    return String(Number(v.toPrecision(digits)));
  }

  // ------------------------------------------------------------------------------------------------
  // Drawing

  const PAD = {left: 44, right: 10, top: 26, bottom: 32};

  function niceTicks(lo, hi, log) {
    if (log) {
      const out = [];
      const a = Math.ceil(Math.log10(lo)), b = Math.floor(Math.log10(hi));
      const every = Math.max(1, Math.ceil((b - a + 1) / 5));
      const mantissas = b - a < 2 ? [1, 2, 5] : [1];  // fewer than two decades: 1, 2, 5 of each
      for (let e = a - 1; e <= b; e += every) {
        for (const m of mantissas) { const v = m * Math.pow(10, e); if (v >= lo && v <= hi) out.push(v); }
      }
      return out;
    }
    const span = hi - lo || 1, raw = span / 4, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= 5);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * span; v += step) out.push(Math.abs(v) < 1e-12 * span ? 0 : v);
    return out;
  }

  function setupCanvas(canvas) {
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || 300, h = canvas.clientHeight || 240;
    if (canvas.width !== Math.round(w * ratio) || canvas.height !== Math.round(h * ratio)) {
      canvas.width = Math.round(w * ratio); canvas.height = Math.round(h * ratio);
    }
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, w, h);
    return {ctx, w, h};
  }

  function frame(ctx, w, h, title, xlabel, ylabel, accent) {
    ctx.strokeStyle = accent || "#888"; ctx.lineWidth = accent ? 2 : 1;
    ctx.strokeRect(PAD.left + 0.5, PAD.top + 0.5, w - PAD.left - PAD.right, h - PAD.top - PAD.bottom);
    ctx.lineWidth = 1;
    ctx.fillStyle = "#222"; ctx.font = "12px sans-serif"; ctx.textAlign = "center";
    if (title) ctx.fillText(title, (PAD.left + w - PAD.right) / 2, 16, w - 8);
    ctx.font = "11px sans-serif";
    if (xlabel) ctx.fillText(xlabel, (PAD.left + w - PAD.right) / 2, h - 4);
    if (ylabel) {
      ctx.save(); ctx.translate(11, (PAD.top + h - PAD.bottom) / 2); ctx.rotate(-Math.PI / 2);
      ctx.fillText(ylabel, 0, 0); ctx.restore();
    }
  }

  // Linear or log map from data to pixels.
  function scale(lo, hi, a, b, log) {
    if (log) { const l0 = Math.log10(lo), l1 = Math.log10(hi); return (v) => a + (b - a) * (Math.log10(v) - l0) / (l1 - l0); }
    return (v) => a + (b - a) * (v - lo) / (hi - lo);
  }

  function padRange(lo, hi, frac) {
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [-1, 1];
    if (hi - lo < 1e-12 * Math.max(1, Math.abs(hi))) { const d = Math.max(Math.abs(hi) * 0.05, 1e-9); return [lo - d, hi + d]; }
    const m = (hi - lo) * frac;
    return [lo - m, hi + m];
  }

  function extent(arrays) {
    let lo = Infinity, hi = -Infinity;
    for (const a of arrays) for (const v of a) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
    return [lo, hi];
  }

  function drawScatter(canvas, panel, pts, bg, colours, title, note, accent) {
    const {ctx, w, h} = setupCanvas(canvas);
    let xr, yr;
    if (panel.bounds) { xr = panel.bounds.slice(0, 2); yr = panel.bounds.slice(2, 4); }
    else {
      const xs = [pts.x], ys = [pts.y];
      if (bg && panel.bounds_include_background) { xs.push(bg.x); ys.push(bg.y); }
      xr = padRange(...extent(xs), 0.06); yr = padRange(...extent(ys), 0.06);
    }
    const W = w - PAD.left - PAD.right, H = h - PAD.top - PAD.bottom;
    if (panel.equal_aspect) {  // same units on both axes: widen the narrower range
      const ux = (xr[1] - xr[0]) / W, uy = (yr[1] - yr[0]) / H, u = Math.max(ux, uy);
      const cx = (xr[0] + xr[1]) / 2, cy = (yr[0] + yr[1]) / 2;
      xr = [cx - u * W / 2, cx + u * W / 2]; yr = [cy - u * H / 2, cy + u * H / 2];
    }
    const sx = scale(xr[0], xr[1], PAD.left, w - PAD.right, false), sy = scale(yr[0], yr[1], h - PAD.bottom, PAD.top, false);
    frame(ctx, w, h, title, panel.xlabel, panel.ylabel, accent);
    ctx.save();
    ctx.beginPath(); ctx.rect(PAD.left, PAD.top, W, H); ctx.clip();
    const r = panel.radius || 2;
    if (bg) {
      ctx.fillStyle = "#d0d0d0";
      for (let i = 0; i < bg.x.length; i++) if (Number.isFinite(bg.x[i])) ctx.fillRect(sx(bg.x[i]) - r / 2, sy(bg.y[i]) - r / 2, r, r);
    }
    ctx.globalAlpha = panel.alpha || 0.85;
    for (let i = 0; i < pts.x.length; i++) {
      if (!Number.isFinite(pts.x[i]) || !Number.isFinite(pts.y[i])) continue;
      ctx.fillStyle = colours[i];
      ctx.beginPath(); ctx.arc(sx(pts.x[i]), sy(pts.y[i]), r, 0, 2 * Math.PI); ctx.fill();
    }
    ctx.restore();
    if (note) {
      ctx.fillStyle = "#a00"; ctx.font = "12px sans-serif"; ctx.textAlign = "center";
      note.split("\n").forEach((line, k) => ctx.fillText(line, PAD.left + W / 2, PAD.top + H / 2 + 15 * k, W - 8));
    }
  }

  // series: [{y, colour, dash, points}], x shared; hlines: [{y, colour, dash}]; marker: {x, y}
  function drawLines(canvas, panel, x, series, hlines, marker, title) {
    const {ctx, w, h} = setupCanvas(canvas);
    const log = !!panel.logy;
    let yr = panel.ylim ? panel.ylim.slice() : null;
    if (!yr) {
      const ext = extent(series.map((s) => s.y).concat(hlines.map((l) => [l.y])));
      yr = log ? [ext[0] / 1.5, ext[1] * 1.5] : padRange(Math.min(0, ext[0]), ext[1], 0.08);
    }
    const xr = panel.xlim || [x[0], x[x.length - 1]];
    const W = w - PAD.left - PAD.right;
    const sx = scale(xr[0] - 0.03 * (xr[1] - xr[0]), xr[1] + 0.03 * (xr[1] - xr[0]), PAD.left, w - PAD.right, false);
    const sy = scale(yr[0], yr[1], h - PAD.bottom, PAD.top, log);
    frame(ctx, w, h, title, panel.xlabel, panel.ylabel);
    ctx.fillStyle = "#444"; ctx.font = "10px sans-serif";
    ctx.textAlign = "right";
    for (const t of niceTicks(yr[0], yr[1], log)) { const y = sy(t); ctx.fillText(fmt(t, 2), PAD.left - 3, y + 3); ctx.fillRect(PAD.left - 2, y, 2, 1); }
    ctx.textAlign = "center";
    for (const t of niceTicks(xr[0], xr[1], false)) { ctx.fillText(fmt(t, 3), sx(t), h - PAD.bottom + 12); }
    ctx.save();
    ctx.beginPath(); ctx.rect(PAD.left, PAD.top, W, h - PAD.top - PAD.bottom); ctx.clip();
    const clampY = (v) => (log ? Math.max(v, yr[0] * 1e-3) : v);
    for (const l of hlines) {
      ctx.strokeStyle = l.colour || "#555"; ctx.setLineDash(l.dash || [4, 3]); ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(PAD.left, sy(l.y)); ctx.lineTo(w - PAD.right, sy(l.y)); ctx.stroke();
    }
    ctx.setLineDash([]);
    for (const s of series) {
      ctx.strokeStyle = s.colour || "#222"; ctx.lineWidth = 1.5; ctx.beginPath();
      let pen = false;
      for (let i = 0; i < x.length; i++) {
        if (!Number.isFinite(s.y[i])) { pen = false; continue; }
        const px = sx(x[i]), py = sy(clampY(s.y[i]));
        if (pen) ctx.lineTo(px, py); else ctx.moveTo(px, py);
        pen = true;
      }
      if (!s.nolines) ctx.stroke();
      ctx.beginPath();
      if (s.points) {
        for (let i = 0; i < x.length; i++) {
          if (!Number.isFinite(s.y[i])) continue;
          ctx.fillStyle = Array.isArray(s.points) ? s.points[i] : (s.colour || "#222");
          ctx.beginPath(); ctx.arc(sx(x[i]), sy(clampY(s.y[i])), 3.2, 0, 2 * Math.PI); ctx.fill();
        }
      }
    }
    if (marker && Number.isFinite(marker.y)) {
      ctx.strokeStyle = "#d55e00"; ctx.lineWidth = 2;
      ctx.beginPath(); ctx.arc(sx(marker.x), sy(clampY(marker.y)), 6, 0, 2 * Math.PI); ctx.stroke();
    }
    ctx.restore();
  }

  function drawBars(canvas, panel, heights, colours, title) {
    const {ctx, w, h} = setupCanvas(canvas);
    const n = heights.length, top = panel.ymax || Math.max(...heights) * 1.05 || 1;
    const sy = scale(0, top, h - PAD.bottom, PAD.top, false), W = w - PAD.left - PAD.right, bw = W / n;
    frame(ctx, w, h, title, panel.xlabel, panel.ylabel);
    ctx.fillStyle = "#444"; ctx.font = "10px sans-serif"; ctx.textAlign = "right";
    for (const t of niceTicks(0, top, false)) { const y = sy(t); ctx.fillText(fmt(t, 2), PAD.left - 3, y + 3); ctx.fillRect(PAD.left - 2, y, 2, 1); }
    ctx.textAlign = "center";
    for (let i = 0; i < n; i++) {
      ctx.fillStyle = colours[i];
      const y = sy(Math.max(0, heights[i]));
      ctx.fillRect(PAD.left + i * bw + 0.15 * bw, y, 0.7 * bw, h - PAD.bottom - y);
      if (n <= 20) { ctx.fillStyle = "#444"; ctx.fillText(String(i + 1), PAD.left + (i + 0.5) * bw, h - PAD.bottom + 12); }
    }
  }

  // ------------------------------------------------------------------------------------------------
  // One figure

  function LiveFigure(root, spec) {
    this.root = root;
    this.spec = spec;
    this.controls = {};
    for (const c of spec.controls) this.controls[c.name] = c;
    this.state = {};
    for (const c of spec.controls) this.state[c.name] = c.default;
    this.toy = spec.toy ? makeToy(spec.toy) : null;
    this.build();
    this.redraw();
  }

  LiveFigure.prototype.value = function (name) {
    const c = this.controls[name];
    return c.values[this.state[name]];
  };

  LiveFigure.prototype.label = function (name) {
    const c = this.controls[name];
    return c.labels ? c.labels[this.state[name]] : fmt(this.value(name), c.digits || 3);
  };

  LiveFigure.prototype.build = function () {
    const spec = this.spec, id = this.root.id || ("pl" + Math.random().toString(36).slice(2));
    this.root.classList.add("probdr-live-ready");
    const fallback = this.root.querySelector(".probdr-live-fallback");
    if (fallback) fallback.hidden = true;
    const fig = document.createElement("figure");
    fig.className = "probdr-live-figure";
    const panels = document.createElement("div");
    panels.className = "probdr-live-panels";
    panels.style.gridTemplateColumns = spec.panels.map((p) => (p.width || 1) + "fr").join(" ");
    this.canvases = spec.panels.map((p, k) => {
      const c = document.createElement("canvas");
      c.setAttribute("role", "img");
      c.style.height = (spec.height || 260) + "px";
      c.id = id + "-panel" + k;
      panels.appendChild(c);
      return c;
    });
    fig.appendChild(panels);
    const form = document.createElement("form");
    form.className = "probdr-live-controls";
    form.addEventListener("submit", (e) => e.preventDefault());
    this.inputs = {};
    this.outputs = {};
    for (const c of spec.controls) {
      const row = document.createElement("div");
      row.className = "probdr-live-control";
      const label = document.createElement("label");
      const inputId = id + "-" + c.name;
      label.htmlFor = inputId;
      label.textContent = c.label;
      let input;
      if (c.kind === "select") {
        input = document.createElement("select");
        c.values.forEach((v, k) => { const o = document.createElement("option"); o.value = String(k); o.textContent = c.labels ? c.labels[k] : String(v); input.appendChild(o); });
        input.value = String(this.state[c.name]);
      } else if (c.kind === "checkbox") {
        input = document.createElement("input");
        input.type = "checkbox";
        input.checked = !!c.values[this.state[c.name]];
      } else {
        input = document.createElement("input");
        input.type = "range"; input.min = "0"; input.max = String(c.values.length - 1); input.step = "1";
        input.value = String(this.state[c.name]);
      }
      input.id = inputId;
      input.name = c.name;
      input.dataset.control = c.name;
      const out = document.createElement("output");
      out.htmlFor = inputId;
      out.className = "probdr-live-value";
      const onChange = () => {  // "input" and then "change" both fire: draw once per new value
        const k = c.kind === "checkbox" ? c.values.indexOf(input.checked) : Number(input.value);
        if (k === this.state[c.name]) return;
        this.state[c.name] = k;
        this.redraw();
      };
      input.addEventListener("input", onChange);
      input.addEventListener("change", onChange);
      if (c.kind === "checkbox") { row.appendChild(input); row.appendChild(label); }
      else if (c.kind === "select") { row.appendChild(label); row.appendChild(input); }
      else { row.appendChild(label); row.appendChild(input); row.appendChild(out); }
      this.inputs[c.name] = input;
      this.outputs[c.name] = out;
      form.appendChild(row);
    }
    fig.appendChild(form);
    this.readoutList = document.createElement("dl");
    this.readoutList.className = "probdr-live-readouts";
    this.readoutList.setAttribute("aria-live", "polite");
    this.readoutList.setAttribute("aria-label", "current values");
    fig.appendChild(this.readoutList);
    if (spec.caption) {
      const cap = document.createElement("figcaption");
      cap.textContent = spec.caption;
      fig.appendChild(cap);
    }
    this.root.appendChild(fig);
    if (window.ResizeObserver) {
      let width = panels.clientWidth;
      new ResizeObserver(() => { if (panels.clientWidth !== width) { width = panels.clientWidth; this.redraw(); } }).observe(panels);
    }
  };

  // Replace {name} by a control's printed value and {=name} by a readout's.
  LiveFigure.prototype.fill = function (template, readouts) {
    if (!template) return "";
    return template.replace(/\{(=?)([a-z_0-9]+)\}/g, (m, r, name) => {
      if (r) return readouts[name] !== undefined ? readouts[name].text : m;
      return this.controls[name] ? this.label(name) : m;
    });
  };

  LiveFigure.prototype.toyData = function () {
    const p = {};
    for (const name of ["kappa", "eta", "beta", "depth"]) p[name] = this.value(name);
    p.variant = this.value("variant");
    p.causal = this.controls.mask ? !!this.value("mask") : false;
    const path = this.toy(p), last = path[path.length - 1], first = path[0];
    let moved = 0, lost = 0, kept = 0;
    for (let i = 0; i < last.x.length; i++) {
      if (!Number.isFinite(last.x[i])) { lost++; continue; }
      moved += Math.hypot(last.x[i] - first.x[i], last.y[i] - first.y[i]); kept++;
    }
    return {points: last, start: first, moved: kept ? moved / kept : NaN, lost};
  };

  LiveFigure.prototype.readouts = function (toy) {
    const out = {};
    for (const r of this.spec.readouts || []) {
      let v;
      if (r.toy) v = toy[r.toy];
      else if (r.text) v = r.text[cellOf(r, this.state, this.controls)];
      else v = current(r, this.state, this.controls)[r.index || 0];
      out[r.name] = {value: v, text: fmt(v, r.digits || 3), label: r.label};
    }
    return out;
  };

  LiveFigure.prototype.redraw = function () {
    const spec = this.spec, controls = this.controls, state = this.state;
    for (const c of spec.controls) {
      const text = this.label(c.name);
      if (this.outputs[c.name]) this.outputs[c.name].textContent = text;
      this.inputs[c.name].setAttribute("aria-valuetext", text);
    }
    const toy = this.toy ? this.toyData() : null;
    const readouts = this.readouts(toy);
    spec.panels.forEach((panel, k) => {
      const canvas = this.canvases[k], title = this.fill(panel.title, readouts);
      canvas.setAttribute("aria-label", this.fill(panel.alt || panel.title, readouts));
      if (panel.type === "scatter") {
        const pts = panel.source === "toy" ? toy.points : currentPoints(panel.xy, state, controls);
        const bg = panel.source === "toy" && panel.background ? toy.start : null;
        let colours;
        if (panel.classes) {
          const cls = panel.classes, pal = panel.palette;
          colours = cls.map((c) => pal[c % pal.length]);
        } else {
          const t = panel.colour_values, [lo, hi] = extent([t]);
          colours = t.map((v) => viridis((v - lo) / (hi - lo || 1)));
        }
        const note = panel.note ? this.fill(panel.note, readouts) : "";
        // a frame in the colour of the chosen option (e.g. the variant's colour, as in every other figure)
        const accent = panel.accent ? panel.accent.colours[state[panel.accent.control]] : null;
        drawScatter(canvas, panel, pts, bg, colours, title, note, accent);
      } else if (panel.type === "lines") {
        const series = panel.series.map((s) => ({y: current(s.y, state, controls), colour: s.colour, nolines: s.nolines,
          points: s.point_colours ? Array.from(current(s.point_colours, state, controls), (c) => panel.category_colours[c]) : s.points}));
        const hlines = (panel.hlines || []).map((l) => ({y: l.value !== undefined ? l.value : current(l.y, state, controls)[0], colour: l.colour, dash: l.dash}));
        let marker = null;
        if (panel.marker) { const i = state[panel.marker]; marker = {x: panel.x[i], y: series[0].y[i]}; }
        drawLines(canvas, panel, panel.x, series, hlines, marker, title);
      } else if (panel.type === "bars") {
        const hts = current(panel.heights, state, controls);
        const cats = current(panel.categories, state, controls);
        drawBars(canvas, panel, hts, Array.from(cats, (c) => panel.category_colours[c]), title);
      }
    });
    // the numbers, printed
    const dl = this.readoutList;
    dl.textContent = "";
    for (const r of spec.readouts || []) {
      const dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = r.label;
      dd.textContent = readouts[r.name].text;
      dd.dataset.readout = r.name;
      dl.appendChild(dt); dl.appendChild(dd);
    }
    this.last = {readouts, toy};
  };

  // For the book's tests: the state and the numbers drawn.
  LiveFigure.prototype.snapshot = function () {
    const values = {};
    for (const c of this.spec.controls) values[c.name] = this.value(c.name);
    const out = {values, readouts: {}};
    for (const [k, v] of Object.entries(this.last.readouts)) out.readouts[k] = v.value;
    if (this.last.toy) out.points = {x: Array.from(this.last.toy.points.x), y: Array.from(this.last.toy.points.y)};
    return out;
  };

  function init() {
    document.querySelectorAll("div.probdr-live").forEach((root) => {
      if (root.probdrLive) return;
      const script = root.querySelector("script.probdr-live-spec");
      if (!script) return;
      // A copy of a drawn figure (Thebe re-renders a cell's output from its HTML) has the controls but
      // not the script behind them: drop them and draw it again.
      root.querySelectorAll(":scope > figure.probdr-live-figure").forEach((old) => old.remove());
      root.classList.remove("probdr-live-ready", "probdr-live-broken");
      try {
        root.probdrLive = new LiveFigure(root, JSON.parse(script.textContent));
      } catch (err) {
        root.classList.add("probdr-live-broken");
        console.error("probdr-live: could not draw figure " + root.id, err);
      }
    });
  }

  // Figures that appear later (an output that Thebe's kernel writes into the page) are drawn too.
  function watch() {
    init();
    if (!window.MutationObserver) return;
    let pending = false;
    new MutationObserver(() => {
      if (pending) return;
      pending = true;
      setTimeout(() => { pending = false; init(); }, 50);
    }).observe(document.body, {childList: true, subtree: true});
  }

  window.probdrLive = {init, toyStep, toyStart, unlift};
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch);
  else watch();
})();
