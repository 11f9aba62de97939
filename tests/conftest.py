"""Fixtures every test gets."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _close_sdk_clients() -> Iterator[None]:
    """Close the SDK clients a test made with ``_proxy_support.openai_client`` or
    ``anthropic_client``: an unclosed one leaves its sockets to the garbage collector, and
    the suite treats that ``ResourceWarning`` as an error. (Looked up, not imported: a test
    that never used the proxy's helpers does not load them.)"""
    yield
    support = sys.modules.get("_proxy_support")
    if support is not None:
        support.close_clients()
