// Recurrences (Pix Automático, docs/recurrences.md): the list (by status),
// and one recurrence with its QR, what the bank said of it, a cancel, and its
// recurring charges (GET /v1/charges?recurrence=).
import * as api from "./api.js";
import { session } from "./session.js";
import { h, badge, when, money, listView, dl, copyButton, confirmDialog, toast, errorBox } from "./ui.js";

const STATUSES = ["CREATED", "APPROVED", "REJECTED", "EXPIRED", "CANCELLED"];
const FINAL = ["REJECTED", "EXPIRED", "CANCELLED"];

function amountOf(r) {
  if (r.amount !== null) return money(r.amount);
  if (r.minimumAmount !== null) return "at least " + money(r.minimumAmount);
  return "variable";
}

export async function render(main, where, gen) {
  if (where.id) return renderOne(main, where.id, gen);
  const status = where.query.status || "";
  const pick = h("select", { id: "status", on: { change: () => {
    location.hash = "#/recurrences" + (pick.value ? "?status=" + pick.value : "");
  } } }, h("option", { value: "" }, "any"),
    STATUSES.map((s) => h("option", { value: s, selected: s === status }, s)));
  main.append(h("h1", {}, "Recurrences"),
    h("p", { class: "lead" }, "Pix Automático of " + (session.acting ? session.acting.name : "your account") +
      ": what payers approve once, newest first."),
    h("form", { class: "filters" }, h("label", { for: "status" }, "Status", pick)));
  const view = await listView({
    columns: [
      { title: "Created", cell: (r) => when(r.createdAt) },
      { title: "Payer", cell: (r) => r.payer.name },
      { title: "Object", cell: (r) => r.object },
      { title: "Every", cell: (r) => r.periodicity },
      { title: "Amount", class: "num", cell: amountOf },
      { title: "Status", cell: (r) => badge(r.status) },
      { title: "Id", cell: (r) => h("a", { href: "#/recurrences/" + r.id }, r.id) },
    ],
    href: (r) => "#/recurrences/" + r.id,
    empty: "No recurrences" + (status ? " " + status : "") + ".",
    load: async (cursor) => {
      const d = await api.request("GET", "/recurrences", { query: { status, limit: 50, cursor } });
      return { rows: d.recurrences, next: d.nextCursor };
    },
  });
  if (session.current(gen)) main.append(view);
}

async function renderOne(main, id, gen) {
  const r = await api.request("GET", "/recurrences/" + encodeURIComponent(id));
  if (!session.current(gen)) return;
  const img = h("img", { class: "qr", id: "qr", alt: "QR code of the recurrence",
                         src: new URL("../v1/qrcode/" + encodeURIComponent(r.id) + "?size=6", document.baseURI).pathname });
  const closing = r.closing ? [r.closing.code, r.closing.reason, r.closing.by].filter(Boolean).join(" · ") : null;
  const cancel = h("button", { type: "button", class: "danger", id: "cancel", hidden: FINAL.includes(r.status),
    on: { click: async () => {
      if (!(await confirmDialog("Cancel recurrence " + r.id + " at the bank? The payer's bank stops paying it.",
                                "Cancel it"))) return;
      try {
        await api.request("POST", "/recurrences/" + encodeURIComponent(r.id) + "/cancel");
        toast("Cancelled at the bank");
        location.reload();
      } catch (e) {
        main.append(errorBox(e));
      }
    } } }, "Cancel at the bank");
  main.append(h("p", { class: "crumbs" }, h("a", { href: "#/recurrences" }, "Recurrences"), " / ", r.id),
    h("h1", {}, r.object, " ", badge(r.status)),
    h("div", { class: "split" },
      h("div", {},
        dl([
          ["Id", h("code", {}, r.id)],
          ["idRec (the bank's)", h("code", {}, r.idRec)],
          ["Status", badge(r.status)],
          ["Closed", closing],
          ["Payer", r.payer.name + " · " + r.payer.document],
          ["Contract", r.contract],
          ["Every", r.periodicity],
          ["From", r.startDate],
          ["Until", r.endDate || "no end"],
          ["Amount", amountOf(r)],
          ["Retries", r.retryPolicy === "NONE" ? "none" : "up to 3 in 7 days"],
          ["Bank connection", h("a", { href: "#/banks/" + r.connection }, r.connection)],
          ["Postback URL", r.postbackUrl],
          ["Created", when(r.createdAt)],
          ["Updated", when(r.updatedAt)],
        ]),
        cancel,
        h("h2", {}, "BR Code ", copyButton(() => r.brCode)),
        h("pre", { class: "code brcode", id: "brcode" }, r.brCode)),
      h("figure", {}, img, h("figcaption", {}, "The payer scans it to approve the recurrence"))));
  const charges = await listView({
    columns: [
      { title: "Due", cell: (c) => c.dueDate },
      { title: "Amount", class: "num", cell: (c) => money(c.amount) },
      { title: "Status", cell: (c) => badge(c.status) },
      { title: "Created", cell: (c) => when(c.createdAt) },
      { title: "Id", cell: (c) => h("a", { href: "#/charges/" + c.id }, c.id) },
    ],
    href: (c) => "#/charges/" + c.id,
    empty: "No charges yet: charge each cycle with POST /v1/recurrences/" + r.id + "/charges.",
    load: async (cursor) => {
      const d = await api.request("GET", "/charges", { query: { recurrence: r.id, limit: 50, cursor } });
      return { rows: d.charges, next: d.nextCursor };
    },
  });
  if (session.current(gen))
    main.append(h("section", { id: "charges" }, h("h2", {}, "Charges, newest first"), charges));
}
