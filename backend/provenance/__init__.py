"""Where the pages' rows come from: the offline sample's size and dates, or the live APIs (a banner's facts)."""
