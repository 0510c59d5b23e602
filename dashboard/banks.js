// Banks: the connections through which banks report Pix (docs/banks.md), what
// each heard — every Pix with its outcome, every refused item with its reason
// — and connecting a bank (the webhook URL to register at it). A connection's
// bank API, its reconciliation and the day's report are bankrecon.js's.
import * as api from "./api.js";
import { session } from "./session.js";
import { h, badge, when, money, dl, table, confirmDialog, copyButton, toast, errorBox, short } from "./ui.js";
import { apiSection, noCredentials, reportSection, reconciliationBadge } from "./bankrecon.js";

// outcome -> the badge colour of a status that means the same to the eye
const OUTCOME_KIND = { paid: "paid", refunded: "paid", duplicate: "expired", included: "expired",
                       unmatched: "pending", reported: "pending", refused: "failed" };

// In production a connection's Pix credit its account: only a master key
// connects, changes or disconnects one (an account key reads it).
function mayChange() {
  return session.master || session.envName !== "production";
}

function urlPanel(conn) {
  const panel = h("section", { class: "panel notice", id: "new-connection" },
    h("h2", {}, "Register this URL at the bank"),
    h("p", {}, conn.auth === "url-token"
      ? "Copy it now: its token is shown only this once. pixrelay keeps only its SHA-256."
      : "Register it as the webhook of the Pix key " + conn.pixKey + "; the bank adds /pix."),
    h("div", { class: "secretline" }, h("code", { id: "webhook-url", class: "secret" }, conn.webhookUrl),
      copyButton(() => conn.webhookUrl, "Copy URL")),
    h("button", { type: "button", class: "quiet", on: { click: () => panel.remove() } }, "Done"));
  return panel;
}

export async function render(main, where, gen) {
  if (where.id) return renderOne(main, where.id, gen);
  const owner = session.acting ? session.acting.name
    : session.master ? "every account of " + session.envName : "your account";
  main.append(h("h1", {}, "Banks"),
    h("p", { class: "lead" }, "Bank connections of " + owner +
      ": each Pix key whose bank reports its Pix to pixrelay."));

  const slot = h("div");
  if (!mayChange()) {
    main.append(h("p", { class: "empty", id: "connect-bank-master" }, "In production a bank is " +
      "connected with a master key, or on the server with pixrelay bank connect."));
  } else if (!session.master || session.acting) {
    const key = h("input", { id: "bank-pix-key", maxlength: 77, required: true, autocomplete: "off",
                             placeholder: "Pix key at the bank, e.g. pagamentos@loja.com.br" });
    const auth = h("select", { id: "bank-auth" },
      h("option", { value: "mtls" }, "mutual TLS (the bank's client certificate)"),
      h("option", { value: "url-token" }, "token in the URL (banks without mTLS)"));
    const ca = h("textarea", { id: "bank-ca", rows: 4, spellcheck: "false",
                               placeholder: "-----BEGIN CERTIFICATE----- (the CA that signs the bank's client certificates)" });
    auth.addEventListener("change", () => { ca.hidden = auth.value !== "mtls"; });
    const form = h("form", { class: "stack", id: "connect-bank" },
      h("label", { for: "bank-pix-key" }, "Connect a bank"), key, auth, ca,
      h("button", { type: "submit", class: "primary" }, "Connect"));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = { pixKey: key.value.trim(), auth: auth.value };
      if (auth.value === "mtls") body.clientCa = ca.value;
      try {
        const conn = await api.request("POST", "/bank/connections", { body });
        key.value = "";
        ca.value = "";
        slot.replaceChildren(urlPanel(conn));
        await refresh();
      } catch (e) {
        slot.replaceChildren(errorBox(e));
      }
    });
    main.append(form);
  }
  main.append(slot);

  const listBox = h("div");
  main.append(listBox);
  const columns = [
    { title: "Pix key", class: "wrap", cell: (c) => c.pixKey || "—" },
    { title: "Provider", cell: (c) => PROVIDER_NAME[c.provider] || c.provider },
    { title: "Authentication", cell: (c) => authText(c.auth) },
    { title: "Reconciliation", cell: reconciliationBadge },
  ];
  if (session.master && !session.acting) {
    columns.push({ title: "Account", cell: (c) => h("code", { title: c.account }, short(c.account)) });
  }
  columns.push({ title: "Created", cell: (c) => when(c.createdAt) },
    { title: "Id", cell: (c) => h("a", { href: "#/banks/" + c.id }, c.id) });

  async function refresh() {
    const d = await api.request("GET", "/bank/connections");
    if (!session.current(gen)) return;
    listBox.replaceChildren(d.connections.length
      ? table(columns, d.connections, { href: (c) => "#/banks/" + c.id })
      : h("p", { class: "empty" }, "No bank connections."));
  }
  await refresh();
}

