"""LangGraph's store tests against HybridStore (see README.md)."""
