"""memquill for langchain."""
