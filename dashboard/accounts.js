// Accounts: the list (a master key sees its environment's), one account with
// its balance, postbackUrl and ledger; its secrets revealed on request.
import * as api from "./api.js";
import { session, route } from "./session.js";
import { h, badge, when, money, listView, dl, copyButton, errorBox, short } from "./ui.js";

export async function render(main, where, gen) {
  if (where.id) return renderOne(main, where.id, gen);
  main.append(h("h1", {}, "Accounts"),
    h("p", { class: "lead" }, session.master && !session.acting
      ? "Every account of " + session.envName + ", newest first."
      : "The account this key acts for."));
  const view = await listView({
    columns: [
      { title: "Name", cell: (a) => a.tradeName || a.officialName || a.id },
      { title: "Kind", cell: (a) => a.kind },
      { title: "Tax id", cell: (a) => a.taxID || "—" },
      { title: "Balance", class: "num", cell: (a) => money(a.balance) },
      { title: "postbackUrl", class: "wrap", cell: (a) => a.postbackUrl || "—" },
      { title: "Created", cell: (a) => when(a.createdAt) },
      { title: "Id", cell: (a) => h("a", { href: "#/accounts/" + a.id, title: a.id }, short(a.id)) },
    ],
    href: (a) => "#/accounts/" + a.id,
    empty: "No accounts.",
    load: async (cursor) => {
      const d = await api.request("GET", "/baas/accounts", { query: { limit: 50, cursor } });
      return { rows: d.accounts, next: d.nextCursor };
    },
  });
  if (session.current(gen)) main.append(view);
}

function secretsBox(id) {
  const box = h("section", { class: "panel", id: "secrets" });
  const reveal = h("button", { type: "button", id: "reveal", class: "danger" }, "Reveal secrets");
  const hide = () => box.replaceChildren(h("h2", {}, "Secrets"),
    h("p", { class: "hint" }, "The secrets that sign this account's postbacks and authenticate its " +
      "provider's notifications. Revealing them is logged (the account and your key's id)."), reveal);
  reveal.addEventListener("click", async () => {
    try {
      const s = await api.request("POST", "/baas/accounts/" + encodeURIComponent(id) + "/secrets/reveal");
      const row = (label, v) => [label, v ? h("span", { class: "secretline" }, h("code", { class: "secret" }, v),
        copyButton(() => v)) : null];
      box.replaceChildren(h("h2", {}, "Secrets"),
        dl([row("Postback signing secret", s.postbackSigningSecret),
            row("Previous signing secret", s.postbackSigningSecretPrevious),
            row("signature header", s.postbackSignature),
            row("Ingest secret", s.ingestSecret)]),
        h("button", { type: "button", class: "quiet", on: { click: hide } }, "Hide"));
    } catch (e) {
      box.append(errorBox(e));
    }
  });
  hide();
  return box;
}

async function renderOne(main, id, gen) {
  const a = await api.request("GET", "/baas/accounts/" + encodeURIComponent(id), { query: { limit: 20 } });
  if (!session.current(gen)) return;
  const name = a.tradeName || a.officialName || a.id;
  const actions = h("div", { class: "actions" });
  if (session.master && (!session.acting || session.acting.id !== a.id)) {
    actions.append(h("button", { type: "button", class: "quiet", on: { click: () => {
      api.actAs({ id: a.id, name });
      location.hash = "#/events";
      route();
    } } }, "Act as this account"));
  }
  main.append(h("p", { class: "crumbs" }, h("a", { href: "#/accounts" }, "Accounts"), " / ", name),
    h("h1", {}, name, " ", badge(a.environment)),
    h("p", { class: "balance" }, h("span", { class: "label" }, "Balance "), h("strong", { id: "balance" }, money(a.balance))),
    actions,
    dl([
      ["Id", h("code", {}, a.id)],
      ["Kind", a.kind],
      ["Official name", a.officialName],
      ["Tax id", a.taxID],
      ["Status", a.status],
      ["Owner", a.owner ? h("code", {}, a.owner) : null],
      ["Pix key (EVP)", a.pixKey ? h("code", {}, a.pixKey) : null],
      ["postbackUrl", a.postbackUrl],
      ["Created", when(a.createdAt)],
    ]));
  if (session.master) main.append(secretsBox(a.id));
  main.append(h("h2", {}, "Ledger"));
  let first = a.ledger;
  // a charge opens as the acting account's: only link those it can see
  const own = a.id === (session.acting ? session.acting.id : session.me.account);
  const view = await listView({
    columns: [
      { title: "When", cell: (e) => when(e.at) },
      { title: "What", cell: (e) => String(e.kind || "").replace(/_/g, " ") },
      { title: "Amount", class: "num", cell: (e) => money(e.amount) },
      { title: "Balance after", class: "num", cell: (e) => money(e.balance) },
      { title: "Reference", cell: (e) => e.charge ? (own ? h("a", { href: "#/charges/" + e.charge }, e.charge) : h("code", {}, e.charge))
        : e.transfer ? h("code", {}, e.transfer) : "—" },
    ],
    empty: "No balance changes yet.",
    load: async (cursor) => {
      if (first) {
        const p = first;
        first = null;
        return { rows: p.entries, next: p.nextCursor };
      }
      const d = await api.request("GET", "/baas/accounts/" + encodeURIComponent(id), { query: { limit: 20, cursor } });
      return { rows: d.ledger.entries, next: d.ledger.nextCursor };
    },
  });
  if (session.current(gen)) main.append(view);
}
