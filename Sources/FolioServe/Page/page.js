"use strict";
const pageSize = 50;
const $ = (id) => document.getElementById(id);
let token = new URLSearchParams(location.search).get("auth") || sessionStorage.getItem("folio-token") || "";
// The view: what the URL holds. rows: the window's documents by key.
const view = { table: null, order: "$key", desc: false, where: "", select: "", facet: "", cursor: null, doc: null, tab: "edit" };
const state = { tables: {}, rows: new Map(), stream: null, doc: null, flash: new Set(), more: false, countTimer: null };

function say(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function url(path, params) {
  const query = new URLSearchParams(params || {});
  if (token) query.set("auth", token);
  const text = query.toString();
  return path + (text ? "?" + text : "");
}
const enc = encodeURIComponent;
function docPath(table, key) { return "/" + enc(table) + "/" + enc(key) + ".json"; }
// Folio's own paths for a document: history, blame and conflicts.
function infoPath(kind, doc) { return "/.info/" + kind + docPath(doc.table, doc.key); }
// The open document's history, blame or conflicts; null when another
// document was opened while the reply was on its way.
async function infoOfOpenDocument(kind) {
  const doc = state.doc;
  const reply = await call("GET", infoPath(kind, doc));
  return state.doc === doc ? reply : null;
}

async function call(method, path, options) {
  options = options || {};
  const response = await fetch(url(path, options.params), {
    method, headers: options.headers || {}, body: options.body === undefined ? undefined : options.body,
  });
  const text = await response.text();
  let value = null;
  try { value = text ? JSON.parse(text) : null; } catch (e) { value = text; }
  if (response.status === 401) {
    $("login").hidden = false;
    throw new Error(token ? "The server did not accept the token: check it and sign in again."
                          : "The server wants a token: sign in.");
  }
  return { status: response.status, etag: response.headers.get("ETag"), text, value };
}
function failure(reply) {
  const message = reply.value && reply.value.error ? reply.value.error : reply.text;
  return new Error(reply.status + ": " + message);
}

// Firebase's order. Keys: 32-bit integers first, by value, then the
// rest by UTF-16 code unit, which is how JavaScript compares strings.
function intKey(key) {
  if (!/^(0|-?[1-9][0-9]{0,9})$/.test(key)) return null;
  const n = Number(key);
  return n >= -2147483648 && n <= 2147483647 ? n : null;
}
function compareKeys(a, b) {
  const x = intKey(a), y = intKey(b);
  if (x !== null && y !== null) return x - y || a.length - b.length;
  if (x !== null) return -1;
  if (y !== null) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
// Values: missing and null < false < true < numbers < strings < the rest.
function rank(v) {
  if (v === null || v === undefined) return 0;
  if (v === false) return 1;
  if (v === true) return 2;
  if (typeof v === "number") return 3;
  if (typeof v === "string") return 4;
  return 5;
}
function compareValues(a, b) {
  const r = rank(a) - rank(b);
  if (r) return r;
  if (typeof a === "number") return a - b;
  if (typeof a === "string") return a < b ? -1 : a > b ? 1 : 0;
  return 0;
}
function childValue(doc, path) {
  let at = doc;
  for (const part of path.split("/")) {
    if (at === null || typeof at !== "object" || !(part in at)) return undefined;
    at = at[part];
  }
  return at;
}
function orderValue(key) { return view.order === "$key" ? key : childValue(state.rows.get(key), view.order); }
function compareRows(a, b) {
  if (view.order === "$key") return compareKeys(a, b);
  return compareValues(orderValue(a), orderValue(b)) || compareKeys(a, b);
}

// The URL: t (table), o (order path), d=desc, w (where), s (columns), c (cursor, as
// JSON [direction, value, key]), k (open document), v (its tab).
function writeURL(push) {
  const q = new URLSearchParams();
  if (new URLSearchParams(location.search).get("auth")) q.set("auth", token);
  if (view.table) q.set("t", view.table);
  if (view.order !== "$key") q.set("o", view.order);
  if (view.desc) q.set("d", "desc");
  if (view.where) q.set("w", view.where);
  if (view.select) q.set("s", view.select);
  if (view.facet) q.set("f", view.facet);
  if (view.cursor) q.set("c", JSON.stringify(view.cursor));
  if (view.doc !== null) q.set("k", view.doc);
  if (view.doc !== null && view.tab !== "edit") q.set("v", view.tab);
  const next = location.pathname + (q.toString() ? "?" + q : "");
  if (next === location.pathname + location.search) return;
  if (push) history.pushState(null, "", next); else history.replaceState(null, "", next);
}
function readURL() {
  const q = new URLSearchParams(location.search);
  view.table = q.get("t");
  view.order = q.get("o") || "$key";
  view.desc = q.get("d") === "desc";
  view.where = q.get("w") || "";
  view.select = q.get("s") || "";
  view.facet = q.get("f") || "";
  try { view.cursor = q.get("c") ? JSON.parse(q.get("c")) : null; } catch (e) { view.cursor = null; }
  view.doc = q.get("k");
  view.tab = q.get("v") || "edit";
}

async function loadTables() {
  const reply = await call("GET", "/.info/tables.json");
  if (reply.status !== 200) throw failure(reply);
  state.tables = reply.value || {};
  const list = $("tables");
  list.replaceChildren();
  for (const [name, info] of Object.entries(state.tables)) {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.table = name;
    button.setAttribute("aria-current", String(name === view.table));
    const label = document.createElement("span");
    label.textContent = name;
    const count = document.createElement("span");
    count.className = "count";
    count.textContent = String(info.count);
    count.setAttribute("aria-label", info.count + " documents");
    button.append(label, count);
    button.addEventListener("click", () => go({ table: name, order: "$key", desc: false, where: "", select: "", facet: "", cursor: null, doc: null, tab: "edit" }));
    item.append(button);
    list.append(item);
  }
  if (!list.children.length) say("This store has no tables yet: add one with 'folio tables add'.");
  if (view.table && !(view.table in state.tables)) {
    const gone = view.table;
    closeTable();
    say("The table " + gone + " is no longer in folio.yaml.", true);
    writeURL(false);
  }
}
let tablesTimer = null;
function refreshTablesSoon() {
  clearTimeout(tablesTimer);
  tablesTimer = setTimeout(() => loadTables().catch((e) => say(e.message, true)), 300);
}

// Moves to another view, kept in the URL.
function go(changes) {
  const tableChanged = "table" in changes && changes.table !== view.table;
  Object.assign(view, changes);
  writeURL(true);
  show(tableChanged);
}
function show(clearStatus) {
  if (clearStatus) say("");
  for (const b of document.querySelectorAll("#tables button")) {
    b.setAttribute("aria-current", String(b.dataset.table === view.table));
  }
  if (!view.table || !(view.table in state.tables)) { closeTable(); return; }
  // The window is opened again only when what it shows changed.
  const windowKey = JSON.stringify([view.table, view.order, view.desc, view.where, view.cursor]);
  if (windowKey !== state.windowKey || !state.stream) openTable(); else render(false);
  state.windowKey = windowKey;
  updateExport();
  const facetKey = JSON.stringify([view.table, view.where, view.facet]);
  if (facetKey !== state.facetKey) refreshFacets();
  state.facetKey = facetKey;
  if (view.doc !== null) openDocument(view.doc); else closeEditor(false);
}

function queryParams() {
  const params = {};
  if (view.where) params.where = view.where;
  params.orderBy = JSON.stringify(view.order);
  return params;
}

// The view as a file: every document it matches, not just this page,
// in its order and with its columns. The link carries the token as the
// page's own requests do; the curl line sends it as a header instead.
function exportParams() {
  const params = queryParams();
  if (view.select) params.select = view.select;
  if (view.desc) params.desc = "true";
  return params;
}
function updateExport() {
  if (!view.table) return;
  const params = exportParams();
  for (const format of ["csv", "ndjson"]) {
    $("export-" + format).href = url("/.info/export/" + enc(view.table) + "." + format, params);
  }
  const plain = location.origin + "/.info/export/" + enc(view.table) + ".csv?" + new URLSearchParams(params);
  const quote = (text) => "'" + text.replace(/'/g, "'\\''") + "'";
  $("export-curl").textContent = "curl " + (token ? "-H \"Authorization: Bearer $FOLIO_SERVE_TOKEN\" " : "") + quote(plain);
}

// A path as `--select` and the where language write it.
function pathText(segments) {
  return segments.map((s) => /^[A-Za-z0-9_$-]+$/.test(s) ? s : "`" + s + "`").join(".");
}
function updateFacetChoices(columns) {
  const choice = $("facet");
  const wanted = ["", ...columns.map((c) => pathText(c.segments))];
  if (view.facet && !wanted.includes(view.facet)) wanted.push(view.facet);
  const have = [...choice.options].map((o) => o.value);
  if (JSON.stringify(have) !== JSON.stringify(wanted)) {
    choice.replaceChildren(...wanted.map((value) => {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = value || "none";
      return option;
    }));
  }
  choice.value = view.facet;
}
let facetTimer = null;
function refreshFacetsSoon() {
  clearTimeout(facetTimer);
  if (view.facet) facetTimer = setTimeout(() => refreshFacets(), 300);
}
async function refreshFacets() {
  const box = $("facets");
  if (!view.table || !view.facet) { box.hidden = true; return; }
  const table = view.table, where = view.where, facet = view.facet;
  const params = { path: facet };
  if (where) params.where = where;
  const reply = await call("GET", "/.info/facets/" + enc(table) + ".json", { params }).catch((e) => ({ status: 0, value: { error: e.message } }));
  if (table !== view.table || where !== view.where || facet !== view.facet) return;
  box.hidden = false;
  const list = $("facet-values");
  list.replaceChildren();
  if (reply.status !== 200) {
    $("facets-title").textContent = facet;
    $("facet-note").textContent = reply.value && reply.value.error ? reply.value.error : "The counts failed.";
    $("facet-note").className = "error";
    return;
  }
  const counts = reply.value;
  $("facets-title").textContent = facet + ": " + counts.distinct + (counts.distinct === 1 ? " value" : " values");
  for (const item of counts.values) {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.value = JSON.stringify(item.value);
    const label = document.createElement("span");
    label.textContent = cellText(item.value);
    const count = document.createElement("span");
    count.className = "count";
    count.textContent = String(item.count);
    button.append(label, count);
    const scalar = item.value === null || typeof item.value !== "object";
    button.disabled = !scalar;
    button.title = scalar ? "Filter: " + facet + " == " + JSON.stringify(item.value) : "";
    button.addEventListener("click", () => {
      const term = facet + " == " + JSON.stringify(item.value);
      go({ where: view.where ? "(" + view.where + ") && " + term : term, cursor: null });
    });
    li.append(button);
    list.append(li);
  }
  const shown = counts.values.length < counts.distinct ? "the " + counts.values.length + " most common of " + counts.distinct + "; " : "";
  $("facet-note").className = "";
  $("facet-note").textContent = shown + counts.nulls + " without a value, of " + counts.total + (counts.fromIndex ? " (from the index)" : "");
}

function openTable() {
  if (state.stream) state.stream.close();
  state.rows = new Map();
  $("table-view").hidden = false;
  $("table-title").textContent = view.table;
  $("where").value = view.where;
  $("select").value = view.select;
  $("where-error").hidden = true;
  $("where").removeAttribute("aria-invalid");
  $("select").removeAttribute("aria-invalid");
  const params = queryParams();
  // One more than a page: whether there is more in that direction.
  const c = view.cursor;
  const bound = (v) => JSON.stringify(v);
  const forward = !c ? !view.desc : (c[0] === "after") !== view.desc;
  if (c) {
    const [direction, value, key] = c;
    const after = (direction === "after") !== view.desc;
    if (view.order === "$key") {
      params[after ? "startAfter" : "endBefore"] = bound(key);
    } else {
      params[after ? "startAfter" : "endBefore"] = bound(value);
      params[after ? "startKey" : "endKey"] = bound(key);
    }
  }
  params[forward ? "limitToFirst" : "limitToLast"] = pageSize + 1;
  state.forward = forward;
  const stream = new EventSource(url("/" + enc(view.table) + ".json", params));
  state.stream = stream;
  let first = true;
  const onEvent = (isPatch) => (e) => {
    const event = JSON.parse(e.data);
    applyEvent(event, isPatch, !first);
    render(first);
    // A live change may move the counts; the first answer does not.
    if (!first) refreshFacetsSoon();
    first = false;
    refreshCountSoon();
    refreshTablesSoon();
  };
  stream.addEventListener("put", onEvent(false));
  stream.addEventListener("patch", onEvent(true));
  stream.addEventListener("cancel", () => {
    stream.close();
    say("The server ended the stream of " + view.table + ": it is no longer readable (was the table removed?).", true);
    refreshTablesSoon();
  });
  stream.addEventListener("auth_revoked", () => {
    stream.close();
    $("login").hidden = false;
    say("The server's token changed: sign in again.", true);
  });
  stream.onerror = () => {
    if (stream.readyState === EventSource.CLOSED) {
      checkQuery(stream).catch((e) => say(e.message, true));
    }
  };
  refreshCount();
}

// A stream the server refused: say why (a bad filter, at its column).
async function checkQuery(stream) {
  const params = queryParams();
  params.limitToFirst = 1;
  const reply = await call("GET", "/" + enc(view.table) + ".json", { params });
  // Back or forward may have opened another window meanwhile: this
  // answer is about the one that failed, and no longer on show.
  if (stream !== state.stream) return;
  if (reply.status === 400 && view.where && reply.value && reply.value.column) {
    showWhereError(reply.value.error, reply.value.column);
  } else if (reply.status !== 200) {
    say("The live view of " + view.table + " failed: " + failure(reply).message, true);
  } else {
    say("The live stream of " + view.table + " failed.", true);
  }
}
function showWhereError(message, column) {
  const box = $("where-error");
  box.textContent = view.where + "\n" + " ".repeat(Math.max(0, column - 1)) + "^ " + message.replace(/^INVALID_QUERY: /, "");
  box.hidden = false;
  $("where").setAttribute("aria-invalid", "true");
  $("count").textContent = "";
  // No window: nothing to page through.
  $("rows").replaceChildren();
  $("prev").disabled = true;
  $("next").disabled = true;
  const input = $("where");
  input.focus();
  input.setSelectionRange(column - 1, column - 1);
}

function applyEvent(event, isPatch, live) {
  const parts = event.path.split("/").filter((p) => p);
  if (parts.length === 0) {
    const entries = Object.entries(event.data || {});
    if (!isPatch) state.rows = new Map();
    for (const [key, value] of entries) setRow(key, value, live);
    return;
  }
  const key = parts[0];
  let doc = state.rows.has(key) ? structuredClone(state.rows.get(key)) : null;
  if (parts.length === 1) {
    doc = isPatch ? Object.assign(doc || {}, event.data) : event.data;
  } else {
    doc = doc || {};
    let at = doc;
    for (const p of parts.slice(1, -1)) { at = at[p] = (at[p] && typeof at[p] === "object") ? at[p] : {}; }
    if (event.data === null) delete at[parts[parts.length - 1]]; else at[parts[parts.length - 1]] = event.data;
  }
  setRow(key, doc, live);
}
function setRow(key, value, live) {
  if (value === null) state.rows.delete(key); else state.rows.set(key, value);
  if (live && value !== null) {
    state.flash.add(key);
    setTimeout(() => { state.flash.delete(key); }, 2000);
  }
  if (live && state.doc && state.doc.table === view.table && state.doc.key === key) documentChanged();
}

// Columns as `query --select` takes them: paths split on commas and
// dots outside backticks; a segment between backticks is taken whole.
// Throws {message, column} (1-based) for a list that does not parse.
function parseColumns(text) {
  const paths = [];
  let segments = [], part = "", i = 0, quoted = false;
  const fail = (message, at) => { throw { message, column: at + 1 }; };
  const endSegment = (at) => {
    if (!part && !quoted) fail("empty segment: name a field between the dots and commas", at);
    segments.push(quoted ? part : part.trim()); part = ""; quoted = false;
  };
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === "`") {
      if (part) fail("a backtick starts a segment", i);
      const end = text.indexOf("`", i + 1);
      if (end < 0) fail("unterminated `quoted` segment; close it with '`'", i);
      if (end === i + 1) fail("empty segment", i);
      part = text.slice(i + 1, end); quoted = true; i = end;
      if (i + 1 < text.length && !".,".includes(text[i + 1]) && text[i + 1].trim()) fail("expected '.' or ',' after the backticked segment", i + 1);
    } else if (c === ".") { endSegment(i); }
    else if (c === ",") { endSegment(i); paths.push(segments); segments = []; }
    else if (c.trim() || part) { part += c; }
  }
  endSegment(i);
  paths.push(segments);
  return paths.map((segments) => ({ label: segments.join("."), segments, path: segments.join("/") }));
}
function columnsFor(keys) {
  const info = state.tables[view.table] || {};
  if (view.select) {
    try { return parseColumns(view.select); } catch (e) { return []; }
  }
  const named = (c) => ({ label: c, segments: [c], path: c });
  if (info.columns && info.columns.length) return info.columns.filter((c) => c !== info.key).map(named);
  const seen = new Set();
  for (const key of keys) for (const c of Object.keys(state.rows.get(key) || {})) if (c !== info.key) seen.add(c);
  return [...seen].sort().map(named);
}
function valueAt(doc, segments) {
  let at = doc;
  for (const part of segments) {
    if (at === null || typeof at !== "object" || !(part in at)) return undefined;
    at = at[part];
  }
  return at;
}
function cellText(value) {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

function render(first) {
  let keys = [...state.rows.keys()].sort(compareRows);
  if (view.desc) keys.reverse();
  // The extra row says there is more that way; it is not shown.
  state.more = keys.length > pageSize;
  if (state.more) keys = state.forward !== view.desc ? keys.slice(0, pageSize) : keys.slice(keys.length - pageSize);
  const info = state.tables[view.table] || {};
  const columns = columnsFor(keys);
  updateFacetChoices(columns);
  const head = $("columns");
  head.replaceChildren();
  const keyName = info.key || "key";
  for (const [label, path] of [[keyName, "$key"]].concat(columns.map((c) => [c.label, c.path]))) {
    const th = document.createElement("th");
    th.scope = "col";
    th.dataset.path = path;
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = label;
    const indexed = path === "$key" || (info.indexes || []).includes(path);
    button.title = "Order by " + label + (indexed ? " (indexed)" : "");
    if (view.order === path) th.setAttribute("aria-sort", view.desc ? "descending" : "ascending");
    button.addEventListener("click", () => {
      const desc = view.order === path ? !view.desc : false;
      go({ order: path, desc, cursor: null });
    });
    th.append(button);
    head.append(th);
  }
  const body = $("rows");
  body.replaceChildren();
  for (const key of keys) {
    const row = document.createElement("tr");
    row.dataset.key = key;
    if (state.flash.has(key)) row.className = "flash";
    const keyCell = document.createElement("td");
    const link = document.createElement("a");
    link.href = "?" + new URLSearchParams(Object.assign({}, Object.fromEntries(new URLSearchParams(location.search)), { k: key })).toString();
    link.textContent = key;
    link.addEventListener("click", (e) => { e.preventDefault(); go({ doc: key, tab: "edit" }); });
    keyCell.append(link);
    row.append(keyCell);
    const doc = state.rows.get(key) || {};
    for (const column of columns) {
      const cell = document.createElement("td");
      cell.className = "cell";
      cell.dataset.column = column.label;
      const value = valueAt(doc, column.segments);
      cell.textContent = cellText(value);
      if (value !== undefined && typeof value === "object") cell.title = JSON.stringify(value, null, 2);
      else if (value !== undefined) cell.title = cellText(value);
      row.append(cell);
    }
    body.append(row);
  }
  state.shown = keys;
  const c = view.cursor;
  // Towards the start: there is more when the cursor came from the other
  // way, or the extra row was found going back.
  const backward = (c && c[0] === "before") ? state.more : !!c;
  const forwardMore = (c && c[0] === "before") ? true : state.more;
  $("prev").disabled = !backward;
  $("next").disabled = !forwardMore || keys.length === 0;
  // Back at the start, or past the end: the first page, whole.
  if (first && c && (keys.length === 0 || (c[0] === "before" && !state.more))) {
    view.cursor = null;
    writeURL(false);
    show(false);
  }
}

function refreshCountSoon() {
  clearTimeout(state.countTimer);
  state.countTimer = setTimeout(() => refreshCount(), 300);
}
async function refreshCount() {
  const table = view.table, where = view.where;
  const params = where ? { where } : {};
  const reply = await call("GET", "/.info/count/" + enc(table) + ".json", { params }).catch(() => null);
  if (!reply || table !== view.table || where !== view.where) return;
  if (reply.status === 400 && reply.value && reply.value.column) {
    showWhereError(reply.value.error, reply.value.column);
    return;
  }
  if (reply.status !== 200) return;
  $("count").textContent = reply.value + (reply.value === 1 ? " document" : " documents") + (where ? " match" : "");
}

function page(direction) {
  const keys = state.shown || [];
  if (!keys.length) { go({ cursor: null }); return; }
  const key = direction === "after" ? keys[keys.length - 1] : keys[0];
  const value = view.order === "$key" ? key : orderValue(key);
  go({ cursor: [direction, value === undefined ? null : value, key] });
}

function closeTable() {
  if (state.stream) state.stream.close();
  state.stream = null;
  state.windowKey = null;
  $("table-view").hidden = true;
  closeEditor(false);
  view.table = null;
}

// The document view.
async function openDocument(key) {
  if (!state.doc || state.doc.table !== view.table || state.doc.key !== key) {
    // Another document: the last message was about something else.
    say("");
    state.doc = { table: view.table, key, etag: null, original: null, dirty: false };
    $("editor-title").textContent = view.table + " / " + key;
    $("key-row").hidden = true;
    $("delete").hidden = false;
    for (const t of document.querySelectorAll('[role="tab"]')) t.disabled = false;
    await reloadDocument().catch((e) => say(e.message, true));
    loadConflicts().catch((e) => say(e.message, true));
  }
  $("editor").hidden = false;
  selectTab(view.tab);
}
function selectTab(tab) {
  for (const t of document.querySelectorAll('[role="tab"]')) {
    const on = t.dataset.tab === tab;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    $("panel-" + t.dataset.tab).hidden = !on;
  }
  if (tab === "history") loadHistory().catch((e) => say(e.message, true));
  if (tab === "blame") loadBlame().catch((e) => say(e.message, true));
  if (tab === "conflicts") loadConflicts().catch((e) => say(e.message, true));
}

async function reloadDocument() {
  const doc = state.doc;
  // Replies can come back out of order (a reload after a save, then
  // one for a change made elsewhere): only the last asked is shown.
  const ticket = doc.reloads = (doc.reloads || 0) + 1;
  const reply = await call("GET", docPath(doc.table, doc.key), {
    params: { print: "pretty" }, headers: { "X-Firebase-ETag": "true" },
  });
  if (reply.status !== 200) throw failure(reply);
  if (state.doc !== doc || doc.reloads !== ticket) return;
  // Typed into meanwhile: the edit stays, and the banner says the
  // document changed.
  if (doc.dirty) { $("changed").hidden = false; return; }
  doc.etag = reply.etag;
  doc.original = reply.value;
  doc.dirty = false;
  $("text").value = reply.value === null ? "" : reply.text;
  $("changed").hidden = true;
  if (reply.value === null) say(doc.key + " no longer exists.", true);
}
function documentChanged() {
  if (state.doc.dirty) { $("changed").hidden = false; return; }
  reloadDocument().catch((e) => say(e.message, true));
  if (view.tab === "history") loadHistory().catch(() => {});
  if (view.tab === "blame") loadBlame().catch(() => {});
  loadConflicts().catch(() => {});
}

function commitLine(item) {
  return (item.commit ? item.commit.slice(0, 8) : "not committed") + (item.author ? " · " + item.author : "") + (item.date ? " · " + item.date : "");
}
async function loadHistory() {
  const reply = await infoOfOpenDocument("history");
  if (!reply) return;
  const list = $("versions");
  list.replaceChildren();
  if (reply.status === 404) { list.textContent = "No committed version yet."; return; }
  if (reply.status !== 200) throw failure(reply);
  for (const version of reply.value) {
    const item = document.createElement("li");
    const title = document.createElement("div");
    title.textContent = commitLine(version) + (version.summary ? " — " + version.summary : "");
    item.append(title);
    for (const change of version.changes || []) {
      const line = document.createElement("pre");
      const path = change.path || "(document)";
      line.textContent = change.change + " " + path + ("old" in change ? " " + JSON.stringify(change.old) + " →" : "") + ("new" in change ? " " + JSON.stringify(change.new) : "");
      item.append(line);
    }
    list.append(item);
  }
}
async function loadBlame() {
  const reply = await infoOfOpenDocument("blame");
  if (!reply) return;
  const body = $("blame");
  body.replaceChildren();
  if (reply.status !== 200) throw failure(reply);
  for (const field of reply.value) {
    const row = document.createElement("tr");
    row.dataset.path = field.path;
    for (const text of [field.path, JSON.stringify(field.value), field.op + (field.hlc ? " " + field.hlc : ""), field.replica || "", commitLine(field)]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.append(cell);
    }
    body.append(row);
  }
}
async function loadConflicts() {
  const reply = await infoOfOpenDocument("conflicts");
  if (!reply) return;
  if (reply.status !== 200) throw failure(reply);
  const list = $("conflicts");
  list.replaceChildren();
  $("conflict-count").textContent = reply.value.length ? "(" + reply.value.length + ")" : "";
  if (!reply.value.length) { list.textContent = "No open conflicts."; return; }
  for (const conflict of reply.value) {
    const item = document.createElement("li");
    item.dataset.path = conflict.path;
    const text = document.createElement("div");
    text.textContent = conflict.path + ": kept " + JSON.stringify(conflict.winner.value) + " (" + conflict.winner.replica + "), lost " + JSON.stringify(conflict.loser.value) + " (" + conflict.loser.replica + ")";
    const choice = (label, verb, value, resolution) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = label;
      button.setAttribute("aria-label", verb + " " + JSON.stringify(value) + " at " + conflict.path);
      button.addEventListener("click", guarded(() => resolve(conflict.path, resolution)));
      return button;
    };
    item.append(text, choice("Keep", "Keep", conflict.winner.value, "keep"),
      choice("Take other", "Take", conflict.loser.value, "takeOther"));
    list.append(item);
  }
}
async function resolve(path, resolution) {
  const doc = state.doc;
  const reply = await call("POST", infoPath("conflicts", doc), {
    body: JSON.stringify({ path, resolution }),
  });
  if (reply.status !== 200) throw failure(reply);
  say("Resolved " + path + " of " + doc.key + ".");
  await loadConflicts();
  await reloadDocument();
}

function newDocument() {
  state.doc = { table: view.table, key: null, etag: null, original: null, dirty: false, isNew: true };
  $("editor").hidden = false;
  $("key-row").hidden = false;
  $("delete").hidden = true;
  $("editor-title").textContent = "New document in " + view.table;
  for (const t of document.querySelectorAll('[role="tab"]')) t.disabled = t.dataset.tab !== "edit";
  selectTab("edit");
  $("key").value = "";
  $("text").value = "{\n  \n}";
  $("changed").hidden = true;
  say("");
  $("key").focus();
}

// Where in the text the error's JSON pointer or column points: the
// schema's messages name a path such as "views" or "/views".
function lineColumnOf(text, member) {
  const at = text.indexOf(JSON.stringify(member) + ":");
  if (at < 0) return null;
  const before = text.slice(0, at).split("\n");
  return before.length + ":" + (before[before.length - 1].length + 1);
}
function parseText() {
  let value;
  try { value = JSON.parse($("text").value); }
  catch (e) { throw new Error("The text is not valid JSON: " + e.message); }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error("A document is a JSON object, { … }.");
  }
  return value;
}
// A schema's refusal names the file as the server wrote it; the page
// points into its own text instead, at the member the error names.
function saveFailure(reply) {
  const error = failure(reply);
  const m = /^400: \S+:\d+:\d+: error: ([^:\s]+): (.*)$/s.exec(error.message);
  if (!m) return error;
  const member = m[1].split(/[./]/).pop();
  const where = lineColumnOf($("text").value, member);
  return new Error((where ? "line " + where + ": " : "") + m[1] + ": " + m[2]);
}

