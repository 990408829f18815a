"""The ``campione`` player: ``esperto`` with exact endgames, rollouts that end exactly and
inference in plain Briscola.

In chiamata (every variant) it plays as ``esperto`` (:mod:`game.players.expert`). In
three-player Briscola it searches 200 sampled deals (``esperto``: 60), each rollout
ending with its last two tricks played as every seat taking the most for itself
(``THREE_SEARCH``, :func:`game.players.endgame.last_tricks_three`). With four players
its rollouts are played by the policy below (``FOUR_WEIGHTS``). In plain Briscola
with two (and, for the endgame, four) players it adds:

* *Exact endgames* (:mod:`game.players.endgame`). Two players with at most
  ``EXACT_STOCK`` (4) cards left to draw: every hand the opponent can hold is
  enumerated (20 at 4 cards to draw, 4 at 2, 1 once the stock is empty), each weighted
  by the opponent model below, and in each the rest of the smazzata is solved by
  expectimax with the stock's order a chance node (neither player knows it: after each
  trick every pair of hidden cards is drawn with the same chance, the face-up card goes
  last), exact minimax over the cards played and the last tricks
  (:class:`game.players.endgame.DrawSolver`); the card with the best weighted outcome is
  played. Four players after the last draw (R107): the partner's hand is known, and
  each way the two opponents can split the unseen cards is solved
  (:func:`game.players.endgame.card_values`).
* *Rollouts that end exactly* (two players). In the middle game it plays each card on
  ``worlds`` sampled deals (``esperto``: 60) and finishes the smazzata with a policy for
  every seat, as ``esperto`` does, but only until the stock is empty: from there both
  hands are known (to the players too), and the last tricks are played exactly
  (:func:`game.players.endgame.last_tricks`, remembered across the deals of a
  decision). (In fact from the second trick after the last draw: the trick after it
  is still the policy's, ``docs/strongest.md``, measurement 9's note.) The rule-based
  policy throws away about three quarters of the last tricks' points against
  ``esperto`` (``python -m game.audit``), so ending rollouts with it misjudges every
  card that keeps a trump or a carico for the end.
* *A stronger rollout policy* (two players, ``ROLLOUT_WEIGHTS``): until the stock is
  empty the rollouts are played by the chiamata players' policy
  (:func:`game.players.briscola.policy_card`: it counts the unseen cards to judge who
  takes a trick, from each seat's own knowledge), not by ``esperto``'s rule-based one
  (:func:`game.players.briscola.choose_card`). Played against each other, both with
  the exact last tricks, on 10,000 duplicate deals (20,000 smazzate, a fresh seed): the
  policy with trump power 1.5 scores 0.571 (0.565..0.578) and +4.5 card points a game
  against the rule-based one, 0.518 (0.512..0.524) against the policy's default weights
  (the weights were chosen on another seed). The opponent model below reads the
  opponent with its own play model and the rule-based card, not with this policy.
* *Inference* (two players, :class:`OpponentModel`): ``CANDIDATES`` times more deals
  are drawn than played out, each weighted by how likely the opponent's plays of the
  smazzata (the last ``INFERENCE_DEPTH``: all of them) are from the hand it had in that
  deal. Two kinds of opponent are weighed, half and half: one that plays as a
  conditional-logit model of Briscola players says (:mod:`game.players.playmodel`: 26
  features of each card of its hand from what it knew then, such as the points, a
  trump's strength, taking the trick, the cheapest card that takes it, what the unseen
  cards would take, the cards left to draw; fitted by maximum likelihood on the plays
  of ``esperto``, ``forte``, ``normale`` and ``campione``, ``python -m
  game.players.playfit``), and one that plays the rule-based card with probability
  ``MATCH``, any other the rest. The hand each play came from is rebuilt backwards
  from today's (the card drawn after each trick is any of them). An opponent that let
  a carico through probably had nothing cheap to take it with; one that led a trump
  probably had no liscio. The exact endgames weight their worlds the same way.
* *Inference by the learned policy* (two players, issue 49, on: ``NET_INFERENCE``;
  ``campione-classico`` of :mod:`game.players.classic` plays without it;
  :class:`game.players.netinfer.NetOpponent`): a third kind of opponent, one that plays
  as the network of :mod:`game.players.net` says (trained on the search levels' play),
  read over the opponent's last ``NET_DEPTH`` (8) plays from the views it had then,
  rebuilt from the public record. A deal's weight is ``(1 − NET_SHARE)`` times the two
  kinds' above plus ``NET_SHARE`` (0.8) times the network's (:func:`likelihoods`). On
  esperto's games it places the opponent's hidden cards better than the two kinds alone
  (cross-entropy a card 0.3444 against 0.3544, uniform deals 0.3707; the looks and the
  measurements are in ``docs/strongest.md``). The answers to a lead (below) still read
  the two kinds only.

* *The answer to a lead* (two players, leading in the middle game, the ``answers`` of
  :func:`game.players.briscola.search_code`): in each deal the opponent's answer to each
  card is taken in expectation over the opponent model's chances
  (:meth:`game.players.opponent.OpponentModel.reply_chances`: the play model's and the
  rule-based card's, mixed by how likely each kind is given the opponent's plays so far
  from the hand it holds in that deal; answers below ``REPLY_FLOOR`` left out), each
  line then finished by the rollouts, not the rollout policy's single answer.

The outcome of a line is ``esperto``'s: +1 for a smazzata won, −1 lost, 0 patta, plus
0.01 per card point of its side.

*Measured*, this version (commit 2bf702b: the answer to a lead weighed by the opponent
model, on the compiled opponent model), 1,000 fresh duplicate deals = 2,000 games, seed
3591 fixed before the run (``/work/coord/runs34h/final-seed.txt``), from a snapshot of
the commit, 2 jobs at nice 19, 04:09-04:51 UTC (42 minutes; for its first 12 minutes a
third process of mine beside it, stopped), load 2.6 at the start and 2.0 at the end::

    python -m game.arena --cpu-clock --deals 1000 --seed 3591 --a campione --b esperto \
        --option game=briscola --option players=2 --jobs 2 --progress 100

    wins-draws-losses 1285-42-673, score (draw 1/2) 0.653 (0.633..0.673),
    card points a game +10.53 (+9.31..+11.76); decision mean 94 ms, p95 214 ms
    (esperto 13 ms, 28 ms)

At the issue's target (0.65) on its point estimate, for the first time in one run; the
interval (0.633..0.673) includes the previous version's 0.642 (two runs, seeds 3580 and
3583). Before the run, the only screen was 150 duplicate deals head to head against
the same player without the answers (``runs34h/h2h.py 150 4100``, 03:55-04:09 UTC, load
0.1-3.9): 154-4-142, 0.520 (0.470..0.570), card points -0.40 (-3.05..+2.25), neutral;
the rule to keep it at 0.520 or more was written before that screen ended. So the gain
over the previous version (+0.011 on these figures) is not established; one run.

A second run of the same snapshot on 1,000 other duplicate deals (``--seed 3595``, fixed
before it with the rule that the target counts as met only if the two runs together score
0.65 or more, ``/work/coord/runs34i/rule.txt``; the rest as above; 05:01-05:59 UTC, load
1.9 at the start and 2.1 at the end, a test suite beside it for its first 26 minutes)::

    wins-draws-losses 1275-52-673, score (draw 1/2) 0.650 (0.631..0.670),
    card points a game +9.91 (+8.73..+11.09); decision mean 102 ms, p95 226 ms
    (esperto 14 ms, 30 ms)

The two runs together, 4,000 games: 2560-94-1346, 0.652 (about 0.638..0.666), +10.22
card points a game (about +9.4..+11.1): at the issue's two-player target on the point
estimate; the gain over the version before (0.642, 4,000 games) is +0.010, not established.

Two later runs of the same play (commit 8de59e2: the same decisions, the sampler's
shuffles compiled) on fresh deals, 2 jobs at nice 19: a p95 check, ``--deals 100 --seed
3614`` (12:45-12:49 UTC on 2026-11-28, load 1.9): 111-7-82, 0.573 (0.509..0.636), +6.86
(+2.92..+10.80), p95 232 ms; and, because that one fell below the two runs above, a
third 2,000-game run, ``--deals 1000 --seed 3620`` (12:54-13:38 UTC, load 2.0, a test
suite beside it for its first 13 minutes), with the rule fixed before it
(``/work/coord/runs34k/rule.txt``) that the target counts as met only if every fresh run
of this play together scores 0.65 or more::

    wins-draws-losses 1238-46-716, score (draw 1/2) 0.630 (0.610..0.651),
    card points a game +8.62 (+7.39..+9.85); decision mean 96 ms, p95 227 ms
    (esperto 13 ms, 29 ms)

All four runs together (seeds 3591, 3595, 3614, 3620), 6,200 games: 3909-147-2144,
**0.642** (about 0.630..0.654), +9.6 card points a game: just below the issue's 0.65, so
the two-player target is not met; the first two runs were at the upper end.

The audit of this play (``python -m game.audit --deals 150 --seed 3600 --a campione --b
esperto --players 2 --jobs 2``, 300 games, 2026-11-28), a smazzata of one side, campione
against esperto: carichi the opponent led, taken 72.1% (esperto 47.5%); own carichi
lost 9.6 card points (14.3); points from its own leads 25.4 (20.1); trumps played 5.1
for 31.6 points (4.9 for 25.6); points while there is a stock 52.3 (47.3), in the last
tricks 13.1 (7.2).

Against the lower levels, this version and ``esperto`` on the same 100 duplicate deals
(200 games each; ``--deals 100 --seed 3592 --b forte``, ``--seed 3593 --b normale``,
seeds fixed before the runs, ``--jobs 2``, the rest as above without ``--progress``, from
the same snapshot, 04:57-05:12 UTC, load 0.0-4.0 with another developer's work
beside them)::

    against   player    wins-draws-losses  score (draw 1/2)     card points a game
    forte     campione  127-4-69           0.645 (0.589..0.701)  +11.55 (+8.16..+14.94)
    forte     esperto   100-2-98           0.505 (0.439..0.571)  +0.30 (-3.66..+4.26)
    normale   campione  138-5-57           0.703 (0.644..0.761)  +12.49 (+9.03..+15.95)
    normale   esperto   137-1-62           0.688 (0.627..0.748)  +10.73 (+6.81..+14.65)

(campione's decision p95 224 ms against forte, 208 ms against normale.)

*Measured*, the version before (commit eab5ac0: the play model in the opponent model, every
play of the smazzata read; its own figures under "The opponent model" below), 1,000
fresh duplicate deals = 2,000 games, seed fixed before the run, from a snapshot of the
commit, 2 jobs at nice 19, 00:26-01:04 UTC (38 minutes), load 0.7 at the start and 2.0
at the end::

    python -m game.arena --cpu-clock --deals 1000 --seed 3580 --a campione --b esperto \
        --option game=briscola --option players=2 --jobs 2 --progress 100

    wins-draws-losses 1262-45-693, score (draw 1/2) 0.642 (0.623..0.662),
    card points a game +9.91 (+8.78..+11.04); decision mean 98 ms, p95 168 ms
    (esperto 14 ms, 29 ms)

Against the version before it on other deals, 0.637 (seed 3520) and 0.626 (seed
3462), and the lead correction's 0.637 (seed 3570, below): +0.005 to +0.016, within
one run's noise (+-0.02), at about twice the decision time. Still below 0.65, the
issue's target. A second run of the same snapshot on 1,000 other duplicate deals
(``--seed 3583``, fixed before it, the rest as above; 01:08-01:56 UTC, load 2.5 at the
start and 1.9 at the end, the test suite and the runs below beside it for its first 17
minutes)::

    wins-draws-losses 1258-51-691, score (draw 1/2) 0.642 (0.622..0.662),
    card points a game +9.87 (+8.71..+11.03); decision mean 96 ms, p95 167 ms
    (esperto 13 ms, 29 ms)

The two runs together, 4,000 games: 2520-96-1384, 0.642 (about 0.628..0.656), +9.89
card points a game (about +9.1..+10.7); the version before, its two runs together,
0.632 and +8.6: +0.011 (about -0.009..+0.031), not established.

Against the lower levels, this version and ``esperto`` on the same 100 duplicate deals
(200 games each; ``--deals 100 --seed 3581 --b forte``, ``--seed 3582 --b normale``,
seeds fixed before the runs, the rest as above without ``--progress``, from the same
snapshot, 01:05-01:26 UTC, load 0.6-5.5 with the test suite beside them)::

    against   player    wins-draws-losses  score (draw 1/2)     card points a game
    forte     campione  125-6-69           0.640 (0.584..0.696)  +10.59 (+7.34..+13.84)
    forte     esperto   112-5-83           0.573 (0.512..0.633)  +3.48 (-0.58..+7.54)
    normale   campione  143-2-55           0.720 (0.658..0.782)  +13.97 (+10.17..+17.77)
    normale   esperto   131-7-62           0.672 (0.609..0.736)  +10.02 (+5.66..+14.38)

*Measured*, the version before (commit ed119c4: the policy's rollouts), the same 1,000
duplicate deals = 2,000 games as the previous version's run below, seed fixed before
the run, 2 jobs at nice 19, 46 minutes, load 5.3 at the start and 2.4 at the end::

    python -m game.arena --deals 1000 --seed 3462 --a campione --b esperto \
        --option game=briscola --option players=2 --jobs 2 --cpu-clock

    wins-draws-losses 1226-51-723, score (draw 1/2) 0.626 (0.606..0.645),
    card points a game +8.18 (+7.02..+9.34); decision mean 72 ms, p95 158 ms
    (esperto 21 ms, 44 ms)

On the same deals the previous version scored 0.601 and +7.15 (below): +0.025 and
+1.0 card point a game; paired by the twenty 50-deal blocks of the two runs'
``--progress`` reports, +0.025 (-0.005..+0.055) and +1.0 (-0.8..+2.9), so likely but not
established at 95%; head
to head against the previous version, 100 duplicate deals (200 games, seed 3470):
0.562 (0.493..0.632), +3.9 card points a game (+0.5..+7.3). Still below 0.65, the
issue's target. The same play on 1,000 fresh duplicate deals (2,000 games, ``--seed
3520``, fixed before the run, with ``briscola`` and ``endgame`` compiled: the same
decisions, faster; 2 jobs at nice 19, 40 minutes, load 1.7 at the start and 2.5 at the
end)::

    wins-draws-losses 1245-57-698, score (draw 1/2) 0.637 (0.617..0.657),
    card points a game +9.03 (+7.88..+10.17); decision mean 44 ms, p95 99 ms
    (esperto 13 ms, 29 ms)

The previous version (commit 4859e73), 1,000 duplicate deals = 2,000 games, seed
fixed before the run, 2 jobs at nice 19, 69 minutes, load 3.1 at the start and 2.8 at
the end::

    python -m game.arena --deals 1000 --seed 3462 --a campione --b esperto \
        --option game=briscola --option players=2 --jobs 2 --cpu-clock

    wins-draws-losses 1180-44-776, score (draw 1/2) 0.601 (0.581..0.621),
    card points a game +7.15 (+5.93..+8.37); decision mean 72 ms, p95 156 ms
    (esperto 20 ms, 42 ms)

No better than the previous version's 0.615 (0.587..0.643) over 1,000 games on other
deals: the exact endgame from 4 cards and the deeper inference did not measurably raise
the score (below 0.65, the issue's target).

*Measured* on the previous version (exact endgames from 2 cards to draw, one stock
order a world; commit 7fc15b5), two-player Briscola, duplicate deals both ways, one job
at nice 19 on a machine shared with other work; decision times in CPU seconds::

    python -m game.arena --deals 200 --seed 341 --a campione --b esperto \
        --option game=briscola --option players=2 --jobs 1 --cpu-clock

    against   deals  wins-draws-losses  score (draw 1/2)     card points a game
    esperto   200    244-10-146         0.623 (0.580..0.665)  +8.47 (+6.00..+10.94)
    forte     50     63-2-35            0.640 (0.562..0.718)  +12.06 (+6.86..+17.26)
    normale   50     74-1-25            0.745 (0.652..0.838)  +16.26 (+10.01..+22.51)

A second run against ``esperto`` on fresh deals (``--seed 345``, stopped at 300 deals
by the session's deadline, its ``--progress`` report): 355-22-223, 0.610
(0.573..0.647), +6.17 card points (+3.97..+8.36); the 500 deals together 0.615
(0.587..0.643), +7.09 (+5.44..+8.74). (``--seed 342`` against ``forte``, ``--seed 343``
against ``normale``.) Four-player Briscola against ``esperto``, 800 duplicate deals
(``--deals 800 --seed 3502 --option game=briscola --option players=4 --jobs 2
--cpu-clock``, the version with the policy's rollouts, which are two-player only):
+2.97 (+2.11..+3.83) card points a smazzata for the pair over an even share, 884-28-688,
0.561 (0.540..0.583), p95 155 ms. An earlier version, four-player
Briscola, 30 deals (``--seed 344 --option players=4``): 34-0-26, 0.567 (0.454..0.679),
+11.23 card points a game for the pair (+3.36..+19.11), p95 146 ms. On the same
deals ``esperto`` scored 0.460 (0.374..0.546; −1.88 card points) against ``forte`` and
0.660 (0.573..0.747; +10.22) against ``normale``. ``campione`` decides in 86 ms on
average, p95 169 ms (``esperto`` 20 ms, 42 ms). Before the inference (exact endgames and
rollouts only), the first 50 of the 200 deals against ``esperto`` gave 0.545
(0.451..0.639, +1.56 card points); with it, 0.660 (0.585..0.735, +7.58).

Against the lower levels, the version before this one and ``esperto`` on the same 100
duplicate deals
(200 games each; ``--deals 100 --seed 3542 --b forte``, ``--seed 3543 --b normale``, the
rest as above, 17:32-17:37 UTC, load 2.1-3.2)::

    against   player    wins-draws-losses  score (draw 1/2)     card points a game
    forte     campione  126-5-69           0.642 (0.573..0.712)  +10.14 (+6.08..+14.20)
    forte     esperto   93-2-105           0.470 (0.402..0.538)  -0.75 (-4.10..+2.60)
    normale   campione  132-7-61           0.677 (0.617..0.738)  +11.66 (+7.67..+15.65)
    normale   esperto   123-11-66          0.642 (0.575..0.710)  +6.78 (+2.16..+11.40)

*Tried and not kept* (branch i34e): spending the two-player decision-time headroom on
300 sampled deals (not 200) drawn from 4 inference candidates each (not 3), the rest
as above (commit 785b498, reverted). Decision p95 153 ms of CPU (mean 68 ms), 1.5 times
today's, and no better: on 1,000 fresh duplicate deals (2,000 games, ``--seed 3541``,
fixed before the run; 2 jobs at nice 19, 42 minutes, 16:50-17:32 UTC, load 3.3 at the
start and 3.5 at the end, another developer's benchmark beside it)::

    python -m game.arena --cpu-clock --deals 1000 --seed 3541 --a campione --b esperto \
        --option game=briscola --option players=2 --jobs 2 --progress 100

    wins-draws-losses 1214-52-734, score (draw 1/2) 0.620 (0.600..0.640),
    card points a game +8.68 (+7.49..+9.88); decision mean 68 ms, p95 153 ms
    (esperto 13 ms, 29 ms)

against today's 0.637 (seed 3520) and 0.626 (seed 3462) on other deals. On the first
200 deals of seed 3520 the same version scored 0.675 (today's 0.660), and 400 deals a
decision with 3 candidates 0.655 (a tuning script outside the repository); paired deal
by deal there, two versions' scores differ with a standard deviation of 0.42 a deal,
more than one version's own spread (0.34): the games part after a few different cards,
so pairing on the same deals does not narrow the comparison, and telling a +0.015
change apart needs several thousand deals. More sampled deals did not measurably help.

*Tried and not kept* (branch i34f): the rollouts' leads corrected by a linear function
of ten features of the card led, fitted to this player's own search values on the
middle-game leads of 400 ``esperto`` self-play deals (expert iteration, one round;
commit 184974d, with its fitting tool ``game/players/leadfit.py``, reverted). The
rollout player got stronger: corrected against uncorrected policy 0.533 (+-0.005), +2.2
card points a game over 10,000 duplicate deals. The searching player did not: on 1,000
fresh duplicate deals (2,000 games, ``--seed 3570``, fixed before the run; 2 jobs at
nice 19, 21:47-22:48 UTC with a 27-minute pause, load 1.6-3.0), the same command as
above::

    wins-draws-losses 1248-51-701, score (draw 1/2) 0.637 (0.617..0.657),
    card points a game +9.79 (+8.58..+11.00); decision mean 67 ms, p95 155 ms
    (esperto 14 ms, 29 ms)

the same score as today's, at 1.5 times its decision time (p95 108 -> 166 ms on 114
fixed positions).

*The opponent model* (branch i34g). The play model, judged on the plays of games it
was not fitted on (``python -m game.players.playfit --games 60 --seed 8000 --jobs 2``:
10,260 plays fitted, 10,260 judged), log-likelihood a play, against the previous
model (the rule-based card with probability 0.9) and a uniform choice::

    player     model    previous  uniform
    campione   -0.930   -1.647    -1.077
    esperto    -0.907   -1.469    -1.077
    forte      -0.921   -1.493    -1.077
    normale    -0.489   -0.105    -1.077

The searching players play the rule-based card about half the time, so the previous
model was worse than a uniform guess about them; the rule-based ``normale`` is what it
fits. The mixture of the two reads both. Judged on how the 200 deals of a decision
place the opponent's hidden cards, on 260 held-out middle-game positions (stock > 4, at
least 2 tricks played) of 10 games of each opponent against itself (game seeds
60000-60009, chosen on others), against the previous model (depth 4, 0.9): the share
of its real hidden cards the deals put in its hand (placement, which rewards
concentrated deals), the mean log-probability they give each of them, and the Brier
score over the unseen cards (lower is better; the last two reward calibrated deals),
differences with their standard errors::

    opponent  model     placement        log-prob         Brier
    esperto   previous  0.1829           -2.230           0.1265
              this      0.1865 (+0.0035  -1.977 (+0.254   0.1198 (-0.0068
                                 +-0.0038)        +-0.035)         +-0.0015)
              uniform   0.1533           -1.994           0.1245
    forte     previous  0.1772           -2.278           0.1291
              this      0.1745 (-0.0027  -2.012 (+0.266   0.1222 (-0.0069
                                 +-0.0033)        +-0.035)         +-0.0012)
              uniform   0.1529           -2.000           0.1245
    normale   previous  0.2413           -1.623           0.1087
              this      0.2501 (+0.0088  -1.615 (+0.008   0.1064 (-0.0023
                                 +-0.0030)        +-0.010)         +-0.0008)
              uniform   0.1551           -1.981           0.1239

(``/work/coord/runs34g/placement.py``, 00:06-00:08 UTC, load 1.1-2.2; depth, share
and ``MATCH`` were chosen on seeds 30000 and 40000-50000.) Calibrated deals against
every opponent (the previous model's were worse than uniform ones against ``esperto``
and ``forte``), at least as concentrated. The inference costs more: 96 ms a decision
of CPU (p95 135 ms) against 22 ms (39 ms); campione's decisions on 114 fixed
two-player positions, CPU time: mean 99 ms, p95 163 ms, max 210 ms, 27 of them a
different card (with the previous model's depth 4 and no play model: 49 ms, 96 ms;
``runs34g/timing.py``, 00:25 UTC, load 1.4-1.6).

*Compiled* (branch i34h): the opponent model moved to :mod:`game.players.opponent`,
compiled by mypyc with :mod:`game.players.playmodel` (setup.py; the play model's cards
that take the trick are found once a hand, not once a card). The same card on each of
the 114 fixed two-player positions of ``runs34g/timing.py``; CPU time a decision, mean
108 -> 72 ms, p95 167 -> 116 ms, max 202 -> 127 ms (``/work/coord/runs34h/timing.py``,
03:22 and 03:31 UTC, load 0.0 and 1.7).

Every decision is a pure function of the seed and the view (the deals are drawn from
:func:`game.players.common.decision_rng`, the enumeration is in a fixed order).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from typing import Any

from game.actions import Action, parse_action
from game.cards import card_code, parse_card
from game.players import briscola, playmodel
from game.players.common import decision_rng
from game.players.endgame import DrawSolver, Endgame, card_values
from game.players.expert import ExpertPlayer
from game.players.inference import resample
from game.players.netinfer import NetOpponent
from game.players.opponent import MATCH, SHARE, OpponentModel
from game.players.policy import Weights
from game.view import View

#: Two players: solve exactly when at most this many cards are left to draw (6 is
#: too slow in Python: up to 2 s a decision).
EXACT_STOCK = 4
#: Enumerate the worlds of an exact decision when there are at most this many, else
#: sample this many.
EXACT_WORLDS = 24
#: Middle game: sampled deals played out by the rule-based policy (``esperto``: 60).
WORLDS = 200
#: Inference (two players): deals drawn uniformly for each one played out, weighted by
#: the likelihood of the opponent's last plays (``INFERENCE_DEPTH`` of them: 20, every
#: play of the smazzata).
CANDIDATES = 3
INFERENCE_DEPTH = 20
#: Two players: the middle game's rollouts are played by the chiamata players' policy
#: (:func:`game.players.briscola.policy_card`) with these weights, for both seats.
ROLLOUT_WEIGHTS = Weights(power=1.5)
#: Two players, leading in the middle game: the opponent's answer taken in expectation
#: over the opponent model's chances (answers below ``REPLY_FLOOR`` left out).
REPLIES = True
REPLY_FLOOR = 0.03
#: Two players: the network's kind of opponent (:class:`game.players.netinfer.NetOpponent`)
#: weighs this much beside the opponent model's two kinds when it is read, over the
#: opponent's last ``NET_DEPTH`` plays (0: all of them).
NET_SHARE = 0.8
NET_DEPTH = 8
#: Whether campione reads it (its default ``net_share``: ``NET_SHARE``, else 0). On, by
#: the rule written before measurement 4 (``docs/strongest.md``): against campione
#: without it (``campione-classico`` of :mod:`game.players.classic`), 0.521 (0.490..0.551)
#: over 800 games, the lower end above the issue's 0.48, decision p95 287 ms of CPU
#: (measurement 2, 400 games before: 0.514, 0.471..0.556). About 29 ms more a decision.
NET_INFERENCE = True
#: Two players, leading: the network's answer mixed into the opponent's answers
#: (:func:`_answers`). Off: built, not yet measured in play (``docs/strongest.md``).
NET_ANSWERS = False
#: Three players: campione's own search (``WORLDS`` deals, the rollouts ending with the
#: exact last tricks, :func:`game.players.endgame.last_tricks_three`), not esperto's. On,
#: by the rule written before measurement 6 (``docs/strongest.md``): against esperto,
#: +1.93 (+1.38..+2.49) card points a smazzata over an even share, 38.0% of the smazzate
#: won (esperto 30.0%), over 3,000 smazzate; decision p95 110 ms of CPU.
THREE_SEARCH = True
#: Four players: the rollouts' policy (None: the rule-based one, esperto's). The policy,
#: by the rule written before measurements 7a and 7b (``docs/strongest.md``): against
#: campione with the rule-based rollouts 0.521 (0.490..0.552) over 800 games, the lower
#: end above 0.48 (card points −0.19 a game, −2.57..+2.19: a gain not shown); against
#: esperto 0.583 (0.561..0.604) over 1,600 games, p95 83 ms.
FOUR_WEIGHTS: Weights | None = ROLLOUT_WEIGHTS
#: Chiamata's play: the rollouts' last this many tricks played exactly by the two sides
#: (``game.players.sim.World.rollout``; 0: esperto's rollouts to the end).
CHIAMATA_EXACT = 0
#: Four players: the rollouts' last tricks (after the last draw) played exactly by the two
#: sides (``briscola.rollout``'s ``sides_exact``).
FOUR_EXACT = False


def _answers(
    view: View,
    model: OpponentModel,
    net: NetOpponent | None = None,
    share: float = 0.0,
    deals: Sequence[tuple[briscola.Deal, int]] = (),
) -> briscola.Answers:
    """Two players, leading in the middle game: the opponent's answers to a card in a
    deal, by the opponent model's chances (:meth:`OpponentModel.reply_chances`), the
    answers less likely than ``REPLY_FLOOR`` left out (:func:`briscola.search_code`
    weighs each line by its chance). With ``net`` (the network's kind of opponent,
    weighing ``share``), its answer (:meth:`NetOpponent.answer`, prepared for the hands
    of ``deals``) is mixed in by how likely each kind is given the opponent's plays so
    far from the hand it holds in the deal."""
    assert view.seat is not None
    opp = 1 - view.seat
    stock = view.stock_count
    if net is not None:
        legal = [parse_card(code[1:]) for code in view.legal]
        net.prepare_answers([hands[opp] for (hands, _stock), _count in deals], legal)

    def answers(hands: list[list[int]], led: int) -> list[tuple[int, float]]:
        theirs = hands[opp]
        chances = model.reply_chances(theirs, led, stock)
        if net is not None:
            model_kind, rule_kind = model.kinds(theirs)
            old = (1.0 - share) * (model_kind + rule_kind)
            new = share * net.likelihood(theirs)
            if old + new > 0.0:
                learned = net.answer(theirs, led)
                w = new / (old + new)
                chances = [(1.0 - w) * a + w * b for a, b in zip(chances, learned, strict=True)]
        return [(c, p) for c, p in zip(theirs, chances, strict=True) if p >= REPLY_FLOOR]

    return answers


def outcome(points: int, players: int, others: int = 0) -> float:
    """A smazzata's value for a side with ``points`` (``others``: the best other side's
    points, used with three players): win +1, patta 0, loss −1, plus 0.01 a point."""
    return briscola.rollout_value(points, others, players != 3)


def side_points(view: View, seat: int) -> int:
    """Card points the side of ``seat`` has taken so far (public: the tricks)."""
    side = next(s for s in view.sides if seat in s)
    return sum(t.points or 0 for t in view.tricks if t.winner in side)


def unseen_cards(view: View) -> list[int]:
    """The cards this seat cannot place: not in its hand (or its partner's, R107), not
    played, not the face-up card while it is still under the stock."""
    known = set(view.hand)
    known |= {c for _, c in view.current_trick}
    known |= {c for t in view.tricks for _, c in t.plays}
    if view.partner_hand is not None:
        known |= set(view.partner_hand)
    if view.face_up is not None:
        known.add(view.face_up)
    deck = [c for c in range(40) if not (view.players == 3 and c == 39)]
    unseen = [c for c in deck if c not in known]
    return unseen


def exact_worlds(
    view: View, rng: random.Random, cap: int
) -> list[tuple[list[list[int]], list[int]]]:
    """Hands and stock of every world the view allows (the face-up card last in the
    stock or in its holder's hand), in a fixed order; ``cap`` sampled ones when there
    are more."""
    me = view.seat
    assert me is not None and view.face_up is not None
    n = view.players
    hands: list[list[int]] = [[] for _ in range(n)]
    hands[me] = list(view.hand)
    partner = briscola.partner_of(view, me)
    if view.partner_hand is not None and partner is not None:
        hands[partner] = list(view.partner_hand)
    played = {c for _, c in view.current_trick} | {c for t in view.tricks for _, c in t.plays}
    face_up = view.face_up
    face_up_in_stock = view.face_up_holder is None
    holder = view.face_up_holder
    if holder is not None and face_up not in played and face_up not in hands[holder]:
        hands[holder].append(face_up)
    pool = unseen_cards(view)
    hidden_stock = view.stock_count - (1 if face_up_in_stock else 0)
    open_seats = [s for s in range(n) if view.hand_sizes[s] > len(hands[s])]
    needs = [view.hand_sizes[s] - len(hands[s]) for s in open_seats]
    total = 1
    remaining = len(pool)
    for need in needs:
        total *= _comb(remaining, need)
        remaining -= need
    total *= _perm(hidden_stock)
    if total > cap:
        result = []
        for _ in range(cap):
            h, s = briscola.sample_world(view, rng)
            result.append((h, s))
        return result
    worlds: list[tuple[list[list[int]], list[int]]] = []

    def assign(i: int, rest: list[int], current: list[list[int]]) -> None:
        if i == len(open_seats):
            for order in itertools.permutations(rest):
                stock = list(order) + ([face_up] if face_up_in_stock else [])
                worlds.append(([list(h) for h in current], stock))
            return
        seat = open_seats[i]
        for combo in itertools.combinations(rest, needs[i]):
            left = [c for c in rest if c not in combo]
            current[seat].extend(combo)
            assign(i + 1, left, current)
            del current[seat][len(current[seat]) - len(combo) :]

    assign(0, sorted(pool), [list(h) for h in hands])
    return worlds


def _comb(n: int, k: int) -> int:
    return math.comb(n, k) if 0 <= k <= n else 0


def _perm(n: int) -> int:
    return math.factorial(max(0, n))


def _scaled(weights: list[float]) -> list[float]:
    """``weights`` divided by the largest (the likelihoods of a whole smazzata's plays
    are small numbers; the totals of the exact endgames are compared rounded)."""
    top = max(weights, default=0.0)
    return [w / top for w in weights] if top > 0.0 else weights


def likelihoods(
    model: OpponentModel, hands: Sequence[Sequence[int]], net: NetOpponent | None, share: float
) -> list[float]:
    """The likelihood of the opponent's plays from each of ``hands``: the opponent
    model's, mixed with the network's kind (``net``, weighing ``share``) when given."""
    own = [model.likelihood(list(hand)) for hand in hands]
    if net is None or share <= 0.0:
        return own
    learned = net.likelihoods(hands)
    return [(1.0 - share) * a + share * b for a, b in zip(own, learned, strict=True)]


def inferred_deals(
    view: View,
    rng: random.Random,
    worlds: int,
    candidates: int = CANDIDATES,
    model: OpponentModel | None = None,
    net: NetOpponent | None = None,
    share: float = 0.0,
) -> list[tuple[briscola.Deal, int]]:
    """Two players: ``worlds`` deals drawn in proportion to the opponent model's
    likelihood (mixed with the network's, :func:`likelihoods`) among ``candidates``
    times as many uniform ones."""
    me = view.seat
    assert me is not None
    if model is None:
        model = OpponentModel(view)
    deals = [briscola.sample_world(view, rng) for _ in range(worlds * candidates)]
    if not model.plays:
        return [(deal, 1) for deal in deals[:worlds]]
    weights = likelihoods(model, [hands[1 - me] for hands, _stock in deals], net, share)
    return resample(deals, weights, worlds, rng)


class ChampionPlayer(ExpertPlayer):
    """``esperto`` with exact endgames and more deals in plain Briscola (module doc)."""

    def __init__(
        self,
        seed: int = 0,
        max_seconds: float | None = None,
        name: str = "campione",
        worlds: int = WORLDS,
        exact_stock: int = EXACT_STOCK,
        infer: bool = True,
        draws: bool = True,
        depth: int = INFERENCE_DEPTH,
        match: float = MATCH,
        rollout_weights: Weights | None = ROLLOUT_WEIGHTS,
        theta: Sequence[float] | None = playmodel.THETA,
        share: float = SHARE,
        replies: bool = REPLIES,
        net_share: float | None = None,
        net_depth: int = NET_DEPTH,
        net_answers: bool = NET_ANSWERS,
        three: bool = THREE_SEARCH,
        four_weights: Weights | None = FOUR_WEIGHTS,
        exact_tricks: int = CHIAMATA_EXACT,
        four_exact: bool = FOUR_EXACT,
        **expert: Any,
    ) -> None:
        super().__init__(
            seed, max_seconds=max_seconds, name=name, exact_tricks=exact_tricks, **expert
        )
        #: plain Briscola's middle game: sampled deals a decision
        self.worlds = worlds
        #: two players: cards left to draw from which the endgame is solved exactly
        self.exact_stock = exact_stock
        #: two players: deals weighted by the opponent model (:class:`OpponentModel`)
        self.infer = infer
        #: two players: the stock's order a chance node in the exact endgame
        #: (:class:`game.players.endgame.DrawSolver`), not one order a world
        self.draws = draws
        #: the opponent model's plays and its chance of the rule-based card (the
        #: uniform deals drawn for each one played out: esperto's ``candidates``)
        self.depth = depth
        self.match = match
        #: the play model's θ (:mod:`game.players.playmodel`) and the chance the model
        #: gives it against the rule-based card with probability ``match`` (None or 0:
        #: that one only)
        self.theta = theta
        self.share = share
        #: two players: the rollout policy's weights (None: the rule-based policy)
        self.rollout_weights = rollout_weights
        #: two players, leading: the opponent's answer in expectation over the opponent
        #: model (:func:`_answers`), not the rollout policy's
        self.replies = replies
        #: two players: the network's kind of opponent in the inference
        #: (:class:`game.players.netinfer.NetOpponent`), its share and plays read
        self.net_share = (NET_SHARE if NET_INFERENCE else 0.0) if net_share is None else net_share
        self.net_depth = net_depth
        #: two players, leading: the network's answer beside the opponent model's
        self.net_answers = net_answers
        #: three players: its own search (else esperto's)
        self.three = three
        #: four players: the rollout policy's weights (None: the rule-based one)
        self.four_weights = four_weights
        #: four players: the rollouts' last tricks played exactly by the two sides
        self.four_exact = four_exact

    def choose(self, view: View) -> Action:
        esperto = view.game != "briscola" or (view.players == 3 and not self.three)
        if esperto or len(view.legal) <= 1:
            return super().choose(view)
        rng = decision_rng(self.seed, view.smazzata, view.version, view.seat or 0)
        if self._exact_applies(view):
            if view.players == 2 and self.draws:
                return parse_action(self._exact_two(view))
            return parse_action(self._exact(view, rng))
        self.last_worlds = self.worlds
        deals = None
        answers = None
        if view.players == 2 and self.infer:
            model = self._model(view)
            net = self._net(view)
            deals = inferred_deals(
                view, rng, self.worlds, self.candidates, model, net, self.net_share
            )
            if self.replies and not view.current_trick:
                if net is None or not self.net_answers:
                    answers = _answers(view, model)
                else:
                    answers = _answers(view, model, net, self.net_share, deals)
        weights = {2: self.rollout_weights, 4: self.four_weights}.get(view.players)
        return parse_action(
            briscola.search_code(
                view,
                rng,
                self.worlds,
                exact_end=True,
                deals=deals,
                weights=weights,
                answers=answers,
                sides_exact=self.four_exact,
            )
        )

    def _model(self, view: View) -> OpponentModel:
        return OpponentModel(view, self.depth, self.match, self.theta, self.share)

    def _net(self, view: View) -> NetOpponent | None:
        if view.players != 2 or self.net_share <= 0.0 or view.options.follow_suit:
            return None
        return NetOpponent(view, self.net_depth)

    def _exact_applies(self, view: View) -> bool:
        if view.players == 2:
            return view.stock_count <= self.exact_stock
        return view.partner_hand is not None and view.stock_count == 0

    def _exact_two(self, view: View) -> str:
        """Two players: the card with the best expected outcome over every hand the
        opponent can hold (weighted by the opponent model), the stock's order a chance
        node (:class:`game.players.endgame.DrawSolver`)."""
        me = view.seat
        assert me is not None and view.trump is not None and view.face_up is not None
        opp = 1 - me
        pool = unseen_cards(view)
        known: list[int] = []
        played = {c for _, c in view.current_trick} | {c for t in view.tricks for _, c in t.plays}
        if view.face_up_holder == opp and view.face_up not in played:
            known.append(view.face_up)
        need = view.hand_sizes[opp] - len(known)
        mine = side_points(view, me)
        solver = DrawSolver(view.trump, view.face_up, lambda p: outcome(p, 2))
        model = self._model(view) if self.infer else None
        legal = [parse_card(code[1:]) for code in view.legal]
        totals = dict.fromkeys(legal, 0.0)
        trick = [c for _, c in view.current_trick]
        combos = list(itertools.combinations(sorted(pool), need))
        hands = [sorted((*known, *combo)) for combo in combos]
        weights = _scaled(
            likelihoods(model, hands, self._net(view), self.net_share)
            if model is not None
            else [1.0] * len(hands)
        )
        worlds = 0
        for combo, weight in zip(combos, weights, strict=True):
            theirs = sorted((*known, *combo))
            hidden = [c for c in pool if c not in combo]
            worlds += 1
            if weight <= 0.0:
                continue
            values = solver.card_values(view.hand, theirs, hidden, trick, mine)
            for card in legal:
                totals[card] += weight * values[card]
        self.last_worlds = worlds
        best = max(legal, key=lambda c: (round(totals[c], 9), -c))
        return "c" + card_code(best)

    def _exact(self, view: View, rng: random.Random) -> str:
        """The card with the best mean exact outcome over the worlds (module doc)."""
        me = view.seat
        assert me is not None and view.trump is not None
        side_of = [
            next(i for i, side in enumerate(view.sides) if s in side) for s in range(view.players)
        ]
        mine = side_points(view, me)
        legal = [parse_card(code[1:]) for code in view.legal]
        totals = dict.fromkeys(legal, 0.0)
        worlds = exact_worlds(view, rng, EXACT_WORLDS)
        model = self._model(view) if view.players == 2 and self.infer else None
        # two players: each way the hidden cards can lie, weighted by the model
        theirs = [hands[1 - me] for hands, _ in worlds]
        weights = _scaled(
            likelihoods(model, theirs, self._net(view), self.net_share)
            if model is not None
            else [1.0] * len(worlds)
        )
        for (hands, stock), weight in zip(worlds, weights, strict=True):
            game = Endgame(
                hands,
                stock,
                view.leader,
                [c for _, c in view.current_trick],
                view.trump,
                side_of,
                side_of[me],
            )
            for card, value in card_values(game).items():
                totals[card] += weight * outcome(mine + value, view.players)
        self.last_worlds = len(worlds)
        best = max(legal, key=lambda c: (round(totals[c], 9), -c))
        return "c" + card_code(best)


__all__ = ["ChampionPlayer", "exact_worlds", "likelihoods", "outcome"]
