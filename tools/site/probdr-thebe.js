/* Live Code (the rocket menu's "Live Code"): this book's own launch of Thebe 0.9.
 *
 * tools/sphinx_local_assets.py replaces sphinx-thebe's initThebe with a small inline script that loads this file
 * on the first click and calls probdrLiveCode.launch(urls) on every click; urls are the site's own copies of
 * Thebe, its stylesheet, require.js, marked and MathJax, relative to the page. Nothing but the kernel's server
 * (mybinder.org, or the server a page's text/x-thebe-config names) is reached, and only after the click.
 *
 * What it does differently from sphinx-thebe 0.3 + thebelab.bootstrap():
 *
 * - It connects first and changes the page afterwards. Thebe's bootstrap turns every cell into an editor, then
 *   connects; when the server is down the reader is left with editors whose run buttons do nothing, and a
 *   second click wraps the editors in editors. Here the server is reached and a kernel started before any
 *   cell is touched; a failure leaves the page as it was and the next click simply tries again.
 * - One kernel per chapter: the session's path is the chapter's notebook (book/<page>.ipynb), not the folder
 *   that sphinx-thebe gives every page (the Jupyter server hands out one kernel per session path, so every
 *   chapter shared one, and a restart in one tab broke the others).
 * - "restart" and "restart & run all" restart the kernel for real (Thebe 0.9's "restart & run all" only runs
 *   all), and every execution (run, run all, Shift+Enter) waits until a restart in progress has finished, so
 *   that no request is lost in the restart.
 * - Markdown outputs (IPython's display(Markdown(...))) are rendered: Thebe's output renderer has no Markdown
 *   parser and shows them as source. marked (from npm, served by the site) makes the HTML and the site's
 *   MathJax 3, loaded at that moment (window.probdrMaths, probdr-site.js), typesets the maths, which JupyterLab's
 *   renderer keeps away from the parser.
 * - The launch button says what is happening and where (mybinder.org or the Jupyter server at host:port),
 *   stops its spinner when the kernel is ready or the launch failed, and wraps its text.
 */
