// Banks: a connection's bank API and its reconciliation (docs/bank-api.md,
// "Reconciliation" and "The day's report"): how pixrelay reaches the bank
// (never a secret), how its last runs went, flagged when failing or late,
// "Reconcile now", and what the connection heard on one day, Brasilia time,
// with the endToEndIds only the reconciliation recovered, the spans of the
// bank's list it read, and whether they prove the day complete, or why not.
// A connection without API credentials gets the command that gives them.
// banks.js draws the rest of a connection's page, and the list.
import * as api from "./api.js";
import { session } from "./session.js";
import { h, badge, when, ago, money, dl, table, toast, errorBox, copyButton } from "./ui.js";

// A last success older than three intervals (bank-reconcile-interval, as
// the server says it; 300 s when it does not) is flagged late.
const DEFAULT_INTERVAL_MS = 300 * 1000;
// After "Reconcile now": ask how it went every second, for at most 30 s
// (a run is claimed within about a second; the bank's timeout is 10 s).
const POLL_MS = 1000;
const POLL_FOR_MS = 30000;
// Brasilia is UTC−3 all year (no daylight saving time since 2019), as the
// server counts its days.
const BRASILIA_MS = -3 * 3600 * 1000;
const DAY_MS = 86400 * 1000;

// "YYYY-MM-DD" of today in Brasilia, by the browser's clock.
function todayInBrasilia() {
  return new Date(Date.now() + BRASILIA_MS).toISOString().slice(0, 10);
}

// How the reconciliation is doing: {kind, badge, say} where kind is ok,
// first (not run yet), late or failing.
function health(rec) {
  if (rec.failures > 0) {
    return { kind: "failing", badge: badge("failing", "failed"),
             say: rec.failures + (rec.failures === 1 ? " failed run" : " failed runs") +
                  " since the last success: the bank is asked again later, waiting longer " +
                  "after each failure (an hour at most). Pix its webhook misses are not being taken." };
  }
  if (!rec.lastSuccessAt) {
    return { kind: "first", badge: badge("not run yet", "pending"),
             say: "The first reconciliation has not run yet." };
  }
  const interval = rec.intervalSeconds > 0 ? rec.intervalSeconds * 1000 : DEFAULT_INTERVAL_MS;
  const age = Date.now() - Date.parse(rec.lastSuccessAt);
  if (age > 3 * interval) {
    return { kind: "late", badge: badge("late", "pending"),
             say: "No success for " + ago(rec.lastSuccessAt).replace(/ ago$/, "") + ": more than " +
                  "three times the interval (" + Math.round(interval / 1000) + " s). " +
                  "Pix its webhook misses are not being taken." };
  }
  return { kind: "ok", badge: badge("ok", "paid"), say: "Reconciled " + ago(rec.lastSuccessAt) + "." };
}

// The reconciliation at a glance, for the list of connections.
export function reconciliationBadge(c) {
  return c.api ? health(c.api.reconciliation).badge : h("span", { class: "hint" }, "webhook only");
}

function reconciliationView(rec) {
  const hl = health(rec);
  const alert = hl.kind === "failing" || hl.kind === "late";
  return h("div", { id: "reconciliation", class: "recon " + hl.kind },
    h("p", { class: alert ? (hl.kind === "failing" ? "error" : "warn") : "health",
             role: alert ? "alert" : null, id: "recon-health" }, hl.badge, " ", hl.say),
    dl([
      ["Reconciled until", h("span", { id: "reconciled-until" }, when(rec.reconciledUntil))],
      ["Last success", rec.lastSuccessAt
        ? h("span", { id: "last-success" }, ago(rec.lastSuccessAt), " (", when(rec.lastSuccessAt), ")")
        : "never"],
      ["Last run's window", rec.lastSuccessAt
        ? rec.lastListed + " Pix of the key listed, " + rec.lastNew + " of them new (missed by the webhook)"
        : null],
      ["Recovered in all", h("span", { id: "new-total" }, rec.newTotal + " Pix the webhook had not brought")],
      ["Failures", h("span", { id: "failures" }, rec.failures ? rec.failures + " since the last success" : "none")],
      ["Last error", rec.lastError
        ? h("span", { id: "last-error" }, rec.lastError, " (", when(rec.lastErrorAt), ")")
        : null],
    ]));
}

// The first certificate of a PEM as the API sums it up: subject, expiry
// (flagged when past or within 30 days), SHA-256.
function certificate(cert) {
  if (!cert) return null;
  const left = Date.parse(cert.notAfter) - Date.now();
  let flag = "";
  if (left < 0) flag = badge("expired", "failed");
  else if (left < 30 * DAY_MS) flag = badge("expires in " + Math.ceil(left / DAY_MS) + " days", "pending");
  return h("span", {}, cert.subject, h("br"), "expires " + when(cert.notAfter) + " ", flag,
    h("br"), "SHA-256 ", h("code", {}, cert.sha256));
}

