"""The budget tool (game.players.regret) and the search's card values it reads."""

from __future__ import annotations

import pytest

from game.options import TableOptions
from game.players.common import decision_rng
from game.players.expert import ExpertPlayer
from game.players.regret import auction_views, main, play_views


def test_the_search_plays_the_card_it_values_most() -> None:
    views = play_views(1, 5, TableOptions())
    assert len(views) >= 20 and all(len(v.legal) > 1 for v in views)
    for view in views[::4]:
        player = ExpertPlayer(seed=1, budget=3000)
        rng = decision_rng(1, view.smazzata, view.version, view.seat or 0)
        cards, values = player.card_values(view, rng)
        assert len(cards) == len(values) == len(view.legal)
        chosen = player.choose(view).code
        assert values[view.legal.index(chosen)] == pytest.approx(max(values), abs=1e-9)


def test_the_tool_prints_a_line_per_budget(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--deals", "1", "--decisions", "3", "--budgets", "500,1000", "--oracle-worlds", "12"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("3 play decisions drawn from 1 deals")
    assert [line.split()[0] for line in lines[2:]] == ["500", "1000"]


def test_the_search_bids_the_call_it_values_most_or_passes() -> None:
    views = auction_views(2, 5, TableOptions())
    assert views and all(v.phase == "auction" and len(v.legal) > 1 for v in views)
    weighed = 0
    for view in views:
        player = ExpertPlayer(seed=1, budget=3000)
        rng = decision_rng(1, view.smazzata, view.version, view.seat or 0)
        values = player.bid_values(view, rng)
        chosen = player.choose(view).code
        assert set(values) <= set(view.legal) - {"P", "M"}
        if chosen == "P":
            assert all(value <= player.call_margin for value in values.values())
        else:
            assert values[chosen] == max(values.values()) > player.call_margin
        weighed += bool(values)
    assert weighed  # some hands roll calls out


def test_the_auction_mode_prints_a_line_per_setting(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--auction", "8:1,16:2", "--deals", "1", "--oracle-worlds", "20", "--oracle-calls", "3"])
    lines = capsys.readouterr().out.splitlines()
    assert "auction decisions with rollouts" in lines[0]
    rows = [line.split() for line in lines[2:]]
    assert [row[0] for row in rows] == ["8:1", "16:2"]
    assert float(rows[0][1]) <= 8 and float(rows[1][1]) <= 16  # the cap on sampled deals
    assert all(float(row[2]) >= 0.0 for row in rows)  # the oracle's best is the best
