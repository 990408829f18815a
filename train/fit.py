"""Train the network of :mod:`game.players.net` in numpy (no torch needed).

    python -m train.fit --data data/net --out data/ckpt --epochs 8 --seed 1
    python -m train.fit ... --export game/players/net_weights.npz

The loss is the policy's cross-entropy against the teacher's action, over the legal
actions only (illegal logits are masked out), plus ``value_weight`` times the value
head's squared error against the seat's result. Adam, minibatches, He initialisation;
the gradients are written out by hand (three layers). One held-out share of the games'
samples (``--holdout``, by a seeded permutation) reports accuracy and loss per epoch.

*Resumable.* After each epoch the weights, Adam's moments, the epoch and the permutation
seed go to ``<out>/checkpoint.npz`` (atomically); a run with the same arguments starts
from it. ``--export`` writes the weights alone as float16, the shipped file.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from game.players.net import N_ACTIONS, N_FEATURES
from train.dataset import Arrays, build

F32 = npt.NDArray[np.float32]
PARAMS = ("w1", "b1", "w2", "b2", "wp", "bp", "wv", "bv")


def init_params(hidden: int, seed: int) -> dict[str, F32]:
    rng = np.random.default_rng(seed)

    def he(rows: int, cols: int) -> F32:
        weights: F32 = (rng.standard_normal((rows, cols)) * np.sqrt(2.0 / rows)).astype(np.float32)
        return weights

    return {
        "w1": he(N_FEATURES, hidden),
        "b1": np.zeros(hidden, np.float32),
        "w2": he(hidden, hidden),
        "b2": np.zeros(hidden, np.float32),
        "wp": (he(hidden, N_ACTIONS) * 0.1).astype(np.float32),
        "bp": np.zeros(N_ACTIONS, np.float32),
        "wv": (he(hidden, 1) * 0.1).astype(np.float32),
        "bv": np.zeros(1, np.float32),
    }


def loss_and_grads(
    params: dict[str, F32],
    x: F32,
    mask: npt.NDArray[np.bool_],
    action: npt.NDArray[np.int64],
    value: F32,
    weight: F32,
    value_weight: float,
) -> tuple[float, float, float, dict[str, F32]]:
    """Mean policy loss, value loss, accuracy and the gradients of their weighted sum."""
    n = len(action)
    z1 = x @ params["w1"] + params["b1"]
    h1 = np.maximum(z1, 0.0)
    z2 = h1 @ params["w2"] + params["b2"]
    h2 = np.maximum(z2, 0.0)
    logits = h2 @ params["wp"] + params["bp"]
    v = (h2 @ params["wv"] + params["bv"])[:, 0]
    logits = np.where(mask, logits, np.float32(-1e9))
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    w = weight / weight.sum()
    policy_loss = float(-(w * np.log(p[rows, action] + 1e-12)).sum())
    accuracy = float((logits.argmax(axis=1) == action).mean())
    err = v - value
    value_loss = float((w * err * err).sum())
    g_logits = p
    g_logits[rows, action] -= 1.0
    g_logits *= w[:, None]
    g_v = (2.0 * value_weight * w * err)[:, None].astype(np.float32)
    grads: dict[str, F32] = {
        "wp": h2.T @ g_logits,
        "bp": g_logits.sum(axis=0),
        "wv": h2.T @ g_v,
        "bv": g_v.sum(axis=0),
    }
    g_h2 = g_logits @ params["wp"].T + g_v @ params["wv"].T
    g_h2 *= z2 > 0
    grads["w2"] = h1.T @ g_h2
    grads["b2"] = g_h2.sum(axis=0)
    g_h1 = g_h2 @ params["w2"].T
    g_h1 *= z1 > 0
    grads["w1"] = x.T @ g_h1
    grads["b1"] = g_h1.sum(axis=0)
    return policy_loss, value_loss, accuracy, grads


def batch_loss(
    params: dict[str, F32],
    data: Arrays,
    rows: npt.NDArray[np.int64],
    weight: F32,
    value_weight: float,
) -> tuple[float, float, float, dict[str, F32]]:
    """:func:`loss_and_grads` on the samples ``rows`` of ``data``."""
    return loss_and_grads(
        params,
        data.x[rows].astype(np.float32),
        data.mask(rows),
        data.action[rows].astype(np.int64),
        data.value[rows],
        weight,
        value_weight,
    )


class Adam:
    def __init__(self, params: dict[str, F32], lr: float, decay: float = 0.0) -> None:
        self.lr = lr
        self.decay = decay
        self.t = 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params: dict[str, F32], grads: dict[str, F32]) -> None:
        self.t += 1
        b1, b2 = 0.9, 0.999
        scale = self.lr * np.sqrt(1 - b2**self.t) / (1 - b1**self.t)
        for k, g in grads.items():
            if self.decay and k.startswith("w"):
                g = g + self.decay * params[k]
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g * g
            params[k] -= (scale * self.m[k] / (np.sqrt(self.v[k]) + 1e-8)).astype(np.float32)


def evaluate(
    params: dict[str, F32], data: Arrays, rows: npt.NDArray[np.int64], value_weight: float
) -> tuple[float, float, float]:
    totals = np.zeros(3)
    for start in range(0, len(rows), 4096):
        batch = rows[start : start + 4096]
        policy, value, acc, _ = batch_loss(
            params, data, batch, np.ones(len(batch), np.float32), value_weight
        )
        totals += np.array([policy, value, acc]) * len(batch)
    return tuple(float(t) for t in totals / max(1, len(rows)))  # type: ignore[return-value]


def save_checkpoint(path: Path, params: dict[str, F32], adam: Adam, epoch: int) -> None:
    tmp = path.with_suffix(".tmp.npz")
    arrays: dict[str, Any] = {"epoch": np.array(epoch), "t": np.array(adam.t), **params}
    arrays.update({f"m_{k}": v for k, v in adam.m.items()})
    arrays.update({f"v_{k}": v for k, v in adam.v.items()})
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def load_checkpoint(path: Path, params: dict[str, F32], adam: Adam) -> int:
    with np.load(path) as data:
        for k in PARAMS:
            params[k] = data[k]
            adam.m[k] = data[f"m_{k}"]
            adam.v[k] = data[f"v_{k}"]
        adam.t = int(data["t"])
        return int(data["epoch"])


def export(params: dict[str, F32], path: Path) -> None:
    """The shipped weights: float16, no optimizer state."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        arrays: dict[str, Any] = {k: params[k].astype(np.float16) for k in PARAMS}
        np.savez_compressed(handle, **arrays)


