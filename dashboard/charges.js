// Charges: the list (by status) and one charge with its QR image and BR Code.
import * as api from "./api.js";
import { session } from "./session.js";
import { h, badge, when, money, listView, dl, copyButton } from "./ui.js";

const STATUSES = ["PENDING", "PAID", "EXPIRED", "REFUNDED", "FAILED"];

export async function render(main, where, gen) {
  if (where.id) return renderOne(main, where.id, gen);
  const status = where.query.status || "";
  const pick = h("select", { id: "status", on: { change: () => {
    location.hash = "#/charges" + (pick.value ? "?status=" + pick.value : "");
  } } }, h("option", { value: "" }, "any"),
    STATUSES.map((s) => h("option", { value: s, selected: s === status }, s)));
  main.append(h("h1", {}, "Charges"),
    h("p", { class: "lead" }, "Pix charges of " + (session.acting ? session.acting.name : "your account") + ", newest first."),
    h("form", { class: "filters" }, h("label", { for: "status" }, "Status", pick)));
  const view = await listView({
    columns: [
      { title: "Created", cell: (c) => when(c.createdAt) },
      { title: "Amount", class: "num", cell: (c) => money(c.amount) },
      { title: "Status", cell: (c) => badge(c.status) },
      { title: "External id", cell: (c) => c.externalID || "—" },
      { title: "Expires", cell: (c) => when(c.expiresAt) },
      { title: "Due", cell: (c) => c.dueDate || "—" },
      { title: "Id", cell: (c) => h("a", { href: "#/charges/" + c.id }, c.id) },
    ],
    href: (c) => "#/charges/" + c.id,
    empty: "No charges" + (status ? " " + status : "") + ".",
    load: async (cursor) => {
      const d = await api.request("GET", "/charges", { query: { status, limit: 50, cursor } });
      return { rows: d.charges, next: d.nextCursor };
    },
  });
  if (session.current(gen)) main.append(view);
}

// A charge with a due date: its terms (docs/due-dates.md); undefined (no
// row) for an immediate charge.
function dueTerms(c) {
  if (!c.dueDate) return undefined;
  const terms = [c.dueDate + ", payable " + c.daysAfterDue + " days after it"];
  if (c.fine) terms.push("fine " + c.fine + " %");
  if (c.interest) terms.push("interest " + c.interest + " % a month");
  if (c.discount) terms.push(money(c.discount.amount) + " off until " + c.discount.until);
  return h("span", { id: "due" }, terms.join(" · "));
}

// The parts of a Pix's valor (componentesValor), as its bank sent them.
function parts(p) {
  const names = { original: "original", multa: "fine", juros: "interest", abatimento: "abatement", desconto: "discount" };
  const comp = p.componentesValor || {};
  const out = Object.keys(names).filter((k) => comp[k]).map((k) => names[k] + " " + comp[k].valor);
  return out.length ? out.join(" · ") : null;
}

// The Pix a bank reported for this charge (docs/banks.md).
function pixBlock(p) {
  const refunds = (p.devolucoes || []).map((d) => d.id + " " + d.status + " " + d.valor).join(" · ");
  return h("section", { id: "pix" }, h("h2", {}, "Paid by Pix"), dl([
    ["endToEndId", h("code", {}, p.endToEndId)],
    ["Payer", p.infoPagador || null],
    ["Paid at (bank)", p.horario],
    ["Amount (bank)", p.valor],
    ["Parts", parts(p)],
    ["Bank connection", h("a", { href: "#/banks/" + p.connection }, p.connection)],
    ["Heard by", p.source],
    ["Refunds", refunds || null],
  ]));
}

async function renderOne(main, id, gen) {
  const c = await api.request("GET", "/charge/pix/" + encodeURIComponent(id));
  if (!session.current(gen)) return;
  // the image from this server (the page may not reach base-url's host)
  // (none for a recurring charge of Pix Automático: it has no code)
  const img = c.brCode ? h("img", { class: "qr", id: "qr", alt: "QR code of the charge",
                         src: new URL("../v1/qrcode/" + encodeURIComponent(c.id) + "?size=6", document.baseURI).pathname }) : "";
  const cus = c.customer || {};
  main.append(h("p", { class: "crumbs" }, h("a", { href: "#/charges" }, "Charges"), " / ", c.id),
    h("h1", {}, money(c.amount), " ", badge(c.status)),
    h("div", { class: "split" },
      h("div", {},
        dl([
          ["Id", h("code", {}, c.id)],
          ["Status", badge(c.status)],
          ["Amount", money(c.amount)],
          ["Fee", money(c.fee)],
          ["External id", c.externalID],
          ["Comment", c.comment],
          ["Created", when(c.createdAt)],
          ["Updated", when(c.updatedAt)],
          ["Expires", when(c.expiresAt)],
          ["Due", dueTerms(c)],
          ["Customer", c.customer ? [cus.name, cus.document, cus.email, cus.phone].filter(Boolean).join(" · ") : null],
        ]),
        c.pix ? pixBlock(c.pix) : "",
        // a recurring charge of Pix Automático has no code: the payer's bank pays it
        c.brCode ? [h("h2", {}, "BR Code ", copyButton(() => c.brCode)),
                    h("pre", { class: "code brcode", id: "brcode" }, c.brCode)] : ""),
      c.brCode ? h("figure", {}, img, h("figcaption", {}, "Scan with a bank app"))
               : h("p", { id: "no-brcode" }, "No QR code: the payer's bank pays this recurring charge ",
                   c.recurrence ? h("a", { href: "#/recurrences/" + c.recurrence }, "of its recurrence") : "",
                   " on its due date.")));
}
