/* The leaderboard pages' own script (deferred: it runs once the page is parsed, after
   DataTables' loader and plotly.js). What it does:
   - the cell renderers of the DataTables (text escaped, [shown, sort] numbers, links);
   - the index: tabs, the summary table (sort within rank groups, row filter, "hide runs on
     part of the data", column picker, "All columns" on a phone, metric definitions on
     click or key), the view switch, and the state of all of it in the URL fragment
     (#rule&sort=h1:asc&q=llama&limited=shown&view=long), restored on load;
   - charts: drawn from their JSON when their tab first shows;
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
function explainEvalLink(data, type) {
  if (!Array.isArray(data) || !data[1]) return data === null || data === undefined ? "" : String(data);
  if (type !== "display") return data[0];
  return `<a href="${explainEvalEscape(data[1])}">${explainEvalEscape(data[0])}</a>`;
}

const explainEval = {
  state: { tab: "", sort: "", q: "", limited: "", view: "" },

  readHash() {
    const parts = location.hash.slice(1).split("&");
    const state = { tab: "", sort: "", q: "", limited: "", view: "" };
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
      else if (at > 0 && part.slice(0, at) in state) state[part.slice(0, at)] = decode(part.slice(at + 1));
    });
    return state;
  },

  writeHash() {
    const s = this.state;
    const parts = [s.tab];
    // Only what would break the fragment is encoded: "h1:asc" stays readable.
    const encode = (value) => value.replace(/[%&=#\s]/g, encodeURIComponent);
    for (const key of ["sort", "q", "limited", "view"]) if (s[key]) parts.push(`${key}=${encode(s[key])}`);
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

  // Sort one summary table by a column, inside each rank group (tbody).
  sortSummary(table, column, direction) {
    const heads = table.querySelectorAll("thead th");
    heads.forEach((th) => th.removeAttribute("aria-sort"));
    const head = table.querySelector(`thead th[data-col="${column}"]`);
    if (!head) return false;
    head.setAttribute("aria-sort", direction === "asc" ? "ascending" : "descending");
    const index = Array.from(heads).indexOf(head);
    const sign = direction === "asc" ? 1 : -1;
    table.querySelectorAll("tbody").forEach((body) => {
      const rows = Array.from(body.querySelectorAll("tr:not(.group)"));
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

  setupSummary(panel) {
    const tab = panel.id.replace("panel-", "");
    const table = panel.querySelector("table.summary");
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
        table.querySelectorAll(`.${toggle.value}`).forEach((cell) => cell.classList.toggle("column-off", !toggle.checked));
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
    panel.querySelectorAll(".views input[type=radio]").forEach((radio) => {
      radio.addEventListener("change", () => {
        this.drawCharts(panel);
        this.update(tab, { view: radio.value === "long" ? "long" : "" });
      });
    });
  },

  update(tab, changes) {
    if (this.state.tab !== tab) this.state = { tab, sort: "", q: "", limited: "", view: "" };
    Object.assign(this.state, changes);
    this.writeHash();
  },

  // Apply a state read from the URL: tab, view, row filter, limited toggle, sort.
  restore(state) {
    if (!state.tab || !this.showTab(state.tab)) return;
    const panel = this.panel(state.tab);
    this.state = { tab: state.tab, sort: "", q: "", limited: "", view: "" };
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
    const [column, direction] = state.sort.split(":");
    const table = panel.querySelector("table.summary");
    if (table && column && (direction === "asc" || direction === "desc") && this.sortSummary(table, column, direction)) {
      this.state.sort = state.sort;
    }
    this.drawCharts(panel);
  },

  drawCharts(panel) {
    if (!panel || !window.Plotly) return;
    panel.querySelectorAll("script.chart-data").forEach((script) => {
      const target = document.getElementById(script.dataset.for);
      if (!target || target.dataset.drawn || target.offsetParent === null) return;
      const figure = JSON.parse(script.textContent);
      target.dataset.drawn = "1";
      Plotly.newPlot(target, figure.data, figure.layout, figure.config);
    });
  },

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

  init() {
    this.labelInputs(document);
    new MutationObserver(() => this.labelInputs(document)).observe(document.body, { childList: true, subtree: true });
    const radios = document.querySelectorAll(".tablist input[type=radio]");
    if (!radios.length) return; // a sample page
    document.querySelectorAll("section.panel").forEach((panel) => { this.setupSummary(panel); this.filterSummary(panel); });
    radios.forEach((radio) => radio.addEventListener("change", () => {
      this.drawCharts(this.panel(radio.value));
      this.update(radio.value, {});
    }));
    const state = this.readHash();
    if (state.tab && document.getElementById("tab-" + state.tab)) this.restore(state);
    else this.drawCharts(this.panel(document.querySelector(".tablist input:checked").value));
    window.addEventListener("hashchange", () => this.restore(this.readHash()));
  },
};

explainEval.init();
