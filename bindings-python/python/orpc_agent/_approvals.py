"""``Approvals`` (``registry.approvals``): approval requests for approval
UIs, with the conversions of its filter and pages.

Separate from ``CapabilityRegistry``: it shares nothing with the governed
call; its methods call the native approval store directly.
"""

from __future__ import annotations

from typing import Any

from . import _native
from .postgres import ApprovalPage, wait
from .types import ApprovalRequest


def _filter(
    capability_id: str | None,
    actor_id: str | None,
    status: str | None,
    limit: int | None,
    cursor: str | None,
    surface: str | None = None,
) -> dict[str, Any]:
    """The filter as the core reads it (which refuses an unknown status or surface)."""
    filt = {
        "capabilityId": capability_id,
        "actorId": actor_id,
        "surface": surface,
        "status": status,
        "limit": limit,
        "cursor": cursor,
    }
    return {k: v for k, v in filt.items() if v is not None}


def _page(raw: tuple[list[dict[str, Any]], str | None]) -> ApprovalPage:
    return ApprovalPage([ApprovalRequest.from_dict(r) for r in raw[0]], raw[1])


class Approvals:
    """Approval requests for approval UIs: ``get``, ``list``, ``page``,
    ``approve``, ``reject``, and their ``*_async`` forms. The synchronous
    forms work on every store (a PostgreSQL call blocks with the GIL
    released); in async code use the ``*_async`` forms, which never block
    the event loop."""

    def __init__(self, native: _native.NativeRegistry) -> None:
        self._native = native

    def get(self, request_id: str) -> ApprovalRequest | None:
        found = _native.approval_get_blocking(self._native, request_id)
        return ApprovalRequest.from_dict(found) if found is not None else None

    def page(
        self,
        *,
        capability_id: str | None = None,
        actor_id: str | None = None,
        surface: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> ApprovalPage:
        """One page, oldest first, and the cursor of the next (``None`` on the last)."""
        return _page(
            _native.approval_page(self._native, _filter(capability_id, actor_id, status, limit, cursor, surface))
        )

    async def page_async(
        self,
        *,
        capability_id: str | None = None,
        actor_id: str | None = None,
        surface: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> ApprovalPage:
        raw = await wait(
            _native.approval_page_async(self._native, _filter(capability_id, actor_id, status, limit, cursor, surface))
        )
        return _page(raw)

    async def get_async(self, request_id: str) -> ApprovalRequest | None:
        found = await wait(_native.approval_get_async(self._native, request_id))
        return ApprovalRequest.from_dict(found) if found is not None else None

    async def list_async(self, **filters: Any) -> list[ApprovalRequest]:
        return (await self.page_async(**filters)).requests

    async def approve_async(
        self, request_id: str, *, approver: str | None = None, reason: str | None = None
    ) -> ApprovalRequest:
        return ApprovalRequest.from_dict(
            await wait(_native.decide_async(self._native, request_id, True, approver, reason))
        )

    async def reject_async(
        self, request_id: str, *, approver: str | None = None, reason: str | None = None
    ) -> ApprovalRequest:
        return ApprovalRequest.from_dict(
            await wait(_native.decide_async(self._native, request_id, False, approver, reason))
        )

    def list(
        self,
        *,
        capability_id: str | None = None,
        actor_id: str | None = None,
        surface: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> list[ApprovalRequest]:
        """A page of requests, oldest first; pass the last id as ``cursor`` for the next.
        ``surface`` keeps the requests made on that surface (with ``actor_id``:
        exactly that requester's own)."""
        return self.page(
            capability_id=capability_id, actor_id=actor_id, surface=surface, status=status, limit=limit, cursor=cursor
        ).requests

    def approve(self, request_id: str, *, approver: str | None = None, reason: str | None = None) -> ApprovalRequest:
        return ApprovalRequest.from_dict(_native.decide_blocking(self._native, request_id, True, approver, reason))

    def reject(self, request_id: str, *, approver: str | None = None, reason: str | None = None) -> ApprovalRequest:
        return ApprovalRequest.from_dict(_native.decide_blocking(self._native, request_id, False, approver, reason))
