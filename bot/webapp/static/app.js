// The Mini App: draws the state the server sends (built from the core's view of this
// user's seat) and sends the moves the user taps. No rule lives here: the server's
// "actions" and each card's "playable" are the core's legal actions, the last trick and
// the review are the core's public history of the tricks.
"use strict";

const tg = (window.Telegram && window.Telegram.WebApp) || null;
const $ = (id) => document.getElementById(id);
const app = { token: null, table: null, lang: "it", state: null, source: null, skew: 0,
              sending: false, pending: null, refresh: null, picks: {}, expires: 0,
              paused: false, more: false, overlay: null, review: null, reviewAt: 0,
              trickKey: null, takeTimer: null, sheetSeen: null, wasMyTurn: false,
              taken: {} };
window.miniApp = app;  // (read by the browser tests)

//: How long a complete trick stays on the felt before it goes to whoever took it.
const TRICK_MS = 1500;
//: Rank calls shown at once in the auction (the strongest still open); the rest, and
//: the "obbligato" calls, behind one more tap.
const NEXT_CALLS = 3;

/** Whether Telegram's client speaks at least this Bot API version (false outside). */
function atLeast(version) {
  try { return Boolean(tg && tg.isVersionAtLeast && tg.isVersionAtLeast(version)); }
  catch (e) { return false; }
}

function cardUrl(code) { return `static/cards/${app.state.deck}/${code}.webp`; }
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}
function cardImg(code, cls, names) {
  const img = el("img", "card" + (cls ? " " + cls : ""));
  img.src = cardUrl(code);
  const known = names || (app.state && app.state.card_names) || {};
  img.alt = known[code] || code;
  img.dataset.card = code;
  img.draggable = false;
  return img;
}
function button(text, cls, onClick) {
  const b = el("button", cls, text);
  b.type = "button";
  if (onClick) b.addEventListener("click", onClick);
  return b;
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

function haptic(kind, value) {
  // Telegram's HapticFeedback (Bot API 6.1): your turn, a card played, a refused move
  if (!atLeast("6.1") || !tg.HapticFeedback) return;
  try {
    if (kind === "impact") tg.HapticFeedback.impactOccurred(value);
    else if (kind === "notification") tg.HapticFeedback.notificationOccurred(value);
    else tg.HapticFeedback.selectionChanged();
  } catch (e) { /* no feedback */ }
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
  app.expires = Date.now() + result.ttl * 1000;
  document.documentElement.lang = result.lang;
  clearTimeout(app.refresh);  // a fresh token before this one runs out
  app.refresh = setTimeout(reconnect, Math.max(30, result.ttl - 60) * 1000);
  show(result.state);
  listen();
  return true;
}

// The presence contract (the server counts a page as live while its stream is open): the
// stream is open only while the app is in front of its user.
function listen() {
  if (app.source) app.source.close();
  app.source = null;
  if (app.paused) return;
  const url = `api/events?token=${encodeURIComponent(app.token)}&lang=${app.lang}`;
  const source = new EventSource(url);
  app.source = source;
  source.addEventListener("state", (event) => { notice(""); show(JSON.parse(event.data)); });
  source.addEventListener("closed", (event) => { closed(JSON.parse(event.data)); });
  source.addEventListener("expired", () => reconnect());
  source.onerror = () => {
    if (source !== app.source) return;
    if (source.readyState === EventSource.CLOSED) setTimeout(reconnect, 1500);
    else if (app.state) notice(app.state.ui.offline);
  };
}

async function reconnect() {
  if (app.source) { app.source.close(); app.source = null; }
  if (app.paused) return;
  try { await openSession(); } catch (e) { setTimeout(reconnect, 3000); }
}

function pause() {
  // minimised (Telegram's "deactivated"), or the page hidden: the stream closes
  app.paused = true;
  if (app.source) { app.source.close(); app.source = null; }
}

function resume() {
  // back in front: the stream opens again, and its first event is the current state
  if (!app.paused) return;
  app.paused = false;
  if (app.token && app.expires - Date.now() > 30000) listen();
  else reconnect();
}

async function move(code, node) {
  if (app.sending || !app.state) return;  // one move at a time: a second tap does nothing
  app.sending = true;
  app.pending = code;
  document.body.classList.add("sending");
  if (node) node.classList.add("leaving");  // the card leaves the hand at once
  let refused = null;
  try {
    const response = await fetch("api/move", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${app.token}` },
      body: JSON.stringify({ version: app.state.version, code }),
    });
    const result = await response.json().catch(() => ({}));
    if (!response.ok) {
      refused = result.message || response.statusText;
      if (response.status === 401) reconnect();
    } else {
      haptic("impact", code.startsWith("c") ? "medium" : "light");
    }
  } catch (error) {
    refused = String(error);
  } finally {
    app.sending = false;
    app.pending = null;
    document.body.classList.remove("sending");
  }
  if (refused !== null) {
    // back in the hand, with the server's reason
    toast(refused, true);
    haptic("notification", "error");
    if (app.state) drawHand(app.state, true);
  }
}

async function rematch() {
  // the chat's 🔁 Rivincita: a lobby with the same seats (or, with nobody else to wait
  // for, the new match at once: the page follows it)
  if (app.sending || !app.state) return;
  app.sending = true;
  try {
    const response = await fetch("api/rematch", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${app.token}` },
      body: "{}",
    });
    const result = await response.json().catch(() => ({}));
    toast(result.message || response.statusText, !response.ok);
    if (response.ok && app.overlay === "sheet") closeOverlayAll();  // (pressed on the sheet)
    if (response.ok && result.started) {
      history.replaceState(null, "", `${location.pathname}?table=${result.table}`);
      reconnect();
    }
  } catch (error) {
    toast(String(error), true);
  } finally {
    app.sending = false;
  }
}

