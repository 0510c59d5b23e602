// Overview, the first page: how the deliveries of the environment (a master
// key acting for no account) or of the acting account stand at a glance —
// what waits and how late, what was delivered, failed and died in the last
// hour and day, deliveries per minute as a chart the page draws itself
// (SVG), the failing hosts and endpoints, the disabled endpoints, each bank
// connection's reconciliation, and a warning when a money event has no
// destination. GET /v1/overview, /v1/webhook-endpoints, /v1/bank/connections.
import * as api from "./api.js";
import { session } from "./session.js";
import { h, when, table, errorBox, short } from "./ui.js";
import { reconciliationBadge } from "./bankrecon.js";
import { moneyWarning } from "./coverage.js";
import { stateBadge, successRate } from "./endpoints.js";

const SVG = "http://www.w3.org/2000/svg";
const REFRESH_MS = 15000;

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// "1 h 02 min", "12 s"
function age(seconds) {
  if (seconds < 60) return seconds + " s";
  if (seconds < 3600) return Math.floor(seconds / 60) + " min " + String(seconds % 60).padStart(2, "0") + " s";
  return Math.floor(seconds / 3600) + " h " + String(Math.floor(seconds / 60) % 60).padStart(2, "0") + " min";
}

function tile(id, label, value, kind) {
  return h("div", { class: "tile" + (kind ? " " + kind : "") },
    h("div", { class: "label" }, label), h("div", { class: "value", id }, value));
}

// HH:MM in Brasília time, as every time on the pages
function hhmm(ms) {
  return when(ms).slice(11, 16);
}

// Deliveries per minute: one bar per minute (delivered), failed attempts and
// dead stacked on it in their colours; the first and last minute's time, the
// highest count. Every number is in the bar's <title>.
export function chart(per) {
  const W = 900, H = 160, top = 12, bottom = 20, left = 34;
  const n = per.delivered.length;
  const from = Date.parse(per.from);
  const total = (i) => per.delivered[i] + per.failedAttempts[i];
  let max = 1;
  for (let i = 0; i < n; i++) max = Math.max(max, total(i));
  const bw = (W - left) / n;
  const y = (v) => top + (H - top - bottom) * (1 - v / max);
  const el = svg("svg", { id: "ov-chart", viewBox: "0 0 " + W + " " + H, role: "img",
                          "data-points": n, "aria-label": "Deliveries per minute, the last " + n + " minutes" });
  el.append(svg("line", { x1: left, y1: y(0), x2: W, y2: y(0), class: "axis" }),
    svg("line", { x1: left, y1: y(max), x2: W, y2: y(max), class: "grid" }),
    svg("text", { x: left - 4, y: y(max) + 4, class: "tick end" }, max),
    svg("text", { x: left - 4, y: y(0) + 4, class: "tick end" }, 0),
    svg("text", { x: left, y: H - 4, class: "tick" }, hhmm(from) + " BRT"),
    svg("text", { x: W, y: H - 4, class: "tick end" }, hhmm(from + (n - 1) * 60000) + " BRT"));
  for (let i = 0; i < n; i++) {
    const d = per.delivered[i], f = per.failedAttempts[i], x = per.dead[i];
    const g = svg("g", { class: "minute" },
      svg("title", {}, hhmm(from + i * 60000) + " BRT: " + d + " delivered, " + f + " failed attempts, " + x + " dead"));
    const x0 = left + i * bw;
    const w = Math.max(bw - 1, 1);
    g.append(svg("rect", { class: "bar delivered", x: x0, y: y(d), width: w, height: y(0) - y(d) }));
    if (f) g.append(svg("rect", { class: "bar failed", x: x0, y: y(d + f), width: w, height: y(d) - y(d + f) }));
    if (x) g.append(svg("circle", { class: "dead", cx: x0 + w / 2, cy: y(d + f) - 3, r: 2.5 }));
    el.append(g);
  }
  return el;
}

function counts(prefix, label, c) {
  return [
    tile(prefix + "-delivered", "Delivered, " + label, String(c.delivered)),
    tile(prefix + "-failed", "Failed attempts, " + label, String(c.failedAttempts), c.failedAttempts ? "warn" : ""),
    tile(prefix + "-dead", "Dead, " + label, String(c.dead), c.dead ? "bad" : ""),
  ];
}

