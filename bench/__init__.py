"""Load benchmark of the bot against the fake Bot API server (``python -m bench.load``).

:mod:`bench.sim` holds what the benchmark and the chaos suite (``tests/chaos``) share: the
real bot in a subprocess (``python -m bot``), a read-only view of its database through the
storage API, and simulated humans who act only by pressing the buttons the bot sent.
"""
