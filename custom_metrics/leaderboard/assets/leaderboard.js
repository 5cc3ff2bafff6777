/* The leaderboard pages' own script (deferred: it runs once the page is parsed, after
   DataTables' loader and plotly.js). What it does:
   - the cell renderers of the DataTables (text escaped, [shown, sort] numbers, links);
   - data loaded on demand: a tab's charts and long view, the document view's documents,
     each a small script file calling explainEval.loaded(name, value) (a page opened from
     disk may add a script, never fetch a file);
   - the index: tabs, the summary table (sort within rank groups, the Rank column following
     the sorted column, row filter, "hide runs on part of the data", column picker, "All
     columns" on a phone, metric definitions on click or key), the view switch, and the state
     of all of it in the URL fragment
     (#rule&sort=h1:asc&q=llama&limited=shown&view=long&cols=h2.h3&lsort=5:asc), restored on load;
   - charts: drawn when their tab first shows; on a narrow screen as horizontal bars, the
     legend sized to its entries;
   - sample pages: the search box and an opened document in the URL (#q=...&doc=...);
   - the document view: one document across every run that logged it;
   - labels for the filter boxes DataTables creates with a placeholder only. */
"use strict";

function explainEvalEscape(text) {
  const entities = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  return String(text).replace(/[&<>"']/g, (c) => entities[c]);
}

// Text cells: the data keeps the raw text (search and filters see what was written);
// wherever it is drawn (the table, the SearchPanes), it is escaped.
function explainEvalText(data, type) {
  if (data === null || data === undefined) return "";
  return type === "display" || type === "sp" ? explainEvalEscape(data) : data;
}

// Number cells: [shown, sort value] pairs (as itables sends floats); NaN sorts as missing.
function explainEvalNumber(data, type) {
  if (!Array.isArray(data)) return data === null || data === undefined ? "" : data;
  if (type === "sort" || type === "type") return data[1];
  return type === "display" || type === "sp" ? explainEvalEscape(data[0]) : data[0];
}

// Link cells: [text, relative href]; only page-relative links are written by the suite.
// Filtering sees the href too: a sample page finds a document's row by it.
function explainEvalLink(data, type) {
  if (!Array.isArray(data) || !data[1]) return data === null || data === undefined ? "" : String(data);
  if (type === "filter") return `${data[0]} ${data[1]}`;
  if (type !== "display") return data[0];
  return `<a href="${explainEvalEscape(data[1])}">${explainEvalEscape(data[0])}</a>`;
}

const NARROW = 560; // px: charts below this width draw horizontal bars
const EMPTY_STATE = () => ({ tab: "", sort: "", q: "", limited: "", view: "", cols: "", lsort: "" });

const explainEval = {
  state: EMPTY_STATE(),
  data: {},
  waiting: {},

  // --- data files ------------------------------------------------------------------
  loaded(name, value) {
    this.data[name] = value;
    (this.waiting[name] || []).forEach((resolve) => resolve(value));
    delete this.waiting[name];
  },

  require(name, src) {
    if (name in this.data) return Promise.resolve(this.data[name]);
    return new Promise((resolve, reject) => {
      const first = !this.waiting[name];
      (this.waiting[name] = this.waiting[name] || []).push(resolve);
      if (!first) return;
      const script = document.createElement("script");
      script.src = src;
      script.onerror = () => reject(new Error(`could not load ${src}`));
      document.head.appendChild(script);
    });
  },

  // HTML from a data file: inserted, its scripts (DataTables' init, chart JSON) made live.
  insert(container, markup) {
    container.innerHTML = markup;
    container.querySelectorAll("script").forEach((old) => {
      const script = document.createElement("script");
      for (const attribute of old.attributes) script.setAttribute(attribute.name, attribute.value);
      script.textContent = old.textContent;
      old.replaceWith(script);
    });
  },

  // The DataTables API of a table, once itables has drawn it.
  async tableApi(table) {
    const key = Object.keys(window).find((name) => name.startsWith("_itables_"));
    if (!key) return null;
    const { jQuery: $ } = await window[key];
    for (let tries = 0; tries < 200 && !table.classList.contains("dataTable"); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return table.classList.contains("dataTable") ? $(table).DataTable() : null;
  },

  // --- the URL -----------------------------------------------------------------------
  readHash() {
    const parts = location.hash.slice(1).split("&");
    const state = EMPTY_STATE();
    const decode = (text) => {
      try {
        return decodeURIComponent(text);
      } catch (error) {
        return text; // a hand-typed "%" that encodes nothing
      }
    };
    parts.forEach((part, i) => {
      const at = part.indexOf("=");
      if (at < 0 && i === 0) state.tab = decode(part);
      else if (at > 0) state[part.slice(0, at)] = decode(part.slice(at + 1));
    });
    return state;
  },

  // Only what would break the fragment is encoded: "h1:asc" stays readable.
  encode(value) {
    return String(value).replace(/[%&=#\s"<>]/g, encodeURIComponent);
  },

  writeHash() {
    const s = this.state;
    const parts = [s.tab];
    for (const key of ["sort", "q", "limited", "view", "cols", "lsort"]) if (s[key]) parts.push(`${key}=${this.encode(s[key])}`);
    history.replaceState(null, "", "#" + parts.join("&"));
  },

  panel(tab) {
    return document.getElementById("panel-" + tab);
  },

  showTab(tab) {
    const radio = document.getElementById("tab-" + tab);
    if (!radio) return false;
    radio.checked = true;
    this.drawCharts(this.panel(tab));
    return true;
  },

  // --- the summary table ---------------------------------------------------------------
  // Sort one summary table by a column, inside each rank group (tbody); the Rank column then
  // shows the ranks on that column (a score column) or on the main metric (rank, model).
  sortSummary(table, column, direction) {
    const heads = table.querySelectorAll("thead th");
    heads.forEach((th) => th.removeAttribute("aria-sort"));
    const head = table.querySelector(`thead th[data-col="${column}"]`);
    if (!head) return false;
    head.setAttribute("aria-sort", direction === "asc" ? "ascending" : "descending");
    const index = Array.from(heads).indexOf(head);
    const sign = direction === "asc" ? 1 : -1;
    const ranked = /^h\d+$/.test(column) ? column : table.querySelector("thead th.main")?.dataset.col;
    const rankHead = table.querySelector("thead th.rank button.sort");
    if (rankHead && ranked) {
      const label = table.querySelector(`thead th[data-col="${ranked}"] button.sort`);
      rankHead.textContent = label && ranked !== table.querySelector("thead th.main")?.dataset.col ? `Rank (${label.textContent})` : "Rank";
    }
    table.querySelectorAll("tbody").forEach((body) => {
      const rows = Array.from(body.querySelectorAll("tr:not(.group)"));
      rows.forEach((row) => {
        const source = ranked ? row.querySelector(`td.${ranked}`) : null;
        const cell = row.querySelector("td.rank");
        if (source && cell) {
          // A row without the main metric keeps its own rank (on the column it has, named).
          if (cell.dataset.own === undefined) cell.dataset.own = cell.textContent;
          const own = ranked === table.querySelector("thead th.main")?.dataset.col && !source.dataset.rank;
          cell.textContent = own ? cell.dataset.own : source.dataset.rank || "–";
          cell.dataset.sort = own ? "" : source.dataset.rankSort || "";
        }
      });
      const key = (row) => {
        const value = row.children[index].dataset.sort;
        return value === undefined || value === "" ? null : value;
      };
      rows.sort((a, b) => {
        const x = key(a);
        const y = key(b);
        if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1; // missing last
        const nx = Number(x);
        const ny = Number(y);
        const compared = Number.isNaN(nx) || Number.isNaN(ny) ? x.localeCompare(y) : nx - ny;
        return sign * compared;
      });
      rows.forEach((row) => body.appendChild(row));
    });
    return true;
  },

  filterSummary(panel) {
    const box = panel.querySelector(".row-filter");
    const hide = panel.querySelector(".hide-limited");
    const query = box ? box.value.trim().toLowerCase() : "";
    panel.classList.toggle("limited-hidden", !!(hide && hide.checked));
    panel.querySelectorAll("table.summary tbody tr:not(.group)").forEach((row) => {
      const name = row.querySelector("th.model").textContent.toLowerCase();
      row.hidden = query !== "" && !name.includes(query);
    });
  },

  // The column picker: hidden columns by id ("h2.h3"), applied to the table and its boxes.
  applyColumns(panel, hidden) {
    const table = panel.querySelector("table.summary");
    const off = new Set(hidden.split(".").filter(Boolean));
    panel.querySelectorAll(".column-toggle").forEach((toggle) => {
      toggle.checked = !off.has(toggle.value);
      if (table) table.querySelectorAll(`.${toggle.value}`).forEach((cell) => cell.classList.toggle("column-off", !toggle.checked));
    });
  },

  hiddenColumns(panel) {
    return Array.from(panel.querySelectorAll(".column-toggle")).filter((t) => !t.checked).map((t) => t.value).join(".");
  },

  setupSummary(panel) {
    const tab = panel.id.replace("panel-", "");
    const table = panel.querySelector("table.summary");
    panel.querySelectorAll(".views input[type=radio]").forEach((radio) => {
      radio.addEventListener("change", () => {
        this.showView(panel);
        this.update(tab, { view: radio.value === "long" ? "long" : "" });
      });
    });
    if (!table) return;
    table.querySelectorAll("thead button.sort").forEach((button) => {
      button.addEventListener("click", () => {
        const column = button.closest("th").dataset.col;
        const current = button.closest("th").getAttribute("aria-sort");
        const numeric = column !== "model";
        const direction = current === "descending" ? "asc" : current === "ascending" ? "desc" : numeric && column !== "rank" ? "desc" : "asc";
        this.sortSummary(table, column, direction);
        this.update(tab, { sort: `${column}:${direction}` });
      });
    });
    const box = panel.querySelector(".row-filter");
    if (box) box.addEventListener("input", () => { this.filterSummary(panel); this.update(tab, { q: box.value.trim() }); });
    const hide = panel.querySelector(".hide-limited");
    if (hide) {
      hide.addEventListener("change", () => {
        this.filterSummary(panel);
        const fallback = hide.dataset.default === "1";
        this.update(tab, { limited: hide.checked === fallback ? "" : hide.checked ? "hidden" : "shown" });
      });
    }
    panel.querySelectorAll(".column-toggle").forEach((toggle) => {
      toggle.addEventListener("change", () => {
        const hidden = this.hiddenColumns(panel);
        this.applyColumns(panel, hidden);
        this.update(tab, { cols: hidden });
      });
    });
    const more = panel.querySelector(".more-columns");
    if (more) {
      more.addEventListener("click", () => {
        const on = !table.classList.contains("all-columns");
        table.classList.toggle("all-columns", on);
        more.setAttribute("aria-pressed", String(on));
      });
    }
    const definition = panel.querySelector("p.definition");
    table.querySelectorAll("button.define").forEach((button) => {
      button.addEventListener("click", () => {
        const label = button.closest("th").querySelector("button.sort").textContent;
        const same = definition.dataset.shown === label;
        definition.textContent = same ? "" : `${label}: ${button.dataset.definition}`;
        definition.dataset.shown = same ? "" : label;
        button.setAttribute("aria-expanded", String(!same));
      });
    });
  },

  update(tab, changes) {
    if (this.state.tab !== tab) this.state = { ...EMPTY_STATE(), tab };
    Object.assign(this.state, changes);
    this.writeHash();
  },

  // The visible view of a tab: its charts drawn, its long view loaded once.
  showView(panel) {
    this.drawCharts(panel);
    const long = panel.querySelector(".views input[value=long]");
    if (long && long.checked) return this.loadLong(panel);
    return Promise.resolve();
  },

  loadLong(panel) {
    const place = panel.querySelector(".view-long");
    if (!place || !place.dataset.src) return Promise.resolve();
    if (!place.loading) {
      place.loading = this.require(place.dataset.load, place.dataset.src).then((markup) => {
        this.insert(place, markup);
        this.labelInputs(place);
        this.drawCharts(panel);
        this.watchLongSort(panel);
        place.querySelectorAll(".pair-picker").forEach((picker) => this.watchPairPicker(picker));
      });
    }
    return place.loading;
  },

  // The tests between two picked rows, from the earlier row's file (pair_shards.py), where
  // each is stored as earlier − later: picked the other way round, the sides are swapped.
  watchPairPicker(picker) {
    const a = picker.querySelector(".pair-a");
    const b = picker.querySelector(".pair-b");
    if (a.options.length > 1 && a.selectedIndex === b.selectedIndex) b.selectedIndex = 1;
    const show = () => {
      const [i, j] = [Number(a.value), Number(b.value)];
      const out = picker.querySelector(".pair-table");
      if (i === j) {
        out.textContent = "Pick two different rows.";
        return;
      }
      const [first, second] = [Math.min(i, j), Math.max(i, j)];
      const name = `pairs:${picker.dataset.key}:${first}`;
      this.require(name, `${picker.dataset.src}${first}.js`).then((shard) => {
        if (Number(a.value) !== i || Number(b.value) !== j) return; // picked again meanwhile
        out.innerHTML = this.pairTable(shard, shard.pairs[String(second)] || [], i > j);
      }, (error) => { out.textContent = String(error.message); });
    };
    a.addEventListener("change", show);
    b.addEventListener("change", show);
    show();
  },

  pairTable(shard, tests, swapped) {
    if (!tests.length) return "<p><em>These two rows logged no documents in common.</em></p>";
    const flip = (text) => (text === "+0.0000" || /nan/i.test(text) ? text : (text[0] === "+" ? "-" : "+") + text.slice(1));
    const interval = (text) => {
      const [low, high] = text.slice(1, -1).split(", ");
      return `[${flip(high)}, ${flip(low)}]`;
    };
    const head = ["Task", "Metric", "docs", "mean A", "mean B", "A − B", "95% CI", "Test", "p", "p (Holm)", "Family", "Significant"];
    const rows = tests.map(([outcome, docs, meanA, meanB, difference, ci, test, p, holm, family, significant]) => {
      const [task, metric] = shard.outcomes[outcome];
      const cells = swapped
        ? [task, metric, docs, meanB, meanA, flip(difference), ci ? interval(ci) : "", shard.tests[test], p, holm]
        : [task, metric, docs, meanA, meanB, difference, ci, shard.tests[test], p, holm];
      cells.push(`this pair (${family})`, significant ? "yes ✱" : "no");
      const cls = significant ? ' class="significant"' : "";
      return `<tr${cls}>${cells.map((cell) => `<td>${explainEvalEscape(cell)}</td>`).join("")}</tr>`;
    });
    const header = head.map((title) => `<th scope="col">${title}</th>`).join("");
    return `<table class="pair-tests"><thead><tr>${header}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
  },

  // The long table's sort in the URL (lsort=COLUMN:asc|desc), and restored from it.
  async watchLongSort(panel) {
    const tab = panel.id.replace("panel-", "");
    const table = panel.querySelector(`#table-${tab}`);
    if (!table) return;
    const api = await this.tableApi(table);
    if (!api) return;
    const wanted = this.state.tab === tab ? this.state.lsort : "";
    const [column, direction] = (wanted || "").split(":");
    if (column !== "" && column !== undefined && (direction === "asc" || direction === "desc")) api.order([[Number(column), direction]]).draw();
    api.on("order.dt", () => {
      const order = api.order();
      const first = order.length ? order[0] : null;
      const column = first ? (Array.isArray(first) ? first[0] : first.column) : null;
      const dir = first ? (Array.isArray(first) ? first[1] : first.dir) : null;
      if (column !== null && (dir === "asc" || dir === "desc")) this.update(tab, { lsort: `${column}:${dir}` });
    });
  },

  // Apply a state read from the URL: tab, view, row filter, limited toggle, sort, columns.
  restore(state) {
    if (!state.tab || !this.showTab(state.tab)) return;
    const panel = this.panel(state.tab);
    this.state = { ...EMPTY_STATE(), tab: state.tab };
    const view = panel.querySelector(`.views input[value="${state.view === "long" ? "long" : "summary"}"]`);
    if (view) {
      view.checked = true;
      this.state.view = state.view === "long" ? "long" : "";
    }
    const box = panel.querySelector(".row-filter");
    if (box) {
      box.value = state.q;
      this.state.q = state.q;
    }
    const hide = panel.querySelector(".hide-limited");
    if (hide) {
      const given = state.limited === "shown" || state.limited === "hidden";
      hide.checked = given ? state.limited === "hidden" : hide.dataset.default === "1";
      this.state.limited = given ? state.limited : "";
    }
    this.filterSummary(panel);
    this.applyColumns(panel, state.cols || "");
    this.state.cols = state.cols || "";
    this.state.lsort = state.lsort || "";
    const [column, direction] = state.sort.split(":");
    const table = panel.querySelector("table.summary");
    if (table && column && (direction === "asc" || direction === "desc") && this.sortSummary(table, column, direction)) {
      this.state.sort = state.sort;
    }
    this.showView(panel);
  },

  // --- charts --------------------------------------------------------------------------
  // Drawn after the page's load event, a chart per task, plotly.js itself loaded then (its 1.2 MB
  // take a few hundred ms to compile): plotly lays out a 300-run chart in seconds, and the
  // tables, tabs and links are usable meanwhile.
  drawCharts(panel) {
    if (!panel) return;
    if (document.readyState !== "complete") {
      window.addEventListener("load", () => setTimeout(() => this.drawCharts(panel)), { once: true });
      return;
    }
    const pending = Array.from(panel.querySelectorAll(".plot")).filter((target) => !target.dataset.drawn && target.offsetParent !== null);
    if (!pending.length) return;
    const key = panel.dataset.key;
    const inline = (target) => panel.querySelector(`script.chart-data[data-for="${target.id}"]`);
    const fromFile = pending.some((target) => target.dataset.chart && !inline(target));
    const ready = fromFile ? this.require(`charts:${key}`, `panels/${key}.charts.js`) : Promise.resolve({});
    Promise.all([ready, this.plotly()]).then(([figures]) => {
      pending.forEach((target) => setTimeout(() => {
        // Hidden again while the charts loaded (a view switched): drawn when it next shows.
        if (target.dataset.drawn || target.offsetParent === null || !target.clientWidth) return;
        const script = inline(target);
        const figure = script ? JSON.parse(script.textContent) : figures[target.dataset.chart];
        if (!figure) return;
        target.dataset.drawn = "1";
        const narrow = target.clientWidth < NARROW;
        const shown = narrow ? this.narrowFigure(figure) : figure;
        Plotly.newPlot(target, shown.data, shown.layout, shown.config);
      }));
    });
  },

  // plotly.js, from the page's <meta name="explain-eval-plotly">, added once when a chart is first drawn.
  plotly() {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (!this.plotlyLoading) {
      const meta = document.querySelector('meta[name="explain-eval-plotly"]');
      this.plotlyLoading = new Promise((resolve, reject) => {
        if (!meta) return reject(new Error("this page draws no charts"));
        const script = document.createElement("script");
        script.src = meta.content;
        script.onload = () => resolve(window.Plotly);
        script.onerror = () => reject(new Error(`could not load ${meta.content}`));
        document.head.appendChild(script);
      });
    }
    return this.plotlyLoading;
  },

  // Bars on a phone: horizontal (labels one per line on the left, never overlapping), the
  // legend below with a line per entry and the height grown to hold it.
  // A legend name in lines of about ``width`` characters (names are plotly's HTML dialect:
  // an entity such as &amp; is never cut).
  wrapName(name, width = 38) {
    const lines = [];
    let line = "";
    let length = 0;
    for (const token of name.match(/&[#\w]+;|\s+|[^\s&]+|&/g) || []) {
      const size = token.startsWith("&") && token.endsWith(";") ? 1 : token.length;
      if (/^\s+$/.test(token)) {
        if (length >= width) { lines.push(line); line = ""; length = 0; } else if (line) { line += " "; length += 1; }
        continue;
      }
      if (length + size > width && line) { lines.push(line.trimEnd()); line = ""; length = 0; }
      if (size > width) { // one word wider than the legend: cut it
        for (let i = 0; i < token.length; i += width) lines.push(token.slice(i, i + width));
        continue;
      }
      line += token;
      length += size;
    }
    if (line) lines.push(line);
    return lines.join("<br>");
  },

  narrowFigure(figure) {
    const bars = figure.data.filter((trace) => trace.type === "bar");
    if (!bars.length) return { ...figure, layout: { ...figure.layout, legend: { ...figure.layout.legend, font: { size: 10 } } } };
    const data = figure.data.map((trace) => {
      if (trace.type !== "bar") return trace;
      const flipped = { ...trace, orientation: "h", x: trace.y, y: trace.x, name: this.wrapName(trace.name) };
      if (trace.error_y) {
        flipped.error_x = trace.error_y;
        delete flipped.error_y;
      }
      return flipped;
    });
    const categories = bars[0].x.length;
    const layout = { ...figure.layout };
    const value = { ...figure.layout.yaxis, title: { text: figure.layout.yaxis.title?.text || "", font: { size: 11 } } };
    layout.xaxis = { ...value, side: "top" }; // its title above the bars, the legend alone below
    layout.yaxis = { ...figure.layout.xaxis, autorange: "reversed", automargin: true, tickfont: { size: 10 } };
    layout.bargap = 0.25;
    const legendLines = data.reduce((sum, trace) => sum + ((trace.name || "").split("<br>").length), 0);
    layout.height = 90 + categories * (bars.length * 9 + 22) + 15 * legendLines + 6 * bars.length;
    layout.margin = { l: 10, r: 30, t: 40, b: 10 };
    layout.legend = { orientation: "v", x: 0, xanchor: "left", y: -0.02, yanchor: "top", font: { size: 10 }, traceorder: "normal" };
    layout.font = { ...figure.layout.font, size: 10 };
    return { data, layout, config: figure.config };
  },

  // --- labels --------------------------------------------------------------------------
  // DataTables makes its filter boxes with a placeholder (or a title) only: give each a
  // label; and each table's page navigation a name of its own.
  labelInputs(root) {
    root.querySelectorAll("input:not([aria-label]), select:not([aria-label])").forEach((input) => {
      if (input.labels && input.labels.length) return;
      const name = input.getAttribute("placeholder") || input.getAttribute("title");
      if (name) input.setAttribute("aria-label", input.closest("tfoot") ? `Filter column ${name}` : name);
    });
    root.querySelectorAll(".dt-container .dt-paging nav:not([data-named])").forEach((nav) => {
      const table = nav.closest(".dt-container").querySelector("table.dataTable");
      if (table && table.id) nav.setAttribute("aria-label", `Pages of ${table.id}`);
      nav.dataset.named = "1";
    });
  },

  // --- sample pages: search and opened document in the URL ----------------------------
  async setupSamples() {
    const table = document.getElementById("samples");
    if (!table) return;
    const api = await this.tableApi(table);
    if (!api) return;
    const columns = api.columns().header().toArray().map((th) => th.textContent);
    const across = columns.indexOf("across runs");
    const apply = () => {
      const state = this.readHash();
      if (api.search() !== (state.q || "")) api.search(state.q || "");
      const pattern = state.doc ? `doc=${this.encode(state.doc).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$` : "";
      if (across >= 0) api.column(across).search(pattern, true, false);
      api.draw();
    };
    apply();
    api.on("search.dt", () => {
      const state = this.readHash();
      const q = api.search();
      if ((state.q || "") === q) return;
      const parts = [];
      if (q) parts.push(`q=${this.encode(q)}`);
      if (state.doc) parts.push(`doc=${this.encode(state.doc)}`);
      history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname);
    });
    window.addEventListener("hashchange", apply);
  },

  // --- the document view --------------------------------------------------------------
  async showDocument() {
    const root = document.getElementById("document");
    const state = this.readHash();
    const slug = state.tab;
    if (!slug) {
      root.innerHTML = "<p>No document named: open one from a sample page (“across runs”).</p>";
      return;
    }
    let index;
    try {
      index = await this.require(`index:${slug}`, `docs/${slug}.js`);
    } catch (error) {
      root.innerHTML = `<p>No logged documents for ${explainEvalEscape(slug)}.</p>`;
      return;
    }
    const key = state.doc || index.order[0];
    const file = index.docs[key];
    if (file === undefined) {
      root.innerHTML = `<p>Document ${explainEvalEscape(key)} is not among the logged documents of ${explainEvalEscape(index.title)}.</p>`;
      return;
    }
    const docs = await this.require(`docs:${slug}:${file}`, `docs/${slug}.${file}.js`);
    const doc = docs[key];
    const position = index.order.indexOf(key);
    const link = (other, text, rel) => (other === undefined ? "" : `<a href="#${slug}&doc=${this.encode(other)}" rel="${rel}">${text}</a>`);
    const e = explainEvalEscape;
    const fields = Object.keys(doc.runs.reduce((all, run) => Object.assign(all, run.fields), {}));
    const shared = Object.entries(doc.shared).map(([name, value]) => `<dt>${e(name)}</dt><dd>${e(value ?? "")}</dd>`).join("");
    const prompts = doc.prompts.map((prompt, i) => `<details${doc.prompts.length === 1 ? " open" : ""}><summary>prompt${doc.prompts.length > 1 ? ` ${i + 1}` : ""}</summary><pre>${e(prompt)}</pre></details>`).join("");
    const head = ["run", ...fields, ...(doc.prompts.length > 1 ? ["prompt"] : [])].map((name) => `<th scope="col">${e(name)}</th>`).join("");
    const rows = doc.runs.map((run) => {
      const info = index.runs[run.run];
      const name = `<th scope="row"><a href="${e(run.page)}#doc=${e(this.encode(key))}">${e(info.label)}</a>${info.limited ? ` <span class="badge limited">⚠ ${e(info.limited)}</span>` : ""}</th>`;
      const cells = fields.map((field) => `<td>${e(run.fields[field] ?? "")}</td>`).join("");
      const prompt = doc.prompts.length > 1 ? `<td>${run.prompt === null ? "" : run.prompt + 1}</td>` : "";
      return `<tr>${name}${cells}${prompt}</tr>`;
    }).join("");
    root.innerHTML =
      `<h2>${e(index.title)}: document ${e(key)}</h2>` +
      `<nav class="pager" aria-label="Documents">document ${position + 1} of ${index.order.length} · ${link(index.order[position - 1], "‹ previous", "prev")} ${link(index.order[position + 1], "next ›", "next")}</nav>` +
      (shared ? `<dl class="meta">${shared}</dl>` : "") + prompts +
      `<div class="table-scroll" role="region" aria-label="Every run's answer" tabindex="0"><table class="plain document"><caption>${doc.runs.length} run(s) logged this document</caption><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></div>`;
  },

  init() {
    this.labelInputs(document);
    new MutationObserver(() => this.labelInputs(document)).observe(document.body, { childList: true, subtree: true });
    const view = document.body.dataset.view;
    if (view === "document") {
      this.showDocument();
      window.addEventListener("hashchange", () => this.showDocument());
      return;
    }
    if (view === "samples") {
      this.setupSamples();
      return;
    }
    const radios = document.querySelectorAll(".tablist input[type=radio]");
    if (!radios.length) return; // the sample viewer's index
    document.querySelectorAll("section.panel").forEach((panel) => { this.setupSummary(panel); this.filterSummary(panel); });
    radios.forEach((radio) => radio.addEventListener("change", () => {
      this.showView(this.panel(radio.value));
      this.update(radio.value, {});
    }));
    const state = this.readHash();
    if (state.tab && document.getElementById("tab-" + state.tab)) this.restore(state);
    else this.showView(this.panel(document.querySelector(".tablist input:checked").value));
    window.addEventListener("hashchange", () => this.restore(this.readHash()));
  },
};

explainEval.init();
