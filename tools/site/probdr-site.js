/* The probdr-lite book's own script, on every page (copied to vendor/probdr-site/ by tools/sphinx_local_assets.py).
 *
 * - Static figures: a figure that does not fit its column (it keeps its tick labels readable and scrolls
 *   sideways instead, see probdr-site.css) gets the class probdr-figure-scrolls, which shows the cue under it.
 * - Printing: figures that load lazily on screen are all loaded before the page is printed.
 * - The search page: the summaries of the results are cut from the pages' text, maths included as TeX; here
 *   each summary's cut-off formulas are dropped and the rest is typeset by the page's MathJax.
 */
(function () {
  "use strict";

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

  function typesetSearch(results) {
    let pending = null;
    const run = () => {
      pending = null;
      const fresh = Array.from(results.querySelectorAll("p.context")).filter((p) => !p.dataset.probdrMaths);
      fresh.forEach((p) => {
        p.dataset.probdrMaths = "1";
        const whole = wholeFormulas(p.textContent);  // (rewriting the text drops its highlights: only when needed)
        if (whole !== p.textContent) p.textContent = whole;
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
