"""Convert the public-domain card scans to the Mini App's assets (run once, by hand).

    python scripts/cards_to_webp.py SCANS_DIR bot/webapp/static/cards

SCANS_DIR holds one folder per deck (napoletane, piacentine, bergamasche, francesi) with
``<number><suit>.jpg`` (1 = Asso … 8 = Fante, 9 = Cavallo/Donna, 10 = Re) and a shared
``back.jpg``. Each card is scaled to HEIGHT pixels (its deck's proportions kept) and saved
as WebP named by the project's card code (``Ad.webp``: the Asso di Denari, see
game/cards.py). Needs Pillow (not a dependency of the project: the converted files are
committed, nothing is converted at run time).
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image

HEIGHT = 300
QUALITY = 78
DECKS = ("napoletane", "piacentine", "bergamasche", "francesi")
#: The scans' numbers -> the project's rank codes (game/cards.py RANK_CODES).
RANKS = {1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "F", 9: "C", 10: "R"}


def convert(source: Path, target: Path) -> None:
    with Image.open(source) as image:
        width = round(image.width * HEIGHT / image.height)
        small = image.convert("RGB").resize((width, HEIGHT), Image.Resampling.LANCZOS)
        small.save(target, "WEBP", quality=QUALITY, method=6)


def main(scans: Path, out: Path) -> None:
    for deck in DECKS:
        (out / deck).mkdir(parents=True, exist_ok=True)
        for number, rank in RANKS.items():
            for suit in "cdsb":
                convert(scans / deck / f"{number}{suit}.jpg", out / deck / f"{rank}{suit}.webp")
    convert(scans / "back.jpg", out / "back.webp")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
