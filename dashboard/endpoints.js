// Webhook endpoints (docs/postbacks.md, "Webhook endpoints"): the acting
// account's, in the key's environment, each with its state, success rate,
// counters and last error; created (the secret shown once), changed,
// enabled or disabled, its secret rotated (the new one shown once), tested,
// deleted. All through /v1/webhook-endpoints.
import * as api from "./api.js";
import { session } from "./session.js";
import { h, badge, when, ago, dl, table, confirmDialog, copyButton, toast, errorBox } from "./ui.js";
import { moneyWarning } from "./coverage.js";

const BY_REQUEST = "disabled by request";

// enabled | disabled by pixrelay (why) | disabled by request
export function stateBadge(e) {
  if (e.enabled) return badge("enabled", "delivered");
  if (e.disabledReason === BY_REQUEST) return badge("disabled by request", "expired");
  return h("span", { title: e.disabledReason || "" }, badge("disabled by pixrelay", "dead"));
}

// attempts delivered / attempts, as a percentage with one decimal; "—" with none
export function successRate(e) {
  const n = e.stats.delivered + e.stats.failedAttempts;
  if (!n) return "—";
  return (Math.round((e.stats.delivered * 1000) / n) / 10) + "%";
}

function secretPanel(title, e) {
  const panel = h("section", { class: "panel notice", id: "new-secret" },
    h("h2", {}, title),
    h("p", {}, "Copy the signing secret now: this is the only time it is shown."),
    h("div", { class: "secretline" }, h("code", { id: "new-secret-text", class: "secret" }, e.secret),
      copyButton(() => e.secret, "Copy secret")),
    h("button", { type: "button", class: "quiet", on: { click: () => panel.remove() } }, "Done, I have stored it"));
  return panel;
}

// eventTypes from "A, B C" (none: every type but the operational ones)
function typesOf(text) {
  return text.split(/[\s,]+/).filter(Boolean);
}