// ------------------------------------------------------------------ the felt

function seatPlace(seat, s) {
  // the viewer at the bottom, the others around the table in playing order
  const n = s.players;
  const me = s.me === null ? 0 : s.me;
  const k = (seat - me + n) % n;
  const angle = Math.PI / 2 - (k * 2 * Math.PI) / n;
  return { x: Math.cos(angle), y: Math.sin(angle) };
}

//: Where seats sit on the rim and the trick's cards lie, per table size (percent of the
//: felt's width and height from its centre): each card between the centre and its seat.
const LAYOUT = {
  2: { seat: [0, 41], card: [0, 17] }, 3: { seat: [36, 39], card: [18, 14] },
  4: { seat: [37, 39], card: [19, 16] }, 5: { seat: [36, 40], card: [19, 15] },
  6: { seat: [36, 40], card: [21, 16] },
};
const layout = (s) => LAYOUT[s.players] || LAYOUT[5];

function seatPoint(seat, s) {
  const at = seatPlace(seat, s);
  const [rx, ry] = layout(s).seat;
  return { left: 50 + at.x * rx, top: 50 + at.y * ry };
}

//: A name without the computer's robot (its chip says it is one).
const plainName = (name) => String(name).replace(/^🤖\s*/, "");

function drawSeats(s) {
  const box = $("seats");
  box.replaceChildren();
  for (const seat of s.seats) {
    const at = seatPoint(seat.seat, s);
    const chip = el("div", "seat");
    chip.dataset.seat = seat.seat;
    chip.style.left = `${at.left}%`;
    chip.style.top = `${at.top}%`;
    if (seat.turn) chip.classList.add("turn");
    if (seat.you) chip.classList.add("you");
    if (seat.away || seat.morto) chip.classList.add("away");
    const name = plainName(seat.name);
    const line = el("div", "name-line");
    line.append(el("span", "name", name));
    // the caller's crown, the partner's badge, the dealer's chip: on the chip's corners
    if (seat.chiamante) chip.append(el("span", "corner-badge crown", "👑"));
    else if (seat.socio) chip.append(el("span", "corner-badge socio", "🤝"));
    if (seat.dealer) {
      const dealer = el("span", "corner-badge dealer", "M");
      dealer.title = s.ui.dealer;
      chip.append(dealer);
    }
    chip.title = seat.level ? `${seat.name} (${seat.level})` : seat.name;
    chip.append(line);
    if (seat.level) {
      // a computer: its level small, on a tap
      chip.append(el("div", "level", `🤖 ${seat.level}`));
      chip.addEventListener("click", () => {
        chip.classList.add("show-level");
        setTimeout(() => chip.classList.remove("show-level"), 2500);
      });
    }
    if (seat.contract) chip.append(el("div", "contract", seat.contract));
    const meta = el("div", "meta");
    if (seat.away) meta.append(el("span", "badge", "💤"));
    if (!seat.morto || seat.cards) meta.append(el("span", "count", String(seat.cards)));
    if (s.phase === "play" || seat.tricks) {
      const tricks = el("span", "tricks", String(seat.tricks));
      tricks.title = s.ui.tricks_taken;
      meta.append(tricks);
    }
    chip.append(meta);
    if (seat.turn && s.deadline && s.turn_seconds) chip.append(turnBar(s));
    box.append(chip);
  }
}

