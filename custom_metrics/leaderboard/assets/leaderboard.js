/* The leaderboard pages' own script, kept this small on purpose: the two cell renderers
   the DataTables use, and the tabs (radio buttons that CSS shows) kept laid out and
   reachable from links such as index.html#reg. Everything else is DataTables and plotly. */

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

// Charts and tables drawn while their tab was hidden need a new layout once shown.
function explainEvalTabs() {
  const show = (radio) => {
    const panel = document.getElementById(radio.id.replace("tab-", "panel-"));
    if (window.Plotly && panel) panel.querySelectorAll(".js-plotly-plot").forEach((el) => Plotly.Plots.resize(el));
    if (window.$ && $.fn.dataTable) $.fn.dataTable.tables({ visible: true, api: true }).columns.adjust();
  };
  const radios = document.querySelectorAll(".tabs > input[type=radio]");
  radios.forEach((radio) => radio.addEventListener("change", () => show(radio)));
  const follow = () => {
    const wanted = document.getElementById("tab-" + decodeURIComponent(location.hash.slice(1)));
    if (wanted) {
      wanted.checked = true;
      show(wanted);
    }
  };
  window.addEventListener("hashchange", follow);
  follow();
}