// headers from "Name: value" lines
function headersOf(text) {
  const out = {};
  for (const line of text.split("\n")) {
    const i = line.indexOf(":");
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

function headersText(headers) {
  return Object.entries(headers || {}).map(([k, v]) => k + ": " + v).join("\n");
}

// The fields of a create or an edit form, filled from `e` when given.
function fields(e) {
  const url = h("input", { id: "ep-url", type: "url", required: true, autocomplete: "off",
                           placeholder: "where to POST the events, e.g. erp.loja.example/pix over HTTPS", value: e ? e.url : "" });
  const description = h("input", { id: "ep-description", maxlength: 200, autocomplete: "off",
                                   placeholder: "What is it for? e.g. ERP", value: e ? e.description : "" });
  const types = h("input", { id: "ep-types", autocomplete: "off", spellcheck: "false",
                             placeholder: "EVENT:CHARGE_* EVENT:PIX_UNMATCHED (empty: every type)",
                             value: e ? e.eventTypes.join(" ") : "" });
  const headers = h("textarea", { id: "ep-headers", rows: 2, spellcheck: "false",
                                  placeholder: "X-Team: erp (static headers, one per line)" });
  headers.value = e ? headersText(e.headers) : "";
  return {
    url, description, types, headers,
    nodes: [h("label", { for: "ep-url" }, "URL"), url,
            h("label", { for: "ep-description" }, "Description"), description,
            h("label", { for: "ep-types" }, "Event types"), types,
            h("label", { for: "ep-headers" }, "Headers"), headers],
    body: () => ({ url: url.value.trim(), description: description.value,
                   eventTypes: typesOf(types.value), headers: headersOf(headers.value) }),
  };
}

export async function render(main, where, gen) {
  if (where.id) return renderOne(main, where.id, gen);
  const owner = session.acting ? session.acting.name
    : session.master ? "the platform account (act as an account for its own)" : "your account";
  main.append(h("h1", {}, "Webhook endpoints"),
    h("p", { class: "lead" }, "More destinations for the events of " + owner + " in " + session.envName +
      ", each with its event types, signing secret and static headers."));
  const warnSlot = h("div");
  main.append(warnSlot);
  moneyWarning().then((w) => { if (session.current(gen) && w) warnSlot.replaceChildren(w); },
    (e) => { if (session.current(gen)) warnSlot.replaceChildren(errorBox(e)); });

  const f = fields(null);
  const enabled = h("input", { id: "ep-enabled", type: "checkbox", checked: true });
  const slot = h("div");
  const form = h("form", { class: "stack", id: "create-endpoint" },
    h("h2", {}, "Add an endpoint"), ...f.nodes,
    h("label", {}, enabled, " enabled"),
    h("button", { type: "submit", class: "primary" }, "Create endpoint"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const e = await api.request("POST", "/webhook-endpoints", { body: { ...f.body(), enabled: enabled.checked } });
      form.reset();
      slot.replaceChildren(secretPanel("The new endpoint's secret", e));
      await refresh();
      moneyWarning().then((w) => { if (session.current(gen)) warnSlot.replaceChildren(w || ""); }, () => {});
    } catch (e) {
      slot.replaceChildren(errorBox(e));
    }
  });
  const listBox = h("div", { id: "endpoint-list" });
  main.append(slot, listBox, form);

  async function refresh() {
    const d = await api.request("GET", "/webhook-endpoints");
    if (!session.current(gen)) return;
    listBox.replaceChildren(table([
      { title: "URL", class: "wrap", cell: (e) => h("a", { href: "#/endpoints/" + e.id }, e.url) },
      { title: "Description", class: "wrap", cell: (e) => e.description || "—" },
      { title: "Event types", class: "wrap", cell: (e) => e.eventTypes.length ? e.eventTypes.join(" ") : "every type" },
      { title: "State", cell: stateBadge },
      { title: "Success", class: "num rate", cell: successRate },
      { title: "Attempts", class: "num", cell: (e) => String(e.stats.delivered + e.stats.failedAttempts) },
      { title: "Failed", class: "num", cell: (e) => String(e.stats.failedAttempts) },
      { title: "Dead", class: "num", cell: (e) => String(e.stats.dead) },
      { title: "Last answer", cell: (e) => e.stats.lastStatus ? String(e.stats.lastStatus) : (e.stats.lastError ? "error" : "—") },
      { title: "Last error", class: "wrap last-error", cell: (e) => e.stats.lastError || "—" },
      { title: "Last attempt", cell: (e) => e.stats.lastAttemptAt ? ago(e.stats.lastAttemptAt) : "—" },
    ], d.endpoints, { href: (e) => "#/endpoints/" + e.id, class: "list endpoints",
                      empty: "No webhook endpoints: events go to the postbackUrl only." }));
  }
  await refresh();
}

function testOutcome(r) {
  return h("p", { class: r.delivered ? "health" : "error", id: "test-outcome", role: "status" },
    badge(r.delivered ? "delivered" : "failed", r.delivered ? "delivered" : "dead"), " ",
    (r.status ? "HTTP " + r.status : "no answer") + " in " + r.durationMs + " ms" +
    (r.error ? ": " + r.error : "") + " (test event " + r.id + ")",
    r.response ? h("code", { class: "excerpt" }, " " + r.response) : "");
}

async function renderOne(main, id, gen) {
  const path = "/webhook-endpoints/" + encodeURIComponent(id);
  const e = await api.request("GET", path);
  if (!session.current(gen)) return;
  const again = async () => {
    const fresh = h("div");
    await renderOne(fresh, id, gen);
    if (session.current(gen)) main.replaceChildren(fresh);
  };
  const act = (label, attrs, fn) => {
    const b = h("button", { type: "button", ...attrs }, label);
    b.addEventListener("click", async () => {
      b.disabled = true;
      try {
        await fn();
      } catch (err) {
        toast(err.message, "bad");
      } finally {
        b.disabled = false;
      }
    });
    return b;
  };
  const slot = h("div", { id: "endpoint-slot" });
  const toggle = act(e.enabled ? "Disable" : "Enable", { id: "toggle-endpoint", class: e.enabled ? "danger" : "primary" },
    async () => {
      await api.request("PATCH", path, { body: { enabled: !e.enabled } });
      toast(e.enabled ? "Endpoint disabled: it takes no new event until enabled." : "Endpoint enabled: what it kept goes out in order.");
      await again();
    });
  const test = act("Send test", { id: "test-endpoint" }, async () => {
    slot.replaceChildren(h("p", { class: "hint" }, "Sending a signed test event…"));
    const r = await api.request("POST", path + "/test");
    slot.replaceChildren(testOutcome(r));
  });
  const grace = h("input", { id: "rotate-grace", type: "number", min: 0, max: 604800, value: 86400,
                             "aria-label": "grace in seconds" });
  const rotate = act("Rotate secret", { id: "rotate-secret" }, async () => {
    const ok = await confirmDialog("Make a new signing secret? The current one still signs for " +
      grace.value + " s beside it, then stops.", "Rotate");
    if (!ok) return;
    const r = await api.request("POST", path + "/rotate-secret", { body: { graceSeconds: Number(grace.value) } });
    await again();
    main.querySelector("#endpoint-slot").replaceChildren(secretPanel("The new secret", r));
  });
  const del = act("Delete", { id: "delete-endpoint", class: "danger" }, async () => {
    const ok = await confirmDialog("Delete the endpoint " + e.url + "? Its deliveries not made yet are " +
      "dropped; its events still go to the postbackUrl.", "Delete");
    if (!ok) return;
    await api.request("DELETE", path);
    toast("Endpoint " + e.url + " deleted.");
    location.hash = "#/endpoints";
  });
  const f = fields(e);
  const edit = h("form", { class: "stack", id: "edit-endpoint" }, h("h2", {}, "Change it"), ...f.nodes,
    h("button", { type: "submit", class: "primary" }, "Save"));
  edit.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await api.request("PATCH", path, { body: f.body() });
      toast("Endpoint saved.");
      await again();
    } catch (err) {
      slot.replaceChildren(errorBox(err));
    }
  });
  main.append(h("p", { class: "crumbs" }, h("a", { href: "#/endpoints" }, "Webhook endpoints"), " / ", e.id),
    h("h1", {}, e.description || e.url, " ", stateBadge(e)),
    !e.enabled && e.disabledReason !== BY_REQUEST
      ? h("p", { class: "error", id: "disabled-why" }, "Disabled by pixrelay: " + e.disabledReason +
          ". What it takes is kept and goes out in order when it is enabled again.") : "",
    h("div", { class: "actions" }, toggle, test, rotate,
      h("label", { class: "grace" }, grace, " s of grace"), del),
    slot,
    dl([
      ["Id", h("code", {}, e.id)],
      ["URL", e.url],
      ["Event types", e.eventTypes.length ? e.eventTypes.join(" ") : "every type but the operational ones"],
      ["Headers", Object.keys(e.headers).length ? h("pre", { class: "plain" }, headersText(e.headers)) : null],
      ["State", stateBadge(e)],
      ["Disabled", e.enabled ? undefined : when(e.disabledAt) + " — " + e.disabledReason],
      ["Success rate", h("span", { id: "success-rate" }, successRate(e))],
      ["Delivered", String(e.stats.delivered)],
      ["Failed attempts", String(e.stats.failedAttempts)],
      ["Dead", String(e.stats.dead)],
      ["Failures in a row", e.failuresInARow ? e.failuresInARow + " since " + when(e.failingSince) : "none"],
      ["Last attempt", when(e.stats.lastAttemptAt)],
      ["Last status", e.stats.lastStatus === null ? null : String(e.stats.lastStatus)],
      ["Last error", h("span", { id: "last-error" }, e.stats.lastError || "—")],
      ["Previous secret signs until", e.previousSecretUntil ? when(e.previousSecretUntil) : undefined],
      ["Created", when(e.createdAt)],
      ["Updated", when(e.updatedAt)],
    ]),
    edit);
}
