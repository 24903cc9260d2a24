"""memquill for llamaindex."""
