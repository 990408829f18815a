"""The bidder in turn bids from their hand (issue 32); the hands' private-only calls
(obbligato ranks, il monte) are buttons drawn for the smazzata, not redrawn for each bid of
the others.

Against the fake Bot API: the next bidder's hand gets the auction's calls at their turn
(an urgent edit, the obbligato buttons still there), and only theirs: the other hands'
edits are held, with the same buttons; the obbligato button pressed out of turn answers
with a notice and changes nothing; pressed in turn it opens the points picker, and a full
obbligato call goes through; once the auction is over the button answers clearly.
"""

from __future__ import annotations

import random
import re
from typing import Any

from bot.budget import Priority
from bot.i18n import tr
from game import Game, TableOptions
from tests.conftest import make_bot
from tests.e2e.test_e2e_match import make_users, open_table, set_options

MESSAGE_METHODS = ("sendMessage", "editMessageText", "editMessageReplyMarkup")


def obbligato_seed(options: TableOptions) -> tuple[int, int, int]:
    """A seed whose first deal gives the second bidder obbligato ranks: (seed, first
    bidder, second bidder)."""
    for seed in range(1, 10_000):
        game = Game.new(options, rng=random.Random(seed))
        first = game.current_seat()
        assert first is not None
        game.apply(first, next(a for a in game.legal_actions(first) if a.code == "rR"))
        second = game.current_seat()
        assert second is not None
        if game.obbligato_options(second):
            return seed, first, second
    raise AssertionError("no seed")


def hand_message(tg: Any, user: Any) -> Any:
    return tg.chat_messages(user, from_bot=True)[-1]


def buttons(message: Any) -> list[str]:
    return [str(b.callback_data) for b in message.buttons]


async def test_a_bid_leaves_the_next_bidders_hand_alone_and_obbligato_opens_in_turn(
    tg: Any, tmp_path: Any
) -> None:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        users = make_users(tg)
        table = await open_table(tg, bot, users)
        await set_options(table, users[0], {"match_end": "hands:1"})
        prefs = await bot.rt.chat_prefs(table.group.id)
        seed, first, second = obbligato_seed(prefs.options)
        bot.rt.service.seed_source = lambda: seed
        requests: list[tuple[int, int, int, list[str]]] = []
        edit = bot.rt.outbox.edit

        def recording_edit(chat_id: int, message_id: int, text: str, kb: Any = None,
                           **kwargs: Any) -> None:
            data = [] if kb is None else [str(b.callback_data) for row in kb.inline_keyboard
                                          for b in row]
            requests.append((chat_id, message_id, kwargs.get("priority", Priority.TABLE),
                             data))
            edit(chat_id, message_id, text, kb, **kwargs)

        bot.rt.outbox.edit = recording_edit  # type: ignore[method-assign]
        await users[0].send(table.group, "/inizia")
        await tg.wait_for_message(table.group, "Smazzata 1")
        await bot.rt.outbox.drain()
        row, game = await table.state()
        bidder = table.users[row.seat(first).user_id]
        waiter = table.users[row.seat(second).user_id]
        gid, smz = row.game_id, game.smazzata_index
        ranks = game.view(second).obbligato_ranks
        hand = await tg.wait_until(lambda: buttons(hand_message(tg, waiter)) and
                                   hand_message(tg, waiter))
        stable = [f"h:{gid}:{smz}:o{rank}" for rank in ranks]
        assert buttons(hand) == stable  # shown from the deal, out of turn

        # out of turn: a notice (not an alert), nothing changes
        version = row.version
        calls = len(tg.calls)
        answer = await (await waiter.press(hand, stable[0])).wait(10)
        assert not answer.show_alert
        assert answer.text in {tr(lang, "alert.at_your_turn") for lang in ("it", "en")}
        await bot.rt.outbox.drain()
        assert (await table.row()).version == version
        assert not [c for c in tg.calls[calls:] if c.method in MESSAGE_METHODS]

        # the first bidder bids from their hand: the waiter's turn comes, its hand gets
        # the auction's calls (a turn's edit) above the same obbligato buttons; the
        # other hands' edits are held, with their buttons unchanged
        requests.clear()
        calls = len(tg.calls)
        await table.perform(bidder, game.view(first), "rR")
        await table.tg.wait_until(
            lambda: table._message_with(waiter.private_chat, f"a:{gid}:{version + 1}:P"))
        await bot.rt.outbox.drain()
        assert table._message_with(table.group, f"a:{gid}:{version + 1}:P") is None
        mine = [r for r in requests if r[0] == waiter.id and r[1] == hand.message_id]
        assert mine and mine[-1][2] == Priority.TURN
        shown = buttons(tg.message(waiter, hand.message_id))
        assert f"a:{gid}:{version + 1}:P" in shown and shown[-len(stable):] == stable
        held = [r for r in requests if r[0] > 0 and r[0] not in (waiter.id, bidder.id)]
        assert all(p == Priority.IDLE for _, _, p, _ in held)
        urgent_private = {c.chat_id for c in tg.calls[calls:] if c.method in MESSAGE_METHODS
                          and isinstance(c.chat_id, int) and c.chat_id > 0
                          and "reply_markup" in c.params and c.params["reply_markup"]
                          and re.search(rf"[\"'][apqx]:{gid}:{version + 1}[:\"']",
                                        str(c.params["reply_markup"]))}
        assert urgent_private == {waiter.id}  # the bids of this version: in its hand only

        # in turn: the button opens the picker (current version) and the call goes through
        row, game = await table.state()
        assert game.current_seat() == second
        view = game.view(second)
        code = next(c for c in view.legal if c.startswith(f"o{ranks[0]}.")
                    and int(c.split(".")[1]) >= (view.min_call_points or 0) + 3)
        await table.perform(waiter, view, code)
        await table._wait_version(row.version, 10)
        row, game = await table.state()
        assert game.view(None).current_bid == code
        assert game.view(None).current_bidder == second
        await bot.handled()  # (its redraw starts once the answer is sent)
        await bot.rt.outbox.drain()  # the picker gave way to the same buttons
        assert buttons(tg.message(waiter, hand.message_id))[-len(stable):] == stable
        assert not [b for b in buttons(tg.message(waiter, hand.message_id))
                    if b.startswith("a:")]  # not in turn any more: no bid

        # the auction ends: the button (if still shown) gets a clear answer, nothing moves
        await table.play(lambda v, rng: "P" if v.phase == "auction" else v.legal[0],
                         until=lambda g: g.phase.value != "auction")
        row, game = await table.state()
        answer = await (await waiter.press(hand, stable[0], check=False)).wait(10)
        assert answer.show_alert
        assert answer.text in {tr(lang, "alert.call_closed") for lang in ("it", "en")}
        assert (await table.row()).version == row.version
    finally:
        await bot.stop()
