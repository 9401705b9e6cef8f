"""``create_capability_registry`` and ``CapabilityRegistry``: the API a
Python agent host holds.

Re-exported here from the private modules that hold them:
``_capability_registry`` (``CapabilityRegistry``: invoke, resume and the
rest of the API), ``_registry_build`` (``create_capability_registry``) and
``_approvals`` (``Approvals``)."""

from __future__ import annotations

from ._approvals import Approvals
from ._capability_registry import CapabilityRegistry
from ._registry_build import create_capability_registry

__all__ = ["create_capability_registry", "CapabilityRegistry", "Approvals"]
