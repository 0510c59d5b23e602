// The dashboard's shell: sign-in, the environment banner, navigation and
// routing (#/page/id?filters). Every page calls the public API (api.js) and
// learns who is signed in from session.js, which this file keeps up to date.
import * as api from "./api.js";
import { session, setMe, nextGeneration, routeWith } from "./session.js";
import { h, clear, errorBox } from "./ui.js";
import * as keys from "./keys.js";
import * as events from "./events.js";
import * as charges from "./charges.js";
import * as accounts from "./accounts.js";
import * as banks from "./banks.js";
import * as overview from "./overview.js";
import * as endpoints from "./endpoints.js";
import * as recurrences from "./recurrences.js";

const pages = { overview, keys, events, endpoints, charges, recurrences, accounts, banks };
const main = document.getElementById("main");

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, q] = raw.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] || "overview", id: parts[1] || null,
           query: Object.fromEntries(new URLSearchParams(q || "")) };
}

function showEnvironment() {
  const me = session.me;
  const env = document.getElementById("env");
  const prod = me.environment === "production";
  env.className = "env " + (prod ? "production" : "sandbox");
  env.textContent = prod ? "PRODUCTION — live money: changes here are real"
                         : "SANDBOX — test data, no real money";
  env.hidden = false;
  document.body.classList.toggle("is-production", prod);
  document.title = (prod ? "[PRODUCTION] " : "[sandbox] ") + "pixrelay";
  document.getElementById("identity").textContent =
    me.key.kind + " key " + me.key.id.slice(0, 12) + "… · " + me.environment;
  const act = api.acting();
  const actingEl = document.getElementById("acting");
  clear(actingEl);
  actingEl.hidden = !act;
  if (act) {
    actingEl.append("Acting as " + act.name + " ",
      h("button", { type: "button", class: "quiet", on: { click: () => { api.actAs(null); route(); } } },
        "Stop"));
  }
  document.getElementById("top").hidden = false;
}

function signInView(message) {
  setMe(null);
  document.getElementById("env").hidden = true;
  document.getElementById("top").hidden = true;
  document.body.classList.remove("is-production");
  document.title = "pixrelay — sign in";
  const input = h("input", { type: "password", id: "apikey", autocomplete: "off", spellcheck: "false",
                             placeholder: "pxr_test_… or pxr_live_…", required: true,
                             "aria-label": "API key" });
  const err = h("p", { class: "error", role: "alert", hidden: !message }, message || "");
  const form = h("form", { class: "signin", method: "post", action: "#" },
    h("h1", {}, "pixrelay"),
    h("label", { for: "apikey" }, "API key"),
    input,
    h("button", { type: "submit", class: "primary" }, "Sign in"),
    err,
    h("p", { class: "hint" },
      "The key stays in this browser tab only (session storage) and is sent to this server " +
      "alone, in the Authorization header. A master key sees every account of its environment."));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const key = input.value.trim();
    input.value = "";
    if (!api.keyLooksRight(key)) {
      err.textContent = "That is not a pixrelay API key (pxr_test_… or pxr_live_… and 44 letters and digits).";
      err.hidden = false;
      return;
    }
    try {
      setMe(await api.signIn(key));
      if (!location.hash || location.hash === "#" || location.hash === "#/") location.hash = "#/overview";
      route();
    } catch (e) {
      err.textContent = "Signing in failed: " + e.message;
      err.hidden = false;
    }
  });
  clear(main).append(form);
  input.focus();
}

async function route() {
  const gen = nextGeneration();
  document.getElementById("toast").hidden = true;
  if (!api.signedIn()) {
    signInView();
    return;
  }
  if (!session.me) {
    try {
      setMe(await api.request("GET", "/me", { noActing: true }));
    } catch (e) {
      if (e.status !== 401) clear(main).append(errorBox(e));
      return;
    }
  }
  showEnvironment();
  const where = parseHash();
  for (const a of document.querySelectorAll("nav a")) {
    a.classList.toggle("current", a.dataset.page === where.page);
  }
  const page = pages[where.page];
  clear(main);
  if (!page) {
    main.append(h("p", { class: "error" }, "No such page: " + where.page));
    return;
  }
  try {
    await page.render(main, where, gen);
  } catch (e) {
    if (session.current(gen) && e.status !== 401) main.append(errorBox(e));
  }
}

routeWith(route);
api.whenUnauthorized((message) => signInView("Signed out: " + message));
document.getElementById("signout").addEventListener("click", () => {
  api.signOut();
  location.hash = "";
  signInView("Signed out.");
});
window.addEventListener("hashchange", route);
route();
