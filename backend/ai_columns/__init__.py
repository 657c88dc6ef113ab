"""AI columns: a criterion evaluated by the model for every loaded row of Tablizer or TrialScout."""
