"""The network player (``rapido``, game.players.net) and its training code (train/)."""

from __future__ import annotations

import copy
import hashlib
import random
from pathlib import Path

import numpy as np
import pytest

from game.actions import ACTIONS, parse_action
from game.engine import Game
from game.options import TableOptions
from game.players import create_player
from game.players.net import (
    N_ACTIONS,
    N_FEATURES,
    WEIGHTS_SHA256,
    NetPlayer,
    Network,
    canonical_action,
    features,
    masked_policy,
    suit_order,
    weights_bytes,
    weights_digest,
)
from game.simulate import VARIANTS, pick
from train.fit import init_params, train

ROOT = Path(__file__).resolve().parent.parent


def variant_options(name: str) -> TableOptions:
    return TableOptions.model_validate({**VARIANTS[name], "match_end": "hands:1"})


def tiny_network(seed: int) -> Network:
    """An untrained network: its choices are arbitrary, which is what masking must
    survive."""
    return Network(init_params(32, seed))  # type: ignore[arg-type]


def states(name: str, seed: int, every: int = 1) -> list[tuple[Game, int]]:
    """Copies of a randomly played smazzata's game at every ``every``-th decision."""
    game = Game.new(variant_options(name), random.Random(seed))
    mover = random.Random(seed)
    result = []
    step = 0
    while not game.is_over() and game.scored_count == 0:
        seat = game.current_seat()
        assert seat is not None
        if step % every == 0:
            result.append((copy.deepcopy(game), seat))
        game.apply(seat, pick(mover, game.legal_actions(seat)))
        step += 1
    return result


def scramble_hidden(game: Game, seat: int, rng: random.Random) -> Game:
    """The same game with every card ``seat`` cannot see dealt again among the other
    hands (each keeps its size) and the stock shuffled; the called card stays with its
    holder (the socio's identity is part of the state, not of a card's place). In
    Briscola with four the partner's hand is shown at the end (R107): not hidden then."""
    other = copy.deepcopy(game)
    called = other.called_card
    seen = {seat}
    if game.view(seat).partner_hand is not None:
        seen |= {s for side in game.rules.sides if seat in side for s in side}
    hidden = []
    for s in range(other.n):
        if s not in seen:
            hidden += [c for c in other.hands[s] if c != called]
    stock = list(other.stock)
    face_up = other.face_up
    movable_stock = [c for c in stock if c != face_up]
    pool = hidden + movable_stock
    shuffled = pool[:]
    for _ in range(20):
        rng.shuffle(shuffled)
        if len(pool) < 2 or shuffled != pool:
            break
    it = iter(shuffled)
    for s in range(other.n):
        if s not in seen:
            other.hands[s] = [c if c == called else next(it) for c in other.hands[s]]
    if stock:
        other.stock[:] = [c if c == face_up else next(it) for c in stock]
    return other


@pytest.mark.parametrize("name", list(VARIANTS))
def test_features_never_read_hidden_cards(name: str) -> None:
    """Deal every hidden card of a state again: the seat in turn gets the same
    features, in every variant and phase."""
    rng = random.Random(7)
    changed = 0
    for seed in (1, 2):
        for game, seat in states(name, seed, every=3):
            before = features(game.view(seat))
            other = scramble_hidden(game, seat, rng)
            if any(other.hands[s] != game.hands[s] for s in range(game.n) if s != seat):
                changed += 1
            assert np.array_equal(before, features(other.view(seat)))
    assert changed > 5  # the scramble did change hidden hands


def test_features_do_read_the_own_hand() -> None:
    """The same check would pass for a constant: the own hand must move the features."""
    game, seat = states("chiamata 5", 3)[0]
    other = copy.deepcopy(game)
    neighbour = (seat + 1) % game.n
    other.hands[seat][0], other.hands[neighbour][0] = (
        other.hands[neighbour][0],
        other.hands[seat][0],
    )
    assert not np.array_equal(features(game.view(seat)), features(other.view(seat)))


