"""Shared fixtures: the fake Telegram server and the real bot Application running on it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from telegram.ext import Application

from bot.app import build_application
from bot.config import Settings
from bot.outbox import PacedRateLimiter
from bot.runtime import Runtime
from tests import pg

#: Flood limits of the fake for the fast e2e runs: Telegram's shape, 20× faster. The bot's
#: own pacing gets exactly the same numbers, so any 429 is a real pacing bug.
SPEED = 20.0


def fast_limits() -> Any:
    from sandbox.fakeapi import FloodLimits

    return FloodLimits(
        chat_rate=1.0 * SPEED,
        chat_burst=3,
        group_per_minute=20 * SPEED,
        group_burst=20,
        global_rate=30 * SPEED,
        global_burst=30,
    )


#: Where the long tests are (real time, pacing, subprocesses), longest first: without
#: pytest-xdist (``-n 0``) they run first.
LONG_FIRST = (
    "tests/chaos/test_failover.py",
    "tests/chaos/test_sigkill.py",
    "tests/e2e/test_e2e_flood.py",
    "tests/e2e/test_e2e_match.py",
    "tests/chaos/",
    "tests/e2e/",
    "tests/core/test_properties.py",
)

#: The tests that take 5 s or more, by node-id prefix, with the seconds each one took in a
#: whole-suite run (3 workers on the shared 2-core machine, load ~5, 562 s in all; CI is
#: ~1.4 times faster): they are shared out among the pytest-xdist workers by :func:`deal`.
#: Only their relative sizes matter; a test matching none counts as :data:`SHORT`.
LONG_SECONDS = (
    ("tests/chaos/test_failover.py::test_sigkill_in_webhook_mode_loses_no_press", 123),
    ("tests/chaos/test_failover.py::test_sigkill_of_the_active_instance_standby_takes_over", 104),
    ("tests/chaos/test_failover.py::test_terminated_lock_connection_fences_the_active_inst", 58),
    ("tests/chaos/test_failover.py::test_sigterm_hands_over_without_losing_an_update", 49),
    ("tests/chaos/test_sigkill.py::test_sigkill_at_random_moments_during_20_matches", 45),
    ("tests/e2e/test_browser.py::test_a_browser_plays_a_smazzata_in_the_group", 44),
    ("tests/e2e/test_browser_webapp.py::test_a_phone_plays_a_match_of_plain_briscola_under", 44),
    ("tests/chaos/test_restart_pacing.py::test_sigkill_mid_auction_every_group_table_curre", 38),
    ("tests/test_bench_load.py::test_a_short_run_with_mini_app_seats", 37),
    ("tests/e2e/test_browser.py::test_a_browser_plays_alone_in_the_private_chat", 34),
    ("tests/test_bench_load.py::test_a_short_run_with_human_think_times", 33),
    ("tests/test_players_endgame.py::test_campione_solves_two_player_endgames_over_every_h", 29),
    ("tests/e2e/test_browser_webapp.py::test_a_phone_plays_a_smazzata_under_telegrams_scri", 29),
    ("tests/test_bench_load.py::test_a_short_load_run_measures_the_bot_and_both_echo_floor", 27),
    ("tests/e2e/test_e2e_flood.py::test_computer_burst_respects_real_limits", 27),
    ("tests/chaos/test_sigkill.py::test_edits_in_flight_at_a_kill_or_a_stop_are_redone_aft", 23),
    ("tests/test_players_endgame.py::test_the_draw_solver_equals_expectimax_through_the_en", 21),
    ("tests/chaos/test_sigterm.py::test_sigterm_with_search_computers_stops_the_pool", 19),
    ("tests/chaos/test_sigterm.py::test_sigterm_exits_in_time_and_keeps_every_move", 18),
    ("tests/test_players_auction_ab.py::test_a_variant_that_bids_otherwise_plays_its_own_s", 17),
    ("tests/test_players_endgame.py::test_the_solver_equals_minimax_through_the_engine_on_", 16),
    ("tests/test_bot_players.py::test_search_decisions_run_in_the_pool_and_match_the_playe", 15),
    ("tests/test_players_expert.py::test_the_auction_rolls_out_more_calls_on_as_many_deals", 15),
    ("tests/e2e/test_e2e_match.py::test_full_match_five_humans", 13),
    ("tests/e2e/test_e2e_stats.py::test_statistiche_equal_a_replay_of_the_logs", 11),
    ("tests/chaos/test_failover.py::test_a_kill_while_the_move_is_being_committed", 10),
    ("tests/test_webapp_hub.py::test_the_push_benchmark_prints_its_figures", 9),
    ("tests/chaos/test_failover.py::test_a_kill_after_a_press_was_handed_out_and_confirmed", 9),
    ("tests/chaos/test_failover.py::test_a_second_instance_on_one_sqlite_file_refuses_to_s", 9),
    ("tests/test_packaging.py::test_installed_bot_answers_start_in_italian_and_english", 9),
    ("tests/test_imports.py::test_imports_run_one_way", 9),
    ("tests/chaos/test_failover.py::test_an_update_delivered_again_after_a_takeover_is_han", 8),
    ("tests/chaos/test_telegram_faults.py::test_lost_get_updates_answers_neither_lose_nor_", 8),
    ("tests/e2e/test_e2e_own_redraw.py::test_the_pressed_hand_is_the_first_call_after_the_", 7),
    ("tests/e2e/test_e2e_restart.py::test_restart_mid_auction_and_mid_trick", 7),
    ("tests/core/test_properties.py::test_thousands_of_random_smazzate_in_every_option_com", 6),
    ("tests/test_players_expert.py::test_a_cautious_esperto_never_calls_where_the_plain_on", 6),
    ("tests/test_players_inference.py::test_esperto_plays_whole_smazzate", 6),
    ("tests/test_storage_copy.py::test_copy_resumes_identically", 6),
    ("tests/test_players_endgame.py::test_the_opponent_model_places_the_hidden_cards_bette", 6),
    ("tests/e2e/test_e2e_afk.py::test_turn_clock_starts_when_the_buttons_arrive", 6),
    ("tests/test_bot_players.py::test_after_shutdown_a_new_pool_serves", 6),
    ("tests/test_bot_service.py::test_timeout_strike_is_written_with_the_move", 6),
    ("tests/test_players_regret.py::test_the_auction_mode_prints_a_line_per_setting", 6),
    ("tests/chaos/test_telegram_faults.py::test_429_retry_after_is_obeyed_and_the_match_fi", 6),
    ("tests/test_webapp.py::test_whole_smazzate_through_the_api_show_each_user_only_their_", 6),
    ("tests/chaos/test_failover.py::test_webhook_mode_a_standby_does_not_listen_until_it_t", 5),
    ("tests/test_webapp.py::test_bad_requests_change_nothing_and_spare_other_tables", 5),
    ("tests/test_packaging.py::test_wheel_carries_every_package_and_the_catalogs", 5),
    ("tests/core/test_properties.py::test_views_never_leak_in_any_option_combination", 5),
)
#: What a test matching no prefix of :data:`LONG_SECONDS` counts for.
SHORT = 0.3
#: Tests that run one after the other on one worker (one unit for :func:`deal`), never at
#: the same time as each other: the two ten-kill failover tests and the 20-match SIGKILL
#: tests, the ones with the most bot processes and tables. The SIGKILL tests are the most
#: sensitive to a loaded machine (a restart slower than RESCUE_AFTER fails them): run at
#: the very start beside the ten-kill and the fencing test, while the other workers were
#: starting their bot processes too, one of them needed a /mano rescue; after the ten-kill
#: tests they run beside the middle of the suite, as they always had.
TOGETHER = (
    "tests/chaos/test_failover.py::test_sigkill_",
    "tests/chaos/test_sigkill.py::test_sigkill_at_random_moments",
)
TOGETHER_KEY = "the ten-kill failover tests, then the 20-match SIGKILL tests"


def expected_seconds(item: pytest.Item) -> float:
    return next((s for where, s in LONG_SECONDS if item.nodeid.startswith(where)), SHORT)


def deal(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """The order in which pytest-xdist's ``--dist worksteal`` gives each of ``workers``
    workers a balanced share of the long tests, longest first.

    worksteal hands worker i the i-th contiguous slice of the collection (sizes as below)
    and an idle worker later steals the second half of the longest queue left. Sorted
    longest first, the long tests would all be in the first worker's slice, run there one
    after the other while the others run the short ones, and be reached last (a whole-
    suite run ended with a 40 s browser test alone). Here the long tests are shared out
    by expected time (the longest to the least loaded slice), each slice starts with
    its own, longest first, and the short tests fill the slices in collection order
    (their modules stay together); what is stolen, from a queue's end, is short."""
    sizes = []
    left = len(items)
    for i in range(workers):
        sizes.append(left // (workers - i))  # as worksteal's first hand-out
        left -= sizes[-1]
    units: dict[str, list[pytest.Item]] = {}
    short: list[pytest.Item] = []
    for item in items:
        if expected_seconds(item) <= SHORT:
            short.append(item)
            continue
        together = any(item.nodeid.startswith(where) for where in TOGETHER)
        key = TOGETHER_KEY if together else item.nodeid
        units.setdefault(key, []).append(item)
    slices: list[list[pytest.Item]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    by_time = sorted(units.values(), key=lambda u: -sum(map(expected_seconds, u)))
    for unit in by_time:
        room = [i for i in range(workers) if len(slices[i]) + len(unit) <= sizes[i]]
        i = min(room or range(workers), key=lambda i: load[i])
        slices[i] += unit
        load[i] += sum(map(expected_seconds, unit))
    for i in range(workers):
        take = max(0, sizes[i] - len(slices[i])) if i < workers - 1 else len(short)
        slices[i] += short[:take]
        del short[:take]
    return [item for part in slices for item in part]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next(
            (i for i, where in enumerate(LONG_FIRST) if item.nodeid.startswith(where)),
            len(LONG_FIRST),
        )

    items.sort(key=rank)  # stable: the order within a rank is unchanged
    # in each pytest-xdist worker (every worker must collect the same order, and does;
    # the mode is not known there: the order is made for the suite's, worksteal)
    workers = int(getattr(config, "workerinput", {}).get("workercount", 0))
    if workers > 1:
        items[:] = deal(items, workers)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[pg.PostgresCluster]:
    """A throwaway PostgreSQL cluster per test process (per pytest-xdist worker); skips
    the test, with the reason, where none can be started (see tests/pg.py)."""
    reason = pg.unavailable()
    if reason is not None:
        pytest.skip(f"PostgreSQL: {reason}")
    cluster = pg.PostgresCluster()
    try:
        yield cluster
    finally:
        cluster.stop()


#: The database engines a test parametrised with ``database_url`` runs on.
ENGINES = ("sqlite", "postgresql")


@pytest.fixture(params=ENGINES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database: an SQLite file, or a new database in this worker's
    PostgreSQL cluster (dropped after the test)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'bot.db'}"
        return
    cluster: pg.PostgresCluster = request.getfixturevalue("pg_cluster")
    url = cluster.new_database()
    try:
        yield url
    finally:
        cluster.drop_database(url)


@pytest.fixture
async def tg() -> AsyncIterator[Any]:
    from sandbox.fakeapi import FakeTelegram

    async with FakeTelegram(flood=fast_limits()) as server:
        yield server


def bot_settings(tg: Any, db_path: Path | str, **overrides: Any) -> Settings:
    """The bot's settings for a test; ``db_path``: an SQLite file, or a database URL."""
    values: dict[str, Any] = {
        "bot_token": tg.token,
        "telegram_base_url": tg.base_url,
        "telegram_base_file_url": tg.base_file_url,
        "database_url": db_path if isinstance(db_path, str) else f"sqlite:///{db_path}",
        "turn_timeout_seconds": 0,
        "computer_level": "facile",
        "computer_delay_seconds": 0,
        "default_language": "it",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


#: The secret of the webhook-mode tests (what WEBHOOK_SECRET would hold).
WEBHOOK_SECRET = "test-webhook-secret_1"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (for a webhook server's URL)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RunningBot:
    """A started Application (long polling against the fake, or its webhook server with
    ``webhook=True``) and its runtime."""

    def __init__(
        self, app: Application, speed: float, *, webhook: bool = False  # type: ignore[type-arg]
    ) -> None:
        self.app = app
        self.speed = speed
        self.webhook = webhook

    @property
    def rt(self) -> Runtime:
        return self.app.bot_data["rt"]  # type: ignore[no-any-return]

    async def start(self) -> RunningBot:
        await self.app.initialize()
        assert self.app.post_init is not None
        await self.app.post_init(self.app)
        assert self.app.updater is not None
        if self.webhook:
            port = free_port()
            await self.app.updater.start_webhook(
                listen="127.0.0.1", port=port, url_path="hook", secret_token=WEBHOOK_SECRET,
                webhook_url=f"http://127.0.0.1:{port}/hook",
            )  # fmt: skip
        else:
            await self.app.updater.start_polling(poll_interval=0, timeout=1)
        await self.app.start()
        # (the tables' resumption and the command menus follow the start in the
        # background, as in production: the tests go on once they are done)
        from bot.app import AFTER_START

        await asyncio.gather(*self.app.bot_data.get(AFTER_START, []))
        return self

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.rt.outbox.drain(5)
        if self.app.updater is not None and self.app.updater.running:
            await self.app.updater.stop()
        if self.app.running:
            await self.app.stop()
        assert self.app.post_shutdown is not None
        await self.app.post_shutdown(self.app)
        await self.app.shutdown()


def make_bot(
    tg: Any, db_path: Path | str, speed: float = SPEED, *, webhook: bool = False, **overrides: Any
) -> RunningBot:
    config = bot_settings(tg, db_path, **overrides)
    limiter = PacedRateLimiter(
        overall_max_rate=30 * speed, group_max_rate=20 * speed, max_retries=3
    )
    # the bot keeps a safety margin under the server's limits, as in production
    rates = {
        "group_per_minute": 18.0,
        "window_seconds": 60.0 / speed,
        "chat_rate": 0.8 * speed,
        "chat_burst": 1.0,
        "private_burst": 2.0,
        "private_lazy_seconds": 4.0 / speed,
        "messages_per_second": 27.0 * speed,
    }
    app = build_application(config, rate_limiter=limiter, outbox_rates=rates)
    return RunningBot(app, speed, webhook=webhook)


@pytest.fixture
async def running_bot(tg: Any, tmp_path: Path) -> AsyncIterator[RunningBot]:
    bot = await make_bot(tg, tmp_path / "bot.db").start()
    try:
        yield bot
    finally:
        await bot.stop()
