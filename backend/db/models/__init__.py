"""All ORM models, imported here so metadata is complete for Alembic and tests."""

from backend.db.models.ai_columns import AiColumnResult
from backend.db.models.conversations import Conversation, Message
from backend.db.models.quotas import DailyUsage, RateLimitCounter
from backend.db.models.streams import InstructionVersion, ResearchStream
from backend.db.models.users import AuthSession, User

__all__ = ["AiColumnResult", "AuthSession", "Conversation", "DailyUsage", "InstructionVersion", "Message",
           "RateLimitCounter", "ResearchStream", "User"]
