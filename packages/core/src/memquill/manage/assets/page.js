// memquill management page: the changes (sent as JSON), the forget confirmation, the conflict
// view, the repair of a hand edit. Everything else is server-rendered HTML; after a change the
// page reloads to show it.
"use strict";
(() => {
  const FLASH = "memquill-manage-flash";
  const DRAFT = "memquill-manage-draft";
  const body = document.body;
  const status = document.getElementById("status");

  function say(text, kind) {
    status.setAttribute("role", kind === "error" ? "alert" : "status");
    status.className = kind || "";
    status.textContent = text;
  }

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    node.append(...children);
    return node;
  }

  function newKey() {
    if (crypto.randomUUID) return crypto.randomUUID();
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function describe(data) {
    const message = data.message || "Something went wrong.";
    return data.error ? `${message} (${data.error})` : message;
  }

  async function post(payload) {
    let response;
    try {
      response = await fetch("/api/memory", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(payload),
        cache: "no-store",
      });
    } catch (error) {
      return { ok: false, data: { message: "The page cannot reach memquill: is `memquill manage` still running?" } };
    }
    let data;
    try {
      data = await response.json();
    } catch (error) {
      data = { message: `memquill answered with an unexpected response (HTTP ${response.status}).` };
    }
    return { ok: response.ok, data };
  }

  // After a change the page reloads, and says what happened once it is back.
  function done(message, kind) {
    sessionStorage.setItem(FLASH, JSON.stringify([message, kind || "ok"]));
    location.reload();
  }
  const flash = sessionStorage.getItem(FLASH);
  if (flash) {
    sessionStorage.removeItem(FLASH);
    const [message, kind] = JSON.parse(flash);
    say(message, kind);
  }

  // Add a fact. The key is kept until the save succeeds, so pressing Remember twice, or again
  // after a lost answer, saves the fact once.
  const addForm = document.getElementById("add-form");
  const addText = document.getElementById("add-content");
  let addKey = null;
  const draft = sessionStorage.getItem(DRAFT);
  if (draft && addText) {
    sessionStorage.removeItem(DRAFT);
    [addText.value, addKey] = JSON.parse(draft);
  }
  addForm?.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!addText.value.trim()) return say("Write the fact first.", "error");
    addKey = addKey || newKey();
    const result = await post({
      action: "remember",
      content: addText.value,
      expectedRevision: body.dataset.revision,
      idempotencyKey: addKey,
    });
    if (result.ok) {
      const words = { saved: "Remembered.", duplicate: "Already remembered." };
      return done(words[result.data.status] || "Not saved: this fact was forgotten before.");
    }
    if (result.data.error === "conflict") {
      sessionStorage.setItem(DRAFT, JSON.stringify([addText.value, addKey]));
      return done("Memory changed while this page was open, so nothing was saved yet. " +
        "The page now shows the latest facts and your text is still in the box: " +
        "press Remember again to save it.", "error");
    }
    say(describe(result.data), "error");
  });

  // Edit a fact: the correction is checked against the revision the page showed for it.
  function openEditor(article) {
    const existing = article.querySelector("form.edit textarea");
    if (existing) return existing.focus();
    const id = `edit-${article.dataset.id}`;
    const text = el("textarea", { id, rows: "4", required: "" });
    text.value = article.querySelector(".content").textContent;
    const save = el("button", { type: "submit" }, "Save correction");
    const cancel = el("button", { type: "button" }, "Cancel");
    const form = el("form", { class: "edit" }, el("label", { for: id }, "Corrected fact"), text,
      el("div", { class: "actions" }, save, cancel));
    const actions = article.querySelector(".actions");
    actions.hidden = true;
    const close = () => { form.remove(); actions.hidden = false; actions.querySelector("button").focus(); };
    cancel.addEventListener("click", close);
    form.addEventListener("keydown", (event) => { if (event.key === "Escape") close(); });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      saveEdit(form, text.value, article.dataset.id, article.dataset.revision);
    });
    article.append(form);
    text.focus();
  }

  async function saveEdit(form, text, id, revision) {
    const result = await post({ action: "correct", id, content: text, expectedRevision: revision });
    if (result.ok) return done("Corrected. The earlier version is kept in the history.");
    if (result.data.error === "conflict") return showConflict(form, text, result.data.latest);
    say(describe(result.data), "error");
  }

  function showConflict(form, text, latest) {
    form.querySelector(".conflict")?.remove();
    const now = latest && latest.status === "active"
      ? [el("p", { class: "content" }, latest.content),
         el("p", { class: "meta" }, `${latest.provenance} · updated ${latest.age}`)]
      : [el("p", {}, "It was forgotten: it is no longer in memory.")];
    const box = el("div", { class: "conflict", role: "alert", tabindex: "-1" },
      el("h3", {}, "This fact changed after you opened it"),
      el("div", { class: "versions" },
        el("section", {}, el("h4", {}, "Your edit"), el("p", { class: "content" }, text)),
        el("section", {}, el("h4", {}, "Saved now"), ...now)));
    const actions = el("div", { class: "actions" });
    if (latest && latest.status === "active") {
      const again = el("button", { type: "button" }, "Save my edit over the latest version");
      again.addEventListener("click", () => saveEdit(form, text, latest.id, latest.recordRevision));
      actions.append(again);
    }
    const discard = el("button", { type: "button" }, "Discard my edit");
    discard.addEventListener("click", () => done("Your edit was discarded; this is the latest memory."));
    actions.append(discard);
    box.append(actions);
    form.append(box);
    box.focus();
  }

  // Forget a fact, after a confirmation that says it never comes back.
  const dialog = document.getElementById("forget-dialog");
  let forgetting = null;
  dialog.addEventListener("close", async () => {
    const article = forgetting;
    forgetting = null;
    if (!article) return;
    if (dialog.returnValue !== "forget") {
      // The close event is queued: by now focus may have moved on, and it stays where it went.
      // Only focus that was lost (on the body) goes back to the Forget button.
      const active = document.activeElement;
      if (!active || active === body) article.querySelector("[data-action=forget]").focus();
      return;
    }
    const result = await post({
      action: "forget", id: article.dataset.id, expectedRevision: article.dataset.revision,
    });
    if (result.ok) return done("Forgotten. It will not come back.");
    if (result.data.error === "conflict") {
      return done("This fact changed after the page was loaded, so it was not forgotten. " +
        "The page now shows its latest version: forget that one if it should go.", "error");
    }
    say(describe(result.data), "error");
  });

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const article = button.closest("article.record");
    if (button.dataset.action === "edit") openEditor(article);
    if (button.dataset.action === "forget") {
      forgetting = article;
      document.getElementById("forget-text").textContent = article.querySelector(".content").textContent;
      dialog.returnValue = "";
      dialog.showModal();
    }
  });

  // Retry extraction jobs now.
  document.getElementById("retry-jobs")?.addEventListener("click", async () => {
    const result = await post({ action: "retry", expectedRevision: body.dataset.revision });
    if (result.ok) return done("Retry requested: extraction runs in the background.");
    if (result.data.error === "conflict") return done("Memory changed; press Retry again.", "error");
    say(describe(result.data), "error");
  });

  // Repair a hand-edited records.md exactly as the page described it (a backup comes first).
  const repair = document.getElementById("repair-store");
  repair?.addEventListener("click", async () => {
    repair.disabled = true;
    const result = await post({ action: "repair", expectedRevision: repair.dataset.revision });
    if (result.ok) {
      return done(`Repaired. The file as it was is kept in ${result.data.backup}.`);
    }
    if (result.data.error === "conflict") {
      return done("records.md changed after the page was loaded, so nothing was repaired. " +
        "The page now shows its current state.", "error");
    }
    repair.disabled = false;
    say(describe(result.data), "error");
  });

  // Settle a diverged fact on the version the person chose (as memquill sync keep does).
  for (const keep of document.querySelectorAll("button.keep-version")) {
    keep.addEventListener("click", async () => {
      keep.disabled = true;
      const result = await post({
        action: "keep", id: keep.dataset.id, expectedRevision: keep.dataset.revision,
      });
      if (result.ok) return done("Kept. The other machines take this choice at their next sync.");
      if (result.data.error === "conflict") {
        return done("This fact changed after the page was loaded, so nothing was chosen. " +
          "The page now shows its latest versions.", "error");
      }
      keep.disabled = false;
      say(describe(result.data), "error");
    });
  }
})();
