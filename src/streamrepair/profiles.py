"""Moved to :mod:`streamrepair.schema.profiles` (an alias of the 0.1 path, removed in 0.3)."""

from ._moved import warn_moved

warn_moved(__name__, "streamrepair.schema.profiles")

from .schema.profiles import (  # noqa: E402
    COMMAND_FIELDS,
    PROFILES,
    Profile,
    ProfileRepair,
    ProfileRule,
    apply_profiles,
    profile_names,
    select_profiles,
)

__all__ = [
    "COMMAND_FIELDS",
    "PROFILES",
    "Profile",
    "ProfileRepair",
    "ProfileRule",
    "apply_profiles",
    "profile_names",
    "select_profiles",
]
