"""Generate training data: whole smazzate played by a teacher level in every seat.

    python -m train.generate --out data/net --plan default --minutes 40
    python -m train.generate --out data/net --variant "chiamata 5" --level esperto --chunks 4

A game is stored as its replay, not as features: the options, the deal's seed and every
action in order, with each seat's score. :mod:`train.dataset` replays it through the
core and asks ``game.view(seat)`` for each decision, so the features can change without
generating again, and the teacher's decision is the action it took.

*Seeded chunks.* A chunk is ``games`` smazzate of one (variant, level, index); its seed
is a function of the three (:func:`chunk_seed`), game ``i``'s deal seed is
``seed * 1000 + i``. Each chunk is one gzip JSON-lines file, written atomically, and one
line of ``manifest.jsonl`` (seed, level, variant, count, sha256 digest). A run skips the
chunks already in the manifest, so generation resumes where it stopped, in any session;
the same command always produces the same chunks.

*Expert iteration* (DAgger). A level written ``player@teacher`` (``rapido@esperto``)
plays ``player`` in every seat and, at each decision with a choice, also asks
``teacher`` (seeded like the player of that seat) what it would do there: the record
keeps the teacher's answers as ``labels`` beside the actions played, and
:mod:`train.dataset` trains the policy on the labels (the teacher's move in the
positions the network's own play reaches) and the value on the outcome of the
network's own game. Such a chunk depends on the network's weights as well as on its
seed: the manifest keeps the digest of ``net_weights.npz`` it was played with, and the
next round (new weights) goes to a new directory (``data/dagger2``), so that one
directory's chunks remake from one command and one weights file; ``--first-index``
starts its chunk indices (and so its seeds) past the last round's, for new deals.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from game.engine import Game
from game.events import BriscolaScored, SmazzataScored
from game.options import TableOptions
from game.players import create_player
from game.players.net import weights_digest
from game.simulate import VARIANTS

MANIFEST = "manifest.jsonl"


def variant_options(variant: str) -> TableOptions:
    """The options of a variant of :data:`game.simulate.VARIANTS`, one smazzata."""
    return TableOptions.model_validate({**VARIANTS[variant], "match_end": "hands:1"})


def chunk_seed(variant: str, level: str, index: int) -> int:
    """The seed of a chunk: stable across runs and Python versions."""
    key = zlib.crc32(f"{variant}|{level}".encode())
    return (key % 100_000) * 100_000 + index


@dataclass(frozen=True)
class GameRecord:
    variant: str
    deal_seed: int
    #: (seat, action code) in the order played
    actions: list[tuple[int, str]]
    #: each seat's score change (chiamata) or side card points minus an even share
    deltas: list[float]
    #: expert iteration: the teacher's action at each decision (None: no choice)
    labels: list[str | None] | None = None

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "variant": self.variant,
            "deal_seed": self.deal_seed,
            "actions": [[s, c] for s, c in self.actions],
            "deltas": self.deltas,
        }
        if self.labels is not None:
            data["labels"] = self.labels
        return data


def outcome(game: Game) -> list[float]:
    """Each seat's result of the smazzata, as :mod:`game.arena` counts it."""
    for event in game.history:
        if isinstance(event, BriscolaScored):
            share = 120 / len(event.sides)
            deltas = [0.0] * game.n
            for side, points in zip(event.sides, event.points, strict=True):
                for seat in side:
                    deltas[seat] = points - share
            return deltas
    scored = next(e for e in game.history if isinstance(e, SmazzataScored))
    return [float(d) for d in scored.deltas]


def split_level(level: str) -> tuple[str, str | None]:
    """``"rapido@esperto"`` -> ``("rapido", "esperto")``; ``"forte"`` -> ``("forte", None)``."""
    player, _, teacher = level.partition("@")
    return player, teacher or None


def play_game(
    variant: str,
    deal_seed: int,
    levels: list[str],
    player_seed: int,
    teacher: str | None = None,
) -> GameRecord:
    """One smazzata with ``levels[seat]`` in each seat (cycled); with a ``teacher``,
    its choice at every decision with more than one legal action is kept as a label."""
    game = Game.new(variant_options(variant), random.Random(deal_seed))
    players = [create_player(levels[s % len(levels)], player_seed * 10 + s) for s in range(game.n)]
    teachers = (
        [create_player(teacher, player_seed * 10 + s) for s in range(game.n)] if teacher else []
    )
    actions: list[tuple[int, str]] = []
    labels: list[str | None] = []
    while not game.is_over() and game.scored_count == 0:
        seat = game.current_seat()
        assert seat is not None
        view = game.view(seat)
        action = players[seat].choose(view)
        if teachers:
            labels.append(teachers[seat].choose(view).code if len(view.legal) > 1 else None)
        game.apply(seat, action)
        actions.append((seat, action.code))
    return GameRecord(variant, deal_seed, actions, outcome(game), labels if teachers else None)


def chunk_name(variant: str, level: str, index: int) -> str:
    return f"{variant.replace(' ', '_')}-{level}-{index:05d}.jsonl.gz"


