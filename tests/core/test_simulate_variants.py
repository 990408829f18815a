"""The simulator plays and measures every variant, against the yardstick of the same run."""

from __future__ import annotations

import pytest

from game.simulate import VARIANTS, main, simulate
from game.yardstick import yardstick_rate


@pytest.mark.parametrize("name", list(VARIANTS))
def test_simulator_plays_every_variant(name: str) -> None:
    stats = simulate(12, seed=2, overrides=VARIANTS[name])
    assert stats.smazzate >= 12
    assert stats.actions >= 12 * 36  # at least every card of every smazzata


def test_simulator_takes_options_and_prints_the_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--games", "10", "--option", "game=briscola", "--option", "players=3"])
    out = capsys.readouterr().out
    assert "patte (briscola)" in out and "ratio to yardstick" in out
    assert "chiamante win rate" not in out


def test_variants_report_lists_every_variant(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--games", "5", "--variants", "--yardstick-deals", "20"])
    out = capsys.readouterr().out
    for name in VARIANTS:
        assert name in out


def test_yardstick_runs() -> None:
    assert yardstick_rate(20) > 0
