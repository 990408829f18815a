// The sandbox page: long-polls /api/state for the chosen user and renders their chats.
"use strict";

const state = { user: null, revision: -1, bot: null, generation: 0, polling: null };
const $ = (id) => document.getElementById(id);

function chosenUser(users) {
  const fromUrl = new URLSearchParams(location.search).get("user");
  const stored = localStorage.getItem("sandbox-user");
  for (const wanted of [fromUrl, stored]) {
    if (wanted && users.some((u) => String(u.id) === wanted)) return Number(wanted);
  }
  return users.length ? users[0].id : null;
}

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const result = await response.json();
  if (!result.ok) throw new Error(result.error || response.statusText);
  return result;
}

let toastTimer = null;
function toast(text, alert) {
  const box = $("toast");
  box.textContent = text;
  box.className = alert ? "alert" : "";
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, alert ? 6000 : 2500);
}

// The Mini App, as a Telegram client opens it: the bot's page in a phone-sized frame, with
// initData signed by the fake Telegram for the acting user (POST /api/webapp).
async function openWebApp(request) {
  try {
    const result = await post("/api/webapp", { user: state.user, ...request });
    let overlay = $("webapp");
    if (!overlay) {
      overlay = document.createElement("div");
      overlay.id = "webapp";
      overlay.innerHTML = '<div class="phone"><div class="bar">' +
        '<button type="button" class="back" hidden>‹</button><span>🃏 Mini App</span>' +
        '<button type="button" class="close">✕</button></div><iframe title="Mini App"></iframe></div>';
      overlay.querySelector(".close").addEventListener("click", () => overlay.remove());
      document.body.appendChild(overlay);
      // Telegram's part of the Mini App protocol (the app's Back button shown in the bar)
      const back = overlay.querySelector(".back");
      const host = window.TelegramHost(overlay.querySelector("iframe"), {
        onClose: () => overlay.remove(),
        onBackButton: (visible) => { back.hidden = !visible; },
        // shareMessage: Telegram asks where to; here the user's first group
        onShareMessage: async (id) => {
          const target = pickGroup(null);
          if (!target) return false;
          await post("/api/share", { user: state.user, chat: target.id, id });
          toast(`Shared in ${target.title}`, false);
          return true;
        },
      });
      back.addEventListener("click", () => host.pressBack());
      overlay.telegramHost = host;
    }
    // the bot names its Mini App 127.0.0.1 when the sandbox listens on every address:
    // a browser on another machine reaches it where it reached this page
    const url = new URL(result.url);
    if (url.hostname === "127.0.0.1" && location.hostname !== url.hostname) {
      url.hostname = location.hostname;
    }
    overlay.querySelector("iframe").src = url.href;
  } catch (error) {
    toast(String(error.message || error), true);
  }
}

// t.me links to the bot: open the private chat (with a start payload: press Start), or
// its Mini App (a direct link t.me/<bot>/<app>?startapp=…)
async function openLink(url, chatId) {
  const app = /^(?:https?:\/\/)?t\.me\/([A-Za-z0-9_]+)\/([A-Za-z0-9_]+)(?:\?startapp=([A-Za-z0-9_-]*))?/.exec(url);
  if (app && state.bot && app[1].toLowerCase() === state.bot.username.toLowerCase()) {
    return openWebApp({ chat: chatId, short_name: app[2], start_param: app[3] || "" });
  }
  // ?startgroup=…: Telegram asks which group, then sends /start@<bot> … there (here: the
  // group the link was pressed in, else the user's first group)
  const group = /^(?:https?:\/\/)?t\.me\/([A-Za-z0-9_]+)\?startgroup=([A-Za-z0-9_-]*)/.exec(url);
  if (group && state.bot && group[1].toLowerCase() === state.bot.username.toLowerCase()) {
    const target = pickGroup(chatId);
    if (!target) return toast("You are in no group to open it in.", true);
    try {
      await post("/api/startgroup", { user: state.user, chat: target.id, payload: group[2] });
      toast(`Sent to ${target.title}`, false);
    } catch (error) {
      toast(String(error.message || error), true);
    }
    return;
  }
  const match = /^(?:https?:\/\/)?t\.me\/([A-Za-z0-9_]+)(?:\?start=([A-Za-z0-9_-]*))?/.exec(url);
  if (match && state.bot && match[1].toLowerCase() === state.bot.username.toLowerCase()) {
    if (match[2] !== undefined) await post("/api/start", { user: state.user, payload: match[2] });
    const input = document.querySelector(`[data-chat="${state.user}"] .draft`);
    if (input) input.focus();
    return;
  }
  window.open(url, "_blank", "noopener");
}

