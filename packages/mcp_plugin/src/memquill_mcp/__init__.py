"""memquill for mcp."""