async function save() {
  const doc = state.doc;
  const value = parseText();
  if (doc.isNew) {
    const key = $("key").value.trim();
    let reply;
    if (key) {
      reply = await call("PUT", docPath(doc.table, key), { body: JSON.stringify(value), headers: { "if-match": "null_etag" } });
      if (reply.status === 412) throw new Error(key + " already exists.");
    } else {
      reply = await call("POST", "/" + enc(doc.table) + ".json", { body: JSON.stringify(value) });
    }
    if (reply.status !== 200) throw saveFailure(reply);
    const made = key || reply.value.name;
    state.doc = null;
    go({ doc: made, tab: "edit" });
    say("Added " + made + ".");
    return;
  }
  // Only the columns that changed, so the op records just those; a
  // removed column is set to null.
  const original = doc.original || {};
  const patch = {};
  for (const [k, v] of Object.entries(value)) {
    if (JSON.stringify(v) !== JSON.stringify(original[k])) patch[k] = v;
  }
  for (const k of Object.keys(original)) if (!(k in value)) patch[k] = null;
  if (!Object.keys(patch).length) { say("Nothing to save."); return; }
  // A PATCH key is a path: a column named "size/cm" would become
  // {"size": {"cm": …}}, and Firebase's key rules refuse "." "$" "#"
  // "[" "]" too. Such columns are written at their own URL, where the
  // name is percent-encoded, after the PATCH of the rest (which still
  // compares the whole document with if-match).
  if ("" in patch) throw new Error("A column with an empty name cannot be saved from the page; rename it.");
  const plain = {}, escaped = [];
  for (const [k, v] of Object.entries(patch)) {
    if (/[.$#\[\]\/\u0000-\u001f\u007f]/.test(k)) escaped.push([k, v]); else plain[k] = v;
  }
  const reply = await call("PATCH", docPath(doc.table, doc.key), {
    body: JSON.stringify(plain), headers: { "if-match": doc.etag },
  });
  if (reply.status === 200) {
    for (const [k, v] of escaped) {
      const column = docPath(doc.table, doc.key).replace(/\.json$/, "/" + enc(k) + ".json");
      const one = v === null ? await call("DELETE", column) : await call("PUT", column, { body: JSON.stringify(v) });
      if (one.status !== 200) throw saveFailure(one);
    }
  }
  if (reply.status === 412) {
    doc.etag = reply.etag;
    doc.original = reply.value;
    $("changed").hidden = false;
    throw new Error("Not saved: " + doc.key + " changed since you opened it. Save again to replace that change.");
  }
  if (reply.status !== 200) throw saveFailure(reply);
  // The text is what was saved: a change made elsewhere from now on
  // reloads it, rather than waiting behind an edit that is no more.
  doc.dirty = false;
  say("Saved " + doc.key + ".");
  await reloadDocument();
}

async function remove() {
  const doc = state.doc;
  if (!confirm("Delete " + doc.key + "?")) return;
  const reply = await call("DELETE", docPath(doc.table, doc.key), { headers: { "if-match": doc.etag } });
  if (reply.status === 412) {
    doc.etag = reply.etag;
    throw new Error("Not deleted: " + doc.key + " changed since you opened it. Delete again to delete it anyway.");
  }
  if (reply.status !== 200) throw failure(reply);
  say("Deleted " + doc.key + ".");
  go({ doc: null, tab: "edit" });
}

function closeEditor(navigate) {
  state.doc = null;
  $("editor").hidden = true;
  if (navigate) go({ doc: null, tab: "edit" });
}

function guarded(action) {
  return () => action().catch((e) => say(e.message, true));
}

$("text").addEventListener("input", () => { if (state.doc) state.doc.dirty = true; });
$("save").addEventListener("click", guarded(save));
$("delete").addEventListener("click", guarded(remove));
$("close").addEventListener("click", () => closeEditor(true));
$("new").addEventListener("click", newDocument);
$("next").addEventListener("click", () => page("after"));
$("prev").addEventListener("click", () => page("before"));
$("filter").addEventListener("submit", (e) => {
  e.preventDefault();
  const select = $("select").value.trim();
  try {
    if (select) parseColumns(select);
  } catch (error) {
    const box = $("where-error");
    box.textContent = select + "\n" + " ".repeat(Math.max(0, error.column - 1)) + "^ " + error.message;
    box.hidden = false;
    $("select").setAttribute("aria-invalid", "true");
    return;
  }
  go({ where: $("where").value.trim(), select, cursor: null });
});
$("clear-filter").addEventListener("click", () => go({ where: "", select: "", cursor: null }));
$("facet").addEventListener("change", () => go({ facet: $("facet").value }));
$("where").addEventListener("input", () => { $("where-error").hidden = true; $("where").removeAttribute("aria-invalid"); });
for (const t of document.querySelectorAll('[role="tab"]')) {
  t.addEventListener("click", () => { if (state.doc && !state.doc.isNew) go({ tab: t.dataset.tab }); });
  t.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
    const tabs = [...document.querySelectorAll('[role="tab"]:not([disabled])')];
    const next = tabs[(tabs.indexOf(t) + (e.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
    next.focus();
    next.click();
  });
}
$("login").addEventListener("submit", (e) => {
  e.preventDefault();
  token = $("token").value;
  sessionStorage.setItem("folio-token", token);
  $("login").hidden = true;
  say("");
  start();
});
window.addEventListener("popstate", () => { readURL(); show(true); });

function start() {
  readURL();
  // A linked table starts streaming at once, beside the list of tables
  // (which may yet say it is gone).
  if (view.table && !(view.table in state.tables)) {
    state.tables[view.table] = {};
    show(false);
  }
  loadTables().then(() => show(false)).catch((e) => say(e.message, true));
}
start();
