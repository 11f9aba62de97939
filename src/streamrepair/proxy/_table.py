"""The table of APIs: one row per API the proxy repairs, each row the whole of that API
(its module's ``_API``; ``_api.py`` says what a row holds).

The app routes a request with :func:`api_for`; whole-body judging, the request-side fixes
and the memo reader look the row up by :class:`~.relay.ApiProtocol`. Nothing else in the
proxy names an API: a new one is a module that builds its :class:`~._api.Api` row (with
its :class:`~.relay.ApiProtocol` member), and that row's line here.
"""

from __future__ import annotations

from typing import Final

from . import anthropic, chat, responses
from ._api import Api
from .relay import ApiProtocol

__all__ = ["APIS", "api_for"]

APIS: Final[dict[ApiProtocol, Api]] = {
    api.protocol: api
    for api in (
        chat._API,
        anthropic._API,
        responses._API,
    )
}


def api_for(method: str, path: str) -> Api | None:
    """The API a request is one of (its method and path), or None: passed through."""
    for api in APIS.values():
        if api.serves(method, path):
            return api
    return None