def train(
    data: Arrays,
    out: Path,
    epochs: int,
    seed: int,
    hidden: int = 256,
    batch: int = 256,
    lr: float = 1e-3,
    value_weight: float = 0.5,
    holdout: float = 0.05,
    decay: float = 0.0,
    log: bool = True,
    max_steps: int | None = None,
    init: Path | None = None,
) -> dict[str, F32]:
    """Train (or resume) into ``out``; ``init`` starts from another run's weights (a
    checkpoint or an exported file: fine-tuning) instead of random ones."""
    out.mkdir(parents=True, exist_ok=True)
    params = init_params(hidden, seed)
    if init is not None:
        with np.load(init) as start:
            params = {k: start[k].astype(np.float32) for k in PARAMS}
    adam = Adam(params, lr, decay)
    ckpt = out / "checkpoint.npz"
    epoch = load_checkpoint(ckpt, params, adam) if ckpt.exists() else 0
    order = np.random.default_rng(seed).permutation(len(data))
    n_hold = int(len(data) * holdout)
    hold, rows = order[:n_hold], order[n_hold:]
    steps = 0
    while epoch < epochs:
        rng = np.random.default_rng([seed, epoch])
        perm = rows[rng.permutation(len(rows))]
        start_time = time.process_time()
        sums = np.zeros(3)
        count = 0
        for start in range(0, len(perm), batch):
            chunk = perm[start : start + batch]
            policy, value, acc, grads = batch_loss(
                params, data, chunk, data.weight[chunk], value_weight
            )
            adam.step(params, grads)
            sums += np.array([policy, value, acc])
            count += 1
            steps += 1
            if max_steps is not None and steps >= max_steps:
                break
        epoch += 1
        save_checkpoint(ckpt, params, adam, epoch)
        if log:
            held = evaluate(params, data, hold, value_weight) if len(hold) else (0.0, 0.0, 0.0)
            report = {
                "epoch": epoch,
                "train_policy": round(sums[0] / max(1, count), 4),
                "train_value": round(sums[1] / max(1, count), 4),
                "train_acc": round(sums[2] / max(1, count), 4),
                "hold_policy": round(held[0], 4),
                "hold_value": round(held[1], 4),
                "hold_acc": round(held[2], 4),
                "cpu_s": round(time.process_time() - start_time, 1),
            }
            print(json.dumps(report), flush=True)
        if max_steps is not None and steps >= max_steps:
            break
    return params


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--cache", type=Path, default=Path("data/cache"))
    parser.add_argument("--out", type=Path, default=Path("data/ckpt"))
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--value-weight", type=float, default=0.5)
    parser.add_argument("--decay", type=float, default=0.0)
    parser.add_argument("--export", type=Path, default=None)
    parser.add_argument("--init", type=Path, default=None, help="start from these weights")
    parser.add_argument(
        "--level", action="append", default=None,
        help="train on the chunks of these teacher levels only (repeatable)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    data = build(args.data, args.cache, args.level)
    print(f"{len(data)} samples, {N_FEATURES} features", flush=True)
    params = train(
        data, args.out, args.epochs, args.seed, args.hidden, args.batch, args.lr,
        args.value_weight, decay=args.decay, init=args.init,
    )
    if args.export:
        export(params, args.export)
        print(f"exported {args.export}")


if __name__ == "__main__":
    main()
