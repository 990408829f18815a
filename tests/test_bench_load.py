"""The load benchmark itself runs end to end and measures what it says (no timing is
asserted: speed targets live in the benchmark's printed figures, not in tests)."""

from __future__ import annotations

from pathlib import Path

from bench.load import parse_args, report, run_bot


async def test_a_short_load_run_measures_the_bot_and_both_echo_floors(tmp_path: Path) -> None:
    args = parse_args([
        "--tables", "2", "--seconds", "4", "--warmup", "2", "--warmup-moves", "4",
        "--echo-seconds", "2",
        "--echo-http", "httpx", "--grace", "10", "--think", "0.3", "--log-level", "WARNING",
    ])
    # the window opens once both tables play (the groups' pacing spaces their first
    # messages: right after the start-up a 4 s window could hold no click at all)
    figures = await run_bot(args, 2, tmp_path)
    assert figures.callbacks > 0 and figures.updates >= figures.callbacks
    assert figures.lost == 0
    # every click was one stored move and one answer (the simulated humans only press
    # buttons of their own turn); a click at the window's edges may count on one side only
    assert abs(figures.actions - figures.callbacks) <= 2
    assert abs(figures.call_mix["answerCallbackQuery"] - figures.callbacks) <= 2
    assert 0 < figures.p50 <= figures.p95 <= figures.p99
    assert figures.echo_updates > 0 and 0 < figures.echo_p50 <= figures.echo_p95
    assert figures.echo_alongside is not None and figures.echo_alongside_updates > 0
    assert figures.calls_per_smazzata is not None and figures.calls_per_smazzata > 0
    assert figures.cpu_per_update > 0 and figures.peak_rss_mib > 0
    # message calls per move, split; the group table's staleness, from a replay
    assert set(figures.per_move) == {"group", "turn", "other"}
    assert figures.per_move["group"] > 0  # (a short window: the auction, shown in the groups)
    assert 0 <= figures.staleness_p50 <= figures.staleness_p95 < 30
    # every acknowledged press: its own message was edited to show it
    assert 0 <= figures.own_p50 <= figures.own_p95 < 30
    # the next-button waits of the window are those of the moves pressed in it, all in
    # private (issue 32: bids too, from the hand), by phase
    moves = figures.phases
    assert figures.turn_split["group"][0] == 0
    assert abs(figures.turn_split["private"][0] - sum(moves.values())) <= 2
    assert abs(figures.turn_phases["auction"][0] - moves["auction"]) <= 2
    assert figures.miniapp_seats == 0 and figures.miniapp_turns == 0
    text = report([figures], args)
    assert text.splitlines()[2].startswith("| 2 | ")
    assert "the echo alongside" in text and "nothing lost" in text


async def test_a_short_run_with_mini_app_seats(tmp_path: Path) -> None:
    """``--miniapp-share``: the Mini App seats play through its API (their turns and own
    moves measured), two pages close mid-window and their players go on from the chat
    (the fallback measured); untimed."""
    args = parse_args([
        "--tables", "2", "--seconds", "8", "--warmup", "2", "--warmup-moves", "4",
        "--echo-seconds", "1", "--echo-http", "httpx", "--no-echo-alongside",
        "--grace", "10", "--think", "0.3", "--miniapp-share", "0.5",
        "--miniapp-close", "0.4", "--log-level", "WARNING",
    ])
    figures = await run_bot(args, 2, tmp_path)
    assert figures.lost == 0
    assert figures.miniapp_seats == 5  # half of the ten human seats, spread evenly
    assert figures.miniapp_turns > 0 and figures.miniapp_moves > 0
    assert 0 <= figures.miniapp_turn_p50 <= figures.miniapp_turn_p95 < 30
    assert 0 <= figures.miniapp_own_p50 <= figures.miniapp_own_p95 < 30
    assert figures.fallback is not None and figures.fallback[0] == 2  # 40% of 5 pages
    text = report([figures], args)
    head = text.splitlines()[0]
    assert "| miniapp next turn p50/p95 s | miniapp own p50/p95 s |" in head
    assert "| 429 |" in head and "Mini App: 5 seats" in text


async def test_a_short_run_with_human_think_times(tmp_path: Path) -> None:
    """``--think human``: people's pauses (a few seconds), chat only; untimed."""
    args = parse_args([
        "--tables", "3", "--seconds", "8", "--warmup", "2", "--warmup-moves", "3",
        "--echo-seconds", "1", "--echo-http", "httpx", "--no-echo-alongside",
        "--grace", "10", "--think", "human", "--log-level", "WARNING",
    ])
    figures = await run_bot(args, 3, tmp_path)
    assert figures.lost == 0 and figures.callbacks > 0
    assert figures.actions >= figures.callbacks - 2
    assert figures.miniapp_seats == 0 and "| - | - |" in report([figures], args)


