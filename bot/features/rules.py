"""/regole: the rules with this chat's options, in the chat's language.

While a match is being played in the group, its own options (fixed when it started):
the chat's may have changed since, for the next match.
"""

from __future__ import annotations

from telegram import Update
from telegram.ext import Application, CommandHandler, ContextTypes

from bot.features.common import reply
from bot.i18n import tr, trn
from bot.prefs import Prefs
from bot.render import texts
from bot.runtime import is_group, rt_of, thread_of
from bot.tables import prefs_of
from storage import repo


def briscola_rules_text(lang: str, prefs: Prefs) -> str:
    """Plain Briscola (§14): the table size's rules and the match format."""
    o = prefs.options
    parts = [tr(lang, "rules.briscola_head") + " — " + texts.game_label(lang, o),
             tr(lang, "rules.briscola_base"), tr(lang, f"rules.briscola_{o.players}"),
             tr(lang, "rules.briscola_match", match=texts.briscola_match_text(lang, o)),
             "", texts.options_summary(lang, prefs)]
    return texts.clip("\n\n".join(parts))


def rules_text(lang: str, prefs: Prefs) -> str:
    o = prefs.options
    if o.game == "briscola":
        return briscola_rules_text(lang, prefs)
    parts = [tr(lang, "rules.head") + " — " + texts.game_label(lang, o), tr(lang, "rules.base")]
    if o.players == 4:
        parts.append(tr(lang, "rules.morto"))
    elif o.players == 6:
        parts.append(tr(lang, "rules.six"))
    if o.a_punti:
        parts.append(tr(lang, "rules.a_punti"))
    else:
        parts.append(tr(lang, "rules.auction"))
    if o.chiamata_obbligata and not o.a_punti:
        parts.append(tr(lang, "rules.obbligato"))
    if o.a_carichi:
        parts.append(tr(lang, "rules.carichi"))
    if o.monte:
        parts.append(tr(lang, "rules.monte"))
    parts.append(tr(lang, "rules.declare_in_mano" if o.in_mano else "rules.declare_no_mano"))
    if o.al_buio:
        parts.append(tr(lang, "rules.buio"))
    parts.append(tr(lang, "rules.follow" if o.follow_suit else "rules.no_follow"))
    parts.append(tr(lang, "rules.scoring"))
    if o.tie_goes_to_caller:
        parts.append(tr(lang, "rules.tie"))
    if o.cappotto == "double":
        parts.append(tr(lang, "rules.cappotto"))
    parts.append(trn(lang, f"rules.end_{o.match_end_kind}", o.match_end_n))
    parts.append(tr(lang, f"rules.winners_{o.winners}"))
    parts.append("")
    parts.append(texts.options_summary(lang, prefs))
    return texts.clip("\n\n".join(parts))


async def cmd_rules(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    rt, chat, message = rt_of(context), update.effective_chat, update.effective_message
    assert chat and message
    if is_group(update):
        prefs = await rt.chat_prefs(chat.id)
        row = await repo.get_active_game(rt.db, chat.id, thread_of(message))
        if row is not None and row.status == "playing":
            prefs = prefs_of(row).model_copy(update={"language": prefs.language})
    else:
        lang = await rt.user_language(update.effective_user)
        prefs = (await rt.chat_prefs(chat.id)).model_copy(update={"language": lang})
    reply(context, message, rules_text(prefs.language, prefs))


def register(app: Application) -> None:  # type: ignore[type-arg]
    app.add_handler(CommandHandler(["regole", "rules"], cmd_rules))
