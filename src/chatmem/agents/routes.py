"""agents routes."""

from fastapi import APIRouter

router = APIRouter()
