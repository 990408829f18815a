"""Ratings (issue 48): a Weng-Lin rating per player, per chat, per family of games.

:mod:`bot.ratings.model` is the pure part (who plays against whom in a rated unit, the
update, the number shown); :mod:`bot.ratings.live` rates a unit in the move's transaction;
:mod:`bot.ratings.rebuild` recomputes every rating from the stored results
(``python -m bot.ratings rebuild``).
"""
