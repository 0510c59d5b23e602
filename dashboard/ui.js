// Small DOM helpers. Text always goes in as text (textContent), never as
// markup: what merchants and destinations send is shown, not interpreted.

// h("a", {href: "#/x", class: "btn", on: {click: fn}}, "text", child, ...)
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "on") {
      for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    } else if (k === "class") {
      el.className = v;
    } else if (k === "dataset") {
      Object.assign(el.dataset, v);
    } else if (v === true) {
      el.setAttribute(k, "");
    } else {
      el.setAttribute(k, String(v));
    }
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}


// Every time on the dashboard is Brasília time, the time of the merchant's
// bank, of a report's day and of its day picker, and says so: "BRT". (No
// daylight saving since 2019; the browser's own zone data decides.)
const BRASILIA = new Intl.DateTimeFormat("en-CA", {
  timeZone: "America/Sao_Paulo", hourCycle: "h23", year: "numeric", month: "2-digit",
  day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
});

// "2026-11-23 02:54:38 BRT" (Brasília time) from RFC 3339, the spec's
// "YYYY-MM-DD HH:MM:SS" (UTC) or milliseconds; "—" for none.
export function when(v) {
  if (v === null || v === undefined || v === "") return "—";
  let d;
  if (typeof v === "number") d = new Date(v);
  else if (/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(v)) d = new Date(v.replace(" ", "T") + "Z");
  else d = new Date(v);
  if (isNaN(d)) return String(v);
  const p = {};
  for (const part of BRASILIA.formatToParts(d)) p[part.type] = part.value;
  return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + ":" + p.second + " BRT";
}

// "R$ 1.234,56" from integer cents, by the digits of the integer as text:
// no division, so no float ever rounds a centavo.
export function money(cents) {
  if (!Number.isSafeInteger(cents)) return "—";
  const digits = String(Math.abs(cents)).padStart(3, "0");
  const reais = digits.slice(0, -2).replace(/\B(?=(\d{3})+$)/g, ".");
  const s = "R$ " + reais + "," + digits.slice(-2);
  return cents < 0 ? "−" + s : s;
}

// "12 minutes ago" of an instant (as when() takes it), from the browser's
// clock; "—" for none.
export function ago(v) {
  if (v === null || v === undefined || v === "") return "—";
  const t = typeof v === "number" ? v : Date.parse(v);
  if (isNaN(t)) return "—";
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 0) return "in the future (clocks differ)";
  const n = (k, unit) => k + " " + unit + (k === 1 ? "" : "s") + " ago";
  if (s < 60) return n(s, "second");
  if (s < 3600) return n(Math.floor(s / 60), "minute");
  if (s < 172800) return n(Math.floor(s / 3600), "hour");
  return n(Math.floor(s / 86400), "day");
}

export function badge(text, kind) {
  return h("span", { class: "badge " + (kind || String(text).toLowerCase()) }, text);
}

export function dl(pairs) {
  const el = h("dl", { class: "fields" });
  for (const [k, v] of pairs) {
    if (v === undefined) continue;
    el.append(h("dt", {}, k), h("dd", {}, v === null || v === "" ? "—" : v));
  }
  return el;
}

// columns: [{title, cell: (row) => node|string, class}]
export function table(columns, rows, opts = {}) {
  const body = h("tbody");
  for (const r of rows) {
    const tr = h("tr", opts.href ? { class: "link", dataset: { href: opts.href(r) } } : {});
    for (const c of columns) tr.append(h("td", { class: c.class }, c.cell(r)));
    if (opts.href) {
      tr.addEventListener("click", (ev) => {
        if (ev.target.closest("button, a")) return;
        location.hash = tr.dataset.href;
      });
    }
    body.append(tr);
  }
  const t = h("table", { class: opts.class || "list" },
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { class: c.class }, c.title)))), body);
  if (!rows.length) {
    body.append(h("tr", {}, h("td", { class: "empty", colspan: columns.length }, opts.empty || "Nothing here.")));
  }
  return t;
}

let toastTimer = null;

export function toast(text, kind) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.className = kind || "";
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 6000);
}

export function errorBox(err) {
  return h("p", { class: "error", role: "alert" }, err && err.message ? err.message : String(err));
}

// Ask with the page's <dialog>; resolves to true when confirmed.
export function confirmDialog(text, okLabel) {
  const dlg = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-ok").textContent = okLabel || "Confirm";
  return new Promise((resolve) => {
    dlg.addEventListener("close", () => resolve(dlg.returnValue === "ok"), { once: true });
    dlg.returnValue = "";
    dlg.showModal();
  });
}

// Copy text to the clipboard (the async API where the page is a secure
// context, else a hidden selection).
export async function copy(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const ta = h("textarea", { class: "offscreen", readonly: true });
  ta.value = text;
  document.body.append(ta);
  ta.select();
  const ok = document.execCommand("copy");
  ta.remove();
  if (!ok) throw new Error("the browser refused to copy");
}

export function copyButton(getText, label) {
  const b = h("button", { type: "button", class: "quiet copy" }, label || "Copy");
  b.addEventListener("click", async () => {
    try {
      await copy(getText());
      b.textContent = "Copied";
      setTimeout(() => { b.textContent = label || "Copy"; }, 2000);
    } catch (e) {
      toast("Copy failed: " + e.message, "bad");
    }
  });
  return b;
}

// A list with a "Load more" button: load(cursor) resolves to {rows, next}.
// Resolves to the element once the first page is in.
export async function listView({ load, columns, href, empty }) {
  const box = h("div", { class: "listview" });
  const rows = [];
  let next = null;
  const more = h("button", { type: "button", class: "quiet more" }, "Load more");
  const draw = () => {
    const t = table(columns, rows, { href, empty });
    const old = box.querySelector("table");
    if (old) old.replaceWith(t);
    else box.prepend(t);
    more.hidden = !next;
  };
  const page = async (cursor) => {
    const p = await load(cursor);
    rows.push(...p.rows);
    next = p.next;
    draw();
  };
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      await page(next);
    } catch (e) {
      box.append(errorBox(e));
    } finally {
      more.disabled = false;
    }
  });
  box.append(more);
  await page(null);
  return box;
}

export function pretty(json) {
  try {
    return JSON.stringify(typeof json === "string" ? JSON.parse(json) : json, null, 2);
  } catch (e) {
    return String(json);
  }
}

export function short(id) {
  return id && id.length > 14 ? id.slice(0, 8) + "…" + id.slice(-4) : id;
}
