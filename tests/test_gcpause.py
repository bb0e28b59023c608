"""gcpause.paused turns the cyclic collector off for its block only."""

from __future__ import annotations

import gc

import pytest

from syncer import gcpause


def test_the_collector_is_off_inside_and_on_again_after() -> None:
    assert gc.isenabled()
    with gcpause.paused():
        assert not gc.isenabled()
        with gcpause.paused():  # nested: the outer block turns it on again, not this one
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_turns_it_on_again() -> None:
    with pytest.raises(KeyError), gcpause.paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with gcpause.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
