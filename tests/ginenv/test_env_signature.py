"""``gin_rummy_v0.env``'s signature names every setting (its reference shows them), and a keyword
left out keeps the value of ``settings``."""

from __future__ import annotations

import dataclasses
import inspect

from ginenv import gin_rummy_v0
from ginenv.rules import Rules
from ginenv.settings import EnvSettings


def test_env_names_every_setting_in_its_signature() -> None:
    params = inspect.signature(gin_rummy_v0.env).parameters
    for setting in dataclasses.fields(EnvSettings):
        assert params[setting.name].kind is inspect.Parameter.KEYWORD_ONLY, setting.name
        assert params[setting.name].default is gin_rummy_v0.KEEP


def test_a_keyword_left_out_keeps_the_settings_value() -> None:
    base = EnvSettings(rules=Rules(target=40), mode="match", dealer=1)
    built = gin_rummy_v0.env(settings=base, turn_limit=50).unwrapped.settings
    assert built == dataclasses.replace(base, turn_limit=50)
    assert gin_rummy_v0.env().unwrapped.settings == EnvSettings()
