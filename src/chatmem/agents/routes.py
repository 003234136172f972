"""Agent routes: CRUD under /api/agents (seed 000 (docs/specs.md) companion personas)."""

from ..crud import crud_router
from . import service

router = crud_router(
    "/api/agents", "agents", service, service.AgentIn, service.AgentPatch, service.AgentOut
)
