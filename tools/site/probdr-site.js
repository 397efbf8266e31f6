/* The probdr-lite book's own script, on every page (copied to vendor/probdr-site/ by tools/sphinx_local_assets.py).
 *
 * - Static figures: a figure that does not fit its column (it keeps its tick labels readable and scrolls
 *   sideways instead, see probdr-site.css) gets the class probdr-figure-scrolls, which shows the cue under it.
 * - Printing: figures that load lazily on screen are all loaded before the page is printed, each from its PNG
 *   (the sharpest source; on screen the browser picks a WebP sized for the screen from its srcset).
 * - Scrub figures (matplotlib's frames behind a range control): the page loads a frame when it is shown; once the
 *   first one is in (the figure is near), the others are fetched too, so that moving the control is immediate.
 * - Maths is typeset when the book is built (SVG with MathJax's assistive MathML, the TeX kept in an annotation):
 *   no MathJax runs when a page opens. Copying a selection that holds formulas copies each as its TeX ($...$,
 *   $$...$$). Maths that appears later is typeset by MathJax, which window.probdrMaths loads then, once, from the
 *   site (the script tag's data-mathjax): the search page's summaries, Live Code's outputs, a live figure's caption
 *   shown outside the book's pages.
 * - The live figures: on a page that has one, live.js and live.css (data-live-js, data-live-css) load once the
 *   page has painted; live.js draws each figure when the reader comes near it.
 * - The search page: the summaries of the results are cut from the pages' text, maths included as TeX; here
 *   each summary's cut-off formulas are dropped and the rest is typeset (Sphinx highlights the search words
 *   inside the TeX too, "\<span>kappa</span>", which MathJax cannot read: the summary is rebuilt with whole
 *   formulas as plain text and the highlights only around them).
 * - Keyboard: a table or formula that scrolls sideways can be reached with Tab (and is named), so that a keyboard
 *   can scroll it; every live figure has a skip link at the top of the page, after the theme's "Skip to main
 *   content", that takes the focus to the figure's first control.
 */
