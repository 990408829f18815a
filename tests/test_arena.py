"""The duplicate-deal arena: schedules, statistics, command line (tiny runs only)."""

from __future__ import annotations

import pytest

from game.arena import main, mean_ci, paired_difference, percentile, run, schedule
from game.options import TableOptions


def test_duplicate_schedule_puts_the_candidate_in_every_seat_once() -> None:
    games = schedule(None, "search", "heuristic")
    assert len(games) == 5
    for seat in range(5):
        assert [g[seat] for g in games].count("search") == 1
    assert all(g.count("search") == 1 for g in games)


def test_mix_schedule_is_balanced_per_seat() -> None:
    types = ["random", "heuristic", "search"]
    games = schedule(types, "", "")
    assert len(games) == 15
    for seat in range(5):
        column = [g[seat] for g in games]
        assert all(column.count(t) == 5 for t in types)


def test_statistics_helpers() -> None:
    mean, half = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5
    assert half == pytest.approx(1.96 * (5 / 3 / 4) ** 0.5)
    assert percentile([float(i) for i in range(1, 101)], 0.95) == 95.0
    assert percentile([], 0.95) == 0.0


def test_same_player_everywhere_scores_exactly_zero() -> None:
    """With the same deterministic player in every seat, all five rotations are the same
    game, so the duplicate mean is exactly 0: the luck of the cards cancels."""
    stats = run(3, 5, "heuristic", "heuristic")
    assert stats["heuristic"].per_deal == [0.0, 0.0, 0.0]


def test_run_counts_and_zero_sum() -> None:
    stats = run(4, 9, "heuristic", "random", options=TableOptions(follow_suit=True))
    a, b = stats["heuristic"], stats["random"]
    assert a.seats == 4 * 5 and b.seats == 4 * 20
    assert len(a.per_deal) == len(b.per_deal) == 4
    for mine, theirs in zip(a.per_deal, b.per_deal, strict=True):
        assert mine + 4 * theirs == pytest.approx(0.0)  # every smazzata sums to 0 (R76)
    assert a.auctions + b.auctions == 4 * 5  # one chiamante per smazzata
    assert 0 <= a.made <= a.auctions
    assert a.times and b.times
    assert 0 < len(a.choice_times) < len(a.times)  # the last trick is never a choice


def test_the_score_splits_by_role_into_parts_that_add_up_to_it() -> None:
    stats = run(4, 9, "heuristic", "random")
    for entry in stats.values():
        seats = sum(entry.role_seats.values())
        assert seats == entry.seats
        parts = sum(entry.role_sums.values()) / entry.seats
        assert parts == pytest.approx(sum(entry.per_deal) / len(entry.per_deal))
    # one chiamante a smazzata, a socio unless the chiamante called itself
    chiamanti = sum(e.role_seats.get("chiamante", 0) for e in stats.values())
    soci = sum(e.role_seats.get("socio", 0) for e in stats.values())
    assert chiamanti == 4 * 5
    assert 0 < soci <= chiamanti
    assert stats["heuristic"].role_seats.get("chiamante", 0) == stats["heuristic"].auctions


def test_command_line_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--deals", "2", "--seed", "3", "--a", "heuristic", "--b", "random"])
    out = capsys.readouterr().out
    assert "duplicate arena: heuristic (1 seat) vs random (4 seats); 2 deals, 10 smazzate" in out
    assert "candidate heuristic:" in out
    for column in ("score/smazzata", "95% CI", "auction won", "contract made", "p95 choice"):
        assert column in out
    assert "by role:" in out
    assert out.count("chiamante ") == 2  # a line for each type


def test_il_morto_reports_the_paired_difference(capsys: pytest.CaptureFixture[str]) -> None:
    """With il morto the four seats in play do not sum to zero: the candidate's own
    score is no margin, the difference from the field deal by deal is."""
    stats = run(3, 4, "heuristic", "random", options=TableOptions(players=4))
    a, b = stats["heuristic"].per_deal, stats["random"].per_deal
    assert any(x + 3 * y != pytest.approx(0.0) for x, y in zip(a, b, strict=True))
    mean, half = paired_difference(stats, "heuristic", "random")
    assert mean == pytest.approx(sum(x - y for x, y in zip(a, b, strict=True)) / 3)
    assert half > 0
    main(["--deals", "2", "--seed", "3", "--a", "heuristic", "--b", "random",
          "--option", "players=4"])
    assert "heuristic minus random, paired by deal:" in capsys.readouterr().out
    main(["--deals", "1", "--seed", "3", "--a", "heuristic", "--b", "random"])
    assert "paired by deal" not in capsys.readouterr().out  # zero-sum: the own score says it


def test_command_line_mix(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--deals", "1", "--mix", "--types", "random,facile,heuristic"])
    out = capsys.readouterr().out
    assert "mix of random, facile, heuristic; 1 deals, 15 smazzate" in out
    rows = [line.split()[0] for line in out.splitlines() if line.split()]
    assert {"random", "facile", "heuristic"} <= set(rows)


def test_unknown_player_type_is_refused() -> None:
    with pytest.raises(ValueError):
        main(["--deals", "1", "--a", "wizard"])


@pytest.mark.parametrize("players", [2, 3, 4])
def test_plain_briscola_reports_wins_draws_losses_score_and_card_points(
    players: int, capsys: pytest.CaptureFixture[str]
) -> None:
    options = TableOptions.model_validate({"game": "briscola", "players": players})
    stats = run(6, 3, "heuristic", "random", options=options)
    a, b = stats["heuristic"], stats["random"]
    # every smazzata counts each side once, the candidate's once a game (a rotation)
    games = 6 * (2 if players != 3 else 3)
    assert a.wins + a.draws + a.losses == games
    assert len(a.score_per_deal) == len(a.margin_per_deal) == 6
    if players != 3:
        # two sides: one's win is the other's loss, and the margins are opposite
        assert a.wins == b.losses and a.draws == b.draws and a.losses == b.wins
        for mine, theirs in zip(a.score_per_deal, b.score_per_deal, strict=True):
            assert mine + theirs == pytest.approx(1.0)
        for margin, delta in zip(a.margin_per_deal, a.per_deal, strict=True):
            assert margin == pytest.approx(2 * delta)  # points − share, twice
    score = (a.wins + a.draws / 2) / games
    assert sum(a.score_per_deal) / 6 == pytest.approx(score)
    main(["--deals", "2", "--seed", "3", "--a", "heuristic", "--b", "random",
          "--option", "game=briscola", "--option", f"players={players}"])
    out = capsys.readouterr().out
    assert "wins  draws  losses  score (draw 1/2)" in out
