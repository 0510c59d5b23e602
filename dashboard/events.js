// Events: the list with filters (state, type, time), one event with its
// payload, headers and attempt log, replay of one, replay of a filter.
import * as api from "./api.js";
import { session } from "./session.js";
import { h, badge, when, listView, confirmDialog, toast, errorBox, dl, table, pretty, copyButton } from "./ui.js";

const STATES = ["pending", "delivering", "delivered", "dead"];
const TYPES = ["EVENT:CHARGE_PAID", "EVENT:CHARGE_EXPIRED", "EVENT:CHARGE_REFUND",
               "EVENT:PIX_UNMATCHED", "EVENT:PIX_REFUND", "EVENT:PIX_MED_REFUND",
               "EVENT:PIX_REFUSED", "EVENT:TRANSFER_DONE", "EVENT:RECURRENCE_APPROVED",
               "EVENT:RECURRENCE_REJECTED", "EVENT:RECURRENCE_EXPIRED", "EVENT:RECURRENCE_CANCELLED"];

function select(id, label, options, value) {
  return h("label", { for: id }, label,
    h("select", { id, name: id },
      h("option", { value: "" }, "any"),
      options.map((o) => h("option", { value: o, selected: o === value }, o))));
}

// datetime-local (the browser's time) <-> RFC 3339 (what the API takes)
function localInput(id, label, iso) {
  let v = "";
  if (iso) {
    const d = new Date(iso);
    if (!isNaN(d)) v = new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
  }
  return h("label", { for: id }, label, h("input", { type: "datetime-local", id, name: id, value: v }));
}

function filtersFrom(form) {
  const f = {};
  for (const name of ["state", "type"]) {
    const v = form.elements[name].value;
    if (v) f[name] = v;
  }
  for (const name of ["since", "until"]) {
    const v = form.elements[name].value;
    if (v) f[name] = new Date(v).toISOString();
  }
  return f;
}

export async function render(main, where, gen) {
  if (where.id) return renderOne(main, where.id, gen);
  const q = where.query;
  main.append(h("h1", {}, "Events"),
    h("p", { class: "lead" }, "Postbacks about charges, newest first: what was sent where, and how it went."));
  const form = h("form", { class: "filters", id: "event-filters" },
    select("state", "State", STATES, q.state),
    select("type", "Type", TYPES, q.type),
    localInput("since", "From", q.since),
    localInput("until", "To", q.until),
    h("button", { type: "submit", class: "primary" }, "Filter"),
    h("button", { type: "button", id: "bulk-replay", class: "danger", on: { click: bulk } }, "Replay all matching…"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    location.hash = "#/events?" + new URLSearchParams(filtersFrom(form)).toString();
  });
  main.append(form);

  async function bulk() {
    const f = filtersFrom(form);
    const state = f.state || "dead";
    if (state !== "dead" && state !== "delivered") {
      toast("Only dead or delivered events can be delivered again.", "bad");
      return;
    }
    const ok = await confirmDialog("Deliver again every " + state + " event" +
      (f.type ? " of type " + f.type : "") + (f.since ? " since " + when(f.since) : "") +
      (f.until ? " until " + when(f.until) : "") + " (at most 1000)?", "Replay events");
    if (!ok) return;
    try {
      const r = await api.request("POST", "/events/replay", { body: { ...f, state, limit: 1000 } });
      toast(r.matched + " matched, " + r.requeued + " queued again.");
    } catch (e) {
      toast(e.message, "bad");
    }
  }

  const view = await listView({
    columns: [
      { title: "Created", cell: (e) => when(e.createdAt) },
      { title: "Type", cell: (e) => e.type.replace("EVENT:", "") },
      { title: "State", cell: (e) => badge(e.state) },
      { title: "Destination", class: "wrap", cell: (e) => e.destination || "—" },
      // its deliveries to webhook endpoints, one badge each (docs/postbacks.md)
      { title: "Endpoints", cell: (e) => (e.endpoints || []).length ?
        h("span", { class: "endpoints" }, ...(e.endpoints || []).map((d) =>
          h("span", { title: d.endpoint + (d.lastError ? ": " + d.lastError : "") }, badge(d.state)))) : "—" },
      { title: "Attempts", class: "num", cell: (e) => String(e.attempts) },
      { title: "Last answer", cell: (e) => e.lastStatus ? String(e.lastStatus) : (e.lastError ? "error" : "—") },
      { title: "Id", cell: (e) => h("a", { href: "#/events/" + e.id }, e.id) },
    ],
    href: (e) => "#/events/" + e.id,
    empty: "No events match.",
    load: async (cursor) => {
      const d = await api.request("GET", "/events", { query: { ...q, limit: 50, cursor } });
      return { rows: d.events, next: d.nextCursor };
    },
  });
  if (session.current(gen)) main.append(view);
}