function turnBar(s) {
  // the turn's time left, draining: a bar under the seat in turn
  const bar = el("div", "timer");
  const fill = el("div", "fill");
  bar.append(fill);
  const left = Math.max(0, s.deadline - (Date.now() / 1000 + app.skew));
  const share = Math.min(1, left / s.turn_seconds);
  fill.style.transform = `scaleX(${share})`;
  if (left < 10) bar.classList.add("late");
  requestAnimationFrame(() => requestAnimationFrame(() => {
    fill.style.transition = `transform ${left}s linear`;
    fill.style.transform = "scaleX(0)";
  }));
  setTimeout(() => bar.classList.add("late"), Math.max(0, left - 10) * 1000);
  return bar;
}

function placeTrickCard(img, seat, s, i) {
  const at = seatPlace(seat, s);
  const [rx, ry] = layout(s).card;
  const tilt = ((seat * 37 + i * 11) % 13) - 6;  // a little askew, as thrown on a table
  img.style.left = `${50 + at.x * rx}%`;
  img.style.top = `${50 + at.y * ry}%`;
  img.style.setProperty("--tilt", `${tilt}deg`);
  img.style.zIndex = String(10 + i);
  img.dataset.seat = seat;
}

function drawTrick(s) {
  // the trick being played: each card in front of its player, the lead marked; a trick
  // just taken stays TRICK_MS (or until the next lead), then goes to whoever took it
  const box = $("trick");
  const last = s.last_trick;
  if (!last && app.trickKey === null) app.trickKey = "";  // (drawn once: none taken yet)
  if (last && last.key !== app.trickKey) {
    // a trick just taken: held until TRICK_MS from now, whatever else arrives meanwhile
    // (calls, a redraw), unless a card of the next trick is played
    // (not the trick a page finds taken when it opens)
    app.holdUntil = app.trickKey === null ? 0 : Date.now() + TRICK_MS;
    app.trickKey = last.key;
  }
  clearTimeout(app.takeTimer);
  box.replaceChildren();
  box.className = "";
  $("trick-label").textContent = "";
  let plays = s.trick;
  let winner = null;
  let leader = s.leader;
  const hold = (app.holdUntil || 0) - Date.now();
  if (!plays.length && last && hold > 0) {
    plays = last.plays;
    winner = last.winner;
    leader = last.leader;
    box.classList.add("taken");
    $("trick-label").textContent = last.text;
  }
  const before = app.onFelt || new Set();
  app.onFelt = new Set(plays.map(([seat, code]) => `${seat}${code}`));
  plays.forEach(([seat, code], i) => {
    const img = cardImg(code, seat === winner ? "winner" : "");
    if (!before.has(`${seat}${code}`)) img.classList.add("thrown");  // just played
    placeTrickCard(img, seat, s, i);
    if (seat === leader && i === 0) {
      img.classList.add("lead");
      img.title = s.ui.led;
    }
    box.append(img);
  });
  document.body.dataset.taking = winner !== null ? "1" : "0";
  if (winner !== null) {
    const to = seatPoint(winner, s);
    app.takeTimer = setTimeout(() => {
      document.body.dataset.taking = "0";
      box.classList.add("gather");
      for (const img of box.querySelectorAll(".card")) {
        img.style.left = `${to.left}%`;
        img.style.top = `${to.top}%`;
      }
      $("trick-label").textContent = "";
      const reduced = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      app.takeTimer = setTimeout(() => box.replaceChildren(), reduced ? 0 : 450);
    }, hold);
  }
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
  // the called card (chiamata) or the briscola's suit, in a corner of the felt
  const box = $("corner");
  box.replaceChildren();
  if (s.called) {
    box.append(cardImg(s.called, "small"), el("span", "caption", s.ui.called));
    if (s.trump) box.append(el("span", "suit", s.trump));
  } else if (s.trump && !s.face_up) {
    box.append(el("span", "caption", s.ui.briscola), el("span", "suit", s.trump));
  }
  box.hidden = !box.childElementCount;
}

