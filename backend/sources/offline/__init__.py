"""The offline backend (`COLLEAGUE_SOURCES=offline`, the default): real records, no network."""

from backend.sources.offline.articles import OfflinePubMedService
from backend.sources.offline.index import OfflineIndex, get_index, open_index
from backend.sources.offline.trials import OfflineClinicalTrialsService

__all__ = ["OfflineClinicalTrialsService", "OfflineIndex", "OfflinePubMedService", "get_index", "open_index"]
