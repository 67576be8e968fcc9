"""The public surface is small and pinned."""

import langmem_plus


def test_all_is_pinned():
    assert sorted(langmem_plus.__all__) == sorted(
        [
            "ConversationTurn",
            "EmbeddingModelMismatchError",
            "HybridStore",
            "InvalidQueryError",
            "LangmemPlusError",
            "MemoryConfig",
            "MemoryNotFoundError",
            "MemoryRecord",
            "MemoryRetriever",
            "MemorySearchItem",
            "RollingSummary",
            "SessionSummary",
            "UserProfile",
            "ValidationError",
            "default_embeddings",
        ]
    )
    for name in langmem_plus.__all__:
        assert getattr(langmem_plus, name) is not None
