/* Kernel-free live figures of the probdr-lite book.
 *
 * Each figure is a <div class="probdr-live"> holding a JSON spec (a <script type="application/json">
 * written by probdr_lite.presentation.live at build time). On the book's site the spec is a file of its own
 * (tools/sphinx_local_assets.py moves it out of the page, with the caption's maths typeset into it), and this
 * script, which the site's probdr-site.js loads once the page has painted, fetches it when the reader comes near
 * the figure (IntersectionObserver), or before printing. This script builds, for each of them, labelled
 * controls (<input type=range>, <select>, <input type=checkbox>), one <canvas> per panel, a colour key
 * where the spec asks for one and a list of the current numbers (aria-live), and redraws the canvases
 * whenever a control moves.
 *
 * Data. Most figures are precomputed by probdr_lite over a grid of the controls: every array in the
 * spec names the controls it depends on ("dims"), and the current cell is found from the controls'
 * positions. Scatter coordinates are quantised per frame to 8 or 16 bits inside that frame's bounding
 * box (the largest code means "no point"). A figure with "chunks" keeps its points outside the spec,
 * one chunk per setting of the controls in chunks.dims: embedded after the spec in a notebook, and on
 * the book's site one static file per setting, loaded when the reader first asks for that setting
 * (tools/sphinx_local_assets.py writes the files). One figure, chapter 5's toy, is computed here
 * instead, from the same equations as probdr_lite.unrolled (see toyStep); the book's tests compare the two.
 *
 * Layout. Panels sit side by side while each gets MIN_PANEL_WIDTH pixels, else they stack, with the controls
 * right under the first panel (so that on a phone the main picture and its controls share a screen). Every text
 * on a canvas is fitted to its room (wrapped, then set smaller, never below MIN_TEXT pixels) and
 * recorded with its measured box in canvas.probdrLayout, with any degenerate state (no point drawn, a
 * line off the axis), so the book's tests can check what a reader sees. A degenerate state comes with
 * a sentence in the panel saying what happened. Before printing, the canvases are redrawn at three
 * device pixels per pixel, so a printed figure is sharp.
 *
 * No library: the figures are scatters, lines and bars, a few hundred lines of Canvas 2D.
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
  // Chapter 5's toy: the unrolled block in the 3-D span where it lives (probdr_lite.presentation.figures.block).
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

  // The positions after 0..depth blocks, cached per (kappa, eta, beta, variant, mask); and the mean weight
  // A_ii that a point gives itself in the first block (the only place beta enters A).
  function makeToy(spec) {
    const Y = Float64Array.from(spec.Y), n = Y.length / 2, cache = new Map();
    const start = toyStart(Y, spec.offset);
    function path(p) {
      const key = [p.kappa, p.eta, p.beta, p.variant, p.causal].join("|");
      let steps = cache.get(key);
      if (!steps) { steps = [start]; cache.set(key, steps); if (cache.size > 64) cache.delete(cache.keys().next().value); }
      while (steps.length <= p.depth) steps.push(toyStep(steps[steps.length - 1], n, Object.assign({d_q: spec.d_q}, p)));
      return steps.slice(0, p.depth + 1).map((Z) => unlift(Z, n, spec.offset));
    }
    // A_ii = exp(-beta) / s_i with s_i = sum_j exp(kappa (z_i.z_j - 1)) - 1 + exp(-beta), as in toyStep (for the
    // symmetric graph too: E_ii / sqrt(s_i s_i) = E_ii / s_i)
    function selfWeight(p) {
      const d = Math.exp(-p.beta);
      let total = 0;
      for (let i = 0; i < n; i++) {
        const a = start[3 * i], b = start[3 * i + 1], c = start[3 * i + 2], m = p.causal ? i + 1 : n;
        let s = d;
        for (let j = 0; j < m; j++) if (j !== i) s += Math.exp(p.kappa * (a * start[3 * j] + b * start[3 * j + 1] + c * start[3 * j + 2] - 1));
        total += d / s;
      }
      return total / n;
    }
    return {path, selfWeight};
  }

  // ------------------------------------------------------------------------------------------------
  // Colours and formatting

  // viridis at 9 stops (perceptually uniform, readable with colour-vision deficiencies)
  const VIRIDIS = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"];

  // Canvas colours: the canvases are white in both colour modes of the site, like the book's static figures.
  const INK = {background: "#ffffff", text: "#222222", ticks: "#444444", frame: "#888888", note: "#a00000",
               noteBox: "rgba(255,255,255,0.85)", background_points: "#d0d0d0"};

  function hexToRgb(h) { return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)); }

  function viridis(t) {
    const u = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1), i = Math.min(VIRIDIS.length - 2, Math.floor(u)), f = u - i;
    const a = hexToRgb(VIRIDIS[i]), b = hexToRgb(VIRIDIS[i + 1]);
    return "rgb(" + a.map((v, k) => Math.round(v + f * (b[k] - v))).join(",") + ")";
  }

  const SUPERSCRIPT = {"-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹"};

  // A tick label: plain numbers where they are short, else 10 to a power (1e-4 as 10⁻⁴).
  function tickLabel(v, digits, log) {
    if (log && v > 0 && (v >= 1e4 || v < 1e-2)) {
      const e = Math.round(Math.log10(v)), m = v / Math.pow(10, e);
      const power = "10" + String(e).split("").map((ch) => SUPERSCRIPT[ch]).join("");
      return Math.abs(m - 1) < 1e-9 ? power : fmt(m, 2) + "×" + power;
    }
    return fmt(v, digits);
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
  // Text on a canvas: every string is fitted to the room it has (wrapped onto a few lines, then set
  // smaller, never below MIN_TEXT pixels), kept inside the canvas, and recorded with its measured box
  // in canvas.probdrLayout.texts, so that the book's tests can check what was drawn.

  const MIN_TEXT = 9;
  const FAMILY = "sans-serif";

  function setFont(ctx, size, weight) { ctx.font = (weight ? weight + " " : "") + size + "px " + FAMILY; }

  // Greedy word wrap into at most maxLines lines no wider than maxWidth; null if it does not fit.
  // With force, the text is cut (with an ellipsis) instead.
  function wrap(ctx, text, maxWidth, maxLines, force) {
    const words = String(text).split(/\s+/).filter(Boolean);
    const lines = [];
    let line = "";
    const cut = (s) => {
      if (ctx.measureText(s).width <= maxWidth) return s;
      while (s.length > 1 && ctx.measureText(s + "…").width > maxWidth) s = s.slice(0, -1);
      return s + "…";
    };
    for (let k = 0; k < words.length; k++) {
      const w = words[k], t = line ? line + " " + w : w;
      if (ctx.measureText(t).width <= maxWidth) { line = t; continue; }
      if (!line) {  // a single word wider than the line
        if (!force) return null;
        line = cut(w);
        continue;
      }
      lines.push(line);
      line = w;
      if (lines.length === maxLines) {
        if (!force) return null;
        lines[maxLines - 1] = cut(lines[maxLines - 1] + " " + words.slice(k).join(" "));
        return lines;
      }
    }
    if (line) {
      if (ctx.measureText(line).width > maxWidth) { if (!force) return null; line = cut(line); }
      lines.push(line);
    }
    return lines;
  }

  // The largest size from `size` down to MIN_TEXT at which the text fits in maxLines lines of maxWidth.
  function fit(ctx, text, size, maxWidth, maxLines, weight) {
    if (!text) return {size, lines: [], lineHeight: Math.round(size * 1.25)};
    for (let s = size; s >= MIN_TEXT; s -= 0.5) {
      setFont(ctx, s, weight);
      const lines = wrap(ctx, text, maxWidth, maxLines, false);
      if (lines) return {size: s, lines, weight, lineHeight: Math.ceil(s * 1.25)};
    }
    setFont(ctx, MIN_TEXT, weight);
    return {size: MIN_TEXT, lines: wrap(ctx, text, maxWidth, maxLines, true), weight, lineHeight: Math.ceil(MIN_TEXT * 1.25)};
  }

  // Draw fitted lines centred on cx (clamped so that every line stays inside [0, w]), the first baseline at y.
  function drawLines(ctx, layout, cx, y, w, colour, role, rec, background) {
    setFont(ctx, layout.size, layout.weight);
    ctx.textAlign = "center";
    layout.lines.forEach((line, k) => {
      const tw = ctx.measureText(line).width;
      const x = Math.min(Math.max(cx, tw / 2 + 2), w - tw / 2 - 2);
      const by = y + k * layout.lineHeight;
      if (background) {
        ctx.fillStyle = background;
        ctx.fillRect(x - tw / 2 - 3, by - layout.size, tw + 6, layout.lineHeight + 1);
      }
      ctx.fillStyle = colour;
      ctx.fillText(line, x, by);
      rec.push({role, text: line, x0: x - tw / 2, x1: x + tw / 2, y0: by - layout.size, y1: by + 0.25 * layout.size,
                size: layout.size, colour, background: background ? "#ffffff" : INK.background});
    });
  }

  // One tick label (single line, at the tick size), recorded.
  function tickText(ctx, text, x, y, align, rec) {
    ctx.textAlign = align;
    const tw = ctx.measureText(text).width;
    const x0 = align === "right" ? x - tw : (align === "center" ? x - tw / 2 : x);
    ctx.fillText(text, x, y);
    rec.push({role: "tick", text, x0, x1: x0 + tw, y0: y - TICK_SIZE, y1: y + 0.25 * TICK_SIZE, size: TICK_SIZE,
              colour: INK.ticks, background: INK.background});
  }

  // ------------------------------------------------------------------------------------------------
  // Axes

  const TICK_SIZE = 10;

  function niceTicks(lo, hi, log, most) {
    most = most || 5;
    if (log) {
      const out = [];
      const a = Math.ceil(Math.log10(lo)), b = Math.floor(Math.log10(hi));
      const every = Math.max(1, Math.ceil((b - a + 1) / most));
      const mantissas = b - a < 2 && most >= 4 ? [1, 2, 5] : [1];  // fewer than two decades: 1, 2, 5 of each
      for (let e = a - 1; e <= b; e += every) {
        for (const m of mantissas) { const v = m * Math.pow(10, e); if (v >= lo && v <= hi) out.push(v); }
      }
      return out;
    }
    const span = hi - lo || 1, raw = span / Math.max(1, most - 1), mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10, 20].map((m) => m * mag).find((s) => span / s <= most) || 20 * mag;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * span; v += step) out.push(Math.abs(v) < 1e-12 * span ? 0 : v);
    return out;
  }

  function setupCanvas(canvas) {
    // (under print media, also when the "change" event has not come: Chromium does not always send it)
    const ratio = Math.max(window.devicePixelRatio || 1, printScale || (PRINT_MEDIA && PRINT_MEDIA.matches ? PRINT_SCALE : 1));
    const w = canvas.clientWidth || 300, h = canvas.clientHeight || 240;
    if (canvas.width !== Math.round(w * ratio) || canvas.height !== Math.round(h * ratio)) {
      canvas.width = Math.round(w * ratio); canvas.height = Math.round(h * ratio);
    }
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    ctx.fillStyle = INK.background;
    ctx.fillRect(0, 0, w, h);
    const layout = {width: w, height: h, texts: [], notes: [], degenerate: [], plot: null};
    canvas.probdrLayout = layout;
    return {ctx, w, h, layout};
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

  // Ticks whose labels do not collide: fewer ticks until each label has room (measured).
  function spacedTicks(ctx, lo, hi, log, pixels, along, digits) {
    setFont(ctx, TICK_SIZE);
    for (let most = 6; most >= 2; most--) {
      const ticks = niceTicks(lo, hi, log, most);
      const labels = ticks.map((t) => tickLabel(t, digits, log));
      const room = pixels / Math.max(1, ticks.length);
      const need = along === "x" ? Math.max(0, ...labels.map((s) => ctx.measureText(s).width)) + 6 : TICK_SIZE * 1.6;
      if (need <= room || most === 2) return {ticks, labels};
    }
    return {ticks: [], labels: []};
  }

  // Lay out one panel: title on top, x label below, y label on the left, tick labels beside the axes.
  // Returns the plot rectangle and the layouts, so that drawing can follow.
  function layoutPanel(ctx, w, h, texts, yTickLabels) {
    const title = fit(ctx, texts.title, 12, w - 8, 2, "bold");
    const xlabel = fit(ctx, texts.xlabel, 11, w - 8, 2);
    const top = 6 + title.lines.length * title.lineHeight + 4;
    const bottom = (texts.noXTicks ? 4 : TICK_SIZE + 6) + xlabel.lines.length * xlabel.lineHeight + 4;
    setFont(ctx, TICK_SIZE);
    const tickW = Math.max(0, ...(yTickLabels || []).map((s) => ctx.measureText(s).width));
    const ylabel = fit(ctx, texts.ylabel, 11, Math.max(40, h - top - bottom), 2);
    const left = 4 + ylabel.lines.length * ylabel.lineHeight + (tickW ? tickW + 6 : 2);
    const right = 12;
    return {title, xlabel, ylabel, plot: {x: left, y: top, w: Math.max(10, w - left - right), h: Math.max(10, h - top - bottom)}};
  }

  function drawFrame(ctx, w, h, L, accent, rec) {
    const p = L.plot;
    ctx.strokeStyle = accent || INK.frame; ctx.lineWidth = accent ? 2 : 1;
    ctx.strokeRect(p.x + 0.5, p.y + 0.5, p.w, p.h);
    ctx.lineWidth = 1;
    drawLines(ctx, L.title, w / 2, 6 + L.title.size, w, INK.text, "title", rec);
    drawLines(ctx, L.xlabel, p.x + p.w / 2, h - 4 - (L.xlabel.lines.length - 1) * L.xlabel.lineHeight - 0.25 * L.xlabel.size,
              w, INK.text, "xlabel", rec);
    if (L.ylabel.lines.length) {  // rotated: record the box it covers
      setFont(ctx, L.ylabel.size);
      ctx.save();
      L.ylabel.lines.forEach((line, k) => {
        const tw = ctx.measureText(line).width, bx = 4 + L.ylabel.size + k * L.ylabel.lineHeight;
        const cy = Math.min(Math.max(p.y + p.h / 2, tw / 2 + 2), h - tw / 2 - 2);
        ctx.save(); ctx.translate(bx, cy); ctx.rotate(-Math.PI / 2);
        ctx.fillStyle = INK.text; ctx.textAlign = "center"; ctx.fillText(line, 0, 0); ctx.restore();
        rec.push({role: "ylabel", text: line, x0: bx - L.ylabel.size, x1: bx + 0.25 * L.ylabel.size, y0: cy - tw / 2,
                  y1: cy + tw / 2, size: L.ylabel.size, colour: INK.text, background: INK.background});
      });
      ctx.restore();
    }
  }

  function drawYTicks(ctx, L, ticks, labels, sy, rec) {
    ctx.fillStyle = INK.ticks; setFont(ctx, TICK_SIZE);
    ticks.forEach((t, k) => {
      const y = sy(t);
      if (y < L.plot.y - 0.5 || y > L.plot.y + L.plot.h + 0.5) return;
      const ty = Math.min(Math.max(y + 3.5, L.plot.y + TICK_SIZE - 1), L.plot.y + L.plot.h + 3.5);
      tickText(ctx, labels[k], L.plot.x - 4, ty, "right", rec);
      ctx.fillRect(L.plot.x - 3, Math.round(y), 3, 1);
    });
  }

  function drawXTicks(ctx, L, ticks, labels, sx, w, rec) {
    ctx.fillStyle = INK.ticks; setFont(ctx, TICK_SIZE);
    ticks.forEach((t, k) => {
      const x = sx(t);
      if (x < L.plot.x - 0.5 || x > L.plot.x + L.plot.w + 0.5) return;
      const tw = ctx.measureText(labels[k]).width, cx = Math.min(Math.max(x, tw / 2 + 2), w - tw / 2 - 2);
      tickText(ctx, labels[k], cx, L.plot.y + L.plot.h + TICK_SIZE + 3, "center", rec);
      ctx.fillRect(Math.round(x), L.plot.y + L.plot.h, 1, 3);
    });
  }

  // The frame with its title and axis labels, the y ticks yt and ticks over the x range xr, then a clip to the plot
  // area for the data (the caller's ctx.restore() lifts it).
  function drawAxesAndClip(ctx, w, h, L, accent, yt, xr, sx, sy, rec) {
    const P = L.plot;
    drawFrame(ctx, w, h, L, accent, rec);
    drawYTicks(ctx, L, yt.ticks, yt.labels, sy, rec);
    const xt = spacedTicks(ctx, xr[0], xr[1], false, P.w, "x", 3);
    drawXTicks(ctx, L, xt.ticks, xt.labels, sx, w, rec);
    ctx.save();
    ctx.beginPath(); ctx.rect(P.x, P.y, P.w, P.h); ctx.clip();
  }

  // A sentence across the middle of the plot (what happened, when there is nothing or little to see).
  function drawNote(ctx, L, note, w, layout) {
    if (!note) return;
    const layoutNote = fit(ctx, note, 12, L.plot.w - 10, 5, "bold");
    const y = L.plot.y + L.plot.h / 2 - ((layoutNote.lines.length - 1) * layoutNote.lineHeight) / 2 + layoutNote.size / 2;
    drawLines(ctx, layoutNote, L.plot.x + L.plot.w / 2, y, w, INK.note, "note", layout.texts, INK.noteBox);
    layout.notes.push(note);
  }

  // ------------------------------------------------------------------------------------------------
  // Panels

  // A scatter. bounds: [x0, x1, y0, y1] or null (then the axes follow the points).
  function drawScatter(canvas, panel, pts, bg, colours, texts, note, accent, bounds) {
    const {ctx, w, h, layout} = setupCanvas(canvas);
    let xr, yr;
    if (bounds) { xr = bounds.slice(0, 2); yr = bounds.slice(2, 4); }
    else {
      const xs = [pts.x], ys = [pts.y];
      if (bg && panel.bounds_include_background) { xs.push(bg.x); ys.push(bg.y); }
      xr = padRange(...extent(xs), 0.06); yr = padRange(...extent(ys), 0.06);
    }
    // the y ticks depend on the range, the range (equal aspect) on the plot's size: lay out twice
    let L = layoutPanel(ctx, w, h, texts, niceTicks(yr[0], yr[1], false, 5).map((t) => fmt(t, 3)));
    if (panel.equal_aspect) {  // same units on both axes: widen the narrower range
      const ux = (xr[1] - xr[0]) / L.plot.w, uy = (yr[1] - yr[0]) / L.plot.h, u = Math.max(ux, uy);
      const cx = (xr[0] + xr[1]) / 2, cy = (yr[0] + yr[1]) / 2;
      xr = [cx - u * L.plot.w / 2, cx + u * L.plot.w / 2]; yr = [cy - u * L.plot.h / 2, cy + u * L.plot.h / 2];
    }
    const yt = spacedTicks(ctx, yr[0], yr[1], false, L.plot.h, "y", 3);
    L = layoutPanel(ctx, w, h, texts, yt.labels);
    const P = L.plot;
    const sx = scale(xr[0], xr[1], P.x, P.x + P.w, false), sy = scale(yr[0], yr[1], P.y + P.h, P.y, false);
    layout.plot = P;
    drawAxesAndClip(ctx, w, h, L, accent, yt, xr, sx, sy, layout.texts);
    const r = panel.radius || 2;
    if (bg) {
      ctx.fillStyle = INK.background_points;
      for (let i = 0; i < bg.x.length; i++) if (Number.isFinite(bg.x[i])) ctx.fillRect(sx(bg.x[i]) - r / 2, sy(bg.y[i]) - r / 2, r, r);
    }
    ctx.globalAlpha = panel.alpha || 0.85;
    let drawn = 0, outside = 0;
    const pix = new Set();
    for (let i = 0; i < pts.x.length; i++) {
      if (!Number.isFinite(pts.x[i]) || !Number.isFinite(pts.y[i])) continue;
      const px = sx(pts.x[i]), py = sy(pts.y[i]);
      if (px < P.x - r || px > P.x + P.w + r || py < P.y - r || py > P.y + P.h + r) { outside++; continue; }
      drawn++;
      if (pix.size < 64) pix.add(Math.round(px / 3) + "," + Math.round(py / 3));
      ctx.fillStyle = colours[i];
      ctx.beginPath(); ctx.arc(px, py, r, 0, 2 * Math.PI); ctx.fill();
    }
    ctx.restore();
    layout.points = drawn;
    layout.outside = outside;
    if (drawn === 0) layout.degenerate.push("no point drawn");
    else if (pix.size <= 1 && drawn > 1) layout.degenerate.push("every point at one spot");
    drawNote(ctx, L, note, w, layout);
  }

  // series: [{y, colour, points, nolines}], x shared; hlines: [{y, colour, dash, label}]; marker: {x, y}
  function drawLinePanel(canvas, panel, x, series, hlines, marker, texts, note) {
    const {ctx, w, h, layout} = setupCanvas(canvas);
    const log = !!panel.logy;
    let yr = panel.ylim ? panel.ylim.slice() : null;
    if (!yr) {
      const ext = extent(series.map((s) => s.y).concat(hlines.map((l) => [l.y])));
      yr = log ? [ext[0] / 1.5, ext[1] * 1.5] : padRange(Math.min(0, ext[0]), ext[1], 0.08);
    }
    const xr = panel.xlim || [x[0], x[x.length - 1]];
    let L = layoutPanel(ctx, w, h, texts, niceTicks(yr[0], yr[1], log, 5).map((t) => tickLabel(t, 2, log)));
    const yt = spacedTicks(ctx, yr[0], yr[1], log, L.plot.h, "y", 2);
    L = layoutPanel(ctx, w, h, texts, yt.labels);
    const P = L.plot;
    layout.plot = P;
    const sx = scale(xr[0] - 0.03 * (xr[1] - xr[0]), xr[1] + 0.03 * (xr[1] - xr[0]), P.x, P.x + P.w, false);
    const sy = scale(yr[0], yr[1], P.y + P.h, P.y, log);
    drawAxesAndClip(ctx, w, h, L, null, yt, xr, sx, sy, layout.texts);
    const clampY = (v) => (log ? Math.max(v, yr[0] * 1e-3) : v);
    const notes = [];
    for (const l of hlines) {
      const inside = Number.isFinite(l.y) && l.y >= yr[0] && l.y <= yr[1];
      if (!inside) {
        layout.degenerate.push("a line off the axis");
        if (l.label) notes.push(l.label + " lies " + (l.y < yr[0] ? "below" : "above") + " the axis");
        continue;
      }
      ctx.strokeStyle = l.colour || "#555"; ctx.setLineDash(l.dash || [4, 3]); ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(P.x, sy(l.y)); ctx.lineTo(P.x + P.w, sy(l.y)); ctx.stroke();
    }
    ctx.setLineDash([]);
    let finite = 0;
    for (const s of series) {
      ctx.strokeStyle = s.colour || "#222"; ctx.lineWidth = 1.5; ctx.beginPath();
      let pen = false;
      for (let i = 0; i < x.length; i++) {
        if (!Number.isFinite(s.y[i]) || (log && s.y[i] <= 0)) { pen = false; continue; }
        finite++;
        const px = sx(x[i]), py = sy(clampY(s.y[i]));
        if (pen) ctx.lineTo(px, py); else ctx.moveTo(px, py);
        pen = true;
      }
      if (!s.nolines) ctx.stroke();
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
    if (!finite) layout.degenerate.push("no point drawn");
    drawNote(ctx, L, [note].concat(notes).filter(Boolean).join("; "), w, layout);
  }

  function drawBars(canvas, panel, heights, colours, texts, note) {
    const {ctx, w, h, layout} = setupCanvas(canvas);
    const n = heights.length, top = panel.ymax || Math.max(...heights) * 1.05 || 1;
    let L = layoutPanel(ctx, w, h, texts, niceTicks(0, top, false, 5).map((t) => fmt(t, 2)));
    const yt = spacedTicks(ctx, 0, top, false, L.plot.h, "y", 2);
    L = layoutPanel(ctx, w, h, texts, yt.labels);
    const P = L.plot;
    layout.plot = P;
    const sy = scale(0, top, P.y + P.h, P.y, false), bw = P.w / n;
    drawFrame(ctx, w, h, L, null, layout.texts);
    drawYTicks(ctx, L, yt.ticks, yt.labels, sy, layout.texts);
    // label every k-th bar, k as small as the labels' widths allow
    setFont(ctx, TICK_SIZE);
    const widest = ctx.measureText(String(n)).width + 5;
    const every = [1, 2, 5, 10, 20, 50].find((k) => k * bw >= widest) || n;
    let visible = 0;
    for (let i = 0; i < n; i++) {
      ctx.fillStyle = colours[i];
      const y = sy(Math.max(0, heights[i]));
      if (heights[i] > 0 && P.y + P.h - y >= 0.5) visible++;
      ctx.fillRect(P.x + i * bw + 0.15 * bw, y, 0.7 * bw, P.y + P.h - y);
      if ((i + 1) % every === 0 || (every > 1 && i === 0)) {
        ctx.fillStyle = INK.ticks;
        tickText(ctx, String(i + 1), P.x + (i + 0.5) * bw, P.y + P.h + TICK_SIZE + 3, "center", layout.texts);
      }
    }
    if (!visible) {
      layout.degenerate.push("every bar is zero");
      // nothing to see: say so (the spec's words for this figure, else plain ones), as a scatter does
      if (!note) note = (panel.degenerate || {}).zero || "Every bar is zero at this setting";
    }
    drawNote(ctx, L, note, w, layout);
  }

  // ------------------------------------------------------------------------------------------------
  // Frames loaded per setting (a figure whose spec has "chunks"): embedded in the page (in a notebook,
  // or a figure Thebe re-renders) or, on the book's site, one static file per setting that calls
  // probdrLive.chunk(id, cell, payload) when it arrives (a <script>, which works from file:// too).

  function chunkCell(spec, state, controls) { return cellOf({dims: spec.chunks.dims}, state, controls); }

  function receiveChunk(id, cell, payload) {
    const root = document.getElementById(id);
    if (root && root.probdrLive) root.probdrLive.receive(cell, payload);
  }

  // ------------------------------------------------------------------------------------------------
  // Printing: the canvases are redrawn at PRINT_SCALE device pixels per CSS pixel before the page is
  // printed, so that a printed figure is sharp; the controls are hidden by the stylesheet.

  const PRINT_SCALE = 3;
  const PRINT_MEDIA = window.matchMedia ? window.matchMedia("print") : null;
  let printScale = 0;

  function redrawAll() {
    document.querySelectorAll("div.probdr-live").forEach((root) => { if (root.probdrLive) root.probdrLive.redraw(); });
  }

  function setPrinting(on) {
    if (on) loadAll();  // a figure the reader has not come near yet is drawn for paper too
    const want = on ? PRINT_SCALE : 0;
    if (want === printScale) return;
    printScale = want;
    redrawAll();
  }

  // A colour key: a list of swatches with their labels (the classes of a scatter).
  function colourKey(spec) {
    const key = document.createElement("ul");
    key.className = "probdr-live-key";
    key.setAttribute("aria-label", spec.title ? "colour key: " + spec.title : "colour key");
    if (spec.title) {
      const t = document.createElement("li");
      t.className = "probdr-live-key-title";
      t.textContent = spec.title;
      key.appendChild(t);
    }
    spec.labels.forEach((text, k) => {
      const li = document.createElement("li"), sw = document.createElement("span");
      sw.className = "probdr-live-swatch";
      sw.style.backgroundColor = spec.colours[k];
      li.appendChild(sw);
      li.appendChild(document.createTextNode(text));
      key.appendChild(li);
    });
    return key;
  }

  // ------------------------------------------------------------------------------------------------
  // Maths in sentences (captions): $...$ becomes a span that MathJax typesets, as Sphinx writes inline maths
  // (without MathJax the TeX stays readable as text); `...` becomes code. On the book's site the caption comes
  // typeset already (spec.captionHtml, the maths typeset when the book was built) and this is not needed.

  function withMaths(el, text) {
    String(text).split(/(\$[^$]+\$|`[^`]+`)/).forEach((part) => {
      if (!part) return;
      if (part[0] === "`") {  // `code`
        const c = document.createElement("code");
        c.textContent = part.slice(1, -1);
        el.appendChild(c);
      } else if (part[0] === "$") {
        const m = document.createElement("span");
        m.className = "math notranslate nohighlight";
        m.textContent = "\\(" + part.slice(1, -1) + "\\)";
        el.appendChild(m);
      } else el.appendChild(document.createTextNode(part));
    });
    if (!el.querySelector(".math")) return;
    // the book's site loads MathJax only now (probdr-site.js); a notebook has its own
    if (window.probdrMaths) {
      window.probdrMaths.typeset([el]).catch((err) => console.warn("probdr-live: MathJax", err));
      return;
    }
    const MJ = window.MathJax;
    const typeset = () => window.MathJax.typesetPromise([el]).catch((err) => console.warn("probdr-live: MathJax", err));
    if (MJ && MJ.startup && MJ.startup.promise) MJ.startup.promise.then(() => { if (window.MathJax.typesetPromise) return typeset(); });
    else if (MJ && MJ.typesetPromise) typeset();
    else window.addEventListener("load", () => { if (window.MathJax && window.MathJax.typesetPromise) typeset(); });
  }

  // ------------------------------------------------------------------------------------------------
  // One figure

  // Below this width (CSS pixels) per panel, the panels are stacked in one column.
  const MIN_PANEL_WIDTH = 210;

  function LiveFigure(root, spec, chunks) {
    this.root = root;
    this.spec = spec;
    this.controls = {};
    for (const c of spec.controls) this.controls[c.name] = c;
    this.state = {};
    for (const c of spec.controls) this.state[c.name] = c.default;
    this.toy = spec.toy ? makeToy(spec.toy) : null;
    this.chunks = chunks || null;  // {embedded: [...]} or {base, count, bytes}
    this.loaded = new Map();
    this.pending = new Set();
    this.failed = new Set();
    this.arrivals = [];
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
    this.panels = panels;
    this.canvases = spec.panels.map((p, k) => {
      const cell = document.createElement("div"), c = document.createElement("canvas");
      cell.className = "probdr-live-panel";
      c.setAttribute("role", "img");
      c.style.height = (spec.height || 260) + "px";
      c.id = id + "-panel" + k;
      cell.appendChild(c);
      if (p.key) cell.appendChild(colourKey(p.key));  // under its own panel, also when the panels stack
      panels.appendChild(cell);
      return c;
    });
    fig.appendChild(panels);
    this.status = document.createElement("p");
    this.status.className = "probdr-live-status";
    this.status.setAttribute("role", "status");
    this.status.hidden = true;
    fig.appendChild(this.status);
    const form = document.createElement("form");
    form.className = "probdr-live-controls";
    form.addEventListener("submit", (e) => e.preventDefault());
    this.inputs = {};
    this.outputs = {};
    for (const c of spec.controls) {
      const row = document.createElement("div");
      row.className = "probdr-live-control probdr-live-" + c.kind;
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
    this.form = form;
    // what the controls are set to, as text (shown on paper, where the controls are not)
    this.settings = document.createElement("p");
    this.settings.className = "probdr-live-settings";
    fig.appendChild(this.settings);
    // the numbers: one row per readout, built once; the values change on redraw
    this.readoutList = document.createElement("dl");
    this.readoutList.className = "probdr-live-readouts";
    this.readoutList.setAttribute("aria-live", "polite");
    this.readoutList.setAttribute("aria-label", "current values");
    this.readoutRows = {};
    for (const r of spec.readouts || []) {
      const row = document.createElement("div"), dt = document.createElement("dt"), dd = document.createElement("dd");
      row.className = "probdr-live-readout";
      dt.textContent = r.label;
      dd.dataset.readout = r.name;
      row.appendChild(dt); row.appendChild(dd);
      this.readoutList.appendChild(row);
      this.readoutRows[r.name] = {row, dd};
    }
    fig.appendChild(this.readoutList);
    if (spec.caption) {
      const cap = document.createElement("figcaption");
      if (spec.captionHtml) cap.innerHTML = spec.captionHtml;
      else withMaths(cap, spec.caption);
      fig.appendChild(cap);
    }
    this.root.appendChild(fig);
    this.layout();
    if (window.ResizeObserver) {
      let width = panels.clientWidth;
      new ResizeObserver(() => {
        if (panels.clientWidth !== width) { width = panels.clientWidth; this.layout(); this.redraw(); }
      }).observe(this.root);
    }
  };

  // Side by side where each panel gets MIN_PANEL_WIDTH, else one column.
  LiveFigure.prototype.layout = function () {
    const spec = this.spec, width = this.root.clientWidth || 700;
    const weights = spec.panels.map((p) => p.width || 1), total = weights.reduce((a, b) => a + b, 0);
    const narrowest = Math.min(...weights) / total * (width - 8 * (weights.length - 1));
    const stacked = spec.panels.length > 1 && narrowest < MIN_PANEL_WIDTH;
    this.panels.style.gridTemplateColumns = stacked ? "minmax(0, 1fr)" : weights.map((w) => "minmax(0, " + w + "fr)").join(" ");
    this.root.classList.toggle("probdr-live-stacked", stacked);
    // Stacked (a phone), the controls sit right under the first panel, so that the main picture and what moves it
    // are on one screen; side by side, under all the panels.
    const form = this.form, first = this.panels.firstElementChild;
    if (!form || !first) return;
    if (stacked && form.parentNode !== this.panels) this.panels.insertBefore(form, first.nextSibling);
    else if (!stacked && form.parentNode === this.panels) this.settings.parentNode.insertBefore(form, this.settings);
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
    const path = this.toy.path(p), last = path[path.length - 1], first = path[0];
    let moved = 0, lost = 0, kept = 0;
    for (let i = 0; i < last.x.length; i++) {
      if (!Number.isFinite(last.x[i])) { lost++; continue; }
      moved += Math.hypot(last.x[i] - first.x[i], last.y[i] - first.y[i]); kept++;
    }
    return {points: last, start: first, moved: kept ? moved / kept : NaN, lost, self: this.toy.selfWeight(p)};
  };

  // The loaded chunk of the current setting, or null (then its file is requested).
  LiveFigure.prototype.chunk = function () {
    if (!this.spec.chunks || !this.chunks) return null;
    const cell = chunkCell(this.spec, this.state, this.controls);
    if (this.chunks.embedded) return this.chunks.embedded[cell];
    if (this.loaded.has(cell)) return this.loaded.get(cell);
    if (!this.pending.has(cell) && !this.failed.has(cell)) {
      this.pending.add(cell);
      const s = document.createElement("script");
      s.src = this.chunks.base + cell + ".js";
      s.async = true;
      s.onload = () => s.remove();
      s.onerror = () => { s.remove(); this.pending.delete(cell); this.failed.add(cell); this.redraw(); };
      this.requested = performance.now();
      document.head.appendChild(s);
    }
    return null;
  };

  LiveFigure.prototype.receive = function (cell, payload) {
    this.pending.delete(cell);
    this.loaded.set(cell, payload);
    if (this.loaded.size > 48) this.loaded.delete(this.loaded.keys().next().value);
    if (cell === chunkCell(this.spec, this.state, this.controls)) {
      const t = performance.now();
      this.redraw();
      this.arrivals.push({cell, redraw_ms: performance.now() - t, bytes: (this.chunks.bytes || [])[cell]});
    }
  };

  LiveFigure.prototype.readouts = function (toy) {
    const out = {};
    for (const r of this.spec.readouts || []) {
      let v;
      if (r.toy) v = toy[r.toy];
      else if (r.text) v = r.text[cellOf(r, this.state, this.controls)];
      else v = current(r, this.state, this.controls)[r.index || 0];
      const text = r.percent && typeof v === "number" ? fmt(100 * v, r.digits || 3) + " %" : fmt(v, r.digits || 3);
      out[r.name] = {value: v, text, label: r.label};
    }
    return out;
  };

  LiveFigure.prototype.redraw = function () {
    const spec = this.spec, controls = this.controls, state = this.state;
    const shown = [];
    for (const c of spec.controls) {
      const text = this.label(c.name);
      if (this.outputs[c.name]) this.outputs[c.name].textContent = text;
      if (c.kind === "range") this.inputs[c.name].setAttribute("aria-valuetext", text);
      shown.push(c.label + ": " + text);
    }
    this.settings.textContent = "Shown at " + shown.join("; ") + ".";
    const toy = this.toy ? this.toyData() : null;
    const readouts = this.readouts(toy);
    let waiting = false, missing = false;
    spec.panels.forEach((panel, k) => {
      const canvas = this.canvases[k];
      const texts = {title: this.fill(panel.title, readouts), xlabel: panel.xlabel, ylabel: panel.ylabel};
      canvas.setAttribute("aria-label", this.fill(panel.alt || panel.title, readouts));
      let note = "";
      if (typeof panel.note === "string") note = this.fill(panel.note, readouts);
      else if (panel.note && Object.entries(panel.note.when || {}).every(([name, v]) => this.value(name) === v)) {
        note = panel.note.text[cellOf(panel.note, state, controls)] || "";
      }
      if (panel.type === "scatter") {
        let pts;
        if (panel.source === "toy") pts = toy.points;
        else if (panel.xy.chunk) {
          const got = this.chunk();
          if (got) pts = currentPoints(got[panel.xy.chunk], state, controls);
          else {
            const cell = chunkCell(spec, state, controls);
            missing = this.failed.has(cell);
            waiting = !missing;
            const say = missing ? "Could not load the points of this setting (its file is missing)."
                                : "Loading the points of this setting…";
            drawScatter(canvas, panel, {x: [], y: []}, null, [], texts, say, null, panel.fixed_bounds || [-1, 1, -1, 1]);
            return;
          }
        } else pts = currentPoints(panel.xy, state, controls);
        const bg = panel.source === "toy" && panel.background ? toy.start : null;
        let colours;
        if (panel.classes) {
          const cls = panel.classes, pal = panel.palette;
          colours = cls.map((c) => pal[c % pal.length]);
        } else {
          const t = panel.colour_values, [lo, hi] = extent([t]);
          colours = t.map((v) => viridis((v - lo) / (hi - lo || 1)));
        }
        // a frame in the colour of the chosen option (e.g. the variant's colour, as in every other figure)
        const accent = panel.accent ? panel.accent.colours[state[panel.accent.control]] : null;
        let bounds = panel.bounds || null;
        if (panel.axes_control && this.value(panel.axes_control) === "fixed") bounds = panel.fixed_bounds;
        drawScatter(canvas, panel, pts, bg, colours, texts, note, accent, bounds);
        const L = canvas.probdrLayout;
        if (L.degenerate.length && !note) {
          // nothing to see, or one spot: say what happened (the spec's words for this figure, else plain ones)
          const said = panel.degenerate || {};
          const n = pts.x.length;
          const words = L.points === 0 ? (said.empty || "No point to draw at this setting") :
            (said.spot || "All " + n + " points lie at one spot, closer together than a pixel");
          drawScatter(canvas, panel, pts, bg, colours, texts, words, accent, bounds);
        } else if (bounds && panel.axes_control && L.outside > 0 && !note) {
          // points beyond fixed axes: say so (and how to see them)
          drawScatter(canvas, panel, pts, bg, colours, texts,
                      L.outside + (L.outside === 1 ? " point lies" : " points lie") + " outside these fixed axes; " +
                      "choose axes that follow the points to see " + (L.outside === 1 ? "it" : "them"), accent, bounds);
        }
      } else if (panel.type === "lines") {
        const series = panel.series.map((s) => ({y: current(s.y, state, controls), colour: s.colour, nolines: s.nolines,
          points: s.point_colours ? Array.from(current(s.point_colours, state, controls), (c) => panel.category_colours[c]) : s.points}));
        const hlines = (panel.hlines || []).map((l) => {
          const y = l.value !== undefined ? l.value : current(l.y, state, controls)[0];
          return {y, colour: l.colour, dash: l.dash, label: l.label ? this.fill(l.label, readouts) : ""};
        });
        let marker = null;
        if (panel.marker) { const i = state[panel.marker]; marker = {x: panel.x[i], y: series[0].y[i]}; }
        drawLinePanel(canvas, panel, panel.x, series, hlines, marker, texts, note);
      } else if (panel.type === "bars") {
        const hts = current(panel.heights, state, controls);
        const cats = current(panel.categories, state, controls);
        drawBars(canvas, panel, hts, Array.from(cats, (c) => panel.category_colours[c]), texts, note);
      }
    });
    this.root.setAttribute("aria-busy", waiting ? "true" : "false");
    this.status.hidden = !(waiting || missing);
    this.status.textContent = waiting ? "Loading the points of this setting…" :
      (missing ? "Could not load the points of this setting." : "");
    // the numbers, printed; a readout with nothing to say at this setting hides its row
    for (const r of spec.readouts || []) {
      const row = this.readoutRows[r.name], text = readouts[r.name].text;
      row.dd.textContent = text;
      row.row.hidden = text === "" || text === undefined;
    }
    this.last = {readouts, toy};
  };

  // For the book's tests: the state and the numbers drawn.
  LiveFigure.prototype.snapshot = function () {
    const values = {};
    for (const c of this.spec.controls) values[c.name] = this.value(c.name);
    const out = {values, readouts: {}, loading: this.root.getAttribute("aria-busy") === "true"};
    for (const [k, v] of Object.entries(this.last.readouts)) out.readouts[k] = v.value;
    if (this.last.toy) out.points = {x: Array.from(this.last.toy.points.x), y: Array.from(this.last.toy.points.y)};
    out.panels = this.canvases.map((c) => c.probdrLayout);
    return out;
  };

  function readChunks(root) {
    const embedded = root.querySelector("script.probdr-live-chunks");
    if (embedded) return {embedded: JSON.parse(embedded.textContent)};
    const files = root.querySelector("script.probdr-live-chunk-files");
    if (files) {
      const info = JSON.parse(files.textContent);
      return {base: new URL(info.base, document.baseURI).href, count: info.count, bytes: info.bytes};
    }
    return null;
  }

  function draw(root, spec) {
    try {
      root.probdrLive = new LiveFigure(root, spec, readChunks(root));
    } catch (err) {
      root.classList.add("probdr-live-broken");
      console.error("probdr-live: could not draw figure " + root.id, err);
    }
  }

  // Specs in files of their own (the book's site): each figure's is fetched when the reader comes within half a
  // screen of it, as a <script> that calls probdrLive.spec(id, spec) (which works from file:// too).
  const waiting = new Map();  // figure id -> the spec's promise's resolve

  function receiveSpec(id, spec) {
    const resolve = waiting.get(id);
    if (resolve) { waiting.delete(id); resolve(spec); }
  }

  function loadSpec(root, ref) {
    const info = JSON.parse(ref.textContent);
    const url = new URL(info.src, document.baseURI).href;
    return new Promise((resolve, reject) => {
      waiting.set(root.id, resolve);
      const script = document.createElement("script");
      script.src = url;
      script.async = true;
      script.addEventListener("error", () => {
        waiting.delete(root.id);
        script.remove();
        reject(new Error("could not load " + url));
      });
      document.head.appendChild(script);
    });
  }

  let near = null;

  function whenNear(root, start) {
    root.probdrStart = start;
    if (!window.IntersectionObserver) { startNow(root); return; }
    if (!near) {
      near = new IntersectionObserver((entries) => {
        entries.forEach((e) => { if (e.isIntersecting) startNow(e.target); });
      }, {rootMargin: "50% 0px 50% 0px"});
    }
    near.observe(root);
  }

  function startNow(root) {
    const start = root.probdrStart;
    if (!start) return;
    delete root.probdrStart;
    if (near) near.unobserve(root);
    start();
  }

  // Every figure not drawn yet, now (before printing).
  function loadAll() {
    document.querySelectorAll("div.probdr-live").forEach(startNow);
  }

  function init() {
    document.querySelectorAll("div.probdr-live").forEach((root) => {
      if (root.probdrLive || root.probdrStart || root.probdrLoading || root.probdrFailed) return;
      const script = root.querySelector("script.probdr-live-spec");
      const ref = root.querySelector("script.probdr-live-spec-file");
      if (!script && !ref) return;
      // A copy of a drawn figure (Thebe re-renders a cell's output from its HTML) has the controls but
      // not the script behind them: drop them and draw it again.
      root.querySelectorAll(":scope > figure.probdr-live-figure").forEach((old) => old.remove());
      root.classList.remove("probdr-live-ready", "probdr-live-broken");
      if (script) {
        let spec = null;
        try {
          spec = JSON.parse(script.textContent);
        } catch (err) {
          root.classList.add("probdr-live-broken");
          console.error("probdr-live: could not read the spec of figure " + root.id, err);
          return;
        }
        draw(root, spec);
        return;
      }
      whenNear(root, () => {
        root.probdrLoading = true;
        root.setAttribute("aria-busy", "true");
        loadSpec(root, ref).then((spec) => {
          root.probdrLoading = false;
          root.removeAttribute("aria-busy");
          draw(root, spec);
        }, (err) => {
          root.probdrLoading = false;
          root.probdrFailed = true;  // not again by itself (a reload of the page tries again)
          root.removeAttribute("aria-busy");
          root.classList.add("probdr-live-broken");
          console.error("probdr-live: could not load figure " + root.id, err);
        });
      });
    });
  }

  // Figures that appear later (an output that Thebe's kernel writes into the page) are drawn too.
  function watch() {
    init();
    if (window.matchMedia) {
      const print = window.matchMedia("print");
      const follow = (e) => setPrinting(e.matches);
      if (print.addEventListener) print.addEventListener("change", follow); else if (print.addListener) print.addListener(follow);
    }
    window.addEventListener("beforeprint", () => setPrinting(true));
    window.addEventListener("afterprint", () => setPrinting(false));
    if (!window.MutationObserver) return;
    let pending = false;
    new MutationObserver(() => {
      if (pending) return;
      pending = true;
      setTimeout(() => { pending = false; init(); }, 50);
    }).observe(document.body, {childList: true, subtree: true});
  }

  window.probdrLive = {init, toyStep, toyStart, unlift, chunk: receiveChunk, spec: receiveSpec, loadAll, setPrinting,
    MIN_TEXT, MIN_PANEL_WIDTH};
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch);
  else watch();
})();
