"""The base of the client layer's error types: an answer of the API that is a problem (RFC 9457).

Each code of the spec has its own subclass (subsvc_client.problems), so that a caller catches by
kind; each is also an ApiException, as the generated client raises.
"""

import json
from typing import Any, ClassVar, Optional

from subsvc_client.exceptions import ApiException


class ProblemError(ApiException):
    """An error answer: its `status`, `code`, `detail`, `request_id` (X-Request-Id) and whole `problem`."""

    code: ClassVar[str] = ""

    def __init__(self, status: int, problem: dict[str, Any], request_id: Optional[str], http_resp=None, body=None) -> None:
        super().__init__(status=status, reason=str(problem.get("title", "")), http_resp=http_resp, body=body)
        self.code = str(problem.get("code", ""))
        self.detail = str(problem.get("detail", ""))
        self.request_id = request_id
        self.problem = problem

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.detail or self.reason}"


def problem_of(text: Optional[str], status: int) -> dict[str, Any]:
    """The problem an error answer carries; a body that is not one keeps the status, with no code."""
    try:
        parsed = json.loads(text or "")
        if isinstance(parsed, dict):
            return parsed
    except ValueError:
        pass
    return {"status": status, "detail": (text or "")[:500]}
