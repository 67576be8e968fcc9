"""The public surface is small and pinned."""

import langmem_plus


def test_all_is_pinned():
    assert sorted(langmem_plus.__all__) == sorted(
        [
            "AsyncMemory",
            "ConversationLog",
            "ConversationTurn",
            "EmbeddingModelMismatchError",
            "HybridStore",
            "InMemoryConversationLog",
            "InvalidQueryError",
            "LangmemPlusError",
            "Memory",
            "MemoryConfig",
            "MemoryMiddleware",
            "MemoryNotFoundError",
            "MemoryRecord",
            "MemoryRetriever",
            "MemorySearchItem",
            "MemoryState",
            "RollingSummary",
            "SessionSummary",
            "UserProfile",
            "ValidationError",
            "WorkingMemory",
            "create_extract_node",
            "create_manage_memory_tool",
            "create_recall_node",
            "create_reconsolidate_node",
            "create_search_memory_tool",
            "create_summarize_node",
            "default_embeddings",
        ]
    )
    for name in langmem_plus.__all__:
        assert getattr(langmem_plus, name) is not None


def test_retired_and_internal_names_are_not_exported():
    for name in ("KnowledgeMonitor", "MemoryOp", "apply_ops", "StoreTuning"):
        assert name not in langmem_plus.__all__
        assert not hasattr(langmem_plus, name)
