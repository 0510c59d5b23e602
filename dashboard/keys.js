// Keys: list, create (the text shown once, with a copy button), revoke.
import * as api from "./api.js";
import { session, route } from "./session.js";
import { h, badge, when, listView, confirmDialog, copyButton, toast, errorBox, short } from "./ui.js";

function secretPanel(key) {
  const text = h("code", { id: "new-key-text", class: "secret" }, key.key);
  const panel = h("section", { class: "panel notice", id: "new-key" },
    h("h2", {}, "Your new key"),
    h("p", {}, "Copy it now: this is the only time it is shown. pixrelay keeps only its SHA-256."),
    h("div", { class: "secretline" }, text, copyButton(() => key.key, "Copy key")),
    h("p", { class: "hint" }, key.description + " · " + key.id),
    h("button", { type: "button", class: "quiet", on: { click: () => panel.remove() } }, "Done, I have stored it"));
  return panel;
}

export async function render(main, where, gen) {
  const owner = session.acting ? session.acting.name
    : session.master ? "every account of " + session.envName : "your account";
  main.append(h("h1", {}, "API keys"),
    h("p", { class: "lead" }, "Keys of " + owner + ". A key's text is shown once, when it is made."));

  const desc = h("input", { id: "key-description", maxlength: 200, required: true,
                            placeholder: "What is it for? e.g. checkout server", autocomplete: "off" });
  const slot = h("div");
  const form = h("form", { class: "inline", id: "create-key" },
    h("label", { for: "key-description" }, "New key"), desc,
    h("button", { type: "submit", class: "primary" }, "Create key"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const key = await api.request("POST", "/keys", { body: { description: desc.value } });
      desc.value = "";
      slot.replaceChildren(secretPanel(key));
      await refresh();
    } catch (e) {
      slot.replaceChildren(errorBox(e));
    }
  });
  main.append(form, slot);

  const listBox = h("div");
  main.append(listBox);
  const columns = [
    { title: "Description", class: "wrap", cell: (k) => k.description },
    { title: "Key", cell: (k) => h("span", { title: k.id }, h("code", {}, k.hint)) },
    { title: "Environment", cell: (k) => badge(k.environment) },
    { title: "Kind", cell: (k) => k.kind },
  ];
  if (session.master) columns.push({ title: "Account", cell: (k) => h("code", { title: k.account }, short(k.account)) });
  columns.push(
    { title: "Created", cell: (k) => when(k.createdAt) },
    { title: "Last used", cell: (k) => when(k.lastUsedAt) },
    { title: "Status", cell: (k) => k.revokedAt ? badge("revoked " + when(k.revokedAt), "revoked") : revokeButton(k) });

  function revokeButton(k) {
    return h("button", { type: "button", class: "danger small", dataset: { key: k.id }, on: { click: async () => {
      const self = session.me.key.id === k.id;
      const ok = await confirmDialog("Revoke the key \u201c" + k.description + "\u201d (" + k.hint + ")? " +
        "Every request with it will be refused at once." + (self ? " This is the key you are signed in with." : ""),
        "Revoke key");
      if (!ok) return;
      try {
        await api.request("POST", "/keys/" + encodeURIComponent(k.id) + "/revoke");
        toast("Key \u201c" + k.description + "\u201d revoked.");
        if (self) {
          api.signOut();
          route();
          return;
        }
        await refresh();
      } catch (e) {
        toast(e.message, "bad");
      }
    } } }, "Revoke");
  }

  async function refresh() {
    const view = await listView({
      columns,
      empty: "No keys.",
      load: async (cursor) => {
        const d = await api.request("GET", "/keys", { query: { limit: 50, cursor } });
        return { rows: d.keys, next: d.nextCursor };
      },
    });
    if (session.current(gen)) listBox.replaceChildren(view);
  }
  await refresh();
}
