// Telegram Web's side of the Mini App protocol, for a page that holds a Mini App in an
// iframe (the sandbox's phone, the browser tests' host page): the Mini App's script
// (Telegram's telegram-web-app.js, or the stand-in) posts JSON {eventType, eventData} to
// its parent; this answers as Telegram's web client does (theme, viewport, safe areas,
// full screen) and records everything it was sent, in order, in `events`.
"use strict";
window.TelegramHost = function TelegramHost(frame, options) {
  const opts = options || {};
  const zero = { top: 0, bottom: 0, left: 0, right: 0 };
  const host = {
    events: [], backVisible: false, fullscreen: false, closed: false,
    theme: opts.theme || { bg_color: "#ffffff", text_color: "#000000", hint_color: "#707579",
      link_color: "#2481cc", button_color: "#2481cc", button_text_color: "#ffffff",
      secondary_bg_color: "#f4f4f5" },
    safeArea: opts.safeArea || zero,
    contentSafeArea: opts.contentSafeArea || zero,
  };
  const send = (eventType, eventData) => {
    if (frame.contentWindow) {
      frame.contentWindow.postMessage(JSON.stringify({ eventType, eventData }), "*");
    }
  };
  const viewport = () => ({ height: frame.clientHeight, width: frame.clientWidth,
    is_expanded: true, is_state_stable: true });
  window.addEventListener("message", (event) => {
    if (event.source !== frame.contentWindow) return;
    let data = event.data;
    try { if (typeof data === "string") data = JSON.parse(data); } catch (e) { return; }
    if (!data || !data.eventType) return;
    const payload = data.eventData === "" ? null : data.eventData;
    host.events.push({ type: data.eventType, data: payload });
    switch (data.eventType) {
      case "web_app_request_theme":
        send("theme_changed", { theme_params: host.theme });
        break;
      case "web_app_request_viewport":
      case "web_app_expand":
        send("viewport_changed", viewport());
        break;
      case "web_app_request_safe_area":
        send("safe_area_changed", host.safeArea);
        break;
      case "web_app_request_content_safe_area":
        send("content_safe_area_changed", host.contentSafeArea);
        break;
      case "web_app_request_fullscreen":
        host.fullscreen = true;
        send("fullscreen_changed", { is_fullscreen: true });
        send("safe_area_changed", host.safeArea);
        send("content_safe_area_changed", host.contentSafeArea);
        break;
      case "web_app_setup_back_button":
        host.backVisible = Boolean(payload && payload.is_visible);
        if (opts.onBackButton) opts.onBackButton(host.backVisible);
        break;
      case "web_app_send_prepared_message": {  // shareMessage (Bot API 8.0)
        const id = payload && payload.id;
        const share = opts.onShareMessage ? opts.onShareMessage(id) : Promise.resolve(false);
        Promise.resolve(share).then(
          (sent) => send(sent ? "prepared_message_sent" : "prepared_message_failed",
                         sent ? {} : { error: "USER_DECLINED" }),
          () => send("prepared_message_failed", { error: "UNKNOWN_ERROR" }));
        break;
      }
      case "web_app_close":
        host.closed = true;
        if (opts.onClose) opts.onClose();
        break;
      default:
        break;
    }
  });
  // the host page hidden or shown (a phone's app in the background): the app is told,
  // as Telegram's clients tell it when they minimise it
  document.addEventListener("visibilitychange", () => {
    host.setVisible(document.visibilityState !== "hidden");
  });
  // what the user does in Telegram's client around the app
  host.pressBack = () => send("back_button_pressed");
  host.setVisible = (visible) => send("visibility_changed", { is_visible: Boolean(visible) });
  host.setTheme = (theme) => { host.theme = theme; send("theme_changed", { theme_params: theme }); };
  host.posted = (type) => host.events.filter((e) => e.type === type);
  return host;
};
