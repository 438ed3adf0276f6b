"""EnvelopeKeySource's cache of unwrapped data keys, offline (a KMS that counts its unwraps, a clock the
test moves): a key is unwrapped once and reused for its lifetime, then asked for again; at most so many
are kept, the least recently used going first; an expired key makes room before a live one does; bad
cache settings are refused when the source is made."""

from __future__ import annotations

import pytest

from aggregation_connections.codec import DataKeyCacheSettings, EnvelopeKeySource
from aggregation_connections.codec.envelope_keys import DataKey, KeyWrapper
from aggregation_connections.codec.payload_format import EnvelopeMetadata, envelope_metadata


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class CountingKms:
    """Unwraps "wrapped-<n>" to 32 bytes of n, counting each call."""

    def __init__(self) -> None:
        self.unwraps: list[str] = []

    @property
    def key_id(self) -> str:
        return "transit:product"

    @property
    def tenant(self) -> str | None:
        return None

    async def new_data_key(self) -> DataKey:
        raise AssertionError("these tests only read")

    async def unwrap(self, envelope: EnvelopeMetadata) -> bytes:
        self.unwraps.append(envelope.wrapped_key)
        return bytes([int(envelope.wrapped_key.removeprefix("wrapped-"))]) * 32

    def for_tenant(self, tenant: str) -> KeyWrapper:
        raise AssertionError("no tenants here")


def source(kms: CountingKms, clock: Clock, size: int = 2, lifetime_s: float = 10) -> EnvelopeKeySource:
    settings = DataKeyCacheSettings(unwrapped_key_cache_size=size, unwrapped_key_lifetime_s=lifetime_s)
    return EnvelopeKeySource(kms, settings, now=clock)


async def open_(keys: EnvelopeKeySource, n: int) -> None:
    await keys.opening_key(envelope_metadata(EnvelopeMetadata("transit:product", 1, f"wrapped-{n}", None)))


async def test_an_unwrapped_key_is_reused_for_its_lifetime_then_unwrapped_again() -> None:
    kms, clock = CountingKms(), Clock()
    keys = source(kms, clock)
    await open_(keys, 1)
    clock.now = 9.9
    await open_(keys, 1)
    assert kms.unwraps == ["wrapped-1"]
    clock.now = 10.0  # its lifetime from when it was unwrapped, not from its last use
    await open_(keys, 1)
    assert kms.unwraps == ["wrapped-1", "wrapped-1"]


async def test_keeps_at_most_its_size_the_least_recently_used_going_first() -> None:
    kms, clock = CountingKms(), Clock()
    keys = source(kms, clock, size=2)
    await open_(keys, 1)
    await open_(keys, 2)
    await open_(keys, 1)  # 2 is now the least recently used
    await open_(keys, 3)
    kms.unwraps.clear()
    await open_(keys, 1)
    await open_(keys, 3)
    assert kms.unwraps == []
    await open_(keys, 2)
    assert kms.unwraps == ["wrapped-2"]


async def test_an_expired_key_makes_room_before_a_live_one() -> None:
    kms, clock = CountingKms(), Clock()
    keys = source(kms, clock, size=2, lifetime_s=10)
    await open_(keys, 1)
    clock.now = 5
    await open_(keys, 2)
    await open_(keys, 1)  # 1 most recently used, but expires at 10; 2 lives to 15
    clock.now = 11
    await open_(keys, 3)
    kms.unwraps.clear()
    await open_(keys, 2)
    assert kms.unwraps == [], "the live key stayed; the expired one went"


@pytest.mark.parametrize(
    ("size", "lifetime_s", "message"),
    [
        (0, 10, "DataKeyCacheSettings: unwrapped_key_cache_size must be a whole number from 1, got 0"),
        (2, 0, "DataKeyCacheSettings: unwrapped_key_lifetime_s must be above 0, got 0"),
    ],
)
def test_refuses_a_cache_that_could_hold_nothing(size: int, lifetime_s: float, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        source(CountingKms(), Clock(), size=size, lifetime_s=lifetime_s)
    assert str(caught.value) == message
