// A small stand-in for Telegram's telegram-web-app.js: the offline fallback of the sandbox
// when Telegram's own script (npm's @twa-dev/sdk, WEBAPP_TELEGRAM_JS) is not at hand. Like
// the real one it reads the launch parameters from the URL's fragment: tgWebAppData (the
// signed initData), tgWebAppThemeParams, tgWebAppStartParam; the server checks initData as
// in production; it tells the parent frame what the page asked, in Telegram's web
// protocol (JSON {eventType, eventData}), and takes its events the same way.
"use strict";
(function () {
  const hash = new URLSearchParams(location.hash.slice(1));
  const initData = hash.get("tgWebAppData") || "";
  const data = new URLSearchParams(initData);
  const unsafe = {};
  for (const [key, value] of data) {
    try { unsafe[key] = key === "user" || key === "chat" ? JSON.parse(value) : value; }
    catch (e) { unsafe[key] = value; }
  }
  let theme = {};
  try { theme = JSON.parse(hash.get("tgWebAppThemeParams") || "{}"); } catch (e) { theme = {}; }
  const handlers = {};
  const post = (eventType, eventData) => {
    if (window.parent === window) return;
    window.parent.postMessage(JSON.stringify({ eventType, eventData: eventData || "" }), "*");
  };
  const emit = (name) => (handlers[name] || []).forEach((fn) => fn());
  //: What the page asked of Telegram (for the tests): "expand", "back:show", "haptic:…"
  const calls = [];
  const button = (name) => {
    const clicks = [];
    return {
      isVisible: false,
      show() { this.isVisible = true; calls.push(name + ":show"); return this; },
      hide() { this.isVisible = false; calls.push(name + ":hide"); return this; },
      onClick(fn) { clicks.push(fn); return this; },
      offClick(fn) { const i = clicks.indexOf(fn); if (i >= 0) clicks.splice(i, 1); return this; },
      setText(text) { this.text = text; return this; },
      // what Telegram does when the user presses it
      press() { if (this.isVisible) clicks.forEach((fn) => fn()); },
    };
  };
  const version = hash.get("tgWebAppVersion") || "7.0";
  const webApp = {
    initData,
    initDataUnsafe: unsafe,
    version,
    platform: hash.get("tgWebAppPlatform") || "sandbox",
    colorScheme: "light",
    themeParams: theme,
    isExpanded: false,
    calls,
    isVersionAtLeast(wanted) {
      const a = version.split(".").map(Number), b = String(wanted).split(".").map(Number);
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) > (b[i] || 0);
      }
      return true;
    },
    ready() { calls.push("ready"); },
    expand() { this.isExpanded = true; calls.push("expand"); },
    close() { calls.push("close"); post("web_app_close", {}); },
    disableVerticalSwipes() { calls.push("swipes:off"); post("web_app_setup_swipe_behavior",
      { allow_vertical_swipe: false }); },
    requestFullscreen() { calls.push("fullscreen"); post("web_app_request_fullscreen"); },
    // Bot API 8.0: the user picks a chat for a prepared message; the client answers
    shareMessage(id, callback) {
      calls.push("share:" + id);
      const done = (sent) => { off(); if (callback) callback(sent); };
      const sent = () => done(true), failed = () => done(false);
      const off = () => { webApp.offEvent("prepared_message_sent", sent);
        webApp.offEvent("prepared_message_failed", failed); };
      webApp.onEvent("prepared_message_sent", sent);
      webApp.onEvent("prepared_message_failed", failed);
      post("web_app_send_prepared_message", { id });
    },
    safeAreaInset: { top: 0, bottom: 0, left: 0, right: 0 },
    contentSafeAreaInset: { top: 0, bottom: 0, left: 0, right: 0 },
    isActive: true,
    onEvent(name, fn) { (handlers[name] = handlers[name] || []).push(fn); },
    offEvent(name, fn) { handlers[name] = (handlers[name] || []).filter((f) => f !== fn); },
    HapticFeedback: {
      impactOccurred(style) { calls.push("haptic:impact:" + style); return this; },
      notificationOccurred(type) { calls.push("haptic:notification:" + type); return this; },
      selectionChanged() { calls.push("haptic:selection"); return this; },
    },
    BackButton: button("back"),
    MainButton: button("main"),
  };
  const scheme = (t) => (t.bg_color && parseInt(t.bg_color.slice(1), 16) < 0x808080
    ? "dark" : "light");
  webApp.colorScheme = scheme(theme);
  // Telegram's clients post events to the web view; the sandbox does the same
  window.addEventListener("message", (event) => {
    let data = event.data;
    try { if (typeof data === "string") data = JSON.parse(data); } catch (e) { return; }
    if (!data || typeof data !== "object") return;
    if (data.eventType === "theme_changed" && data.eventData && data.eventData.theme_params) {
      webApp.themeParams = data.eventData.theme_params;
      webApp.colorScheme = scheme(webApp.themeParams);
      emit("themeChanged");
    } else if (data.eventType === "back_button_pressed") {
      webApp.BackButton.press();
    } else if (data.eventType === "prepared_message_sent" ||
               data.eventType === "prepared_message_failed") {
      emit(data.eventType);
    } else if (data.eventType === "visibility_changed" && data.eventData) {
      webApp.isActive = Boolean(data.eventData.is_visible);
      emit(webApp.isActive ? "activated" : "deactivated");
    }
  });
  window.Telegram = { WebApp: webApp };
})();