def test_canonical_suits_rename_cards_and_keep_the_briscola_first() -> None:
    for game, seat in states("briscola 2", 4, every=5):
        view = game.view(seat)
        order = suit_order(view)
        assert sorted(order) == [0, 1, 2, 3]
        assert view.face_up is not None and order[view.face_up // 10] == 0
        ids = {canonical_action(order, parse_action(code)) for code in view.legal}
        assert len(ids) == len(view.legal)  # a renaming, no two actions merged


@pytest.mark.parametrize("name", list(VARIANTS))
def test_never_an_illegal_action(name: str) -> None:
    """Untrained networks (any logits) and the shipped one pick only legal actions,
    the probabilities cover exactly the legal ones."""
    networks = [tiny_network(seed) for seed in range(3)]
    for seed in range(3):
        game = Game.new(variant_options(name), random.Random(100 + seed))
        players = [NetPlayer(s, networks[s % 3]) for s in range(game.n)]
        shipped = create_player("rapido", seed)
        while not game.is_over() and game.scored_count == 0:
            seat = game.current_seat()
            assert seat is not None
            view = game.view(seat)
            legal, probs, value = masked_policy(networks[seed], view)
            assert [a.code for a in legal] == list(view.legal)
            assert abs(float(probs.sum()) - 1.0) < 1e-4 and np.isfinite(value)
            assert shipped.choose(view).code in view.legal
            action = players[seat].choose(view)
            assert action.code in view.legal
            game.apply(seat, action)


def test_weights_digest_matches_the_committed_one() -> None:
    assert WEIGHTS_SHA256 and weights_digest() == WEIGHTS_SHA256
    manifest = (ROOT / "game/players/NET-MANIFEST.md").read_text()
    assert hashlib.sha256(weights_bytes()).hexdigest() in manifest
    with np.load(ROOT / "game/players/net_weights.npz") as arrays:
        assert arrays["w1"].shape[0] == N_FEATURES and arrays["wp"].shape[1] == N_ACTIONS
    assert (ROOT / "game/players/net_weights.npz").stat().st_size <= 5_000_000


def test_decisions_are_deterministic_for_a_seed() -> None:
    """Greedy play is a function of the view; sampled play of the seed and the view."""
    for name in ("chiamata 5", "briscola 2"):
        for game, seat in states(name, 5, every=4):
            view = game.view(seat)
            greedy = create_player("rapido", 1).choose(view)
            assert greedy == create_player("rapido", 2).choose(view)
            hot = [NetPlayer(9, temperature=1.0).choose(view) for _ in range(3)]
            assert hot[0] == hot[1] == hot[2]


def test_sampling_follows_the_seed() -> None:
    """With a temperature, different seeds do make different choices somewhere."""
    network = tiny_network(1)
    differ = 0
    for game, seat in states("chiamata 5", 6):
        view = game.view(seat)
        if len(view.legal) > 2:
            a = NetPlayer(1, network, temperature=2.0).choose(view)
            b = NetPlayer(2, network, temperature=2.0).choose(view)
            differ += a != b
    assert differ > 0


def test_a_tiny_training_run_learns_and_resumes(tmp_path: Path) -> None:
    """Generate two games, replay them into samples, train a few steps (numpy only):
    the loss falls on the training samples, and a second run resumes from the
    checkpoint instead of starting again."""
    from train.dataset import build
    from train.generate import generate_chunk, read_chunk, read_manifest

    out = tmp_path / "data"
    out.mkdir()
    entry = generate_chunk(out, "briscola 2", "normale", 0, 2)
    assert read_manifest(out) == [entry]
    assert len(list(read_chunk(out, entry))) == 2
    data = build([out], tmp_path / "cache")
    assert len(data) > 20
    assert data.mask(np.arange(len(data)))[np.arange(len(data)), data.action].all()
    from train.fit import evaluate

    rows = np.arange(len(data))
    before = evaluate(init_params(32, 3), data, rows, 0.5)
    params = train(
        data, tmp_path / "ckpt", epochs=30, seed=3, hidden=32, batch=16, lr=3e-3,
        holdout=0.0, log=False,
    )  # fmt: skip
    after = evaluate(params, data, rows, 0.5)
    assert after[0] < before[0] * 0.7
    again = train(
        data, tmp_path / "ckpt", epochs=30, seed=3, hidden=32, batch=16, lr=3e-3,
        holdout=0.0, log=False,
    )  # fmt: skip
    assert all(np.array_equal(params[k], again[k]) for k in params)  # nothing left to do
    player = NetPlayer(0, Network(params))  # type: ignore[arg-type]
    game, seat = states("briscola 2", 8)[2]
    assert player.choose(game.view(seat)).code in game.view(seat).legal


def test_expert_iteration_labels_the_networks_own_play(tmp_path: Path) -> None:
    """A ``rapido@normale`` chunk: the network plays every seat, the teacher's choice at
    each decision with a choice is kept beside it, the manifest names the teacher and
    the weights, and the training targets are the labels, not the moves played."""
    from train.dataset import build
    from train.generate import generate_chunk, read_chunk

    out = tmp_path / "data"
    out.mkdir()
    entry = generate_chunk(out, "briscola 2", "rapido@normale", 0, 2)
    assert entry["teacher"] == "normale"
    assert entry["weights_sha256"] == weights_digest()
    records = list(read_chunk(out, entry))
    assert len(records) == 2
    targets, played = [], []
    for record in records:
        assert record.labels is not None and len(record.labels) == len(record.actions)
        game = Game.new(variant_options("briscola 2"), random.Random(record.deal_seed))
        player_seed = record.deal_seed  # generate_chunk seeds the players like the deal
        for (seat, code), label in zip(record.actions, record.labels, strict=True):
            view = game.view(seat)
            assert code == create_player("rapido", player_seed * 10 + seat).choose(view).code
            if len(view.legal) == 1:
                assert label is None
            else:
                teacher = create_player("normale", player_seed * 10 + seat)
                assert label == teacher.choose(view).code
                order = suit_order(view)
                targets.append(canonical_action(order, parse_action(label)))
                played.append(canonical_action(order, parse_action(code)))
            game.apply(seat, parse_action(code))
    assert entry["labels"] == len(targets)
    data = build([out], tmp_path / "cache")
    assert data.action.tolist() == targets
    assert targets != played  # the network and the teacher disagree somewhere
    assert data.mask(np.arange(len(data)))[np.arange(len(data)), data.action].all()


def test_a_plan_resumes_and_can_start_at_a_later_chunk_index(tmp_path: Path) -> None:
    """``run_plan`` makes the plan's chunks round-robin from ``first`` on, each seeded by
    its index, and skips the ones its manifest lists: a second run makes the next ones."""
    from train.generate import chunk_seed, read_manifest, run_plan

    out = tmp_path / "data"
    plan = [("briscola 2", "normale", 1), ("briscola 3", "normale", 1)]
    run_plan(out, plan, minutes=10, chunks=3, first=1000)
    made = [(e["variant"], e["index"], e["seed"]) for e in read_manifest(out)]
    assert made == [
        ("briscola 2", 1000, chunk_seed("briscola 2", "normale", 1000)),
        ("briscola 3", 1000, chunk_seed("briscola 3", "normale", 1000)),
        ("briscola 2", 1001, chunk_seed("briscola 2", "normale", 1001)),
    ]
    run_plan(out, plan, minutes=10, chunks=1, first=1000)
    assert [(e["variant"], e["index"]) for e in read_manifest(out)][3:] == [("briscola 3", 1001)]


def test_every_action_has_a_policy_output() -> None:
    assert len(ACTIONS) == N_ACTIONS


def test_two_weight_files_compared_in_il_morto(capsys: pytest.CaptureFixture[str]) -> None:
    """``train.compare`` plays the two files in the arena and prints the arena's candidate
    lines: the same weights on both sides score nothing against each other, and in il
    morto (the seats in play do not sum to zero) the paired difference is printed too,
    zero for one network against itself."""
    from train.compare import main

    weights = str(ROOT / "game/players/net_weights.npz")
    main(["--a", weights, "--b", weights, "--deals", "1", "--seed", "3",
          "--option", "players=4"])
    out = capsys.readouterr().out
    assert "a:net_weights minus b:net_weights, paired by deal: +0.000" in out
    main(["--a", weights, "--b", weights, "--deals", "1", "--seed", "3"])
    out = capsys.readouterr().out
    assert "candidate a:net_weights: +0.000 points per smazzata" in out
    assert "paired by deal" not in out
