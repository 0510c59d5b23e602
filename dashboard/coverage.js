// The money events without a destination: an account whose postbackUrl is
// empty and none of whose enabled webhook endpoints takes one of them would
// record it delivered nowhere (docs/postbacks.md, "The money events"). The
// overview and the endpoints page warn about it, from the public API: the
// accounts in view (GET /v1/baas/accounts, the first 100) and, for those
// without a postbackUrl, their endpoints.
import * as api from "./api.js";
import { session } from "./session.js";
import { h } from "./ui.js";

export const MONEY_EVENTS = ["EVENT:CHARGE_PAID", "EVENT:CHARGE_REFUND", "EVENT:PIX_MED_REFUND",
                             "EVENT:PIX_UNMATCHED", "EVENT:PIX_REFUSED"];
const OPERATIONAL = "EVENT:OPERATIONAL_";

// Does an endpoint's eventTypes take `type`? (as lib/endpoint.lua's takes:
// none is every type but the operational ones; "X*" a prefix)
export function takes(types, type) {
  const operational = type.startsWith(OPERATIONAL);
  if (!types || !types.length) return !operational;
  return types.some((t) => t.endsWith("*")
    ? type.startsWith(t.slice(0, -1)) && (!operational || t.length - 1 >= OPERATIONAL.length)
    : t === type);
}

// The money events no destination of `account` takes (account: as
// GET /v1/baas/accounts lists it; endpoints: its endpoints).
export function uncovered(account, endpoints) {
  if (account.postbackUrl) return [];
  const on = endpoints.filter((e) => e.enabled);
  return MONEY_EVENTS.filter((t) => !on.some((e) => takes(e.eventTypes, t)));
}

// Resolves to the warning (a <div id="money-warning">) or null when every
// account in view has a destination for each money event.
export async function moneyWarning() {
  const d = await api.request("GET", "/baas/accounts", { query: { limit: 100 } });
  const envScope = session.master && !session.acting;
  const bare = d.accounts.filter((a) => !a.postbackUrl);
  const found = await Promise.all(bare.map(async (a) => {
    const eps = await api.request("GET", "/webhook-endpoints", envScope ? { account: a.id } : {});
    return { account: a, types: uncovered(a, eps.endpoints) };
  }));
  const missing = found.filter((f) => f.types.length);
  if (!missing.length) return null;
  return h("div", { class: "warn", id: "money-warning", role: "alert" },
    h("strong", {}, "Money events with no destination. "),
    "These events would be recorded and sent nowhere: the account has no postbackUrl and no " +
    "enabled webhook endpoint takes them. Set a postbackUrl, or add an endpoint that takes them.",
    h("ul", {}, missing.map((m) => h("li", { dataset: { account: m.account.id } },
      (m.account.tradeName || m.account.officialName || m.account.id) + ": ",
      m.types.flatMap((t, i) => [i ? ", " : "", h("code", {}, t)])))));
}
