"""The alias benches skip a seed whose world cannot be built at the asked size (its name pool runs out) and go
on with the others, saying so; before, the whole run stopped at that seed and lost the seeds after it."""

from __future__ import annotations

import pytest

from bench.alias_blind_bench import built_worlds
from bench.alias_blind_gold import PoolExhausted
from bench.alias_world_blind import build_blind_world


def test_a_seed_that_runs_out_of_names_is_skipped_and_the_rest_built(capsys):
    def build(seed: int, size: int) -> str:
        if seed == 2:
            raise PoolExhausted("name pool exhausted: lower --per-habit")
        return f"world {seed} of size {size}"

    built = list(built_worlds([1, 2, 3], 2, build))
    assert built == [(1, "world 1 of size 2"), (3, "world 3 of size 2")]
    assert "seed 2: not built at size 2 (name pool exhausted: lower --per-habit); skipped" in capsys.readouterr().out


def test_other_errors_of_a_build_still_stop_the_run():
    def build(seed: int, size: int) -> str:
        raise KeyError("a defect in the generator")

    with pytest.raises(KeyError):
        list(built_worlds([1], 2, build))


def test_the_blind_generator_says_when_its_names_run_out():
    build_blind_world(53, 2)  # builds
    with pytest.raises(PoolExhausted):
        build_blind_world(54, 2)  # seed 54's draws use up a name pool at two per habit
