"""``python -m bot.ratings rebuild [--check] [--database-url URL]``: recompute every
rating from the stored results (see :mod:`bot.ratings.rebuild`).

``--check`` changes nothing and exits 1 if the stored ratings differ from the recomputed
ones. ``backfill`` rates, once, the matches finished before ratings existed. Each
refuses, exit 2, while a match is being played (backfill also once units are rated)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from bot.ratings.rebuild import AlreadyRated, Busy, backfill, rebuild
from storage import open_database


async def _backfill(url: str) -> int:
    db = await open_database(url)
    try:
        count = await backfill(db)
    except (Busy, AlreadyRated) as exc:
        print(f"backfill refused: {exc}", file=sys.stderr)
        return 2
    finally:
        await db.close()
    print(f"ratings: {count} unit(s) rated from the matches played before")
    return 0


async def _run(url: str, check: bool) -> int:
    db = await open_database(url)
    try:
        found = await rebuild(db, write=not check)
    except Busy as exc:
        print(f"rebuild refused: {exc}", file=sys.stderr)
        return 2
    finally:
        await db.close()
    for difference in found[:20]:
        print(f"{difference.what}: stored {difference.stored}, "
              f"recomputed {difference.rebuilt}")
    if len(found) > 20:
        print(f"... and {len(found) - 20} more")
    if check:
        print("ratings: the same as recomputed" if not found
              else f"ratings: {len(found)} difference(s) from the recomputed ones")
        return 1 if found else 0
    print(f"ratings rebuilt: {len(found)} value(s) changed")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.ratings", description=__doc__)
    parser.add_argument("command", choices=["rebuild", "backfill"])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if the stored ratings differ")
    parser.add_argument("--database-url",
                        default=os.environ.get("DATABASE_URL", "sqlite:///briscola.db"),
                        help="the bot's database (default: $DATABASE_URL or the bot's)")
    args = parser.parse_args(argv)
    if args.command == "backfill":
        return asyncio.run(_backfill(args.database_url))
    return asyncio.run(_run(args.database_url, args.check))


if __name__ == "__main__":
    sys.exit(main())