def read_manifest(out: Path) -> list[dict[str, object]]:
    path = out / MANIFEST
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def generate_chunk(
    out: Path, variant: str, level: str, index: int, games: int
) -> dict[str, object]:
    """Play and store one chunk; returns its manifest entry (also appended)."""
    seed = chunk_seed(variant, level, index)
    player, teacher = split_level(level)
    start = time.process_time()
    lines = []
    for i in range(games):
        record = play_game(variant, seed * 1000 + i, [player], seed * 1000 + i, teacher)
        lines.append(json.dumps(record.to_json(), separators=(",", ":")))
    payload = ("\n".join(lines) + "\n").encode()
    name = chunk_name(variant, level, index)
    tmp = out / (name + ".tmp")
    with gzip.GzipFile(tmp, "wb", mtime=0) as handle:
        handle.write(payload)
    os.replace(tmp, out / name)
    entry: dict[str, object] = {
        "file": name,
        "variant": variant,
        "level": level,
        "index": index,
        "seed": seed,
        "count": games,
        "decisions": sum(len(json.loads(line)["actions"]) for line in lines),
        "sha256": hashlib.sha256(payload).hexdigest(),
        "cpu_seconds": round(time.process_time() - start, 2),
    }
    if teacher is not None:
        entry["teacher"] = teacher
        entry["labels"] = sum(
            sum(label is not None for label in json.loads(line)["labels"]) for line in lines
        )
    if player == "rapido":
        entry["weights_sha256"] = weights_digest()
    with open(out / MANIFEST, "a") as handle:
        handle.write(json.dumps(entry) + "\n")
    return entry


def read_chunk(out: Path, entry: dict[str, object], check: bool = True) -> Iterator[GameRecord]:
    """The games of a chunk (its digest checked against the manifest's)."""
    payload = gzip.decompress((out / str(entry["file"])).read_bytes())
    if check and hashlib.sha256(payload).hexdigest() != entry["sha256"]:
        raise ValueError(f"digest mismatch: {entry['file']}")
    for line in payload.decode().splitlines():
        data = json.loads(line)
        yield GameRecord(
            data["variant"],
            data["deal_seed"],
            [(int(s), str(c)) for s, c in data["actions"]],
            [float(d) for d in data["deltas"]],
            data.get("labels"),
        )


#: The default plan: (variant, level, games a chunk), visited round-robin so that every
#: variant has data whenever the run stops.
PLANS: dict[str, list[tuple[str, str, int]]] = {
    "default": [(variant, "forte", 10) for variant in VARIANTS]
    + [("chiamata 5", "esperto", 4)],
    #: cheap bulk (about 10 ms a game): the rule-based player, to pre-train on
    "heuristic": [(variant, "normale", 100) for variant in VARIANTS],
    #: where the network was weakest against forte: esperto in two- and four-player
    #: Briscola (about 0.5 s a game)
    "briscola": [("briscola 2", "esperto", 20), ("briscola 4", "esperto", 20)],
    #: esperto in chiamata 5 alone (the default plan's last entry: its chunks continue)
    "chiamata5": [("chiamata 5", "esperto", 4)],
    #: one round of expert iteration: the network in every seat, esperto's labels
    "dagger": [
        ("briscola 2", "rapido@esperto", 20),
        ("briscola 4", "rapido@esperto", 20),
        ("chiamata 5", "rapido@esperto", 4),
    ],
    #: round 3: esperto in every seat of the two chiamata variants that had only round
    #: 1's 80 forte smazzate each, a punti and il morto (about 7 s of CPU a smazzata)
    "punti-morto": [("chiamata 5 a punti", "esperto", 4), ("chiamata 4 (morto)", "esperto", 4)],
    #: round 3's expert iteration, with round 2's weights: the network in every seat of
    #: a punti, il morto and chiamata 5, esperto's labels (run with ``--first-index
    #: 1000`` in data/dagger2, so that its chiamata 5 deals are not data/dagger's again)
    "dagger2": [
        ("chiamata 5 a punti", "rapido@esperto", 4),
        ("chiamata 4 (morto)", "rapido@esperto", 4),
        ("chiamata 5", "rapido@esperto", 4),
    ],
}


def run_plan(
    out: Path, plan: list[tuple[str, str, int]], minutes: float, chunks: int, first: int = 0
) -> None:
    """Make the plan's chunks round-robin from chunk index ``first`` on, skipping those in
    the manifest, until ``chunks`` are made or ``minutes`` of wall clock have passed."""
    out.mkdir(parents=True, exist_ok=True)
    done = {(str(e["variant"]), str(e["level"]), int(str(e["index"]))) for e in read_manifest(out)}
    deadline = time.monotonic() + minutes * 60
    made = 0
    index = first
    while made < chunks and time.monotonic() < deadline:
        for variant, level, games in plan:
            if made >= chunks or time.monotonic() >= deadline:
                break
            if (variant, level, index) in done:
                continue
            entry = generate_chunk(out, variant, level, index, games)
            made += 1
            print(json.dumps(entry), flush=True)
        index += 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/net"))
    parser.add_argument("--plan", choices=sorted(PLANS), default=None)
    parser.add_argument("--variant", choices=sorted(VARIANTS), default=None)
    parser.add_argument("--level", default="forte")
    parser.add_argument("--games", type=int, default=10, help="games a chunk (with --variant)")
    parser.add_argument(
        "--minutes", type=float, default=1e9, help="start no chunk after this (wall clock)"
    )
    parser.add_argument("--chunks", type=int, default=10**9, help="stop after this many chunks")
    parser.add_argument(
        "--first-index",
        type=int,
        default=0,
        help="the first chunk index (another round of a level in a new directory: new deals)",
    )
    args = parser.parse_args(argv)
    if args.variant:
        plan = [(args.variant, args.level, args.games)]
    else:
        plan = PLANS[args.plan or "default"]
    run_plan(args.out, plan, args.minutes, args.chunks, args.first_index)


if __name__ == "__main__":
    main()
