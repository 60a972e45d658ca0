// gpuplan serve: the page's only script. It talks to the JSON API of the server that served it;
// charts are server-side SVG inside the report fragment, so no chart library is needed.
(function () {
  "use strict";
  const CFG = window.GPUPLAN;
  const L = CFG.labels;
  const lang = CFG.lang;
  const $ = (sel) => document.querySelector(sel);
  const yaml = $("#yaml");
  const form = $("#fields");
  const result = $("#result");
  const status = $("#status");
  const KEY = "gpuplan.scenario";
  let view = "compare";
  let last = { kind: "compare", data: null };  // what the result area shows (simulate/audit: their JSON)
  let seq = 0;
  let timer = null;

  function setStatus(kind, text, hint) {
    status.className = "status " + kind;
    status.textContent = text;
    if (hint) {
      const h = document.createElement("span");
      h.className = "hint";
      h.textContent = L.hint + ": " + hint;
      status.appendChild(h);
    }
  }

  function errorText(e) {
    const where = [e.file && e.file + (e.line ? ":" + e.line : ""), e.field].filter(Boolean).join(" · ");
    return L.error + ": " + (where ? where + ": " : "") + e.message;
  }

  async function post(url, body) {
    const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return r;
  }

  async function asError(r) {
    try { return await r.json(); } catch (_) { return { message: r.status + " " + r.statusText }; }
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
          input.step = f.type === "int" ? "1" : (f.name === "utilization" ? "0.05" : "0.5");
          if (f.name === "hours_per_day") { input.min = "0.5"; input.max = "24"; }
          if (f.name === "utilization") { input.min = "0.05"; input.max = "1"; }
          if (f.name === "days_per_week") { input.min = "1"; input.max = "7"; }
          if (f.type === "int" || f.name.endsWith("cost")) input.min = input.min || "0";
        }
        input.value = f.value === null || f.value === undefined ? "" : f.value;
        if (f.name === "hours_per_day") {
          row.classList.add("slider");
          const range = document.createElement("input");
          range.type = "range"; range.min = "0.5"; range.max = "24"; range.step = "0.5";
          range.value = input.value || "8";
          range.dataset.path = f.path + "#range";
          range.setAttribute("aria-label", fieldLabel(f.name) + " (" + group + ")");
          range.addEventListener("input", () => { input.value = range.value; });
          range.addEventListener("change", () => { input.value = range.value; fieldChanged(input); });
          input.addEventListener("input", () => { range.value = input.value; });
          row.appendChild(range);
        }
        input.addEventListener("change", () => fieldChanged(input));
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

  async function refreshFields() {
    const r = await post("/api/scenario/fields", { scenario: yaml.value });
    if (r.ok) buildForm((await r.json()).fields);
  }

  async function fieldChanged(input) {
    if (input.value === "") return;
    const set = {};
    set[input.dataset.path] = input.type === "number" ? Number(input.value) : input.value;
    const r = await post("/api/scenario/edit", { scenario: yaml.value, set: set });
    if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
    yaml.value = (await r.json()).scenario;
    save();
    refresh();
  }

  // --- results -------------------------------------------------------------------------------
  function save() { try { sessionStorage.setItem(KEY, yaml.value); } catch (_) { /* private mode */ } }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(() => { save(); refresh(); refreshFields(); }, 350);
  }

  async function refresh() {
    const my = ++seq;
    last = { kind: view, data: null };
    setStatus("busy", L.working);
    result.classList.add("stale");
    let r;
    try {
      if (view === "plan") {
        const pr = await post("/api/plan", { scenario: yaml.value, lang: lang });
        if (!pr.ok) { r = pr; } else {
          last.data = await pr.json();
          r = await post("/api/report", { kind: "plan", data: last.data, lang: lang, fragment: true });
        }
      } else {
        r = await post("/api/report", { kind: "compare", scenario: yaml.value, lang: lang, fragment: true });
      }
    } catch (err) {
      if (my === seq) setStatus("err", L.error + ": " + err);
      return;
    }
    if (my !== seq) return;  // a newer edit is on its way
    if (!r.ok) {
      const e = await asError(r);
      setStatus("err", errorText(e), e.hint);
      return;
    }
    result.innerHTML = await r.text();
    result.classList.remove("stale");
    setStatus("ok", L.ok);
  }

  async function showData(kind, data) {
    last = { kind: kind, data: data };
    const r = await post("/api/report", { kind: kind, data: data, lang: lang, fragment: true });
    if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
    result.innerHTML = await r.text();
    result.classList.remove("stale");
    setStatus("ok", L.ok);
  }

  async function upload(url, fd, kind) {
    setStatus("busy", L.working);
    const r = await fetch(url, { method: "POST", body: fd });
    if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
    await showData(kind, await r.json());
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

  async function downloadHtml() {
    const body = last.data ? { kind: last.kind, data: last.data, lang: lang }
                           : { kind: "compare", scenario: yaml.value, lang: lang };
    const r = await post("/api/report", body);
    if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
    download(await r.blob(), "gpuplan-" + body.kind + "-" + lang + ".html");
  }

  async function downloadJson() {
    let data = last.data;
    if (!data) {
      const r = await post("/api/compare", { scenario: yaml.value, lang: lang });
      if (!r.ok) { const e = await asError(r); setStatus("err", errorText(e), e.hint); return; }
      data = await r.json();
    }
    download(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" }),
             "gpuplan-" + last.kind + ".json");
  }

  // --- wiring --------------------------------------------------------------------------------
  yaml.addEventListener("input", schedule);
  $("#lang").addEventListener("change", (ev) => { save(); location.search = "?lang=" + ev.target.value; });
  $("#dl-html").addEventListener("click", downloadHtml);
  $("#dl-json").addEventListener("click", downloadJson);
  for (const b of document.querySelectorAll(".viewbar .view")) {
    b.addEventListener("click", () => {
      if (b.disabled) return;
      view = b.dataset.view;
      for (const o of document.querySelectorAll(".viewbar .view")) o.classList.toggle("on", o === b);
      refresh();
    });
  }
  const sim = $("#sim-form");
  $("#run-sim").addEventListener("click", () => {
    const fd = new FormData(sim);
    fd.delete("use_scenario");
    if (sim.elements.use_scenario.checked) fd.append("scenario", yaml.value);
    fd.append("lang", lang);
    upload("/api/simulate", fd, "simulate");
  });
  $("#run-audit").addEventListener("click", () => {
    const fd = new FormData($("#audit-form"));
    fd.append("lang", lang);
    upload("/api/audit", fd, "audit");
  });

  let saved = null;
  try { saved = sessionStorage.getItem(KEY); } catch (_) { /* private mode */ }
  yaml.value = saved || CFG.starter;
  refreshFields();
  refresh();
})();
