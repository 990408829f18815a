// A small stand-in for Telegram's telegram-web-app.js, for the sandbox and the tests
// (Telegram's script is only served by Telegram). Like the real one it reads the launch
// parameters from the URL's fragment: tgWebAppData (the signed initData),
// tgWebAppThemeParams, tgWebAppStartParam; the server checks initData as in production.
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
  const stub = { show() {}, hide() {}, onClick() {}, offClick() {}, setText() {}, isVisible: false };
  window.Telegram = {
    WebApp: {
      initData,
      initDataUnsafe: unsafe,
      version: hash.get("tgWebAppVersion") || "7.0",
      platform: hash.get("tgWebAppPlatform") || "sandbox",
      colorScheme: theme.bg_color && parseInt(theme.bg_color.slice(1), 16) < 0x808080 ? "dark" : "light",
      themeParams: theme,
      isExpanded: true,
      ready() {},
      expand() {},
      close() { window.parent.postMessage({ type: "web_app_close" }, "*"); },
      onEvent(name, fn) { (handlers[name] = handlers[name] || []).push(fn); },
      offEvent(name, fn) { handlers[name] = (handlers[name] || []).filter((f) => f !== fn); },
      HapticFeedback: { impactOccurred() {}, notificationOccurred() {}, selectionChanged() {} },
      BackButton: stub,
      MainButton: stub,
    },
  };
})();
