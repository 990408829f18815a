"""Compact callback data (≤ 64 bytes, ASCII), built and parsed in one place.

Forms (``gid`` = game id, ``v`` = game version the button was drawn for):

* ``a:gid:v:code``     apply the game action ``code`` (e.g. ``a:12:7:cAd``)
* ``q:gid:v:code``     ask to confirm a costly action (shows a confirm keyboard)
* ``p:gid:v:pre:n``    points picker for a 2-level call, ``pre`` = ``t`` or ``o<rank>``, or
                       ``n`` for a point call of the a punti auction
* ``x:gid:v``          back from a confirmation / picker to the normal keyboard
* ``h:gid:smz:code``   a private-only call of the auction drawn for the whole smazzata
                       ``smz`` (not one version): ``o<rank>`` (obbligato: opens the
                       points picker at the player's turn) or ``M`` (monte: opens its
                       confirmation); see :mod:`bot.features.auction`
* ``l:gid:op``         lobby button: ``join``, ``leave``, ``cpu``, ``go``, ``set``,
                       ``fill-<level>`` (a private lobby: computers in every free seat)
* ``s:op[:arg[:val]]`` settings menu of the chat the message is in
* ``k:gid:op``         /annulla confirmation (``y``/``n``)
* ``b:gid``            "I am back" after AFK
* ``r:gid:op``         rivincita: ``go`` (a finished match's last message), ``ok`` (a
                       person of that match confirms their seat in its lobby)

Everything parsed here is re-validated against the stored state by the service.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_BYTES = 64
_SAFE = re.compile(r"^[A-Za-z0-9_.\-]{1,16}$")
#: Ids and versions: plain ASCII digits that fit SQLite's signed 64-bit integers.
_NUMBER = re.compile(r"^[0-9]{1,18}$")


class BadCallback(ValueError):
    """Malformed or forged callback data."""


@dataclass(frozen=True, slots=True)
class Callback:
    kind: str
    game_id: int = 0
    version: int = -1
    parts: tuple[str, ...] = ()
    #: The smazzata a ``h:`` button was drawn for (-1 for the other kinds).
    smazzata: int = -1


def _check(data: str) -> str:
    if not data.isascii() or len(data) > MAX_BYTES:
        raise ValueError(f"callback data too long or not ASCII: {data!r}")
    return data


def action(game_id: int, version: int, code: str) -> str:
    return _check(f"a:{game_id}:{version}:{code}")


def confirm(game_id: int, version: int, code: str) -> str:
    return _check(f"q:{game_id}:{version}:{code}")


def picker(game_id: int, version: int, prefix: str, points: int) -> str:
    return _check(f"p:{game_id}:{version}:{prefix}:{points}")


def back(game_id: int, version: int) -> str:
    return _check(f"x:{game_id}:{version}")


def hand_call(game_id: int, smazzata: int, code: str) -> str:
    return _check(f"h:{game_id}:{smazzata}:{code}")


def lobby(game_id: int, op: str) -> str:
    return _check(f"l:{game_id}:{op}")


def settings(*parts: str) -> str:
    return _check(":".join(("s", *parts)))


def cancel(game_id: int, op: str) -> str:
    return _check(f"k:{game_id}:{op}")


def im_back(game_id: int) -> str:
    return _check(f"b:{game_id}")


def rematch(game_id: int, op: str) -> str:
    return _check(f"r:{game_id}:{op}")


_ARITY = {"a": 2, "q": 2, "p": 3, "x": 1, "h": 2, "l": 1, "k": 1, "b": 0, "r": 1}


def parse(data: str | None) -> Callback:
    """Parse callback data; raise :class:`BadCallback` for anything unexpected."""
    # isascii() first: forged data may hold lone surrogates that cannot even be encoded.
    if not data or not data.isascii() or len(data) > MAX_BYTES:
        raise BadCallback(repr(data)[:80])
    head, *rest = data.split(":")
    if head == "s":
        if not 1 <= len(rest) <= 3 or not all(_SAFE.match(p) for p in rest):
            raise BadCallback(data)
        return Callback("s", parts=tuple(rest))
    if head not in _ARITY or not rest:
        raise BadCallback(data)
    if not _NUMBER.match(rest[0]):
        raise BadCallback(data)
    game_id = int(rest[0])
    rest = rest[1:]
    version = smazzata = -1
    counted = head in ("a", "q", "p", "x", "h")  # a version (a smazzata for ``h``) next
    if counted:
        if not rest or not _NUMBER.match(rest[0]):
            raise BadCallback(data)
        if head == "h":
            smazzata = int(rest[0])
        else:
            version = int(rest[0])
        rest = rest[1:]
    if len(rest) != _ARITY[head] - (1 if counted else 0):
        raise BadCallback(data)
    if not all(_SAFE.match(p) for p in rest) or game_id <= 0:
        raise BadCallback(data)
    return Callback(head, game_id, version, tuple(rest), smazzata)
