"""Flood control of the fake server (token buckets), configurable per server instance.

What is enforced (defaults of `FloodLimits`), counting only the *message-producing* calls in
`COUNTED_METHODS` (sends and edits; not deletes, callback answers, chat actions or reads):

* **per chat** (any chat, private or group): a bucket of ``chat_burst`` = 3 tokens refilled at
  ``chat_rate`` = 1 token/s — i.e. bursts of 3, then 1 per second sustained;
* **per group** (``group`` and ``supergroup`` chats): a bucket of ``group_burst`` = 20 tokens
  refilled at ``group_per_minute`` = 20 tokens per 60 s — i.e. at most 20 sends+edits per
  rolling minute once the burst is used, compatible with PTB's `AIORateLimiter` defaults;
* **overall**: a bucket of ``global_burst`` = 30 tokens refilled at ``global_rate`` = 30/s.

A call is allowed only if every bucket it touches has a whole token; then one token is taken
from each.  A rejected call takes nothing and gets ``429 Too Many Requests: retry after N``
with ``N = ceil(time until all buckets have a token)`` (at least 1), and a `FloodViolation`
is recorded.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import too_many_requests

COUNTED_METHODS = frozenset(
    {
        "sendMessage",
        "sendPhoto",
        "sendDocument",
        "editMessageText",
        "editMessageReplyMarkup",
        "editMessageCaption",
    }
)


@dataclass
class FloodLimits:
    """Configuration of flood control; ``FloodLimits(enabled=False)`` turns it off."""

    enabled: bool = True
    chat_rate: float = 1.0
    chat_burst: float = 3.0
    group_per_minute: float = 20.0
    group_burst: float = 20.0
    global_rate: float = 30.0
    global_burst: float = 30.0
    counted_methods: frozenset[str] = COUNTED_METHODS


@dataclass(frozen=True)
class FloodViolation:
    """One call rejected with 429 by flood control."""

    at: float
    method: str
    chat_id: int
    scope: str  # "chat", "group" or "global"
    retry_after: int


@dataclass
class TokenBucket:
    """Classic token bucket; time in seconds from the controller's clock."""

    rate: float
    capacity: float
    tokens: float
    updated: float

    def refill(self, now: float) -> None:
        if now > self.updated:
            self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
            self.updated = now

    def wait_time(self, now: float) -> float:
        """Seconds until one whole token is available (0 if available now)."""
        self.refill(now)
        missing = 1.0 - self.tokens
        return 0.0 if missing <= 1e-9 else missing / self.rate


@dataclass
class FloodController:
    """Applies `FloodLimits`; `acquire` raises the 429 `ApiError`."""

    limits: FloodLimits = field(default_factory=FloodLimits)
    clock: Callable[[], float] = time.monotonic
    violations: list[FloodViolation] = field(default_factory=list)
    _chats: dict[int, TokenBucket] = field(default_factory=dict)
    _groups: dict[int, TokenBucket] = field(default_factory=dict)
    _global: TokenBucket | None = None

    def counts(self, method: str) -> bool:
        """Whether ``method`` is subject to flood control."""
        return self.limits.enabled and method in self.limits.counted_methods

    def reset(self) -> None:
        """Forget all buckets (violations are kept)."""
        self._chats.clear()
        self._groups.clear()
        self._global = None

    def _bucket(
        self, store: dict[int, TokenBucket], key: int, rate: float, cap: float
    ) -> TokenBucket:
        bucket = store.get(key)
        if bucket is None:
            bucket = store[key] = TokenBucket(rate, cap, cap, self.clock())
        return bucket

    def _buckets(self, chat_id: int, is_group: bool) -> list[tuple[str, TokenBucket]]:
        lim = self.limits
        if self._global is None:
            self._global = TokenBucket(
                lim.global_rate, lim.global_burst, lim.global_burst, self.clock()
            )
        buckets = [
            ("chat", self._bucket(self._chats, chat_id, lim.chat_rate, lim.chat_burst)),
            ("global", self._global),
        ]
        if is_group:
            group = self._bucket(
                self._groups, chat_id, lim.group_per_minute / 60.0, lim.group_burst
            )
            buckets.insert(1, ("group", group))
        return buckets

    def acquire(self, method: str, chat_id: int, is_group: bool) -> None:
        """Take a token for a counted call or raise 429."""
        if not self.counts(method):
            return
        now = self.clock()
        buckets = self._buckets(chat_id, is_group)
        waits = [(bucket.wait_time(now), scope) for scope, bucket in buckets]
        worst, scope = max(waits)
        if worst > 0:
            retry_after = max(1, math.ceil(worst))
            self.violations.append(FloodViolation(now, method, chat_id, scope, retry_after))
            raise too_many_requests(retry_after)
        for _, bucket in buckets:
            bucket.tokens -= 1.0
