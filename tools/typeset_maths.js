/* Typeset the book's maths once, when the book is built: TeX in, SVG with assistive MathML out.
 *
 *     node tools/typeset_maths.js IN.json OUT.json
 *
 * tools/sphinx_local_assets.py calls it once per build, at the end, with every formula of every page:
 *
 *     IN:  {"pages": [{"name": "book/intro.html", "formulas": [{"tex": "\\kappa = 30", "display": false}, ...]}, ...]}
 *     OUT: {"css": "...", "pages": [{"html": ["<mjx-container ...>", ...], "defs": "<svg ...>", "errors": [...]}]}
 *
 * It runs MathJax 3.2.2 (npm's mathjax-full, the same release as the MathJax the site loads for maths that appears
 * later, so a formula looks the same either way) with the TeX input and the SVG output:
 *
 * - each page is its own MathJax document (a macro defined on one page does not leak into another) with a global
 *   font cache: every glyph the page uses is one <path> in a hidden <svg> ("defs") that each formula's <use>
 *   elements point at, so a glyph used a hundred times is sent once. The SVG is filled with currentColor (dark mode
 *   follows the text colour), sized in ex (it matches the surrounding text's x-height as MathJax's own page
 *   typesetting does) and needs no font;
 * - the SVG is hidden from assistive technology (aria-hidden) and followed by MathJax's assistive MathML, which a
 *   screen reader reads; that MathML carries the TeX source as <annotation encoding="application/x-tex">, from
 *   which the site's copy handler (probdr-site.js) and the tools that read the built pages
 *   (tools/page_numbers.py, tools/prose_tables.py, tools/page_words.py) take the formula's source;
 * - the TeX packages are those of MathJax's tex-chtml component and what its autoload would fetch, without
 *   "noundefined": an unknown macro is an error here, and every error is reported (the build fails on it) instead
 *   of being drawn in red on the page.
 */
"use strict";

const fs = require("fs");
const {mathjax} = require("mathjax-full/js/mathjax.js");
const {TeX} = require("mathjax-full/js/input/tex.js");
const {SVG} = require("mathjax-full/js/output/svg.js");
const {liteAdaptor} = require("mathjax-full/js/adaptors/liteAdaptor.js");
const {RegisterHTMLHandler} = require("mathjax-full/js/handlers/html.js");
const {AssistiveMmlHandler} = require("mathjax-full/js/a11y/assistive-mml.js");
require("mathjax-full/js/input/tex/AllPackages.js");  // registers every package's configuration

// tex-chtml's own packages (base, ams, newcommand, require's and configmacros' jobs done here) and those its autoload
// would load on first use of one of their macros; "noundefined" is left out so that a typo fails the build.
const PACKAGES = ["base", "ams", "newcommand", "configmacros", "action", "amscd", "bbox", "boldsymbol", "braket",
  "cancel", "cases", "centernot", "color", "colortbl", "empheq", "enclose", "extpfeil", "gensymb", "html",
  "mathtools", "mhchem", "upgreek", "unicode", "verb"];

const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));

function escapeText(s) {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

// The assistive MathML gets the TeX source: <math><semantics><mrow>...</mrow><annotation .../></semantics></math>.
function annotate(html, tex) {
  const open = html.indexOf("<math"), close = html.lastIndexOf("</math>");
  if (open < 0 || close < 0) throw new Error("no assistive MathML in the output for " + tex);
  const start = html.indexOf(">", open) + 1;
  return html.slice(0, start) + "<semantics><mrow>" + html.slice(start, close) + "</mrow>" +
    '<annotation encoding="application/x-tex">' + escapeText(tex) + "</annotation></semantics>" + html.slice(close);
}

function typesetPage(page) {
  const errors = [];
  const tex = new TeX({
    packages: PACKAGES,
    formatError(jax, err) {
      errors.push(err.message);
      return jax.formatError(err);
    },
  });
  const svg = new SVG({fontCache: "global"});
  const doc = mathjax.document("", {InputJax: tex, OutputJax: svg});
  const html = page.formulas.map((f) => {
    const before = errors.length;
    const node = doc.convert(f.tex, {display: !!f.display, em: 16, ex: 8, containerWidth: 720});
    for (let k = before; k < errors.length; k++) errors[k] = errors[k] + " in " + (f.display ? "\\[" : "\\(") + f.tex
      + (f.display ? "\\]" : "\\)");
    return annotate(adaptor.outerHTML(node), f.tex);
  });
  const cache = svg.pageElements(doc);
  return {html, defs: cache ? adaptor.outerHTML(cache) : "", errors, css: adaptor.textContent(svg.styleSheet(doc))};
}

function main() {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) {
    console.error("usage: node tools/typeset_maths.js IN.json OUT.json");
    process.exit(2);
  }
  const pages = JSON.parse(fs.readFileSync(input, "utf8")).pages;
  let css = "";
  const out = pages.map((page) => {
    const done = typesetPage(page);
    css = css || done.css;
    return {html: done.html, defs: done.defs, errors: done.errors};
  });
  fs.writeFileSync(output, JSON.stringify({css, pages: out}));
}

main();