export async function render(main, where, gen) {
  const envScope = session.master && !session.acting;
  const owner = session.acting ? session.acting.name
    : envScope ? "every account of " + session.envName : "your account";
  const minutes = where.query.minutes === "60" ? 60 : 180;
  main.append(h("h1", {}, "Overview"),
    h("p", { class: "lead" }, "Deliveries of " + owner + ", now."));
  const warnSlot = h("div", { id: "warn-slot" });
  const body = h("div", { id: "overview" });
  main.append(warnSlot, body);
  moneyWarning().then((w) => { if (session.current(gen) && w) warnSlot.replaceChildren(w); },
    (e) => { if (session.current(gen)) warnSlot.replaceChildren(errorBox(e)); });

  const draw = async () => {
    const [o, eps, banks] = await Promise.all([
      api.request("GET", "/overview", { query: { minutes } }),
      envScope ? Promise.resolve(null) : api.request("GET", "/webhook-endpoints"),
      api.request("GET", "/bank/connections"),
    ]);
    if (!session.current(gen)) return;
    const byId = new Map(((eps && eps.endpoints) || []).map((e) => [e.id, e]));
    if (envScope) {
      // the endpoints named, of each account they belong to (their URL and why disabled)
      const owners = new Set([...o.failing, ...o.disabledEndpoints].filter((r) => r.endpoint).map((r) => r.account));
      const lists = await Promise.all([...owners].map((a) => api.request("GET", "/webhook-endpoints", { account: a })));
      if (!session.current(gen)) return;
      for (const l of lists) for (const e of l.endpoints) byId.set(e.id, e);
    }
    const where = (r) => r.endpoint
      ? h("a", { href: "#/endpoints/" + r.endpoint }, byId.has(r.endpoint) ? byId.get(r.endpoint).url : r.endpoint)
      : r.host;
    const account = envScope ? [{ title: "Account", cell: (r) => h("code", { title: r.account }, short(r.account)) }] : [];
    // endpoints that need a look: disabled, or failing now (account view: their records)
    const attention = eps ? eps.endpoints.filter((e) => !e.enabled || e.failuresInARow > 0) : [];
    body.replaceChildren(
      h("div", { class: "tiles" },
        tile("ov-waiting", "Waiting", String(o.waiting), o.waiting ? "warn" : ""),
        tile("ov-oldest", "Oldest waiting", o.oldestWaitingDueAt ? age(o.oldestWaitingSeconds) : "—",
          o.oldestWaitingSeconds >= 60 ? "bad" : ""),
        tile("ov-held", "Kept for disabled endpoints", String(o.held), o.held ? "warn" : ""),
        ...counts("ov-hour", "last hour", o.lastHour),
        ...counts("ov-day", "last 24 h", o.lastDay)),
      h("h2", {}, "Deliveries per minute ",
        h("a", { href: "#/overview?minutes=" + (minutes === 60 ? 180 : 60), class: "hint", id: "chart-span" },
          minutes === 60 ? "(last hour; show 3 hours)" : "(last 3 hours; show 1 hour)")),
      h("figure", { class: "chart" }, chart(o.perMinute),
        h("figcaption", {}, h("span", { class: "key delivered" }, "delivered"), " ",
          h("span", { class: "key failed" }, "failed attempts"), " ", h("span", { class: "key dead" }, "dead"),
          " · per minute, Brasília time; counted by the dispatchers at each batch")),
      h("h2", {}, "Failing hosts and endpoints"),
      h("div", { id: "ov-failing" }, table([
        ...account,
        { title: "Host or endpoint", class: "wrap", cell: where },
        { title: "Failed attempts", class: "num", cell: (r) => String(r.failedAttempts) },
        { title: "Dead", class: "num", cell: (r) => String(r.dead) },
        { title: "Waiting", class: "num", cell: (r) => String(r.waiting) },
      ], o.failing, { class: "list", empty: "No failed attempt in the last hour or two." })),
      h("h2", {}, "Disabled endpoints"),
      h("div", { id: "ov-disabled" }, table([
        ...account,
        { title: "Endpoint", class: "wrap", cell: (r) => where(r) },
        { title: "Disabled", cell: (r) => when(r.disabledAt) },
        { title: "Why", class: "wrap", cell: (r) => byId.has(r.endpoint) ? byId.get(r.endpoint).disabledReason : "—" },
        { title: "Kept", class: "num", cell: (r) => String(r.kept) },
      ], o.disabledEndpoints, { class: "list", empty: "None." })),
      ...(eps ? [
        h("h2", {}, "Endpoints failing now"),
        table([
          { title: "Endpoint", class: "wrap", cell: (e) => h("a", { href: "#/endpoints/" + e.id }, e.url) },
          { title: "State", cell: stateBadge },
          { title: "Failures in a row", class: "num", cell: (e) => String(e.failuresInARow) },
          { title: "Success", class: "num", cell: successRate },
          { title: "Last error", class: "wrap", cell: (e) => e.stats.lastError || "—" },
        ], attention, { class: "list", empty: "Every endpoint is enabled, and its last attempt delivered." }),
      ] : []),
      h("h2", {}, "Bank connections"),
      h("div", { id: "ov-banks" }, table([
        { title: "Pix key", class: "wrap", cell: (c) => h("a", { href: "#/banks/" + c.id }, c.pixKey) },
        ...(envScope ? [{ title: "Account", cell: (c) => h("code", { title: c.account }, short(c.account)) }] : []),
        { title: "Reconciliation", cell: reconciliationBadge },
        { title: "Last success", cell: (c) => c.api ? when(c.api.reconciliation.lastSuccessAt) : "—" },
        { title: "Last error", class: "wrap", cell: (c) => (c.api && c.api.reconciliation.lastError) || "—" },
      ], banks.connections, { class: "list", empty: "No bank connections." })),
      h("p", { class: "hint", id: "ov-at" }, "As of " + when(o.at) + "; drawn again every 15 s."));
  };
  await draw();
  const again = () => setTimeout(async () => {
    if (!session.current(gen) || document.hidden) {
      if (session.current(gen)) again();
      return;
    }
    try {
      await draw();
    } catch (e) {
      if (session.current(gen)) body.prepend(errorBox(e));
    }
    if (session.current(gen)) again();
  }, REFRESH_MS);
  again();
}
