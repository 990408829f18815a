"""The plain-Briscola audit (game.audit): its figures on a known history and a real run."""

from __future__ import annotations

import pytest

from game.audit import SideAudit, audit_history, main, run_audit
from game.events import CardsDrawn, Event, StockLaid, TrickWon
from game.options import TableOptions


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