// What each attempt of this event carried (dispatch.c): the signatures are
// made per attempt with the account's secrets, so they are not shown.
function headersOf(e) {
  const log = e.attemptLog || [];
  const last = log[log.length - 1];
  const ts = last ? String(Math.floor(new Date(last.at).getTime() / 1000)) : "(the time of the attempt, Unix seconds)";
  return [
    ["Content-Type", "application/json"],
    ["webhook-id", e.id],
    ["webhook-timestamp", ts],
    ["webhook-signature", "v1,<HMAC-SHA256 of id.timestamp.body with the signing secret>"],
    ["signature", "<the account's postbackSignature>"],
  ];
}

async function renderOne(main, id, gen) {
  const e = await api.request("GET", "/events/" + encodeURIComponent(id));
  if (!session.current(gen)) return;
  // a replay to `destination` ("postback", an endpoint id; undefined: wherever it is dead)
  const replayButton = (label, destination, attrs = {}) => {
    const b = h("button", { type: "button", ...attrs, on: { click: async () => {
      b.disabled = true;
      try {
        const r = await api.request("POST", "/events/" + encodeURIComponent(id) + "/replay",
          destination ? { body: { destination } } : {});
        toast(r.requeued ? "Queued to be delivered again." : "Already waiting or in flight: nothing to do.");
        const fresh = h("div");
        main.replaceChildren(fresh);
        await renderOne(fresh, id, gen);
      } catch (err) {
        toast(err.message, "bad");
        b.disabled = false;
      }
    } } }, label);
    return b;
  };
  const replay = replayButton("Replay", undefined, { id: "replay", class: "primary" });
  const endpoints = e.endpoints || [];
  main.append(h("p", { class: "crumbs" }, h("a", { href: "#/events" }, "Events"), " / ", id),
    h("h1", {}, e.type.replace("EVENT:", "").replace("_", " ").toLowerCase(), " ", badge(e.state)),
    h("div", { class: "actions" }, replay),
    dl([
      ["Id", h("code", {}, e.id)],
      ["State", badge(e.state)],
      ["Destination", e.destination],
      ["Attempts", String(e.attempts)],
      ["Created", when(e.createdAt)],
      ["Updated", when(e.updatedAt)],
      ["Next attempt", when(e.nextAttemptAt)],
      ["Delivered", when(e.deliveredAt)],
      ["Dead", when(e.deadAt)],
      ["Last status", e.lastStatus === null ? null : String(e.lastStatus)],
      ["Last error", e.lastError],
    ]),
    h("h2", {}, "Attempts"),
    table([
      { title: "#", class: "num", cell: (a) => String(a.attempt) },
      { title: "At", cell: (a) => when(a.at) },
      { title: "Status", cell: (a) => a.status ? String(a.status) : "—" },
      { title: "Latency", class: "num", cell: (a) => a.durationMs + " ms" },
      { title: "Outcome", cell: (a) => badge(a.outcome) },
      { title: "Error", class: "wrap", cell: (a) => a.error || "—" },
      { title: "Answer (excerpt)", class: "wrap", cell: (a) => a.response ? h("code", {}, a.response) : "—" },
    ], e.attemptLog || [], { class: "list attempts", empty: "No attempt yet." }),
    ...(endpoints.length ? [
      h("h2", {}, "Webhook endpoints"),
      table([
        { title: "Endpoint", cell: (d) => h("code", {}, d.endpoint) },
        { title: "URL", class: "wrap", cell: (d) => d.url || "(deleted)" },
        { title: "State", cell: (d) => badge(d.state) },
        { title: "Attempts", class: "num", cell: (d) => String(d.attempts) },
        { title: "Next attempt", cell: (d) => when(d.nextAttemptAt) || "—" },
        { title: "Last answer", cell: (d) => d.lastStatus ? String(d.lastStatus) : (d.lastError ? "error" : "—") },
        { title: "Last error", class: "wrap", cell: (d) => d.lastError || "—" },
        { title: "", cell: (d) => d.state === "delivered" || d.state === "dead" ?
          replayButton("Replay here", d.endpoint) : "" },
      ], endpoints, { class: "list endpoints" }),
    ] : []),
    h("h2", {}, "Headers"),
    h("pre", { class: "code" }, headersOf(e).map(([k, v]) => k + ": " + v).join("\n")),
    h("h2", {}, "Payload ", copyButton(() => JSON.stringify(e.payload))),
    h("pre", { class: "code", id: "payload" }, pretty(e.payload)));
  const moving = (st) => st === "pending" || st === "delivering";
  if (moving(e.state) || endpoints.some((d) => moving(d.state))) {
    // follow it until it settles
    setTimeout(async () => {
      if (!session.current(gen)) return;
      const fresh = h("div");
      try {
        await renderOne(fresh, id, gen);
        if (session.current(gen)) main.replaceChildren(fresh);
      } catch (err) {
        if (session.current(gen)) main.append(errorBox(err));
      }
    }, 1500);
  }
}
