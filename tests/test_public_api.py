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
