"""Stable call signatures over the generated operations.

The generator lists an operation's header parameters before its body, so declaring the
`Subsvc-Test-Outcome` header moved the body one place right: a call written before it, such as
`pause_subscription(id, key, PauseRequest(...))`, would hand the body to the header. Through the
layer, every operation keeps its parameters in the order they had before that header (which is
keyword-only, like the generator's `_request_timeout` and other options), and a call with more
positional arguments than that raises a TypeError that says to pass them by keyword.
"""

import functools
import inspect
from typing import Any, Callable

TEST_OUTCOME = "subsvc_test_outcome"


def _stable(method: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(method)
    if TEST_OUTCOME not in signature.parameters:
        return method
    parameters = list(signature.parameters.values())
    positional = [p for p in parameters if p.name != TEST_OUTCOME and not p.name.startswith("_")]
    names = [p.name for p in positional]

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) > len(names):
            raise TypeError(
                f"{method.__name__}() takes at most {len(names)} positional arguments ({', '.join(names)}), "
                f"{len(args)} were given: pass {TEST_OUTCOME} and the options by keyword"
            )
        for name, value in zip(names, args):
            if name in kwargs:
                raise TypeError(f"{method.__name__}() got multiple values for argument '{name}'")
            kwargs[name] = value
        return method(**kwargs)

    keyword_only = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in parameters if p not in positional]
    call.__signature__ = signature.replace(parameters=positional + keyword_only)  # type: ignore[attr-defined]
    return call


class StableApi:
    """A generated API class (`SubscriptionsApi`, ...) whose operations keep their positional order (module doc)."""

    def __init__(self, api: Any) -> None:
        self._api = api

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._api, name)
        if name.startswith("_") or not callable(attribute):
            return attribute
        return _stable(attribute)
