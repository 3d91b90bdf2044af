"""API response object."""

from __future__ import annotations
from typing import Any, Generic, Iterator, Mapping, Optional, TypeVar
from pydantic import Field, StrictInt, StrictBytes, BaseModel, field_validator

T = TypeVar("T")


class ResponseHeaders(Mapping[str, str]):
    """A response's headers, found by name whatever its case (HTTP field names are case-insensitive,
    RFC 9110 section 5.1): `headers["location"]`, `headers["Location"]` and
    `headers.get("idempotent-replayed")` all read what the server sent. Iterating gives each name as sent.
    """

    def __init__(self, headers: Mapping[str, str]) -> None:
        # A name sent twice is one entry whose value is the values joined, as urllib3's headers read it.
        self._by_folded_name = {name.lower(): (name, headers[name]) for name in headers.keys()}

    def __getitem__(self, name: str) -> str:
        return self._by_folded_name[name.lower()][1]

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._by_folded_name.values())

    def __len__(self) -> int:
        return len(self._by_folded_name)

    def __repr__(self) -> str:
        return f"ResponseHeaders({dict(self.items())!r})"


class ApiResponse(BaseModel, Generic[T]):
    """
    API response object
    """

    status_code: StrictInt = Field(description="HTTP status code")
    headers: Optional[ResponseHeaders] = Field(None, description="HTTP headers, read by name whatever its case")
    data: T = Field(description="Deserialized data given the data type")
    raw_data: StrictBytes = Field(description="Raw data (HTTP response body)")

    model_config = {
        "arbitrary_types_allowed": True
    }

    @field_validator("headers", mode="before")
    @classmethod
    def _case_insensitive(cls, headers: Any) -> Any:
        # Validated as a plain Mapping, urllib3's case-insensitive headers became a dict keyed by the names as sent.
        return ResponseHeaders(headers) if isinstance(headers, Mapping) else headers
