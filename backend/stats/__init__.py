"""Statistics over a whole result set (charts, the `get_result_stats` tool): offline exact, live sampled."""
