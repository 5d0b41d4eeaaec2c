"""Hypothesis profiles: ``ci`` (set by ``.ci/run``) replays the same examples on every run, so
that CI's verdict does not depend on the draw; a plain ``pytest`` keeps exploring new ones,
which is how the random oracles find what the curated cases miss."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