// ------------------------------------------------------------------ the auction

function drawAuction(s) {
  const box = $("auction");
  const show = s.phase === "auction" || (s.auction.history.length > 0 && s.phase === "declaration");
  box.hidden = !show || s.game !== "chiamata";
  if (box.hidden) return;
  const list = el("div", "bids");
  if (!s.auction.history.length) list.append(el("span", "hint", s.ui.no_bids));
  for (const bid of s.auction.history) {
    const name = plainName(s.seats[bid.seat].name);
    const chip = el("span", "bid", `${name}: ${bid.text}`);
    if (s.auction.current && s.auction.current.seat === bid.seat &&
        s.auction.current.text === bid.text) chip.classList.add("current");
    list.append(chip);
  }
  box.replaceChildren(list);
  list.scrollLeft = list.scrollWidth;  // the latest calls in sight
}

function stepper(family) {
  // one call "at points": the values are exactly the core's legal ones
  const wrap = el("div", "stepper");
  wrap.dataset.prefix = family.prefix;
  const values = family.values;
  let index = Math.min(app.picks[family.prefix] || 0, values.length - 1);
  const label = button("", "call confirm");
  const paint = () => {
    app.picks[family.prefix] = index;
    label.textContent = "✅ " + family.template.replace("{n}", values[index]);
    label.dataset.code = family.prefix + values[index];
  };
  const step = (delta) => button((delta > 0 ? "+" : "−") + Math.abs(delta), "step", () => {
    index = Math.max(0, Math.min(values.length - 1, index + delta));
    haptic("selection");
    paint();
  });
  label.addEventListener("click", () => move(label.dataset.code));
  paint();
  wrap.append(step(-5), step(-1), label, step(1), step(5));
  return wrap;
}

function callButton(call, s) {
  const b = button(call.text, "call", () => {
    // costly calls (a carichi, monte) take a second tap, as in the chat
    if (call.confirm && !b.classList.contains("armed")) {
      b.classList.add("armed");
      b.textContent = `✅ ${s.ui.confirm}: ${call.text}`;
      return;
    }
    move(call.code);
  });
  b.dataset.code = call.code;
  if (call.code === "P") b.classList.add("pass");
  return b;
}

