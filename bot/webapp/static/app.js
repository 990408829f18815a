// The Mini App: draws the state the server sends (built from the core's view of this
// user's seat) and sends the moves the user taps. No rule lives here: the server's
// "actions" and each card's "playable" are the core's legal actions.
"use strict";

const tg = (window.Telegram && window.Telegram.WebApp) || null;
const $ = (id) => document.getElementById(id);
const app = { token: null, table: null, lang: "it", state: null, source: null, skew: 0,
              sending: false, refresh: null, picks: {} };

function cardUrl(code) { return `static/cards/${app.state.deck}/${code}.webp`; }
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}
function cardImg(code, cls) {
  const img = el("img", "card" + (cls ? " " + cls : ""));
  img.src = cardUrl(code);
  img.alt = (app.state && app.state.card_names && app.state.card_names[code]) || code;
  img.dataset.card = code;
  img.draggable = false;
  return img;
}

let toastTimer = null;
function toast(text, bad) {
  const box = $("toast");
  box.textContent = text;
  box.className = bad ? "bad" : "";
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 4000);
}

function notice(text) {
  $("notice").textContent = text || "";
  $("notice").hidden = !text;
}

// ------------------------------------------------------------------ session and live

async function openSession() {
  const params = new URLSearchParams(location.search);
  const body = { init_data: tg ? tg.initData : "", table: params.get("table") || "" };
  const response = await fetch("api/session", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const result = await response.json().catch(() => ({}));
  if (!response.ok) {
    notice(result.message || response.statusText);
    $("app").setAttribute("aria-busy", "false");
    return false;
  }
  app.token = result.token;
  app.table = result.table;
  app.lang = result.lang;
  document.documentElement.lang = result.lang;
  clearTimeout(app.refresh);  // a fresh token before this one runs out
  app.refresh = setTimeout(reconnect, Math.max(30, result.ttl - 60) * 1000);
  show(result.state);
  listen();
  return true;
}

function listen() {
  if (app.source) app.source.close();
  const url = `api/events?token=${encodeURIComponent(app.token)}&lang=${app.lang}`;
  const source = new EventSource(url);
  app.source = source;
  source.addEventListener("state", (event) => { notice(""); show(JSON.parse(event.data)); });
  source.addEventListener("closed", (event) => { closed(JSON.parse(event.data)); });
  source.addEventListener("expired", () => reconnect());
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) setTimeout(reconnect, 1500);
    else if (app.state) notice(app.state.ui.offline);
  };
}

async function reconnect() {
  if (app.source) { app.source.close(); app.source = null; }
  try { await openSession(); } catch (e) { setTimeout(reconnect, 3000); }
}

//: Seconds away after which a page back in view opens a fresh session: phones suspend
//: web views in the background, and a stream that looks open may be dead.
const AWAY_SECONDS = 1;
let hiddenAt = null;
// Presence: the page is live at its table while its stream is open (the chat then sends
// this player nothing per move). Inactive (Telegram's `deactivated`, Bot API 8.0) or, where
// those events are missing, hidden: the stream is closed; active or visible again: a fresh
// session and stream (the current state comes first).
const ACTIVE_EVENTS = Boolean(tg && tg.isVersionAtLeast && tg.isVersionAtLeast("8.0"));
function pause() {
  if (app.source) { app.source.close(); app.source = null; }
}
if (ACTIVE_EVENTS) {
  tg.onEvent("deactivated", pause);
  tg.onEvent("activated", () => { if (!app.source) reconnect(); });
}
document.addEventListener("visibilitychange", () => {
  if (document.hidden) { hiddenAt = Date.now(); if (!ACTIVE_EVENTS) pause(); return; }
  const away = hiddenAt === null ? 0 : (Date.now() - hiddenAt) / 1000;
  hiddenAt = null;
  if (!app.source || app.source.readyState === EventSource.CLOSED || away >= AWAY_SECONDS) {
    reconnect();
  }
});

function haptic(kind, value) {
  // Telegram's HapticFeedback (Bot API 6.1+): a light tap on a played card, an error buzz
  const feedback = tg && tg.HapticFeedback;
  if (!feedback) return;
  try {
    if (kind === "impact") feedback.impactOccurred(value);
    else feedback.notificationOccurred(value);
  } catch (e) { /* older clients: no feedback */ }
}

