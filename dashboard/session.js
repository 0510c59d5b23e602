// What a page may know about the session, and how it asks for the page shown
// to be drawn again. Kept apart from app.js (the shell: sign-in, banner,
// navigation, routing) so that the imports form a tree: the pages import
// session.js, api.js and ui.js; app.js imports the pages.
import * as api from "./api.js";

let me = null;
let generation = 0;
let router = null;

export const session = {
  get me() { return me; },
  get master() { return me && me.key.kind === "master"; },
  get acting() { return api.acting(); },
  // "the sandbox" / "production"
  get envName() { return me && me.environment === "production" ? "production" : "the sandbox"; },
  // Is the page that asked still the one shown? (stale answers are dropped)
  current(gen) { return gen === generation; },
};

// For app.js: who is signed in (null when no one is).
export function setMe(who) {
  me = who;
}

// For app.js: a new page is being drawn; answers for the older ones are stale.
export function nextGeneration() {
  return ++generation;
}

// For app.js: the function that draws the page the address names.
export function routeWith(fn) {
  router = fn;
}

// Draw the page the address names again (after signing in as another
// account, say).
export function route() {
  return router();
}
