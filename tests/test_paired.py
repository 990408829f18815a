"""The paired yardstick (game.paired): the pairing, its agreement with the duplicate
arena, determinism, the sequential stopping rules, the CLI."""

from __future__ import annotations

import random
import shlex

import pytest

from game import arena, paired
from game.actions import Action, parse_action
from game.options import TableOptions
from game.players import Player, create_player
from game.view import View

FIVE = TableOptions(match_end="hands:1")
BRISCOLA_2 = TableOptions(game="briscola", players=2, match_end="hands:1")


class _Deviant:
    """``normale``, except that in ``seat`` at game version ``version`` it plays the
    first legal action that is not ``normale``'s."""

    name = "deviant"

    def __init__(self, seed: int, seat: int, version: int) -> None:
        self.inner = create_player("normale", seed)
        self.seat = seat
        self.version = version

    def choose(self, view: View) -> Action:
        action = self.inner.choose(view)
        if view.seat == self.seat and view.version == self.version:
            for code in view.legal:
                other = parse_action(code)
                if other != action:
                    return other
        return action


def _deviant_factory(seat: int, version: int) -> arena.PlayerFactory:
    def make(kind: str, seed: int) -> Player:
        if kind == "deviant":
            return _Deviant(seed, seat, version)
        return create_player(kind, seed)

    return make


def _reference_moves(deal: int, seed: int, options: TableOptions) -> list[tuple[int, int]]:
    """The (seat, number of legal actions) of each move of ``normale``'s reference game."""
    from game.engine import Game

    game = Game.new(options, random.Random(arena.deal_seed_of(seed, deal)))
    moves = []
    players: dict[int, Player] = {}
    while not game.is_over() and game.scored_count == 0:
        seat = game.current_seat()
        assert seat is not None
        player = players.setdefault(
            seat, create_player("normale", arena.seat_seed(arena.deal_seed_of(seed, deal), seat))
        )
        view = game.view(seat)
        moves.append((seat, len(view.legal)))
        game.apply(seat, player.choose(view))
    return moves


def test_identical_players_differ_nowhere_and_branch_nowhere() -> None:
    for options in (FIVE, BRISCOLA_2):
        for deal in range(3):
            result = paired.play_deal(deal, 11, "normale", "heuristic", options)
            assert result.differing == 0
            assert result.continuations == 0
            assert set(result.diffs) == {0.0}
            assert set(result.first) == {None}
            assert result.choices > 0
            with_reference = paired.play_deal(
                deal, 11, "normale", "heuristic", options, continuation="random"
            )
            assert with_reference.continuations == 0
            assert set(with_reference.diffs) == {0.0}


def test_one_differing_decision_branches_exactly_there() -> None:
    moves = _reference_moves(0, 5, FIVE)
    # the third move with a choice of seat 2
    index = [i for i, (seat, legal) in enumerate(moves) if seat == 2 and legal > 1][2]
    make = _deviant_factory(2, index)
    exact = paired.play_deal(0, 5, "deviant", "normale", FIVE, make=make)
    assert exact.differing == 1
    assert exact.first == (None, None, index, None, None)
    assert exact.continuations == 1
    assert [d for i, d in enumerate(exact.diffs) if i != 2] == [0.0] * 4
    # a reference continuation at the same single decision: two play-outs (one when the
    # continuation is b: b's move played out by b is the reference game); with normale's
    # play as the continuation (the deviant plays as normale afterwards) the same
    # difference as the exact branch
    for continuation, plays in (("heuristic", 2), ("normale", 1)):
        reference = paired.play_deal(0, 5, "deviant", "normale", FIVE, continuation, make=make)
        assert reference.differing == 1
        assert reference.first == exact.first
        assert reference.continuations == plays
        assert reference.diffs == exact.diffs
        assert reference.by_phase == exact.by_phase


def test_exact_mode_is_the_arena_deal_by_deal() -> None:
    morto = TableOptions(players=4, match_end="hands:1")
    briscola_4 = TableOptions(game="briscola", players=4, match_end="hands:1")
    for options, deals in ((FIVE, 4), (BRISCOLA_2, 6), (morto, 3), (briscola_4, 3)):
        stats = arena.run(deals, 23, "random", "normale", options=options)
        for deal in range(deals):
            result = paired.play_deal(deal, 23, "random", "normale", options)
            if options.game == "briscola":
                assert result.value == pytest.approx(stats["random"].score_per_deal[deal])
                assert result.margin_value == pytest.approx(stats["random"].margin_per_deal[deal])
            else:
                assert result.value == pytest.approx(stats["random"].per_deal[deal])
            assert result.differing >= 1
            # the split by phase adds up to the difference
            assert sum(result.by_phase.values()) == pytest.approx(result.diff)
            assert set(result.by_phase) <= {"auction", "declaration", "play"}


def test_a_deal_is_a_function_of_the_seed() -> None:
    def key(result: paired.DealResult) -> tuple[object, ...]:
        return (result.diffs, result.reference, result.first, result.differing, result.asked)

    for continuation in (None, "normale"):
        first = paired.play_deal(2, 31, "random", "normale", FIVE, continuation)
        again = paired.play_deal(2, 31, "random", "normale", FIVE, continuation)
        assert key(first) == key(again)
        assert sum(first.by_phase.values()) == pytest.approx(first.diff)
        other = paired.play_deal(2, 32, "random", "normale", FIVE, continuation)
        assert key(other) != key(first)