(function () {
  "use strict";
  if (window.probdrLiveCode) return;

  var urls = {};
  var phase = "idle"; // "loading" | "launching" | "ready" | "failed"
  var abs = function (u) { return new URL(u, document.baseURI).href; };
  var loaded = {};

  function loadScript(key) {
    if (!loaded[key]) {
      loaded[key] = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = abs(urls[key]);
        script.addEventListener("load", resolve);
        script.addEventListener("error", function () {
          delete loaded[key];
          script.remove();
          reject(new Error("could not load " + urls[key]));
        });
        document.head.appendChild(script);
      });
    }
    return loaded[key];
  }

  // ---------------------------------------------------------------------------------------------------------
  // The launch button

  var SPINNER = '<div class="spinner" aria-hidden="true"><div class="rect1"></div><div class="rect2"></div>' +
    '<div class="rect3"></div><div class="rect4"></div></div>';

  function show(state, text) {
    document.querySelectorAll(".thebe-launch-button").forEach(function (button) {
      button.classList.remove("probdr-live-launching", "probdr-live-ready", "probdr-live-failed",
                              "thebe-launch-failed", "thebe-status-ready");
      button.classList.add("probdr-live-button", "probdr-live-" + state);
      if (state === "failed") button.classList.add("thebe-launch-failed");
      if (state === "ready") button.classList.add("thebe-status-ready");
      button.innerHTML = (state === "launching" ? SPINNER : "") + '<span class="loading-text"></span>';
      button.querySelector(".loading-text").textContent = text;
      button.setAttribute("role", "status");
      button.setAttribute("aria-live", "polite");
      button.setAttribute("aria-busy", state === "launching" ? "true" : "false");
      // a failed launch is retried from the rocket menu's "Live Code"; the status line itself does nothing
      button.disabled = false;
      button.onclick = state === "failed" ? function () { launch(urls); } : null;
      button.title = state === "failed" ? "Try again" : "";
    });
    document.body.setAttribute("data-thebe-kernel", state);
    // Live Code runs the page's code: a cell whose source the page folds (a chapter's imports) is unfolded, so that
    // the reader sees what will run and its run button is there to press (inside a closed <details> it is not)
    if (state !== "failed") {
      document.querySelectorAll("div.cell > details.above-input").forEach(function (d) { d.open = true; });
    }
  }

  function hostOf(url, fallback) {
    try { return new URL(url).host || fallback; } catch (e) { return fallback; }
  }

  /** Where the kernel runs, in words: "mybinder.org" or "the Jupyter server at 127.0.0.1:8888". */
  function where(options) {
    if (options.useBinder) return hostOf((options.binderOptions || {}).binderUrl || "https://mybinder.org", "Binder");
    return "the Jupyter server at " + hostOf((options.serverSettings || {}).baseUrl || "http://localhost:8888",
                                             "localhost:8888");
  }

  // ---------------------------------------------------------------------------------------------------------
  // Once per page: Thebe's stylesheet, editors as tall as their code, no CDN

  var fontAwesome4 = /<link\b[^>]*\bhref="https?:\/\/maxcdn\.bootstrapcdn\.com\/font-awesome\/[^"]*"[^>]*>\s*/g;
  var shimmed = false;

  function shims() {
    if (shimmed) return;
    shimmed = true;
    var css = document.createElement("link");
    css.rel = "stylesheet"; css.href = abs(urls.css);
    document.head.appendChild(css);
    // the CodeMirror stylesheet inside Thebe's bundle, injected after this one, sets 300 px: outrank it
    var fit = document.createElement("style");
    fit.textContent = ".thebe-cell .CodeMirror, .thebelab-cell .CodeMirror { height: auto; }";
    document.head.appendChild(fit);
    // Thebe's widget manager fetches require.js from cdnjs before any widget renders: answer with the site's
    var fetch0 = window.fetch;
    window.fetch = function (input, init) {
      var url = typeof input === "string" ? input : (input && input.url) || "";
      if (/^https:\/\/cdnjs\.cloudflare\.com\/ajax\/libs\/require\.js\/[^/]+\/require(\.min)?\.js$/.test(url)) {
        input = abs(urls.requirejs);
      }
      return fetch0.call(this, input, init);
    };
    // matplotlib's animation outputs link Font Awesome 4.4 from a CDN; the site's Font Awesome 6 draws the icons
    var inner = Object.getOwnPropertyDescriptor(Element.prototype, "innerHTML");
    Object.defineProperty(Element.prototype, "innerHTML", {
      configurable: true, get: inner.get,
      set: function (html) { inner.set.call(this, typeof html === "string" ? html.replace(fontAwesome4, "") : html); }
    });
  }

  // ---------------------------------------------------------------------------------------------------------
  // Markdown outputs: marked for the Markdown, the site's MathJax 3 for the maths

  var marked = null;

  function loadMarked() {
    return loadScript("marked").then(function () {
      if (window.marked && window.marked.parse) return window.marked;
      // marked's UMD bundle registers itself as the AMD module "marked" where require.js is on the page
      return new Promise(function (resolve, reject) { window.require(["marked"], resolve, reject); });
    }).then(function (m) { marked = m; });
  }

  var mathjax = null;

  // The site's MathJax, loaded only now: probdr-site.js's loader (the page's own maths was typeset when the book was
  // built, so no MathJax runs before a Markdown output needs it).
  function loadMathJax() {
    if (window.probdrMaths) return window.probdrMaths.load();
    if (window.MathJax && window.MathJax.typesetPromise) return window.MathJax.startup.promise;
    if (!mathjax) {
      if (!window.MathJax) window.MathJax = {};
      mathjax = loadScript("mathjax").then(function () { return window.MathJax.startup.promise; });
    }
    return mathjax;
  }

  // the delimiters that JupyterLab's removeMath keeps away from the Markdown parser and puts back as text
  var MATH = /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\begin\{(\w+\*?)\}([\s\S]+?)\\end\{\3\}|\$((?:\\\$|[^$])+?)\$|\\\(([\s\S]+?)\\\)/g;
  var typesetting = Promise.resolve();

  /** Wrap the maths of a rendered Markdown output as Sphinx does (span/div.math with \( \) or \[ \]), then
   *  typeset it with the site's MathJax. Safe to call twice on one node (JupyterLab may). */
  function typesetMarkdown(node) {
    if (!node || !node.classList || !node.classList.contains("jp-RenderedMarkdown")) return;
    var texts = [], walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT, {
      acceptNode: function (t) {
        return t.parentElement.closest("code, pre, .math, mjx-container") ? NodeFilter.FILTER_REJECT
          : NodeFilter.FILTER_ACCEPT;
      }
    });
    while (walker.nextNode()) texts.push(walker.currentNode);
    var found = false;
    texts.forEach(function (t) {
      var text = t.nodeValue, last = 0, m, frag = document.createDocumentFragment();
      MATH.lastIndex = 0;
      while ((m = MATH.exec(text))) {
        var display = m[1] !== undefined || m[2] !== undefined || m[3] !== undefined;
        var tex = m[1] !== undefined ? m[1] : m[2] !== undefined ? m[2] : m[3] !== undefined ? m[0]
          : m[5] !== undefined ? m[5] : m[6];
        frag.appendChild(document.createTextNode(text.slice(last, m.index)));
        var el = document.createElement(display ? "div" : "span");
        el.className = "math notranslate nohighlight";
        el.textContent = display ? "\\[" + tex + "\\]" : "\\(" + tex + "\\)";
        frag.appendChild(el);
        last = MATH.lastIndex;
        found = true;
      }
      if (last) {
        frag.appendChild(document.createTextNode(text.slice(last)));
        t.parentNode.replaceChild(frag, t);
      }
    });
    node.querySelectorAll("table").forEach(function (table) { table.classList.add("table"); });
    if (!found) return;
    typesetting = typesetting.then(loadMathJax).then(function () { return window.MathJax.typesetPromise([node]); })
      .catch(function (err) { console.warn("Live Code: MathJax could not typeset a Markdown output", err); });
  }

  function renderMarkdown(rendermime) {
    rendermime.markdownParser = {
      render: function (source) { return Promise.resolve(marked.parse(source, {gfm: true, async: false})); }
    };
    rendermime.latexTypesetter = {typeset: typesetMarkdown};
  }

  // ---------------------------------------------------------------------------------------------------------
  // The cells, once a kernel is there

  /** An empty output slot after every input that has none: Thebe pairs the n-th input with the n-th output. */
  function pairOutputs() {
    document.querySelectorAll(thebe_selector).forEach(function (cell) {
      var input = cell.querySelector("[data-executable]");
      if (input && !cell.querySelector("[data-output]")) {
        var out = document.createElement("div");
        out.className = "cell_output";
        out.setAttribute("data-output", "");
        input.insertAdjacentElement("afterend", out);
      }
    });
  }

  /** Restart for real, and make every execution wait for a restart in progress. */
  function wireKernel(notebook, session) {
    var restarting = null;
    var settled = function () { return restarting ? restarting.catch(function () {}) : Promise.resolve(); };
    var restart = function () {
      if (!restarting) {
        // a restart requested while the kernel's first connection is still being set up loses the runs that
        // follow it (the server replaces the half-open connection), so it waits for the kernel's first answer
        restarting = Promise.resolve(session.kernel.info).then(function () { return session.restart(); })
          .then(function () { return session.kernel.requestKernelInfo(); })
          .finally(function () { restarting = null; });
      }
      return restarting;
    };
    notebook.cells.forEach(function (cell) {
      var execute = cell.execute.bind(cell);
      cell.execute = function (source) { return settled().then(function () { return execute(source); }); };
    });
    var all = function (busy) {
      notebook.cells.forEach(function (c) { (busy ? thebelab.setButtonsBusy : thebelab.clearButtonsBusy)(c.id); });
    };
    var guard = function (work) {
      return function () {
        all(true);
        return work().catch(function (err) { console.warn("Live Code:", err); }).then(function () { all(false); });
      };
    };
    document.querySelectorAll(".thebe-cell .thebe-restart-button").forEach(function (b) {
      b.onclick = guard(restart);
    });
    document.querySelectorAll(".thebe-cell .thebe-restartall-button").forEach(function (b) {
      b.onclick = guard(function () { return restart().then(function () { return notebook.executeAll(); }); });
    });
    return restart;
  }

  function render(options, config, rendermime, session) {
    modifyDOMForThebe(); // sphinx-thebe: marks each cell's input data-executable and its output data-output
    pairOutputs();
    var items = thebelab.findCells(options.selector || "[data-executable]", options.outputSelector || "[data-output]");
    var blocks = items.map(function (item) {
      return {id: item.id, source: (item.placeholders.source.textContent || "").trim()};
    });
    var notebook = window.thebeCore.api.setupNotebookFromBlocks(blocks, config, rendermime);
    thebelab.renderAllCells(options, notebook, items);
    notebook.attachSession(session);
    window.thebe.notebook = notebook;
    window.thebe.session = session;
    window.thebe.restart = wireKernel(notebook, session);
    // cells tagged thebe-init run as soon as the kernel is there (as sphinx-thebe does)
    document.querySelectorAll(".thebe-init .thebe-run-button, .tag_thebe-init .thebe-run-button").forEach(
      function (b) { b.click(); });
  }

  // ---------------------------------------------------------------------------------------------------------
  // The launch

  /** The chapter's notebook, the session's path: book/transformer_block.ipynb for book/transformer_block.html. */
  function notebookPath(folder) {
    var dir = String(folder || ".").replace(/^\.\/?/, "").replace(/\/+$/, "");
    return (dir ? dir + "/" : "") + urls.notebook;
  }

  function start() {
    var page = thebelab.getPageConfig() || {};
    var binder = page.useBinder !== false;
    var kernel = page.kernelOptions || {};
    var options = thebelab.mergeOptions({
      requestKernel: true, useBinder: binder,
      kernelOptions: {kernelName: kernel.kernelName || kernel.name || "python3", path: notebookPath(kernel.path)}
    });
    var place = where(options);
    var failure = function (err) {
      return Object.assign(new Error(String((err && err.message) || err)), {place: place, binder: binder});
    };
    if (binder && navigator.onLine === false) return Promise.reject(failure("the browser is offline"));
    var config = window.thebeCore.api.makeConfiguration(options, thebelab.events);
    var server = new window.thebeCore.module.ThebeServer(config);
    var off = thebelab.on("status", function (evt, data) {
      if (phase === "launching" && data && data.status && /^(server|session)$/.test(String(data.subject))) {
        show("launching", "Starting a kernel on " + place + ": " + data.status + "…");
      }
    });
    show("launching", "Starting a kernel on " + place + "…");
    var connecting = binder ? server.connectToServerViaBinder() : server.connectToJupyterServer();
    // Thebe rejects server.ready when the server does not answer; a connection that throws fails the launch too
    var thrown = Promise.resolve(connecting).then(function () { return new Promise(function () {}); });
    var rendermime = window.thebeCore.api.makeRenderMimeRegistry(config.mathjax);
    renderMarkdown(rendermime);
    return Promise.race([server.ready, thrown]).then(function () {
      return server.startNewSession(rendermime, config.kernels);
    }).then(function (session) {
      if (!session || !session.kernel) throw new Error("the server started no kernel");
      // ready once the kernel has answered (its kernel_info reply), not when the server has started it
      return Promise.resolve(session.kernel.info).then(function () { return session; });
    }).then(function (session) {
      window.thebe.server = server;
      render(options, config, rendermime, session);
      return place;
    }).catch(function (err) {
      try { server.dispose(); } catch (e) { /* nothing left to close */ }
      throw failure(err);
    }).finally(function () { if (typeof off === "function") off(); });
  }

  function launch(given) {
    urls = given || urls;
    if (phase === "loading" || phase === "launching" || phase === "ready") return;
    phase = "loading";
    show("launching", "Loading Live Code…");
    var place = null;
    Promise.all([loadScript("thebe"), loadMarked()]).then(function () {
      shims();
      phase = "launching";
      return start();
    }).then(function (at) {
      phase = "ready";
      show("ready", "Live Code is on: a kernel on " + at + ". Run a cell with its run button or Shift+Enter.");
    }, function (err) {
      console.warn("Live Code did not start:", err);
      phase = "failed";
      place = err && err.place;
      show("failed", place
        ? "Could not start a live kernel on " + place + (err.binder ? " (no connection, or no room there now?)"
          : " (is it running, and does it let this site in?)") + ". The page works as before; click Live Code " +
          "to try again."
        : "Could not load Live Code from this site (" + ((err && err.message) || err) + "). Click Live Code to " +
          "try again.");
    });
  }

  window.probdrLiveCode = {launch: launch, get phase() { return phase; }};
})();