/** The group a link or a shared message goes to: this chat if a group, else the first. */
function pickGroup(chatId) {
  const groups = (state.chats || []).filter((c) => c.type !== "private");
  return groups.find((c) => c.id === chatId) || groups[0] || null;
}

// The inline mode: "@<bot> query" in a composer asks the bot (POST /api/inline) and lists
// its results above the composer, as Telegram's clients do; picking one sends it
let inlineTimer = null;
function inlineTyped(panel, chatId, text) {
  const box = panel.querySelector(".inline-results");
  const name = state.bot ? state.bot.username : "";
  const match = new RegExp(`^@${name}(?:\\s+([\\s\\S]*))?$`, "i").exec(text);
  clearTimeout(inlineTimer);
  if (!name || !match) { box.hidden = true; box.replaceChildren(); return; }
  inlineTimer = setTimeout(async () => {
    try {
      const result = await post("/api/inline", { user: state.user, chat: chatId,
                                                 query: (match[1] || "").slice(0, 256) });
      if (panel.querySelector(".draft").value !== text) return;  // typed on, or sent
      const items = result.results.map((r) => {
        const item = document.createElement("button");
        item.type = "button";
        item.className = "inline-result";
        item.dataset.result = r.id;
        const title = document.createElement("strong");
        title.textContent = r.title;
        const description = document.createElement("span");
        description.textContent = r.description || "";
        item.append(title, description);
        item.addEventListener("click", async () => {
          box.hidden = true;
          panel.querySelector(".draft").value = "";
          try {
            await post("/api/inline/choose", { user: state.user, query: result.query,
                                               result: r.id });
          } catch (error) {
            toast(String(error.message || error), true);
          }
        });
        return item;
      });
      if (result.button) {
        const hint = document.createElement("div");
        hint.className = "inline-hint";
        hint.textContent = result.button.text;
        items.push(hint);
      }
      box.replaceChildren(...items);
      box.hidden = items.length === 0;
    } catch (error) {
      toast(String(error.message || error), true);
    }
  }, 250);
}

async function press(chatId, messageId, button) {
  if (button.web_app) return openWebApp({ chat: chatId, message: messageId, url: button.web_app });
  if (button.url) return openLink(button.url, chatId);
  try {
    const result = await post("/api/press", {
      user: state.user, chat: chatId, message: messageId, data: button.data,
    });
    if (result.gone) toast("That button is gone: the message has just changed.", false);
    const answer = result.answer;
    if (answer && answer.url) await openLink(answer.url);
    if (answer && answer.text) toast(answer.text, answer.alert);
  } catch (error) {
    toast(String(error.message || error), true);
  }
}

function renderMessage(chat, message) {
  if (message.service) {
    const div = document.createElement("div");
    div.className = "service";
    div.textContent = message.service;
    return div;
  }
  const div = document.createElement("div");
  div.className = "message" + (message.sender_id === state.user ? " mine" : "");
  div.dataset.id = message.id;
  const sender = document.createElement("div");
  sender.className = "sender";
  sender.textContent = message.bot ? state.bot.name : message.sender;
  div.appendChild(sender);
  const body = document.createElement("div");
  body.className = "text";
  body.innerHTML = message.html; // built by the server from Telegram entities, text escaped
  if (message.edited) {
    const edited = document.createElement("span");
    edited.className = "edited";
    edited.textContent = "edited";
    body.appendChild(edited);
  }
  div.appendChild(body);
  if (message.buttons.length) {
    const keyboard = document.createElement("div");
    keyboard.className = "keyboard";
    for (const row of message.buttons) {
      const line = document.createElement("div");
      line.className = "row";
      for (const button of row) {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = button.text;
        if (button.url) b.classList.add("url");
        if (button.web_app) b.classList.add("web-app");
        if (button.data) b.dataset.callback = button.data;
        b.addEventListener("click", () => press(chat.id, message.id, button));
        line.appendChild(b);
      }
      keyboard.appendChild(line);
    }
    div.appendChild(keyboard);
  }
  return div;
}

