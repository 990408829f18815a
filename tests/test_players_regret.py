"""The budget tool (game.players.regret) and the search's card values it reads."""

from __future__ import annotations

import pytest

from game.options import TableOptions
from game.players.common import decision_rng
from game.players.expert import ExpertPlayer
from game.players.regret import main, play_views


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