def test_human_think_times_have_the_asked_median_and_tails() -> None:
    import random

    from bench.sim import Think

    think = Think.parse("human")
    rng = random.Random(7)
    sample = sorted(think.pause(rng) for _ in range(40_000))
    share = lambda limit: sum(x < limit for x in sample) / len(sample)  # noqa: E731
    assert abs(sample[len(sample) // 2] - 2.5) < 0.05
    assert abs(share(1.2) - 0.10) < 0.01 and abs(share(6.0) - 0.90) < 0.01
    assert "0.432 s + 2.068 s × exp(N(0, 0.773²))" in think.describe(1)
    assert "sampled 10%/50%/90%: 1.20/2.4" in think.describe(1)
    fixed = Think.parse("1")
    assert all(0.5 <= fixed.pause(rng) <= 1.5 for _ in range(100))
    assert not Think.parse("0")


def test_the_bots_side_of_the_next_button_is_the_first_later_keyboard() -> None:
    """A computer seat moving after a person: the next keyboard a person gets is of the
    version after the computer's move, and that is the wait (not "never drawn")."""
    from types import SimpleNamespace

    from bench.load import bot_turn_waits

    def press(game_id: int, version: int, at: float) -> SimpleNamespace:
        answer = SimpleNamespace(at=at, show_alert=False)
        handle = SimpleNamespace(answer=answer)
        return SimpleNamespace(game_id=game_id, version=version, handle=handle)

    def keyboard(game_id: int, version: int, at: float) -> SimpleNamespace:
        markup = f'{{"inline_keyboard": [[{{"callback_data": "a:{game_id}:{version}:cAd"}}]]}}'
        params = {"reply_markup": markup}
        return SimpleNamespace(method="editMessageText", ok=True, at=at, params=params)

    sims = [SimpleNamespace(presses=[press(1, 4, 10.0), press(2, 7, 10.0), press(3, 2, 10.0)])]
    calls = [
        keyboard(1, 4, 9.0),  # the pressed keyboard itself, before the press
        keyboard(1, 6, 11.5),  # version 5 was the computer's move
        keyboard(1, 7, 12.0),
        keyboard(2, 8, 10.25),  # the very next version
        keyboard(9, 1, 20.0),  # another game: the last call of the window
    ]
    # game 3 never got a later keyboard: it counts until the last call
    assert bot_turn_waits(calls, sims, 0.0, 30.0) == [1.5, 0.25, 10.0]


def test_the_harness_collector_is_tuned_for_the_window_and_restored() -> None:
    """``--harness-gc tuned``: the set-up's objects out of the passes, the bot's
    thresholds, CPython's again afterwards; ``default`` changes nothing."""
    import gc

    from bench.load import HARNESS_GC_THRESHOLDS, harness_collector

    before = gc.get_threshold()
    with harness_collector("default"):
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    kept = [object() for _ in range(10)]  # (made by the set-up)
    with harness_collector("tuned"):
        assert gc.get_threshold() == HARNESS_GC_THRESHOLDS
        assert gc.get_freeze_count() >= len(kept)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_solo_tables_are_one_person_in_the_mini_app_and_the_bots_computers() -> None:
    from bot.config import Settings

    args = parse_args(["--solo", "20", "40"])
    assert args.tables == [20, 40] and args.miniapp_share == 1.0 and args.think == "human"
    defaults = Settings.model_fields
    assert args.computer_level == defaults["computer_level"].default
    assert args.computer_delay == defaults["computer_delay_seconds"].default
    # without --solo, as before; given options win
    plain = parse_args(["--tables", "5"])
    assert (plain.think, plain.computer_level, plain.computer_delay) == ("1", "facile", 0.0)
    given = parse_args(["--solo", "2", "--think", "0.5", "--computer-level", "esperto"])
    assert (given.think, given.computer_level) == ("0.5", "esperto")


async def test_a_short_solo_run_measures_the_computers_moves(tmp_path: Path) -> None:
    """``--solo``: each table one Mini App seat and four computers of a search level; the
    computers' moves beyond the display pause and the search pool's CPU; untimed."""
    args = parse_args([
        "--solo", "2", "--seconds", "8", "--warmup", "2", "--warmup-moves", "8",
        "--echo-seconds", "1", "--echo-http", "httpx", "--no-echo-alongside",
        "--grace", "10", "--think", "0.3", "--computer-level", "forte",
        "--computer-delay", "0.3", "--miniapp-close", "0", "--log-level", "WARNING",
    ])
    figures = await run_bot(args, 2, tmp_path)
    assert figures.lost == 0 and figures.miniapp_seats == 2 and figures.miniapp_moves > 0
    # four computers a person: most moves are theirs, seen on the person's stream
    assert figures.computer_actions > figures.miniapp_moves
    assert 0 < figures.computer_moves <= figures.computer_actions + 2
    # measured beyond the pause: never much before it ends (the decision runs during it)
    assert -0.05 < figures.computer_p50 <= figures.computer_p95 < 30
    assert figures.pool_cpu_seconds > 0  # forte searches in the bot's process pool
    text = report([figures], args)
    assert "computer move p50/p95 " in text and "beyond the 0.3 s pause (forte)" in text
