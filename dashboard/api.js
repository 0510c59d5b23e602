// The public HTTP API, called with the key the user signed in with. The key
// lives in sessionStorage only (this tab, until it closes or signs out): never
// in a URL, a cookie or localStorage, and it is sent only in the
// Authorization header of same-origin requests.
const KEY = "pixrelay.key";
const ACTING = "pixrelay.acting";
const BASE = new URL("../v1", document.baseURI).pathname;
const SHAPE = /^pxr_(test|live)_[0-9A-Za-z]{44}$/;

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let onUnauthorized = () => {};

export function whenUnauthorized(fn) {
  onUnauthorized = fn;
}

export function signedIn() {
  return sessionStorage.getItem(KEY) !== null;
}

export function keyLooksRight(text) {
  return SHAPE.test(text);
}

export function signOut() {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(ACTING);
}

// Act for one account (master keys: X-Account-ID), or for none (null).
export function actAs(account) {
  if (account) sessionStorage.setItem(ACTING, JSON.stringify(account));
  else sessionStorage.removeItem(ACTING);
}

export function acting() {
  const v = sessionStorage.getItem(ACTING);
  return v ? JSON.parse(v) : null;
}

// Check a key with GET /v1/me and keep it; resolves to /v1/me's data.
export async function signIn(key) {
  sessionStorage.setItem(KEY, key);
  sessionStorage.removeItem(ACTING);
  try {
    return await request("GET", "/me", { quiet: true });
  } catch (e) {
    signOut();
    throw e;
  }
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? "?" + s : "";
}

// One call: resolves to the envelope's data, or throws ApiError with the
// server's message. A 401 signs the user out (unless quiet). opts.account:
// act for that account in this call only (a master key's X-Account-ID).
export async function request(method, path, opts = {}) {
  const key = sessionStorage.getItem(KEY);
  if (!key) throw new ApiError(401, "not signed in");
  const headers = { Authorization: "Bearer " + key, Accept: "application/json" };
  const act = acting();
  if (opts.account) headers["X-Account-ID"] = opts.account;
  else if (act && !opts.noActing) headers["X-Account-ID"] = act.id;
  const init = { method, headers, cache: "no-store", credentials: "omit",
                 referrerPolicy: "no-referrer", redirect: "error" };
  if (opts.body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(opts.body);
  }
  let res;
  try {
    res = await fetch(BASE + path + query(opts.query), init);
  } catch (e) {
    throw new ApiError(0, "pixrelay cannot be reached: " + e.message);
  }
  let env = null;
  try {
    env = await res.json();
  } catch (e) {
    throw new ApiError(res.status, "unexpected answer (HTTP " + res.status + ")");
  }
  if (!res.ok) {
    const err = new ApiError(res.status, (env && env.error) || "HTTP " + res.status);
    if (res.status === 401 && !opts.quiet) {
      signOut();
      onUnauthorized(err.message);
    }
    throw err;
  }
  return env.data;
}
