// gpuplan serve: the page's only script. It talks to the JSON API of the server that served it;
// charts are server-side SVG inside the report fragment, so no chart library is needed.
//
// The status is honest: "stale" as soon as an input differs from what the result was computed from,
// "computing" while a request runs, "up to date" only when the result shown is that of the current input,
// and an error (with the message beside the field it names) when the server refuses the input.
(function () {
  "use strict";
  const CFG = window.GPUPLAN;
  const L = CFG.labels;
  const lang = CFG.lang;
  const DEBOUNCE_MS = 300;
  const $ = (sel) => document.querySelector(sel);
  const yaml = $("#yaml");
  const form = $("#fields");
  const result = $("#result");
  const status = $("#status");
  const KEY = "gpuplan.scenario";
  let view = "compare";
  let last = { kind: "compare", data: null };  // what the result area shows (plan/simulate/audit: their JSON)
  let seq = 0;          // the newest result request; older answers are dropped
  let edits = 0;        // input changes so far; a result is up to date only if none came after its request
  let timer = null;     // the debounce timer
  let pending = {};     // form fields typed but not yet written into the YAML: path -> input
  let refreshFieldsAfter = false;
  let planDemand = null;     // {csv, rows, mode}: the audit's demand curve, used as plan demand
  let auditDemand = null;    // the last audit's demand curve (offered to the plan)
  const VIEWS = ["compare", "plan", "commit", "quotes"];  // the views of the scenario (and the quote history)

  // --- status --------------------------------------------------------------------------------
  function setStatus(kind, text, hint, gotoEl) {
    status.className = "status " + kind;
    status.textContent = text;
    if (gotoEl) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "goto secondary";
      b.textContent = L.show_field;
      b.addEventListener("click", () => { setPane(gotoEl.closest("#editor") ? "edit" : "result"); gotoEl.scrollIntoView({ block: "center" }); gotoEl.focus(); });
      status.appendChild(b);
    }
    if (hint) {
      const h = document.createElement("span");
      h.className = "hint";
      h.textContent = L.hint + ": " + hint;
      status.appendChild(h);
    }
  }

  function markStale() {
    edits++;
    result.classList.add("stale");
    setStatus("stale", L.stale);
    updateBars();  // no export of a plan the input no longer matches
  }

  function upToDate(atEdits) {
    // only when nothing was typed since the request started and nothing waits to be sent
    if (atEdits === edits && timer === null && Object.keys(pending).length === 0) {
      result.classList.remove("stale");
      setStatus("ok", L.ok);
    } else {
      result.classList.add("stale");
      setStatus("stale", L.stale);
    }
    updateBars();
  }

  function errorText(e) {
    const where = [e.file && e.file + (e.line ? ":" + e.line : ""), e.field].filter(Boolean).join(" · ");
    return L.error + ": " + (where ? where + ": " : "") + e.message;
  }

  // --- messages beside fields -----------------------------------------------------------------
  let errId = 0;

  function fieldMessage(el) {
    // the message element right after the field's row (the form) or the field's label (the tools)
    const anchor = el.closest("label") || el;
    let msg = anchor.nextElementSibling;
    if (!msg || !msg.classList.contains("field-msg")) {
      msg = document.createElement("div");
      msg.className = "field-error field-msg";
      msg.setAttribute("role", "alert");
      msg.id = "field-error-" + (++errId);
      anchor.after(msg);
    }
    return msg;
  }

  function markField(el, e) {
    el.setAttribute("aria-invalid", "true");
    el.classList.add("invalid");
    const msg = fieldMessage(el);
    msg.textContent = e.message;
    if (e.hint) {
      const h = document.createElement("span");
      h.className = "hint";
      h.textContent = L.hint + ": " + e.hint;
      msg.appendChild(h);
    }
    msg.hidden = false;
    el.setAttribute("aria-describedby", msg.id);
  }

  function clearField(el) {
    el.removeAttribute("aria-invalid");
    el.classList.remove("invalid");
    const anchor = el.closest("label") || el;
    const msg = anchor.nextElementSibling;
    if (msg && msg.classList.contains("field-msg")) msg.remove();
    el.removeAttribute("aria-describedby");
  }

  function clearFormErrors(root) {
    for (const el of root.querySelectorAll('[aria-invalid="true"]')) clearField(el);
  }

  function showYamlError(e) {
    const box = $("#yaml-error");
    box.textContent = errorText(e);
    if (e.hint) {
      const h = document.createElement("span");
      h.className = "hint";
      h.textContent = L.hint + ": " + e.hint;
      box.appendChild(h);
    }
    box.hidden = false;
    yaml.setAttribute("aria-invalid", "true");
    yaml.classList.add("invalid");
  }

  function clearYamlError() {
    $("#yaml-error").hidden = true;
    yaml.removeAttribute("aria-invalid");
    yaml.classList.remove("invalid");
  }

  // A scenario error: beside its form field when the form has one, else beside the YAML editor.
  function showScenarioError(e) {
    const el = e.field ? form.querySelector('input[data-path="' + CSS.escape(e.field) + '"]') : null;
    if (el) {
      markField(el, e);  // the message is beside the field; the status says where to look
      setStatus("err", L.invalid, null, el);
    } else {
      showYamlError(e);
      setStatus("err", errorText(e), e.hint, yaml);
    }
    result.classList.add("stale");
  }

  async function post(url, body) {
    return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  }

  async function asError(r) {
    try { return await r.json(); } catch (_) { return { message: r.status + " " + r.statusText }; }
  }

  // --- panes (phones) ---------------------------------------------------------------------------
  function setPane(p) {
    if (document.body.dataset.pane !== p && matchMedia("(max-width: 900px)").matches) window.scrollTo(0, 0);
    document.body.dataset.pane = p;
    for (const b of document.querySelectorAll("nav.panebar .pane")) {
      const on = b.dataset.pane === p;
      b.classList.toggle("on", on);
      b.setAttribute("aria-pressed", on ? "true" : "false");
    }
  }

  // --- the form ------------------------------------------------------------------------------
  function fieldLabel(name) { return L["field_" + name] || name; }

  function buildForm(fields) {
    const active = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.path : null;
    form.textContent = "";
    const groups = new Map();
    for (const f of fields) {
      if (!groups.has(f.group)) groups.set(f.group, []);
      groups.get(f.group).push(f);
    }
    for (const [group, items] of groups) {
      const fs = document.createElement("fieldset");
      const lg = document.createElement("legend");
      lg.textContent = group || L.team_group;
      fs.appendChild(lg);
      for (const f of items) {
        const row = document.createElement("label");
        row.className = "row";
        const span = document.createElement("span");
        span.textContent = fieldLabel(f.name);
        row.appendChild(span);
        const input = document.createElement("input");
        input.dataset.path = f.path;
        input.name = f.path;
        input.placeholder = L.default_placeholder;
        if (f.type === "text") {
          input.type = "text";
        } else {
          input.type = "number";
          input.step = "any";
          input.inputMode = f.type === "int" ? "numeric" : "decimal";
        }
        input.value = f.value === null || f.value === undefined ? "" : f.value;
        input.dataset.was = input.value;
        if (f.name === "hours_per_day") {
          row.classList.add("slider");
          const range = document.createElement("input");
          range.type = "range"; range.min = "0.5"; range.max = "24"; range.step = "0.5";
          range.value = input.value || "8";
          range.dataset.path = f.path + "#range";
          range.setAttribute("aria-label", fieldLabel(f.name) + " (" + group + ")");
          range.addEventListener("input", () => { input.value = range.value; fieldTyped(input); });
          input.addEventListener("input", () => { if (input.value !== "") range.value = input.value; });
          row.appendChild(range);
        }
        input.addEventListener("input", () => fieldTyped(input));
        input.addEventListener("change", () => fieldTyped(input));
        row.appendChild(input);
        fs.appendChild(row);
      }
      form.appendChild(fs);
    }
    if (active) {
      const el = form.querySelector('[data-path="' + CSS.escape(active) + '"]');
      if (el) el.focus();
    }
  }

  function setGpuChoices(gpus) {
    const dl = $("#quote-gpus");
    dl.textContent = "";
    for (const g of gpus) { const o = document.createElement("option"); o.value = g; dl.appendChild(o); }
    for (const sel of [document.forms["sim-form"].elements.gpu, document.forms["audit-form"].elements.gpu_type]) {
      const keep = sel.value;
      sel.textContent = "";
      for (const g of gpus) {
        const o = document.createElement("option");
        o.value = g; o.textContent = g;
        sel.appendChild(o);
      }
      if (gpus.includes(keep)) sel.value = keep;
    }
  }

  function setOfferChoices(ids) {
    const sel = document.forms["audit-form"].elements.offer;
    const keep = sel.value;
    while (sel.options.length > 1) sel.remove(1);
    for (const id of ids) {
      const o = document.createElement("option");
      o.value = id; o.textContent = id;
      sel.appendChild(o);
    }
    if (ids.includes(keep)) sel.value = keep;
  }

  async function refreshFields() {
    const r = await post("/api/scenario/fields", { scenario: yaml.value });
    if (!r.ok) return;  // the result request reports the error
    const body = await r.json();
    buildForm(body.fields);
    setGpuChoices(body.gpus || []);
    setOfferChoices(body.offers || []);
  }

  // A field changed: the result is stale now; the value is written into the YAML after a pause.
  function fieldTyped(input) {
    if (input.value === input.dataset.was && !(input.dataset.path in pending)
        && input.getAttribute("aria-invalid") !== "true") return;
    clearField(input);
    pending[input.dataset.path] = input;
    markStale();
    schedule();
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(flush, DEBOUNCE_MS);
  }

  // Check what the browser can (a number field that is not a number, an empty field), then write the
  // pending fields into the YAML (the server keeps its comments), then recompute.
  async function flush() {
    timer = null;
    const fields = pending;
    pending = {};
    const set = {};
    let bad = null;
    for (const [path, input] of Object.entries(fields)) {
      if (input.type === "number" && input.validity.badInput) {
        bad = bad || input; markField(input, { message: L.enter_number });
      } else if (input.value.trim() === "") {
        if (input.dataset.was !== "") { bad = bad || input; markField(input, { message: L.enter_value }); }
      } else {
        set[path] = input.type === "number" ? Number(input.value) : input.value;
      }
    }
    if (bad) {
      result.classList.add("stale");
      setStatus("err", L.invalid, null, bad);
      return;
    }
    if (Object.keys(set).length) {
      const at = edits;
      setStatus("busy", L.working);
      const r = await post("/api/scenario/edit", { scenario: yaml.value, set: set });
      if (!r.ok) {
        const e = await asError(r);
        if (at === edits) showScenarioError(e);
        return;
      }
      const text = (await r.json()).scenario;
      if (at !== edits && Object.keys(pending).length) {
        // a newer edit is waiting: it will be written into this text
        yaml.value = text;
        return;
      }
      yaml.value = text;
      for (const input of Object.values(fields)) input.dataset.was = input.value;
    }
    save();
    if (refreshFieldsAfter) { refreshFieldsAfter = false; refreshFields(); }
    refresh();
  }

  // --- results -------------------------------------------------------------------------------
  function save() { try { sessionStorage.setItem(KEY, yaml.value); } catch (_) { /* private mode */ } }

  async function refresh() {
    const my = ++seq;
    const at = edits;
    if (!VIEWS.includes(view)) view = "compare";
    last = { kind: view, data: null };
    setStatus("busy", L.working);
    if (view === "quotes") {
      updateBars();
      const ok = await loadQuotes();
      if (my === seq && ok) upToDate(at);
      return;
    }
    result.classList.add("stale");
    updateBars();
    let r;
    try {
      if (view === "commit") {
        clearFormErrors($("#commit-bar"));
        r = await post("/api/report", { kind: "commit", scenario: yaml.value, lang: lang, fragment: true,
                                        paths: Number($("#commit-paths").value), seed: Number($("#commit-seed").value) });
      } else if (view === "plan") {
        const body = { scenario: yaml.value, lang: lang };
        if (planDemand) body.demand_csv = planDemand.csv;
        body.queueing = $("#plan-queueing").value;
        const pr = await post("/api/plan", body);
        if (!pr.ok) { r = pr; } else {
          const data = await pr.json();
          if (my !== seq) return;
          last.data = data;
          r = await post("/api/report", { kind: "plan", data: data, lang: lang, fragment: true });
        }
      } else {
        r = await post("/api/report", { kind: "compare", scenario: yaml.value, lang: lang, fragment: true });
      }
    } catch (err) {
      if (my === seq) setStatus("err", L.error + ": " + err);
      return;
    }
    if (my !== seq) return;  // a newer request is on its way
    if (!r.ok) {
      const e = await asError(r);
      if (my === seq && at === edits) {
        const bar = view === "commit" && (e.field === "paths" || e.field === "seed") ? $("#commit-" + e.field) : null;
        if (bar) { markField(bar, e); setStatus("err", L.invalid, null, bar); result.classList.add("stale"); }
        else showScenarioError(e);
      }
      updateBars();
      return;
    }
    const html = await r.text();
    if (my !== seq) return;
    result.innerHTML = html;
    clearFormErrors(form);
    clearYamlError();
    updateBars();
    upToDate(at);
  }

  async function showData(kind, data) {
    view = kind;
    for (const o of document.querySelectorAll(".viewbar .view")) o.classList.remove("on");
    const my = ++seq;
    last = { kind: kind, data: data };
    const r = await post("/api/report", { kind: kind, data: data, lang: lang, fragment: true });
    if (my !== seq) return;
    if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
    result.innerHTML = await r.text();
    updateBars();
    upToDate(edits);
  }

  // A tool's error: beside the tool's field it names (`--wait` is the field `wait`), else under its button.
  function toolError(toolForm, e) {
    const name = (e.field || "").replace(/^-+/, "").replace(/-/g, "_");
    const el = name && toolForm.elements[name] && toolForm.elements[name].tagName ? toolForm.elements[name] : null;
    if (el) {
      markField(el, e);
    } else {
      const box = toolForm.querySelector(".tool-error");
      box.textContent = errorText(e) + (e.hint ? " " + L.hint + ": " + e.hint : "");
      box.hidden = false;
    }
    setStatus("err", errorText(e), e.hint, el || toolForm.querySelector("button[type=submit]"));
  }

  async function upload(url, toolForm, fd, kind) {
    clearFormErrors(toolForm);
    toolForm.querySelector(".tool-error").hidden = true;
    setStatus("busy", L.working);
    let r;
    try {
      r = await fetch(url, { method: "POST", body: fd });
    } catch (err) {
      setStatus("err", L.error + ": " + err);
      return null;
    }
    if (!r.ok) { toolError(toolForm, await asError(r)); return null; }
    const data = await r.json();
    if (kind === "audit") {
      auditDemand = null;
      if (typeof data.demand_csv === "string" && data.demand) {
        auditDemand = { csv: data.demand_csv, rows: data.demand.rows, mode: data.demand.mode };
        delete data.demand_csv;  // the rest is exactly `audit --demand-out demand.csv -o json`
      }
    }
    setPane("result");  // on a phone the answer is in the other pane
    await showData(kind, data);
    return data;
  }

  // --- the audit -> plan -> export path ----------------------------------------------------------
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, (_, k) => String(values[k]));
  }

  function updateBars() {
    const db = $("#demand-bar");
    db.hidden = !(auditDemand && last.kind === "audit");
    if (!db.hidden) db.querySelector(".text").textContent = fill(L.audit_demand_ready, auditDemand);
    const pb = $("#plan-bar");
    pb.hidden = view !== "plan";
    pb.querySelector(".text").textContent = !planDemand ? L.plan_demand_schedules
      : fill(planDemand.file ? L.plan_demand_file : L.plan_demand_audit, planDemand);
    $("#clear-demand").hidden = !planDemand;
    $("#commit-bar").hidden = view !== "commit";
    $("#quotes").hidden = view !== "quotes";
    result.hidden = view === "quotes";
    $("#dl-html").disabled = view === "quotes";
    const ready = last.kind === "plan" && last.data !== null && !result.classList.contains("stale");
    for (const b of pb.querySelectorAll("button.export")) b.disabled = !ready;
  }

  function setView(v) {
    view = v;
    for (const o of document.querySelectorAll(".viewbar .view")) o.classList.toggle("on", o.dataset.view === v);
    updateBars();
    refresh();
  }

  const EXPORT_FILES = { kueue: "gpuplan-kueue.yaml", slurm: "gpuplan-slurm.conf", volcano: "gpuplan-volcano.yaml",
                         skypilot: "gpuplan-skypilot.yaml" };

  async function exportPlan(target) {
    if (last.kind !== "plan" || !last.data || result.classList.contains("stale")) return;
    setStatus("busy", L.working);
    const r = await post("/api/export", { target: target, plan: last.data });
    if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
    const out = await r.json();
    download(new Blob([out.stdout], { type: "text/plain" }), EXPORT_FILES[target]);
    upToDate(edits);
  }

  // --- the quote history ---------------------------------------------------------------------
  const qform = document.forms["quote-form"];
  const qimport = document.forms["import-form"];
  const groupKey = (g) => g.gpu + "|" + g.mode;

  function setGroups(sel, groups, keepFirst) {
    const keep = sel.value;
    while (sel.options.length > keepFirst) sel.remove(keepFirst);
    for (const g of groups) {
      const o = document.createElement("option");
      o.value = groupKey(g);
      o.textContent = g.gpu + " · " + g.mode + " (" + fill(L.quotes_count, { n: g.quotes }) + ")";
      sel.appendChild(o);
    }
    if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
  }

  function query(key, extra) {
    const q = new URLSearchParams(extra || {});
    if (key) { const [g, m] = key.split("|"); q.set("gpu", g); q.set("mode", m); }
    return q.toString();
  }

  // The chart of the chosen (GPU, mode), then the table (all quotes, or those of the filter's group).
  async function loadQuotes() {
    let r = await fetch("/api/quotes/chart?" + query($("#quote-group").value, { lang: lang }));
    if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return false; }
    const chart = await r.json();
    setGroups($("#quote-group"), chart.groups, 0);
    setGroups($("#quote-filter"), chart.groups, 1);
    if (chart.series.length) $("#quote-group").value = groupKey(chart);
    $("#quote-chart").innerHTML = chart.svg;  // drawn by the server from the quotes; labels escaped there
    const pct = (x) => (x >= 0 ? "+" : "") + (x * 100).toFixed(1) + "%";
    $("#quote-trend").textContent = chart.trend ? chart.gpu + " · " + chart.mode + ": " + fill(L.quotes_drift,
      { drift: pct(chart.trend.drift_per_year), low: pct(chart.trend.drift_low), high: pct(chart.trend.drift_high) }) : "";
    const notes = [];
    if (!chart.series.length) notes.push(chart.groups.length ? L.quotes_no_chart : L.quotes_none);
    else if (!chart.trend) notes.push(L.quotes_no_trend);
    if (chart.other_currencies && chart.other_currencies.length) {
      notes.push(fill(L.quotes_other_currencies, { currencies: chart.other_currencies.join(", "), currency: chart.currency }));
    }
    $("#quote-chart-note").textContent = notes.join(" ");
    r = await fetch("/api/quotes?" + query($("#quote-filter").value));
    if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return false; }
    const rows = await r.json();
    const body = $("#quote-table tbody");
    body.textContent = "";
    for (const q of rows.slice().reverse()) {  // newest first
      const tr = document.createElement("tr");
      const cells = [q.date, q.provider, q.gpu, q.mode, q.term_months ? q.term_months + "mo" : "",
                     q.price.toLocaleString(lang === "zh" ? "zh-CN" : "en-US") + " " + q.currency, q.per,
                     q.price_per_gpu_hour.toFixed(4), q.note];
      cells.forEach((c, i) => {
        const td = document.createElement("td");
        td.textContent = c;
        if (i === 5 || i === 7) td.className = "n";
        tr.appendChild(td);
      });
      body.appendChild(tr);
    }
    $("#quote-count").textContent = fill(L.quotes_count, { n: rows.length });
    $("#quote-empty").hidden = rows.length > 0;
    return true;
  }

  async function addQuote() {
    clearFormErrors(qform);
    qform.querySelector(".tool-error").hidden = true;
    const el = qform.elements;
    const price = el.price.validity.badInput ? "?" : el.price.value;
    const body = { provider: el.provider.value, gpu: el.gpu.value, mode: el.mode.value, term: el.term.value || null,
                   price: price, per: el.per.value, currency: el.currency.value.trim().toUpperCase(),
                   date: el.date.value, note: el.note.value };
    setStatus("busy", L.working);
    let r;
    try { r = await post("/api/quotes", body); } catch (err) { setStatus("err", L.error + ": " + err); return; }
    if (!r.ok) { toolError(qform, await asError(r)); return; }
    const out = await r.json();
    el.price.value = ""; el.note.value = "";
    const key = out.quote.gpu + "|" + out.quote.mode;
    await loadQuotes();
    if ([...$("#quote-group").options].some((o) => o.value === key)) { $("#quote-group").value = key; await loadQuotes(); }
    setStatus("ok", fill(L.quotes_added, { n: out.added }));
  }

  async function importQuotes() {
    clearFormErrors(qimport);
    qimport.querySelector(".tool-error").hidden = true;
    const fd = new FormData(qimport);
    setStatus("busy", L.working);
    let r;
    try { r = await fetch("/api/quotes/import", { method: "POST", body: fd }); }
    catch (err) { setStatus("err", L.error + ": " + err); return; }
    if (!r.ok) {
      // every import error (a row's column, the file's size) is the file's: shown under the file field
      const e = await asError(r);
      const file = qimport.elements.file;
      markField(file, { message: errorText(e), hint: e.hint });
      setStatus("err", errorText(e), e.hint, file);
      return;
    }
    const out = await r.json();
    qimport.reset();
    await loadQuotes();
    setStatus("ok", fill(L.quotes_imported, { n: out.imported, file: out.file }));
  }

  // --- downloads -----------------------------------------------------------------------------
  function download(blob, name) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  function commitBody() {
    return { scenario: yaml.value, lang: lang, paths: Number($("#commit-paths").value),
             seed: Number($("#commit-seed").value) };
  }

  async function downloadHtml() {
    const body = last.kind === "commit" ? Object.assign({ kind: "commit" }, commitBody())
      : last.data ? { kind: last.kind, data: last.data, lang: lang }
      : { kind: "compare", scenario: yaml.value, lang: lang };
    const r = await post("/api/report", body);
    if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
    download(await r.blob(), "gpuplan-" + body.kind + "-" + lang + ".html");
  }

  async function downloadPack() {  // the decision pack: `gpuplan report` of the scenario in the editor
    const body = Object.assign({ kind: "pack" }, commitBody());
    const r = await post("/api/report", body);
    if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
    download(await r.blob(), "gpuplan-pack-" + lang + ".html");
  }

  async function downloadJson() {
    let data = last.data;
    if (last.kind === "quotes") {
      const r = await fetch("/api/quotes");
      if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
      data = await r.json();
    } else if (!data && last.kind === "commit") {
      const r = await post("/api/commit", commitBody());
      if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
      data = await r.json();
    } else if (!data) {
      const r = await post("/api/compare", { scenario: yaml.value, lang: lang });
      if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
      data = await r.json();
    }
    download(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" }),
             "gpuplan-" + last.kind + ".json");
  }

  // --- wiring --------------------------------------------------------------------------------
  yaml.addEventListener("input", () => {
    clearYamlError();
    refreshFieldsAfter = true;
    markStale();
    schedule();
  });
  $("#lang").addEventListener("change", (ev) => { save(); location.search = "?lang=" + ev.target.value; });
  $("#dl-html").addEventListener("click", downloadHtml);
  $("#dl-json").addEventListener("click", downloadJson);
  $("#dl-pack").addEventListener("click", downloadPack);
  for (const b of document.querySelectorAll("nav.panebar .pane")) b.addEventListener("click", () => setPane(b.dataset.pane));
  for (const b of document.querySelectorAll(".viewbar .view")) {
    b.addEventListener("click", () => { if (!b.disabled) setView(b.dataset.view); });
  }
  for (const b of document.querySelectorAll("#plan-bar button.export")) {
    b.addEventListener("click", () => exportPlan(b.dataset.target));
  }
  $("#use-demand").addEventListener("click", () => {
    planDemand = auditDemand;
    setView("plan");
  });
  $("#clear-demand").addEventListener("click", () => { planDemand = null; $("#demand-file").value = ""; setView("plan"); });
  $("#demand-file").addEventListener("change", async (ev) => {
    const f = ev.target.files[0];
    if (!f) return;
    const csv = await f.text();
    const rows = csv.split("\n").filter((l) => l.trim()).length - 1;
    planDemand = { csv: csv, rows: Math.max(rows, 0), mode: "file", file: f.name };
    setView("plan");
  });
  $("#plan-queueing").addEventListener("change", () => { markStale(); setView("plan"); });
  for (const id of ["#commit-paths", "#commit-seed"]) {
    $(id).addEventListener("input", () => { clearField($(id)); markStale(); schedule(); });
  }
  $("#run-commit").addEventListener("click", () => { clearTimeout(timer); timer = null; refresh(); });
  $("#add-quote").addEventListener("click", addQuote);
  $("#import-quotes").addEventListener("click", importQuotes);
  $("#quote-group").addEventListener("change", () => loadQuotes());
  $("#quote-filter").addEventListener("change", () => loadQuotes());
  for (const f of [qform, qimport]) {
    for (const el of f.elements) el.addEventListener("input", () => clearField(el));
  }
  qform.elements.date.value = new Date().toISOString().slice(0, 10);

  const sim = document.forms["sim-form"];
  const aud = document.forms["audit-form"];
  for (const f of [sim, aud]) {
    for (const el of f.elements) el.addEventListener("input", () => clearField(el));
  }
  sim.elements.use_scenario.addEventListener("change", () => { sim.elements.gpu.disabled = !sim.elements.use_scenario.checked; });
  $("#run-sim").addEventListener("click", () => {
    const fd = new FormData(sim);
    fd.delete("use_scenario");
    fd.delete("gpu");
    if (sim.elements.use_scenario.checked) {
      fd.append("scenario", yaml.value);
      if (sim.elements.gpu.value) fd.append("gpu", sim.elements.gpu.value);
    }
    fd.append("lang", lang);
    upload("/api/simulate", sim, fd, "simulate");
  });
  $("#run-audit").addEventListener("click", () => {
    const fd = new FormData(aud);
    if (!aud.elements.demand_mode.value) { fd.delete("demand_mode"); fd.delete("gpu_type"); }
    if (aud.elements.offer.value) fd.append("scenario", yaml.value); else fd.delete("offer");
    fd.append("lang", lang);
    upload("/api/audit", aud, fd, "audit");
  });

  let saved = null;
  try { saved = sessionStorage.getItem(KEY); } catch (_) { /* private mode */ }
  yaml.value = saved || CFG.starter;
  updateBars();
  refreshFields();
  refresh();
})();
