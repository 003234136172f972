"""Project routes: CRUD under /api/projects."""

from ..crud import crud_router
from . import service

router = crud_router(
    "/api/projects",
    "projects",
    service,
    service.ProjectIn,
    service.ProjectPatch,
    service.ProjectOut,
)