(function () {
  "use strict";

  // The most a formula's typeset maths may stick out of its box, in CSS pixels, and still fit (an italic overhang).
  const OVERHANG_PX = 12;
  // This script's own tag: where the site keeps what loads later (data-mathjax, data-live-js, data-live-css).
  const SELF = document.currentScript;
  const asset = (name) => {
    const url = SELF && SELF.dataset[name];
    return url ? new URL(url, document.baseURI).href : null;
  };

  // ---------------------------------------------------------------------------------------------------------
  // Maths that appears after the page was built: MathJax, loaded once, from the site, only when asked

  let mathjax = null;

  function loadMathJax() {
    const MJ = window.MathJax;
    if (MJ && MJ.typesetPromise) return MJ.startup && MJ.startup.promise ? MJ.startup.promise : Promise.resolve();
    if (!mathjax) {
      const url = asset("mathjax");
      if (!url) return Promise.reject(new Error("this page names no MathJax to load"));
      // the configuration Sphinx wrote into pages with maths (_config.yml's mathjax3_config), or its one setting:
      // a formula is not a Tab stop; and MathJax typesets only what it is given, never the whole page again
      const config = MJ && !MJ.version ? MJ : {options: {menuOptions: {settings: {inTabOrder: false}}}};
      config.startup = Object.assign({}, config.startup, {typeset: false});
      window.MathJax = config;
      mathjax = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = url;
        script.async = true;
        script.addEventListener("load", () => resolve(window.MathJax.startup.promise));
        script.addEventListener("error", () => { mathjax = null; script.remove(); reject(new Error("could not load " + url)); });
        document.head.appendChild(script);
      });
    }
    return mathjax;
  }

  window.probdrMaths = {
    load: loadMathJax,
    typeset(nodes) {
      return loadMathJax().then(() => window.MathJax.typesetPromise(nodes));
    },
  };

  // The TeX of a typeset formula (tools/typeset_maths.js keeps it in the assistive MathML), with its delimiters.
  function texOf(container) {
    const note = container.querySelector('annotation[encoding="application/x-tex"]');
    if (!note) return null;
    const display = container.getAttribute("display") === "true";
    return display ? "$$" + note.textContent + "$$" : "$" + note.textContent + "$";
  }

  // Copying: each whole formula in the selection as its TeX; a selection inside one formula as that formula.
  function copyAsTeX(e) {
    const sel = window.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount || !e.clipboardData) return;
    const range = sel.getRangeAt(0);
    const start = range.commonAncestorContainer;
    const inside = (start.nodeType === 1 ? start : start.parentElement || document.body).closest("mjx-container");
    let text, markup;
    if (inside) {
      text = texOf(inside);
      markup = text;
    } else {
      const frag = range.cloneContents();
      const found = frag.querySelectorAll("mjx-container");
      if (!found.length) return;
      found.forEach((m) => { const tex = texOf(m); if (tex !== null) m.replaceWith(document.createTextNode(tex)); });
      const box = document.createElement("div");
      box.appendChild(frag);
      text = box.textContent;
      markup = box.innerHTML;
    }
    if (text === null) return;
    e.clipboardData.setData("text/plain", text);
    e.clipboardData.setData("text/html", markup);
    e.preventDefault();
  }

  // ---------------------------------------------------------------------------------------------------------
  // The live figures: their script and stylesheet once the page has painted

  function loadLive() {
    if (!document.querySelector("div.probdr-live") || window.probdrLive) return;
    const css = asset("liveCss"), js = asset("liveJs");
    if (!css || !js) return;
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = css;
    document.head.appendChild(link);
    const script = document.createElement("script");
    script.src = js;
    script.async = true;
    document.head.appendChild(script);
  }

  function afterPaint(fn) {
    const next = () => requestAnimationFrame(() => setTimeout(fn, 0));
    if (document.readyState === "complete") next();
    else window.addEventListener("load", next, {once: true});
  }

  // Scrub figures: the other frames once the first is in (data-probdr-frames, written when the book was built).
  function scrubFrames() {
    document.querySelectorAll("img[data-probdr-frames]").forEach((img) => {
      const fetchAll = () => {
        img.loading = "eager";  // the figure has been near: a frame asked for now shows at once, wherever it is
        (img.dataset.probdrFrames || "").split(" ").filter(Boolean).forEach((url) => { new Image().src = url; });
      };
      if (img.complete && img.naturalWidth) fetchAll();
      else img.addEventListener("load", fetchAll, {once: true});
    });
  }

  // Every read of the layout first, then every write: one layout for all the figures, not one each.
  function markScrolling() {
    const figs = Array.from(document.querySelectorAll("figure.probdr-figure"));
    const wide = figs.map((fig) => {
      const box = fig.querySelector(".probdr-figure-scroll");
      return box ? box.scrollWidth > box.clientWidth + 1 : null;
    });
    figs.forEach((fig, k) => { if (wide[k] !== null) fig.classList.toggle("probdr-figure-scrolls", wide[k]); });
  }

  // A summary is 240 characters of a page's text: a formula can be cut at either end. Keep whole formulas only.
  function wholeFormulas(text) {
    const open = /\\\(|\\\[/g, close = /\\\)|\\\]/g;
    let firstOpen = text.search(open), firstClose = text.search(close);
    if (firstClose >= 0 && (firstOpen < 0 || firstClose < firstOpen)) text = "…" + text.slice(firstClose + 2);
    const lastOpen = Math.max(text.lastIndexOf("\\("), text.lastIndexOf("\\["));
    const lastClose = Math.max(text.lastIndexOf("\\)"), text.lastIndexOf("\\]"));
    if (lastOpen > lastClose) text = text.slice(0, lastOpen) + "…";
    return text.replace(/\\\[/g, "\\(").replace(/\\\]/g, "\\)");  // display maths, inline in a summary
  }

  // The words searched for (as Sphinx's highlighting takes them from the address), lower case.
  function searchWords() {
    const q = new URLSearchParams(window.location.search).get("q") || "";
    return q.toLowerCase().split(/\s+/).filter((w) => w.length > 1);
  }

  // A summary as text with its formulas \(...\) whole (for MathJax) and the search words highlighted outside them.
  function rebuild(p, text) {
    const words = searchWords().map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    const mark = words.length ? new RegExp("(" + words.join("|") + ")", "gi") : null;
    p.textContent = "";
    text.split(/(\\\(.*?\\\))/).forEach((part, k) => {
      if (k % 2 || !mark) { p.appendChild(document.createTextNode(part)); return; }
      part.split(mark).forEach((bit, j) => {
        if (j % 2) {
          const span = document.createElement("span");
          span.className = "highlighted";
          span.textContent = bit;
          p.appendChild(span);
        } else if (bit) p.appendChild(document.createTextNode(bit));
      });
    });
  }

  // A table or formula that scrolls sideways is a Tab stop with a name (a keyboard scrolls it with the arrow keys);
  // one that fits is not (axe-core: scrollable-region-focusable). A formula that fits (its typeset maths, the SVG or
  // MathJax's mjx-math, within its box but for an italic overhang) does not scroll at all: the hidden MathML copy for screen readers
  // (mjx-assistive-mml, clipped to nothing but laid out at its own width) made nearly every formula a scroll
  // container, so a keyboard would have had to stop at each one.
  // In small batches, each a task of its own (a long task would delay the reader's first tap), reads before writes
  // within each (one layout per batch): the paragraphs far down the page are laid out only for this (probdr-site.css).
  // `done` is called once every batch has run.
  function focusScrolling(done) {
    const all = Array.from(document.querySelectorAll(
      ".bd-content .cell_output table, .bd-content mjx-container, .bd-content div.math"));
    const BATCH = 24;
    let k = 0;
    const step = () => {
      const batch = all.slice(k, k + BATCH);
      k += batch.length;
      // 1. Which typeset formula fits its box (read), then let those overhang it and the others scroll (write).
      const boxes = batch.filter((el) => el.tagName === "MJX-CONTAINER");
      const fits = boxes.map((el) => {
        if (el.clientWidth <= 0) return null;
        const maths = el.querySelector(":scope > mjx-math, :scope > svg");
        return !!maths && maths.getBoundingClientRect().width <= el.clientWidth + OVERHANG_PX;
      });
      boxes.forEach((el, j) => { if (fits[j] !== null) el.style.overflow = fits[j] ? "visible" : ""; });
      // 2. Which table or formula scrolls sideways (read), then make it a named Tab stop or not (write).
      const scrolls = batch.map((el) => el.clientWidth > 0 && el.scrollWidth - el.clientWidth > 1
                                        && getComputedStyle(el).overflowX !== "visible");
      batch.forEach((el, j) => {
        if (scrolls[j] && !el.hasAttribute("tabindex")) {
          el.setAttribute("tabindex", "0");
          el.dataset.probdrScrolls = "1";
          if (el.tagName === "TABLE" && !el.querySelector("caption") && !el.getAttribute("aria-label")) {
            el.setAttribute("aria-label", "Table, scrolls sideways");
          }
        } else if (!scrolls[j] && el.dataset.probdrScrolls) {
          el.removeAttribute("tabindex");
          delete el.dataset.probdrScrolls;
        }
      });
      if (k < all.length) setTimeout(step, 0);
      else if (done) done();
    };
    step();
  }

  // In the theme's skip bar (#pst-skip-link, shown while a link in it has the focus), after "Skip to main content":
  // one link per live figure, to its first control.
  function skipLinks() {
    const figures = Array.from(document.querySelectorAll("div.probdr-live[id]"));
    const bar = document.getElementById("pst-skip-link");
    if (!figures.length || !bar) return;
    const headings = Array.from(document.querySelectorAll("article h1, article h2, article h3"));
    figures.forEach((fig, k) => {
      const link = document.createElement("a");
      link.className = "probdr-skip-live";
      link.href = "#" + fig.id;
      let heading = null;
      headings.forEach((h) => { if (h.compareDocumentPosition(fig) & Node.DOCUMENT_POSITION_FOLLOWING) heading = h; });
      const where = heading ? heading.textContent.replace(/[#¶]/g, "").trim() : "";
      link.textContent = "Skip to the live figure" + (figures.length > 1 ? " " + (k + 1) : "") + (where ? " (" + where + ")" : "");
      link.addEventListener("click", (e) => {
        const first = fig.querySelector("input, select, button");
        if (!first) return;
        e.preventDefault();
        fig.scrollIntoView({block: "start"});
        first.focus({preventScroll: true});
      });
      bar.appendChild(document.createTextNode(" "));
      bar.appendChild(link);
    });
  }

  // The summaries are cut from each page's text (Sphinx's Search.htmlToText): there, each formula typeset when the
  // book was built reads as its TeX, \(...\) or \[...\], as when the pages' maths was typeset in the browser, so
  // that a summary shows the formula and not its SVG's assistive MathML and annotation run together.
  function searchReadsTeX() {
    const S = typeof Search !== "undefined" ? Search : null;  // searchtools.js's const, a global binding
    if (!S || typeof S.htmlToText !== "function" || S.htmlToText.probdr) return;
    const original = S.htmlToText;
    const tex = (html) => html.replace(/<mjx-container\b([^>]*)>[\s\S]*?<\/mjx-container>/g, (m, attrs) => {
      const note = /<annotation encoding="application\/x-tex">([\s\S]*?)<\/annotation>/.exec(m);
      if (!note) return m;
      return /\bdisplay="true"/.test(attrs) ? "\\[" + note[1] + "\\]" : "\\(" + note[1] + "\\)";
    });
    S.htmlToText = function (html, anchor) { return original.call(this, tex(String(html)), anchor); };
    S.htmlToText.probdr = true;
  }

  function typesetSearch(results) {
    let pending = null;
    const run = () => {
      pending = null;
      const fresh = Array.from(results.querySelectorAll("p.context")).filter((p) => !p.dataset.probdrMaths);
      fresh.forEach((p) => {
        p.dataset.probdrMaths = "1";
        const whole = wholeFormulas(p.textContent);
        if (/\\\(/.test(whole)) rebuild(p, whole);
        else if (whole !== p.textContent) p.textContent = whole;
      });
      const maths = fresh.filter((p) => /\\\(/.test(p.textContent));
      if (maths.length) {
        window.probdrMaths.typeset(maths)
          .catch((err) => console.warn("probdr-site: MathJax could not typeset a search summary", err));
      }
    };
    new MutationObserver(() => { if (!pending) pending = setTimeout(run, 60); })
      .observe(results, {childList: true, subtree: true});
  }

  // Printing: every figure on paper, also those the reader has not scrolled to (they load lazily on screen), each
  // from its PNG, the sharpest source (srcset is put back after printing).
  function loadAllFigures() {
    document.querySelectorAll('img[loading="lazy"]').forEach((img) => { img.loading = "eager"; });
    document.querySelectorAll("img[srcset]").forEach((img) => {
      img.dataset.probdrSrcset = img.getAttribute("srcset");
      img.removeAttribute("srcset");
    });
  }

  function screenFigures() {
    document.querySelectorAll("img[data-probdr-srcset]").forEach((img) => {
      img.setAttribute("srcset", img.dataset.probdrSrcset);
      delete img.dataset.probdrSrcset;
    });
  }

  function start() {
    scrubFrames();
    document.addEventListener("copy", copyAsTeX);
    // What reads the layout waits until the page has painted, each in a task of its own (a long task delays the
    // reader's first tap): the figures' cues, the skip links, the Tab stops of what scrolls; then the live figures.
    afterPaint(() => {
      markScrolling();
      setTimeout(() => {
        skipLinks();
        setTimeout(() => {
          loadLive();
          focusScrolling(() => {
            document.documentElement.dataset.probdrSite = "ready";  // for the book's browser tests: all set up
          });
        }, 0);
      }, 0);
    });
    let resizing = null;  // a window being resized fires many events: measure once it has settled
    window.addEventListener("resize", () => {
      clearTimeout(resizing);
      resizing = setTimeout(() => { markScrolling(); focusScrolling(); }, 150);
    });
    window.addEventListener("beforeprint", loadAllFigures);
    window.addEventListener("afterprint", screenFigures);
    if (window.matchMedia) {
      const print = window.matchMedia("print");
      const follow = (e) => { if (e.matches) loadAllFigures(); else screenFigures(); };
      if (print.addEventListener) print.addEventListener("change", follow); else if (print.addListener) print.addListener(follow);
    }
    const results = document.getElementById("search-results");
    if (results) {
      searchReadsTeX();
      typesetSearch(results);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
