"""The ratings' texts: the change on a result sheet, ``/classifica rating``, the lines of
``/statistiche`` and of the inline "my rating". Pure builders."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.i18n import tr, trn
from bot.ratings import model
from bot.render.texts import clip, esc
from storage.ratings import RatingRow, RatingSeat

#: The families in display order.
FAMILIES = model.FAMILIES


def signed_change(n: int) -> str:
    return f"+{n}" if n > 0 else (f"−{-n}" if n < 0 else "±0")


def player_name(lang: str, key: str, name: str = "") -> str:
    """A player's name as shown: a person's own, a computer's level, il morto."""
    if key == model.MORTO:
        return tr(lang, "rating.morto")
    if key.startswith("cpu:"):
        level = key.partition(":")[2]
        return tr(lang, "rating.computer", level=tr(lang, f"level.{level}"))
    return esc(name) if name else "?"


def change_lines(lang: str, seats: Sequence[RatingSeat], names: Sequence[str]) -> list[str]:
    """The rating change of each player of a rated unit, in seat order (a computer level
    on several seats once)."""
    lines = [tr(lang, "rating.changes")]
    seen: set[str] = set()
    for seat in seats:
        if seat.player in seen:
            continue
        seen.add(seat.player)
        name = names[seat.seat] if seat.seat < len(names) else ""
        after = model.shown(seat.mu, seat.sigma)
        change = after - model.shown(seat.mu_before, seat.sigma_before)
        lines.append(tr(lang, "rating.change_line", name=player_name(lang, seat.player, name),
                        rating=after, change=signed_change(change)))
    return lines


def with_changes(lang: str, result: str, seats: Sequence[RatingSeat],
                 names: Sequence[str]) -> str:
    """A result sheet with the rating changes of the unit it ended: after the scores,
    before "next smazzata" (if the sheet ends with it)."""
    block = "\n".join(change_lines(lang, seats, names))
    after = "\n\n" + tr(lang, "result.next")
    if result.endswith(after):
        return clip(result[: -len(after)] + "\n\n" + block + after)
    return clip(result + "\n\n" + block)


def match_lines(lang: str, units: Sequence[Sequence[RatingSeat]],
                names: Sequence[str]) -> list[str]:
    """The rating changes of a whole match, over its rated units in order: each player's
    rating after the last unit, and the sum of the changes shown on the unit's sheets
    (a computer level met at another table of the chat meanwhile is not counted); none
    if no unit was rated."""
    order: list[str] = []
    name_of: dict[str, str] = {}
    rating: dict[str, int] = {}
    change: dict[str, int] = {}
    for seats in units:
        seen: set[str] = set()  # (a computer level on several seats: once per unit)
        for seat in seats:
            if seat.player in seen:
                continue
            seen.add(seat.player)
            if seat.player not in rating:
                order.append(seat.player)
                name_of[seat.player] = names[seat.seat] if seat.seat < len(names) else ""
                change[seat.player] = 0
            after = model.shown(seat.mu, seat.sigma)
            rating[seat.player] = after
            change[seat.player] += after - model.shown(seat.mu_before, seat.sigma_before)
    if not order:
        return []
    return [tr(lang, "rating.match_changes"), *(
        tr(lang, "rating.change_line", name=player_name(lang, key, name_of[key]),
           rating=rating[key], change=signed_change(change[key])) for key in order)]


def with_match_changes(lang: str, final: str, units: Sequence[Sequence[RatingSeat]],
                       names: Sequence[str]) -> str:
    """The final scores with the match's rating changes, before their last line (what
    next: 🔁 Rivincita, /nuova)."""
    lines = match_lines(lang, units, names)
    if not lines:
        return final
    head, _, last = final.rpartition("\n")
    return clip("\n".join([head, "", *lines, "", last]) if head else final + "\n\n" +
                "\n".join(lines))


def board_text(lang: str, boards: Mapping[str, Sequence[RatingRow]]) -> str:
    """``/classifica rating``: one table per family that has ratings in the chat."""
    if not any(boards.values()):
        return tr(lang, "rating.board_empty")
    lines = [tr(lang, "rating.board_head")]
    for family in FAMILIES:
        rows = boards.get(family) or ()
        if not rows:
            continue
        lines += ["", tr(lang, "rating.board_family",
                         family=tr(lang, f"rating.family.{family}"))]
        position, previous = 0, None
        for index, row in enumerate(rows, 1):
            rating = model.shown(row.mu, row.sigma)
            if rating != previous:
                position, previous = index, rating
            units = trn(lang, "n.smazzate" if family == "chiamata" else "n.matches", row.units)
            lines.append(tr(lang, "rating.board_line", pos=position,
                            name=player_name(lang, row.player, row.display_name),
                            rating=rating, units=units))
    lines += ["", tr(lang, "rating.board_note")]
    return clip("\n".join(lines))


def stats_lines(
    lang: str, rows: Sequence[RatingRow], last: Mapping[tuple[int, str], RatingSeat],
    chat_id: int,
) -> list[str]:
    """``/statistiche``: the player's ratings in ``chat_id`` (a group, or their private
    chat), with the change of the last unit."""
    lines = []
    for family in FAMILIES:
        row = next((r for r in rows if r.chat_id == chat_id and r.family == family), None)
        if row is None:
            continue
        rating = model.shown(row.mu, row.sigma)
        seat = last.get((chat_id, family))
        change = 0 if seat is None else \
            model.shown(seat.mu, seat.sigma) - model.shown(seat.mu_before, seat.sigma_before)
        lines.append(tr(lang, "rating.stats_line", family=tr(lang, f"rating.family.{family}"),
                        rating=rating, change=signed_change(change)))
    return lines


def _best(rows: Sequence[RatingRow], user_id: int) -> dict[str, tuple[int | None, int, int | None]]:
    """Per family: (best rating in a group, groups, rating alone) of one person."""
    found: dict[str, tuple[int | None, int, int | None]] = {}
    for family in FAMILIES:
        groups = [model.shown(r.mu, r.sigma) for r in rows
                  if r.family == family and r.chat_id != user_id]
        alone = next((model.shown(r.mu, r.sigma) for r in rows
                      if r.family == family and r.chat_id == user_id), None)
        if groups or alone is not None:
            found[family] = (max(groups) if groups else None, len(groups), alone)
    return found


def inline_rating_text(lang: str, name: str, rows: Sequence[RatingRow], user_id: int) -> str:
    """The inline "my rating" message: per family, the best of the person's groups and
    the one alone against the computers (their private chat's id is their user id)."""
    best = _best(rows, user_id)
    lines = [tr(lang, "inline.rating_head", name=esc(name))]
    if not best:
        lines.append(tr(lang, "inline.rating_none"))
    for family, (group, count, alone) in best.items():
        parts = []
        if group is not None:
            parts.append(trn(lang, "inline.rating_groups", count, rating=group))
        if alone is not None:
            parts.append(tr(lang, "inline.rating_alone", rating=alone))
        lines.append(tr(lang, "inline.rating_line", family=tr(lang, f"rating.family.{family}"),
                        ratings=", ".join(parts)))
    return clip("\n".join(lines))


def inline_rating_summary(lang: str, rows: Sequence[RatingRow], user_id: int) -> str:
    """The description under the inline result's title (one short line)."""
    best = _best(rows, user_id)
    if not best:
        return tr(lang, "inline.rating_none")
    return " · ".join(
        f"{tr(lang, f'rating.family.{family}')} "
        f"{group if group is not None else alone}"
        for family, (group, _, alone) in best.items()
    )
