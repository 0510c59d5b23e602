// Drives Debian's chromium through the dashboard, as a person would, with
// playwright-core (no browser download). Started by test_dashboard.py, which
// runs redis-server, pixrelay and a postback sink and passes what it made in
// the environment variable DASHBOARD_TEST (JSON). Prints one JSON line with
// what the Python side checks at the sink; exits non-zero on any failure.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const cfg = JSON.parse(process.env.DASHBOARD_TEST);
const base = cfg.url; // http://127.0.0.1:PORT
const shots = cfg.screenshots; // a directory
const out = {};
const problems = [];
// HTTP statuses the browser may log as failed loads: a refused key (401) is
// expected; others only while a step makes the API fail on purpose
const expectedStatus = new Set([401]);
const unexpected = (m) => m.type() === "error" &&
  !expectedStatus.has(Number((/status of (\d+)/.exec(m.text()) || [])[1]));

async function api(method, path, key, body) {
  const headers = { Authorization: "Bearer " + key };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(base + "/v1" + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

const profile = mkdtempSync(join(tmpdir(), "pixrelay-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: cfg.chromium || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 860 },
  timeout: 60000,
});
try {
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => {
    // anything not expected, CSP violations included, is a problem
    if (unexpected(m)) problems.push("console: " + m.text());
  });
  const shot = (name) => page.screenshot({ path: join(shots, name + ".png"), fullPage: true });

  // ---- the page and its headers ----
  const res = await page.goto(base + "/dashboard");
  assert.equal(page.url(), base + "/dashboard/");
  const hdr = res.headers();
  assert.match(hdr["content-security-policy"], /default-src 'none'; script-src 'self'; style-src 'self'/);
  assert.match(hdr["content-security-policy"], /frame-ancestors 'none'/);
  assert.equal(hdr["x-frame-options"], "DENY");
  assert.equal(hdr["x-content-type-options"], "nosniff");
  assert.equal(hdr["referrer-policy"], "no-referrer");

  // figures, printed (not judged): what loading the page costs
  out.figures = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const files = performance.getEntriesByType("resource").filter((r) => r.name.includes("/dashboard/"));
    return { domContentLoadedMs: Math.round(nav.domContentLoadedEventEnd),
             loadMs: Math.round(nav.loadEventEnd),
             files: files.length + 1,
             bytes: nav.encodedBodySize + files.reduce((n, r) => n + r.encodedBodySize, 0) };
  });

  // ---- sign in ----
  await page.locator("#apikey").fill("not a key");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("That is not a pixrelay API key").waitFor();
  await page.locator("#apikey").fill(cfg.revokedKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("Signing in failed: API key revoked").waitFor();
  await shot("signin");
  await page.locator("#apikey").fill(cfg.master);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#env.sandbox").waitFor();
  assert.match(await page.locator("#env").innerText(), /SANDBOX/);
  assert.equal(await page.evaluate(() => sessionStorage.getItem("pixrelay.key")), cfg.master);
  assert.equal(await page.evaluate(() => localStorage.length), 0);
  assert.ok(!page.url().includes(cfg.master), "the key is in the URL");
  assert.equal(await page.locator("#apikey").count(), 0);

  // ---- keys: create, copy, use, revoke ----
  await page.getByRole("link", { name: "Keys" }).click();
  await page.locator("#key-description").fill("browser test key");
  await page.getByRole("button", { name: "Create key" }).click();
  const secret = (await page.locator("#new-key-text").innerText()).trim();
  assert.match(secret, /^pxr_test_[0-9A-Za-z]{44}$/);
  await page.getByRole("button", { name: "Copy key" }).click();
  await page.getByRole("button", { name: "Copied" }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, secret, "the clipboard holds the new key");
  await shot("keys");
  let me = await api("GET", "/me", copied);
  assert.equal(me.status, 200, JSON.stringify(me.json));
  assert.equal(me.json.data.key.kind, "account");
  await page.getByRole("button", { name: "Done, I have stored it" }).click();
  assert.equal(await page.locator("#new-key-text").count(), 0, "the text is gone from the page");
  const row = page.locator("tr", { hasText: "browser test key" });
  await row.getByRole("button", { name: "Revoke" }).click();
  await page.locator("#confirm-text").getByText("browser test key").waitFor();
  await page.locator("#confirm-ok").click();
  await page.getByText("Key \u201cbrowser test key\u201d revoked.").waitFor();
  await row.locator(".badge.revoked").waitFor();
  me = await api("GET", "/me", copied);
  assert.deepEqual([me.status, me.json.error], [401, "API key revoked"]);
  out.revokedKeyId = (await api("GET", "/keys?limit=100", cfg.master)).json.data.keys
    .find((k) => k.description === "browser test key").id;

  // ---- events: a dead one, opened, replayed until delivered ----
  await page.getByRole("link", { name: "Events" }).click();
  await page.locator("#state").selectOption("dead");
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(/#\/events\?state=dead/);
  await page.locator("tr", { hasText: cfg.deadEvent }).waitFor();
  assert.equal(await page.locator("tbody tr .badge.delivered").count(), 0, "the filter shows dead events only");
  await shot("events");
  await page.locator("tr", { hasText: cfg.deadEvent }).click();
  await page.waitForURL(new RegExp("#/events/" + cfg.deadEvent));
  await page.locator("h1 .badge.dead").waitFor();
  const attempt = page.locator("table.attempts tbody tr").first();
  assert.match(await attempt.innerText(), /410/);
  assert.match(await page.locator("#payload").innerText(), new RegExp(cfg.deadEvent));
  assert.match(await page.locator("pre.code").first().innerText(), new RegExp("webhook-id: " + cfg.deadEvent));
  await shot("event");
  await page.locator("#replay").click();
  await page.getByText("Queued to be delivered again.").waitFor();
  await page.locator("h1 .badge.delivered").waitFor({ timeout: 30000 });
  assert.match(await page.locator("table.attempts tbody tr").last().innerText(), /200/);
  out.replayed = cfg.deadEvent;
  await shot("event-delivered");

  // bulk: every dead event matching the filter
  await page.goto(base + "/dashboard/#/events?state=dead");
  await page.locator("tr", { hasText: cfg.bulkEvent }).waitFor();
  await page.locator("#bulk-replay").click();
  await page.locator("#confirm-ok").click();
  await page.getByText(/^\d+ matched, \d+ queued again\.$/).waitFor();
  out.bulkToast = await page.locator("#toast").innerText();

  // an event's deliveries to webhook endpoints: a badge each in the list, a table on its page
  const ep = (await api("POST", "/webhook-endpoints", cfg.master, { url: cfg.sinkUrl + "/endpoint" })).json.data;
  const fanned = (await api("POST", "/charge/pix/create", cfg.master, { amount: 1300, postbackUrl: cfg.sinkUrl + "/ok" })).json.data;
  const paid = await fetch(base + "/v1/charge/pix/" + fanned.id + "/simulate-payment",
    { method: "POST", headers: { Authorization: "Bearer " + cfg.master } });
  const fannedEvent = paid.headers.get("X-Event-Id");
  await page.goto(base + "/dashboard/#/events/" + fannedEvent);
  const epRow = page.locator("table.endpoints tbody tr", { hasText: ep.id });
  await epRow.locator(".badge.delivered").waitFor({ timeout: 30000 });
  assert.match(await epRow.innerText(), new RegExp(cfg.sinkUrl + "/endpoint"));
  await shot("event-endpoints");
  await page.goto(base + "/dashboard/#/events");
  await page.locator("tr", { hasText: fannedEvent }).locator(".endpoints .badge.delivered").waitFor();
  await api("DELETE", "/webhook-endpoints/" + ep.id, cfg.master);
  out.endpointEvent = fannedEvent;

  // ---- the overview: its numbers are the API's, its chart one bar a minute ----
  // (events may still settle meanwhile: compared when the API said the same before and after)
  const tileText = async (id) => (await page.locator("#" + id).innerText()).trim();
  const overviewMatches = async (key) => {
    for (let i = 0; ; i++) {
      const before = (await api("GET", "/overview", key)).json.data;
      await page.goto(base + "/dashboard/#/overview");
      await page.reload();
      await page.locator("#ov-chart").waitFor();
      const shown = {};
      for (const id of ["ov-waiting", "ov-held", "ov-hour-delivered", "ov-hour-failed", "ov-hour-dead",
                        "ov-day-delivered", "ov-day-failed", "ov-day-dead"]) shown[id] = await tileText(id);
      const after = (await api("GET", "/overview", key)).json.data;
      const same = (a, b) => JSON.stringify([a.waiting, a.held, a.lastHour, a.lastDay, a.failing]) ===
        JSON.stringify([b.waiting, b.held, b.lastHour, b.lastDay, b.failing]);
      if (!same(before, after)) {
        assert.ok(i < 10, "the overview never held still");
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      assert.deepEqual(shown, {
        "ov-waiting": String(after.waiting), "ov-held": String(after.held),
        "ov-hour-delivered": String(after.lastHour.delivered), "ov-hour-failed": String(after.lastHour.failedAttempts),
        "ov-hour-dead": String(after.lastHour.dead), "ov-day-delivered": String(after.lastDay.delivered),
        "ov-day-failed": String(after.lastDay.failedAttempts), "ov-day-dead": String(after.lastDay.dead) });
      return after;
    }
  };
  await page.getByRole("link", { name: "Overview" }).click();
  const ov = await overviewMatches(cfg.master);
  assert.ok(ov.lastHour.delivered >= cfg.overviewAtLeast.delivered && ov.lastHour.dead >= cfg.overviewAtLeast.dead,
    JSON.stringify(ov.lastHour));
  assert.equal(await page.locator("#ov-chart").getAttribute("data-points"), "180");
  assert.equal(await page.locator("#ov-chart rect.bar.delivered").count(), 180);
  // the bars' titles add up to the API's series
  const titled = await page.locator("#ov-chart g.minute title").allTextContents();
  assert.equal(titled.reduce((n, t) => n + Number(/: (\d+) delivered/.exec(t)[1]), 0),
    ov.perMinute.delivered.reduce((a, b) => a + b, 0));
  // the host that answered 410 is failing, with its dead
  const goneHost = new URL(cfg.sinkUrl).host;
  const failingRow = page.locator("#ov-failing tr", { hasText: goneHost });
  assert.match(await failingRow.innerText(), /\b2\s+2\s+0$/);
  // each bank connection's reconciliation
  await page.locator("#ov-banks tr", { hasText: "caixa@loja.example" }).locator(".badge", { hasText: "failing" }).waitFor();
  await page.locator("#ov-banks tr", { hasText: "recebimentos@loja.example" }).locator(".badge", { hasText: "ok" }).waitFor();
  // the platform account has no postbackUrl and no endpoint: its money events have no destination
  const warning = page.locator("#money-warning");
  await warning.waitFor();
  const platformWarning = warning.locator("li[data-account='" + cfg.platform + "'] code");
  assert.deepEqual(await platformWarning.allInnerTexts(), ["EVENT:CHARGE_PAID", "EVENT:CHARGE_REFUND",
    "EVENT:PIX_MED_REFUND", "EVENT:PIX_UNMATCHED", "EVENT:PIX_REFUSED"], await warning.innerHTML());
  // acting as the shop: the shop's numbers, as the API gives them for it
  await page.evaluate((id) => sessionStorage.setItem("pixrelay.acting", JSON.stringify({ id, name: "Shop" })), cfg.shop);
  await page.reload();
  await page.locator("#acting", { hasText: "Acting as Shop" }).waitFor();
  await page.locator("#ov-chart").waitFor();
  const shopOv = (await (await fetch(base + "/v1/overview", { headers: { Authorization: "Bearer " + cfg.master,
    "X-Account-ID": cfg.shop } })).json()).data;
  assert.equal(shopOv.account, cfg.shop);
  assert.deepEqual([await tileText("ov-day-delivered"), await tileText("ov-day-dead")],
    [String(shopOv.lastDay.delivered), String(shopOv.lastDay.dead)]);
  assert.equal(shopOv.lastDay.dead, 0);
  assert.equal(await page.locator("#money-warning").count(), 0, "the shop has a postbackUrl");
  await page.evaluate(() => sessionStorage.removeItem("pixrelay.acting"));
  await page.reload();
  await page.locator("#ov-chart").waitFor();
  await page.locator("#chart-span").click();
  await page.waitForURL(/#\/overview\?minutes=60/);
  await page.locator("#ov-chart[data-points='60']").waitFor();
  assert.equal(await page.locator("#ov-chart rect.bar.delivered").count(), 60);

  // ---- endpoints: create (its secret once), edit, test, see it fail, disable, enable, delete ----
  await page.getByRole("link", { name: "Endpoints" }).click();
  await page.locator("#money-warning").waitFor();
  await page.locator("#ep-url").fill(cfg.sinkUrl + "/ep-page");
  await page.locator("#ep-description").fill("ERP");
  await page.locator("#ep-types").fill("EVENT:CHARGE_* EVENT:PIX_*");
  await page.getByRole("button", { name: "Create endpoint" }).click();
  const epSecret = (await page.locator("#new-secret-text").innerText()).trim();
  assert.match(epSecret, /^whsec_/);
  await page.getByRole("button", { name: "Copy secret" }).click();
  await page.getByRole("button", { name: "Copied" }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), epSecret);
  // its filter takes every money event: no warning now
  await page.locator("#money-warning").waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Done, I have stored it" }).click();
  assert.equal(await page.locator("#new-secret-text").count(), 0, "the secret is gone from the page");
  const made = (await api("GET", "/webhook-endpoints", cfg.master)).json.data.endpoints
    .find((e) => e.url === cfg.sinkUrl + "/ep-page");
  assert.deepEqual([made.description, made.eventTypes, made.enabled], ["ERP", ["EVENT:CHARGE_*", "EVENT:PIX_*"], true]);
  out.pageEndpoint = made.id;
  out.pageEndpointSecret = epSecret;
  await page.locator("table.endpoints tr", { hasText: "/ep-page" }).locator("a").click();
  await page.waitForURL(new RegExp("#/endpoints/" + made.id));
  // edit
  await page.locator("#ep-description").fill("ERP (orders)");
  await page.locator("#ep-headers").fill("X-Team: erp");
  await page.getByRole("button", { name: "Save" }).click();
  await page.locator("h1", { hasText: "ERP (orders)" }).waitFor();
  const edited = (await api("GET", "/webhook-endpoints/" + made.id, cfg.master)).json.data;
  assert.deepEqual([edited.description, edited.headers], ["ERP (orders)", { "X-Team": "erp" }]);
  // a test ping, its outcome shown
  await page.locator("#test-endpoint").click();
  await page.locator("#test-outcome").getByText(/HTTP 200 in \d+ ms/).waitFor();
  assert.match(await page.locator("#test-outcome .badge").innerText(), /delivered/);
  // deliveries: one delivered, then one the endpoint refuses (503, as test_dashboard.py
  // scripted the sink: the ping, one delivery, then 503s) and retries
  for (let i = 0; i < 2; i++) {
    const c = (await api("POST", "/charge/pix/create", cfg.master, { amount: 2100 + i, postbackUrl: cfg.sinkUrl + "/ok" })).json.data;
    await api("POST", "/charge/pix/" + c.id + "/simulate-payment", cfg.master);
    await new Promise((r) => setTimeout(r, 300));
  }
  let stats = null;
  for (let i = 0; i < 60; i++) {
    stats = (await api("GET", "/webhook-endpoints/" + made.id, cfg.master)).json.data.stats;
    if (stats.delivered >= 1 && stats.failedAttempts >= 1) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.ok(stats.delivered >= 1 && stats.failedAttempts >= 1, JSON.stringify(stats));
  // disabled by request: it keeps its retry, attempts nothing more
  await page.locator("#toggle-endpoint", { hasText: "Disable" }).click();
  await page.getByText("Endpoint disabled: it takes no new event until enabled.").waitFor();
  await page.locator("h1 .badge", { hasText: "disabled by request" }).waitFor();
  await new Promise((r) => setTimeout(r, 500));
  await page.goto(base + "/dashboard/#/endpoints");
  const pageEp = (await api("GET", "/webhook-endpoints/" + made.id, cfg.master)).json.data;
  const rate = (Math.round((pageEp.stats.delivered * 1000) / (pageEp.stats.delivered + pageEp.stats.failedAttempts)) / 10) + "%";
  const epRowList = page.locator("table.endpoints tr", { hasText: "/ep-page" });
  await epRowList.locator(".badge", { hasText: "disabled by request" }).waitFor();
  assert.equal(await epRowList.locator("td.rate").innerText(), rate);
  assert.equal(await epRowList.locator("td.last-error").innerText(), pageEp.stats.lastError);
  assert.ok(pageEp.stats.lastError, "a last error");
  await page.locator("#money-warning").waitFor(); // disabled: no destination again
  await shot("endpoints");
  // the overview lists it as disabled, and warns
  await page.goto(base + "/dashboard/#/overview");
  await page.locator("#money-warning").waitFor();
  // (named by its URL, with why it is disabled)
  const disabledRow = page.locator("#ov-disabled tr", { hasText: cfg.sinkUrl + "/ep-page" });
  await disabledRow.getByText("disabled by request").waitFor();
  await shot("overview");
  // enabled again: no warning
  await page.goto(base + "/dashboard/#/endpoints/" + made.id);
  assert.equal(await page.locator("#success-rate").innerText(), rate);
  assert.equal(await page.locator("#last-error").innerText(), pageEp.stats.lastError);
  await page.locator("#test-endpoint").click();
  await page.locator("#test-outcome").waitFor();
  await shot("endpoint");
  await page.locator("#toggle-endpoint", { hasText: "Enable" }).click();
  await page.locator("h1 .badge", { hasText: "enabled" }).waitFor();
  await page.goto(base + "/dashboard/#/overview");
  await page.locator("#ov-chart").waitFor();
  await page.locator("#ov-at").waitFor();
  await page.waitForTimeout(500);
  assert.equal(await page.locator("#money-warning").count(), 0, "no warning once enabled");
  // rotate: the new secret shown once
  await page.goto(base + "/dashboard/#/endpoints/" + made.id);
  await page.locator("#rotate-grace").fill("60");
  await page.locator("#rotate-secret").click();
  await page.locator("#confirm-ok").click();
  const rotated = (await page.locator("#new-secret-text").innerText()).trim();
  assert.match(rotated, /^whsec_/);
  assert.notEqual(rotated, epSecret);
  await page.locator("dl").getByText("Previous secret signs until").waitFor();
  // delete, after a confirmation
  await page.locator("#delete-endpoint").click();
  await page.locator("#confirm-text").getByText(cfg.sinkUrl + "/ep-page").waitFor();
  await page.locator("#confirm-ok").click();
  await page.waitForURL(/#\/endpoints$/);
  await page.getByText("No webhook endpoints").waitFor();
  assert.equal((await api("GET", "/webhook-endpoints/" + made.id, cfg.master)).status, 404);

  // ---- charges: list, one with its QR image and BR Code ----
  await page.getByRole("link", { name: "Charges" }).click();
  await page.locator("tr", { hasText: cfg.charge }).waitFor();
  await shot("charges");
  await page.locator("tr", { hasText: cfg.charge }).click();
  await page.locator("#brcode").waitFor();
  const charge = (await api("GET", "/charge/pix/" + cfg.charge, cfg.master)).json.data;
  assert.equal(await page.locator("#brcode").innerText(), charge.brCode);
  // times are Brasília time (UTC−3, the reports' days), and say so
  const brt = new Date(Date.parse(charge.createdAt.replace(" ", "T") + "Z") - 3 * 3600 * 1000)
    .toISOString().replace("T", " ").slice(0, 19) + " BRT";
  assert.match(await page.locator("dl").first().innerText(), new RegExp("Created\\s+" + brt));
  await page.waitForFunction(() => document.getElementById("qr").complete && document.getElementById("qr").naturalWidth > 0);
  await shot("charge");
  // a charge with a due date shows its terms (docs/due-dates.md)
  const dueDay = new Date(Date.now() - 3 * 3600 * 1000 + 5 * 86400 * 1000).toISOString().slice(0, 10);
  const dueCharge = (await api("POST", "/charge/pix/create", cfg.master, { amount: 10000, dueDate: dueDay,
    daysAfterDue: 10, fine: "2.00", interest: "1.00", discount: { amount: 500, until: dueDay },
    name: "Maria Souza", document: "52998224725" })).json.data;
  await page.evaluate((id) => { location.hash = "#/charges/" + id; }, dueCharge.id);
  assert.equal(await page.locator("#due").innerText(),
    dueDay + ", payable 10 days after it · fine 2.00 % · interest 1.00 % a month · R$ 5,00 off until " + dueDay);

  // ---- recurrences: the list, one with its QR; the bank's /rec callback approves it; cancel at the bank ----
  await page.getByRole("link", { name: "Recurrences" }).click();
  await page.waitForURL(/#\/recurrences$/);
  const recRow = page.locator("tr", { hasText: cfg.recurrence });
  await recRow.locator(".badge", { hasText: "CREATED" }).waitFor();
  assert.match(await recRow.innerText(), /Fulano de Tal\s+Academia: plano mensal\s+MONTHLY\s+R\$ 99,90\s+CREATED/);
  assert.match(await page.locator("tr", { hasText: cfg.otherRecurrence }).innerText(), /ANNUAL\s+at least R\$ 500,00/);
  await shot("recurrences");
  await recRow.click();
  await page.waitForURL(new RegExp("#/recurrences/" + cfg.recurrence));
  const rec = (await api("GET", "/recurrences/" + cfg.recurrence, cfg.master)).json.data;
  await page.locator("h1 .badge", { hasText: "CREATED" }).waitFor();
  assert.equal(await page.locator("#brcode").innerText(), rec.brCode);
  assert.match(await page.locator("dl").first().innerText(), new RegExp("idRec \\(the bank's\\)\\s+" + rec.idRec));
  await page.waitForFunction(() => document.getElementById("qr").complete && document.getElementById("qr").naturalWidth > 0);
  assert.ok(await page.locator("#cancel").isVisible(), "Cancel at the bank while not final");
  await shot("recurrence");
  // the payer approved it: the bank's /rec callback, as the bank posts it
  const heard = await fetch(base + cfg.recHook, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(cfg.recCallback) });
  assert.equal(heard.status, 200);
  assert.deepEqual((await heard.json()).data.recs, [{ idRec: rec.idRec, outcome: "taken" }]);
  await page.reload();
  await page.locator("h1 .badge", { hasText: "APPROVED" }).waitFor();
  // cancelled at the bank, after a confirmation
  await page.locator("#cancel").click();
  await page.locator("#confirm-text").getByText(rec.id).waitFor();
  await page.locator("#confirm-ok").click();
  await page.locator("h1 .badge", { hasText: "CANCELLED" }).waitFor();
  assert.match(await page.locator("dl").first().innerText(), /Closed\s+SLCR · USUARIO_RECEBEDOR/);
  assert.ok(await page.locator("#cancel").isHidden(), "no Cancel once final");
  // a recurring charge of a recurrence: no BR Code, no QR; a link to its recurrence
  await page.evaluate((id) => { location.hash = "#/charges/" + id; }, cfg.recurringCharge);
  await page.locator("#no-brcode").waitFor();
  assert.equal(await page.locator("#qr").count(), 0);
  assert.equal(await page.locator("#brcode").count(), 0);
  assert.equal(await page.locator("#no-brcode a").getAttribute("href"), "#/recurrences/" + cfg.cycleRecurrence);
  // its recurrence's page lists its charges; the link opens the charge's page
  const recurring = (await api("GET", "/charge/pix/" + cfg.recurringCharge, cfg.master)).json.data;
  await page.locator("#no-brcode a").click();
  await page.waitForURL(new RegExp("#/recurrences/" + cfg.cycleRecurrence + "$"));
  const chargeRow = page.locator("#charges tr", { hasText: cfg.recurringCharge });
  await chargeRow.locator(".badge", { hasText: "PENDING" }).waitFor();
  assert.equal(await page.locator("#charges tbody tr").count(), 1, "the recurrence's one charge only");
  assert.match(await chargeRow.innerText(), new RegExp(recurring.dueDate + "\\s+R\\$ 49,90\\s+PENDING"));
  await chargeRow.getByRole("link", { name: cfg.recurringCharge }).click();
  await page.waitForURL(new RegExp("#/charges/" + cfg.recurringCharge + "$"));
  await page.locator("#no-brcode").waitFor();
  await page.goto(base + "/dashboard/#/recurrences?status=CANCELLED");
  await page.locator("tr", { hasText: cfg.recurrence }).locator(".badge", { hasText: "CANCELLED" }).waitFor();
  assert.equal(await page.locator("tr", { hasText: cfg.otherRecurrence }).count(), 0, "the filter shows CANCELLED only");

  // ---- banks: the connection, what its bank reported, the charge it paid ----
  await page.getByRole("link", { name: "Banks" }).click();
  await page.locator("tr", { hasText: "pagamentos@loja.example" }).waitFor();
  assert.equal(await page.locator("#connect-bank").count(), 0, "a master key acting for no account connects nothing");
  // each connection's reconciliation at a glance
  await page.locator("tr", { hasText: "pagamentos@loja.example" }).getByText("webhook only").waitFor();
  await page.locator("tr", { hasText: "recebimentos@loja.example" }).locator(".badge", { hasText: "ok" }).waitFor();
  await page.locator("tr", { hasText: "caixa@loja.example" }).locator(".badge", { hasText: "failing" }).waitFor();
  await shot("banks");
  await page.locator("tr", { hasText: "pagamentos@loja.example" }).click();
  await page.waitForURL(new RegExp("#/banks/" + cfg.bankConn));
  const paidRow = page.locator("tr", { hasText: cfg.bankE2E });
  await paidRow.locator(".badge", { hasText: "paid" }).waitFor();
  await page.locator("tr", { hasText: "unknown_txid" }).locator(".badge", { hasText: "unmatched" }).waitFor();
  // no API credentials: how the operator gives them, and no button
  await page.locator("#no-credentials").waitFor();
  assert.match(await page.locator("#credentials-command").innerText(),
    new RegExp("^pixrelay bank credentials " + cfg.bankConn + " --env sandbox "));
  assert.equal(await page.locator("#reconcile-now").count(), 0, "no Reconcile now without credentials");
  // its day's report: what the webhook brought today, never complete, and why
  await page.locator("#report-complete").getByText("not complete").waitFor();
  assert.deepEqual(await page.locator("#report-why li").allInnerTexts(),
    ["the connection has no API credentials: only its webhook is heard"]);
  assert.equal(await page.locator("#report-read").innerText(), "Read of the bank's list (Brasilia time): nothing of this day.");
  const plainReport = (await api("GET", "/bank/reconciliation?connection=" + cfg.bankConn, cfg.master)).json.data;
  const reportRow = (name) => page.locator("#report-body table.report tr", { hasText: name }).first();
  assert.match(await reportRow("Received").innerText(), new RegExp("\\b" + plainReport.pix.received + "\\b.*R\\$ " +
    (plainReport.cents.received / 100).toFixed(2).replace(".", ",")));
  await paidRow.getByRole("link").first().click();
  await page.waitForURL(new RegExp("#/charges/" + cfg.bankCharge));
  await page.locator("#pix").getByText(cfg.bankE2E).waitFor();
  await page.locator("#pix").getByText("Maria, pedido 53").waitFor();
  await shot("charge-pix");

  // ---- a connection with API credentials: Reconcile now recovers the Pix its webhook missed ----
  await page.goto(base + "/dashboard/#/banks/" + cfg.apiConn);
  const conn = (await api("GET", "/bank/connections/" + cfg.apiConn, cfg.master)).json.data;
  const bankApi = page.locator("#bank-api");
  await bankApi.getByText(cfg.apiUrl, { exact: true }).waitFor();
  await bankApi.getByText(cfg.clientId, { exact: true }).waitFor();
  await bankApi.getByText(conn.api.certificate.subject).waitFor();
  await bankApi.getByText(conn.api.certificate.sha256).waitFor();
  const html = await page.content();
  for (const secret of cfg.secrets) assert.ok(!html.includes(secret), "a secret is on the page");
  await page.locator("#recon-health .badge", { hasText: "ok" }).waitFor();
  assert.match(await page.locator("#last-success").innerText(), /^\d+ (second|minute)s? ago \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d BRT\)$/);
  await page.locator("#report-complete").waitFor();
  assert.ok(!(await page.locator("#report").innerText()).includes(cfg.apiE2E), "recovered before it was asked");
  assert.equal(await page.locator("#bank-log").getByText(cfg.apiE2E).count(), 0);
  // the API refusing is shown, not swallowed
  expectedStatus.add(503);
  await page.route("**/v1/bank/connections/*/reconcile", (r) => r.fulfill({ status: 503, contentType: "application/json",
    body: JSON.stringify({ error: "redis is out of reach", status: 503, data: [] }) }));
  await page.locator("#reconcile-now").click();
  await page.locator("#reconcile-status .error").getByText("redis is out of reach").waitFor();
  await page.unroute("**/v1/bank/connections/*/reconcile");
  expectedStatus.delete(503);
  await page.locator("#reconcile-now").click();
  await page.locator("#reconcile-status").getByText("Reconciliation scheduled").waitFor();
  await page.locator("#toast").getByText("Reconciliation scheduled.").waitFor();
  await page.locator("#recovered").getByText(cfg.apiE2E).waitFor({ timeout: 30000 });
  assert.match(await page.locator("#reconcile-done").innerText(), /: \d+ Pix listed, 1 new\.$/);
  assert.match(await page.locator("#new-total").innerText(), /^1 Pix /);
  assert.match(await reportRow("recovered by the reconciliation").innerText(), new RegExp("\\b1\\b.*" + cfg.apiAmount.replace(/[$.]/g, "\\$&")));
  assert.match(await reportRow("by the bank's webhook").innerText(), /\b0\b.*R\$ 0,00/);
  await page.locator("#report-body table.report tr", { hasText: "paid" }).first().waitFor();
  // today is read (from 10 minutes before the credentials, or from midnight), not over
  assert.match(await page.locator("#report-read .span").first().innerText(), /^\d\d:\d\d:\d\d – \d\d:\d\d:\d\d$/);
  await page.locator("#report-why li", { hasText: /^the day is not over$/ }).waitFor();
  const logRow = page.locator("#bank-log tr", { hasText: cfg.apiE2E });
  await logRow.getByText("reconciliation").waitFor();
  await logRow.locator(".badge", { hasText: "paid" }).waitFor();
  const report = (await api("GET", "/bank/reconciliation?connection=" + cfg.apiConn, cfg.master)).json.data;
  assert.deepEqual(report.recoveredEndToEndIds, [cfg.apiE2E]);
  // the picture without the toast over it, from the top
  await page.evaluate(() => { document.getElementById("toast").hidden = true; window.scrollTo(0, 0); });
  await shot("bank");
  // another day: yesterday in Brasilia, before the connection: never read, so not complete
  const yesterday = new Date(Date.now() - 3 * 3600e3 - 86400e3).toISOString().slice(0, 10);
  await page.locator("#report-date").fill(yesterday);
  await page.locator("#report-why li", { hasText: /^the connection was made on \d{4}-\d\d-\d\d at [\d:]+, after this day/ }).waitFor();
  assert.equal(await page.locator("#report-complete .badge").innerText(), "not complete");
  // (to 00:10 the next day; to where the first run began when made just after midnight)
  await page.locator("#report-why li", { hasText: /^not read from 00:00 to / }).waitFor();
  await page.locator("#none-recovered").waitFor();
  assert.match(await reportRow("Received").innerText(), /\b0\b.*R\$ 0,00/);
  // a report the API refuses is shown
  expectedStatus.add(400);
  await page.route("**/v1/bank/reconciliation?**", (r) => r.fulfill({ status: 400, contentType: "application/json",
    body: JSON.stringify({ error: "date: must be a day, YYYY-MM-DD (Brasilia time)", status: 400, data: [] }) }));
  await page.locator("#report-date").fill("2026-01-02");
  await page.locator("#report-slot .error").getByText("date: must be a day").waitFor();
  await page.unroute("**/v1/bank/reconciliation?**");
  expectedStatus.delete(400);

  // ---- a connection whose bank is down: the failure and its error, flagged ----
  await page.goto(base + "/dashboard/#/banks/" + cfg.downConn);
  let down = (await api("GET", "/bank/connections/" + cfg.downConn, cfg.master)).json.data.api.reconciliation;
  assert.ok(down.failures >= 1 && down.lastError, JSON.stringify(down));
  await page.locator("#recon-health.error .badge", { hasText: "failing" }).waitFor();
  assert.equal(await page.locator("#failures").innerText(), down.failures + " since the last success");
  assert.ok((await page.locator("#last-error").innerText()).startsWith(down.lastError + " ("));
  await shot("bank-failing");
  await page.locator("#reconcile-now").click();
  await page.locator("#reconcile-status .error").getByText("The reconciliation failed: ").waitFor({ timeout: 30000 });
  await page.locator("#failures").getByText((down.failures + 1) + " since the last success").waitFor();
  down = (await api("GET", "/bank/connections/" + cfg.downConn, cfg.master)).json.data.api.reconciliation;
  out.downFailures = down.failures;
  assert.ok((await page.locator("#last-error").innerText()).startsWith(down.lastError + " ("));

  // ---- a last success 20 minutes old (the browser's clock ahead) is flagged late ----
  const later = await context.newPage();
  try {
    later.on("pageerror", (e) => problems.push("page error: " + e.message));
    later.on("console", (m) => { if (unexpected(m)) problems.push("console: " + m.text()); });
    await later.clock.setFixedTime(Date.now() + 20 * 60 * 1000);
    await later.goto(base + "/dashboard/");
    await later.evaluate((k) => sessionStorage.setItem("pixrelay.key", k), cfg.master);
    await later.goto(base + "/dashboard/#/banks/" + cfg.apiConn);
    await later.locator("#recon-health.warn .badge", { hasText: "late" }).waitFor();
    await later.locator("#recon-health").getByText(/No success for 2\d minutes/).waitFor();
  } finally {
    await later.close();
  }

  // acting for the account, a bank is connected with a URL token, shown once
  await page.evaluate((id) => sessionStorage.setItem("pixrelay.acting", JSON.stringify({ id, name: "Platform" })), cfg.platform);
  await page.goto(base + "/dashboard/#/banks");
  await page.locator("#bank-pix-key").fill("browser@loja.example");
  await page.locator("#bank-auth").selectOption("url-token");
  assert.ok(await page.locator("#bank-ca").isHidden(), "no CA for a URL token");
  await page.getByRole("button", { name: "Connect" }).click();
  await page.locator("#webhook-url").waitFor();
  out.bankUrl = await page.locator("#webhook-url").innerText();
  await page.locator("tr", { hasText: "browser@loja.example" }).waitFor();
  await page.evaluate(() => sessionStorage.removeItem("pixrelay.acting"));

  // ---- accounts: list, one with balance, ledger and secrets on request ----
  await page.getByRole("link", { name: "Accounts" }).click();
  await page.locator("tr", { hasText: cfg.shopName }).waitFor();
  assert.equal(await page.locator("table.list tbody tr").count(), 2);
  await shot("accounts");
  await page.locator("tr", { hasText: cfg.shopName }).click();
  await page.locator("#balance").waitFor();
  assert.equal(await page.locator("#secrets code.secret").count(), 0, "secrets are hidden until asked for");
  await page.locator("tr", { hasText: "charge paid" }).first().waitFor();
  await shot("account");
  await page.locator("#reveal").click();
  await page.locator("#secrets code.secret").first().waitFor();
  const shown = await page.locator("#secrets").innerText();
  assert.ok(shown.includes(cfg.shopSigningSecret), "the signing secret is shown");
  await page.getByRole("button", { name: "Hide" }).click();
  assert.equal(await page.locator("#secrets code.secret").count(), 0);

  // ---- sign out; production is marked ----
  await page.locator("#signout").click();
  await page.locator("#apikey").waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  await page.locator("#apikey").fill(cfg.liveMaster);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#env.production").waitFor();
  assert.match(await page.locator("#env").innerText(), /PRODUCTION/);
  assert.ok(await page.evaluate(() => document.body.classList.contains("is-production")));
  assert.match(await page.title(), /PRODUCTION/);
  await page.getByRole("link", { name: "Accounts" }).click();
  await page.locator("tr", { hasText: "Platform (production)" }).waitFor();
  await shot("production");

  // ---- a revoked session key signs the page out ----
  await page.evaluate((k) => sessionStorage.setItem("pixrelay.key", k), cfg.revokedKey);
  await page.getByRole("link", { name: "Events" }).click();
  await page.getByText("Signed out: API key revoked").waitFor();

  // ---- docs/dashboard.md's recipe for a signed-in page, scripted: the key
  // put in the tab's sessionStorage before the page's scripts run ----
  await context.addInitScript((key) => sessionStorage.setItem("pixrelay.key", key), cfg.master);
  const scripted = await context.newPage();
  try {
    await scripted.goto(base + "/dashboard/#/events");
    await scripted.locator("#env", { hasText: "SANDBOX" }).waitFor();
    assert.ok(!scripted.url().includes(cfg.master), "the key is in the URL");
  } finally {
    await scripted.close();
  }

  assert.deepEqual(problems, []);
  process.stdout.write(JSON.stringify(out) + "\n");
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
