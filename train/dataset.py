"""Turn generated games (:mod:`train.generate`) into training arrays by replaying them.

Each game is replayed through the core; at each decision with more than one legal
action the deciding seat's view gives the features (:func:`game.players.net.features`),
the legal actions (``view.legal``, renamed into the canonical suits) give the mask, the
action the teacher took (in an expert-iteration chunk: the teacher's label, the move it
would have made where the network played) is the policy target and the seat's result of
the smazzata (scaled by ``VALUE_SCALE``) the value target.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from game.actions import parse_action
from game.engine import Game
from game.players.net import (
    FEATURES_VERSION,
    N_ACTIONS,
    N_FEATURES,
    VALUE_SCALE,
    canonical_action,
    features,
    suit_order,
    variant_index,
)
from train.generate import GameRecord, read_chunk, read_manifest, variant_options


@dataclass
class Arrays:
    x: npt.NDArray[np.float16]
    #: the legal actions, packed bits of N_ACTIONS (np.packbits)
    legal: npt.NDArray[np.uint8]
    action: npt.NDArray[np.int16]
    value: npt.NDArray[np.float32]
    #: the variant index of each sample (game.players.net.VARIANTS)
    variant: npt.NDArray[np.int8]
    #: 1 for a sample of the stronger teacher (weighted in training)
    weight: npt.NDArray[np.float32]

    def __len__(self) -> int:
        return len(self.action)

    def mask(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        return np.unpackbits(self.legal[rows], axis=1, count=N_ACTIONS).astype(bool)

    def save(self, path: Path) -> None:
        np.savez(path, **{k: getattr(self, k) for k in self.__dataclass_fields__})

    @staticmethod
    def load(path: Path) -> Arrays:
        with np.load(path) as data:
            return Arrays(**{k: data[k] for k in Arrays.__dataclass_fields__})

    @staticmethod
    def concat(parts: list[Arrays]) -> Arrays:
        return Arrays(
            **{
                k: np.concatenate([getattr(p, k) for p in parts])
                for k in Arrays.__dataclass_fields__
            }
        )


def replay(record: GameRecord, weight: float = 1.0) -> Arrays:
    """The samples of one game."""
    game = Game.new(variant_options(record.variant), random.Random(record.deal_seed))
    xs, masks, actions, values, variants = [], [], [], [], []
    labels = record.labels
    for move, (seat, code) in enumerate(record.actions):
        view = game.view(seat)
        if len(view.legal) > 1:
            target = code if labels is None else labels[move]
            assert target is not None, "a decision with a choice has a label"
            order = suit_order(view)
            mask = np.zeros(N_ACTIONS, dtype=bool)
            for legal in view.legal:
                mask[canonical_action(order, parse_action(legal))] = True
            xs.append(features(view))
            masks.append(np.packbits(mask))
            actions.append(canonical_action(order, parse_action(target)))
            values.append(record.deltas[seat] / VALUE_SCALE[view.game])
            variants.append(variant_index(view))
        game.apply(seat, parse_action(code))
    count = len(actions)
    return Arrays(
        np.asarray(xs, dtype=np.float16).reshape(count, N_FEATURES),
        np.asarray(masks, dtype=np.uint8).reshape(count, -1),
        np.asarray(actions, dtype=np.int16),
        np.asarray(values, dtype=np.float32),
        np.asarray(variants, dtype=np.int8),
        np.full(count, weight, dtype=np.float32),
    )


#: Training weight of a sample by the teacher's level.
TEACHER_WEIGHT = {"esperto": 2.0, "campione": 2.0, "forte": 1.0, "normale": 0.5}


def build(
    data: Iterable[Path], cache: Path | None = None, levels: Iterable[str] | None = None
) -> Arrays:
    """Every chunk of the data directories (of the teacher ``levels`` if given),
    replayed (each chunk's arrays cached in ``cache`` by its digest, so a new chunk is
    the only one replayed)."""
    parts = []
    wanted = set(levels) if levels else None
    for directory in data:
        for entry in read_manifest(directory):
            if wanted is not None and entry["level"] not in wanted:
                continue
            key = f"{entry['sha256']}-f{FEATURES_VERSION}-{N_FEATURES}"
            cached = cache / f"{key}.npz" if cache else None
            if cached is not None and cached.exists():
                parts.append(Arrays.load(cached))
                continue
            teacher = str(entry.get("teacher", entry["level"]))
            weight = TEACHER_WEIGHT.get(teacher, 1.0)
            games = [replay(r, weight) for r in read_chunk(directory, entry)]
            part = Arrays.concat(games)
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                part.save(cached)
            parts.append(part)
    return Arrays.concat(parts)
