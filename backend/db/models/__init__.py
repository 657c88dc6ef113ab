"""All ORM models, imported here so metadata is complete for Alembic and tests."""

from backend.db.models.ai_columns import AiColumnResult
from backend.db.models.conversations import Conversation, Message, MessageVersion
from backend.db.models.quotas import DailyUsage, ModelUsage, RateLimitCounter, UpstreamLimit
from backend.db.models.reports import Report
from backend.db.models.screening import (
    CachedJudgement,
    Patient,
    PatientVersion,
    Screening,
    ScreeningCriterion,
    ScreeningEvent,
    ScreeningReport,
    ScreeningTrial,
)
from backend.db.models.streams import InstructionVersion, ResearchStream
from backend.db.models.turns import ChatTurn, TurnEvent
from backend.db.models.users import AuthSession, LoginFailure, User
from backend.db.models.views import SavedView

__all__ = ["AiColumnResult", "AuthSession", "CachedJudgement", "ChatTurn", "Conversation", "DailyUsage",
           "InstructionVersion", "LoginFailure", "Message", "MessageVersion", "ModelUsage", "Patient",
           "PatientVersion", "RateLimitCounter", "Report", "ResearchStream", "SavedView", "Screening",
           "ScreeningCriterion", "ScreeningEvent", "ScreeningReport", "ScreeningTrial", "TurnEvent",
           "UpstreamLimit", "User"]