function chatPanel(chat) {
  // (a forum's topic is a panel of its own: its key is "<chat>:<thread>")
  let panel = document.querySelector(`[data-chat="${chat.key}"]`);
  if (panel) return panel;
  panel = $("chat-template").content.firstElementChild.cloneNode(true);
  panel.dataset.chat = chat.key;
  panel.dataset.type = chat.type;
  // the composer's own input (`.draft`): a message's text is `.text` too
  const input = panel.querySelector(".draft");
  input.addEventListener("input", () => inlineTyped(panel, chat.id, input.value));
  panel.querySelector(".composer").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || !panel.querySelector(".inline-results").hidden) return;
    input.value = "";  // cleared at once: the next command may be typed while this one goes
    try {
      await post("/api/send", { user: state.user, chat: chat.id, text, thread: chat.thread });
    } catch (error) {
      if (!input.value) input.value = text;  // not sent: give it back
      toast(String(error.message || error), true);
    }
  });
  $("chats").appendChild(panel);
  return panel;
}

function render(data) {
  state.bot = data.bot;
  state.chats = data.chats;
  const select = $("user");
  const options = data.users.map((u) => `${u.id}:${u.name}`).join("|");
  if (select.dataset.options !== options) {
    select.innerHTML = "";
    for (const u of data.users) {
      const option = document.createElement("option");
      option.value = u.id;
      option.textContent = u.name + (u.language ? ` (${u.language})` : "");
      select.appendChild(option);
    }
    select.dataset.options = options;
  }
  select.value = String(state.user);
  const wanted = new Set(data.chats.map((c) => c.key));
  for (const panel of document.querySelectorAll("[data-chat]")) {
    if (!wanted.has(panel.dataset.chat)) panel.remove();
  }
  for (const chat of data.chats) {
    const panel = chatPanel(chat);
    const me = data.users.find((u) => u.id === state.user);
    panel.querySelector(".title").textContent =
      chat.type === "private" ? `${data.bot.name} — private chat of ${me ? me.name : "?"}`
        : chat.title + (chat.closed ? " (closed)" : "");
    const list = panel.querySelector(".commands");
    const commands = chat.commands.map((c) => `/${c.command}\u0000${c.description}`).join("|");
    if (list.dataset.commands !== commands) {  // the bot's command menu, as suggestions
      list.id = `commands-${chat.key.replace(":", "-")}`;
      panel.querySelector(".draft").setAttribute("list", list.id);
      list.replaceChildren(...chat.commands.map((c) => {
        const option = document.createElement("option");
        option.value = `/${c.command}`;
        option.label = c.description;
        return option;
      }));
      list.dataset.commands = commands;
    }
    const box = panel.querySelector(".messages");
    const content = JSON.stringify(chat.messages);
    if (box.shownContent === content) continue;  // unchanged: no re-render
    box.shownContent = content;
    const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
    const fresh = document.createDocumentFragment();
    for (const message of chat.messages) fresh.appendChild(renderMessage(chat, message));
    box.replaceChildren(fresh);
    if (atBottom || !box.dataset.seen) box.scrollTop = box.scrollHeight;
    box.dataset.seen = "1";
  }
}

async function poll(generation) {
  // one long poll at a time: a switch of user cancels the previous user's request
  // instead of leaving it open until the server answers it
  const controller = new AbortController();
  state.polling = controller;
  while (generation === state.generation) {
    try {
      const query = `user=${encodeURIComponent(state.user ?? "")}&rev=${state.revision}`;
      const response = await fetch(`/api/state?${query}`, { signal: controller.signal });
      const data = await response.json();
      if (generation !== state.generation) return;
      if (state.user === null || !data.users.some((u) => u.id === state.user)) {
        state.user = chosenUser(data.users);
        state.revision = -1;
        continue;
      }
      state.revision = data.revision;
      render(data);
    } catch (error) {
      if (generation !== state.generation) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

function switchUser(id) {
  state.user = Number(id);
  state.revision = -1;
  state.generation += 1;
  if (state.polling) state.polling.abort();
  localStorage.setItem("sandbox-user", String(id));
  const url = new URL(location.href);
  url.searchParams.set("user", id);
  history.replaceState(null, "", url);
  $("chats").replaceChildren();
  poll(state.generation);
}

$("user").addEventListener("change", (event) => switchUser(event.target.value));
$("add-user").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = $("new-name").value.trim();
  if (!name) return;
  try {
    const result = await post("/api/users", { name, language: $("new-language").value });
    $("new-name").value = "";
    switchUser(result.user);
  } catch (error) {
    toast(String(error.message || error), true);
  }
});

poll(state.generation);