def _normal(mean: float, sd: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(mean, sd) for _ in range(100_000)]


def test_sprt_stops_on_the_side_of_the_true_mean() -> None:
    rule = paired.Sprt(0.0, 0.1, min_deals=20, max_deals=100_000)
    for seed in range(5):
        above = paired.stop_at(rule, _normal(0.2, 0.7, seed))
        below = paired.stop_at(rule, _normal(-0.1, 0.7, seed))
        assert above is not None and above.reason == "H1"
        assert below is not None and below.reason == "H0"
        assert 20 <= above.deals < 100_000 and 20 <= below.deals < 100_000


def test_sprt_bounds_and_max() -> None:
    rule = paired.Sprt(0.0, 0.1, alpha=0.05, beta=0.05, min_deals=10, max_deals=50)
    lower, upper = rule.bounds
    assert lower == pytest.approx(-2.944, abs=1e-3) and upper == pytest.approx(2.944, abs=1e-3)
    verdict = paired.stop_at(rule, _normal(0.05, 5.0, 1))  # in between, very noisy
    assert verdict == paired.Verdict("max", 50)


def test_fixed_width_stops_when_the_interval_is_narrow_enough() -> None:
    rule = paired.FixedWidth(0.1, min_deals=30, max_deals=100_000)
    values = _normal(0.3, 1.0, 7)
    verdict = paired.stop_at(rule, values)
    assert verdict is not None and verdict.reason == "width"
    # (1.96 / 0.1)² = 384 deals for a standard deviation of 1
    assert 300 < verdict.deals < 480
    mean, half = arena.mean_ci(values[: verdict.deals])
    assert half <= 0.1
    assert arena.mean_ci(values[: verdict.deals - 1])[1] > 0.1
    assert mean - half < 0.3 < mean + half
    assert paired.stop_at(paired.FixedWidth(0.0, 2, 40), values) == paired.Verdict("max", 40)


def test_run_stops_by_the_rule_and_keeps_the_deals_in_order() -> None:
    rule = paired.FixedWidth(0.0, min_deals=2, max_deals=3)
    result = paired.run(4, "random", "normale", rule, FIVE)
    assert result.verdict == paired.Verdict("max", 3)
    assert [r.deal for r in result.results] == [0, 1, 2]
    assert result.cpu > 0.0


def test_cli_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    paired.main(
        shlex.split(
            "--a random --b normale --seed 3 --max-deals 2 --min-deals 2 "
            "--option game=briscola --option players=2"
        )
    )
    out = capsys.readouterr().out
    assert "random vs normale: 2 deals, stopped by max" in out
    assert "card points over the best other side" in out
    assert "CPU" in out
    paired.main(
        shlex.split(
            "--a random --b normale --continuation normale --sprt 0,0.1 --max-deals 1 --min-deals 1"
        )
    )
    assert "random vs normale: 1 deals, stopped by max" in capsys.readouterr().out


def test_a_run_continued_from_its_prior_figures_is_the_same_run() -> None:
    rule = paired.FixedWidth(None, min_deals=2, max_deals=4)
    whole = paired.run(6, "random", "normale", rule, FIVE)
    lines: list[str] = []
    first = paired.run(
        6,
        "random",
        "normale",
        paired.FixedWidth(None, 2, 2),
        FIVE,
        echo=lines.append,
        per_deal=True,
    )
    assert lines == [f"deal {r.deal} {r.value!r}" for r in first.results]
    prior = [float(line.split()[2]) for line in lines]
    rest = paired.run(6, "random", "normale", rule, FIVE, prior=prior)
    assert [r.deal for r in rest.results] == [2, 3]
    assert rest.values == whole.values
    assert rest.verdict == whole.verdict == paired.Verdict("max", 4)
    # a prior that already meets the rule plays nothing more
    done = paired.run(6, "random", "normale", paired.FixedWidth(None, 2, 2), FIVE, prior=prior)
    assert done.results == [] and done.verdict == paired.Verdict("max", 2)


def stand_in(kind: str, seed: int) -> Player:
    """A factory for ``--make``: ``stand-in`` is the rule-based player."""
    return create_player("normale" if kind == "stand-in" else kind, seed)


def test_the_players_come_from_the_factory_named(capsys: pytest.CaptureFixture[str]) -> None:
    """``--make MODULE:FUNCTION`` builds the players, as the arena's does: a name only
    that factory knows is compared, and it plays as the player it stands for."""
    argv = "--b random --seed 3 --max-deals 2 --min-deals 2 --per-deal"
    paired.main(shlex.split(f"--a stand-in {argv} --make tests.test_paired:stand_in"))
    made = capsys.readouterr().out
    paired.main(shlex.split(f"--a normale {argv}"))
    plain = capsys.readouterr().out
    assert "stand-in vs random: 2 deals" in made
    deals = [line for line in made.splitlines() if line.startswith("deal ")]
    assert len(deals) == 2
    assert deals == [line for line in plain.splitlines() if line.startswith("deal ")]
    with pytest.raises(ValueError):
        paired.main(shlex.split(f"--a stand-in {argv}"))  # create_player's: unknown
