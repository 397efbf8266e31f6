/* The probdr-lite book's own script, on every page (copied to vendor/probdr-site/ by tools/sphinx_local_assets.py).
 *
 * - Static figures: a figure that does not fit its column (it keeps its tick labels readable and scrolls
 *   sideways instead, see probdr-site.css) gets the class probdr-figure-scrolls, which shows the cue under it.
 * - Printing: figures that load lazily on screen are all loaded before the page is printed.
 * - The search page: the summaries of the results are cut from the pages' text, maths included as TeX; here
 *   each summary's cut-off formulas are dropped and the rest is typeset by the page's MathJax (Sphinx highlights
 *   the search words inside the TeX too, "\<span>kappa</span>", which MathJax cannot read: the summary is
 *   rebuilt with whole formulas as plain text and the highlights only around them).
 * - Keyboard: a table or formula that scrolls sideways can be reached with Tab (and is named), so that a keyboard
 *   can scroll it; every live figure has a skip link at the top of the page, after the theme's "Skip to main
 *   content", that takes the focus to the figure's first control.
 */
(function () {
  "use strict";

  // The most a formula's typeset maths may stick out of its box, in CSS pixels, and still fit (an italic overhang).
  const OVERHANG_PX = 12;

  function markScrolling() {
    document.querySelectorAll("figure.probdr-figure").forEach((fig) => {
      const box = fig.querySelector(".probdr-figure-scroll");
      if (box) fig.classList.toggle("probdr-figure-scrolls", box.scrollWidth > box.clientWidth + 1);
    });
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
  // one that fits is not (axe-core: scrollable-region-focusable). A formula that fits (its typeset maths, mjx-math,
  // within its box but for an italic overhang) does not scroll at all: the hidden MathML copy for screen readers
  // (mjx-assistive-mml, clipped to nothing but laid out at its own width) made nearly every formula a scroll
  // container, so a keyboard would have had to stop at each one.
  function focusScrolling() {
    document.querySelectorAll(".bd-content .cell_output table, .bd-content mjx-container, .bd-content div.math")
      .forEach((el) => {
        if (el.tagName === "MJX-CONTAINER" && el.clientWidth > 0) {
          const maths = el.querySelector("mjx-math");
          if (maths && maths.getBoundingClientRect().width <= el.clientWidth + OVERHANG_PX) {
            el.style.overflow = "visible";
            return;
          }
          el.style.overflow = "";
        }
        const over = el.scrollWidth - el.clientWidth;
        const scrolls = el.clientWidth > 0 && over > 1 && getComputedStyle(el).overflowX !== "visible";
        if (scrolls && !el.hasAttribute("tabindex")) {
          el.setAttribute("tabindex", "0");
          el.dataset.probdrScrolls = "1";
          if (el.tagName === "TABLE" && !el.querySelector("caption") && !el.getAttribute("aria-label")) {
            el.setAttribute("aria-label", "Table, scrolls sideways");
          }
        } else if (!scrolls && el.dataset.probdrScrolls) {
          el.removeAttribute("tabindex");
          delete el.dataset.probdrScrolls;
        }
      });
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
      const MJ = window.MathJax;
      if (fresh.length && MJ && MJ.typesetPromise) {
        (MJ.startup && MJ.startup.promise ? MJ.startup.promise : Promise.resolve())
          .then(() => MJ.typesetPromise(fresh))
          .catch((err) => console.warn("probdr-site: MathJax could not typeset a search summary", err));
      }
    };
    new MutationObserver(() => { if (!pending) pending = setTimeout(run, 60); })
      .observe(results, {childList: true, subtree: true});
  }

  // Printing: every figure on paper, also those the reader has not scrolled to (they load lazily on screen).
  function loadAllFigures() {
    document.querySelectorAll('img[loading="lazy"]').forEach((img) => { img.loading = "eager"; });
  }

  function start() {
    markScrolling();
    skipLinks();
    const MJ = window.MathJax;
    if (MJ && MJ.startup && MJ.startup.promise) MJ.startup.promise.then(focusScrolling);
    window.addEventListener("load", focusScrolling);
    window.addEventListener("resize", focusScrolling);
    window.addEventListener("beforeprint", loadAllFigures);
    if (window.matchMedia) {
      const print = window.matchMedia("print");
      const follow = (e) => { if (e.matches) loadAllFigures(); };
      if (print.addEventListener) print.addEventListener("change", follow); else if (print.addListener) print.addListener(follow);
    }
    window.addEventListener("resize", markScrolling);
    window.addEventListener("load", markScrolling);
    const results = document.getElementById("search-results");
    if (results) typesetSearch(results);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