function drawControls(s) {
  const box = $("controls");
  const a = s.actions;
  box.replaceChildren();
  if (s.phase === "auction" && (a.calls.length || a.points.length)) {
    // compact: pass, the next rank calls, the points stepper; the rest on one more tap
    const ranks = a.calls.filter((c) => c.code.startsWith("r"));
    const others = a.calls.filter((c) => !c.code.startsWith("r") && c.code !== "P");
    const pass = a.calls.find((c) => c.code === "P");
    const main = a.points.filter((f) => f.prefix === "t" || f.prefix === "n");
    const extra = a.points.filter((f) => !main.includes(f));
    const row = el("div", "calls");
    if (pass) row.append(callButton(pass, s));
    for (const call of ranks.slice(0, NEXT_CALLS)) row.append(callButton(call, s));
    const hidden = ranks.slice(NEXT_CALLS).length + others.length + extra.length;
    if (hidden) {
      const more = button(app.more ? "▴" : s.ui.more_calls, "more", () => {
        app.more = !app.more;
        drawControls(app.state);
      });
      more.setAttribute("aria-expanded", String(app.more));
      row.append(more);
    }
    box.append(row);
    for (const family of main) box.append(stepper(family));
    if (app.more && hidden) {
      // (in a box of its own that scrolls: the hand stays in sight)
      const more = el("div", "more-box");
      const rest = el("div", "calls more-calls");
      for (const call of [...ranks.slice(NEXT_CALLS), ...others]) rest.append(callButton(call, s));
      if (rest.childElementCount) more.append(rest);
      for (const family of extra) more.append(stepper(family));
      box.append(more);
    }
  } else if (a.calls.length) {
    const row = el("div", "calls");
    for (const call of a.calls) row.append(callButton(call, s));
    box.append(row);
  }
  if (a.suits.length) {
    box.append(el("h2", "label", s.ui.declare));
    const suits = el("div", "calls");
    for (const suit of a.suits) {
      const b = button(suit.text, "call suit", () => move(suit.code));
      b.dataset.code = suit.code;
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

// ------------------------------------------------------------------ the hand

function drawHand(s, refused) {
  // one row: the cards overlap as a fan when they do not fit side by side
  const box = $("hand-box");
  box.hidden = s.me === null || (!s.hand.length && s.phase === "over");
  const hand = $("hand");
  hand.replaceChildren();
  const n = s.hand.length;
  // (a margin for the outer cards' tilt)
  const width = (hand.clientWidth || Math.min(window.innerWidth, 520) - 16) - 20;
  const cardWidth = Math.min(n <= 3 ? 96 : 84, Math.max(56, width / 4.3));
  const step = n > 1 ? Math.min(cardWidth + 6, (width - cardWidth) / (n - 1)) : 0;
  const start = 10 + (width - (cardWidth + step * (n - 1))) / 2;
  hand.style.setProperty("--card-w", `${cardWidth}px`);
  const playing = s.my_turn && s.phase === "play";
  s.hand.forEach(({ card, playable }, i) => {
    const off = i - (n - 1) / 2;
    const img = cardImg(card, playable ? "playable" : (playing ? "dimmed" : ""));
    img.dataset.code = "c" + card;
    img.style.left = `${start + i * step}px`;
    img.style.setProperty("--tilt", `${n > 3 ? off * 2.5 : 0}deg`);
    img.style.setProperty("--arc", `${n > 3 ? Math.abs(off) * Math.abs(off) * 1.2 : 0}px`);
    img.style.zIndex = String(i + 1);
    if (app.pending === "c" + card) img.classList.add("leaving");
    if (refused && playable) img.classList.add("back");
    if (playable) img.addEventListener("click", () => move("c" + card, img));
    hand.append(img);
  });
  const partner = $("partner");
  partner.hidden = !s.partner_hand;
  if (s.partner_hand) {
    partner.replaceChildren(el("h2", "label", s.ui.partner_hand));
    const row = el("div", "small-row");
    for (const code of s.partner_hand) row.append(cardImg(code, "small"));
    partner.append(row);
  }
}

// ------------------------------------------------------------------ texts and scores

function drawScores(s) {
  const box = $("scores");
  const any = s.seats.some((seat) => seat.total) || s.final;
  box.hidden = !any || s.phase === "auction";
  if (box.hidden) return;
  box.replaceChildren(el("h2", "label", s.ui.scores));
  const list = el("div", "totals");
  for (const seat of s.seats) {
    if (seat.morto) continue;
    const name = plainName(seat.name);
    list.append(el("span", "total" + (seat.you ? " you" : ""), `${name} ${seat.total}`));
  }
  box.append(list);
}

function drawTexts(s) {
  $("title").textContent = s.title;
  $("status-text").textContent = s.final ? s.ui.over
    : (s.me === null ? s.ui.spectator + " " : "") + s.status_line;
  $("info-lines").replaceChildren(...s.info.map((line) => el("div", null, line)));
  $("info").hidden = s.phase === "over" || s.phase === "auction" || !s.info.length;
  const result = $("result");
  result.hidden = !s.final;
  result.textContent = s.final || "";
  result.classList.toggle("fresh", Boolean(s.final));
  const again = $("rematch-button");  // 🔁 Rivincita: for the players of the match
  again.hidden = !s.final || s.me === null;
  again.textContent = s.ui.rematch;
  const last = $("last-button");
  last.textContent = "🂠 " + s.ui.last_trick;
  last.disabled = !s.last_trick;
  const sheet = $("sheet-button");
  sheet.textContent = "📋";
  sheet.title = s.sheet ? s.sheet.title : "";
  sheet.hidden = !s.sheet;
  if (!s.sheet) sheet.classList.remove("fresh");
}

// ------------------------------------------------------------------ overlays

function nameOf(seat) {
  // (the seats are the match's: the same names in a review of an earlier smazzata)
  const s = app.state;
  return plainName(s && s.seats[seat] ? s.seats[seat].name : String(seat));
}

function openOverlay(kind, title, body) {
  app.overlay = kind;
  $("overlay-title").textContent = title;
  $("overlay-body").replaceChildren(...body);
  $("overlay").hidden = false;
  $("overlay").dataset.kind = kind;
  $("overlay-close").setAttribute("aria-label", app.state ? app.state.ui.close : "✕");
  if (atLeast("6.1") && tg.BackButton) tg.BackButton.show();  // Back closes it
}

function closeOverlay() {
  if (app.overlay === "review" && app.state && app.state.sheet &&
      app.review && app.review.smazzata === app.state.sheet.smazzata) {
    return showSheet(app.state.sheet);  // from the review, Back goes to the sheet
  }
  app.overlay = null;
  $("overlay").hidden = true;
  if (atLeast("6.1") && tg.BackButton) tg.BackButton.hide();
}

function trickBlock(trick, cardNames) {
  // one trick as a row: who played what, in order; the lead marked, the taker lit
  const row = el("div", "trick-row");
  row.dataset.key = trick.key;
  trick.plays.forEach(([seat, code], i) => {
    const cell = el("figure", "play" + (seat === trick.winner ? " winner" : ""));
    cell.dataset.seat = seat;
    cell.append(cardImg(code, "", cardNames));
    const caption = el("figcaption", null, nameOf(seat));
    if (i === 0) caption.append(el("span", "lead-tag", app.state.ui.led));
    cell.append(caption);
    row.append(cell);
  });
  return [row, el("p", "taker", trick.text)];
}

function showLastTrick() {
  const s = app.state;
  if (!s || !s.last_trick) return;
  openOverlay("last", s.ui.last_trick, trickBlock(s.last_trick, null));
}

function showSheet(sheet) {
  const s = app.state;
  app.sheetSeen = sheet.smazzata;
  $("sheet-button").classList.remove("fresh");
  const body = [];
  const table = el("table", "sides");
  for (const side of sheet.sides) {
    const tr = el("tr", side.won ? "won" : "");
    const label = side.callers ? (side.seats.length > 1 ? s.ui.caller_side : s.ui.caller_alone)
      : (sheet.contract ? s.ui.others : "");
    const who = el("td", "who");
    if (label) who.append(el("div", "side-label", label));
    who.append(el("div", null, side.seats.map((n) => nameOf(n)).join(", ")));
    tr.append(who, el("td", "points", `${side.points} ${s.ui.card_points}`),
              el("td", "mark", side.won ? "✓" : ""));
    table.append(tr);
  }
  body.push(table);
  if (sheet.contract) {
    const facts = el("dl", "facts");
    const fact = (term, value) => facts.append(el("dt", null, term), el("dd", null, value));
    const target = sheet.contract.includes(String(sheet.target)) ? "" : ` (${sheet.target})`;
    fact(s.ui.contract, sheet.contract + target);
    fact("", sheet.made ? `✓ ${s.ui.made}` : `✗ ${s.ui.failed}`);
    fact(s.ui.multiplier, `×${sheet.multiplier}`);
    body.push(facts);
    const changes = el("table", "changes");
    changes.append(el("caption", null, s.ui.changes));
    for (const c of sheet.changes) {
      const tr = el("tr", c.delta > 0 ? "up" : (c.delta < 0 ? "down" : ""));
      tr.append(el("td", null, nameOf(c.seat)),
                el("td", "delta", (c.delta > 0 ? "+" : "") + c.delta),
                el("td", "total", String(c.total)));
      changes.append(tr);
    }
    body.push(changes);
  } else if (sheet.draw) {
    body.push(el("p", "draw", s.ui.draw));
  }
  const ratings = el("table", "changes ratings");
  ratings.hidden = true;
  body.push(ratings);
  body.push(button("🔎 " + s.ui.review, "call review-button", () => showReview(sheet.smazzata)));
  // "share" sends the result card to a chat the user picks: Bot API 8.0's shareMessage
  if (atLeast("8.0") && tg.shareMessage) {
    body.push(button(s.ui.share, "call share-button", () => shareSheet(sheet.smazzata)));
  }
  // the match's last sheet: 🔁 Rivincita too (as under the final scores), for its players
  if (s.final && s.me !== null && s.sheet && sheet.smazzata === s.sheet.smazzata) {
    body.push(button(s.ui.rematch, "call rematch-sheet-button", rematch));
  }
  openOverlay("sheet", sheet.title, body);
  drawRatings(ratings, sheet.smazzata);
}

/** The rating changes of the unit a smazzata ended (none: the table stays hidden). */
async function drawRatings(table, smazzata) {
  const url = `api/ratings?token=${encodeURIComponent(app.token)}&lang=${app.lang}` +
    `&smazzata=${smazzata}`;
  const response = await fetch(url).catch(() => null);
  if (!response || !response.ok) return;
  const result = await response.json().catch(() => null);
  if (!result || !result.lines || !result.lines.length) return;
  table.append(el("caption", null, result.title));
  for (const line of result.lines) {
    const tr = el("tr", line.change > 0 ? "up" : (line.change < 0 ? "down" : ""));
    const change = line.change > 0 ? `+${line.change}` : (line.change < 0
      ? `−${-line.change}` : "±0");
    tr.append(el("td", null, line.name), el("td", "rating", String(line.rating)),
              el("td", "delta", change));
    table.append(tr);
  }
  table.hidden = false;
}

async function shareSheet(smazzata) {
  const response = await fetch("api/share", {
    method: "POST",
    headers: { "Authorization": `Bearer ${app.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ smazzata }),
  }).catch(() => null);
  const result = response ? await response.json().catch(() => ({})) : {};
  if (!response || !response.ok) {
    toast(result.message || (response ? response.statusText : "…"), true);
    return;
  }
  tg.shareMessage(result.id, (sent) => { if (sent) toast(app.state.ui.shared); });
}

async function showReview(smazzata, at) {
  const s = app.state;
  if (!app.review || app.review.smazzata !== smazzata) {
    const url = `api/review?token=${encodeURIComponent(app.token)}&lang=${app.lang}` +
      `&smazzata=${smazzata}`;
    const response = await fetch(url);
    const result = await response.json().catch(() => ({}));
    if (!response.ok) { toast(result.message || response.statusText, true); return; }
    app.review = result;
  }
  const review = app.review;
  const total = review.tricks.length;
  const index = Math.max(0, Math.min(total - 1, at || 0));
  app.reviewAt = index;
  const trick = review.tricks[index];
  const nav = el("div", "review-nav");
  const prev = button("‹", "step", () => showReview(smazzata, index - 1));
  const next = button("›", "step", () => showReview(smazzata, index + 1));
  prev.disabled = index === 0;
  next.disabled = index === total - 1;
  const label = s.ui.trick_n;
  nav.append(prev, el("span", "review-count",
    label.replace("{n}", index + 1).replace("{total}", total)), next);
  const dots = el("div", "review-dots");
  review.tricks.forEach((_, i) => {
    const dot = button("", "dot" + (i === index ? " on" : ""), () => showReview(smazzata, i));
    dot.setAttribute("aria-label", String(i + 1));
    dots.append(dot);
  });
  openOverlay("review", review.sheet ? review.sheet.title : s.ui.review,
    [nav, ...trickBlock(trick, review.card_names), dots]);
  $("overlay-body").dataset.trick = String(index);
}

// ------------------------------------------------------------------ drawing

function show(s) {
  if (s.type !== "state") return closed(s);
  if (app.state && s.version < app.state.version && s.table === app.state.table) return;
  const first = app.state === null;
  app.state = s;
  if (s.now) app.skew = s.now - Date.now() / 1000;
  document.body.dataset.phase = s.phase;
  document.body.dataset.players = String(s.players);
  document.body.dataset.myTurn = s.my_turn ? "1" : "0";
  document.body.dataset.version = String(s.version);
  if (s.phase !== "auction") app.more = false;
  preload(s.deck);
  if (s.last_trick && !app.taken[s.last_trick.key]) {
    // the tricks this page saw taken (the latest few), e.g. for the tests
    app.taken[s.last_trick.key] = s.last_trick;
    const keys = Object.keys(app.taken);
    if (keys.length > 48) delete app.taken[keys[0]];
  }
  drawTexts(s);
  drawSeats(s);
  drawTrick(s);
  drawCorner(s);
  drawAuction(s);
  drawControls(s);
  drawHand(s);
  drawScores(s);
  if (s.my_turn && !app.wasMyTurn) {
    haptic("impact", "heavy");  // your turn
    // nothing may cover the controls or the hand on a turn: the sheet, the review or
    // the last trick closes (each stays one tap away: 📋, 🂠)
    if (app.overlay) {
      if (app.overlay !== "last") $("sheet-button").classList.add("fresh");
      closeOverlayAll();
    }
  }
  app.wasMyTurn = s.my_turn;
  // a smazzata just ended: its sheet, once (the first state of a session only marks it)
  if (s.sheet && s.sheet.smazzata !== app.sheetSeen) {
    const sheet = s.sheet;
    app.sheetSeen = sheet.smazzata;
    if (!first && (s.phase === "auction" || s.phase === "over")) {
      // after the last trick has been seen taken
      const wait = document.body.dataset.taking === "1" ? TRICK_MS + 500 : 0;
      // (not over a turn of the viewer's: then the 📋 button is lit instead)
      setTimeout(() => {
        if (app.overlay) return;
        if (app.state && app.state.my_turn) $("sheet-button").classList.add("fresh");
        else showSheet(sheet);
      }, wait);
    }
  }
  if (app.overlay === "last" && s.last_trick) showLastTrick();
  $("app").setAttribute("aria-busy", "false");
}

//: Every card's picture file (the same 40 codes in every deck style).
const CARD_CODES = [..."A234567FCR"].flatMap((rank) => [..."cdsb"].map((suit) => rank + suit));
let preloaded = null;
function preload(deck) {
  // the pictures of the whole deck, loaded once: a card played appears at once
  if (preloaded === deck) return;
  preloaded = deck;
  for (const code of CARD_CODES) { const img = new Image(); img.src = `static/cards/${deck}/${code}.webp`; }
}

function closed(s) {
  notice(s.text || "");
  document.body.dataset.phase = "closed";
  $("app").setAttribute("aria-busy", "false");
}

// ------------------------------------------------------------------ Telegram's client

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

function applyInsets() {
  // full screen on a phone: the page keeps clear of the status bar and of Telegram's own
  // buttons (the safe area, then the content safe area, Bot API 8.0)
  const root = document.documentElement.style;
  const safe = (tg && tg.safeAreaInset) || {};
  const content = (tg && tg.contentSafeAreaInset) || {};
  for (const side of ["top", "bottom", "left", "right"]) {
    root.setProperty(`--inset-${side}`, `${(safe[side] || 0) + (content[side] || 0)}px`);
  }
}

if (tg) {
  tg.ready();
  tg.expand();  // the whole height: the table and the hand
  if (atLeast("7.7") && typeof tg.disableVerticalSwipes === "function") {
    tg.disableVerticalSwipes();  // a swipe on the hand must not close the app
  }
  if (atLeast("8.0") && ["android", "ios"].includes(tg.platform) &&
      typeof tg.requestFullscreen === "function") {
    tg.requestFullscreen();
  }
  applyTheme();
  tg.onEvent("themeChanged", applyTheme);
  if (atLeast("8.0")) {
    applyInsets();
    tg.onEvent("safeAreaChanged", applyInsets);
    tg.onEvent("contentSafeAreaChanged", applyInsets);
    tg.onEvent("fullscreenChanged", applyInsets);
    tg.onEvent("deactivated", pause);
    tg.onEvent("activated", resume);
  }
  if (atLeast("6.1") && tg.BackButton) {
    tg.BackButton.onClick(() => { if (app.overlay) closeOverlay(); });
    tg.BackButton.hide();
  }
}
if (!atLeast("8.0")) {
  // no activated/deactivated events: the page's own visibility says the same
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") pause();
    else resume();
  });
}
$("last-button").addEventListener("click", showLastTrick);
$("rematch-button").addEventListener("click", rematch);
$("sheet-button").addEventListener("click", () => app.state && app.state.sheet &&
  showSheet(app.state.sheet));
$("overlay-close").addEventListener("click", closeOverlayAll);
$("overlay").addEventListener("click", (event) => {
  if (event.target === $("overlay")) closeOverlayAll();
});
window.addEventListener("resize", () => { if (app.state) drawHand(app.state); });

function closeOverlayAll() {
  app.overlay = null;
  $("overlay").hidden = true;
  if (atLeast("6.1") && tg.BackButton) tg.BackButton.hide();
}

// no page zoom: a double tap or a pinch on the cards must not zoom (iOS ignores
// user-scalable=no)
document.addEventListener("gesturestart", (event) => event.preventDefault());
document.addEventListener("dblclick", (event) => event.preventDefault());
openSession().catch((error) => notice(String(error)));
