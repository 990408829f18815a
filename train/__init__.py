"""Training of the network player (:mod:`game.players.net`): data generation, training.

Not part of the bot: it writes files (data chunks, checkpoints) and is run by hand
(README, "The network player"). It needs numpy only; ``pip install -e '.[train]'``.
"""