// Did a run end since `before` was read?
function ran(before, now) {
  return now.lastSuccessAt !== before.lastSuccessAt || now.lastErrorAt !== before.lastErrorAt ||
    now.failures !== before.failures;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// The bank's API and the reconciliation of connection `c` (which has API
// credentials), with "Reconcile now". afterRun() is awaited once a run
// asked for here has ended (to draw the report and the log again).
export function apiSection(c, gen, afterRun) {
  const path = "/bank/connections/" + encodeURIComponent(c.id);
  const a = c.api;
  let rec = a.reconciliation;
  let shown = reconciliationView(rec);
  const status = h("div", { id: "reconcile-status", role: "status" });
  const button = h("button", { type: "button", class: "primary", id: "reconcile-now" }, "Reconcile now");
  const redraw = (r) => {
    const next = reconciliationView(r);
    shown.replaceWith(next);
    shown = next;
    rec = r;
  };
  button.addEventListener("click", async () => {
    const before = rec;
    button.disabled = true;
    status.replaceChildren();
    try {
      await api.request("POST", path + "/reconcile");
      if (!session.current(gen)) return;
      toast("Reconciliation scheduled.");
      status.replaceChildren(h("p", { class: "hint" },
        "Reconciliation scheduled at " + when(Date.now()) + ": asking the bank…"));
      let now = before;
      for (const end = Date.now() + POLL_FOR_MS; Date.now() < end;) {
        await sleep(POLL_MS);
        if (!session.current(gen)) return;
        const got = await api.request("GET", path);
        if (!session.current(gen)) return;
        if (!got.api) throw new Error("the connection no longer has API credentials");
        now = got.api.reconciliation;
        if (ran(before, now)) break;
      }
      redraw(now);
      if (!ran(before, now)) {
        status.replaceChildren(h("p", { class: "warn", role: "alert" },
          "Scheduled, but not run within " + POLL_FOR_MS / 1000 + " seconds: is a pixrelay " +
          "that delivers running? The state above is as of now."));
      } else if (now.failures > before.failures || (now.lastErrorAt !== before.lastErrorAt && now.lastError)) {
        status.replaceChildren(h("p", { class: "error", role: "alert" },
          "The reconciliation failed: " + (now.lastError || "no reason given")));
      } else {
        status.replaceChildren(h("p", { class: "hint", id: "reconcile-done" },
          "Reconciled at " + when(now.lastSuccessAt) + ": " + now.lastListed + " Pix listed, " +
          now.lastNew + " new."));
      }
      await afterRun();
    } catch (e) {
      if (session.current(gen)) status.replaceChildren(errorBox(e));
    } finally {
      button.disabled = false;
    }
  });
  const bank = !c.provider || c.provider === "api-pix";
  return h("div", {},
    h("section", { class: "panel", id: "bank-api" },
      h("h2", {}, bank ? "The bank's API" : "The provider's API"),
      dl(bank ? [
        ["API URL", h("code", {}, a.apiUrl)],
        ["Token URL", h("code", {}, a.tokenUrl)],
        ["Client id", h("code", {}, a.clientId)],
        ["Certificate", certificate(a.certificate)],
        ["Bank's CA", a.bankCa ? certificate(a.bankCa) : "the system's trust store"],
      ] : [
        ["API URL", h("code", {}, a.apiUrl)],
        ["Server's CA", a.bankCa ? certificate(a.bankCa) : "the system's trust store"],
      ]),
      h("p", { class: "hint" }, bank
        ? "The client secret and the private key are kept sealed; no page shows them."
        : "The API token is kept sealed; no page shows it (docs/providers.md).")),
    h("section", { class: "panel", id: "bank-reconciliation" },
      h("h2", {}, "Reconciliation"),
      h("p", { class: "hint" }, "pixrelay asks the bank for the Pix it received (GET /pix) and takes " +
        "those its webhook did not bring, as if the webhook had."),
      shown,
      h("div", { class: "actions" }, button),
      status));
}

// What a connection without API credentials needs, and who gives it.
export function noCredentials(c) {
  if (c.provider && c.provider !== "api-pix") {
    return h("section", { class: "panel", id: "no-credentials" },
      h("h2", {}, "No API token"),
      h("p", {}, "A sandbox connection without the provider's API token: its notifications are " +
        "taken from their authenticated bodies and nothing is asked of the provider. Connect it " +
        "again with --api-token-file to have pixrelay read each payment back and reconcile " +
        "(docs/providers.md)."));
  }
  const cmd = "pixrelay bank credentials " + c.id + " --env " + c.environment + " \\\n" +
    "    --api-url API_URL --token-url TOKEN_URL --client-id CLIENT_ID \\\n" +
    "    --client-secret-file secret.txt --cert company.crt --key company.key \\\n" +
    "    [--bank-ca bank-ca.pem]";
  return h("section", { class: "panel", id: "no-credentials" },
    h("h2", {}, "No API credentials"),
    h("p", {}, "pixrelay hears only what this bank's webhook sends: it cannot ask the bank for the " +
      "Pix the webhook missed (the reconciliation), nor refund at the bank. The operator gives the " +
      "bank's API credentials on the server's command line (never through this page or the HTTP " +
      "API), with the URLs, client id and secret, and the company's certificate from the bank:"),
    h("pre", { class: "code", id: "credentials-command" }, cmd),
    copyButton(() => cmd, "Copy command"));
}

// A span read as the report gives it (RFC 3339, -03:00), in the day's
// wall clock: "09:41:07 – 14:05:10", the end "(the next day)" past midnight.
function spanText(span, day) {
  const at = (t) => t.slice(11, 19) + (t.slice(0, 10) === day ? "" : " (the next day)");
  return at(span.from) + " – " + at(span.to);
}

function reportView(r, hasApi) {
  const count = (n, cents) => ({ n, cents });
  const rows = [
    ["Received (each Pix once)", count(r.pix.received, r.cents.received)],
    ["by the bank's webhook", count(r.pix.byWebhook, r.cents.byWebhook)],
    ["recovered by the reconciliation", count(r.pix.recovered, r.cents.recovered)],
    ["Refused (not the standard: an event each)", count(r.pix.refused, r.cents.refused)],
    ["Held by another connection", count(r.pix.heldElsewhere)],
    ["Heard again (duplicates)", count(r.pix.duplicates)],
  ];
  const why = r.complete
    ? "The reconciliation read the bank's list for all of this day and the 10 minutes after it: " +
      "every Pix the bank received on it is counted here, once (not the refunds of older Pix)."
    : "Not proven complete:";
  const outcomes = Object.entries(r.outcomes).filter(([, n]) => n > 0);
  const ids = r.recoveredEndToEndIds;
  return h("div", { id: "report-body" },
    h("p", { id: "report-complete" },
      r.complete ? badge("complete", "paid") : badge("not complete", "pending"), " ", why),
    r.complete ? "" : h("ul", { id: "report-why" }, r.whyNotComplete.map((w) => h("li", {}, w))),
    h("p", { class: "hint", id: "report-read" }, "Read of the bank's list (Brasilia time): ",
      r.read.length
        ? r.read.map((span, i) => h("span", { class: "span" }, i ? ", " : "", spanText(span, r.date)))
        : "nothing of this day."),
    table([
      { title: "Pix", cell: ([what]) => what },
      { title: "Count", class: "num", cell: ([, c]) => String(c.n) },
      { title: "Amount", class: "num", cell: ([, c]) => c.cents === undefined ? "" : money(c.cents) },
    ], rows, { class: "list report" }),
    h("div", { class: "split even" },
      h("div", {}, h("h3", {}, "What they became"),
        outcomes.length ? table([
          { title: "Outcome", cell: ([k]) => h("code", {}, k) },
          { title: "Pix", class: "num", cell: ([, n]) => String(n) },
        ], outcomes, { class: "list report" }) : h("p", { class: "empty" }, "No Pix taken.")),
      h("div", {}, h("h3", {}, "Refunds"), dl([
        ["DEVOLVIDO", String(r.refunds.DEVOLVIDO)],
        ["EM_PROCESSAMENTO", String(r.refunds.EM_PROCESSAMENTO)],
        ["NAO_REALIZADO", String(r.refunds.NAO_REALIZADO)],
        ["of the MED (disputes)", h("span", { id: "report-med" },
          r.refunds.med.DEVOLVIDO + " given back (" + money(r.refunds.med.cents) + "), " +
          r.refunds.med.EM_PROCESSAMENTO + " under way")],
      ]))),
    h("h3", {}, "Recovered: the bank's webhook never brought these"),
    ids.length
      ? h("div", {},
        ids.length < r.pix.recovered
          ? h("p", { class: "hint" }, "The first " + ids.length + " of " + r.pix.recovered + ".") : "",
        h("ol", { class: "e2e", id: "recovered" }, ids.map((e) => h("li", {}, h("code", {}, e)))))
      : h("p", { class: "empty", id: "none-recovered" }, r.complete || !hasApi
        ? "None: the webhook brought every Pix taken that day." : "None so far."));
}

// The day's report of connection `c`, with its date picker (today in
// Brasilia by default): {el, refresh()}; refresh() shows an error of the
// API in the section, and resolves either way.
export function reportSection(c, gen) {
  const today = todayInBrasilia();
  const date = h("input", { type: "date", id: "report-date", value: today, max: today, required: true });
  const body = h("div", { id: "report-slot" });
  const refresh = async () => {
    const day = date.value || today;
    try {
      const r = await api.request("GET", "/bank/reconciliation", { query: { connection: c.id, date: day } });
      if (!session.current(gen) || (date.value || today) !== day) return;
      body.replaceChildren(reportView(r, !!c.api));
    } catch (e) {
      if (session.current(gen)) body.replaceChildren(errorBox(e));
    }
  };
  date.addEventListener("change", refresh);
  const form = h("form", { class: "filters" },
    h("label", {}, "Day (Brasilia time)", date));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    refresh();
  });
  const el = h("section", { class: "panel", id: "report" },
    h("h2", {}, "The day's report"),
    h("p", { class: "hint" }, "What the connection heard on one day, by the Pix's time at the bank."),
    form, body);
  return { el, refresh };
}
