import FolioCore

/// The page `folio serve` answers `GET /` with: plain HTML, CSS and
/// JavaScript in one document, built into the binary (no CDN, no build
/// step), speaking only the REST API beside it.
///
/// It lists the tables with their counts (`/.info/tables.json`), shows a
/// table's documents in key order a page at a time (cursors `startAfter` /
/// `endBefore`), live through `EventSource`, and edits a document in a JSON
/// text area saved by `PATCH` with `if-match`, so that a save over someone
/// else's change is refused (412) rather than lost. A token given as
/// `?auth=T` in the page's address, or typed in when the server answers 401,
/// rides on every request as `?auth=T` (the only way `EventSource` can send
/// one).
enum WebPage {
  /// The page, UTF-8.
  static let bytes = Array(html.utf8)

  private static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Folio</title>
    <style>
    :root { color-scheme: light dark; --line: #8884; --accent: #2563eb; --bad: #b91c1c; }
    body { font: 15px/1.4 system-ui, sans-serif; margin: 0; display: grid; grid-template-columns: 14rem 1fr; min-height: 100vh; }
    header { grid-column: 1 / -1; padding: .5rem 1rem; border-bottom: 1px solid var(--line); display: flex; gap: 1rem; align-items: baseline; position: sticky; top: 0; background: Canvas; z-index: 1; }
    header h1 { font-size: 1.1rem; margin: 0; }
    nav { border-right: 1px solid var(--line); padding: .5rem; }
    nav ul { list-style: none; margin: 0; padding: 0; }
    nav button { width: 100%; display: flex; justify-content: space-between; text-align: left; padding: .35rem .5rem; border: 0; background: none; font: inherit; color: inherit; cursor: pointer; border-radius: 4px; }
    nav button[aria-current="true"] { background: var(--accent); color: #fff; }
    main { padding: .5rem 1rem; min-width: 0; }
    table { border-collapse: collapse; width: 100%; }
    th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
    td.doc { font-family: ui-monospace, monospace; font-size: 13px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 0; width: 100%; }
    td a { color: var(--accent); }
    .pager { display: flex; gap: .5rem; align-items: center; margin: .5rem 0; }
    textarea { width: 100%; min-height: 18rem; font: 13px/1.4 ui-monospace, monospace; box-sizing: border-box; }
    .row { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; margin: .5rem 0; }
    #status { min-height: 1.4em; }
    #status.error { color: var(--bad); font-weight: 600; }
    [hidden] { display: none !important; }
    </style>
    </head>
    <body>
    <header><h1>Folio</h1><span id="status" role="status" aria-live="polite"></span></header>
    <nav aria-label="Tables"><h2 id="tables-title" style="font-size:1rem">Tables</h2><ul id="tables" aria-labelledby="tables-title"></ul></nav>
    <main>
      <form id="login" hidden>
        <label for="token">Token</label> <input id="token" type="password" autocomplete="current-password">
        <button type="submit">Sign in</button>
      </form>
      <section id="table-view" hidden aria-labelledby="table-title">
        <h2 id="table-title"></h2>
        <div class="pager">
          <button id="prev" type="button">Previous</button>
          <button id="next" type="button">Next</button>
          <span id="range"></span>
          <button id="new" type="button">New document</button>
        </div>
        <table><thead><tr><th scope="col">Key</th><th scope="col">Document</th></tr></thead><tbody id="rows"></tbody></table>
      </section>
      <section id="editor" hidden aria-labelledby="editor-title">
        <h2 id="editor-title"></h2>
        <div class="row" id="key-row" hidden>
          <label for="key">Key</label> <input id="key" placeholder="empty: a generated key">
        </div>
        <label for="text">Document JSON</label><br>
        <textarea id="text" spellcheck="false"></textarea>
        <p id="changed" hidden>This document changed since you opened it. Saving now replaces that change.</p>
        <div class="row">
          <button id="save" type="button">Save</button>
          <button id="delete" type="button">Delete</button>
          <button id="close" type="button">Close</button>
        </div>
      </section>
    </main>
    <script>
    "use strict";
    const pageSize = 50;
    let token = new URLSearchParams(location.search).get("auth") || sessionStorage.getItem("folio-token") || "";
    const $ = (id) => document.getElementById(id);
    const state = { table: null, rows: new Map(), cursor: null, stream: null, doc: null };

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

    function docPath(table, key) {
      return "/" + encodeURIComponent(table) + "/" + encodeURIComponent(key) + ".json";
    }

    async function call(method, path, options) {
      options = options || {};
      const headers = Object.assign({}, options.headers || {});
      const response = await fetch(url(path, options.params), {
        method, headers, body: options.body === undefined ? undefined : options.body,
      });
      const text = await response.text();
      let value = null;
      try { value = text ? JSON.parse(text) : null; } catch (e) { value = text; }
      if (response.status === 401) {
        $("login").hidden = false;
        throw new Error("The server wants a token (401).");
      }
      return { status: response.status, etag: response.headers.get("ETag"), text, value };
    }

    function failure(reply) {
      const message = reply.value && reply.value.error ? reply.value.error : reply.text;
      return new Error(reply.status + ": " + message);
    }

    // Firebase's key order: keys that are 32-bit integers first, by value;
    // then the rest by UTF-16 code unit, which is how JavaScript compares.
    function intKey(key) {
      if (!/^(0|-?[1-9][0-9]{0,9})$/.test(key)) return null;
      const n = Number(key);
      return n >= -2147483648 && n <= 2147483647 ? n : null;
    }
    function compareKeys(a, b) {
      const x = intKey(a), y = intKey(b);
      if (x !== null && y !== null) return x - y;
      if (x !== null) return -1;
      if (y !== null) return 1;
      return a < b ? -1 : a > b ? 1 : 0;
    }

    async function loadTables() {
      const reply = await call("GET", "/.info/tables.json");
      if (reply.status !== 200) throw failure(reply);
      const list = $("tables");
      list.replaceChildren();
      for (const [name, info] of Object.entries(reply.value || {})) {
        const item = document.createElement("li");
        const button = document.createElement("button");
        button.type = "button";
        button.dataset.table = name;
        button.setAttribute("aria-current", String(name === state.table));
        const label = document.createElement("span");
        label.textContent = name;
        const count = document.createElement("span");
        count.className = "count";
        count.textContent = String(info.count);
        count.setAttribute("aria-label", info.count + " documents");
        button.append(label, count);
        button.addEventListener("click", () => openTable(name, null));
        item.append(button);
        list.append(item);
      }
      if (!list.children.length) say("This store has no tables yet: add one with 'folio tables add'.");
    }

    let tablesTimer = null;
    function refreshTablesSoon() {
      clearTimeout(tablesTimer);
      tablesTimer = setTimeout(() => loadTables().catch((e) => say(e.message, true)), 200);
    }

    // cursor: null (first page), {after: key} or {before: key}.
    function openTable(name, cursor) {
      if (state.stream) state.stream.close();
      state.table = name;
      state.cursor = cursor;
      state.rows = new Map();
      $("table-view").hidden = false;
      $("table-title").textContent = name;
      for (const b of document.querySelectorAll("#tables button")) {
        b.setAttribute("aria-current", String(b.dataset.table === name));
      }
      const params = { orderBy: JSON.stringify("$key") };
      if (cursor && cursor.after !== undefined) { params.startAfter = JSON.stringify(cursor.after); params.limitToFirst = pageSize; }
      else if (cursor && cursor.before !== undefined) { params.endBefore = JSON.stringify(cursor.before); params.limitToLast = pageSize; }
      else params.limitToFirst = pageSize;
      const stream = new EventSource(url("/" + encodeURIComponent(name) + ".json", params));
      state.stream = stream;
      stream.addEventListener("put", (e) => { apply(JSON.parse(e.data), false); });
      stream.addEventListener("patch", (e) => { apply(JSON.parse(e.data), true); });
      stream.addEventListener("cancel", () => {
        stream.close();
        say("The server ended the stream of " + name + ": it is no longer readable (was the table removed?).", true);
      });
      stream.addEventListener("auth_revoked", () => {
        stream.close();
        $("login").hidden = false;
        say("The server's token changed: sign in again.", true);
      });
      stream.onerror = () => {
        if (stream.readyState === EventSource.CLOSED) say("The live stream of " + name + " failed.", true);
      };
    }

    // An event from the stream: a put replaces the value at its path, a
    // patch sets each child it names; null removes.
    function apply(event, isPatch) {
      const parts = event.path.split("/").filter((p) => p);
      if (parts.length === 0) {
        if (isPatch) {
          for (const [key, value] of Object.entries(event.data || {})) setRow(key, value);
        } else {
          state.rows = new Map(Object.entries(event.data || {}));
        }
      } else {
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
        setRow(key, doc);
      }
      render();
      refreshTablesSoon();
    }

    function setRow(key, value) {
      if (value === null) state.rows.delete(key); else state.rows.set(key, value);
      if (state.doc && state.doc.table === state.table && state.doc.key === key) documentChanged();
    }

    function render() {
      const keys = [...state.rows.keys()].sort(compareKeys);
      const body = $("rows");
      body.replaceChildren();
      for (const key of keys) {
        const row = document.createElement("tr");
        row.dataset.key = key;
        const keyCell = document.createElement("td");
        const link = document.createElement("a");
        link.href = "#";
        link.textContent = key;
        link.addEventListener("click", (e) => { e.preventDefault(); openDocument(state.table, key); });
        keyCell.append(link);
        const docCell = document.createElement("td");
        docCell.className = "doc";
        docCell.textContent = JSON.stringify(state.rows.get(key));
        row.append(keyCell, docCell);
        body.append(row);
      }
      $("range").textContent = keys.length ? keys[0] + " … " + keys[keys.length - 1] : "no documents here";
      $("prev").disabled = !state.cursor;
      $("next").disabled = keys.length < pageSize;
      state.shown = keys;
    }

    async function openDocument(table, key) {
      state.doc = { table, key, etag: null, original: null, dirty: false };
      $("editor").hidden = false;
      $("key-row").hidden = true;
      $("delete").hidden = false;
      $("editor-title").textContent = table + " / " + key;
      await reloadDocument();
      $("text").focus();
    }

    async function reloadDocument() {
      const doc = state.doc;
      const reply = await call("GET", docPath(doc.table, doc.key), {
        params: { print: "pretty" }, headers: { "X-Firebase-ETag": "true" },
      });
      if (reply.status !== 200) throw failure(reply);
      if (state.doc !== doc) return;
      doc.etag = reply.etag;
      doc.original = reply.value;
      doc.dirty = false;
      $("text").value = reply.value === null ? "" : reply.text;
      $("changed").hidden = true;
      if (reply.value === null) say(doc.key + " no longer exists.", true);
    }

    // The open document changed on the server: show it, unless the text
    // has unsaved edits, which are kept (a save then gets 412 first).
    function documentChanged() {
      if (state.doc.dirty) { $("changed").hidden = false; return; }
      reloadDocument().catch((e) => say(e.message, true));
    }

    function newDocument() {
      state.doc = { table: state.table, key: null, etag: null, original: null, dirty: false, isNew: true };
      $("editor").hidden = false;
      $("key-row").hidden = false;
      $("delete").hidden = true;
      $("editor-title").textContent = "New document in " + state.table;
      $("key").value = "";
      $("text").value = "{\n  \n}";
      $("changed").hidden = true;
      $("key").focus();
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

    async function save() {
      const doc = state.doc;
      const value = parseText();
      if (doc.isNew) {
        const key = $("key").value.trim();
        let reply;
        if (key) {
          // Create only if absent: compare-and-set against null's ETag.
          const current = await call("GET", docPath(doc.table, key), { headers: { "X-Firebase-ETag": "true" } });
          if (current.value !== null) throw new Error(key + " already exists.");
          reply = await call("PUT", docPath(doc.table, key), { body: JSON.stringify(value), headers: { "if-match": current.etag } });
        } else {
          reply = await call("POST", "/" + encodeURIComponent(doc.table) + ".json", { body: JSON.stringify(value) });
        }
        if (reply.status !== 200) throw failure(reply);
        const made = key || reply.value.name;
        say("Added " + made + ".");
        await openDocument(doc.table, made);
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
        if (/[.$#\[\]\/\u0000-\u001f\u007f]/.test(k) || k === "") escaped.push([k, v]); else plain[k] = v;
      }
      const reply = await call("PATCH", docPath(doc.table, doc.key), {
        body: JSON.stringify(plain), headers: { "if-match": doc.etag },
      });
      if (reply.status === 200) {
        for (const [k, v] of escaped) {
          const column = docPath(doc.table, doc.key).replace(/\.json$/, "/" + encodeURIComponent(k) + ".json");
          const one = v === null ? await call("DELETE", column) : await call("PUT", column, { body: JSON.stringify(v) });
          if (one.status !== 200) throw failure(one);
        }
      }
      if (reply.status === 412) {
        doc.etag = reply.etag;
        doc.original = reply.value;
        $("changed").hidden = false;
        throw new Error("Not saved: " + doc.key + " changed since you opened it. Save again to replace that change.");
      }
      if (reply.status !== 200) throw failure(reply);
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
      closeEditor();
    }

    function closeEditor() {
      state.doc = null;
      $("editor").hidden = true;
    }

    function guarded(action) {
      return () => action().catch((e) => say(e.message, true));
    }

    $("text").addEventListener("input", () => { if (state.doc) state.doc.dirty = true; });
    $("save").addEventListener("click", guarded(save));
    $("delete").addEventListener("click", guarded(remove));
    $("close").addEventListener("click", closeEditor);
    $("new").addEventListener("click", newDocument);
    $("next").addEventListener("click", () => openTable(state.table, { after: state.shown[state.shown.length - 1] }));
    $("prev").addEventListener("click", () => {
      openTable(state.table, state.shown.length ? { before: state.shown[0] } : null);
    });
    $("login").addEventListener("submit", (e) => {
      e.preventDefault();
      token = $("token").value;
      sessionStorage.setItem("folio-token", token);
      $("login").hidden = true;
      say("");
      start();
    });

    function start() {
      loadTables().then(() => { if (state.table) openTable(state.table, state.cursor); })
        .catch((e) => say(e.message, true));
    }
    start();
    </script>
    </body>
    </html>
    """#
}