async function move(code) {
  if (app.sending || !app.state) return;
  app.sending = true;
  document.body.classList.add("sending");
  try {
    const response = await fetch("api/move", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${app.token}` },
      body: JSON.stringify({ version: app.state.version, code }),
    });
    const result = await response.json().catch(() => ({}));
    if (!response.ok) {
      toast(result.message || response.statusText, true);
      haptic("notification", "error");
      if (response.status === 401) reconnect();
    } else {
      haptic("impact", code.startsWith("c") ? "medium" : "light");
    }
  } catch (error) {
    toast(String(error), true);
  } finally {
    app.sending = false;
    document.body.classList.remove("sending");
  }
}

// ------------------------------------------------------------------ drawing

function seatPlace(seat, s) {
  // the viewer at the bottom, the others around the table in playing order
  const n = s.players;
  const me = s.me === null ? 0 : s.me;
  const k = (seat - me + n) % n;
  const angle = Math.PI / 2 - (k * 2 * Math.PI) / n;
  return { x: Math.cos(angle), y: Math.sin(angle) };
}

//: Where seats sit on the rim and the trick's cards lie, per table size (percent of the
//: felt's width and height from its centre): the cards stay clear of the seats.
const LAYOUT = {
  2: { seat: [0, 42], card: [0, 17] }, 3: { seat: [37, 40], card: [17, 13] },
  4: { seat: [38, 40], card: [19, 16] }, 5: { seat: [37, 41], card: [17, 15] },
  6: { seat: [37, 41], card: [20, 16] },
};

function drawSeats(s) {
  const box = $("seats");
  box.replaceChildren();
  const [rx, ry] = (LAYOUT[s.players] || LAYOUT[5]).seat;
  for (const seat of s.seats) {
    const at = seatPlace(seat.seat, s);
    const chip = el("div", "seat");
    chip.dataset.seat = seat.seat;
    chip.style.left = `${50 + at.x * rx}%`;
    chip.style.top = `${50 + at.y * ry}%`;
    chip.title = seat.name;
    if (seat.turn) chip.classList.add("turn");
    if (seat.you) chip.classList.add("you");
    if (seat.away || seat.morto) chip.classList.add("away");
    const badges = [];
    if (seat.chiamante) badges.push("⭐");
    if (seat.socio) badges.push("🤝");
    if (seat.away) badges.push("💤");
    // a computer: its robot among the badges, so its name keeps the two lines
    let name = seat.name;
    if (seat.computer && name.startsWith("🤖")) {
      name = name.slice(2).trim();
      badges.unshift("🤖");
    }
    chip.append(el("div", "name", name));
    const line = el("div", "meta");
    if (badges.length) line.append(el("span", "badges", badges.join("")));
    if (!seat.morto || seat.cards) line.append(el("span", "count", String(seat.cards)));
    if (seat.dealer) line.append(el("span", "dealer", s.ui.dealer));
    chip.append(line);
    box.append(chip);
  }
}

function drawTrick(s) {
  const box = $("trick");
  box.replaceChildren();
  let plays = s.trick;
  let winner = null;
  if (!plays.length && s.last_trick && s.phase === "play") {
    plays = s.last_trick.plays;  // the trick just taken, until the next card
    winner = s.last_trick.winner;
    box.classList.add("taken");
  } else {
    box.classList.remove("taken");
  }
  $("trick-label").textContent = winner !== null ? s.last_trick.text : "";
  const [rx, ry] = (LAYOUT[s.players] || LAYOUT[5]).card;
  plays.forEach(([seat, code], i) => {
    const at = seatPlace(seat, s);
    const img = cardImg(code, seat === winner ? "winner" : "");
    // each card in front of its player, a little askew, as thrown on a table
    const tilt = ((seat * 37 + i * 11) % 13) - 6;
    img.style.left = `${50 + at.x * rx}%`;
    img.style.top = `${50 + at.y * ry}%`;
    img.style.transform = `translate(-50%, -50%) rotate(${tilt}deg)`;
    img.style.zIndex = String(10 + i);
    img.dataset.seat = seat;
    box.append(img);
  });
  drawStock(s);
}

function drawStock(s) {
  // plain Briscola: the stock face down, the briscola face up under it, on the table
  const box = $("stock");
  box.replaceChildren();
  box.hidden = !(s.stock > 0 && s.face_up);
  if (box.hidden) return;
  const under = cardImg(s.face_up, "briscola");
  const back = el("img", "card back");
  back.src = "static/cards/back.webp";
  back.alt = "";
  back.draggable = false;
  box.append(under, back, el("span", "stock-count", String(s.stock)));
  box.title = `${s.ui.briscola}: ${s.trump || ""}`;
}

function drawCorner(s) {
  const box = $("corner");
  box.replaceChildren();
  const add = (label, code, text) => {
    const item = el("figure", "corner-item");
    if (code) item.append(cardImg(code, "small"));
    const caption = el("figcaption", null, label);
    if (text) caption.append(el("span", "suit", text));
    item.append(caption);
    box.append(item);
  };
  if (s.called) add(s.ui.called, s.called, s.trump);
  else if (s.trump) add(s.ui.briscola, null, s.trump);
  $("info").hidden = s.phase === "over" || (!s.info.length && !box.childElementCount);
}

function drawAuction(s) {
  const box = $("auction");
  const show = s.phase === "auction" || (s.auction.history.length > 0 && s.phase === "declaration");
  box.hidden = !show || s.game !== "chiamata";
  if (box.hidden) return;
  box.replaceChildren(el("h2", "label", s.ui.auction));
  const list = el("div", "bids");
  if (!s.auction.history.length) list.append(el("span", "hint", s.ui.no_bids));
  for (const bid of s.auction.history) {
    const chip = el("span", "bid", `${s.seats[bid.seat].name}: ${bid.text}`);
    if (s.auction.current && s.auction.current.seat === bid.seat &&
        s.auction.current.text === bid.text) chip.classList.add("current");
    list.append(chip);
  }
  box.append(list);
}

function stepper(family) {
  // one call "at points": the values are exactly the core's legal ones
  const wrap = el("div", "stepper");
  const values = family.values;
  let index = Math.min(app.picks[family.prefix] || 0, values.length - 1);
  const label = el("button", "call confirm");
  label.type = "button";
  const paint = () => {
    app.picks[family.prefix] = index;
    label.textContent = "✅ " + family.template.replace("{n}", values[index]);
    label.dataset.code = family.prefix + values[index];
  };
  const step = (delta) => {
    const b = el("button", "step", (delta > 0 ? "+" : "−") + Math.abs(delta));
    b.type = "button";
    b.addEventListener("click", () => {
      index = Math.max(0, Math.min(values.length - 1, index + delta));
      paint();
    });
    return b;
  };
  label.addEventListener("click", () => move(label.dataset.code));
  paint();
  wrap.append(step(-5), step(-1), label, step(1), step(5));
  return wrap;
}

function drawControls(s) {
  const box = $("controls");
  const a = s.actions;
  box.replaceChildren();
  const calls = el("div", "calls");
  for (const call of a.calls) {
    const b = el("button", "call", call.text);
    b.type = "button";
    b.dataset.code = call.code;
    if (call.code === "P") b.classList.add("pass");
    b.addEventListener("click", () => {
      // costly calls (a carichi, monte) take a second tap, as in the chat
      if (call.confirm && !b.classList.contains("armed")) {
        b.classList.add("armed");
        b.textContent = `✅ ${s.ui.confirm}: ${call.text}`;
        return;
      }
      move(call.code);
    });
    calls.append(b);
  }
  if (a.calls.length) box.append(calls);
  for (const family of a.points) box.append(stepper(family));
  if (a.suits.length) {
    box.append(el("h2", "label", s.ui.declare));
    const suits = el("div", "calls");
    for (const suit of a.suits) {
      const b = el("button", "call suit", suit.text);
      b.type = "button";
      b.dataset.code = suit.code;
      b.addEventListener("click", () => move(suit.code));
      suits.append(b);
    }
    box.append(suits);
  }
  if (a.name_cards.length) {
    box.append(el("h2", "label", s.ui.name_card));
    const grid = el("div", "name-cards");
    for (const code of a.name_cards) {
      const img = cardImg(code, "pick");
      img.dataset.code = "d" + code;
      img.addEventListener("click", () => move("d" + code));
      grid.append(img);
    }
    box.append(grid);
  }
  box.hidden = !box.childElementCount;
}

function drawHand(s) {
  const box = $("hand-box");
  box.hidden = s.me === null || (!s.hand.length && s.phase === "over");
  $("hand-label").textContent = s.ui.hand;
  const hand = $("hand");
  hand.replaceChildren();
  for (const { card, playable } of s.hand) {
    const img = cardImg(card, playable ? "playable" : (s.my_turn && s.phase === "play" ? "dimmed" : ""));
    img.dataset.code = "c" + card;
    if (playable) img.addEventListener("click", () => move("c" + card));
    hand.append(img);
  }
  hand.style.setProperty("--cards", String(Math.max(s.hand.length, 1)));
  const partner = $("partner");
  partner.hidden = !s.partner_hand;
  if (s.partner_hand) {
    partner.replaceChildren(el("h2", "label", s.ui.partner_hand));
    const row = el("div", "small-row");
    for (const code of s.partner_hand) row.append(cardImg(code, "small"));
    partner.append(row);
  }
}

function drawScores(s) {
  const box = $("scores");
  const any = s.seats.some((seat) => seat.total) || s.final;
  box.hidden = !any;
  if (!any) return;
  box.replaceChildren(el("h2", "label", s.ui.scores));
  const list = el("div", "totals");
  for (const seat of s.seats) {
    if (seat.morto) continue;
    const item = el("span", "total" + (seat.you ? " you" : ""), `${seat.name} ${seat.total}`);
    list.append(item);
  }
  box.append(list);
}

function drawTexts(s) {
  $("title").textContent = s.title;
  $("status-text").textContent = s.final ? s.ui.over : (s.me === null ? s.ui.spectator + " " : "") + s.status_line;
  $("info-lines").replaceChildren(...s.info.map((line) => el("div", null, line)));
  const result = $("result");
  const text = s.final || s.result;
  result.hidden = !text;
  result.textContent = text || "";
  // the result just reached comes first, under the table, until the next card is played
  result.classList.toggle("fresh", Boolean(s.final) ||
      (Boolean(text) && !s.trick.length && !s.last_trick));
}

let timerHandle = null;
function drawTimer(s) {
  clearInterval(timerHandle);
  const box = $("timer");
  box.textContent = "";
  if (!s.deadline) return;
  const tick = () => {
    const left = Math.max(0, Math.round(s.deadline - (Date.now() / 1000 + app.skew)));
    box.textContent = `⏱ ${left}s`;
    box.classList.toggle("late", left <= 10);
  };
  tick();
  timerHandle = setInterval(tick, 1000);
}

function show(s) {
  if (s.type !== "state") return closed(s);
  if (app.state && s.version < app.state.version && s.table === app.state.table) return;
  app.state = s;
  if (s.now) app.skew = s.now - Date.now() / 1000;
  document.body.dataset.phase = s.phase;
  document.body.dataset.players = String(s.players);
  document.body.dataset.myTurn = s.my_turn ? "1" : "0";
  document.body.dataset.version = String(s.version);
  drawTexts(s);
  drawSeats(s);
  drawTrick(s);
  drawCorner(s);
  drawAuction(s);
  drawControls(s);
  drawHand(s);
  drawScores(s);
  drawTimer(s);
  $("app").setAttribute("aria-busy", "false");
}

function closed(s) {
  notice(s.text || "");
  document.body.dataset.phase = "closed";
  $("app").setAttribute("aria-busy", "false");
}

// ------------------------------------------------------------------ start

function applyTheme() {
  if (!tg || !tg.themeParams) return;
  const root = document.documentElement.style;
  const t = tg.themeParams;
  const colours = { bg_color: "--bg", text_color: "--text", hint_color: "--hint",
    button_color: "--button", button_text_color: "--button-text", secondary_bg_color: "--panel" };
  for (const [key, name] of Object.entries(colours)) {
    if (t[key]) root.setProperty(name, t[key]);
    else root.removeProperty(name);
  }
  if (!t.secondary_bg_color && t.bg_color) {
    // panels a shade off the background (a theme without a secondary colour)
    root.setProperty("--panel", `color-mix(in srgb, ${t.bg_color} 90%, ${t.text_color || "#808080"})`);
  }
  document.documentElement.dataset.scheme = tg.colorScheme || "light";
}

if (tg) {
  tg.ready();
  tg.expand();  // the whole height: the table and the hand
  applyTheme();
  tg.onEvent("themeChanged", applyTheme);
  if (tg.BackButton && tg.isVersionAtLeast && tg.isVersionAtLeast("6.1")) {
    // the page has no screens to go back through: Back closes the app
    tg.BackButton.onClick(() => tg.close());
    tg.BackButton.show();
  }
}
// no page zoom: a double tap or a pinch on the cards must not zoom (iOS ignores
// user-scalable=no)
document.addEventListener("gesturestart", (event) => event.preventDefault());
document.addEventListener("dblclick", (event) => event.preventDefault());
openSession().catch((error) => notice(String(error)));