// Who a connection speaks to, and how its calls are authenticated
// (docs/providers.md).
const PROVIDER_NAME = { "api-pix": "bank (API Pix)", woovi: "Woovi", asaas: "Asaas", mercadopago: "Mercado Pago" };
const AUTH_TEXT = {
  mtls: "mutual TLS",
  "url-token": "URL token",
  "woovi-rsa": "Woovi's RSA signature, read back",
  "asaas-token": "Asaas's webhook token, read back",
  "mp-signature": "Mercado Pago's x-signature, read back",
  "mp-fetch": "unsigned (QR-code integration), read back",
};
function authText(auth) {
  return AUTH_TEXT[auth] || auth;
}
// A connection's name on the page: its Pix key, else its provider.
function label(c) {
  return c.pixKey || (PROVIDER_NAME[c.provider] || c.provider) + " connection";
}

// What the bank reported, newest first (the last 200).
function logView(log) {
  return log.notifications.length ? table([
    { title: "At", cell: (n) => when(new Date(n.at).toISOString()) },
    { title: "Source", cell: (n) => n.source },
    { title: "Outcome", cell: (n) => badge(n.outcome, OUTCOME_KIND[n.outcome] || "") },
    { title: "Reason", class: "wrap", cell: (n) => n.error || n.reason || (n.status ? "refund " + n.status : "") },
    { title: "endToEndId", cell: (n) => n.endToEndId ? h("code", {}, n.endToEndId) : "—" },
    { title: "Amount", class: "num", cell: (n) => n.amount != null ? money(n.amount) : "—" },
    { title: "Charge", cell: (n) => n.charge ? h("a", { href: "#/charges/" + n.charge }, short(n.charge)) : "—" },
    { title: "Event", cell: (n) => n.event ? h("a", { href: "#/events/" + n.event }, short(n.event)) : "—" },
  ], log.notifications) : h("p", { class: "empty", id: "no-notifications" }, "Nothing reported yet.");
}

async function renderOne(main, id, gen) {
  const path = "/bank/connections/" + encodeURIComponent(id);
  const logOf = () => api.request("GET", path + "/notifications", { query: { limit: 200 } });
  const [c, log] = await Promise.all([api.request("GET", path), logOf()]);
  if (!session.current(gen)) return;
  const disconnect = h("button", { type: "button", class: "danger", id: "disconnect", on: { click: async () => {
    const ok = await confirmDialog("Disconnect " + label(c) + "? Its webhook URL will be " +
      "refused from now on; what it reported stays.", "Disconnect");
    if (!ok) return;
    try {
      await api.request("POST", path + "/disconnect");
      toast("Connection " + label(c) + " disconnected.");
      location.hash = "#/banks";
    } catch (e) {
      toast(e.message, "bad");
    }
  } } }, "Disconnect");
  const logBox = h("div", { id: "bank-log" }, logView(log));
  const report = reportSection(c, gen);
  const afterRun = async () => {
    const logNow = logOf().then((l) => {
      if (session.current(gen)) logBox.replaceChildren(logView(l));
    }, (e) => {
      if (session.current(gen)) logBox.replaceChildren(errorBox(e));
    });
    await Promise.all([report.refresh(), logNow]);
  };
  main.append(h("p", { class: "crumbs" }, h("a", { href: "#/banks" }, "Banks"), " / ", c.id),
    h("h1", {}, label(c)),
    dl([
      ["Id", h("code", {}, c.id)],
      ["Provider", PROVIDER_NAME[c.provider] || c.provider],
      ["Pix key", c.pixKey],
      ["Authentication", c.auth === "url-token" ? "URL token (shown once, when connected)" : authText(c.auth)],
      ["Client CA", c.clientCa ? c.clientCa.certificates + " certificate(s), SHA-256 " + c.clientCa.sha256 : null],
      ["Pinned subject", c.trust ? (c.trust.subject ? h("code", {}, c.trust.subject) : "any") : undefined],
      ["Pinned keys", c.trust ? (c.trust.pins.length
        ? h("div", {}, c.trust.pins.map((p) => h("div", {}, h("code", {}, p)))) : "any") : undefined],
      ["Default", c.default ? "the account's default charging connection" : undefined],
      ["Webhook URL", h("code", {}, c.webhookUrl)],
      ["API credentials", c.api ? "given: pixrelay also asks the bank (below)" : "none: the webhook only"],
      ["Account", h("code", {}, c.account)],
      ["Created", when(c.createdAt)],
    ]),
    c.trust && c.trust.warning ? h("p", { class: "warn", id: "trust-warning" }, c.trust.warning) : "",
    mayChange() ? disconnect : "",
    c.api ? apiSection(c, gen, afterRun) : noCredentials(c),
    report.el,
    h("h2", {}, "What the bank reported"),
    logBox);
  await report.refresh();
}
