"""The plain-Briscola audit (game.audit): its figures on a known history and a real run."""

from __future__ import annotations

import pytest

from game.audit import SideAudit, audit_history, main, run_audit
from game.events import CardsDrawn, Event, StockLaid, TrickWon
from game.options import TableOptions
from game.players import Player, create_player


def test_the_figures_of_a_known_history() -> None:
    # trump Bastoni; seat 1 leads the Asso di Coppe, seat 0 takes it with the 3 di
    # Bastoni (a draw follows: the stock was there); then seat 0 leads the 3 di Denari
    # and seat 1 takes it with the Asso (no draw: the last tricks)
    history: list[Event] = [
        StockLaid(35, (35,)),
        TrickWon(1, 0, 1, (0, 31), 21),
        CardsDrawn(0, ((0, 5), (1, 35))),
        TrickWon(2, 1, 0, (11, 10), 21),
    ]
    assert audit_history(history, (0,)) == SideAudit(
        stock_points=21,
        last_points=0,
        carichi_led_against=1,
        carichi_taken=1,
        own_carichi_lost=10,
        lead_points=0,
        trumps_played=1,
        trump_points=21,
    )
    assert audit_history(history, (1,)) == SideAudit(
        stock_points=0,
        last_points=21,
        carichi_led_against=1,
        carichi_taken=1,
        own_carichi_lost=11,
        lead_points=0,
        trumps_played=0,
        trump_points=0,
    )


@pytest.mark.parametrize("players", [2, 4])
def test_a_run_accounts_for_every_card_point(
    players: int, capsys: pytest.CaptureFixture[str]
) -> None:
    options = TableOptions.model_validate({"game": "briscola", "players": players})
    stats = run_audit(3, 7, "heuristic", "random", options)
    a, b = stats["heuristic"].per_deal, stats["random"].per_deal
    for deal in range(3):
        total = sum(x[name][deal] for x in (a, b) for name in ("stock_points", "last_points"))
        assert total == pytest.approx(120)  # the two sides share every card point
        for x in (a, b):
            assert x["carichi_taken"][deal] <= x["carichi_led_against"][deal]
            assert x["trump_points"][deal] <= x["stock_points"][deal] + x["last_points"][deal]
    main(["--deals", "1", "--seed", "7", "--a", "heuristic", "--b", "random"])
    assert "own carichi lost (points)" in capsys.readouterr().out


def stand_in(kind: str, seed: int) -> Player:
    """A factory for ``--make``: ``stand-in`` is the rule-based player."""
    return create_player("heuristic" if kind == "stand-in" else kind, seed)


def test_the_players_come_from_the_factory_named(capsys: pytest.CaptureFixture[str]) -> None:
    """``--make MODULE:FUNCTION`` builds the players, as the arena's does: a name only
    that factory knows is audited, and it plays as the player it stands for (the same
    figures, deal by deal)."""
    options = TableOptions.model_validate({"game": "briscola", "players": 2})
    main(["--deals", "1", "--seed", "7", "--a", "stand-in", "--b", "random",
          "--make", "tests.test_audit:stand_in"])
    assert "stand-in" in capsys.readouterr().out
    made = run_audit(3, 7, "stand-in", "random", options, make=stand_in)
    plain = run_audit(3, 7, "heuristic", "random", options)
    assert made["stand-in"].per_deal == plain["heuristic"].per_deal
    assert made["random"].per_deal == plain["random"].per_deal
    with pytest.raises(ValueError):
        run_audit(1, 7, "stand-in", "random", options)  # (create_player's: unknown)
